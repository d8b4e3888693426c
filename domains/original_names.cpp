#include "domains/original_names.h"

#include <algorithm>

#include "core/text.h"
#include "domains/params.h"

namespace ct::original_names {

std::span<const ParamName> params() {
  // From the original's request schemas (mcp-server/schemas/requests/, v0.91.0) and its handlers,
  // where they differ: each is the same value under another name. Names whose meaning differs
  // (session.list's active, a boolean where ours is a status; system.restore's backupId, the id of
  // the original's own backups) are not here: the call is refused naming ours, as any unknown
  // param is.
  static const std::vector<ParamName> kParams = {
      {"taskId", "id", {}},
      // The original's lifecycle handlers take the epic as epicId (its schemas say taskId).
      {"epicId", "id",
       {"lifecycle.status", "lifecycle.check", "lifecycle.history", "lifecycle.record", "lifecycle.skip",
        "lifecycle.reset"}},
      {"rootId", "id", {"tasks.tree"}},
      {"newParent", "parent", {"tasks.reparent"}},
      {"targetId", "target", {"tasks.relate"}},
      {"researchId", "id", {"research.show", "research.link", "research.unlink"}},
      {"targetStage", "stage", {"lifecycle.check"}},
      {"gateName", "gate", {"lifecycle.gate.pass", "lifecycle.gate.fail"}},
      {"protocolType", "protocol", {"research.inject", "validate.protocol"}},
      {"beforeDate", "before", {"research.archive"}},
  };
  return kParams;
}

namespace {

bool applies(const ParamName& row, const OperationSpec& spec) {
  // A param of the spec's own under the original name (research.link's taskId) keeps its meaning.
  if (spec.find_param(row.original)) return false;
  auto ours =
      std::find_if(spec.params.begin(), spec.params.end(), [&](const ParamSpec& p) { return p.name == row.ours; });
  if (ours == spec.params.end()) return false;
  if (row.operations.empty()) return ours->type == ParamType::TaskId;
  const std::string name = spec.full_name();
  return std::find(row.operations.begin(), row.operations.end(), name) != row.operations.end();
}

std::string param_warning(const ParamName& row) {
  return std::string(row.original) + " is the original CLEO's name of " + std::string(row.ours) + "; send " +
         std::string(row.ours);
}

/// The same value under both names: equal once each is validated as ours (t1 and T001 are one task).
bool same_value(const OperationSpec& spec, std::string_view ours, const json::Value& a, const json::Value& b) {
  if (a == b) return true;
  auto checked_a = Params::check(spec, ours, a);
  auto checked_b = Params::check(spec, ours, b);
  return checked_a && checked_b && *checked_a == *checked_b;
}

}  // namespace

std::vector<const ParamName*> params_of(const OperationSpec& spec) {
  std::vector<const ParamName*> out;
  for (const auto& row : params())
    if (applies(row, spec)) out.push_back(&row);
  return out;
}

Result<std::vector<std::string>> take_params(const OperationSpec& spec, json::Value& params) {
  std::vector<std::string> warnings;
  if (!params.is_object()) return warnings;
  for (const ParamName* row : params_of(spec)) {
    const json::Value* original = params.find(row->original);
    if (!original) continue;
    if (original->is_null()) {
      params.erase(row->original);
      continue;
    }
    const json::Value* ours = params.find(row->ours);
    if (ours && !ours->is_null()) {
      if (!same_value(spec, row->ours, *original, *ours)) {
        Error error(ErrorCode::InvalidParams,
                    std::string(row->original) + " and " + std::string(row->ours) + " differ (" +
                        echo(original->is_string() ? original->as_string() : original->dump()) + ", " +
                        echo(ours->is_string() ? ours->as_string() : ours->dump()) + "): " +
                        std::string(row->original) + " is the original CLEO's name of " + std::string(row->ours) +
                        "; send " + std::string(row->ours) + " alone");
        error.fix = spec.example_call();
        return fail(std::move(error).with_detail("field", std::string(row->original)));
      }
    } else {
      json::Value value = *original;
      params.set(row->ours, std::move(value));
    }
    params.erase(row->original);
    warnings.push_back(param_warning(*row));
  }
  return warnings;
}

std::string operation_warning(std::string_view original, const OperationSpec& spec) {
  return std::string(original) + " is the original CLEO's name of " + spec.full_name() + "; call " + spec.full_name();
}

}  // namespace ct::original_names
