// Shared by the tasks domain's handler files: building the engine for a call, common params (and
// the parts of params several operations take: a task's content, the filter of a list) and compact
// replies.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "domains/bind.h"
#include "domains/context.h"
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

/// The params of an operation on one task: id_param().
struct IdArgs {
  std::string id;
};

/// id_param() and if_version_param().
struct VersionedArgs {
  std::string id;
  std::optional<std::int64_t> if_version;
};

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
/// relate): changed_reply, or the whole record when `full` (tasks.update's detail:'full');
/// E_NO_CHANGE note when nothing changed.
inline Reply update_reply(const UpdateResult& result, bool full = false) {
  return Reply::noted(full ? task_full(result.task) : changed_reply(result.task, result.changed),
                      no_change_if(result.changed.empty()));
}

/// The effect of a change that can take an epic out of the epics (a type given, a parent given),
/// as approval.required reads it (domains/approval.h): each subject demoted is out of reach of every
/// rule that names epics ("tasks.complete:epic"), so the change falls under those rules itself —
/// for a subject that is an epic when it is asked. A person's own demotion is not asked.
inline std::vector<Effect> demotions(const std::vector<std::string>& subjects) {
  std::vector<Effect> out;
  for (const auto& id : subjects) out.push_back({"*", id, "epic"});
  return out;
}

/// Registers a task write: every one is checked against session.enforcement and the bound
/// session's scope. Those a batch or a plan may stage say so (`batchable`): not claiming work or
/// archiving in bulk, which are calls of their own.
inline void add_task_write(Registry& registry, OperationSpec spec) {
  spec.needs_session = true;
  registry.add(std::move(spec));
}

/// Reservations' params and replies (tasks_reserve.cpp), which tasks.start shares: an array of
/// paths or globs…
ParamSpec paths_param(std::string_view name, std::string_view description);
/// …reserved shared (read-mostly)…
ParamSpec shared_param();
/// …normalized (E_VALIDATION naming `field` for a path outside the project), repeats dropped…
Result<std::vector<std::string>> reserved_paths(const std::vector<std::string>& given, std::string_view field);
/// …{id, reserved, conflicts?} with the conflicts warned (E_NO_CHANGE note when nothing changed)…
Reply reservation_reply(Context& context, const std::string& id, const ReserveResult& result);
/// …and the conflicts an advisory reservation met, in `reply`'s data and warnings.
void add_conflicts(Context& context, const ReserveResult& result, Reply& reply);

/// A task's content as tasks.add and tasks.update take it (tasks_add.cpp: content_fields describes
/// its params once for both); a member is empty when its param is not given.
struct TaskContent {
  std::optional<std::string> title;
  std::optional<std::string> description;
  std::optional<std::string> priority;
  std::optional<std::string> type;
  std::optional<std::string> parent;  // tasks.add's
  std::optional<std::string> status;
  std::optional<std::vector<std::string>> depends;
  std::optional<std::vector<std::string>> labels;
  std::optional<std::vector<std::string>> acceptance;
  std::optional<std::vector<std::string>> files;
  std::optional<std::string> phase;
  std::optional<std::string> size;
  std::optional<std::string> blocked_by;
  std::optional<std::string> notes;
};

/// tasks.add's params.
struct AddArgs {
  TaskContent content;
  std::string detail;
};

/// tasks.add's params and how they become AddArgs (tasks_add.cpp); tasks.import reads each record
/// through them.
const Binding<AddArgs>& add_args();

/// A new task from tasks.add's content (tasks_add.cpp): the one path from params to a task, shared
/// by tasks.add and every record of tasks.import.
NewTask new_task_from(const TaskContent& content);

// Defined in import_original.cpp, shared with tasks_undo.cpp.
/// A session as the `session.<id>` change of an import's audit row records it, every field (times
/// in ISO-8601), so that undoing the undo of the import puts it back as it was.
json::Value session_record(const Session& session);
/// The inverse of session_record().
Result<Session> session_from_record(const std::string& id, const json::Value& record);

// Defined in tasks_query.cpp, shared with tasks_analysis.cpp and tasks_report.cpp.
/// The params that narrow a list of tasks (filter_fields()); a member is empty when its param is
/// not given (or not one of the operation's).
struct FilterArgs {
  std::vector<std::string> status;
  std::optional<std::string> parent;
  bool root = false;
  std::optional<std::string> type;
  std::optional<std::string> under;
  std::vector<std::string> label;
  std::optional<std::string> readiness;
  std::optional<std::string> phase;
  std::optional<std::string> priority;
  std::optional<std::string> id_prefix;
  std::string archived;  // "" (not a param of the operation): as exclude
};
/// A TaskFilter from the filter params.
Result<TaskFilter> read_filter(const FilterArgs& args);
/// With inScope (`in_scope`; or, when `by_default`, without inScope:false while a session is
/// bound): the ids of the caller's session scope (nullopt for a global scope or no limit).
Result<std::optional<std::set<std::string>>> scope_filter(Context& context, std::optional<bool> in_scope,
                                                          bool by_default = false);
/// The params that narrow a list of tasks (tasks.list, tasks.export), or those of them named here
/// (in their order there: a search takes some of them).
std::vector<Field<FilterArgs>> filter_fields();
std::vector<Field<FilterArgs>> filter_fields(std::initializer_list<std::string_view> names);

}  // namespace ct::tasks
