// params: Params::validate (domains/params.h) against every operation of the product registry,
// plus one plug-in operation (capability/plugins.h) whose params declare patterns that backtrack
// exponentially in a backtracking engine ("(a+)+$") and have no max (the registry's default cap
// applies).
// Input: the first byte picks the operation (modulo their number), the rest is the params JSON.
//   - never crashes, and no validation takes a second (a pattern cannot stall it, a long value
//     cannot overflow the stack);
//   - a refusal is E_INVALID_PARAMS or E_VALIDATION whose details.field names the param (or the
//     unknown name that was given, cut to 200 characters, or "params" when they are not an
//     object); E_VALIDATION exactly when the value named has its param's JSON type (it broke a
//     data rule), E_INVALID_PARAMS otherwise (not an object, unknown, missing, wrong type); the
//     message quotes no value whole (it stays under 8 KiB whatever the input's size);
//   - accepted params hold every required param, and each value has its param's type (read
//     back through the typed accessors the handlers use);
//   - validation is idempotent: the validated params validate again to the same params.
// With CT_FUZZ_LIST_OPERATIONS=1 it prints the operations in input order ("op <byte> <domain>
// <name>"), their examples ("example <byte> <params JSON>"), param names, enum choices and CLI
// shortcuts, and exits: tests/fuzz/seeds.py makes the seed corpora and dictionaries from them.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstdint>
#include <string>

#include "capability/plugins.h"
#include "core/json_parse.h"
#include "core/text.h"
#include "gateway/product.h"
#include "domains/params.h"
#include "domains/registry.h"
#include "fuzz_support.h"

using namespace ct;

namespace {

/// The product's registry plus a plug-in operation with hostile patterns and no max.
const Registry& fuzz_registry() {
  static const capability::PluginRegistry plugins = capability::with_plugins(registry(), *json::parse(R"({
    "fuzz.patterns": {"command": ["true"], "gateway": "query", "summary": "Params with hostile patterns",
      "params": [
        {"name": "nested", "type": "string", "pattern": "(a+)+$"},
        {"name": "alternation", "type": "string", "pattern": "^(a|aa)*$"},
        {"name": "bounded", "type": "string", "max": 10, "pattern": "^[a-z]+$"},
        {"name": "list", "type": "array", "pattern": "^(x+x+)+y$"},
        {"name": "scalar", "type": "scalar", "pattern": "^[0-9]+$"}]}})"));
  if (!plugins.warnings.empty()) {
    std::fprintf(stderr, "params_fuzz: the plug-in declaration was refused: %s\n", plugins.warnings.front().c_str());
    std::abort();
  }
  return plugins.registry;
}

/// The value has the JSON type its param takes (what remains can only break a data rule).
bool has_type(ParamType type, const json::Value& value) {
  switch (type) {
    case ParamType::String:
    case ParamType::Enum:
    case ParamType::TaskId:
      return value.is_string();
    case ParamType::Int:
      return value.is_int() ||
             (value.type() == json::Type::Double && std::isfinite(value.as_double()) &&
              value.as_double() == std::trunc(value.as_double()));
    case ParamType::Bool:
      return value.is_bool();
    case ParamType::Scalar:
      return value.is_string() || value.is_number() || value.is_bool();
    case ParamType::Object:
      return value.is_object() || value.is_array();
    case ParamType::Array:
      return value.is_string() || value.is_array();
  }
  return false;
}

/// The refusal's code follows from what was given: E_VALIDATION when the value details.field names
/// has its param's type, E_INVALID_PARAMS otherwise.
void check_refusal_class(const OperationSpec& spec, const json::Value& raw, const Error& error, std::string_view input) {
  std::string field = error.details["field"].is_string() ? error.details["field"].as_string() : "";
  std::string name = field.substr(0, field.find('['));
  const ParamSpec* param = raw.is_object() ? spec.find_param(name) : nullptr;
  const json::Value* given = nullptr;
  std::size_t occurrences = 0;
  if (param && raw.is_object())
    for (const auto& [key, value] : raw.as_object())
      if (key == param->name || (!param->alias.empty() && key == param->alias)) {
        given = &value;
        ++occurrences;
      }
  if (occurrences > 1) return;  // a repeated key: which one was refused is not ours to say here
  bool typed = given && !given->is_null() && has_type(param->type, *given);
  if (typed && field.size() > name.size() && given->is_array()) {
    // An array item: "labels[3]".
    std::size_t index = std::strtoul(field.c_str() + name.size() + 1, nullptr, 10);
    typed = index < given->size() && given->as_array()[index].is_string();
  }
  ErrorCode expected = typed ? ErrorCode::Validation : ErrorCode::InvalidParams;
  if (error.code != expected)
    fuzz::finding(typed ? "a value of the right type refused with a code other than E_VALIDATION"
                        : "a refusal that is not a data rule's with a code other than E_INVALID_PARAMS",
                  input, spec.full_name() + ": " + std::string(to_string(error.code)) + " " + error.message);
}

void check_types(const OperationSpec& spec, const Params& params, std::string_view input) {
  for (const auto& param : spec.params) {
    if (!params.has(param.name)) {
      if (param.required) fuzz::finding("accepted params miss a required param", input, spec.full_name() + "." + std::string(param.name));
      continue;
    }
    const json::Value& value = params.value(param.name);
    std::string where = spec.full_name() + "." + std::string(param.name) + " = " + value.dump();
    bool ok = true;
    switch (param.type) {
      case ParamType::String:
      case ParamType::TaskId:
      case ParamType::Scalar:
        ok = value.is_string();
        if (ok) (void)params.str(param.name);
        break;
      case ParamType::Enum:
        ok = value.is_string() &&
             std::find(param.choices.begin(), param.choices.end(), value.as_string()) != param.choices.end();
        break;
      case ParamType::Int:
        ok = value.is_int();
        if (ok) (void)params.integer(param.name);
        break;
      case ParamType::Bool:
        ok = value.is_bool();
        (void)params.flag(param.name);
        break;
      case ParamType::Array:
        ok = value.is_array() && std::all_of(value.as_array().begin(), value.as_array().end(),
                                             [](const json::Value& item) { return item.is_string(); });
        (void)params.strings(param.name);
        break;
      case ParamType::Object:
        ok = value.is_object() || value.is_array();
        break;
    }
    if (!ok) fuzz::finding("an accepted value does not have its param's type", input, where);
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  const char* list = std::getenv("CT_FUZZ_LIST_OPERATIONS");
  if (!list || std::string_view(list) != "1") return 0;
  auto operations = fuzz_registry().operations();
  for (std::size_t i = 0; i < operations.size(); ++i) {
    std::printf("op %zu %s %s\n", i, std::string(operations[i].domain).c_str(), std::string(operations[i].name).c_str());
    for (const auto& example : operations[i].examples)
      std::printf("example %zu %s\n", i, std::string(example.params_json).c_str());
    for (const auto& param : operations[i].params) {
      std::printf("param %zu %s\n", i, std::string(param.name).c_str());
      for (auto choice : param.choices) std::printf("choice %zu %s\n", i, std::string(choice).c_str());
      if (!param.alias.empty()) std::printf("param %zu %s\n", i, std::string(param.alias).c_str());
    }
    if (!operations[i].shortcut.empty())
      std::printf("shortcut %zu %s\n", i, std::string(operations[i].shortcut).c_str());
  }
  std::exit(0);
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  static const auto operations = fuzz_registry().operations();
  const OperationSpec& spec = operations[data[0] % operations.size()];
  std::string_view input = fuzz::as_text(data, size);
  auto raw = json::parse(input.substr(1));
  if (!raw) return 0;
  const auto started = std::chrono::steady_clock::now();
  auto params = Params::validate(spec, *raw);
  const auto took = std::chrono::steady_clock::now() - started;
  if (took > std::chrono::seconds(1))
    fuzz::finding("validation took more than a second", input,
                  spec.full_name() + ": " +
                      std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(took).count()) + " ms");
  if (!params) {
    const Error& error = params.error();
    if (error.code != ErrorCode::InvalidParams && error.code != ErrorCode::Validation)
      fuzz::finding("validate failed with a code other than E_INVALID_PARAMS or E_VALIDATION", input,
                    spec.full_name() + ": " + error.message);
    check_refusal_class(spec, *raw, error, input);
    if (error.message.size() > 8192)
      fuzz::finding("a refusal's message quotes a value whole", input,
                    spec.full_name() + ": " + std::to_string(error.message.size()) + " bytes");
    // details.field names the param; it is empty only for an unknown param that was named "".
    const json::Value& field = error.details["field"];
    if (!field.is_string() || (field.as_string().empty() && !(raw->is_object() && raw->contains(""))))
      fuzz::finding("a validation error without details.field", input, spec.full_name() + ": " + error.message);
    auto given_name = [&](const std::string& name) {
      if (!raw->is_object()) return false;
      for (const auto& [key, value] : raw->as_object())
        if (key == name || clip(key, kEchoChars) == name) return true;
      return false;
    };
    if (!field.as_string().empty() && field.as_string() != "params" && !spec.find_param(field.as_string()) &&
        !given_name(field.as_string()) && field.as_string().find('[') == std::string::npos)
      fuzz::finding("details.field names neither a param nor a given name", input,
                    spec.full_name() + ": " + field.as_string());
    return 0;
  }
  check_types(spec, *params, input);
  auto again = Params::validate(spec, params->json());
  if (!again)
    fuzz::finding("validated params do not validate again", input,
                  spec.full_name() + ": " + params->json().dump() + " -> " + again.error().message);
  if (!fuzz::same_json(again->json(), params->json()))
    fuzz::finding("validating validated params changes them", input,
                  spec.full_name() + ": " + params->json().dump() + " -> " + again->json().dump());
  return 0;
}
