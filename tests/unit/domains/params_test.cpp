#include <catch2/catch.hpp>

#include "core/json_parse.h"
#include "domains/params.h"
#include "domains/registry.h"

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
