// Validated, typed parameters. The router checks the raw JSON against the operation's spec
// (types, ranges, enums, patterns, unknown names), applies defaults and normalises task ids;
// handlers read values through these accessors and never see unchecked JSON.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"
#include "core/json.h"

namespace ct {

struct OperationSpec;

class Params {
 public:
  Params() = default;
  /// Validates `raw` (must be an object or null) against `spec`. Two codes, one rule:
  /// E_INVALID_PARAMS (exit 2) when the params are not what the spec declares — not an object, an
  /// unknown name, a required param missing, a value of the wrong JSON type; E_VALIDATION (exit 6)
  /// when a value has the right type but breaks a data rule of its param — length, range, enum
  /// choices, pattern, format (a task id), item count, control characters. Both name the field
  /// (details.field), say what was expected (the valid choices where there are some) and carry an
  /// example call as the fix; a value they quote back is cut to 200 characters (core/text.h echo).
  static Result<Params> validate(const OperationSpec& spec, const json::Value& raw);
  /// Validates one value against one param of `spec` (as validate() would inside an object) and
  /// returns it normalised; errors as validate()'s, naming `name`.
  static Result<json::Value> check(const OperationSpec& spec, std::string_view name, const json::Value& value);

  bool has(std::string_view name) const { return values_.contains(name); }
  /// String, Enum and TaskId params (TaskId normalised to "T001").
  const std::string& str(std::string_view name) const;
  std::optional<std::string> opt_str(std::string_view name) const;
  std::int64_t integer(std::string_view name) const;
  std::optional<std::int64_t> opt_integer(std::string_view name) const;
  bool flag(std::string_view name) const;  // Bool params; false when absent
  std::optional<bool> opt_flag(std::string_view name) const;
  /// Array params of strings/ids; empty when absent.
  std::vector<std::string> strings(std::string_view name) const;
  /// Object params (and anything else) as validated JSON; null when absent.
  const json::Value& value(std::string_view name) const { return values_[name]; }
  /// A String param that names a point in time (core/clock.h: parse_time_expression: a date, a
  /// time, today, yesterday, 3d …), relative to `now`; nullopt when absent, E_VALIDATION when it
  /// is none of those.
  Result<std::optional<std::int64_t>> time(std::string_view name, std::int64_t now) const;
  /// All params after validation, for the audit trail.
  const json::Value& json() const { return values_; }

 private:
  json::Value values_ = json::Value::object();
};

}  // namespace ct
