// Routing argv to a command and parsing it with the generated CLI11 tree.
#include <catch2/catch.hpp>

#include "cli/command_tree.h"
#include "core/json_parse.h"
#include "gateway/mcp_syntax.h"
#include "gateway/product.h"

namespace {

using ct::ErrorCode;
using ct::cli::CommandTree;
using ct::cli::find_route;

ct::json::Value json(std::string_view text) { return *ct::json::parse(text); }

struct Parsed {
  std::unique_ptr<CommandTree> tree;
  ct::Result<ct::cli::ParsedCommand> result;
};

Parsed parse(const std::vector<std::string>& args) {
  auto route = find_route(ct::registry(), args);
  REQUIRE_FALSE(route.error);
  auto tree = std::make_unique<CommandTree>(ct::registry(), route);
  ct::cli::InputSource none;
  auto result = ct::cli::parse_command(*tree, args, none);
  return Parsed{std::move(tree), std::move(result)};
}

}  // namespace

TEST_CASE("routing finds shortcuts and domain operations past global options", "[cli][commands]") {
  const auto& registry = ct::registry();
  auto shortcut = find_route(registry, {"--project", "/tmp/x", "add", "Write docs"});
  REQUIRE(shortcut.spec);
  CHECK(shortcut.spec->full_name() == "tasks.add");
  CHECK(shortcut.words == std::vector<std::string>{"add"});

  auto generic = find_route(registry, {"--json", "tasks", "blockers", "T001"});
  REQUIRE(generic.spec);
  CHECK(generic.spec->full_name() == "tasks.blockers");

  auto domain_only = find_route(registry, {"tasks", "--help"});
  CHECK(domain_only.spec == nullptr);
  CHECK(domain_only.domain == "tasks");

  CHECK(find_route(registry, {"--json"}).words.empty());
}

TEST_CASE("unknown commands and operations come with did-you-mean", "[cli][commands]") {
  const auto& registry = ct::registry();
  auto command = find_route(registry, {"lst"});
  REQUIRE(command.error);
  CHECK(command.error->code == ErrorCode::InvalidInput);
  CHECK(command.error->details["didYouMean"] == ct::json::Value("list"));

  auto operation = find_route(registry, {"tasks", "shwo", "T001"});
  REQUIRE(operation.error);
  CHECK(operation.error->code == ErrorCode::InvalidOperation);
  CHECK(operation.error->details["didYouMean"] == ct::json::Value("show"));

  // An operation without a shortcut, typed without its domain.
  auto bare = find_route(registry, {"blockers", "T001"});
  REQUIRE(bare.error);
  CHECK(bare.error->details["didYouMean"] == ct::json::Value("tasks blockers"));
}

TEST_CASE("command words are plain values once the command is chosen", "[cli][commands]") {
  auto find = parse({"find", "list"});
  REQUIRE(find.result);
  CHECK(find.result->params == json(R"({"query":"list"})"));

  auto nested = parse({"tasks", "find", "tasks"});
  REQUIRE(nested.result);
  CHECK(nested.result->params == json(R"({"query":"tasks"})"));
}

TEST_CASE("global options are accepted before and after the command", "[cli][commands]") {
  auto after = parse({"show", "T001", "--json", "--project", "/tmp/p", "--meta"});
  REQUIRE(after.result);
  CHECK(after.result->params == json(R"({"id":"T001"})"));
  CHECK(after.tree->globals().json);
  CHECK(after.tree->globals().meta);
  CHECK(after.tree->globals().project == "/tmp/p");

  auto before = parse({"--read-only", "--reason", "tidy up", "tasks", "delete", "T004"});
  REQUIRE(before.result);
  CHECK(before.tree->globals().read_only);
  CHECK(before.tree->globals().reason == "tidy up");
  // tasks.delete declares its own reason: the operation's flag wins there.
  auto own = parse({"delete", "T004", "--reason", "duplicate"});
  REQUIRE(own.result);
  CHECK(own.result->params == json(R"({"id":"T004","reason":"duplicate"})"));
}

TEST_CASE("help comes from the registry at every level", "[cli][commands]") {
  auto top = parse({"--help"});
  REQUIRE(top.result);
  CHECK(top.result->help.find("One task, every field") != std::string::npos);
  CHECK(top.result->help.find("tasks") != std::string::npos);

  auto domain = parse({"tasks", "--help"});
  REQUIRE(domain.result);
  CHECK(domain.result->help.find("blockers") != std::string::npos);
  CHECK(domain.result->help.find("Explain what keeps a task from starting") != std::string::npos);

  auto operation = parse({"tasks", "update", "--help"});
  REQUIRE(operation.result);
  CHECK(operation.result->help.find("--if-version") != std::string::npos);
  CHECK(operation.result->help.find("ct update T001 --priority critical") != std::string::npos);

  auto shortcut = parse({"add", "-h"});
  REQUIRE(shortcut.result);
  CHECK(shortcut.result->help.find("Usage: ct add") != std::string::npos);
}

TEST_CASE("CLI11 parse errors become E_INVALID_INPUT values", "[cli][commands]") {
  auto missing_value = parse({"show", "--id"});
  REQUIRE_FALSE(missing_value.result);
  CHECK(missing_value.result.error().code == ErrorCode::InvalidInput);
  CHECK(ct::mcp_text(missing_value.result.error().fix, ct::registry()) == "ct show --help");

  auto unknown = parse({"list", "--stauts", "done"});
  REQUIRE_FALSE(unknown.result);
  CHECK(unknown.result.error().code == ErrorCode::InvalidParams);
  CHECK(unknown.result.error().details["didYouMean"] == ct::json::Value("--status"));
}

TEST_CASE("an empty value of a global option is a value, not an out-of-range read", "[cli][commands]") {
  // Found by fuzzing (tests/fuzz/regressions/cli): `front()` of the empty value before the word.
  const auto& registry = ct::registry();
  auto project = find_route(registry, {"tasks", "--project", "", "x"});
  REQUIRE(project.error);
  CHECK(project.error->code == ErrorCode::InvalidOperation);
  auto reason = find_route(registry, {"tasks", "--reason", "", "frobnicate"});
  REQUIRE(reason.error);
  CHECK(reason.error->details["valid"].is_array());
}
