// The original CLEO's names (issue 37). Agents trained on its documents call tasks.depends,
// session.switch or orchestrate.skill.list, and pass taskId where we take id. The names of its
// operations are declared on the specs they run (OperationSpec::original_names) and routed by the
// route stage; its param names that are ours under another name are this file's one table, put
// under ours by the validate stage. Either way the call runs as ours and its reply warns with our
// name, so the agent learns it; nothing is silently dropped. A name of the original whose meaning
// differs from ours is no alias: it is suggested (OperationSpec::aliases) or spelled near.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"
#include "core/json.h"
#include "domains/registry.h"

namespace ct::original_names {

/// A param of the original CLEO that is one of ours under another name.
struct ParamName {
  std::string_view original;  // "taskId"
  std::string_view ours;      // "id"
  /// The operations ("tasks.tree") where it is ours; none: every operation whose `ours` param is
  /// a task id.
  std::vector<std::string_view> operations;
};

/// The one table of the original's param names (from its request schemas, v0.91.0).
std::span<const ParamName> params();

/// The rows of params() that `spec` takes: it has their `ours` and no param of their `original`.
std::vector<const ParamName*> params_of(const OperationSpec& spec);

/// Puts each original param in `params` under our name, with a warning for each. Given under both
/// names, the values must be the same (E_INVALID_PARAMS names both otherwise); a null original is
/// "not given", as any null param.
Result<std::vector<std::string>> take_params(const OperationSpec& spec, json::Value& params);

/// The warning of a call that named the original CLEO's `original` ("tasks.depends") and ran `spec`.
std::string operation_warning(std::string_view original, const OperationSpec& spec);

}  // namespace ct::original_names
