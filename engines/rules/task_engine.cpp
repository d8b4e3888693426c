#include "engines/rules/task_engine.h"

#include <algorithm>
#include <deque>
#include <map>
#include <set>
#include <tuple>
#include <utility>

#include "core/text.h"
#include "engines/rules/claim_lease.h"
#include "engines/store/task_json.h"

namespace ct {
namespace {

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

bool is_open(TaskStatus s) { return s != TaskStatus::Done && s != TaskStatus::Cancelled; }

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

}  // namespace

const std::vector<std::string_view>& task_fields() {
  static const std::vector<std::string_view> kFields = {
      "title", "description", "status", "priority", "type", "parent", "position", "depends",
      "labels", "acceptance", "files", "notes", "relates", "phase", "size", "blockedBy",
      "completedAt", "cancelledAt", "cancellationReason", "archived", "archivedAt", "archiveReason"};
  return kFields;
}

void TaskEngine::record(const std::string& id, std::string field, json::Value before, json::Value after) {
  if (sink_) sink_(FieldChange{id, std::move(field), std::move(before), std::move(after)});
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
    TaskFilter filter;
    filter.parent = parent.id;
    filter.statuses = {TaskStatus::Pending, TaskStatus::Active, TaskStatus::Blocked};
    CT_TRY_ASSIGN(std::int64_t siblings, store_.count_tasks(filter));
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
  // A cycle exists when `id` is reachable from one of its new dependencies.
  std::deque<std::pair<std::string, std::vector<std::string>>> queue;
  std::set<std::string> seen;
  for (const auto& dep : depends) queue.push_back({dep, {id, dep}});
  while (!queue.empty()) {
    auto [current, path] = std::move(queue.front());
    queue.pop_front();
    if (!seen.insert(current).second) continue;
    CT_TRY_ASSIGN(std::optional<Task> task, store_.get_task(current));
    if (!task) continue;
    for (const auto& next : task->depends) {
      auto next_path = path;
      next_path.push_back(next);
      if (next == id) {
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
      queue.push_back({next, std::move(next_path)});
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
    record(after.id, std::string(field), std::move(old_value), std::move(new_value));
  }
  if (changed.empty()) return changed;
  after.version = before.version + 1;
  after.updated_at = now_;
  CT_TRY(store_.update_task(after));
  return changed;
}

Result<Task> TaskEngine::add(NewTask spec) {
  spec.title = std::string(trim(spec.title));
  CT_TRY(check_title_description(spec.title, spec.description));
  Task task;
  std::optional<Task> parent;
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

  CT_TRY_ASSIGN(task.id, store_.allocate_task_id());
  task.title = std::move(spec.title);
  task.description = std::move(spec.description);
  task.status = status;
  task.priority = spec.priority;
  task.type = infer_type(parent ? &*parent : nullptr, spec.type);
  task.parent = spec.parent;
  CT_TRY_ASSIGN(std::int64_t last, store_.max_position(spec.parent));
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

Result<void> TaskEngine::import_kept(std::vector<Task> tasks) {
  std::map<std::string, std::size_t> at;  // id → its place in `tasks`
  std::vector<std::string> ids;
  for (std::size_t i = 0; i < tasks.size(); ++i) {
    const std::string& id = tasks[i].id;
    if (!parse_task_id(id) || format_task_id(*parse_task_id(id)) != id)
      return fail(Error(ErrorCode::Validation, "'" + id + "' is not a task id (T followed by at least 3 digits)")
                      .with_detail("id", id));
    if (!at.emplace(id, i).second)
      return fail(Error(ErrorCode::Validation, "task " + id + " is given twice").with_detail("id", id));
    ids.push_back(id);
  }
  // Every id must be free here: the tasks keep theirs, and their references name them.
  std::vector<std::string> taken;
  constexpr std::size_t kAsked = 500;  // ids looked up at once
  for (std::size_t from = 0; from < ids.size(); from += kAsked) {
    std::vector<std::string> chunk(ids.begin() + static_cast<std::ptrdiff_t>(from),
                                   ids.begin() + static_cast<std::ptrdiff_t>(std::min(ids.size(), from + kAsked)));
    CT_TRY_ASSIGN(std::vector<Task> found, store_.get_tasks(chunk));
    for (const auto& task : found) taken.push_back(task.id);
  }
  if (!taken.empty()) {
    std::ranges::sort(taken, {}, [](const std::string& id) { return *parse_task_id(id); });
    constexpr std::size_t kNamed = 20;
    std::string named;
    for (std::size_t i = 0; i < taken.size() && i < kNamed; ++i) named += (i ? ", " : "") + taken[i];
    if (taken.size() > kNamed) named += " and " + std::to_string(taken.size() - kNamed) + " more";
    return fail(Error(ErrorCode::Validation, std::to_string(taken.size()) + " of the " + std::to_string(ids.size()) +
                                                  " tasks to import have ids this store holds already: " + named +
                                                  "; imported tasks keep their ids and are never renumbered")
                    .with_fix("import into a store that holds none of these ids (a new project: ct init in another "
                              "folder), or take those tasks out of this one first (" +
                              call("tasks.delete", {{"id", taken.front()}, {"hard", true}}) + ")")
                    .with_detail("taken", json::Value::array_of(taken))
                    .with_detail("count", static_cast<std::int64_t>(taken.size())));
  }
  // The engine's refusals name the task being placed.
  auto about = [](const Task& task, Error error) {
    error.message = task.id + ": " + error.message;
    return fail(std::move(error).with_detail("id", task.id));
  };
  for (const auto& task : tasks)
    for (const std::optional<TimeMs>& time : {std::optional<TimeMs>(task.created_at), std::optional<TimeMs>(task.updated_at),
                                              task.completed_at, task.cancelled_at, task.archived_at})
      if (time && *time > now_)
        return about(task, Error(ErrorCode::Validation, "a time lies in the future (" + format_iso8601(*time) + ")"));

  // Parents first, in the order given: each pass places the tasks whose parent is in place.
  std::vector<std::vector<std::string>> depends(tasks.size());
  std::vector<std::vector<Relation>> relates(tasks.size());
  std::vector<std::size_t> order;
  std::vector<bool> placed(tasks.size(), false);
  while (order.size() < tasks.size()) {
    const std::size_t before = order.size();
    for (std::size_t i = 0; i < tasks.size(); ++i) {
      if (placed[i]) continue;
      Task& task = tasks[i];
      auto in_list = at.find(task.parent);
      if (!task.parent.empty() && in_list != at.end() && !placed[in_list->second]) continue;
      task.title = std::string(trim(task.title));
      if (auto checked = check_title_description(task.title, task.description); !checked)
        return about(task, std::move(checked.error()));
      std::optional<Task> parent;
      if (!task.parent.empty()) {
        CT_TRY_ASSIGN(parent, store_.get_task(task.parent));
        if (!parent)
          return about(task, Error(ErrorCode::ParentNotFound, "Parent " + task.parent + " not found")
                                 .with_fix(find_fix(task.parent)).with_detail("parent", task.parent));
        if (task.type == TaskType::Epic)
          return about(task, Error(ErrorCode::Validation, "an epic cannot have a parent").with_detail("field", "type"));
        if (auto checked = check_parent(*parent, 0, task.id, task.archived, is_open(task.status)); !checked)
          return about(task, std::move(checked.error()));
      } else if (task.type == TaskType::Subtask) {
        return about(task, Error(ErrorCode::Validation, "a subtask needs a parent").with_detail("field", "parent"));
      }
      CT_TRY_ASSIGN(std::int64_t last, store_.max_position(task.parent));
      task.position = last + 1;
      task.labels = lower_all(std::move(task.labels));
      task.version = 1;
      depends[i] = std::exchange(task.depends, {});
      relates[i] = std::exchange(task.relates, {});
      CT_TRY(store_.insert_task(task));
      placed[i] = true;
      order.push_back(i);
    }
    if (order.size() == before) {
      std::string loop;
      for (std::size_t i = 0; i < tasks.size(); ++i)
        if (!placed[i]) loop += (loop.empty() ? "" : ", ") + tasks[i].id;
      return fail(Error(ErrorCode::CircularReference, "the parent links of " + loop + " form a loop")
                      .with_fix("give one task of the loop no parent, then import again"));
    }
  }

  // Dependencies and links, now that every task is in place: they name existing tasks, and the
  // dependencies among the imported tasks form no cycle (tasks here cannot depend on them yet).
  std::vector<std::size_t> waiting_on(tasks.size(), 0);      // unfinished edges inside the import
  std::vector<std::vector<std::size_t>> dependents(tasks.size());
  for (std::size_t i = 0; i < tasks.size(); ++i) {
    for (const auto& dep : depends[i]) {
      if (dep == tasks[i].id)
        return about(tasks[i], Error(ErrorCode::CircularReference, "it depends on itself").with_detail("field", "depends"));
      if (auto inside = at.find(dep); inside != at.end()) {
        ++waiting_on[i];
        dependents[inside->second].push_back(i);
        continue;
      }
      CT_TRY_ASSIGN(std::optional<Task> target, store_.get_task(dep));
      if (!target) {
        Error error = not_found(dep);
        error.message = "Dependency " + dep + " not found";
        return about(tasks[i], std::move(error).with_detail("field", "depends"));
      }
    }
    for (const auto& link : relates[i]) {
      if (link.task_id == tasks[i].id)
        return about(tasks[i], Error(ErrorCode::Validation, "a task cannot relate to itself").with_detail("field", "relates"));
      if (at.contains(link.task_id)) continue;
      CT_TRY_ASSIGN(std::optional<Task> target, store_.get_task(link.task_id));
      if (!target) return about(tasks[i], not_found(link.task_id).with_detail("field", "relates"));
    }
  }
  std::vector<std::size_t> ready;
  for (std::size_t i = 0; i < tasks.size(); ++i)
    if (waiting_on[i] == 0) ready.push_back(i);
  std::size_t finished = 0;
  while (!ready.empty()) {
    std::size_t i = ready.back();
    ready.pop_back();
    ++finished;
    for (std::size_t next : dependents[i])
      if (--waiting_on[next] == 0) ready.push_back(next);
  }
  if (finished < tasks.size()) {
    std::vector<std::string> caught;
    for (std::size_t i = 0; i < tasks.size(); ++i)
      if (waiting_on[i] > 0) caught.push_back(tasks[i].id);
    return fail(Error(ErrorCode::CircularReference, "the dependencies of " + join(caught, ", ") +
                                                        " form a cycle (or wait on one)")
                    .with_fix("leave one dependency of the cycle out, then import again")
                    .with_detail("ids", json::Value::array_of(caught)));
  }
  for (std::size_t i : order) {
    Task& task = tasks[i];
    if (!depends[i].empty() || !relates[i].empty()) {
      task.depends = std::move(depends[i]);
      task.relates = std::move(relates[i]);
      CT_TRY(store_.update_task(task));
    }
    record(task.id, "created", json::Value(), task_created(task));
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
    if (*patch.type == TaskType::Epic && !before.parent.empty())
      return fail(Error(ErrorCode::Validation, "an epic cannot have a parent")
                      .with_fix(call("tasks.promote", {{"id", id}}) + " first"));
    if (*patch.type == TaskType::Subtask) {
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
  if (!children.empty()) {
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
  }
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
    record(id, "deleted", task_full(task), json::Value());
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
    record(id, "position", before.position, after.position);
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

Result<void> TaskEngine::clear_focus_of(const std::string& id) {
  // Whichever session holds the task loses it: a finished task is nobody's claim any more.
  CT_TRY_ASSIGN(std::optional<Claim> claim, store_.claim_on(id));
  if (claim) {
    CT_TRY(store_.set_focus(claim->session, std::nullopt));
    record(id, "focus", id, json::Value());
  }
  return {};
}

Result<std::optional<Claim>> TaskEngine::reclaim(const std::string& id) {
  CT_TRY_ASSIGN(Task before, get_live(id));
  CT_TRY_ASSIGN(std::optional<Claim> claim, store_.claim_on(id));
  if (!claim) return claim;
  CT_TRY(store_.set_focus(claim->session, std::nullopt));
  record(id, "holder", claim->session, json::Value());
  if (before.status == TaskStatus::Active) {
    Task after = before;
    after.status = TaskStatus::Pending;
    CT_TRY(save(before, after));
  }
  return claim;
}

Result<StartResult> TaskEngine::start(const std::string& id) {
  CT_TRY_ASSIGN(Task before, get_live(id));
  StartResult result;
  if (!is_open(before.status)) {
    Error error(ErrorCode::TaskCompleted, "Task " + id + " is " + std::string(to_string(before.status)));
    error.fix = before.status == TaskStatus::Done
                    ? call("tasks.reopen", {{"id", id}})
                    : call("tasks.restore", {{"id", id}});
    return fail(std::move(error).with_detail("id", id));
  }
  std::vector<std::string> waiting;
  for (const auto& dep : before.depends) {
    CT_TRY_ASSIGN(std::optional<Task> upstream, store_.get_task(dep));
    if (upstream && is_open(upstream->status)) waiting.push_back(dep);
  }
  if (!waiting.empty()) {
    Error error(ErrorCode::Validation, "Task " + id + " waits on unfinished dependencies");
    error.fix = call("tasks.blockers", {{"id", id}});
    return fail(std::move(error).with_alternative("Pick a ready task", "tasks.next")
                    .with_detail("waitingOn", json::Value::array_of(waiting)));
  }
  // The atomic claim: inside this write transaction no other writer runs, so the holder read
  // here is still the holder when the focus row is written (and focus_task is unique anyway).
  CT_TRY_ASSIGN(std::optional<Claim> held, store_.claim_on(id));
  if (held && held->session != session_) {
    if (!lapsed(*held, config_, now_)) {
      const std::string& holder = held->session;
      std::string who = holder.empty() ? std::string("work outside any session") : "session " + holder;
      // When the holder shows no more life, the task is free: a person may free it sooner.
      const std::optional<TimeMs> end = lease_end(*held, config_);
      Error error(ErrorCode::TaskClaimed, "Task " + id + " is already claimed by " + who +
                                              (end ? " until " + format_iso8601(*end) : std::string()));
      error.fix = holder.empty() ? call("tasks.stop", {}) + " (without a session)" : call("session.show", {{"id", holder}});
      error = std::move(error).with_alternative("Pick another ready task", "tasks.next").with_detail("id", id)
          .with_detail("holder", holder);
      // The claim lapses when its lease ends: the same call may succeed then.
      if (end)
        error = std::move(error)
                    .with_detail("leaseEnds", format_iso8601(*end))
                    .with_alternative("A person frees it at once", "tasks.reclaim")
                    .retry_after(std::max<std::int64_t>(1, (*end - now_ + 999) / 1000));
      return fail(std::move(error));
    }
    // The lease ran out: the holder is gone or silent, and the task is taken over.
    CT_TRY(store_.set_focus(held->session, std::nullopt));
    record(id, "holder", held->session, session_);
    result.taken_over = std::move(held);
  }
  CT_TRY_ASSIGN(std::optional<std::string> focus, store_.get_focus(session_));
  if (focus && *focus == id && before.status == TaskStatus::Active) {
    result.task = std::move(before);
    result.no_change = true;
    return result;
  }
  if (focus && *focus != id) {
    CT_TRY_ASSIGN(std::optional<Task> previous, store_.get_task(*focus));
    if (previous && previous->status == TaskStatus::Active && !previous->archived) {
      Task paused = *previous;
      paused.status = TaskStatus::Pending;
      CT_TRY(save(*previous, paused));
    }
    result.previous = *focus;
  }
  CT_TRY(store_.set_focus(session_, id));
  record(id, "focus", focus ? json::Value(*focus) : json::Value(), id);
  Task after = before;
  after.status = TaskStatus::Active;
  after.blocked_by.clear();
  CT_TRY(save(before, after));
  result.task = std::move(after);
  return result;
}

Result<std::optional<Task>> TaskEngine::stop() {
  CT_TRY_ASSIGN(std::optional<std::string> focus, store_.get_focus(session_));
  if (!focus) return std::optional<Task>();
  CT_TRY(store_.set_focus(session_, std::nullopt));
  record(*focus, "focus", *focus, json::Value());
  CT_TRY_ASSIGN(std::optional<Task> task, store_.get_task(*focus));
  if (!task) return std::optional<Task>();
  if (task->status == TaskStatus::Active && !task->archived) {
    Task after = *task;
    after.status = TaskStatus::Pending;
    CT_TRY(save(*task, after));
    return std::optional<Task>(std::move(after));
  }
  return task;
}

Result<std::optional<Task>> TaskEngine::current() {
  CT_TRY_ASSIGN(std::optional<std::string> focus, store_.get_focus(session_));
  if (!focus) return std::optional<Task>();
  return store_.get_task(*focus);
}

namespace {
// The change fields that undo can put back: a task's own fields and the records of its
// creation, deletion and focus.
bool undoable_field(std::string_view field) {
  if (field == "created" || field == "deleted" || field == "focus") return true;
  return std::ranges::find(task_fields(), field) != task_fields().end();
}
}  // namespace

Result<std::vector<UndoConflict>> TaskEngine::undo_conflicts(const AuditEntry& row) {
  std::vector<UndoConflict> conflicts;
  std::set<std::tuple<std::int64_t, std::string, std::string>> seen;
  std::set<std::pair<std::string, std::string>> asked;
  for (const auto& change : row.changes) {
    // A focus is put back only when it is still where the row left it (checked while undoing).
    if (change.field == "focus" || !asked.insert({change.task_id, change.field}).second) continue;
    AuditQuery query;
    query.task_id = change.task_id;
    // Anything done to a task the row created is lost with it; otherwise the same field counts.
    if (change.field != "created") query.field = change.field;
    query.after_seq = row.seq;
    query.ascending = true;
    query.limit = 20;
    CT_TRY_ASSIGN(std::vector<AuditEntry> later, audit_.read_audit(query));
    for (const auto& entry : later)
      for (const auto& touched : entry.changes)
        if (touched.task_id == change.task_id && touched.field != "focus" &&
            seen.insert({entry.seq, touched.task_id, touched.field}).second)
          conflicts.push_back({entry.seq, entry.operation, touched.task_id, touched.field});
  }
  std::ranges::sort(conflicts, {}, &UndoConflict::seq);
  return conflicts;
}

Result<std::vector<std::string>> TaskEngine::undo(const AuditEntry& row, std::vector<std::string>& warnings) {
  std::vector<std::string> touched;
  std::vector<std::string> created;
  for (const auto& change : row.changes) {
    if (!undoable_field(change.field))
      return fail(Error(ErrorCode::Validation, "seq " + std::to_string(row.seq) + " (" + row.operation + ") changed " +
                                                   change.field + ", which undo cannot put back")
                      .with_fix("undo reverts task changes; revert this one with the operation that made it")
                      .with_detail("seq", row.seq));
    if (change.field == "created") created.push_back(change.task_id);
  }
  auto is_created = [&](const std::string& id) { return std::ranges::find(created, id) != created.end(); };

  // Deleted tasks come back first (parents before the children deleted with them), so that the
  // dependency lists restored below point at tasks that exist.
  for (auto it = row.changes.rbegin(); it != row.changes.rend(); ++it) {
    if (it->field != "deleted") continue;
    CT_TRY_ASSIGN(Task task, task_from_full(it->before));
    CT_TRY_ASSIGN(std::optional<Task> existing, store_.get_task(task.id));
    if (existing)
      return fail(Error(ErrorCode::Validation, "Task " + task.id + " exists again; its deletion cannot be undone")
                      .with_detail("id", task.id));
    if (!task.parent.empty()) {
      CT_TRY_ASSIGN(std::optional<Task> parent, store_.get_task(task.parent));
      if (!parent) {
        warnings.push_back(task.id + ": its parent " + task.parent + " is gone; restored at the top level");
        task.parent.clear();
      }
    }
    std::vector<std::string> depends;
    for (auto& dep : task.depends) {
      CT_TRY_ASSIGN(std::optional<Task> upstream, store_.get_task(dep));
      if (upstream) {
        depends.push_back(std::move(dep));
      } else {
        warnings.push_back(task.id + ": dependency " + dep + " is gone; left out");
      }
    }
    task.depends = std::move(depends);
    task.version += 1;
    task.updated_at = now_;
    CT_TRY(store_.insert_task(task));
    record(task.id, "created", json::Value(), task_created(task));
    touched.push_back(task.id);
  }

  // Fields go back to the value they had before the row (the first 'before' of each field).
  std::vector<std::string> order;
  std::map<std::string, std::vector<const FieldChange*>> fields;
  for (const auto& change : row.changes) {
    if (change.field == "created" || change.field == "deleted" || change.field == "focus" || is_created(change.task_id))
      continue;
    auto& list = fields[change.task_id];
    if (list.empty()) order.push_back(change.task_id);
    if (std::ranges::none_of(list, [&](const FieldChange* seen) { return seen->field == change.field; }))
      list.push_back(&change);
  }
  for (const auto& id : order) {
    CT_TRY_ASSIGN(Task before, get(id));
    Task after = before;
    for (const FieldChange* change : fields[id]) CT_TRY(set_task_field(after, change->field, change->before));
    if (after.parent != before.parent && !after.parent.empty()) {
      CT_TRY_ASSIGN(std::optional<Task> parent, store_.get_task(after.parent));
      if (!parent)
        return fail(Error(ErrorCode::ParentNotFound, "Task " + id + " cannot go back under " + after.parent +
                                                         ": it no longer exists")
                        .with_detail("parent", after.parent));
    }
    if (after.depends != before.depends) CT_TRY(check_depends(id, after.depends));
    CT_TRY(save(before, after));
    append_unique(touched, {id});
  }

  // The focus moves back only when it is still where the row left it.
  for (const auto& change : row.changes) {
    if (change.field != "focus") continue;
    CT_TRY_ASSIGN(std::optional<std::string> focus, store_.get_focus(row.session));
    json::Value now_focus = focus ? json::Value(*focus) : json::Value();
    if (now_focus != change.after) {
      warnings.push_back("the focus has moved since seq " + std::to_string(row.seq) + "; left on " +
                         (focus ? *focus : std::string("nothing")));
      continue;
    }
    std::optional<std::string> target;
    if (change.before.is_string()) target = change.before.as_string();
    if (target) {
      CT_TRY_ASSIGN(std::optional<Claim> holder, store_.claim_on(*target));
      CT_TRY_ASSIGN(std::optional<Task> task, store_.get_task(*target));
      if ((holder && holder->session != row.session) || !task) {
        warnings.push_back(*target + " is " + (task ? "claimed by another session" : "gone") +
                           "; the focus is left clear");
        target.reset();
      }
    }
    CT_TRY(store_.set_focus(row.session, target));
    record(change.task_id, "focus", std::move(now_focus), target ? json::Value(*target) : json::Value());
  }

  // Created tasks go last, newest first (children before their parents).
  for (auto it = created.rbegin(); it != created.rend(); ++it) {
    CT_TRY_ASSIGN(std::optional<Task> task, store_.get_task(*it));
    if (!task) continue;
    CT_TRY_ASSIGN(std::vector<std::string> children, store_.children_of(*it, /*include_archived=*/true));
    CT_TRY_ASSIGN(std::vector<std::string> dependents, store_.dependents_of(*it));
    std::vector<std::string> outside;
    for (const auto& other : children) if (!is_created(other)) outside.push_back(other);
    for (const auto& other : dependents) if (!is_created(other)) append_unique(outside, {other});
    if (!outside.empty())
      return fail(Error(ErrorCode::HasDependents, "Task " + *it + " cannot be taken back: " +
                                                     json::Value::array_of(outside).dump() + " came to need it since")
                      .with_fix("move or unlink those tasks first, then undo again")
                      .with_detail("id", *it).with_detail("dependents", json::Value::array_of(outside)));
    // Its children in the row went first; the dependents left are the row's too.
    CT_TRY(remove(*it, DeleteOptions{.hard = true, .force = true}, std::nullopt));
    append_unique(touched, {*it});
  }
  return touched;
}

Result<std::vector<ScoredTask>> TaskEngine::next(int count, const std::set<std::string>* within) {
  ReadyScoring scoring;
  for (Priority p : {Priority::Critical, Priority::High, Priority::Medium, Priority::Low})
    scoring.priority_points[static_cast<std::size_t>(priority_rank(p))] = priority_score(p);
  scoring.phase = config_.get_string("project.currentPhase");
  scoring.phase_bonus = 30;
  // Leaf bonus: work that can be done directly beats a parent whose children are still open.
  scoring.leaf_bonus = 10;
  scoring.limit = count;
  scoring.within = within;
  // Active tasks whose claim has lapsed are offered again; the stores look for them only when
  // there is one.
  const std::optional<TimeMs> cutoff = lapsed_before(config_, now_);
  CT_TRY_ASSIGN(auto lapsed_tasks, lapsed_claims(store_, cutoff));
  if (!lapsed_tasks.empty()) scoring.lapsed_before = cutoff;
  CT_TRY_ASSIGN(std::vector<ReadyCandidate> best, store_.top_ready(scoring));
  std::vector<std::string> ids;
  for (const auto& candidate : best) ids.push_back(candidate.id);
  CT_TRY_ASSIGN(std::vector<Task> tasks, store_.get_tasks(ids));
  std::vector<ScoredTask> scored;
  for (std::size_t i = 0; i < best.size() && i < tasks.size(); ++i) {
    ScoredTask entry;
    entry.task = std::move(tasks[i]);
    entry.score = best[i].score;
    entry.reasons.push_back("priority " + std::string(to_string(entry.task.priority)) + " +" +
                            std::to_string(priority_score(entry.task.priority)));
    if (best[i].in_phase) entry.reasons.push_back("current phase +" + std::to_string(scoring.phase_bonus));
    if (best[i].leaf) entry.reasons.push_back("leaf +" + std::to_string(scoring.leaf_bonus));
    scored.push_back(std::move(entry));
  }
  return scored;
}

Result<std::vector<DepNode>> TaskEngine::upstream(const Task& task) {
  std::vector<DepNode> out;
  std::set<std::string> seen{task.id};
  std::deque<std::pair<std::string, int>> queue;
  for (const auto& dep : task.depends) queue.push_back({dep, 1});
  while (!queue.empty()) {
    auto [id, distance] = queue.front();
    queue.pop_front();
    if (!seen.insert(id).second) continue;
    CT_TRY_ASSIGN(std::optional<Task> node, store_.get_task(id));
    if (!node) continue;
    out.push_back({node->id, node->title, node->status, distance});
    for (const auto& dep : node->depends) queue.push_back({dep, distance + 1});
  }
  return out;
}

Result<std::vector<DepNode>> TaskEngine::downstream(const Task& task) {
  std::vector<DepNode> out;
  std::set<std::string> seen{task.id};
  std::deque<std::pair<std::string, int>> queue{{task.id, 0}};
  while (!queue.empty()) {
    auto [id, distance] = queue.front();
    queue.pop_front();
    CT_TRY_ASSIGN(std::vector<std::string> dependents, store_.dependents_of(id));
    for (const auto& dependent : dependents) {
      if (!seen.insert(dependent).second) continue;
      CT_TRY_ASSIGN(std::optional<Task> node, store_.get_task(dependent));
      if (!node) continue;
      out.push_back({node->id, node->title, node->status, distance + 1});
      queue.push_back({dependent, distance + 1});
    }
  }
  return out;
}

Result<std::vector<Blocker>> TaskEngine::blockers(const Task& task) {
  std::vector<Blocker> out;
  if (task.status == TaskStatus::Blocked || !task.blocked_by.empty())
    out.push_back({"", "", task.status, "manual", task.blocked_by});
  for (const auto& dep : task.depends) {
    CT_TRY_ASSIGN(std::optional<Task> upstream, store_.get_task(dep));
    if (upstream && is_open(upstream->status))
      out.push_back({upstream->id, upstream->title, upstream->status, "dependency", ""});
  }
  if (!task.parent.empty()) {
    CT_TRY_ASSIGN(std::optional<Task> parent, store_.get_task(task.parent));
    if (parent && parent->status == TaskStatus::Blocked)
      out.push_back({parent->id, parent->title, parent->status, "parent", parent->blocked_by});
  }
  return out;
}

}  // namespace ct
