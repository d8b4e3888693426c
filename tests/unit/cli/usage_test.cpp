// Help from the registry: examples rendered as `ct` command lines, flag help, fixes for people.
#include <catch2/catch.hpp>

#include "cli/args.h"
#include "cli/usage.h"
#include "core/json_parse.h"
#include "gateway/product.h"
#include "unit/cli/shell_words.h"

namespace {

using ct::OperationSpec;
using ct::ParamType;
using ct::cli::command_line;

ct::json::Value json(std::string_view text) { return *ct::json::parse(text); }

const OperationSpec& real(std::string_view domain, std::string_view name) {
  const OperationSpec* spec = ct::registry().find(domain, name);
  REQUIRE(spec);
  return *spec;
}

}  // namespace

TEST_CASE("arguments are quoted only when a shell needs it", "[cli][help]") {
  using ct::cli::shell_quote;
  CHECK(shell_quote("T001") == "T001");
  CHECK(shell_quote("pending,active") == "pending,active");
  CHECK(shell_quote("Write docs") == "\"Write docs\"");
  CHECK(shell_quote("") == "\"\"");
  CHECK(shell_quote("say \"hi\"") == "'say \"hi\"'");
  CHECK(shell_quote("it's $5") == "'it'\\''s $5'");
  CHECK(shell_quote("日本語") == "\"日本語\"");
}

TEST_CASE("examples become command lines: positionals in order, the rest as flags", "[cli][help]") {
  const auto& add = real("tasks", "add");
  CHECK(command_line(add, json(R"({"title":"Write the README","priority":"high"})")) ==
        "ct add \"Write the README\" --priority high");
  CHECK(command_line(add, json(R"({"title":"Add login form","parent":"T001","depends":["T002","T003"]})")) ==
        "ct add \"Add login form\" --parent T001 --depends T002,T003");
  // Free-text lists repeat the flag.
  CHECK(command_line(add, json(R"({"title":"Ship","acceptance":["fast, small","documented"]})")) ==
        "ct add Ship --acceptance \"fast, small\" --acceptance documented");

  CHECK(command_line(real("tasks", "update"), json(R"({"id":"T001","labels":["api"],"mode":"replace","ifVersion":3})")) ==
        "ct update T001 --labels api --mode replace --if-version 3");
  CHECK(command_line(real("tasks", "reparent"), json(R"({"id":"T005","parent":"T002"})")) == "ct tasks reparent T005 T002");
  // A later positional without the earlier one is written as a flag.
  CHECK(command_line(real("tasks", "reparent"), json(R"({"parent":"T002"})")) == "ct tasks reparent --parent T002");
  CHECK(command_line(real("tasks", "next"), json(R"({"count":3,"explain":true})")) == "ct next --count 3 --explain");
  CHECK(command_line(real("tasks", "tree"), json(R"({"includeDone":false})")) == "ct tree --no-include-done");
  // JSON in a positional is quoted for the shell.
  CHECK(command_line(real("tasks", "import"), json(R"({"tasks":[{"id":"T1","title":"Imported task"}],"dryRun":true})")) ==
        "ct import '[{\"id\":\"T1\",\"title\":\"Imported task\"}]' --dry-run");
  CHECK(command_line(real("tasks", "current"), json("{}")) == "ct current");
}

TEST_CASE("every registered example renders to a command line that parses back to its params",
          "[cli][help][registry]") {
  for (const auto& spec : ct::registry().operations()) {
    for (const auto& example : spec.examples) {
      auto params = ct::json::parse(example.params_json);
      REQUIRE(params);
      std::string line = command_line(spec, *params);
      INFO(spec.full_name() << ": " << line);
      CHECK(line.starts_with(ct::cli::command_prefix(spec)));
      auto words = ct::test::shell_words(line.substr(ct::cli::command_prefix(spec).size()));
      ct::cli::InputSource none;
      auto parsed = ct::cli::parse_operation_args(spec, words, none);
      REQUIRE(parsed);
      CHECK(*parsed == *params);
    }
  }
}

TEST_CASE("flag help carries type, constraints, choices and default from the spec", "[cli][help]") {
  using ct::cli::param_help;
  const auto& list = real("tasks", "list");
  CHECK(param_help(*list.find_param("limit")) == "Rows per page [integer 1–500; default 50]");
  CHECK(param_help(*list.find_param("sort")).find("one of position|priority|") != std::string::npos);
  CHECK(param_help(*list.find_param("status")).find("repeat the flag or separate with commas") != std::string::npos);
  CHECK(param_help(*real("tasks", "add").find_param("title")).find("[required; text, 3–200 chars]") != std::string::npos);
  CHECK(param_help(*real("tasks", "add").find_param("acceptance")).find("repeat the flag]") != std::string::npos);
  CHECK(param_help(*real("tasks", "tree").find_param("includeDone")).find("--no-include-done") != std::string::npos);
  CHECK(param_help(*real("tasks", "import").find_param("tasks")).find("@file") != std::string::npos);
}

TEST_CASE("the operation footer documents returns, examples and errors", "[cli][help]") {
  std::string footer = ct::cli::operation_footer(real("tasks", "add"));
  CHECK(footer.find("Returns: {id,type?}") != std::string::npos);
  CHECK(footer.find("  ct add \"Write the README\" --priority high\n") != std::string::npos);
  CHECK(footer.find("E_PARENT_NOT_FOUND (exit 10)") != std::string::npos);
  CHECK(footer.find("cleo_mutate") != std::string::npos);
}

TEST_CASE("the calls of a fix become ct command lines", "[cli][help]") {
  using ct::call;
  using ct::cli::advice_for_people;
  const auto& registry = ct::registry();
  CHECK(advice_for_people(call("tasks.find", {{"query", "T9999"}}), registry) == "ct find T9999");
  CHECK(advice_for_people(call("tasks.promote", {{"id", "T5"}}) + " first", registry) == "`ct tasks promote T5` first");
  CHECK(advice_for_people(call("tasks.archive", {{"all", true}}), registry) == "ct tasks archive --all");
  // Plain advice stays as it is.
  CHECK(advice_for_people("check the permissions of /x", registry) == "check the permissions of /x");
}
