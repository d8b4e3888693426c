// TaskEngine's way out and back (engines/rules/task_engine.h): delete (cancel and archive by
// default, remove rows with `hard`; children blocked, orphaned or cascaded), archive (done and
// cancelled tasks, one or all finished before a time) and restore.
#include <algorithm>

#include "engines/rules/task_engine.h"
#include "engines/rules/task_checks.h"
#include "engines/store/task_json.h"

namespace ct {

using task_checks::append_unique;
using task_checks::is_open;

Result<DeleteResult> TaskEngine::remove(const std::string& id, const DeleteOptions& options,
                                        std::optional<std::int64_t> if_version) {
  CT_TRY_ASSIGN(Task task, get(id));
  CT_TRY(check_version(task, if_version));
  DeleteResult result;
  result.id = id;
  result.hard = options.hard;
  if (!options.hard) {
    if (task.archived && task.status == TaskStatus::Cancelled) {
      result.no_change = true;
      return result;
    }
    if (task.archived) {
      CT_TRY(get_live(id));  // archived tasks are read-only: the same error everywhere
    }
    if (task.status == TaskStatus::Done) {
      Error error(ErrorCode::TaskCompleted, "Task " + id + " is done; archive it instead of deleting");
      error.fix = call("tasks.archive", {{"id", id}});
      return fail(std::move(error).with_detail("id", id));
    }
  }
  CT_TRY_ASSIGN(std::vector<std::string> children, store_.children_of(id, options.hard));
  if (!children.empty()) CT_TRY(settle_children(task, children, options, result));
  CT_TRY_ASSIGN(std::vector<std::string> dependents, store_.dependents_of(id));
  CT_TRY(clear_focus_of(id));
  if (options.hard) {
    if (!dependents.empty() && !options.force) {
      Error error(ErrorCode::HasDependents, std::to_string(dependents.size()) + " task(s) depend on " + id);
      error.fix = call("tasks.delete", {{"id", id}, {"hard", true}, {"force", true}}) + " drops the dependency from them";
      return fail(std::move(error).with_detail("dependents", json::Value::array_of(dependents)));
    }
    for (const auto& dependent_id : dependents) {
      CT_TRY_ASSIGN(Task dependent, get(dependent_id));
      Task cleaned = dependent;
      std::erase(cleaned.depends, id);
      CT_TRY(save(dependent, cleaned));
    }
    record(id, "deleted", task_full(task), json::Value(), task.version);
    CT_TRY(store_.delete_task(id));
    return result;
  }
  if (!dependents.empty()) {
    std::string list;
    for (const auto& d : dependents) list += (list.empty() ? "" : ", ") + d;
    result.warnings.push_back("no longer blocks " + list + " (a cancelled dependency counts as finished)");
  }
  Task after = task;
  after.status = TaskStatus::Cancelled;
  after.cancelled_at = now_;
  after.cancellation_reason = options.reason.empty() ? "deleted" : options.reason;
  after.blocked_by.clear();
  after.archived = true;
  after.archived_at = now_;
  after.archive_reason = "cancelled";
  CT_TRY(save(task, after));
  return result;
}

Result<void> TaskEngine::settle_children(const Task& task, const std::vector<std::string>& children,
                                         const DeleteOptions& options, DeleteResult& result) {
  const std::string& id = task.id;
  if (options.children == ChildStrategy::Block) {
    Error error(ErrorCode::HasChildren, "Task " + id + " has " + std::to_string(children.size()) +
                                            " children; choose what happens to them");
    error.fix = call("tasks.delete", {{"id", id}, {"children", "cascade"}}) + " (or children:'orphan' to keep them)";
    return fail(std::move(error).with_detail("children", json::Value::array_of(children)));
  }
  for (const auto& child_id : children) {
    if (options.children == ChildStrategy::Cascade) {
      DeleteOptions child_options = options;
      CT_TRY_ASSIGN(Task child, get(child_id));
      if (!options.hard && child.status == TaskStatus::Done) {
        // A finished child keeps its history: archive it with its parent.
        Task archived = child;
        archived.archived = true;
        archived.archived_at = now_;
        archived.archive_reason = "cascade";
        CT_TRY(save(child, archived));
        result.affected.push_back(child_id);
        continue;
      }
      CT_TRY_ASSIGN(DeleteResult nested, remove(child_id, child_options, std::nullopt));
      result.affected.push_back(child_id);
      append_unique(result.affected, nested.affected);
    } else {
      CT_TRY_ASSIGN(Task child, get(child_id));
      Task moved = child;
      moved.parent = task.parent;
      if (task.parent.empty() && moved.type == TaskType::Subtask) moved.type = TaskType::Task;
      CT_TRY_ASSIGN(std::int64_t last, store_.max_position(task.parent));
      moved.position = last + 1;
      CT_TRY(save(child, moved));
      result.affected.push_back(child_id);
    }
  }
  return {};
}

Result<std::vector<std::string>> TaskEngine::archive(const std::optional<std::string>& id,
                                                     std::optional<TimeMs> before,
                                                     std::vector<std::string>& warnings) {
  std::vector<Task> candidates;
  if (id) {
    CT_TRY_ASSIGN(Task task, get(*id));
    if (task.archived) return std::vector<std::string>{};
    if (is_open(task.status)) {
      Error error(ErrorCode::Validation, "Task " + *id + " is " + std::string(to_string(task.status)) +
                                             "; only done or cancelled tasks can be archived");
      error.fix = call("tasks.complete", {{"id", *id}});
      return fail(std::move(error).with_detail("id", *id));
    }
    candidates.push_back(std::move(task));
  } else {
    TaskQuery query;
    query.filter.statuses = {TaskStatus::Done, TaskStatus::Cancelled};
    query.sort = SortKey::Id;
    CT_TRY_ASSIGN(candidates, store_.list_tasks(query));
  }
  std::vector<std::string> archived;
  for (auto& task : candidates) {
    TimeMs finished = task.completed_at.value_or(task.cancelled_at.value_or(task.updated_at));
    if (before && finished > *before) continue;
    CT_TRY_ASSIGN(std::vector<std::string> children, store_.children_of(task.id, false));
    bool open_child = false;
    for (const auto& child_id : children) {
      CT_TRY_ASSIGN(std::optional<Task> child, store_.get_task(child_id));
      open_child = open_child || (child && is_open(child->status));
    }
    if (open_child) {
      warnings.push_back(task.id + " kept: it has open children");
      if (id) {
        return fail(Error(ErrorCode::HasChildren, "Task " + task.id + " has open children; finish them first")
                        .with_fix(call("tasks.list", {{"parent", task.id},
                                                      {"status", json::Value::Array{"pending", "active", "blocked"}}}) +
                                  " lists them; complete or delete each, then archive " + task.id)
                        .with_detail("children", json::Value::array_of(children)));
      }
      continue;
    }
    Task after = task;
    after.archived = true;
    after.archived_at = now_;
    after.archive_reason = "manual";
    CT_TRY(save(task, after));
    archived.push_back(task.id);
  }
  return archived;
}

Result<UpdateResult> TaskEngine::restore(const std::string& id) {
  CT_TRY_ASSIGN(Task before, get(id));
  if (!before.archived && before.status != TaskStatus::Cancelled) return UpdateResult{before, {}};
  if (!before.parent.empty()) {
    CT_TRY_ASSIGN(std::optional<Task> parent, store_.get_task(before.parent));
    if (parent && parent->archived) {
      Error error(ErrorCode::Validation, "Parent " + parent->id + " is archived; restore it first");
      error.fix = call("tasks.restore", {{"id", parent->id}});
      return fail(std::move(error).with_detail("parent", parent->id));
    }
  }
  Task after = before;
  after.archived = false;
  after.archived_at.reset();
  after.archive_reason.clear();
  if (before.status == TaskStatus::Cancelled) {
    after.status = TaskStatus::Pending;
    after.cancelled_at.reset();
    after.cancellation_reason.clear();
    after.completed_at.reset();  // a deleted done task comes back open, like a reopened one
  }
  CT_TRY_ASSIGN(std::vector<std::string> changed, save(before, after));
  return UpdateResult{std::move(after), std::move(changed)};
}

}  // namespace ct
