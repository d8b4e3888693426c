// Shell completion: what `ct __complete` offers for the word being typed, from the registry.
#include <catch2/catch.hpp>

#include <algorithm>

#include "cli/completion.h"
#include "gateway/product.h"

namespace {

using Words = std::vector<std::string>;

Words complete(const Words& words) {
  auto ids = [](std::string_view prefix) {
    Words all = {"T001", "T002", "T010"};
    std::erase_if(all, [&](const std::string& id) { return !id.starts_with(prefix); });
    return all;
  };
  return ct::cli::complete(ct::registry(), words, ids);
}

bool has(const Words& words, std::string_view word) { return std::find(words.begin(), words.end(), word) != words.end(); }

}  // namespace

TEST_CASE("completion offers commands, domains and operations by prefix", "[cli][completion]") {
  Words top = complete({""});
  CHECK(has(top, "add"));
  CHECK(has(top, "tasks"));
  CHECK(has(top, "mcp"));
  CHECK(has(top, "completion"));
  CHECK(complete({"comp"}) == Words{"complete", "completion"});
  CHECK(complete({"tasks", "sh"}) == Words{"show"});
  CHECK(complete({"config", ""}) == Words{"get", "set"});
  CHECK(complete({"nosuch", ""}).empty());
}

TEST_CASE("completion offers an operation's flags, enum values and task ids", "[cli][completion]") {
  Words flags = complete({"add", "--p"});
  CHECK(has(flags, "--priority"));
  CHECK(has(flags, "--parent"));
  CHECK(has(flags, "--project"));  // global options too
  CHECK(complete({"add", "Title", "--priority", ""}) == Words{"critical", "high", "low", "medium"});
  CHECK(complete({"add", "Title", "--priority", "h"}) == Words{"high"});
  CHECK(complete({"show", ""}) == Words{"T001", "T002", "T010"});
  CHECK(complete({"complete", "T00"}) == Words{"T001", "T002"});
  CHECK(complete({"add", "Title", "--depends", "T01"}) == Words{"T010"});  // a list of ids
  // Positionals in order: lifecycle record ID STAGE STATUS.
  CHECK(has(complete({"lifecycle", "record", "T001", ""}), "research"));
  CHECK(has(complete({"lifecycle", "record", "T001", "research", ""}), "completed"));
  // A flag's value is skipped when counting positionals; free text offers nothing.
  CHECK(complete({"update", "--notes", "x", ""}) == Words{"T001", "T002", "T010"});
  CHECK(complete({"update", "T001", "--notes", ""}).empty());
  // Short flags are flags too: their values complete, and are not counted as positionals.
  CHECK(complete({"add", "Title", "-p", "c"}) == Words{"critical"});
  CHECK(complete({"update", "-m", "x", ""}) == Words{"T001", "T002", "T010"});
  CHECK(complete({"add", "Title", "-P", "T00"}) == Words{"T001", "T002"});
}

TEST_CASE("completion scripts exist for bash, zsh and fish, and call ct __complete", "[cli][completion]") {
  for (auto shell : ct::cli::completion_shells()) {
    auto script = ct::cli::completion_script(shell);
    REQUIRE(script);
    CHECK(script->find("ct __complete") != std::string::npos);
  }
  auto tcsh = ct::cli::completion_script("tcsh");
  REQUIRE_FALSE(tcsh);
  CHECK(tcsh.error().code == ct::ErrorCode::InvalidInput);
}
