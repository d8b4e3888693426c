#include "engines/rules/graph.h"

#include <algorithm>
#include <bit>
#include <numeric>
#include <set>
#include <tuple>
#include <unordered_set>

#include "engines/rules/claim_lease.h"

namespace ct {
namespace {

constexpr TimeMs kDayMs = 86'400'000;
/// Leverage is counted over blocks of this many tasks at a time (16 words per task per block).
constexpr std::size_t kBlockWords = 16;

/// Disjoint sets with path halving, for the connected groups of unfinished tasks.
class UnionFind {
 public:
  explicit UnionFind(std::size_t n) : parent_(n) { std::iota(parent_.begin(), parent_.end(), std::size_t{0}); }
  std::size_t find(std::size_t x) {
    while (parent_[x] != x) x = parent_[x] = parent_[parent_[x]];
    return x;
  }
  void unite(std::size_t a, std::size_t b) {
    a = find(a);
    b = find(b);
    if (a != b) parent_[std::max(a, b)] = std::min(a, b);
  }

 private:
  std::vector<std::size_t> parent_;
};

/// Strongly connected groups among `nodes` (iterative Tarjan over the dependency edges), kept
/// when they are cycles: two tasks or more, or a task that depends on itself.
std::vector<std::vector<std::size_t>> find_cycles(const std::vector<std::size_t>& nodes,
                                                  const std::vector<std::vector<std::size_t>>& deps,
                                                  std::size_t n) {
  std::vector<int> index(n, -1), low(n, 0);
  std::vector<bool> on_stack(n, false), member(n, false);
  for (auto node : nodes) member[node] = true;
  std::vector<std::size_t> stack;
  std::vector<std::vector<std::size_t>> out;
  int counter = 0;
  struct Frame {
    std::size_t node;
    std::size_t next_edge;
  };
  for (auto start : nodes) {
    if (index[start] >= 0) continue;
    std::vector<Frame> frames{{start, 0}};
    index[start] = low[start] = counter++;
    stack.push_back(start);
    on_stack[start] = true;
    while (!frames.empty()) {
      Frame& frame = frames.back();
      const auto& edges = deps[frame.node];
      if (frame.next_edge < edges.size()) {
        std::size_t to = edges[frame.next_edge++];
        if (!member[to]) continue;
        if (index[to] < 0) {
          index[to] = low[to] = counter++;
          stack.push_back(to);
          on_stack[to] = true;
          frames.push_back({to, 0});
        } else if (on_stack[to]) {
          low[frame.node] = std::min(low[frame.node], index[to]);
        }
        continue;
      }
      std::size_t node = frame.node;
      frames.pop_back();
      if (!frames.empty()) low[frames.back().node] = std::min(low[frames.back().node], low[node]);
      if (low[node] != index[node]) continue;
      std::vector<std::size_t> group;
      std::size_t top;
      do {
        top = stack.back();
        stack.pop_back();
        on_stack[top] = false;
        group.push_back(top);
      } while (top != node);
      bool self_loop = std::find(deps[node].begin(), deps[node].end(), node) != deps[node].end();
      if (group.size() > 1 || self_loop) {
        std::sort(group.begin(), group.end());
        out.push_back(std::move(group));
      }
    }
  }
  return out;
}

/// For each unfinished task, the unfinished tasks that depend on it directly or through others.
/// Works per connected group in reverse topological order: a task's set is the union of its
/// dependents' sets plus the dependents themselves, kept as bits over a block of the group's
/// tasks at a time, so memory stays at 16 words per task whatever the size of the group.
void count_leverage(const std::vector<std::size_t>& topo_open, const std::vector<std::vector<std::size_t>>& dependents,
                    const std::vector<bool>& unfinished, std::vector<std::int64_t>& leverage) {
  const std::size_t n = unfinished.size();
  UnionFind groups(n);
  for (auto node : topo_open)
    for (auto next : dependents[node])
      if (unfinished[next]) groups.unite(node, next);
  std::map<std::size_t, std::vector<std::size_t>> members;  // group root → members in topo order
  for (auto node : topo_open) members[groups.find(node)].push_back(node);

  std::vector<std::size_t> local(n, 0);
  std::vector<std::uint64_t> bits;
  for (auto& [root, nodes] : members) {
    if (nodes.size() < 2) continue;  // a lone task holds nothing up
    for (std::size_t i = 0; i < nodes.size(); ++i) local[nodes[i]] = i;
    const std::size_t words_total = (nodes.size() + 63) / 64;
    for (std::size_t first_word = 0; first_word < words_total; first_word += kBlockWords) {
      const std::size_t words = std::min(kBlockWords, words_total - first_word);
      const std::size_t first_bit = first_word * 64;
      const std::size_t end_bit = first_bit + words * 64;
      bits.assign(nodes.size() * words, 0);
      for (std::size_t i = nodes.size(); i-- > 0;) {
        std::uint64_t* mine = bits.data() + i * words;
        for (auto next : dependents[nodes[i]]) {
          if (!unfinished[next]) continue;
          std::size_t j = local[next];
          const std::uint64_t* theirs = bits.data() + j * words;
          for (std::size_t w = 0; w < words; ++w) mine[w] |= theirs[w];
          if (j >= first_bit && j < end_bit) mine[(j - first_bit) / 64] |= std::uint64_t{1} << ((j - first_bit) % 64);
        }
        std::int64_t count = 0;
        for (std::size_t w = 0; w < words; ++w) count += std::popcount(mine[w]);
        leverage[nodes[i]] += count;
      }
    }
  }
}

}  // namespace

std::string_view to_string(Tier tier) {
  switch (tier) {
    case Tier::Unblock: return "unblock";
    case Tier::Critical: return "critical";
    case Tier::Progress: return "progress";
    case Tier::Routine: return "routine";
  }
  return "routine";
}

bool is_unfinished(TaskStatus status) {
  return status == TaskStatus::Pending || status == TaskStatus::Active || status == TaskStatus::Blocked;
}

std::vector<std::string> Graph::outside_dependencies(const std::vector<GraphTask>& tasks) {
  std::unordered_set<std::string_view> inside;
  inside.reserve(tasks.size());
  for (const auto& task : tasks) inside.insert(task.id);
  std::set<std::string> outside;
  for (const auto& task : tasks)
    for (const auto& dep : task.depends)
      if (!inside.contains(dep)) outside.insert(dep);
  return {outside.begin(), outside.end()};
}

namespace {

/// The dependency edges inside the set, both ways (each once), and which tasks are unfinished.
struct Edges {
  std::vector<std::vector<std::size_t>> deps, dependents;
  std::vector<bool> unfinished;
};

/// The edges, the counts by status, the tasks with open children and each one's direct
/// dependents.
Edges link_tasks(Graph& g) {
  const std::size_t n = g.tasks.size();
  Edges e;
  e.unfinished.resize(n);
  e.deps.resize(n);
  e.dependents.resize(n);
  g.open_children.assign(n, false);
  for (std::size_t i = 0; i < n; ++i) {
    const GraphTask& task = g.tasks[i];
    e.unfinished[i] = is_unfinished(task.status);
    ++g.counts[task.status];
    for (const auto& dep : task.depends) {
      auto found = g.index_of(dep);
      if (!found) continue;
      if (std::find(e.deps[i].begin(), e.deps[i].end(), *found) != e.deps[i].end()) continue;
      e.deps[i].push_back(*found);
      e.dependents[*found].push_back(i);
    }
  }
  for (std::size_t i = 0; i < n; ++i) {
    if (!e.unfinished[i] || g.tasks[i].parent.empty()) continue;
    if (auto parent = g.index_of(g.tasks[i].parent)) g.open_children[*parent] = true;
  }
  g.dependents.resize(n);
  for (std::size_t i = 0; i < n; ++i) g.dependents[i] = static_cast<int>(e.dependents[i].size());
  return e;
}

/// Waves by Kahn's algorithm; what it never reaches is in a cycle or behind one (wave -1, its
/// cycles named). The topological order it found.
std::vector<std::size_t> place_in_waves(Graph& g, const Edges& e) {
  const std::size_t n = g.tasks.size();
  g.wave.assign(n, -1);
  std::vector<std::size_t> missing(n), order;
  order.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    missing[i] = e.deps[i].size();
    if (missing[i] == 0) {
      g.wave[i] = 0;
      order.push_back(i);
    }
  }
  for (std::size_t head = 0; head < order.size(); ++head) {
    std::size_t node = order[head];
    for (auto next : e.dependents[node]) {
      g.wave[next] = std::max(g.wave[next], g.wave[node] + 1);
      if (--missing[next] == 0) order.push_back(next);
    }
  }
  if (order.size() < n) {
    std::vector<bool> placed(n, false);
    for (auto node : order) placed[node] = true;
    std::vector<std::size_t> rest;
    for (std::size_t i = 0; i < n; ++i)
      if (!placed[i]) {
        g.wave[i] = -1;
        rest.push_back(i);
      }
    for (const auto& group : find_cycles(rest, e.deps, n)) {
      std::vector<std::string> ids;
      for (auto node : group) ids.push_back(g.tasks[node].id);
      g.cycles.push_back(std::move(ids));
    }
  }
  for (std::size_t i = 0; i < n; ++i) {
    if (g.wave[i] < 0) continue;
    if (static_cast<std::size_t>(g.wave[i]) >= g.waves.size()) g.waves.resize(static_cast<std::size_t>(g.wave[i]) + 1);
    g.waves[static_cast<std::size_t>(g.wave[i])].push_back(i);
  }
  return order;
}

/// The critical path: the longest chain of unfinished tasks (`topo_open`: in topological order).
void find_critical_path(Graph& g, const Edges& e, const std::vector<std::size_t>& topo_open) {
  const std::size_t n = g.tasks.size();
  std::vector<std::size_t> length(n, 0);
  std::vector<std::optional<std::size_t>> previous(n);
  std::optional<std::size_t> last;
  for (auto node : topo_open) {
    length[node] = 1;
    for (auto dep : e.deps[node])
      if (e.unfinished[dep] && length[dep] + 1 > length[node]) {
        length[node] = length[dep] + 1;
        previous[node] = dep;
      }
    if (!last || length[node] > length[*last]) last = node;
  }
  for (auto at = last; at; at = previous[*at]) g.critical_path.push_back(*at);
  std::reverse(g.critical_path.begin(), g.critical_path.end());
  g.on_critical_path.assign(n, false);
  if (g.critical_path.size() >= 2)
    for (auto node : g.critical_path) g.on_critical_path[node] = true;
}

/// Pending and blocked tasks untouched for longer than their limit, the oldest first.
void find_stale(Graph& g, const GraphOptions& options) {
  for (std::size_t i = 0; i < g.tasks.size(); ++i) {
    const GraphTask& task = g.tasks[i];
    int limit = task.status == TaskStatus::Pending   ? options.stale_pending_days
                : task.status == TaskStatus::Blocked ? options.stale_blocked_days
                                                     : 0;
    if (limit <= 0) continue;
    std::int64_t days = (options.now - task.updated_at) / kDayMs;
    if (days > limit) g.stale.push_back({i, days});
  }
  std::stable_sort(g.stale.begin(), g.stale.end(), [](const StaleTask& a, const StaleTask& b) { return a.days > b.days; });
}

}  // namespace

Graph Graph::build(std::vector<GraphTask> tasks, const std::map<std::string, TaskStatus, std::less<>>& outside,
                   const GraphOptions& options) {
  Graph g;
  g.tasks = std::move(tasks);
  g.outside_ = outside;
  const std::size_t n = g.tasks.size();
  g.index_.reserve(n);
  for (std::size_t i = 0; i < n; ++i) g.index_.emplace(g.tasks[i].id, i);
  const Edges edges = link_tasks(g);
  const std::vector<std::size_t> order = place_in_waves(g, edges);
  // Ready: pending, nothing unfinished before it, and no open children (their work comes first).
  g.ready.assign(n, false);
  for (std::size_t i = 0; i < n; ++i)
    g.ready[i] = g.tasks[i].status == TaskStatus::Pending && !g.open_children[i] && g.waiting_on(i).empty();
  std::vector<std::size_t> topo_open;
  for (auto node : order)
    if (edges.unfinished[node]) topo_open.push_back(node);
  find_critical_path(g, edges, topo_open);
  g.leverage.assign(n, 0);
  count_leverage(topo_open, edges.dependents, edges.unfinished, g.leverage);
  find_stale(g, options);
  return g;
}

std::optional<std::size_t> Graph::index_of(std::string_view id) const {
  auto found = index_.find(id);
  if (found == index_.end()) return std::nullopt;
  return found->second;
}

std::optional<int> Graph::current_wave() const {
  for (std::size_t w = 0; w < waves.size(); ++w)
    for (auto node : waves[w])
      if (is_unfinished(tasks[node].status)) return static_cast<int>(w);
  return std::nullopt;
}

std::int64_t Graph::max_parallelism() const {
  std::int64_t best = 0;
  for (const auto& members : waves) {
    std::int64_t open = 0;
    for (auto node : members)
      if (is_unfinished(tasks[node].status) && !open_children[node]) ++open;
    best = std::max(best, open);
  }
  return best;
}

Tier Graph::tier(std::size_t task) const {
  if (leverage[task] >= 2) return Tier::Unblock;
  Priority priority = tasks[task].priority;
  if (on_critical_path[task] || priority == Priority::Critical || priority == Priority::High) return Tier::Critical;
  if (leverage[task] == 1 || priority == Priority::Medium) return Tier::Progress;
  return Tier::Routine;
}

namespace {
/// Where a ready task comes in ready_order: tier, priority, leverage (most first), position, age,
/// then its index (so no two are equal).
using ReadyKey = std::tuple<int, int, std::int64_t, std::int64_t, TimeMs, std::size_t>;

ReadyKey ready_key(const Graph& graph, std::size_t i) {
  const GraphTask& task = graph.tasks[i];
  return {static_cast<int>(graph.tier(i)), priority_rank(task.priority), -graph.leverage[i], task.position,
          task.created_at, i};
}
}  // namespace

std::vector<std::size_t> Graph::ready_order() const {
  // The keys once per task, not twice per comparison (475k ready tasks at 1M).
  std::vector<ReadyKey> keys;
  for (std::size_t i = 0; i < tasks.size(); ++i)
    if (ready[i])
      keys.push_back(ready_key(*this, i));
  std::sort(keys.begin(), keys.end());
  std::vector<std::size_t> out;
  out.reserve(keys.size());
  for (const auto& key : keys) out.push_back(std::get<5>(key));
  return out;
}

std::optional<std::size_t> Graph::first_ready() const {
  std::optional<ReadyKey> best;
  for (std::size_t i = 0; i < tasks.size(); ++i)
    if (ready[i]) {
      ReadyKey key = ready_key(*this, i);
      if (!best || key < *best) best = key;
    }
  if (!best) return std::nullopt;
  return std::get<5>(*best);
}

std::vector<std::size_t> Graph::bottlenecks(std::size_t limit) const {
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < tasks.size(); ++i)
    if (leverage[i] >= 2) out.push_back(i);
  std::stable_sort(out.begin(), out.end(), [&](std::size_t a, std::size_t b) { return leverage[a] > leverage[b]; });
  if (out.size() > limit) out.resize(limit);
  return out;
}

std::vector<std::string> Graph::waiting_on(std::size_t index) const {
  std::vector<std::string> out;
  for (const auto& dep : tasks[index].depends) {
    if (auto inside = index_of(dep)) {
      if (is_unfinished(tasks[*inside].status)) out.push_back(dep);
    } else if (auto found = outside_.find(dep); found != outside_.end() && is_unfinished(found->second)) {
      out.push_back(dep);
    }
  }
  return out;
}

namespace {

/// Active tasks whose claim lapsed count as pending; then the status of the dependencies outside
/// the set is read, and the set analysed.
Result<Graph> analysed(TaskStore& store, std::vector<GraphTask> tasks, const GraphOptions& options) {
  CT_TRY_ASSIGN(auto free, lapsed_claims(store, options.lapsed_before));
  if (!free.empty())
    for (auto& task : tasks)
      if (task.status == TaskStatus::Active && free.contains(task.id)) task.status = TaskStatus::Pending;
  std::map<std::string, TaskStatus, std::less<>> outside;
  std::vector<std::string> ids = Graph::outside_dependencies(tasks);
  if (!ids.empty()) {
    CT_TRY_ASSIGN(std::vector<Task> found, store.get_tasks(ids));
    for (const auto& task : found) outside.emplace(task.id, task.status);
  }
  return Graph::build(std::move(tasks), outside, options);
}

/// What TaskStore::graph_tasks reads of a task.
GraphTask graph_task(const Task& task) {
  GraphTask out;
  out.id = task.id;
  out.title = task.title;
  out.parent = task.parent;
  out.status = task.status;
  out.priority = task.priority;
  out.type = task.type;
  out.position = task.position;
  out.created_at = task.created_at;
  out.updated_at = task.updated_at;
  out.version = task.version;
  out.depends = task.depends;
  out.labels = task.labels;
  out.files = task.files;
  return out;
}

}  // namespace

Result<Graph> load_graph(TaskStore& store, std::string_view epic, const GraphOptions& options) {
  CT_TRY_ASSIGN(std::vector<GraphTask> tasks, store.graph_tasks(epic));
  return analysed(store, std::move(tasks), options);
}

Result<std::optional<Graph>> load_graph_after(TaskStore& store, std::string_view epic, const Graph& before,
                                              const std::vector<std::string>& touched,
                                              const std::set<std::string>& created, const std::set<std::string>& placed,
                                              const GraphOptions& options) {
  // The whole project: every unarchived task, whatever its parent. A subtree: what hangs under the epic.
  const bool project = epic.empty();
  const std::set<std::string, std::less<>> have(touched.begin(), touched.end());
  if (!project && have.contains(epic)) return std::nullopt;
  CT_TRY_ASSIGN(std::vector<Task> now, store.get_tasks(touched));
  // A task put in another place among its siblings renumbers them without touching them otherwise
  // (TaskEngine::reorder): they are read again too (the project's roots: all of it).
  std::set<std::string> parents;
  for (const auto& task : now)
    if (placed.contains(task.id)) {
      if (task.parent.empty()) return std::nullopt;
      parents.insert(task.parent);
    }
  if (!parents.empty()) {
    std::vector<std::string> siblings;
    for (const auto& parent : parents) {
      CT_TRY_ASSIGN(std::vector<std::string> children, store.children_of(parent, false));
      for (auto& id : children)
        if (!have.contains(id)) siblings.push_back(std::move(id));
    }
    CT_TRY_ASSIGN(std::vector<Task> more, store.get_tasks(siblings));
    for (auto& task : more) now.push_back(std::move(task));
  }
  std::map<std::string_view, const Task*> read;
  for (const auto& task : now) read.emplace(task.id, &task);
  std::vector<std::string> all = touched;
  for (const auto& task : now)
    if (!have.contains(task.id)) all.push_back(task.id);

  std::set<std::string, std::less<>> members;  // the subtree after the writes, the epic included
  if (!project) {
    members.emplace(epic);
    for (const auto& task : before.tasks) members.insert(task.id);
  }
  std::map<std::string_view, std::optional<GraphTask>> changed;  // tasks of `before` read again (nullopt: gone)
  std::vector<const Task*> others;                               // touched tasks that were not in `before`
  for (const auto& id : all) {
    auto found = read.find(id);
    auto index = before.index_of(id);
    if (!index) {
      if (found != read.end()) others.push_back(found->second);
      continue;
    }
    const bool gone = found == read.end() || found->second->archived;
    // Leaving a subtree, or changing parent within it, takes the task's children along.
    if (!project && (gone || found->second->parent != before.tasks[*index].parent)) return std::nullopt;
    changed.emplace(before.tasks[*index].id, gone ? std::nullopt : std::optional<GraphTask>(graph_task(*found->second)));
  }
  std::vector<GraphTask> joined;
  if (project) {
    for (const Task* task : others)
      if (!task->archived) joined.push_back(graph_task(*task));
  } else {
    // A task made under a task of the subtree joins it; one made under another made task joins once
    // that one has (an op may move a new task under one made after it: until nothing more joins).
    for (bool more = true; more;) {
      more = false;
      for (auto& task : others) {
        if (!task || task->archived || !created.contains(task->id) || !members.contains(task->parent)) continue;
        members.insert(task->id);
        joined.push_back(graph_task(*task));
        task = nullptr;
        more = true;
      }
    }
    // One the writes did not make that is now under the subtree moved in, with its children.
    for (const Task* task : others)
      if (task && !task->archived && !created.contains(task->id) && members.contains(task->parent)) return std::nullopt;
  }

  std::vector<GraphTask> tasks;
  tasks.reserve(before.tasks.size() + joined.size());
  for (const auto& task : before.tasks) {
    auto again = changed.find(task.id);
    if (again == changed.end()) tasks.push_back(task);
    else if (again->second) tasks.push_back(std::move(*again->second));
  }
  for (auto& task : joined) tasks.push_back(std::move(task));
  // graph_tasks' order: parent (roots first), position, then the row number (the id's); each key
  // made once, not per comparison.
  using Place = std::tuple<std::string_view, std::int64_t, std::int64_t, std::size_t>;
  std::vector<Place> places;
  places.reserve(tasks.size());
  for (std::size_t i = 0; i < tasks.size(); ++i)
    places.emplace_back(tasks[i].parent, tasks[i].position, parse_task_id(tasks[i].id).value_or(0), i);
  std::sort(places.begin(), places.end());
  std::vector<GraphTask> ordered;
  ordered.reserve(tasks.size());
  for (const auto& place : places) ordered.push_back(std::move(tasks[std::get<3>(place)]));
  CT_TRY_ASSIGN(Graph after, analysed(store, std::move(ordered), options));
  return std::optional<Graph>(std::move(after));
}

}  // namespace ct
