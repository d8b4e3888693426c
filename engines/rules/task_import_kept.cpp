// TaskEngine::import_kept (engines/rules/task_engine.h): another store's tasks with their own ids
// (tasks.import of the original CLEO's store), all or nothing. The ids are checked to be task ids,
// given once and free here; no time lies in the future; each task is placed as add() places one,
// parents first; then its dependencies and links, which must name tasks that exist and form no
// cycle, are written, and each task is recorded as created.
#include <algorithm>
#include <map>
#include <utility>

#include "core/text.h"
#include "engines/rules/task_engine.h"
#include "engines/rules/task_checks.h"
#include "engines/store/task_json.h"

namespace ct {
namespace {

using task_checks::not_found;

/// Where each id is in the tasks to import.
using IdIndex = std::map<std::string, std::size_t>;

/// Each id a task id in its one spelling, given once.
Result<IdIndex> index_ids(const std::vector<Task>& tasks) {
  IdIndex at;
  for (std::size_t i = 0; i < tasks.size(); ++i) {
    const std::string& id = tasks[i].id;
    if (!parse_task_id(id) || format_task_id(*parse_task_id(id)) != id)
      return fail(Error(ErrorCode::Validation, "'" + id + "' is not a task id (T followed by at least 3 digits)")
                      .with_detail("id", id));
    if (!at.emplace(id, i).second)
      return fail(Error(ErrorCode::Validation, "task " + id + " is given twice").with_detail("id", id));
  }
  return at;
}

/// Every id must be free here: the tasks keep theirs, and their references name them.
Result<void> check_ids_free(TaskStore& store, const std::vector<Task>& tasks) {
  std::vector<std::string> taken;
  constexpr std::size_t kAsked = 500;  // ids looked up at once
  for (std::size_t from = 0; from < tasks.size(); from += kAsked) {
    std::vector<std::string> chunk;
    for (std::size_t i = from; i < std::min(tasks.size(), from + kAsked); ++i) chunk.push_back(tasks[i].id);
    CT_TRY_ASSIGN(std::vector<Task> found, store.get_tasks(chunk));
    for (const auto& task : found) taken.push_back(task.id);
  }
  if (taken.empty()) return {};
  std::ranges::sort(taken, {}, [](const std::string& id) { return *parse_task_id(id); });
  constexpr std::size_t kNamed = 20;
  std::string named;
  for (std::size_t i = 0; i < taken.size() && i < kNamed; ++i) named += (i ? ", " : "") + taken[i];
  if (taken.size() > kNamed) named += " and " + std::to_string(taken.size() - kNamed) + " more";
  return fail(Error(ErrorCode::Validation, std::to_string(taken.size()) + " of the " + std::to_string(tasks.size()) +
                                                " tasks to import have ids this store holds already: " + named +
                                                "; imported tasks keep their ids and are never renumbered")
                  .with_fix("import into a store that holds none of these ids (a new project: ct init in another "
                            "folder), or take those tasks out of this one first (" +
                            call("tasks.delete", {{"id", taken.front()}, {"hard", true}}) + ")")
                  .with_detail("taken", json::Value::array_of(taken))
                  .with_detail("count", static_cast<std::int64_t>(taken.size())));
}

/// The engine's refusals name the task being placed.
std::unexpected<Error> about(const Task& task, Error error) {
  error.message = task.id + ": " + error.message;
  return fail(std::move(error).with_detail("id", task.id));
}

Result<void> check_times(const std::vector<Task>& tasks, TimeMs now) {
  for (const auto& task : tasks)
    for (const std::optional<TimeMs>& time : {std::optional<TimeMs>(task.created_at), std::optional<TimeMs>(task.updated_at),
                                              task.completed_at, task.cancelled_at, task.archived_at})
      if (time && *time > now)
        return about(task, Error(ErrorCode::Validation, "a time lies in the future (" + format_iso8601(*time) + ")"));
  return {};
}

/// The tasks no pass could place: their parent links form a loop.
Error parent_loop(const std::vector<Task>& tasks, const std::vector<bool>& placed) {
  std::string loop;
  for (std::size_t i = 0; i < tasks.size(); ++i)
    if (!placed[i]) loop += (loop.empty() ? "" : ", ") + tasks[i].id;
  return Error(ErrorCode::CircularReference, "the parent links of " + loop + " form a loop")
      .with_fix("give one task of the loop no parent, then import again");
}

/// Each dependency and link names a task of the import or of this store, never the task itself.
Result<void> check_link_targets(TaskStore& store, const std::vector<Task>& tasks, const IdIndex& at,
                                const std::vector<std::vector<std::string>>& depends,
                                const std::vector<std::vector<Relation>>& relates) {
  for (std::size_t i = 0; i < tasks.size(); ++i) {
    for (const auto& dep : depends[i]) {
      if (dep == tasks[i].id)
        return about(tasks[i], Error(ErrorCode::CircularReference, "it depends on itself").with_detail("field", "depends"));
      if (at.contains(dep)) continue;
      CT_TRY_ASSIGN(std::optional<Task> target, store.get_task(dep));
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
      CT_TRY_ASSIGN(std::optional<Task> target, store.get_task(link.task_id));
      if (!target) return about(tasks[i], not_found(link.task_id).with_detail("field", "relates"));
    }
  }
  return {};
}

/// The dependencies among the imported tasks form no cycle (tasks here cannot depend on them yet):
/// every task is reached by taking away those that wait on nothing left.
Result<void> check_no_cycle(const std::vector<Task>& tasks, const IdIndex& at,
                            const std::vector<std::vector<std::string>>& depends) {
  std::vector<std::size_t> waiting_on(tasks.size(), 0);      // unfinished edges inside the import
  std::vector<std::vector<std::size_t>> dependents(tasks.size());
  for (std::size_t i = 0; i < tasks.size(); ++i)
    for (const auto& dep : depends[i])
      if (auto inside = at.find(dep); inside != at.end()) {
        ++waiting_on[i];
        dependents[inside->second].push_back(i);
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
  if (finished == tasks.size()) return {};
  std::vector<std::string> caught;
  for (std::size_t i = 0; i < tasks.size(); ++i)
    if (waiting_on[i] > 0) caught.push_back(tasks[i].id);
  return fail(Error(ErrorCode::CircularReference, "the dependencies of " + join(caught, ", ") +
                                                      " form a cycle (or wait on one)")
                  .with_fix("leave one dependency of the cycle out, then import again")
                  .with_detail("ids", json::Value::array_of(caught)));
}

}  // namespace

Result<void> TaskEngine::place_kept(Task& task) {
  task.title = std::string(trim(task.title));
  if (auto checked = task_checks::check_title_description(task.title, task.description); !checked)
    return about(task, std::move(checked.error()));
  if (!task.parent.empty()) {
    CT_TRY_ASSIGN(std::optional<Task> parent, store_.get_task(task.parent));
    if (!parent)
      return about(task, Error(ErrorCode::ParentNotFound, "Parent " + task.parent + " not found")
                             .with_fix(task_checks::find_fix(task.parent)).with_detail("parent", task.parent));
    if (task.type == TaskType::Epic)
      return about(task, Error(ErrorCode::Validation, "an epic cannot have a parent").with_detail("field", "type"));
    if (auto checked = check_parent(*parent, 0, task.id, task.archived, task_checks::is_open(task.status)); !checked)
      return about(task, std::move(checked.error()));
  } else if (task.type == TaskType::Subtask) {
    return about(task, Error(ErrorCode::Validation, "a subtask needs a parent").with_detail("field", "parent"));
  }
  CT_TRY_ASSIGN(std::int64_t last, store_.max_position(task.parent));
  task.position = last + 1;
  task.labels = task_checks::lower_all(std::move(task.labels));
  task.version = 1;
  return store_.insert_task(task);
}

Result<void> TaskEngine::import_kept(std::vector<Task> tasks) {
  CT_TRY_ASSIGN(IdIndex at, index_ids(tasks));
  CT_TRY(check_ids_free(store_, tasks));
  CT_TRY(check_times(tasks, now_));

  // Parents first, in the order given: each pass places the tasks whose parent is in place. Their
  // dependencies and links wait until every task is.
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
      depends[i] = std::exchange(task.depends, {});
      relates[i] = std::exchange(task.relates, {});
      CT_TRY(place_kept(task));
      placed[i] = true;
      order.push_back(i);
    }
    if (order.size() == before) return fail(parent_loop(tasks, placed));
  }

  CT_TRY(check_link_targets(store_, tasks, at, depends, relates));
  CT_TRY(check_no_cycle(tasks, at, depends));
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

}  // namespace ct
