#include "domains/params.h"

#include <cmath>
#include <map>
#include <mutex>
#include <optional>

#include "core/clock.h"
#include "core/json_parse.h"
#include "core/pattern.h"
#include "core/text.h"
#include "domains/registry.h"
#include "engines/store/task.h"

namespace ct {
namespace {

std::vector<std::string> param_names(const OperationSpec& spec) {
  std::vector<std::string> names;
  for (const auto& p : spec.params) names.emplace_back(p.name);
  return names;
}

/// The params are not what the spec declares: not an object, an unknown name, a required param
/// missing, a value of the wrong JSON type. E_INVALID_PARAMS (exit 2).
Error param_error(const OperationSpec& spec, std::string_view field, std::string message) {
  Error error(ErrorCode::InvalidParams, std::string(field) + ": " + std::move(message));
  error.fix = spec.example_call();
  return std::move(error).with_detail("field", std::string(field));
}

/// A value of the right type that breaks a data rule of its param: length, range, choices,
/// pattern, format (a task id, a date), item count, characters. E_VALIDATION (exit 6), as seed
/// 003's level 2 lists it for tasks.add ("E_VALIDATION (6): Field validation failed").
Error rule_error(const OperationSpec& spec, std::string_view field, std::string message) {
  Error error = param_error(spec, field, std::move(message));
  error.code = ErrorCode::Validation;
  return error;
}

/// A compiled pattern, cached: the product's specs are static and a project's plug-ins are read
/// once, so the set of patterns is small and fixed. Patterns are checked when they are declared
/// (a test compiles every pattern of the registry; plug-ins are skipped with a warning), so one
/// that does not compile here is a bug.
Result<Pattern> compiled(std::string_view pattern) {
  static std::mutex mutex;
  static std::map<std::string, Pattern, std::less<>> cache;
  std::lock_guard lock(mutex);
  auto it = cache.find(pattern);
  if (it == cache.end()) {
    auto compiled = Pattern::compile(pattern);
    if (!compiled) return fail(ErrorCode::Internal, "the pattern " + std::string(pattern) + " does not compile: " + compiled.error());
    it = cache.emplace(std::string(pattern), std::move(*compiled)).first;
  }
  return it->second;
}

std::vector<std::string> choice_list(const ParamSpec& param) {
  return {param.choices.begin(), param.choices.end()};
}

std::string describe_choices(const ParamSpec& param) {
  std::string out;
  for (auto c : param.choices) {
    if (!out.empty()) out += '|';
    out += c;
  }
  return out;
}

/// Checks one string value (a param or an array item). Returns the normalised value: surrounding
/// whitespace is trimmed before any other check, so "   " is an empty string, never a 3-character
/// title.
Result<std::string> check_string(const OperationSpec& spec, std::string_view field, const ParamSpec& param,
                                 ParamType type, std::string text) {
  if (!valid_utf8(text)) return fail(rule_error(spec, field, "text is not valid UTF-8"));
  if (std::string_view trimmed = trim(text); trimmed.size() != text.size()) text = std::string(trimmed);
  if (type == ParamType::TaskId) {
    auto id = normalize_task_id(text);
    if (!id) {
      return fail(rule_error(spec, field, "expected a task id like T001, got " + echo(text))
                      .with_detail("expected", "taskId"));
    }
    return *id;
  }
  if (type == ParamType::Enum) {
    for (auto choice : param.choices)
      if (choice == text) return text;
    // "HIGH" and "High" mean high: the one choice equal to it but for case, in its own spelling.
    std::optional<std::string_view> folded;
    for (auto choice : param.choices) {
      if (to_lower_ascii(choice) != to_lower_ascii(text)) continue;
      if (folded) {
        folded.reset();
        break;
      }
      folded = choice;
    }
    if (folded) return std::string(*folded);
    return fail(rule_error(spec, field, "expected one of " + describe_choices(param) + ", got " + echo(text))
                    .with_choices(text, choice_list(param)));
  }
  // Stored text holds no character that drives or disguises a display (core/text.h): refused,
  // never silently changed, so what is stored is exactly what was sent.
  if (auto c = first_control_character(text, /*allow_newlines=*/true))
    return fail(rule_error(spec, field, code_point_name(*c) + " is not allowed: control characters and "
                                        "bidirectional overrides are refused in text (tab and line breaks are fine)")
                    .with_detail("character", code_point_name(*c)));
  if (param.single_line && has_control_characters(text, /*allow_newlines=*/false))
    return fail(rule_error(spec, field, "line breaks are not allowed: it is one line"));
  std::int64_t max = field.find('[') != std::string_view::npos ? param.item_max : param.max;
  std::int64_t min = field.find('[') != std::string_view::npos ? kUnbounded : param.min;
  auto length = static_cast<std::int64_t>(utf8_length(text));
  if (min != kUnbounded && length < min)
    return fail(rule_error(spec, field, "must be at least " + std::to_string(min) + " characters, got " +
                                            std::to_string(length))
                    .with_detail("min", min));
  if (max != kUnbounded && length > max)
    return fail(rule_error(spec, field, "must be at most " + std::to_string(max) + " characters, got " +
                                            std::to_string(length))
                    .with_detail("max", max));
  if (!param.pattern.empty()) {
    // Bounded above (the registry gives every patterned param a max) and matched by RE2 in
    // linear time: no value can stall or overflow the matcher.
    CT_TRY_ASSIGN(Pattern pattern, compiled(param.pattern));
    if (!pattern.matches(text))
      return fail(rule_error(spec, field, echo(text) + " does not match " + std::string(param.pattern))
                      .with_detail("pattern", std::string(param.pattern)));
  }
  return text;
}

/// The error of a value of the wrong JSON type for `field`, saying what was expected.
Error wrong_type(const OperationSpec& spec, std::string_view field, const json::Value& value, std::string_view expected) {
  return param_error(spec, field, "expected " + std::string(expected) + ", got " + std::string(json::to_string(value.type())))
      .with_detail("expected", std::string(expected));
}

/// An Int param: an integer (or a double that is one), one of its choices, within its bounds.
Result<json::Value> check_int(const OperationSpec& spec, const ParamSpec& param, const json::Value& value) {
  std::string_view field = param.name;
  std::int64_t number;
  if (value.is_int()) {
    number = value.as_int();
  } else if (value.type() == json::Type::Double) {
    // Range and integrality are checked on the double itself: casting 1e300 or NaN to an
    // integer is undefined behaviour.
    double d = value.as_double();
    if (!std::isfinite(d) || d != std::trunc(d)) return fail(wrong_type(spec, field, value, "integer"));
    if (d < -kMaxIntParam || d > kMaxIntParam)
      return fail(rule_error(spec, field, "must be between " + std::to_string(-kMaxIntParam) + " and " +
                                               std::to_string(kMaxIntParam)));
    number = static_cast<std::int64_t>(d);
  } else {
    return fail(wrong_type(spec, field, value, "integer"));
  }
  if (!param.choices.empty()) {
    // A fixed set of values: the error lists them, and the fix is an example that uses one.
    for (auto choice : param.choices)
      if (choice == std::to_string(number)) return json::Value(number);
    Error error = rule_error(spec, field, "expected one of " + describe_choices(param) + ", got " +
                                              std::to_string(number));
    json::Value valid = json::Value::array();
    for (auto choice : param.choices) valid.push_back(json::parse(choice).value_or(json::Value(std::string(choice))));
    for (const auto& example : spec.examples)
      if (auto parsed = json::parse(example.params_json); parsed && parsed->contains(field)) {
        error.fix = spec.call_with(example.params_json);
        break;
      }
    return fail(std::move(error).with_detail("valid", std::move(valid)));
  }
  // Every integer is bounded (an offset near INT64_MAX would overflow offset + limit).
  const std::int64_t min = param.min != kUnbounded ? param.min : -kMaxIntParam;
  const std::int64_t max = param.max != kUnbounded ? param.max : kMaxIntParam;
  if (number < min)
    return fail(rule_error(spec, field, "must be ≥ " + std::to_string(min) + ", got " +
                                            std::to_string(number)).with_detail("min", min));
  if (number > max)
    return fail(rule_error(spec, field, "must be ≤ " + std::to_string(max) + ", got " +
                                            std::to_string(number)).with_detail("max", max));
  return json::Value(number);
}

/// An Array param: a list (or one string, or "a,b"), its count within bounds, each item checked as
/// its item type; duplicates dropped (a list of ids or labels is a set).
Result<json::Value> check_array(const OperationSpec& spec, const ParamSpec& param, const json::Value& value) {
  std::string_view field = param.name;
  // A single string is accepted as a one-item list (and "a,b" as two) — agents and CLI
  // users both write it that way.
  json::Value::Array items;
  if (value.is_string()) {
    for (auto& piece : split_list(value.as_string())) items.emplace_back(std::move(piece));
  } else if (value.is_array()) {
    items = value.as_array();
  } else {
    return fail(wrong_type(spec, field, value, "array"));
  }
  auto count = static_cast<std::int64_t>(items.size());
  if (param.min != kUnbounded && count < param.min)
    return fail(rule_error(spec, field, "needs at least " + std::to_string(param.min) + " items"));
  if (param.max != kUnbounded && count > param.max)
    return fail(rule_error(spec, field, "takes at most " + std::to_string(param.max) + " items, got " +
                                            std::to_string(count)));
  json::Value::Array out;
  for (std::size_t i = 0; i < items.size(); ++i) {
    std::string item_field = std::string(field) + "[" + std::to_string(i) + "]";
    if (!items[i].is_string())
      return fail(param_error(spec, item_field, "expected string, got " +
                                                    std::string(json::to_string(items[i].type()))));
    CT_TRY_ASSIGN(std::string text, check_string(spec, item_field, param, param.item_type, items[i].as_string()));
    bool seen = false;
    for (const auto& existing : out) seen = seen || existing.as_string() == text;
    if (!seen) out.emplace_back(std::move(text));
  }
  return json::Value(std::move(out));
}

Result<json::Value> check_value(const OperationSpec& spec, const ParamSpec& param, const json::Value& value) {
  std::string_view field = param.name;
  switch (param.type) {
    case ParamType::String:
    case ParamType::Enum:
    case ParamType::TaskId: {
      if (!value.is_string())
        return fail(wrong_type(spec, field, value, param.type == ParamType::TaskId ? "a task id string" : "string"));
      CT_TRY_ASSIGN(std::string text, check_string(spec, field, param, param.type, value.as_string()));
      return json::Value(std::move(text));
    }
    case ParamType::Int:
      return check_int(spec, param, value);
    case ParamType::Bool:
      if (!value.is_bool()) return fail(wrong_type(spec, field, value, "boolean"));
      return value;
    case ParamType::Scalar: {
      std::string text;
      if (value.is_string()) text = value.as_string();
      else if (value.is_number() || value.is_bool()) text = value.dump();
      else return fail(wrong_type(spec, field, value, "string, number or boolean"));
      CT_TRY_ASSIGN(std::string checked, check_string(spec, field, param, ParamType::String, text));
      return json::Value(std::move(checked));
    }
    case ParamType::Object:
      if (param.or_text && value.is_string()) {
        CT_TRY_ASSIGN(std::string text, check_string(spec, field, param, ParamType::String, value.as_string()));
        return json::Value(std::move(text));
      }
      if (!value.is_object() && !value.is_array())
        return fail(wrong_type(spec, field, value, param.or_text ? "object or string" : "object"));
      return value;
    case ParamType::Array:
      return check_array(spec, param, value);
  }
  return fail(wrong_type(spec, field, value, "a known type"));
}

}  // namespace

Result<Params> Params::validate(const OperationSpec& spec, const json::Value& raw) {
  Params params;
  if (!raw.is_null() && !raw.is_object()) {
    return fail(param_error(spec, "params", "expected an object, got " + std::string(json::to_string(raw.type()))));
  }
  if (raw.is_object()) {
    for (const auto& [name, value] : raw.as_object()) {
      const ParamSpec* param = spec.find_param(name);
      if (!param) {
        Error error(ErrorCode::InvalidParams, "unknown parameter " + echo(name) + " for " + spec.full_name());
        error.fix = spec.example_call();
        // The name as given (cut like the message's quote when it is absurdly long).
        return fail(std::move(error).with_detail("field", clip(name, kEchoChars)).with_choices(name, param_names(spec)));
      }
      if (value.is_null()) continue;  // null means "not given"
      CT_TRY_ASSIGN(json::Value checked, check_value(spec, *param, value));
      params.values_.set(std::string(param->name), std::move(checked));
    }
  }
  for (const auto& param : spec.params) {
    if (params.values_.contains(param.name)) continue;
    // A bulk operation's ids stand in for its id (the router runs the call once for each).
    const bool named_by_ids = spec.bulk && param.name == "id" && params.values_.contains("ids");
    if (param.required && !named_by_ids) {
      return fail(param_error(spec, param.name, "required parameter is missing (" +
                                                    std::string(to_string(param.type)) + ")")
                      .with_detail("expected", std::string(to_string(param.type))));
    }
    if (!param.default_json.empty()) {
      auto parsed = json::parse(param.default_json);
      if (parsed) params.values_.set(param.name, std::move(*parsed));
    }
  }
  return params;
}

Result<json::Value> Params::check(const OperationSpec& spec, std::string_view name, const json::Value& value) {
  const ParamSpec* param = spec.find_param(name);
  if (!param) return fail(ErrorCode::Internal, spec.full_name() + " has no param '" + std::string(name) + "'");
  return check_value(spec, *param, value);
}

Result<std::optional<std::int64_t>> Params::time(std::string_view name, std::int64_t now) const {
  auto text = opt_str(name);
  if (!text) return std::optional<std::int64_t>();
  if (auto at = parse_time_expression(*text, now)) return std::optional<std::int64_t>(*at);
  return fail(Error(ErrorCode::Validation, std::string(name) + ": expected a date like 2026-01-31, a time, today, "
                                                               "yesterday or an age like 3d, 12h, 2w; got " + echo(*text))
                  .with_detail("field", std::string(name)));
}

const std::string& Params::str(std::string_view name) const { return values_[name].as_string(); }

std::optional<std::string> Params::opt_str(std::string_view name) const {
  const json::Value* v = values_.find(name);
  if (!v || !v->is_string()) return std::nullopt;
  return v->as_string();
}

std::int64_t Params::integer(std::string_view name) const { return values_[name].as_int(); }

std::optional<std::int64_t> Params::opt_integer(std::string_view name) const {
  const json::Value* v = values_.find(name);
  if (!v || !v->is_int()) return std::nullopt;
  return v->as_int();
}

bool Params::flag(std::string_view name) const {
  const json::Value* v = values_.find(name);
  return v && v->is_bool() && v->as_bool();
}

std::optional<bool> Params::opt_flag(std::string_view name) const {
  const json::Value* v = values_.find(name);
  if (!v || !v->is_bool()) return std::nullopt;
  return v->as_bool();
}

std::vector<std::string> Params::strings(std::string_view name) const {
  std::vector<std::string> out;
  const json::Value* v = values_.find(name);
  if (v && v->is_array())
    for (const auto& item : v->as_array())
      if (item.is_string()) out.push_back(item.as_string());
  return out;
}

}  // namespace ct
