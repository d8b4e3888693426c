// The outcome of a check (validate.*, system.health): the report when it passed; an error carrying
// the same report in error.details when it did not — E_VALIDATION (exit 6) for data checks, the
// protocol's own code (60–70) for validate.protocol — so scripts and agents see a failure in the
// exit code and isError, not only in a field. Both carry `valid`.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "core/error.h"
#include "core/json.h"
#include "domains/registry.h"

namespace ct {

inline Result<Reply> verdict(bool valid, json::Value report, std::vector<std::string> warnings, std::string summary,
                             Advice fix, ErrorCode code = ErrorCode::Validation) {
  report.set("valid", valid);
  if (valid) return Reply::warned(std::move(report), std::move(warnings));
  if (!warnings.empty()) report.set("warnings", json::Value::array_of(warnings));
  Error error(code, std::move(summary));
  error.fix = std::move(fix);
  error.details = std::move(report);
  return fail(std::move(error));
}

}  // namespace ct
