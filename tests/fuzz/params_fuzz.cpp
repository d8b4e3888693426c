// params: Params::validate (domains/params.h) against every operation of the product registry.
// Input: the first byte picks the operation (modulo their number), the rest is the params JSON.
//   - never crashes; a refusal is E_INVALID_PARAMS whose details.field names the param (or the
//     unknown name that was given, or "params" when they are not an object);
//   - accepted params hold every required param, and each value has its param's type (read
//     back through the typed accessors the handlers use);
//   - validation is idempotent: the validated params validate again to the same params.
// With CT_FUZZ_LIST_OPERATIONS=1 it prints the operations in input order ("op <byte> <domain>
// <name>"), their examples ("example <byte> <params JSON>"), param names, enum choices and CLI
// shortcuts, and exits: tests/fuzz/seeds.py makes the seed corpora and dictionaries from them.
#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstdint>
#include <string>

#include "core/json_parse.h"
#include "disclosure/product.h"
#include "domains/params.h"
#include "domains/registry.h"
#include "fuzz_support.h"

using namespace ct;

namespace {

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
  auto operations = registry().operations();
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
  static const auto operations = registry().operations();
  const OperationSpec& spec = operations[data[0] % operations.size()];
  std::string_view input = fuzz::as_text(data, size);
  auto raw = json::parse(input.substr(1));
  if (!raw) return 0;
  auto params = Params::validate(spec, *raw);
  if (!params) {
    const Error& error = params.error();
    if (error.code != ErrorCode::InvalidParams)
      fuzz::finding("validate failed with a code other than E_INVALID_PARAMS", input,
                    spec.full_name() + ": " + error.message);
    // details.field names the param; it is empty only for an unknown param that was named "".
    const json::Value& field = error.details["field"];
    if (!field.is_string() || (field.as_string().empty() && !(raw->is_object() && raw->contains(""))))
      fuzz::finding("a validation error without details.field", input, spec.full_name() + ": " + error.message);
    if (!field.as_string().empty() && field.as_string() != "params" && !spec.find_param(field.as_string()) &&
        !(raw->is_object() && raw->contains(field.as_string())) && field.as_string().find('[') == std::string::npos)
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
