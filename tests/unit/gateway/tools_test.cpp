// The two tools' input schemas against the rules of the strictest hosts known (docs/disclosure.md,
// "What each host receives"): the Gemini API's function declarations (an OpenAPI 3.0 subset),
// OpenAI function calling, and what OpenAI strict mode and the converters to it make of them.
#include <catch2/catch.hpp>

#include <regex>
#include <set>
#include <string>
#include <vector>

#include "gateway/product.h"
#include "gateway/tools.h"
#include "unit/test_support.h"

using namespace ct;
using namespace ct::mcp;

namespace {

using Violations = std::vector<std::string>;

/// The Gemini API's `parameters` schema (an OpenAPI 3.0 subset): every node has one `type` of
/// six; an OBJECT has non-empty `properties` ("should be non-empty for OBJECT type") and a
/// `required` naming only them; `enum` belongs to STRING; no keyword outside the subset ($ref,
/// oneOf, const, type lists …). `additionalProperties` is left to the caller: hosts strip it
/// (every zod-made MCP schema carries it) or pass the schema as `parametersJsonSchema`.
void gemini_check(const json::Value& node, const std::string& path, Violations& out) {
  static const std::set<std::string> kTypes = {"string", "number", "integer", "boolean", "array", "object"};
  static const std::set<std::string> kKeywords = {
      "type",    "format",  "title",   "description", "nullable",  "enum",          "properties",
      "required", "items",  "minItems", "maxItems",   "minimum",   "maximum",       "minLength",
      "maxLength", "pattern", "example", "default",   "anyOf",     "propertyOrdering", "minProperties",
      "maxProperties"};
  if (!node.is_object()) {
    out.push_back(path + ": a schema must be an object");
    return;
  }
  for (const auto& [key, value] : node.as_object())
    if (!kKeywords.contains(key)) out.push_back(path + ": keyword '" + key + "' is outside Gemini's schema");
  const json::Value& type = node["type"];
  if (!type.is_string() || !kTypes.contains(type.as_string())) {
    out.push_back(path + ": needs one type of string, number, integer, boolean, array, object");
    return;
  }
  if (node.contains("enum")) {
    if (type.as_string() != "string") out.push_back(path + ": enum is only for STRING");
    const json::Value& values = node["enum"];
    if (!values.is_array() || values.empty()) out.push_back(path + ": enum must list values");
    else
      for (const auto& value : values.as_array())
        if (!value.is_string()) out.push_back(path + ": enum values must be strings");
  }
  if (type.as_string() == "object") {
    const json::Value& properties = node["properties"];
    if (!properties.is_object() || properties.empty()) {
      out.push_back(path + ": properties should be non-empty for OBJECT type");
    } else {
      for (const auto& [name, schema] : properties.as_object()) gemini_check(schema, path + "." + name, out);
    }
    if (const json::Value* required = node.find("required"))
      for (const auto& name : required->as_array())
        if (!name.is_string() || !properties.contains(name.as_string()))
          out.push_back(path + ": required names a property that is not declared");
  } else if (node.contains("properties") || node.contains("required")) {
    out.push_back(path + ": properties and required are only allowed for OBJECT type");
  }
  if (type.as_string() == "array") {
    if (!node.contains("items")) out.push_back(path + ": an ARRAY needs items");
    else gemini_check(node["items"], path + "[]", out);
  }
}

/// A schema as Gemini hosts forward it: `additionalProperties` removed everywhere.
json::Value strip_additional_properties(json::Value node) {
  if (!node.is_object()) return node;
  node.erase("additionalProperties");
  for (auto& [key, value] : node.as_object())
    if (key == "properties")
      for (auto& [name, schema] : value.as_object()) schema = strip_additional_properties(std::move(schema));
  return node;
}

/// OpenAI strict mode (Structured Outputs): every object lists all its properties in `required`
/// and sets `additionalProperties: false`; so no object is free-form.
void strict_check(const json::Value& node, const std::string& path, Violations& out) {
  if (node["type"] != json::Value("object")) return;
  if (node["additionalProperties"] != json::Value(false)) out.push_back(path + ": additionalProperties must be false");
  const json::Value& properties = node["properties"];
  std::size_t required = node["required"].is_array() ? node["required"].size() : 0;
  if (required != properties.size()) out.push_back(path + ": every property must be required");
  if (properties.is_object())
    for (const auto& [name, schema] : properties.as_object()) strict_check(schema, path + "." + name, out);
}

/// What a strict-mode converter does (the OpenAI Agents SDK's ensure_strict_json_schema, for
/// MCP tools with convert_schemas_to_strict): it closes every object that leaves
/// `additionalProperties` unset and requires all its properties, but refuses an object that sets
/// it true (the host then sends the tool non-strict, as it is).
bool strict_converter_refuses(const json::Value& node) {
  if (!node.is_object()) return false;
  if (node["type"] == json::Value("object") && node.contains("additionalProperties") &&
      node["additionalProperties"] != json::Value(false))
    return true;
  if (const json::Value* properties = node.find("properties"); properties && properties->is_object())
    for (const auto& [name, schema] : properties->as_object())
      if (strict_converter_refuses(schema)) return true;
  return false;
}

json::Value schema_of(Gateway gateway) { return test::parse_json(input_schema(registry(), gateway)); }

}  // namespace

TEST_CASE("tool schemas: the Gemini API's function declarations accept them", "[mcp][schema]") {
  for (Gateway gateway : {Gateway::Query, Gateway::Mutate}) {
    json::Value schema = schema_of(gateway);
    Violations violations;
    gemini_check(strip_additional_properties(schema), std::string(tool_name(gateway)), violations);
    INFO(violations.size() << " violations, first: " << (violations.empty() ? "" : violations.front()));
    CHECK(violations.empty());
    // `additionalProperties` is the one keyword beyond the subset, and only on params (true).
    Violations raw;
    gemini_check(schema, "", raw);
    CHECK(raw == Violations{".params: keyword 'additionalProperties' is outside Gemini's schema"});
  }
}

TEST_CASE("tool schemas: the rules checker catches what Gemini refuses", "[mcp][schema]") {
  // The shape of params before issue 13: an OBJECT with no properties.
  Violations violations;
  gemini_check(test::parse_json(R"({"type":"object","properties":{"params":{"type":"object"}}})"), "t", violations);
  CHECK(violations == Violations{"t.params: properties should be non-empty for OBJECT type"});
  violations.clear();
  gemini_check(test::parse_json(R"({"type":"object","properties":{"n":{"type":"integer","enum":[1,2]},)"
                                R"("s":{"type":["string","null"]},"r":{"$ref":"#/$defs/x"}},"required":["q"]})"),
               "t", violations);
  CHECK(violations == Violations{"t.n: enum is only for STRING", "t.n: enum values must be strings",
                                 "t.n: enum values must be strings",
                                 "t.s: needs one type of string, number, integer, boolean, array, object",
                                 "t.r: keyword '$ref' is outside Gemini's schema",
                                 "t.r: needs one type of string, number, integer, boolean, array, object",
                                 "t: required names a property that is not declared"});
}

TEST_CASE("tool schemas: OpenAI function calling and hosts that want properties everywhere", "[mcp][schema]") {
  for (Gateway gateway : {Gateway::Query, Gateway::Mutate}) {
    json::Value schema = schema_of(gateway);
    CHECK(schema["type"].as_string() == "object");  // the root is an object, no anyOf/oneOf at the root
    for (const char* keyword : {"anyOf", "oneOf", "allOf", "not", "enum", "$ref"}) CHECK_FALSE(schema.contains(keyword));
    // "object schema missing properties" (Copilot CLI, OpenAI): every object declares some.
    CHECK_FALSE(schema["properties"].empty());
    CHECK_FALSE(schema["properties"]["params"]["properties"].empty());
    CHECK(schema["required"] == test::parse_json(R"(["domain","operation"])"));
    CHECK(schema["properties"]["domain"]["enum"] == json::Value::array_of(registry().domains(gateway)));
  }
}

TEST_CASE("tool schemas: strict mode cannot be met, and converters fall back instead of closing params",
          "[mcp][schema]") {
  for (Gateway gateway : {Gateway::Query, Gateway::Mutate}) {
    json::Value schema = schema_of(gateway);
    // Strict mode wants every object closed and fully required. params is free-form by design
    // (each of 115 operations has its own parameters), so the schema is not strict, and says so:
    Violations violations;
    strict_check(schema, "", violations);
    CHECK(violations == Violations{": additionalProperties must be false", ": every property must be required",
                                   ".params: additionalProperties must be false",
                                   ".params: every property must be required"});
    // …and a converter refuses it (params is explicitly open) rather than closing params to {id}.
    CHECK(strict_converter_refuses(schema));
    CHECK(schema["properties"]["params"]["additionalProperties"] == json::Value(true));
  }
}

TEST_CASE("tool schemas: params names id, and every operation's id is a string", "[mcp][schema]") {
  json::Value params = schema_of(Gateway::Query)["properties"]["params"];
  CHECK(params["properties"] == test::parse_json(R"({"id":{"type":"string"}})"));
  std::size_t with_id = 0;
  for (const OperationSpec& spec : registry().operations())
    for (const ParamSpec& param : spec.params)
      if (param.name == "id") {
        ++with_id;
        INFO(spec.domain << "." << spec.name << " id is " << to_string(param.type));
        CHECK((param.type == ParamType::String || param.type == ParamType::TaskId));
      }
  CHECK(with_id > 20);  // the hint names what most operations take
}

TEST_CASE("tools array: names, descriptions and size", "[mcp][schema]") {
  json::Value tools = test::parse_json(tools_array(registry()));
  REQUIRE(tools.size() == 2);
  const std::regex name_pattern("^[A-Za-z0-9_./-]{1,64}$");  // SEP-986, checked by the conformance suite
  for (const auto& tool : tools.as_array()) {
    CHECK(std::regex_match(tool["name"].as_string(), name_pattern));
    // docs/architecture.md §3.1: the params argument says every operation's params go there, and
    // points to system.help for them (a host that drops additionalProperties shows only `id`).
    CHECK(tool["inputSchema"]["properties"]["params"]["description"].as_string().find("system.help") != std::string::npos);
    CHECK_FALSE(tool["description"].as_string().empty());
  }
  // Tokens are measured by tokens/disclosure (≤ 250 o200k for the whole result; 231 today, as
  // before the params description);
  // bytes are the unit test's proxy for it.
  CHECK(tools_array(registry()).size() < 1100);
}
