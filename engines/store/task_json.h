// JSON projections of a task. Lean by design: empty strings, empty lists and absent dates are
// omitted, because every byte is paid for in an agent's context window.
#pragma once

#include <string_view>
#include <vector>

#include "core/error.h"
#include "core/json.h"
#include "engines/store/store.h"
#include "engines/store/task.h"

namespace ct {

/// A task as its "created" change keeps it in the audit trail: every field it was made with
/// (task_full without the times and version the store keeps itself), so that what is stored can
/// be compared with what the trail says (engines/rules/trail_state.h).
json::Value task_created(const Task& t);
/// Every field (tasks.show, export).
json::Value task_full(const Task& task);
/// id, title, status, priority, and parent when set (lists, search results).
json::Value task_compact(const Task& task);
/// id, title and priority: a suggestion of what to work on (tasks.next, system.dash's next list).
json::Value task_suggestion(const Task& task);
/// The names of every field task_full() can carry, in its order (for `fields` selections).
std::vector<std::string_view> task_field_names();
/// One field of a task as JSON (null when unset), for audit before/after values.
json::Value task_field(const Task& task, std::string_view field);
/// The inverse of task_field(): sets one field from its audit value (null clears it). Refuses a
/// value of the wrong shape, and fields that are not the task's own (id, version, createdAt).
Result<void> set_task_field(Task& task, std::string_view field, const json::Value& value);
/// A task from task_full()'s JSON (what a hard delete records), for putting it back.
Result<Task> task_from_full(const json::Value& full);
/// The common fields of an audit row: seq, at, operation, id (when `with_task`), outcome when not
/// "ok", session, agent and reason when set (system.log and tasks.history add their details).
json::Value audit_row_json(const AuditEntry& row, bool with_task);
/// An audit row's changes: [{id?, field, before?, after?}] (system.log's full rows, a proposal's
/// preview).
json::Value changes_json(const std::vector<FieldChange>& changes);
}  // namespace ct
