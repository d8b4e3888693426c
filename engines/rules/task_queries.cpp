// TaskEngine's reads of the graph (engines/rules/task_engine.h): the best ready tasks to do next
// (scored by the store: priority, current phase, leaves first), the dependency chains up and down
// from a task, and what blocks it.
#include <deque>
#include <set>
#include <utility>

#include "engines/rules/claim_lease.h"
#include "engines/rules/task_engine.h"
#include "engines/rules/task_checks.h"

namespace ct {

using task_checks::is_open;

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
