// What moved since a plan was staged (plan_common.h, moved_since): [{id, was, now}] — a task the
// plan rests on whose version moved (now null: it is gone), and a task in its epic's subtree now
// that it did not rest on (was null: added, moved in, or back from the archive). A plan rests on
//   - the audit trail's last seq when it began or was rebased (Plan::since, schema v17), and the
//     version of each task its ops name as first staged (base.versions). The subtree as it stood at
//     the watermark is worked out from the tasks now and the changes written after it, each of
//     which keeps the version of the task it was made to, so begin reads no subtree and commit reads
//     only what changed since: the cost follows the changes, not the epic's size (issue 56);
//   - or, for a plan begun before, base.versions alone: every task of the subtree as it began.
// Both answer the same list, in the same order (the tasks it rested on by id, then the added by id).
#include <functional>

#include "domains/plan/plan_common.h"

namespace ct::plan {
namespace {

/// A row of the answer.
json::Value moved_row(const std::string& id, json::Value was, json::Value now) {
  json::Value row = json::Value::object();
  row.set("id", id);
  row.set("was", std::move(was));
  row.set("now", std::move(now));
  return row;
}

/// The epic's subtree with the epic itself: id → version. `graph`, when given, is the subtree as
/// this transaction already read it (plan.diff's graph before): it is not read again.
Result<std::map<std::string, std::int64_t>> subtree_versions(Context& context, const std::string& epic,
                                                             const Graph* graph) {
  std::map<std::string, std::int64_t> out;
  if (epic.empty()) return out;
  CT_TRY_ASSIGN(std::optional<Task> root, context.db().get_task(epic));
  if (root) out.emplace(root->id, root->version);
  if (graph) {
    for (const auto& task : graph->tasks) out.emplace(task.id, task.version);
    return out;
  }
  CT_TRY_ASSIGN(auto tasks, context.db().subtree_versions(epic));
  for (auto& task : tasks) out.emplace(std::move(task.id), task.version);
  return out;
}

/// A plan begun before schema v17: its base holds the versions of its epic's subtree as it began.
Result<json::Value> moved_since_snapshot(Context& context, const Plan& plan, const Graph* graph) {
  json::Value moved = json::Value::array();
  // Looked up once per task of the subtree: a map, not the JSON object's linear search.
  std::map<std::string, std::int64_t, std::less<>> versions;
  for (const auto& [id, version] : plan.base["versions"].as_object())
    versions.emplace(id, version.is_int() ? version.as_int() : 0);
  CT_TRY_ASSIGN(auto subtree, subtree_versions(context, plan.epic_id, graph));
  std::vector<std::string> outside;
  for (const auto& [id, version] : versions)
    if (!subtree.contains(id)) outside.push_back(id);
  std::map<std::string, std::int64_t> now_outside;
  if (!outside.empty()) {
    CT_TRY_ASSIGN(std::vector<Task> tasks, context.db().get_tasks(outside));
    for (const auto& task : tasks) now_outside.emplace(task.id, task.version);
  }
  for (const auto& [id, was] : versions) {
    std::optional<std::int64_t> now;
    if (auto in = subtree.find(id); in != subtree.end()) now = in->second;
    else if (auto out = now_outside.find(id); out != now_outside.end()) now = out->second;
    if (!now) moved.push_back(moved_row(id, was, json::Value()));
    else if (*now != was) moved.push_back(moved_row(id, was, *now));
  }
  for (const auto& [id, version] : subtree)
    if (!versions.contains(id)) moved.push_back(moved_row(id, json::Value(), version));
  return moved;
}

/// Where tasks stood at a plan's watermark, told apart from where they stand now by the changes
/// written since (AuditLog::task_changes_after). A task no change since names stood where it
/// stands, at the version it has; a task in the subtree now that was not then has itself or a task
/// above it among the changed ones (made, moved, archived or restored since).
class Watermark {
 public:
  Watermark(Context& context, std::string epic) : context_(context), epic_(std::move(epic)) {}

  /// Takes in the changes after the watermark, in the order written.
  void read(std::vector<FieldChange> changes) {
    for (auto& change : changes) {
      auto [at, first] = then_.try_emplace(change.task_id);
      Then& then = at->second;
      if (first) then.made = change.field == "created";
      if (then.version == 0 && change.version > 0) then.version = change.version;
      if (change.field == "parent") {
        if (!then.parent) then.parent = change.before.is_string() ? change.before.as_string() : std::string();
      } else if (change.field == "archived") {
        if (!then.archived) then.archived = change.before.is_bool() && change.before.as_bool();
      } else if (change.field == "deleted") {
        then.deleted = true;
        // What a hard delete records is the task as it was: where it stood, unless a change before said.
        const json::Value& parent = change.before["parent"];
        if (!then.parent) then.parent = parent.is_string() ? parent.as_string() : std::string();
        if (!then.archived) then.archived = change.before["archived"].is_bool() && change.before["archived"].as_bool();
      } else if (change.field != "created") {
        continue;
      }
      then.placed = true;
    }
  }

  /// The tasks changed since, by id.
  std::vector<std::string> changed() const {
    std::vector<std::string> out;
    out.reserve(then_.size());
    for (const auto& [id, then] : then_) out.push_back(id);
    return out;
  }

  /// Reads where `ids` stand now, those not read yet, in one call.
  Result<void> load(const std::vector<std::string>& ids) {
    std::vector<std::string> unread;
    for (const auto& id : ids)
      if (!now_.contains(id)) unread.push_back(id);
    if (unread.empty()) return {};
    CT_TRY_ASSIGN(std::vector<TaskVersion> tasks, context_.db().task_versions(unread));
    for (const auto& id : unread) now_.emplace(id, std::nullopt);
    for (auto& task : tasks) now_[task.id] = Now{std::move(task.parent), task.archived, task.version};
    return {};
  }

  /// Where `id` stands now (nullopt: no such task).
  Result<std::optional<std::int64_t>> version_now(const std::string& id) {
    CT_TRY_ASSIGN(const Now* now, now_of(id));
    return now ? std::optional<std::int64_t>(now->version) : std::nullopt;
  }

  /// Its version at the watermark (it stood then).
  Result<std::int64_t> version_then(const std::string& id) {
    if (auto found = then_.find(id); found != then_.end() && found->second.version > 0) return found->second.version;
    CT_TRY_ASSIGN(const Now* now, now_of(id));
    return now ? now->version : 0;
  }

  /// Whether `id` was the epic or in its subtree, unarchived, at the watermark.
  Result<bool> in_subtree_then(const std::string& id) { return in_subtree(id, /*then=*/true, 0); }

  /// The tasks in the epic's subtree now (the epic with them) that were not at the watermark.
  /// Only the subtrees of changed tasks that may have moved in are read.
  Result<std::map<std::string, std::int64_t>> joined_since() {
    std::map<std::string, std::int64_t> out;
    // The highest first, so that a subtree read once covers what moved in with it.
    std::vector<std::pair<int, std::string>> roots;
    for (const auto& [id, then] : then_) {
      if (!then.placed || (id == epic_ && !then.made)) continue;
      CT_TRY_ASSIGN(bool in_now, in_subtree(id, /*then=*/false, 0));
      if (!in_now) continue;
      CT_TRY_ASSIGN(int depth, depth_now(id));
      roots.emplace_back(depth, id);
    }
    std::sort(roots.begin(), roots.end());
    std::set<std::string> seen;
    for (const auto& [depth, root] : roots) {
      if (seen.contains(root)) continue;
      std::vector<std::pair<std::string, std::int64_t>> members;
      CT_TRY_ASSIGN(std::optional<std::int64_t> version, version_now(root));
      if (version) members.emplace_back(root, *version);
      CT_TRY_ASSIGN(std::vector<TaskVersion> below, context_.db().subtree_versions(root));
      for (auto& task : below) {
        members.emplace_back(task.id, task.version);
        now_.try_emplace(task.id, Now{std::move(task.parent), false, task.version});
      }
      for (const auto& [id, now] : members) {
        if (!seen.insert(id).second) continue;
        CT_TRY_ASSIGN(bool was_in, in_subtree(id, /*then=*/true, 0));
        if (!was_in) out.emplace(id, now);
      }
    }
    return out;
  }

 private:
  /// What the changes since say of a task then (each set by the first change that tells).
  struct Then {
    bool made = false;                  // its first change since made it: it was not there then
    bool deleted = false;               // deleted since
    bool placed = false;                // made, moved, archived, restored or deleted since
    std::optional<std::string> parent;  // its parent then ("" a root)
    std::optional<bool> archived;       // archived then
    std::int64_t version = 0;           // its version then (0: no change of its row since)
  };
  struct Now {
    std::string parent;
    bool archived = false;
    std::int64_t version = 0;
  };

  Result<const Now*> now_of(const std::string& id) {
    if (!now_.contains(id)) CT_TRY(load({id}));
    const auto& now = now_.at(id);
    return now ? &*now : nullptr;
  }

  /// Whether `id` stood in the epic's subtree, unarchived, then (at the watermark) or now.
  Result<bool> in_subtree(const std::string& id, bool then, int depth) {
    auto& memo = then ? in_then_ : in_now_;
    if (auto found = memo.find(id); found != memo.end()) return found->second;
    CT_TRY_ASSIGN(const Now* now, now_of(id));
    const Then* since = nullptr;
    if (auto found = then_.find(id); then && found != then_.end()) since = &found->second;
    const bool existed = then ? !(since && since->made) && (now || (since && since->deleted)) : now != nullptr;
    bool in = false;
    if (id == epic_) {
      in = existed;  // the epic itself, archived or not
    } else if (existed && depth < kMaxDepth) {
      const std::string& parent = since && since->parent ? *since->parent : now ? now->parent : kNone;
      const bool archived = since && since->archived ? *since->archived : now && now->archived;
      if (!archived && !parent.empty()) {
        CT_TRY_ASSIGN(in, in_subtree(parent, then, depth + 1));
      }
    }
    memo[id] = in;
    return in;
  }

  /// How many parents above `id` now (a parent loop counts as deep).
  Result<int> depth_now(const std::string& id) {
    int depth = 0;
    std::string at = id;
    while (depth < kMaxDepth) {
      CT_TRY_ASSIGN(const Now* now, now_of(at));
      if (!now || now->parent.empty()) break;
      at = now->parent;
      ++depth;
    }
    return depth;
  }

  static constexpr int kMaxDepth = 64;  // past any hierarchy.maxDepth; a parent loop ends here
  static inline const std::string kNone;

  Context& context_;
  std::string epic_;
  std::map<std::string, Then> then_;
  std::map<std::string, std::optional<Now>> now_;
  std::map<std::string, bool> in_then_;
  std::map<std::string, bool> in_now_;
};

/// A plan on a watermark (Plan::since): the tasks it rested on are those of the subtree then and
/// those its ops name (base.versions, as first staged); only tasks changed since can have moved.
Result<json::Value> moved_since_watermark(Context& context, const Plan& plan) {
  std::map<std::string, std::int64_t> named;
  if (plan.base["versions"].is_object())
    for (const auto& [id, version] : plan.base["versions"].as_object())
      named.emplace(id, version.is_int() ? version.as_int() : 0);
  Watermark mark(context, plan.epic_id);
  if (!plan.epic_id.empty()) {
    CT_TRY_ASSIGN(std::vector<FieldChange> changes, context.db().task_changes_after(*plan.since));
    mark.read(std::move(changes));
  }
  std::set<std::string> candidates;
  for (auto& id : mark.changed()) candidates.insert(std::move(id));
  for (const auto& [id, version] : named) candidates.insert(id);
  CT_TRY(mark.load(std::vector<std::string>(candidates.begin(), candidates.end())));
  json::Value moved = json::Value::array();
  for (const auto& id : candidates) {
    bool was_in = false;
    if (!plan.epic_id.empty()) {
      CT_TRY_ASSIGN(was_in, mark.in_subtree_then(id));
    }
    std::int64_t was = 0;
    if (was_in) {
      CT_TRY_ASSIGN(was, mark.version_then(id));
    } else if (auto found = named.find(id); found != named.end()) {
      was = found->second;
    } else {
      continue;  // neither in the subtree then nor named: not rested on
    }
    CT_TRY_ASSIGN(std::optional<std::int64_t> now, mark.version_now(id));
    if (!now) moved.push_back(moved_row(id, was, json::Value()));
    else if (*now != was) moved.push_back(moved_row(id, was, *now));
  }
  if (plan.epic_id.empty()) return moved;
  CT_TRY_ASSIGN(auto joined, mark.joined_since());
  for (const auto& [id, version] : joined)
    if (!named.contains(id)) moved.push_back(moved_row(id, json::Value(), version));
  return moved;
}

}  // namespace

Result<json::Value> moved_since(Context& context, const Plan& plan, const Graph* graph) {
  if (plan.since) return moved_since_watermark(context, plan);
  if (!plan.base["versions"].is_object()) return json::Value::array();
  return moved_since_snapshot(context, plan, graph);
}

}  // namespace ct::plan
