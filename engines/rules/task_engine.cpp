// TaskEngine's rules of a task's life (engines/rules/task_engine.h): the checks every change
// passes (hierarchy, dependencies, transitions, versions), adding, changing, completing, reopening,
// moving and linking tasks. The engine's other work has files of its own: task_import_kept.cpp
// (another store's tasks with their ids), task_delete.cpp (delete, archive, restore),
// task_claim.cpp (start, stop, reclaim), task_undo.cpp and task_queries.cpp (next, the dependency
// chains, blockers).
#include "engines/rules/task_engine.h"

#include <algorithm>
#include <deque>
#include <set>
#include <utility>

#include "core/text.h"
#include "engines/rules/task_checks.h"
#include "engines/store/task_json.h"

namespace ct {

namespace task_checks {

Advice find_fix(const std::string& id) {
  return call("tasks.find", {{"query", id}});
}

Error not_found(const std::string& id) {
  Error error(ErrorCode::NotFound, "Task " + id + " not found");
  error.fix = find_fix(id);
  return std::move(error)
      .with_alternative("Search by title", "tasks.find")
      .with_alternative("List tasks", "tasks.list")
      .with_detail("id", id);
}

void append_unique(std::vector<std::string>& list, const std::vector<std::string>& items) {
  for (const auto& item : items)
    if (std::find(list.begin(), list.end(), item) == list.end()) list.push_back(item);
}

std::vector<std::string> lower_all(std::vector<std::string> items) {
  for (auto& item : items) item = to_lower_ascii(item);
  return items;
}

Result<void> check_title_description(const std::string& title, const std::string& description) {
  if (title.find('\n') != std::string::npos || title.find('\r') != std::string::npos)
    return fail(Error(ErrorCode::Validation, "title must be a single line")
                    .with_fix("keep the first line as the title and put the rest in description")
                    .with_detail("field", "title"));
  if (!description.empty() && to_lower_ascii(trim(title)) == to_lower_ascii(trim(description)))
    return fail(Error(ErrorCode::Validation, "description must say more than the title")
                    .with_fix("give a description that adds detail, or leave it out")
                    .with_detail("field", "description"));
  return {};
}

}  // namespace task_checks

namespace {

using task_checks::append_unique;
using task_checks::check_title_description;
using task_checks::find_fix;
using task_checks::is_open;
using task_checks::lower_all;
using task_checks::not_found;

bool allowed_transition(TaskStatus from, TaskStatus to) {
  using S = TaskStatus;
  switch (from) {
    case S::Pending: return to == S::Active || to == S::Blocked || to == S::Done || to == S::Cancelled;
    case S::Active: return to == S::Pending || to == S::Blocked || to == S::Done || to == S::Cancelled;
    case S::Blocked: return to == S::Pending || to == S::Active || to == S::Done || to == S::Cancelled;
    case S::Done: return to == S::Pending;
    case S::Cancelled: return to == S::Pending;
  }
  return false;
}

Result<void> check_transition(const Task& task, TaskStatus to) {
  if (task.status == to || allowed_transition(task.status, to)) return {};
  Error error(ErrorCode::Validation, "Task " + task.id + " cannot go from " + std::string(to_string(task.status)) +
                                         " to " + std::string(to_string(to)));
  if (task.status == TaskStatus::Done)
    error.fix = call("tasks.reopen", {{"id", task.id}});
  if (task.status == TaskStatus::Cancelled)
    error.fix = call("tasks.restore", {{"id", task.id}});
  return fail(std::move(error).with_detail("from", std::string(to_string(task.status)))
                  .with_detail("to", std::string(to_string(to))));
}

/// The status a patch asks for (done and cancelled have operations of their own; a blocked task
/// says what it waits for), with blockedBy kept only while blocked.
Result<void> apply_status(const Task& before, const TaskPatch& patch, Task& after) {
  const std::string& id = before.id;
  if (patch.status) {
    if (*patch.status == TaskStatus::Done || *patch.status == TaskStatus::Cancelled) {
      Error error(ErrorCode::Validation, std::string("use tasks.") +
                                             (*patch.status == TaskStatus::Done ? "complete" : "delete") +
                                             " to make a task " + std::string(to_string(*patch.status)));
      error.fix = *patch.status == TaskStatus::Done ? call("tasks.complete", {{"id", id}})
                                                     : call("tasks.delete", {{"id", id}});
      return fail(std::move(error).with_detail("field", "status"));
    }
    CT_TRY(check_transition(before, *patch.status));
    after.status = *patch.status;
  }
  if (after.status == TaskStatus::Blocked && after.blocked_by.empty() && before.status != TaskStatus::Blocked)
    return fail(Error(ErrorCode::Validation, "a blocked task needs blockedBy: what is it waiting for?")
                    .with_fix(call("tasks.update", {{"id", id}, {"status", "blocked"}, {"blockedBy", "what it waits for"}}))
                    .with_detail("field", "blockedBy"));
  if (after.status != TaskStatus::Blocked) after.blocked_by.clear();
  return {};
}

}  // namespace

const std::vector<std::string_view>& task_fields() {
  static const std::vector<std::string_view> kFields = {
      "title", "description", "status", "priority", "type", "parent", "position", "depends",
      "labels", "acceptance", "files", "notes", "relates", "phase", "size", "blockedBy",
      "completedAt", "cancelledAt", "cancellationReason", "archived", "archivedAt", "archiveReason"};
  return kFields;
}

void TaskEngine::record(const std::string& id, std::string field, json::Value before, json::Value after,
                        std::int64_t version) {
  if (sink_) sink_(FieldChange{id, std::move(field), std::move(before), std::move(after), version});
}

Result<Task> TaskEngine::get(const std::string& id) {
  CT_TRY_ASSIGN(std::optional<Task> task, store_.get_task(id));
  if (!task) return fail(not_found(id));
  return std::move(*task);
}

Result<Task> TaskEngine::get_live(const std::string& id) {
  CT_TRY_ASSIGN(Task task, get(id));
  if (task.archived) {
    Error error(ErrorCode::Validation, "Task " + id + " is archived and read-only");
    error.fix = call("tasks.restore", {{"id", id}});
    return fail(std::move(error).with_detail("id", id));
  }
  return task;
}

Result<void> TaskEngine::check_version(const Task& task, std::optional<std::int64_t> if_version) {
  if (!if_version || *if_version == task.version) return {};
  Error error(ErrorCode::ConcurrentModification,
              "Task " + task.id + " is at version " + std::to_string(task.version) + ", not " +
                  std::to_string(*if_version) + ": someone else changed it");
  error.fix = call("tasks.show", {{"id", task.id}}) + " then retry with the current version";
  return fail(std::move(error).with_detail("id", task.id).with_detail("expected", *if_version)
                  .with_detail("actual", task.version));
}

Result<int> TaskEngine::depth_of(const Task& task) {
  int depth = 0;
  std::string parent = task.parent;
  std::set<std::string> seen;
  while (!parent.empty()) {
    if (!seen.insert(parent).second)
      return fail(Error(ErrorCode::CircularReference, "parent chain of " + task.id + " loops at " + parent)
                      .with_fix(call("tasks.promote", {{"id", parent}}) + " breaks the loop; " + call("validate.schema") +
                                " finds others")
                      .with_detail("id", task.id));
    ++depth;
    CT_TRY_ASSIGN(std::optional<Task> up, store_.get_task(parent));
    if (!up) break;
    parent = up->parent;
  }
  return depth;
}

Result<int> TaskEngine::subtree_height(const std::string& id) {
  // Height of the subtree below `id` (0 for a leaf). Depth is bounded by hierarchy.maxDepth.
  CT_TRY_ASSIGN(std::vector<std::string> children, store_.children_of(id, /*include_archived=*/false));
  int height = 0;
  for (const auto& child : children) {
    CT_TRY_ASSIGN(int below, subtree_height(child));
    height = std::max(height, below + 1);
  }
  return height;
}

TaskType TaskEngine::infer_type(const Task* parent, std::optional<TaskType> wanted) const {
  if (!parent) return wanted.value_or(TaskType::Task) == TaskType::Subtask ? TaskType::Task : wanted.value_or(TaskType::Task);
  if (wanted && *wanted != TaskType::Epic) return *wanted;
  return parent->type == TaskType::Epic ? TaskType::Task : TaskType::Subtask;
}

// Rules for placing a subtree of height `subtree_height` under `parent`, in the order:
// parent usable, depth, sibling limit, parent type.
Result<void> TaskEngine::check_parent(const Task& parent, int height, const std::string& moving_id,
                                      bool archived_child, bool open_child) {
  if (parent.archived && !archived_child) {
    Error error(ErrorCode::ParentNotFound, "Parent " + parent.id + " is archived");
    error.fix = call("tasks.restore", {{"id", parent.id}});
    return fail(std::move(error).with_detail("parent", parent.id));
  }
  CT_TRY_ASSIGN(int parent_depth, depth_of(parent));
  std::int64_t max_depth = config_.get_int("hierarchy.maxDepth");
  if (parent_depth + 1 + height >= max_depth) {
    Error error(ErrorCode::DepthExceeded, "Placing " + (moving_id.empty() ? std::string("the task") : moving_id) +
                                              " under " + parent.id + " would exceed the maximum depth of " +
                                              std::to_string(max_depth) + " (epic > task > subtask)");
    error.fix = "choose a parent higher in the tree, e.g. " + (parent.parent.empty() ? parent.id : parent.parent);
    return fail(std::move(error).with_detail("parent", parent.id).with_detail("maxDepth", max_depth));
  }
  std::int64_t max_siblings = config_.get_int("hierarchy.maxSiblings");
  if (max_siblings > 0 && open_child) {
    CT_TRY_ASSIGN(std::int64_t siblings, store_.count_tasks(TaskStore::open_children_filter(parent.id)));
    if (siblings >= max_siblings) {
      Error error(ErrorCode::SiblingLimit, parent.id + " already has " + std::to_string(siblings) +
                                               " open children (hierarchy.maxSiblings = " +
                                               std::to_string(max_siblings) + ")");
      error.fix = "group related work under a new parent task, or raise hierarchy.maxSiblings";
      return fail(std::move(error).with_detail("parent", parent.id).with_detail("maxSiblings", max_siblings));
    }
  }
  if (parent.type == TaskType::Subtask) {
    Error error(ErrorCode::InvalidParentType, parent.id + " is a subtask; subtasks cannot have children");
    error.fix = "use " + (parent.parent.empty() ? std::string("a task or epic") : parent.parent) + " as the parent";
    return fail(std::move(error).with_detail("parent", parent.id));
  }
  return {};
}

Result<void> TaskEngine::check_depends(const std::string& id, const std::vector<std::string>& depends) {
  for (const auto& dep : depends) {
    if (dep == id)
      return fail(Error(ErrorCode::CircularReference, "Task " + id + " cannot depend on itself")
                      .with_fix("leave " + id + " out of its own depends")
                      .with_detail("field", "depends"));
    CT_TRY_ASSIGN(std::optional<Task> target, store_.get_task(dep));
    if (!target) {
      Error error = not_found(dep);
      error.message = "Dependency " + dep + " not found";
      return fail(std::move(error).with_detail("field", "depends"));
    }
  }
  if (id.empty()) return {};  // a new task has no dependents, so it cannot close a cycle
  // A cycle exists when `id` is reachable from one of its new dependencies. Breadth first, each
  // task read once; a task's way back is the entry it was first reached from (`from`), so no path
  // is copied per step — a chain of n steps costs n reads, not n² copies.
  struct Reached {
    std::string id;
    std::size_t from;  // index into `reached`; kNone for a new dependency
  };
  constexpr std::size_t kNone = static_cast<std::size_t>(-1);
  std::vector<Reached> reached;
  std::deque<Reached> queue;
  std::set<std::string> seen;
  for (const auto& dep : depends) queue.push_back({dep, kNone});
  while (!queue.empty()) {
    Reached current = std::move(queue.front());
    queue.pop_front();
    if (!seen.insert(current.id).second) continue;
    CT_TRY_ASSIGN(std::optional<Task> task, store_.get_task(current.id));
    if (!task) continue;
    reached.push_back(std::move(current));
    const std::size_t here = reached.size() - 1;
    for (const auto& next : task->depends) {
      if (next != id) {
        queue.push_back({next, here});
        continue;
      }
      std::vector<std::string> next_path{next};
      for (std::size_t at = here; at != kNone; at = reached[at].from) next_path.push_back(reached[at].id);
      next_path.push_back(id);
      std::reverse(next_path.begin(), next_path.end());
      std::string chain;
      for (const auto& step : next_path) chain += (chain.empty() ? "" : " → ") + step;
      // The new dependency that closes the loop is the chain's second step (the first is `id`):
      // the fix keeps the others.
      const std::string& closing = next_path[1];
      json::Value kept = json::Value::array();
      for (const auto& other : depends)
        if (other != closing) kept.push_back(other);
      return fail(Error(ErrorCode::CircularReference, "Dependency cycle: " + chain)
                      .with_fix(closing + " already waits on " + id + ": leave it out — " +
                                call("tasks.update", {{"id", id}, {"depends", std::move(kept)}, {"mode", "replace"}}))
                      .with_detail("field", "depends")
                      .with_detail("cycle", json::Value::array_of(next_path)));
    }
  }
  return {};
}

Result<std::vector<std::string>> TaskEngine::save(const Task& before, Task& after) {
  std::vector<std::string> changed;
  for (auto field : task_fields()) {
    json::Value old_value = task_field(before, field);
    json::Value new_value = task_field(after, field);
    if (old_value == new_value) continue;
    changed.emplace_back(field);
    record(after.id, std::string(field), std::move(old_value), std::move(new_value), before.version);
  }
  if (changed.empty()) return changed;
  after.version = before.version + 1;
  after.updated_at = now_;
  CT_TRY(store_.update_task(after));
  return changed;
}


Result<void> TaskEngine::reserve_ids(std::size_t count) {
  CT_TRY_ASSIGN(std::vector<std::string> ids, store_.allocate_task_ids(count));
  reserved_ids_.erase(reserved_ids_.begin(), reserved_ids_.begin() + static_cast<std::ptrdiff_t>(next_reserved_));
  next_reserved_ = 0;
  reserved_ids_.insert(reserved_ids_.end(), std::make_move_iterator(ids.begin()), std::make_move_iterator(ids.end()));
  return {};
}

Result<Task> TaskEngine::add(NewTask spec) {
  spec.title = std::string(trim(spec.title));
  CT_TRY(check_title_description(spec.title, spec.description));
  Task task;
  std::optional<Task> parent;
  // Its reads that need no other's answer, in the order made below (a server store sends them in
  // one round trip, under the writers' lock): the parent, its open children (when the siblings are
  // limited), the last position among its children. Reads between (the parent's own parents, the
  // dependencies) are made on their own.
  if (spec.parent.empty())
    store_.expect({{ExpectedRead::MaxPosition, spec.parent}});
  else if (config_.get_int("hierarchy.maxSiblings") > 0)
    store_.expect({{ExpectedRead::Task, spec.parent}, {ExpectedRead::OpenChildCount, spec.parent},
                   {ExpectedRead::MaxPosition, spec.parent}});
  else
    store_.expect({{ExpectedRead::Task, spec.parent}, {ExpectedRead::MaxPosition, spec.parent}});
  if (!spec.parent.empty()) {
    CT_TRY_ASSIGN(parent, store_.get_task(spec.parent));
    if (!parent) {
      Error error(ErrorCode::ParentNotFound, "Parent " + spec.parent + " not found");
      error.fix = find_fix(spec.parent);
      return fail(std::move(error).with_detail("parent", spec.parent));
    }
    if (spec.type == TaskType::Epic)
      return fail(Error(ErrorCode::Validation, "an epic cannot have a parent")
                      .with_fix("leave out type, or leave out parent").with_detail("field", "type"));
    CT_TRY(check_parent(*parent, 0, ""));
  } else if (spec.type == TaskType::Subtask) {
    return fail(Error(ErrorCode::Validation, "a subtask needs a parent")
                    .with_fix("pass parent: the task this subtask belongs to").with_detail("field", "parent"));
  }
  CT_TRY(check_depends("", spec.depends));
  TaskStatus status = spec.status.value_or(TaskStatus::Pending);
  if (status != TaskStatus::Pending && status != TaskStatus::Blocked)
    return fail(Error(ErrorCode::Validation, "a new task starts pending or blocked")
                    .with_fix("add it, then use tasks.start or tasks.complete").with_detail("field", "status"));
  if (!spec.blocked_by.empty()) status = TaskStatus::Blocked;

  // The last position before the id: a read (expected above) before the counter's update.
  CT_TRY_ASSIGN(std::int64_t last, store_.max_position(spec.parent));
  if (next_reserved_ < reserved_ids_.size()) {
    task.id = std::move(reserved_ids_[next_reserved_++]);
  } else {
    CT_TRY_ASSIGN(task.id, store_.allocate_task_id());
  }
  task.title = std::move(spec.title);
  task.description = std::move(spec.description);
  task.status = status;
  task.priority = spec.priority;
  task.type = infer_type(parent ? &*parent : nullptr, spec.type);
  task.parent = spec.parent;
  task.position = last + 1;
  task.depends = std::move(spec.depends);
  task.labels = lower_all(std::move(spec.labels));
  task.acceptance = std::move(spec.acceptance);
  task.files = std::move(spec.files);
  task.phase = std::move(spec.phase);
  task.size = spec.size;
  task.blocked_by = std::move(spec.blocked_by);
  for (auto& note : spec.notes) task.notes.push_back({note.at ? note.at : now_, std::move(note.text)});
  task.created_at = now_;
  task.updated_at = now_;
  task.version = 1;
  CT_TRY(store_.insert_task(task));
  record(task.id, "created", json::Value(), task_created(task));
  return task;
}

Result<void> TaskEngine::check_type_change(const Task& before, TaskType type) {
  const std::string& id = before.id;
  if (type == TaskType::Epic && !before.parent.empty())
    return fail(Error(ErrorCode::Validation, "an epic cannot have a parent")
                    .with_fix(call("tasks.promote", {{"id", id}}) + " first"));
  if (type == TaskType::Subtask) {
    if (before.parent.empty())
      return fail(Error(ErrorCode::Validation, "a subtask needs a parent")
                      .with_fix("give it a parent first: " + call("tasks.reparent", {{"id", id}, {"parent", "T001"}}))
                      .with_detail("field", "type"));
    CT_TRY_ASSIGN(std::vector<std::string> children, store_.children_of(id, false));
    if (!children.empty())
      return fail(Error(ErrorCode::InvalidParentType, "Task " + id + " has children; a subtask cannot")
                      .with_fix("move its children under another task first (tasks.reparent), or keep " + id +
                                " a task")
                      .with_detail("children", json::Value::array_of(children)));
  }
  return {};
}

Result<UpdateResult> TaskEngine::update(const std::string& id, const TaskPatch& patch,
                                        std::optional<std::int64_t> if_version) {
  CT_TRY_ASSIGN(Task before, get_live(id));
  CT_TRY(check_version(before, if_version));
  Task after = before;
  bool closed = !is_open(before.status);
  if (closed && (patch.title || patch.description || patch.status || patch.priority || patch.type ||
                 patch.depends || patch.acceptance || patch.blocked_by)) {
    Error error(ErrorCode::TaskCompleted, "Task " + id + " is " + std::string(to_string(before.status)) +
                                              "; only labels, files, phase, size and notes can change");
    error.fix = call("tasks.reopen", {{"id", id}});
    return fail(std::move(error).with_detail("id", id));
  }
  if (patch.title) after.title = std::string(trim(*patch.title));
  if (patch.description) after.description = *patch.description;
  if (patch.title || patch.description) CT_TRY(check_title_description(after.title, after.description));
  if (patch.priority) after.priority = *patch.priority;
  if (patch.type && *patch.type != before.type) {
    CT_TRY(check_type_change(before, *patch.type));
    after.type = *patch.type;
  }
  auto apply = [&](std::vector<std::string>& field, const std::optional<std::vector<std::string>>& items) {
    if (!items) return;
    if (patch.mode == ArrayMode::Replace) {
      field = *items;
    } else if (patch.mode == ArrayMode::Remove) {
      std::erase_if(field, [&](const std::string& item) {
        return std::find(items->begin(), items->end(), item) != items->end();
      });
    } else {
      append_unique(field, *items);
    }
  };
  apply(after.depends, patch.depends);
  if (patch.labels) apply(after.labels, lower_all(*patch.labels));
  if (!patch.labels_off.empty()) {
    std::vector<std::string> off = lower_all(patch.labels_off);
    std::erase_if(after.labels, [&](const std::string& label) { return std::find(off.begin(), off.end(), label) != off.end(); });
  }
  apply(after.acceptance, patch.acceptance);
  apply(after.files, patch.files);
  if (patch.depends && after.depends != before.depends) CT_TRY(check_depends(id, after.depends));
  if (patch.phase) after.phase = *patch.phase;
  if (patch.size) after.size = *patch.size;
  if (patch.blocked_by) {
    after.blocked_by = *patch.blocked_by;
    if (!after.blocked_by.empty() && !patch.status) after.status = TaskStatus::Blocked;
  }
  CT_TRY(apply_status(before, patch, after));
  if (before.status == TaskStatus::Active && after.status != TaskStatus::Active) CT_TRY(clear_focus_of(id));
  if (patch.note) after.notes.push_back({now_, *patch.note});
  CT_TRY_ASSIGN(std::vector<std::string> changed, save(before, after));
  return UpdateResult{std::move(after), std::move(changed)};
}

Result<CompleteResult> TaskEngine::complete(const std::string& id, const std::string& note,
                                            std::optional<std::int64_t> if_version) {
  CT_TRY_ASSIGN(Task before, get_live(id));
  CT_TRY(check_version(before, if_version));
  CompleteResult result;
  if (before.status == TaskStatus::Done) {
    result.task = std::move(before);
    result.already_done = true;
    return result;
  }
  CT_TRY(check_transition(before, TaskStatus::Done));
  Task after = before;
  after.status = TaskStatus::Done;
  after.completed_at = now_;
  after.blocked_by.clear();
  if (!note.empty()) after.notes.push_back({now_, note});
  for (const auto& dep : before.depends) {
    CT_TRY_ASSIGN(std::optional<Task> upstream, store_.get_task(dep));
    if (upstream && is_open(upstream->status))
      result.warnings.push_back("completed before its dependency " + dep + " (" +
                                std::string(to_string(upstream->status)) + ")");
  }
  CT_TRY_ASSIGN(std::vector<std::string> children, store_.children_of(id, false));
  std::vector<std::string> open_children;
  for (const auto& child_id : children) {
    CT_TRY_ASSIGN(std::optional<Task> child, store_.get_task(child_id));
    if (child && is_open(child->status)) open_children.push_back(child_id);
  }
  if (!open_children.empty()) {
    std::string list;
    for (const auto& c : open_children) list += (list.empty() ? "" : ", ") + c;
    result.warnings.push_back("children still open: " + list);
  }
  CT_TRY(clear_focus_of(id));
  CT_TRY(save(before, after));
  // Which dependents did this unblock? Those now pending with every dependency finished.
  CT_TRY_ASSIGN(std::vector<std::string> dependents, store_.dependents_of(id));
  for (const auto& dependent_id : dependents) {
    CT_TRY_ASSIGN(std::optional<Task> dependent, store_.get_task(dependent_id));
    if (!dependent || dependent->archived || dependent->status != TaskStatus::Pending) continue;
    bool ready = true;
    for (const auto& dep : dependent->depends) {
      if (dep == id) continue;
      CT_TRY_ASSIGN(std::optional<Task> other, store_.get_task(dep));
      if (other && is_open(other->status)) ready = false;
    }
    if (ready) result.unblocked.push_back(dependent_id);
  }
  result.task = std::move(after);
  return result;
}

Result<UpdateResult> TaskEngine::reopen(const std::string& id, const std::string& reason,
                                        std::optional<std::int64_t> if_version) {
  CT_TRY_ASSIGN(Task before, get_live(id));
  CT_TRY(check_version(before, if_version));
  if (before.status == TaskStatus::Pending) return UpdateResult{before, {}};
  if (before.status != TaskStatus::Done) {
    Error error(ErrorCode::Validation, "Task " + id + " is " + std::string(to_string(before.status)) +
                                           "; only done tasks can be reopened");
    if (before.status == TaskStatus::Cancelled)
      error.fix = call("tasks.restore", {{"id", id}});
    return fail(std::move(error).with_detail("id", id));
  }
  Task after = before;
  after.status = TaskStatus::Pending;
  after.completed_at.reset();
  if (!reason.empty()) after.notes.push_back({now_, "reopened: " + reason});
  CT_TRY_ASSIGN(std::vector<std::string> changed, save(before, after));
  return UpdateResult{std::move(after), std::move(changed)};
}

Result<UpdateResult> TaskEngine::reparent(const std::string& id, const std::string& parent_id,
                                          std::optional<std::int64_t> if_version) {
  CT_TRY_ASSIGN(Task before, get_live(id));
  CT_TRY(check_version(before, if_version));
  Task after = before;
  if (parent_id.empty()) {
    if (before.parent.empty()) return UpdateResult{before, {}};
    after.parent.clear();
    if (after.type == TaskType::Subtask) after.type = TaskType::Task;
  } else {
    if (parent_id == before.parent) return UpdateResult{before, {}};
    if (parent_id == id)
      return fail(Error(ErrorCode::CircularReference, "Task " + id + " cannot be its own parent")
                      .with_fix("pick another parent, or make it top-level: " + call("tasks.promote", {{"id", id}}))
                      .with_detail("field", "parent"));
    CT_TRY_ASSIGN(std::optional<Task> parent, store_.get_task(parent_id));
    if (!parent) {
      Error error(ErrorCode::ParentNotFound, "Parent " + parent_id + " not found");
      error.fix = find_fix(parent_id);
      return fail(std::move(error).with_detail("parent", parent_id));
    }
    // The new parent must not sit inside the subtree being moved.
    std::string walk = parent->parent;
    while (!walk.empty()) {
      if (walk == id)
        return fail(Error(ErrorCode::CircularReference, parent_id + " is inside the subtree of " + id +
                                                             "; moving " + id + " under it would make a loop")
                        .with_fix("move " + parent_id + " out of " + id + "'s subtree first, or choose a parent "
                                  "outside it: " + call("tasks.tree", {{"id", id}}))
                        .with_detail("parent", parent_id));
      CT_TRY_ASSIGN(std::optional<Task> up, store_.get_task(walk));
      walk = up ? up->parent : std::string();
    }
    CT_TRY_ASSIGN(int height, subtree_height(id));
    CT_TRY(check_parent(*parent, height, id));
    after.parent = parent_id;
    // The type follows the new place: under an epic a task, under a task a subtask (unless the
    // moved task has children of its own, which a subtask may not).
    after.type = infer_type(&*parent, std::nullopt);
    if (after.type == TaskType::Subtask && height > 0) after.type = TaskType::Task;
  }
  CT_TRY_ASSIGN(std::int64_t last, store_.max_position(after.parent));
  after.position = last + 1;
  CT_TRY_ASSIGN(std::vector<std::string> changed, save(before, after));
  return UpdateResult{std::move(after), std::move(changed)};
}

Result<UpdateResult> TaskEngine::reorder(const std::string& id, std::int64_t position,
                                         std::optional<std::int64_t> if_version) {
  CT_TRY_ASSIGN(Task before, get_live(id));
  CT_TRY(check_version(before, if_version));
  TaskQuery query;
  query.filter.parent = before.parent;
  query.sort = SortKey::Position;
  CT_TRY_ASSIGN(std::vector<Task> siblings, store_.list_tasks(query));
  std::erase_if(siblings, [&](const Task& t) { return t.id == id; });
  auto index = static_cast<std::size_t>(std::clamp<std::int64_t>(position, 1,
                                                                 static_cast<std::int64_t>(siblings.size()) + 1) - 1);
  Task after = before;
  after.position = static_cast<std::int64_t>(index) + 1;
  if (after.position == before.position) {
    // Already there, unless positions have gaps; renumbering below would not change this task.
    bool dense = true;
    for (std::size_t i = 0; i < siblings.size(); ++i) {
      std::int64_t expected = static_cast<std::int64_t>(i < index ? i + 1 : i + 2);
      dense = dense && siblings[i].position == expected;
    }
    if (dense) return UpdateResult{before, {}};
  }
  // Siblings are renumbered densely around the moved task. Their versions are not bumped: order
  // is a property of the parent's list, and an agent editing a sibling must not be refused for it.
  for (std::size_t i = 0; i < siblings.size(); ++i) {
    std::int64_t wanted = static_cast<std::int64_t>(i < index ? i + 1 : i + 2);
    if (siblings[i].position == wanted) continue;
    siblings[i].position = wanted;
    CT_TRY(store_.update_task(siblings[i]));
  }
  CT_TRY_ASSIGN(std::vector<std::string> changed, save(before, after));
  if (changed.empty()) {
    // Only siblings moved: still a change of this task's place; record it.
    record(id, "position", before.position, after.position, before.version);
    changed.push_back("position");
  }
  return UpdateResult{std::move(after), std::move(changed)};
}

Result<UpdateResult> TaskEngine::relate(const std::string& id, const std::string& target, const std::string& type,
                                        const std::string& reason) {
  CT_TRY_ASSIGN(Task before, get_live(id));
  if (target == id)
    return fail(Error(ErrorCode::Validation, "a task cannot relate to itself")
                    .with_fix("name another task as target")
                    .with_detail("field", "target"));
  CT_TRY_ASSIGN(Task other, get(target));
  for (const auto& rel : before.relates)
    if (rel.task_id == other.id && rel.type == type) return UpdateResult{before, {}};
  Task after = before;
  after.relates.push_back({other.id, type, reason});
  CT_TRY_ASSIGN(std::vector<std::string> changed, save(before, after));
  return UpdateResult{std::move(after), std::move(changed)};
}

Result<UpdateResult> TaskEngine::unrelate(const std::string& id, const std::string& target) {
  CT_TRY_ASSIGN(Task before, get_live(id));
  Task after = before;
  std::erase_if(after.relates, [&](const Relation& rel) { return rel.task_id == target; });
  if (after.relates.size() == before.relates.size()) return UpdateResult{std::move(before), {}};
  CT_TRY_ASSIGN(std::vector<std::string> changed, save(before, after));
  return UpdateResult{std::move(after), std::move(changed)};
}

}  // namespace ct
