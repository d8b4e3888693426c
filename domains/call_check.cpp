#include "domains/call_check.h"

#include <cstdio>
#include <cstdlib>

#include "core/clock.h"
#include "core/text.h"
#include "domains/pipeline.h"

namespace ct {
namespace {

bool is_placeholder(const json::Value& value) {
  if (value.is_array()) return !value.empty() && is_placeholder(value.as_array().front());
  if (!value.is_string()) return false;
  const std::string& text = value.as_string();
  return text == "…" || text == "..." || (text.size() > 2 && text.front() == '<' && text.back() == '>') ||
         is_template_variable(text);
}

}  // namespace

bool checking_contracts() {
#ifndef NDEBUG
  return true;
#else
  static const bool enabled = [] {
    const char* flag = std::getenv("CLEO_CHECK_ERRORS");
    return test_mode() || (flag != nullptr && std::string_view(flag) == "1");
  }();
  return enabled;
#endif
}

Result<void> check_call(const Call& call, const Registry& registry) {
  const OperationSpec* spec = registry.find(call.domain(), call.name());
  if (spec == nullptr) return fail(ErrorCode::InvalidOperation, "no operation " + call.operation);
  if (!call.params.is_null() && !call.params.is_object())
    return fail(ErrorCode::InvalidParams, call.operation + ": params must be an object");
  // A placeholder stands for whatever valid value the caller puts there: its param must exist,
  // and counts as given.
  OperationSpec relaxed = *spec;
  json::Value params = json::Value::object();
  if (call.params.is_object()) {
    for (const auto& [key, value] : call.params.as_object()) {
      if (!is_placeholder(value)) {
        params.set(key, value);
        continue;
      }
      const ParamSpec* param = spec->find_param(key);
      if (param == nullptr) return fail(ErrorCode::InvalidParams, call.operation + ": no param " + key);
      for (auto& declared : relaxed.params)
        if (declared.name == param->name) declared.required = false;
    }
  }
  // As the router validates a request: common params, bulk ids, then the spec's own params.
  auto valid = pipeline::validate(relaxed, params, false);
  if (!valid) return fail(ErrorCode::InvalidParams, call.operation + ": " + valid.error().message);
  return {};
}

const OperationSpec* called_operation(const Call& call, const Registry& registry) {
  if (checking_contracts()) {
    if (auto ok = check_call(call, registry); !ok) {
      std::fprintf(stderr, "ct: a suggested call would not run (%s): %s\n", call.operation.c_str(),
                   ok.error().message.c_str());
      std::abort();
    }
  }
  return registry.find(call.domain(), call.name());
}

std::vector<std::string_view> unknown_suggested_operations(const Registry& registry) {
  std::vector<std::string_view> unknown;
  for (std::string_view name : kSuggestedOperations) {
    const auto dot = name.find('.');
    if (registry.find(name.substr(0, dot), name.substr(dot + 1)) == nullptr) unknown.push_back(name);
  }
  return unknown;
}

}  // namespace ct
