// What the lifecycle domain's files share (lifecycle_query.cpp, lifecycle_mutate.cpp): the
// engine for a call, a stage's or gate's JSON, and the params they name. The rules live in
// engines/rules/lifecycle.h.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "domains/context.h"
#include "domains/params.h"
#include "domains/registry.h"
#include "engines/rules/lifecycle.h"

namespace ct::lifecycle {

inline Result<LifecycleEngine> engine(Context& context) {
  CT_TRY_ASSIGN(std::string agent, context.agent_name());
  return LifecycleEngine(context.db(), *context.config, context.now(), Actor{agent, context.session, context.principal.id},
                         [&context](FieldChange change) { context.record(std::move(change)); });
}

/// A stage or gate: its name under `key`, its status, and who recorded it when.
inline json::Value state_json(const LifecycleState& state, std::string_view key) {
  json::Value out = json::Value::object();
  out.set(key, state.name);
  out.set("status", state.status);
  if (state.at != 0) out.set("at", format_iso8601(state.at));
  if (!state.agent.empty()) out.set("agent", state.agent);
  if (!state.notes.empty()) out.set("notes", state.notes);
  if (!state.evidence.empty()) out.set("evidence", state.evidence);
  return out;
}

inline ParamSpec id_param(std::string_view description) {
  return {.name = "id", .type = ParamType::TaskId, .required = true, .description = description, .positional = true};
}

inline ParamSpec stage_param() {
  return {.name = "stage", .type = ParamType::Enum, .required = true,
          .choices = std::vector<std::string_view>(kLifecycleStages.begin(), kLifecycleStages.end()),
          .description = "RCSD-IVTR stage", .positional = true};
}

inline ParamSpec gate_param() {
  return {.name = "gate", .type = ParamType::Enum, .required = true,
          .choices = std::vector<std::string_view>(kVerificationGates.begin(), kVerificationGates.end()),
          .description = "Verification gate, in order", .positional = true};
}

}  // namespace ct::lifecycle
