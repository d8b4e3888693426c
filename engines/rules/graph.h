// Dependency-graph analysis (docs/architecture.md §5: tasks.analyze, the orchestrate reads, spawn readiness)
// over a set of tasks: an epic's subtree or the whole project. One pass builds the graph; every
// figure comes from it:
//  - waves: wave(t) = 0 when t has no dependency inside the set, else 1 + the highest wave of its
//    dependencies (finished tasks keep their wave, so the plan does not shift as work is done);
//  - the critical path: the longest chain of unfinished tasks linked by dependencies;
//  - leverage: how many unfinished tasks each unfinished task holds up, transitively;
//  - ready tasks (pending, every dependency finished, no open children) and their tiers;
//  - cycles, reported (the tasks in them get no wave) instead of looped on;
//  - stale tasks (pending or blocked without an update for too long).
// Cost is linear in tasks + dependencies, except leverage: a bitset sweep per connected group of
// unfinished tasks, in blocks of 1,024 tasks (see graph.cpp).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/clock.h"
#include "core/error.h"
#include "engines/store/task_store.h"

namespace ct {

/// Why a ready task matters, in the order an orchestrator should take them.
enum class Tier { Unblock, Critical, Progress, Routine };
std::string_view to_string(Tier tier);

struct GraphOptions {
  TimeMs now = 0;
  /// Claims renewed at or before this have lapsed (engines/rules/claim_lease.h): load_graph
  /// counts their active tasks as pending, ready for another agent. nullopt: none lapse.
  std::optional<TimeMs> lapsed_before;
  int stale_pending_days = 30;
  int stale_blocked_days = 7;
};

struct StaleTask {
  std::size_t task = 0;                  // index into Graph::tasks
  std::int64_t days = 0;                 // since its last update
};

class Graph {
 public:
  /// Analyses `tasks` (e.g. TaskStore::graph_tasks). `outside` gives the status of dependencies that
  /// are not in the set (a missing id counts as finished: the store refuses such edges, and a
  /// dependency that no longer exists holds nothing up).
  static Graph build(std::vector<GraphTask> tasks, const std::map<std::string, TaskStatus, std::less<>>& outside,
                     const GraphOptions& options);

  /// Ids of dependencies of `tasks` that are not in the set (to look their status up first).
  static std::vector<std::string> outside_dependencies(const std::vector<GraphTask>& tasks);

  std::vector<GraphTask> tasks;
  std::vector<int> wave;                 // per task; -1 for tasks in or behind a cycle
  std::vector<std::int64_t> leverage;    // per task: unfinished tasks it holds up (0 when finished)
  std::vector<int> dependents;           // per task: direct dependents inside the set
  std::vector<bool> ready;               // pending, dependencies finished, no open children
  std::vector<bool> open_children;       // has unfinished children in the set
  std::vector<bool> on_critical_path;
  std::vector<std::vector<std::size_t>> waves;       // task indices per wave, in set order
  std::vector<std::size_t> critical_path;            // first task to last
  std::vector<std::vector<std::string>> cycles;      // each a list of ids
  std::vector<StaleTask> stale;
  std::map<TaskStatus, std::int64_t> counts;

  std::optional<std::size_t> index_of(std::string_view id) const;
  /// The lowest wave that still holds an unfinished task; nullopt when all are finished.
  std::optional<int> current_wave() const;
  /// Unfinished tasks per wave, the widest wave: how many agents the plan can keep busy at most.
  std::int64_t max_parallelism() const;
  Tier tier(std::size_t task) const;
  /// Ready tasks, best first: tier, then priority, then leverage, then position and id.
  std::vector<std::size_t> ready_order() const;
  /// ready_order()'s first, without ordering the rest; nullopt when none is ready.
  std::optional<std::size_t> first_ready() const;
  /// Unfinished tasks with the highest leverage (at least 2), most first; at most `limit`.
  std::vector<std::size_t> bottlenecks(std::size_t limit) const;
  /// Unfinished dependencies of task `index` (inside the set or outside it).
  std::vector<std::string> waiting_on(std::size_t index) const;

 private:
  /// Hashes string views and strings alike, so that index_ is searched by a view.
  struct IdHash {
    using is_transparent = void;
    std::size_t operator()(std::string_view id) const noexcept { return std::hash<std::string_view>{}(id); }
  };
  std::unordered_map<std::string, std::size_t, IdHash, std::equal_to<>> index_;
  std::map<std::string, TaskStatus, std::less<>> outside_;
};

/// True for pending, active and blocked.
bool is_unfinished(TaskStatus status);

/// Loads the set (an epic's subtree when `epic` is given, else the whole project) with the status
/// of its outside dependencies, and analyses it; an active task whose claim has lapsed counts as
/// pending. Call inside a read transaction.
Result<Graph> load_graph(TaskStore& store, std::string_view epic, const GraphOptions& options);

/// The graph of `epic`'s subtree (the whole project when empty) after writes that touched the tasks
/// `touched` and no other: the tasks of `before` (load_graph's of that set, with the same options,
/// before the writes) with the touched ones read again, not the whole set (plan.diff's graph after a
/// plan's ops, issue 56). `created`: those of them the writes made; one made under a task of the
/// subtree joins it. `placed`: those whose position changed, whose siblings are read again (renumbered
/// around them). nullopt when a subtree's membership may have moved beyond the touched tasks —
/// the epic itself touched, or a task of it reparented, archived or deleted, or one from elsewhere
/// moved in (their children move with them): then only load_graph tells. Otherwise the same tasks,
/// order and analysis as load_graph would give. Call inside the transaction that made the writes.
Result<std::optional<Graph>> load_graph_after(TaskStore& store, std::string_view epic, const Graph& before,
                                              const std::vector<std::string>& touched,
                                              const std::set<std::string>& created, const std::set<std::string>& placed,
                                              const GraphOptions& options);

}  // namespace ct
