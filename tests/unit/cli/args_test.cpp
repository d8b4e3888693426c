// argv → params: kebab-case flags, positionals, lists, flags and --no-flags, JSON objects.
#include <catch2/catch.hpp>

#include <map>

#include "cli/args.h"
#include "core/json_parse.h"
#include "gateway/product.h"

namespace {

using ct::ErrorCode;
using ct::OperationSpec;
using ct::ParamSpec;
using ct::ParamType;
using ct::json::Value;
using ct::cli::InputSource;
using ct::cli::parse_operation_args;

/// A spec that exercises every param type, independent of the real registry.
OperationSpec sample_spec() {
  OperationSpec spec;
  spec.domain = "tasks";
  spec.name = "sample";
  spec.summary = "A sample operation";
  spec.params = {
      {.name = "id", .type = ParamType::TaskId, .required = true, .positional = true},
      {.name = "target", .type = ParamType::TaskId, .positional = true},
      {.name = "title", .type = ParamType::String},
      {.name = "ifVersion", .type = ParamType::Int},
      {.name = "includeDone", .type = ParamType::Bool, .default_json = "true"},
      {.name = "dryRun", .type = ParamType::Bool},
      {.name = "depends", .type = ParamType::Array, .item_type = ParamType::TaskId},
      {.name = "labels", .type = ParamType::Array, .pattern = "^[a-z]+$"},
      {.name = "acceptance", .type = ParamType::Array},
      {.name = "priority", .type = ParamType::Enum, .choices = {"high", "low"}},
      {.name = "tasks", .type = ParamType::Object},
  };
  return spec;
}

InputSource fake_input(std::map<std::string, std::string> files, std::string stdin_text) {
  InputSource input;
  input.read_file = [files](const std::string& path) -> ct::Result<std::string> {
    auto it = files.find(path);
    if (it == files.end()) return ct::fail(ErrorCode::FileError, "cannot read " + path);
    return it->second;
  };
  input.read_stdin = [stdin_text]() -> ct::Result<std::string> { return stdin_text; };
  return input;
}

Value parse(const std::vector<std::string>& args, const InputSource& input = fake_input({}, "")) {
  static const OperationSpec spec = sample_spec();
  auto params = parse_operation_args(spec, args, input);
  INFO((params ? params->dump() : params.error().message));
  REQUIRE(params.has_value());
  return *params;
}

ct::Error parse_error(const std::vector<std::string>& args, const InputSource& input = fake_input({}, "")) {
  static const OperationSpec spec = sample_spec();
  auto params = parse_operation_args(spec, args, input);
  INFO((params ? params->dump() : std::string()));
  REQUIRE_FALSE(params.has_value());
  return params.error();
}

Value json(std::string_view text) { return *ct::json::parse(text); }

}  // namespace

TEST_CASE("camelCase param names become kebab-case flags", "[cli][args]") {
  using ct::cli::kebab_case;
  CHECK(kebab_case("id") == "id");
  CHECK(kebab_case("ifVersion") == "if-version");
  CHECK(kebab_case("blockedBy") == "blocked-by");
  CHECK(kebab_case("includeArchived") == "include-archived");
  CHECK(kebab_case("dryRun") == "dry-run");
  CHECK(kebab_case("idempotencyKey") == "idempotency-key");
  CHECK(kebab_case("maxHTTPRetries") == "max-http-retries");
  CHECK(kebab_case("level2Help") == "level2-help");
}

TEST_CASE("positional params are taken in declaration order; flags still work", "[cli][args]") {
  CHECK(parse({"T001"}) == json(R"({"id":"T001"})"));
  CHECK(parse({"T005", "T002"}) == json(R"({"id":"T005","target":"T002"})"));
  CHECK(parse({"--id", "T005", "--target", "T002"}) == json(R"({"id":"T005","target":"T002"})"));
  // A flag fills its param; the remaining positional goes to the next free one.
  CHECK(parse({"--id", "T005", "T002"}) == json(R"({"id":"T005","target":"T002"})"));
  CHECK(parse({"--id=T005"}) == json(R"({"id":"T005"})"));
  // After "--" a value may start with a dash.
  CHECK(parse({"T1", "--title", "x", "--", "-T2"}) == json(R"({"id":"T1","target":"-T2","title":"x"})"));
}

TEST_CASE("only params that were given are sent; defaults stay with the router", "[cli][args]") {
  CHECK(parse({}) == json("{}"));
}

TEST_CASE("Int params become JSON integers, anything else stays text for the router to reject",
          "[cli][args]") {
  CHECK(parse({"--if-version", "3"}) == json(R"({"ifVersion":3})"));
  CHECK(parse({"--if-version", "-1"}) == json(R"({"ifVersion":-1})"));
  CHECK(parse({"--if-version", "abc"}) == json(R"({"ifVersion":"abc"})"));
  CHECK(parse({"--if-version", "3.5"}) == json(R"({"ifVersion":"3.5"})"));
}

TEST_CASE("Bool params are flags; --no-x exists for those that default to true", "[cli][args]") {
  CHECK(parse({"--dry-run"}) == json(R"({"dryRun":true})"));
  CHECK(parse({"--dry-run=false"}) == json(R"({"dryRun":false})"));
  CHECK(parse({"--include-done"}) == json(R"({"includeDone":true})"));
  CHECK(parse({"--no-include-done"}) == json(R"({"includeDone":false})"));
  CHECK(parse_error({"--no-dry-run"}).code == ErrorCode::InvalidParams);
  CHECK(parse_error({"--include-done", "--no-include-done"}).code == ErrorCode::InvalidInput);
}

TEST_CASE("Array params take repeated flags and, for ids, enums and patterned items, comma lists",
          "[cli][args]") {
  CHECK(parse({"--depends", "T1,T2", "--depends", "T3"}) == json(R"({"depends":["T1","T2","T3"]})"));
  CHECK(parse({"--depends", " T1 , T2 ,"}) == json(R"({"depends":["T1","T2"]})"));
  CHECK(parse({"--labels", "api,docs"}) == json(R"({"labels":["api","docs"]})"));
  // Free text is never split: a criterion may contain commas.
  CHECK(parse({"--acceptance", "fast, and small", "--acceptance", "documented"}) ==
        json(R"({"acceptance":["fast, and small","documented"]})"));
  // An empty value is an empty list (how `--mode replace` clears a list).
  CHECK(parse({"--labels", ""}) == json(R"({"labels":[]})"));
  // Each occurrence takes exactly one value; the next word is a positional again.
  CHECK(parse({"--depends", "T1", "T9"}) == json(R"({"id":"T9","depends":["T1"]})"));
}

TEST_CASE("String, Enum and TaskId params pass through as text", "[cli][args]") {
  CHECK(parse({"--priority", "urgent", "--title", "Robert'); DROP TABLE tasks;--"}) ==
        json(R"({"title":"Robert'); DROP TABLE tasks;--","priority":"urgent"})"));
  CHECK(parse({"--title", "日本語のタスク"}) == json(R"({"title":"日本語のタスク"})"));
}

TEST_CASE("a scalar given twice is an error, not a silent pick", "[cli][args]") {
  auto error = parse_error({"T1", "--title", "a", "--title", "b"});
  CHECK(error.code == ErrorCode::InvalidParams);
  CHECK(error.message.find("--title") != std::string::npos);
  CHECK(error.details["field"] == Value("title"));
}

TEST_CASE("Object params take JSON text, @file or - for stdin", "[cli][args]") {
  CHECK(parse({"--tasks", R"([{"title":"x"}])"}) == json(R"({"tasks":[{"title":"x"}]})"));
  auto input = fake_input({{"export.json", R"({"format":"cleo-tasks","tasks":[]})"}}, R"({"from":"stdin"})");
  CHECK(parse({"--tasks", "@export.json"}, input) == json(R"({"tasks":{"format":"cleo-tasks","tasks":[]}})"));
  CHECK(parse({"--tasks", "-"}, input) == json(R"({"tasks":{"from":"stdin"}})"));
  // A `ct --json` envelope stands for its data.
  auto envelope = fake_input({{"env.json", R"({"success":true,"data":{"tasks":[1]}})"}}, "");
  CHECK(parse({"--tasks", "@env.json"}, envelope) == json(R"({"tasks":{"tasks":[1]}})"));

  auto bad = parse_error({"--tasks", "{oops"});
  CHECK(bad.code == ErrorCode::InvalidParams);
  CHECK(bad.details["field"] == Value("tasks"));
  CHECK(parse_error({"--tasks", "@missing.json"}, input).code == ErrorCode::FileError);
}

TEST_CASE("unknown options and surplus arguments are E_INVALID_PARAMS with a suggestion", "[cli][args]") {
  auto unknown = parse_error({"T1", "--prority", "high"});
  CHECK(unknown.code == ErrorCode::InvalidParams);
  CHECK(unknown.details["didYouMean"] == Value("--priority"));
  CHECK(unknown.details["valid"].size() == 12);  // 11 params + --no-include-done

  auto surplus = parse_error({"T1", "T2", "T3"});
  CHECK(surplus.code == ErrorCode::InvalidParams);
  CHECK(surplus.message.find("'T3'") != std::string::npos);
}

TEST_CASE("the registry's operations parse their documented command lines", "[cli][args][registry]") {
  const auto& registry = ct::registry();
  auto parse_real = [&](std::string_view domain, std::string_view name, const std::vector<std::string>& args) {
    const OperationSpec* spec = registry.find(domain, name);
    REQUIRE(spec);
    auto params = parse_operation_args(*spec, args, fake_input({}, ""));
    REQUIRE(params.has_value());
    return *params;
  };
  CHECK(parse_real("tasks", "show", {"T001"}) == json(R"({"id":"T001"})"));
  CHECK(parse_real("tasks", "add", {"Write docs", "--parent", "T001", "--blocked-by", "review"}) ==
        json(R"({"title":"Write docs","parent":"T001","blockedBy":"review"})"));
  CHECK(parse_real("tasks", "find", {"auth", "--include-archived"}) ==
        json(R"({"query":"auth","includeArchived":true})"));
  CHECK(parse_real("tasks", "reparent", {"T005", "T002"}) == json(R"({"id":"T005","parent":"T002"})"));
  CHECK(parse_real("tasks", "update", {"T001", "--if-version", "2", "--status", "blocked"}) ==
        json(R"({"id":"T001","status":"blocked","ifVersion":2})"));
  CHECK(parse_real("tasks", "tree", {"--no-include-done"}) == json(R"({"includeDone":false})"));
  CHECK(parse_real("tasks", "list", {"--status", "pending,active", "--limit", "5"}) ==
        json(R"({"status":["pending","active"],"limit":5})"));
}

TEST_CASE("short flags for the common params; unquoted words continue a free-text positional", "[cli][args]") {
  CHECK(ct::disclosure::short_flag("priority") == 'p');
  CHECK(ct::disclosure::short_flag("parent") == 'P');
  CHECK(ct::disclosure::short_flag("ifVersion") == '\0');
  CHECK(parse({"T1", "-p", "high", "-l", "a,b"}) == json(R"({"id":"T1","labels":["a","b"],"priority":"high"})"));

  OperationSpec add;
  add.domain = "tasks";
  add.name = "add";
  add.params = {{.name = "title", .type = ParamType::String, .positional = true},
                {.name = "priority", .type = ParamType::Enum, .choices = {"high", "low"}}};
  InputSource none = fake_input({}, "");
  CHECK(*parse_operation_args(add, {"Write", "the", "README", "-p", "high"}, none) ==
        json(R"({"title":"Write the README","priority":"high"})"));
  // A word that looks like an option is never taken as text.
  CHECK_FALSE(parse_operation_args(add, {"Write", "the", "-x"}, none));
  // The last positional must be free text: two task ids do not run on.
  CHECK(parse_error({"T1", "T2", "T3"}).message.find("unexpected argument 'T3'") != std::string::npos);
}
