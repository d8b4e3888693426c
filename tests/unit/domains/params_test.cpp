#include <catch2/catch.hpp>

#include <chrono>

#include "core/json_parse.h"
#include "domains/params.h"
#include "domains/registry.h"
#include "gateway/product.h"
#include "core/pattern.h"

using namespace ct;

namespace {

const OperationSpec& spec() {
  static const OperationSpec kSpec{
      .domain = "tasks",
      .name = "probe",
      .params = {
          {.name = "id", .type = ParamType::TaskId, .required = true, .description = "id"},
          {.name = "title", .type = ParamType::String, .min = 3, .max = 10, .description = "t"},
          {.name = "count", .type = ParamType::Int, .default_json = "2", .min = 1, .max = 5, .description = "c"},
          {.name = "mode", .type = ParamType::Enum, .choices = {"append", "replace"}, .description = "m"},
          {.name = "flag", .type = ParamType::Bool, .description = "f"},
          {.name = "labels", .type = ParamType::Array, .max = 3, .pattern = "^[a-z]+$", .item_max = 5, .description = "l"},
          {.name = "deps", .type = ParamType::Array, .item_type = ParamType::TaskId, .description = "d"},
          {.name = "data", .type = ParamType::Object, .description = "o"},
      }};
  return kSpec;
}

Result<Params> check(std::string_view text) { return Params::validate(spec(), *json::parse(text)); }

std::string field_of(const Result<Params>& r) { return r.error().details["field"].as_string(); }

}  // namespace

TEST_CASE("valid params are typed, normalised and defaulted", "[params]") {
  auto p = check(R"({"id":"t7","title":"abc","mode":"replace","flag":true,"labels":"x, y","deps":["5","T0012"]})");
  REQUIRE(p);
  CHECK(p->str("id") == "T007");
  CHECK(p->str("title") == "abc");
  CHECK(p->integer("count") == 2);  // default applied
  CHECK(p->str("mode") == "replace");
  CHECK(p->flag("flag"));
  CHECK(p->strings("labels") == std::vector<std::string>{"x", "y"});
  CHECK(p->strings("deps") == std::vector<std::string>{"T005", "T012"});
  CHECK_FALSE(p->has("data"));
}

TEST_CASE("null params and null values mean 'not given'", "[params]") {
  CHECK_FALSE(Params::validate(spec(), json::Value()).has_value());  // id is required
  auto p = check(R"({"id":"T001","title":null})");
  REQUIRE(p);
  CHECK_FALSE(p->has("title"));
}

TEST_CASE("each validation rule names the field and what was expected", "[params]") {
  auto missing = check(R"({})");
  REQUIRE_FALSE(missing);
  CHECK(missing.error().code == ErrorCode::InvalidParams);
  CHECK(field_of(missing) == "id");
  CHECK(missing.error().message.find("required") != std::string::npos);

  auto unknown = check(R"({"id":"T001","titel":"abc"})");
  REQUIRE_FALSE(unknown);
  CHECK(field_of(unknown) == "titel");
  CHECK(unknown.error().details["didYouMean"].as_string() == "title");
  CHECK(unknown.error().details["valid"].size() == spec().params.size());

  auto wrong_type = check(R"({"id":"T001","count":"three"})");
  REQUIRE_FALSE(wrong_type);
  CHECK(field_of(wrong_type) == "count");
  CHECK(wrong_type.error().message.find("expected integer, got string") != std::string::npos);

  auto too_big = check(R"({"id":"T001","count":9})");
  REQUIRE_FALSE(too_big);
  CHECK(too_big.error().details["max"].as_int() == 5);

  auto too_short = check(R"({"id":"T001","title":"ab"})");
  REQUIRE_FALSE(too_short);
  CHECK(too_short.error().details["min"].as_int() == 3);

  auto too_long = check(R"({"id":"T001","title":"abcdefghijk"})");
  REQUIRE_FALSE(too_long);
  CHECK(too_long.error().details["max"].as_int() == 10);

  auto bad_enum = check(R"({"id":"T001","mode":"apend"})");
  REQUIRE_FALSE(bad_enum);
  CHECK(bad_enum.error().details["didYouMean"].as_string() == "append");

  auto bad_id = check(R"({"id":"X12"})");
  REQUIRE_FALSE(bad_id);
  CHECK(bad_id.error().message.find("task id") != std::string::npos);

  auto bad_item = check(R"({"id":"T001","labels":["ok","NOPE"]})");
  REQUIRE_FALSE(bad_item);
  CHECK(field_of(bad_item) == "labels[1]");

  auto too_many = check(R"({"id":"T001","labels":["a","b","c","d"]})");
  REQUIRE_FALSE(too_many);

  auto not_object = Params::validate(spec(), *json::parse("[1]"));
  REQUIRE_FALSE(not_object);
  CHECK(field_of(not_object) == "params");

  auto bool_type = check(R"({"id":"T001","flag":"yes"})");
  REQUIRE_FALSE(bool_type);
  CHECK(bool_type.error().message.find("boolean") != std::string::npos);
}

TEST_CASE("lengths count characters, not bytes; control characters are refused", "[params]") {
  CHECK(check(R"({"id":"T001","title":"日本語テキスト"})"));  // 7 characters, 21 bytes
  auto control = check(R"({"id":"T001","title":"ab\u0001c"})");
  REQUIRE_FALSE(control);
  CHECK(control.error().message.find("control") != std::string::npos);
  CHECK(check(R"({"id":"T001","title":"a\tb\nc"})"));  // tab and newline are text
}

TEST_CASE("a repeated array item is kept once", "[params]") {
  auto p = check(R"({"id":"T001","deps":["T002","2","T2"]})");
  REQUIRE(p);
  CHECK(p->strings("deps") == std::vector<std::string>{"T002"});
}

TEST_CASE("invalid UTF-8 never passes validation", "[params]") {
  json::Value raw = json::Value::object();
  raw.set("id", "T001");
  raw.set("title", std::string("ab\xff\xfe"));
  auto p = Params::validate(spec(), raw);
  REQUIRE_FALSE(p);
  CHECK(p.error().message.find("UTF-8") != std::string::npos);
  json::Value item = json::Value::object();
  item.set("id", "T001");
  item.set("labels", json::Value::array_of(std::vector<std::string>{"ok", "\xc3\x28"}));
  CHECK_FALSE(Params::validate(spec(), item));
}

TEST_CASE("an enum value is matched without regard to case and kept in the choice's spelling", "[params]") {
  auto p = check(R"({"id":"T1","mode":"REPLACE"})");
  REQUIRE(p);
  CHECK(p->str("mode") == "replace");
  CHECK(check(R"({"id":"T1","mode":"Append"})")->str("mode") == "append");
  CHECK_FALSE(check(R"({"id":"T1","mode":"replaced"})"));

  // Two choices that differ only by case: the exact spelling is needed.
  static const OperationSpec kCased{
      .domain = "tasks", .name = "cased",
      .params = {{.name = "unit", .type = ParamType::Enum, .choices = {"mb", "MB"}, .description = "u"}}};
  CHECK(Params::validate(kCased, *json::parse(R"({"unit":"MB"})"))->str("unit") == "MB");
  CHECK_FALSE(Params::validate(kCased, *json::parse(R"({"unit":"Mb"})")));
}

TEST_CASE("a value of the right type that breaks a data rule is E_VALIDATION; the wrong shape E_INVALID_PARAMS",
          "[params][hardening3]") {
  // Issue 30 item 16: seed 003's level 2 lists "E_VALIDATION (6): Field validation failed" for
  // tasks.add, and a title of the wrong length is a data rule (docs/architecture.md §4).
  auto code = [](std::string_view text) { return check(text).error().code; };
  for (std::string_view broken : {
           R"({"id":"T001","title":"ab"})",                 // too short
           R"({"id":"T001","title":"abcdefghijk"})",        // too long
           R"({"id":"T001","count":9})",                    // out of range
           R"({"id":"T001","count":1e300})",                // out of every range
           R"({"id":"T001","mode":"apend"})",               // not a choice
           R"({"id":"X12"})",                               // not a task id
           R"({"id":"T001","labels":["ok","NOPE"]})",       // breaks the pattern
           R"({"id":"T001","labels":["a","b","c","d"]})",   // too many items
           R"({"id":"T001","title":"ab\u0001c"})",          // a control character
           R"({"id":"T001","title":"ab\u202Ec"})",          // a bidirectional override
       }) {
    INFO(broken);
    CHECK(code(broken) == ErrorCode::Validation);
    CHECK(exit_code(code(broken)) == 6);
  }
  for (std::string_view shapeless : {
           R"({})",                                   // a required param missing
           R"({"id":"T001","titel":"abc"})",          // an unknown param
           R"({"id":"T001","count":"three"})",        // the wrong type
           R"({"id":"T001","count":1.5})",            // not an integer
           R"({"id":"T001","flag":"yes"})",
           R"({"id":"T001","labels":["ok",3]})",      // an item of the wrong type
           R"([1])",                                  // not an object
       }) {
    INFO(shapeless);
    CHECK(code(shapeless) == ErrorCode::InvalidParams);
  }
  // Both kinds name the field and carry an example call.
  auto rule = check(R"({"id":"T001","title":"ab"})");
  CHECK(field_of(rule) == "title");
  CHECK_FALSE(rule.error().fix.empty());
  auto time = [] {
    Params p = *check(R"({"id":"T001","title":"someday"})");
    return p.time("title", 0);
  }();
  REQUIRE_FALSE(time);
  CHECK(time.error().code == ErrorCode::Validation);
}

TEST_CASE("every operation that takes a value with a data rule lists E_VALIDATION among its errors", "[params][hardening3]") {
  CHECK(spec().declares(ErrorCode::Validation));
  OperationSpec flags_only{.domain = "tasks", .name = "flags", .params = {{.name = "on", .type = ParamType::Bool}}};
  CHECK_FALSE(flags_only.declares(ErrorCode::Validation));
  CHECK(flags_only.declares(ErrorCode::InvalidParams));
}

TEST_CASE("stored text refuses control characters and bidirectional overrides, naming the character", "[params][hardening3]") {
  // Issue 30 item 15: titles (and every other text param) accepted U+202E.
  for (std::string_view text : {R"(ab\u202Ecd)", R"(ab\u2066cd)", R"(ab\u0085cd)", R"(ab\u009bcd)", R"(ab\u001bcd)",
                                R"(ab\u007fcd)", R"(ab\rcd)"}) {
    INFO(text);
    auto p = check(R"({"id":"T001","title":")" + std::string(text) + R"("})");
    REQUIRE_FALSE(p);
    CHECK(p.error().code == ErrorCode::Validation);
    CHECK(p.error().details["character"].is_string());
    CHECK(p.error().message.find(p.error().details["character"].as_string()) != std::string::npos);
  }
  auto override_char = check(R"({"id":"T001","title":"ab\u202Ecd"})");
  CHECK(override_char.error().details["character"].as_string() == "U+202E");
  // Right-to-left text and its marks are text; so are CRLF line ends in multi-line text.
  CHECK(check(R"({"id":"T001","title":"שלום\u200F"})"));
  CHECK(check(R"({"id":"T001","title":"a\r\nb"})"));
}

TEST_CASE("a value quoted back in an error is cut to 200 characters", "[params][hardening3]") {
  // Issue 30 item 15: a 500 KB invalid value came back whole in the error.
  const std::string big(500'000, 'Z');
  for (std::string_view name : {"mode", "id", "labels"}) {
    INFO(name);
    json::Value raw = json::Value::object();
    if (name != "id") raw.set("id", "T001");
    raw.set(name, name == "labels" ? json::Value::array_of(std::vector<std::string>{big}) : json::Value(big));
    auto p = Params::validate(spec(), raw);
    REQUIRE_FALSE(p);
    CHECK(p.error().message.size() < 1000);
    CHECK(p.error().details.dump().size() < 2000);
  }
  json::Value unknown = json::Value::object();
  unknown.set("id", "T001");
  unknown.set(big, 1);
  auto p = Params::validate(spec(), unknown);
  REQUIRE_FALSE(p);
  CHECK(p.error().code == ErrorCode::InvalidParams);
  CHECK(p.error().message.size() < 1000);
  CHECK(p.error().message.find("(500000 characters)") != std::string::npos);
  CHECK(p.error().details["field"].as_string().size() < 1000);
}

TEST_CASE("patterns match in linear time, whatever the value and the pattern", "[params][hardening3]") {
  // Issue 30 item 1: std::regex recursed once per character (a 150 KB value overflowed the stack)
  // and backtracked exponentially ("(a+)+$" took 18 s on 29 characters).
  static const OperationSpec kPatterned{
      .domain = "tasks",
      .name = "patterned",
      .params = {{.name = "nested", .type = ParamType::String, .pattern = "(a+)+$"},
                 {.name = "word", .type = ParamType::String, .pattern = "^[a-z]+$"},
                 {.name = "list", .type = ParamType::Array, .pattern = "^(x+x+)+y$"}}};
  auto timed = [](std::string_view name, json::Value value) {
    json::Value raw = json::Value::object();
    raw.set(name, std::move(value));
    auto started = std::chrono::steady_clock::now();
    auto p = Params::validate(kPatterned, raw);
    auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started).count();
    return std::pair{std::move(p), ms};
  };
  {
    auto [p, ms] = timed("nested", json::Value(std::string(40, 'a') + "!"));
    REQUIRE_FALSE(p);
    CHECK(p.error().code == ErrorCode::Validation);
    CHECK(ms < 1000);
  }
  {
    auto [p, ms] = timed("list", json::Value::array_of(std::vector<std::string>{std::string(40, 'x')}));
    REQUIRE_FALSE(p);
    CHECK(ms < 1000);
  }
  {
    // 150 KB against a pattern with no max: matched without recursion (this spec was never added
    // to a registry, so no default cap applies here).
    auto [p, ms] = timed("word", json::Value(std::string(150'000, 'a')));
    CHECK(p);
    CHECK(ms < 1000);
    auto [q, ms2] = timed("word", json::Value(std::string(150'000, 'a') + "!"));
    REQUIRE_FALSE(q);
    CHECK(q.error().message.size() < 1000);
  }
}

TEST_CASE("the registry bounds every patterned param, and every pattern compiles in RE2", "[params][hardening3]") {
  Registry registry;
  OperationSpec spec{.domain = "tasks", .name = "bounded",
                     .params = {{.name = "word", .type = ParamType::String, .pattern = "^[a-z]+$"},
                                {.name = "words", .type = ParamType::Array, .pattern = "^[a-z]+$"},
                                {.name = "short", .type = ParamType::String, .max = 9, .pattern = "^[a-z]+$"}}};
  registry.add(spec);
  const OperationSpec* added = registry.find("tasks", "bounded");
  REQUIRE(added);
  CHECK(added->find_param("word")->max == kMaxPatternedChars);
  CHECK(added->find_param("words")->item_max == kMaxPatternedChars);
  CHECK(added->find_param("short")->max == 9);
  json::Value raw = json::Value::object();
  raw.set("word", std::string(kMaxPatternedChars + 1, 'a'));
  auto p = Params::validate(*added, raw);
  REQUIRE_FALSE(p);
  CHECK(p.error().code == ErrorCode::Validation);
  CHECK(p.error().details["max"].as_int() == kMaxPatternedChars);
}

TEST_CASE("the product's patterns all compile in RE2, and every patterned param is bounded", "[params][hardening3]") {
  for (const auto& op : ct::registry().operations())
    for (const auto& param : op.params) {
      if (param.pattern.empty()) continue;
      INFO(op.full_name() << "." << param.name << " " << param.pattern);
      auto compiled = Pattern::compile(param.pattern);
      CHECK(compiled.has_value());
      CHECK((param.type == ParamType::Array ? param.item_max : param.max) != kUnbounded);
    }
}
