// Command lines from config, split into argv without a shell.
#include <catch2/catch.hpp>

#include "engines/adapters/split_command.h"

using namespace ct;

TEST_CASE("split_command splits words like a shell, without one", "[engines][command_line]") {
  using V = std::vector<std::string>;
  CHECK(*split_command("ctest --test-dir build", "f") == V{"ctest", "--test-dir", "build"});
  CHECK(*split_command("  pytest\t-q  ", "f") == V{"pytest", "-q"});
  CHECK(*split_command(R"(go test './...' -run "Test A")", "f") == V{"go", "test", "./...", "-run", "Test A"});
  CHECK(*split_command(R"(echo "a\"b" a\ b 'x'"y"z '')", "f") == V{"echo", "a\"b", "a b", "xyz", ""});
  // Nothing expands: $HOME, * and ~ are plain characters.
  CHECK(*split_command("ls $HOME * ~", "f") == V{"ls", "$HOME", "*", "~"});
  // Quoted operators are words.
  CHECK(*split_command("sh -c 'make && ctest'", "f") == V{"sh", "-c", "make && ctest"});
}

TEST_CASE("split_command refuses what only a shell could run", "[engines][command_line]") {
  for (std::string_view bad : {"make test && ctest", "pytest | tee log", "a; b", "ctest > out", "ctest < in",
                               "echo `id`", "echo $(id)", "sleep 1 &"}) {
    auto words = split_command(bad, "validate.testCommand");
    INFO(bad);
    REQUIRE_FALSE(words);
    CHECK(words.error().code == ErrorCode::InvalidInput);
    CHECK(words.error().details["field"].as_string() == "validate.testCommand");
    CHECK(words.error().message.find("shell") != std::string::npos);
  }
  for (std::string_view bad : {"", "   ", "'open", "\"open", "trailing\\"}) {
    INFO(bad);
    CHECK_FALSE(split_command(bad, "f"));
  }
}

TEST_CASE("join_command quotes what a shell would split or expand", "[engines][command_line]") {
  CHECK(join_command({"gh", "issue", "create", "--title", "It broke", "--label", "bug"}) ==
        "gh issue create --title 'It broke' --label bug");
  CHECK(join_command({"echo", "it's", "$HOME", ""}) == R"(echo 'it'\''s' '$HOME' '')");
  // Round trip through the splitter.
  std::vector<std::string> argv = {"a b", "c'd", "e\"f", "--x=1"};
  CHECK(*split_command(join_command(argv), "f") == argv);
}

TEST_CASE("join_command: the first word stays the program (issue 50 item 13)", "[engines][command_line]") {
  // Unquoted, a first word NAME=value is an assignment and `if` a reserved word; later words are
  // plain arguments. A leading = is zsh's path expansion, a leading % a job, wherever they stand.
  CHECK(join_command({"A=b", "A=b"}) == "'A=b' A=b");
  CHECK(join_command({"if", "if"}) == "'if' if");
  CHECK(join_command({"=ct", "%1", "x=%"}) == "'=ct' '%1' x=%");
  CHECK(join_command({"/opt/x=y/ct", "--hook"}) == "/opt/x=y/ct --hook");  // not a NAME: no assignment
}
