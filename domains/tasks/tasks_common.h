// Shared by the tasks domain's handler files: building the engine for a call, common params and
// compact replies.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "domains/context.h"
#include "domains/params.h"
#include "domains/projection.h"
#include "domains/registry.h"
#include "engines/rules/task_engine.h"
#include "engines/store/task_json.h"

namespace ct::tasks {

/// The task engine at `now` (a call reads the clock once: its changes share one time).
inline TaskEngine engine(Context& context, TimeMs now) {
  return TaskEngine(context.db(), *context.config, now, context.session,
                    [&context](FieldChange change) { context.record(std::move(change)); });
}
inline TaskEngine engine(Context& context) { return engine(context, context.now()); }

/// The subject task id, required and positional on the CLI.
inline ParamSpec id_param(std::string_view description = "Task id, e.g. T001") {
  return ParamSpec{.name = "id", .type = ParamType::TaskId, .required = true, .description = description,
                   .positional = true};
}

inline ParamSpec if_version_param() {
  return ParamSpec{.name = "ifVersion", .type = ParamType::Int, .min = 1,
                   .description = "Only apply when the task is still at this version (else E_CONCURRENT_MODIFICATION)"};
}

/// {id, <changed field>: <new value>…, version}: the compact reply of a mutation, less the note it
/// added (tasks.show lists the notes). The router leaves out what the caller sent (drop_echoes).
inline json::Value changed_reply(const Task& task, const std::vector<std::string>& changed) {
  json::Value out = json::Value::object();
  out.set("id", task.id);
  for (const auto& field : changed)
    if (field != "notes") out.set(field, task_field(task, field));
  out.set("version", task.version);
  return out;
}

/// The reply of a change of a task (tasks.update, restore, reopen, reparent, promote, reorder,
/// relate): changed_reply, or the whole record with detail:'full'; E_NO_CHANGE note when nothing
/// changed.
inline Reply update_reply(const UpdateResult& result, const Params& params) {
  if (params.has("detail") && params.str("detail") == "full")
    return Reply::noted(task_full(result.task), result.changed.empty() ? std::optional(ErrorCode::NoChange) : std::nullopt);
  Reply reply{changed_reply(result.task, result.changed), {}, {}, {}};
  if (result.changed.empty()) reply.note = ErrorCode::NoChange;
  return reply;
}

/// Registers a task write: every one is checked against session.enforcement and the bound
/// session's scope, and may be staged in a batch or a plan — but claiming work and archiving in
/// bulk, which are calls of their own.
inline void add_task_write(Registry& registry, OperationSpec spec) {
  spec.needs_session = true;
  spec.batchable = spec.name != "start" && spec.name != "stop" && spec.name != "reclaim" && spec.name != "archive";
  registry.add(std::move(spec));
}

/// A new task from validated tasks.add params (tasks_add.cpp); tasks.import reads each record
/// through it.
NewTask new_task_from(const Params& params);

// Defined in import_original.cpp, shared with tasks_undo.cpp.
/// A session as the `session.<id>` change of an import's audit row records it, every field (times
/// in ISO-8601), so that undoing the undo of the import puts it back as it was.
json::Value session_record(const Session& session);
/// The inverse of session_record().
Result<Session> session_from_record(const std::string& id, const json::Value& record);

// Defined in tasks_query.cpp, shared with tasks_analysis.cpp and tasks_report.cpp.
/// A TaskFilter from the filter params (filter_params()).
Result<TaskFilter> read_filter(const Params& params);
/// With inScope (or, when `by_default`, without inScope:false while a session is bound): the ids
/// of the caller's session scope (nullopt for a global scope or no limit).
Result<std::optional<std::set<std::string>>> scope_filter(Context& context, const Params& params,
                                                          bool by_default = false);
/// The params that narrow a list of tasks (tasks.list, tasks.export).
std::vector<ParamSpec> filter_params();

}  // namespace ct::tasks
