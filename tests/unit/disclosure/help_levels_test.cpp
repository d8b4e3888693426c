// Help levels 0–3 and system.help: generated from the registry, within budget, hashed, and with
// the usual did-you-mean errors. (Exact o200k counts are checked by the `tokens` tests.)
#include <catch2/catch.hpp>

#include <regex>
#include <set>

#include "core/json_parse.h"
#include "core/sha256.h"
#include "disclosure/cli_syntax.h"
#include "disclosure/help_levels.h"
#include "gateway/mcp_syntax.h"
#include "gateway/product.h"
#include "unit/test_support.h"

using namespace ct;
using namespace ct::disclosure;

namespace {

std::string must(Result<std::string> text) {
  if (!text) FAIL(text.error().message);
  return *text;
}

const OperationSpec& spec_of(std::string_view domain, std::string_view name) {
  const OperationSpec* spec = registry().find(domain, name);
  REQUIRE(spec);
  return *spec;
}

std::string contains_text(const std::string& text, std::string_view needle) {
  return text.find(needle) == std::string::npos ? "missing: " + std::string(needle) : "";
}

}  // namespace

TEST_CASE("level 0 names both tools, every domain, five calls, the briefing, the memory loop and how to escalate",
          "[disclosure][help]") {
  std::string text = must(level0(registry()));
  CHECK(estimate_tokens(text) < 250);
  CHECK(text.find("cleo_query") != std::string::npos);
  CHECK(text.find("cleo_mutate") != std::string::npos);
  for (const auto& domain : registry().domains()) CHECK(contains_text(text, domain).empty());
  // The five quick-reference calls come from the specs' examples (the shortest one of each).
  int calls = 0;
  for (auto [domain, name] : {std::pair{"tasks", "add"}, {"tasks", "complete"}, {"tasks", "start"},
                              {"tasks", "find"}, {"session", "start"}}) {
    const OperationSpec& spec = spec_of(domain, name);
    bool found = false;
    for (const auto& example : spec.examples)
      found = found || text.find("- " + short_call(spec, example.params_json) + "\n") != std::string::npos;
    INFO(spec.full_name());
    CHECK(found);
    calls += found ? 1 : 0;
  }
  CHECK(calls == 5);
  // An agent without the injected block still learns of the one-call briefing and the memory loop.
  for (const auto* name : {"session.briefing", "memory.find", "memory.applied"}) {
    INFO(name);
    CHECK(text.find(name) != std::string::npos);
  }
  CHECK(text.find(R"(cleo_query system.help {"level":1})") != std::string::npos);
  CHECK(text.find(R"({"level":3})") != std::string::npos);
  CHECK(text.find("{{") == std::string::npos);
}

TEST_CASE("level 1 lists every operation, grouped by domain and gateway; a domain's has every summary", "[disclosure][help]") {
  std::string text = must(level1(registry()));
  for (const auto& spec : registry().operations()) {
    INFO(spec.full_name());
    // A domain with only advanced operations is one line: its reads, then its writes, each with their tool.
    const std::string one_line = "\n" + std::string(spec.domain) + ": ";
    if (std::size_t line = text.find(one_line); line != std::string::npos) {
      CHECK(spec.tier == 2);
      std::string whole = text.substr(line + 1, text.find('\n', line + 1) - line - 1);
      std::size_t tool = whole.find("(" + std::string(tool_name(spec.gateway)) + ")");
      REQUIRE(tool != std::string::npos);
      std::string names = whole.substr(0, tool - 1);  // the names before " (tool)"
      if (spec.gateway == Gateway::Mutate) names = names.substr(names.rfind(';') + 1);
      CHECK((names + ",").find(" " + std::string(spec.name) + ",") != std::string::npos);
      std::string domain = must(level1(registry(), spec.domain));
      CHECK(domain.find("- " + std::string(spec.name) + ": " + std::string(spec.summary) + "\n") != std::string::npos);
      continue;
    }
    // Common operations with their summary; advanced ones (tier 2) named on their group's also: line.
    std::string group = std::string(spec.domain) + " (" + std::string(tool_name(spec.gateway)) + "):\n";
    std::size_t at = text.find(group);
    REQUIRE(at != std::string::npos);
    std::size_t end = text.find(" (cleo_", at + group.size());
    std::string section = text.substr(at, end == std::string::npos ? std::string::npos : end - at);
    if (spec.tier < 2) {
      CHECK(section.find("- " + std::string(spec.name) + ": " + std::string(spec.summary) + "\n") != std::string::npos);
    } else {
      std::size_t also = section.find("- also: ");
      REQUIRE(also != std::string::npos);
      std::string line = section.substr(also, section.find('\n', also) - also) + ",";
      CHECK((line.find(" " + std::string(spec.name) + ",") != std::string::npos));
    }
    std::string domain = must(level1(registry(), spec.domain));
    CHECK(domain.find("- " + std::string(spec.name) + ": " + std::string(spec.summary) + "\n") != std::string::npos);
  }
  // Each group heading comes before its operations: query before mutate, domains in order.
  std::size_t tasks_query = text.find("tasks (cleo_query):\n");
  std::size_t tasks_mutate = text.find("tasks (cleo_mutate):\n");
  std::size_t session_query = text.find("session (cleo_query):\n");
  REQUIRE(tasks_query != std::string::npos);
  CHECK(tasks_query < tasks_mutate);
  CHECK(tasks_mutate < session_query);
  CHECK(text.find("- show: ") > tasks_query);
  CHECK(text.find("- add: ") > tasks_mutate);

  std::string session = must(level1(registry(), "session"));
  CHECK(session.find("session (cleo_mutate):\n") != std::string::npos);
  CHECK(session.find("tasks (cleo_query)") == std::string::npos);
  CHECK(session.size() < text.size());
}

TEST_CASE("level 2 of every operation: params, returns, errors, examples, within budget", "[disclosure][help]") {
  for (const auto& spec : registry().operations()) {
    INFO(spec.full_name());
    std::string text = must(level2(registry(), spec));
    CHECK(text.starts_with("## " + spec.full_name() + " (" + std::string(tool_name(spec.gateway)) + ")\n"));
    CHECK(estimate_tokens(text) <= 2000);
    for (const auto& param : spec.params) {
      CHECK(text.find("- " + std::string(param.name) + " (") != std::string::npos);
      for (auto choice : param.choices) CHECK(text.find(std::string(choice)) != std::string::npos);
    }
    CHECK(text.find("Returns (data): " + std::string(spec.returns)) != std::string::npos);
    for (auto code : spec.errors)
      CHECK(text.find(std::string(to_string(code)) + " (exit " + std::to_string(exit_code(code)) + ")") != std::string::npos);
    for (const auto& example : spec.examples) {
      CHECK(text.find(short_call(spec, example.params_json)) != std::string::npos);
      auto params = json::parse(example.params_json);
      REQUIRE(params);
      CHECK(text.find("CLI: " + command_line(spec, *params)) != std::string::npos);
    }
  }
  std::string add = must(level2(registry(), spec_of("tasks", "add")));
  CHECK(add.find("- title (string, 3–200 chars, required): ") != std::string::npos);
  CHECK(add.find(R"(- priority (critical|high|medium|low, default "medium"): )") != std::string::npos);
  CHECK(add.find("- depends (array of task ids, ≤ 100 items): ") != std::string::npos);
  CHECK(add.find("E_PARENT_NOT_FOUND (exit 10) parent task missing") != std::string::npos);
  CHECK(add.find("E_MUTATION_DISABLED (exit 9)") != std::string::npos);
  std::string show = must(level2(registry(), spec_of("tasks", "show")));
  CHECK(show.find("E_MUTATION_DISABLED") == std::string::npos);  // a query is never refused as a write
}

TEST_CASE("level 2 as JSON Schema matches what validation accepts", "[disclosure][help]") {
  json::Value add = params_schema(spec_of("tasks", "add"));
  CHECK(add["type"] == json::Value("object"));
  CHECK(add["additionalProperties"] == json::Value(false));
  CHECK(add["required"] == test::parse_json(R"(["title"])"));
  CHECK(add["properties"]["title"] == test::parse_json(
                                          R"j({"type":"string","minLength":3,"maxLength":200,"description":"What to do, one line (3–200 characters)"})j"));
  CHECK(add["properties"]["priority"]["enum"] == test::parse_json(R"(["critical","high","medium","low"])"));
  CHECK(add["properties"]["priority"]["default"] == json::Value("medium"));
  CHECK(add["properties"]["depends"]["items"]["pattern"] == json::Value("^[Tt]?[0-9]{1,18}$"));
  CHECK(add["properties"]["depends"]["maxItems"] == json::Value(std::int64_t{100}));
  // Every param is described, every required one is listed, nothing else is.
  for (const auto& spec : registry().operations()) {
    INFO(spec.full_name());
    json::Value schema = params_schema(spec);
    CHECK(schema["properties"].size() == spec.params.size());
    std::size_t required = 0;
    for (const auto& param : spec.params) {
      CHECK(schema["properties"][param.name]["description"].is_string());
      required += param.required ? 1 : 0;
    }
    CHECK(schema["required"].size() == required);
  }
}

TEST_CASE("level 3 is the protocol, with the exit codes from the error table", "[disclosure][help]") {
  std::string text = must(level3(registry()));
  CHECK(estimate_tokens(text) <= 5000);
  for (auto heading : {"### Session workflow", "### Focus and claims", "### Tasks and lifecycle gates",
                       "### Orchestration and subagents", "### Subagent contract", "### Errors and retries",
                       "### Saving tokens"})
    CHECK(contains_text(text, heading).empty());
  // Every code an operation declares has its row, with the exit code of the one table.
  for (const auto& spec : registry().operations()) {
    for (auto code : spec.errors) {
      const ErrorInfo& info = error_info(code);
      INFO(info.name);
      CHECK(text.find("\n" + std::string(info.name) + " " + std::to_string(info.exit_code) + ": ") != std::string::npos);
    }
  }
  CHECK(text.find("\nE_LOCK_TIMEOUT 7: store locked past the busy timeout (retry)\n") != std::string::npos);
  CHECK(text.find("\nE_NO_CHANGE 102: ") != std::string::npos);
  CHECK(text.find("{{") == std::string::npos);
}

TEST_CASE("system.help serves the levels with a hash and honours knownHash", "[disclosure][help]") {
  test::Project project;
  Envelope level = project.query("system", "help", R"({"level":1})");
  REQUIRE(level.success);
  const std::string content = level.data["content"].as_string();
  CHECK(content == must(level1(registry())));
  CHECK(level.data["level"] == json::Value(std::int64_t{1}));
  CHECK(level.data["hash"] == json::Value(sha256_hex(content)));
  CHECK(level.data["tokens"] == json::Value(static_cast<std::int64_t>(estimate_tokens(content))));

  // The hash a caller already has: no body.
  std::string known = R"({"level":1,"knownHash":")" + level.data["hash"].as_string() + "\"}";
  Envelope same = project.query("system", "help", known);
  REQUIRE(same.success);
  CHECK(same.data == test::parse_json(R"({"unchanged":true,"hash":")" + level.data["hash"].as_string() + "\"}"));
  Envelope other = project.query("system", "help", R"({"level":3,"knownHash":")" + level.data["hash"].as_string() + "\"}");
  REQUIRE(other.success);
  CHECK(other.data["content"].is_string());

  // Defaults: level 0; 1 with a domain; 2 with an operation (also "tasks.add" or a unique name).
  CHECK(project.query("system", "help").data["content"].as_string() == must(level0(registry())));
  CHECK(project.query("system", "help", R"({"domain":"tasks"})").data["level"] == json::Value(std::int64_t{1}));
  std::string add = must(level2(registry(), spec_of("tasks", "add")));
  CHECK(project.query("system", "help", R"({"domain":"tasks","operation":"add"})").data["content"].as_string() == add);
  CHECK(project.query("system", "help", R"({"operation":"tasks.add"})").data["content"].as_string() == add);
  CHECK(project.query("system", "help", R"({"operation":"complete"})").data["content"].as_string() ==
        must(level2(registry(), spec_of("tasks", "complete"))));
  CHECK(project.query("system", "help", R"({"operation":"system.config.get"})").data["content"].as_string() ==
        must(level2(registry(), spec_of("system", "config.get"))));

  Envelope schema = project.query("system", "help", R"({"operation":"tasks.add","format":"json-schema"})");
  REQUIRE(schema.success);
  CHECK(schema.data["schema"] == params_schema(spec_of("tasks", "add")));
  CHECK(schema.data["hash"] == json::Value(sha256_hex(params_schema(spec_of("tasks", "add")).dump())));

  // Level 0 and 3 cover everything: a domain is ignored, and said so.
  Envelope ignored = project.query("system", "help", R"({"level":3,"domain":"tasks"})");
  REQUIRE(ignored.success);
  REQUIRE(ignored.warnings.size() == 1);
  CHECK(test::warnings_of(ignored)[0].find("ignored") != std::string::npos);
}

TEST_CASE("system.help works without a project", "[disclosure][help]") {
  test::TempDir empty;
  RouterOptions options;
  Router router(registry(), Workspace::open(empty.path()), options, std::make_unique<FixedClock>(0));
  Envelope help = router.dispatch({Gateway::Query, "system", "help", test::parse_json(R"({"level":0})")});
  REQUIRE(help.success);
  CHECK(help.data["content"].as_string().starts_with("CLEO"));
}

TEST_CASE("unknown names in help get the router's did-you-mean errors", "[disclosure][help]") {
  test::Project project;
  Envelope domain = project.query("system", "help", R"({"domain":"taks"})");
  REQUIRE_FALSE(domain.success);
  CHECK(test::code_of(domain) == "E_INVALID_DOMAIN");
  CHECK(domain.error->details["didYouMean"] == json::Value("tasks"));
  CHECK(mcp_text(domain.error->fix, registry()) == R"(cleo_query {domain:'system', operation:'help', params:{"level":1,"domain":"tasks"}})");

  Envelope operation = project.query("system", "help", R"({"domain":"tasks","operation":"ad"})");
  REQUIRE_FALSE(operation.success);
  CHECK(test::code_of(operation) == "E_INVALID_OPERATION");
  CHECK(operation.error->details["didYouMean"] == json::Value("add"));
  CHECK(operation.error->details["valid"].size() == registry().operation_names("tasks").size());
  CHECK(mcp_text(operation.error->fix, registry()) ==
        R"(cleo_query {domain:'system', operation:'help', params:{"level":2,"domain":"tasks","operation":"add"}})");

  Envelope dotted = project.query("system", "help", R"({"operation":"tasks.compleet"})");
  CHECK(test::code_of(dotted) == "E_INVALID_OPERATION");
  CHECK(dotted.error->details["didYouMean"] == json::Value("complete"));

  Envelope ambiguous = project.query("system", "help", R"({"operation":"stats"})");
  CHECK(test::code_of(ambiguous) == "E_INVALID_OPERATION");
  CHECK(ambiguous.error->details["valid"] == test::parse_json(R"(["tasks.stats","system.stats","research.stats","memory.stats"])"));
  // A name that is a CLI verb means the verb's operation: `ct list` is tasks.list.
  CHECK(project.query("system", "help", R"({"operation":"list"})").data["content"].as_string().starts_with("## tasks.list "));


  Envelope no_operation = project.query("system", "help", R"({"level":2,"domain":"session"})");
  CHECK(test::code_of(no_operation) == "E_INVALID_PARAMS");
  CHECK(no_operation.error->details["valid"].size() == registry().operation_names("session").size());

  CHECK(test::code_of(project.query("system", "help", R"({"level":1,"format":"json-schema"})")) == "E_INVALID_PARAMS");
  CHECK(test::code_of(project.query("system", "help", R"({"level":4})")) == "E_VALIDATION");
  CHECK(test::code_of(project.query("system", "help", R"({"format":"yaml"})")) == "E_VALIDATION");
}

TEST_CASE("the token estimate stays near the o200k counts it was calibrated on", "[disclosure][help]") {
  // o200k averages about 3.9 bytes per token on these texts (measured with tests/tokenizer); the
  // estimate must stay between 3 and 5 bytes per token.
  CHECK(estimate_tokens("") == 0);
  std::string text = must(level3(registry()));
  CHECK(estimate_tokens(text) > text.size() / 5);
  CHECK(estimate_tokens(text) < text.size() / 3);
}

TEST_CASE("level 2 says which code a broken data rule gets: E_VALIDATION, once", "[disclosure][help][hardening3]") {
  // Issue 30 item 16: tasks.add {title:"ab"} answered E_INVALID_PARAMS while seed 003's level 2
  // lists E_VALIDATION (6) for it. Every operation whose params carry a rule lists it.
  std::string show = must(level2(registry(), spec_of("tasks", "show")));
  CHECK(show.find("E_VALIDATION (exit 6)") != std::string::npos);
  CHECK(show.find("E_INVALID_PARAMS (exit 2)") != std::string::npos);
  std::string add = must(level2(registry(), spec_of("tasks", "add")));
  auto first = add.find("E_VALIDATION (exit 6)");
  REQUIRE(first != std::string::npos);
  CHECK(add.find("E_VALIDATION (exit 6)", first + 1) == std::string::npos);
  for (const auto& spec : registry().operations()) {
    INFO(spec.full_name());
    bool has_rule = std::any_of(spec.params.begin(), spec.params.end(), [](const ParamSpec& p) {
      return p.type != ParamType::Bool && p.type != ParamType::Object;
    });
    if (has_rule) CHECK(must(level2(registry(), spec)).find("E_VALIDATION (exit 6)") != std::string::npos);
  }
}
