// The Validator's checks of the task graph (engines/rules/validator.h): the hierarchy — parents
// that exist, types that fit their place, depth, loops of parents — and dependency cycles, each
// over the rows one scan reads (for one task, the rows about it).
#include <algorithm>
#include <map>
#include <optional>
#include <unordered_map>

#include "engines/rules/validator.h"

namespace ct {
namespace {

/// The tasks a parent scan read, by index: their rows (id, parent, type, archived), the index of
/// each one's parent (-1 for a root, -2 when the parent is missing) and their unarchived children.
struct ParentLinks {
  std::unordered_map<std::string_view, int> index;
  std::vector<const DiagnosticRow*> node;
  std::vector<int> parent;
  std::vector<std::int64_t> live_children;
};

ParentLinks parent_links(const std::vector<DiagnosticRow>& rows) {
  ParentLinks links;
  links.index.reserve(rows.size());
  for (const auto& row : rows) links.index.emplace(row[0], static_cast<int>(links.index.size()));
  links.node.resize(links.index.size());
  for (const auto& row : rows) links.node[static_cast<std::size_t>(links.index.at(row[0]))] = &row;
  const std::size_t n = links.node.size();
  links.parent.assign(n, -1);
  links.live_children.assign(n, 0);
  for (std::size_t i = 0; i < n; ++i) {
    const std::string& up = (*links.node[i])[1];
    if (up.empty()) continue;
    auto found = links.index.find(up);
    links.parent[i] = found == links.index.end() ? -2 : found->second;
    if (found != links.index.end() && (*links.node[i])[3] == "0")
      ++links.live_children[static_cast<std::size_t>(found->second)];
  }
  return links;
}

/// A task's place against its type: its parent exists, an epic has none, a subtask has one and no
/// children.
void check_place(const ParentLinks& links, std::size_t i, std::vector<Problem>& out) {
  const std::string& task_id = (*links.node[i])[0];
  const std::string& parent_id = (*links.node[i])[1];
  const std::string& type = (*links.node[i])[2];
  if (links.parent[i] == -2)
    out.push_back({"missing-parent", task_id, "", task_id + "'s parent " + parent_id + " does not exist", false,
                   call("tasks.promote", {{"id", task_id}}) + " makes it a top-level task"});
  if (type == "epic" && !parent_id.empty())
    out.push_back({"epic-parent", task_id, "", task_id + " is an epic but has parent " + parent_id, false,
                   call("tasks.promote", {{"id", task_id}}) + ", or change its type"});
  if (type == "subtask" && parent_id.empty())
    out.push_back({"subtask-root", task_id, "", task_id + " is a subtask without a parent", true,
                   "make it a task (what a subtask becomes when its parent goes away)"});
  if (type == "subtask" && links.live_children[i] > 0)
    out.push_back({"subtask-children", task_id, "",
                   task_id + " is a subtask but has " + std::to_string(links.live_children[i]) + " children", false,
                   call("tasks.update", {{"id", task_id}, {"type", "task"}})});
}

constexpr std::int64_t kUnknown = -1, kWalking = -2, kUnknowable = -3;

/// The depth of task `i` and of those on the way up: a walk to a known depth, a root, a missing
/// parent (depth unknowable) or a loop, then the path filled in. A loop met is returned, its ids
/// in order.
std::optional<std::vector<std::string>> walk_depth(const ParentLinks& links, std::size_t i, std::vector<std::int64_t>& depth) {
  std::vector<int> path;
  std::optional<std::vector<std::string>> loop;
  int at = static_cast<int>(i);
  std::int64_t base = kUnknowable;
  while (true) {
    auto uat = static_cast<std::size_t>(at);
    if (depth[uat] == kWalking) {
      auto start = std::find(path.begin(), path.end(), at);
      loop.emplace();
      for (auto it = start; it != path.end(); ++it) loop->push_back((*links.node[static_cast<std::size_t>(*it)])[0]);
      break;
    }
    if (depth[uat] != kUnknown) {
      base = depth[uat];  // known, or kUnknowable
      break;
    }
    depth[uat] = kWalking;
    path.push_back(at);
    if (links.parent[uat] == -1) {
      base = -1;  // the root gets depth 0 below
      break;
    }
    if (links.parent[uat] == -2) break;  // a missing parent (reported apart): depth unknowable
    at = links.parent[uat];
  }
  for (std::size_t k = path.size(); k-- > 0;) {
    auto uk = static_cast<std::size_t>(path[k]);
    depth[uk] = base == kUnknowable ? kUnknowable : base + static_cast<std::int64_t>(path.size() - k);
  }
  return loop;
}

/// The dependency edges as a graph over indexes, with each index's task id.
struct DependencyGraph {
  std::vector<std::string> names;
  std::vector<std::vector<int>> next;
};

DependencyGraph dependency_graph(const std::vector<DiagnosticRow>& edges) {
  DependencyGraph graph;
  std::unordered_map<std::string, int> index;
  auto node = [&](const std::string& name) {
    auto [it, added] = index.emplace(name, static_cast<int>(graph.names.size()));
    if (added) graph.names.push_back(name);
    return it->second;
  };
  for (const auto& edge : edges) {
    int from = node(edge[0]);
    int to = node(edge[1]);
    graph.next.resize(graph.names.size());
    graph.next[static_cast<std::size_t>(from)].push_back(to);
  }
  graph.next.resize(graph.names.size());
  return graph;
}

/// The strongly connected component of each node (iterative Tarjan).
std::vector<int> strong_components(const std::vector<std::vector<int>>& next) {
  const std::size_t n = next.size();
  std::vector<int> order(n, -1), low(n, 0), component(n, -1);
  std::vector<bool> on_stack(n, false);
  std::vector<int> stack;
  int counter = 0, components = 0;
  for (std::size_t root = 0; root < n; ++root) {
    if (order[root] >= 0) continue;
    std::vector<std::pair<int, std::size_t>> work{{static_cast<int>(root), 0}};
    while (!work.empty()) {
      auto& [v, edge_index] = work.back();
      auto uv = static_cast<std::size_t>(v);
      if (edge_index == 0 && order[uv] < 0) {
        order[uv] = low[uv] = counter++;
        stack.push_back(v);
        on_stack[uv] = true;
      }
      if (edge_index < next[uv].size()) {
        int w = next[uv][edge_index++];
        auto uw = static_cast<std::size_t>(w);
        if (order[uw] < 0) {
          work.push_back({w, 0});
        } else if (on_stack[uw]) {
          low[uv] = std::min(low[uv], order[uw]);
        }
        continue;
      }
      if (low[uv] == order[uv]) {
        while (true) {
          int w = stack.back();
          stack.pop_back();
          on_stack[static_cast<std::size_t>(w)] = false;
          component[static_cast<std::size_t>(w)] = components;
          if (w == v) break;
        }
        ++components;
      }
      int finished = v;
      work.pop_back();
      if (!work.empty()) {
        auto parent = static_cast<std::size_t>(work.back().first);
        low[parent] = std::min(low[parent], low[static_cast<std::size_t>(finished)]);
      }
    }
  }
  return component;
}

/// The problem of one cycle group: a concrete loop through `first` (its smallest task), found
/// breadth-first inside the group, and the call that removes the link closing it.
Problem cycle_problem(const DependencyGraph& graph, const std::vector<int>& component, int group, int first) {
  const auto& names = graph.names;
  const auto& next = graph.next;
  std::unordered_map<int, int> came_from;
  std::vector<int> frontier{first};
  int closing = -1;
  for (std::size_t i = 0; i < frontier.size() && closing < 0; ++i) {
    int v = frontier[i];
    for (int w : next[static_cast<std::size_t>(v)]) {
      if (component[static_cast<std::size_t>(w)] != group) continue;
      if (w == first) {
        closing = v;
        break;
      }
      if (came_from.emplace(w, v).second) frontier.push_back(w);
    }
  }
  std::vector<std::string> loop;
  for (int v = closing; v != first && v >= 0; v = came_from.at(v)) loop.push_back(names[static_cast<std::size_t>(v)]);
  loop.push_back(names[static_cast<std::size_t>(first)]);
  std::reverse(loop.begin(), loop.end());
  std::string chain;
  for (const auto& step : loop) chain += step + " → ";
  chain += names[static_cast<std::size_t>(first)];
  // The link that closes the loop: `last` keeps its other dependencies.
  const std::string& last = loop.back();
  json::Value kept = json::Value::array();
  for (int w : next[static_cast<std::size_t>(closing)])
    if (w != first) kept.push_back(names[static_cast<std::size_t>(w)]);
  return {"dependency-cycle", names[static_cast<std::size_t>(first)], "", "dependency cycle: " + chain, false,
          "remove one link, e.g. " + call("tasks.update", {{"id", last}, {"depends", std::move(kept)}, {"mode", "replace"}})};
}

}  // namespace

Result<void> Validator::check_parents(const std::string& id, std::vector<Problem>& out) {
  std::vector<DiagnosticRow> rows_read;
  std::int64_t target_children = 0;
  if (id.empty()) {
    CT_TRY_ASSIGN(rows_read, rows(ScanKind::ParentRows));
  } else {
    CT_TRY_ASSIGN(rows_read, rows(ScanKind::ParentRows, {id}));
    CT_TRY_ASSIGN(std::vector<DiagnosticRow> children, rows(ScanKind::LiveChildren, {id}));
    target_children = children.empty() ? 0 : std::stoll(children[0][0]);
  }
  ParentLinks links = parent_links(rows_read);
  if (!id.empty()) links.live_children[static_cast<std::size_t>(links.index.at(id))] = target_children;
  const std::int64_t max_depth = config_.get_int("hierarchy.maxDepth");
  std::vector<std::int64_t> depth(links.node.size(), kUnknown);
  auto report = [&](std::size_t i) { return id.empty() || (*links.node[i])[0] == id; };
  for (std::size_t i = 0; i < links.node.size(); ++i) {
    const std::string& task_id = (*links.node[i])[0];
    if (report(i)) check_place(links, i, out);
    // A loop is reported once, from its smallest member.
    if (auto loop = walk_depth(links, i, depth)) {
      std::string first = *std::min_element(loop->begin(), loop->end(), task_order);
      if (id.empty() || std::find(loop->begin(), loop->end(), id) != loop->end()) {
        std::string chain;
        for (const auto& member : *loop) chain += member + " → ";
        out.push_back({"parent-cycle", first, "", "parent chain loops: " + chain + loop->front(), false,
                       call("tasks.promote", {{"id", first}}) + " breaks the loop"});
      }
    }
    if (report(i) && depth[i] >= max_depth) {
      out.push_back({"depth", task_id, "",
                     task_id + " sits at level " + std::to_string(depth[i] + 1) + "; hierarchy.maxDepth is " +
                         std::to_string(max_depth),
                     false, "move it higher: " + call("tasks.reparent", {{"id", task_id}, {"parent", "…"}})});
    }
  }
  return {};
}

// Dependency cycles: Tarjan's strongly connected components over every stored depends edge (one
// query); for one task, whether it can reach itself (one recursive query).
Result<void> Validator::check_cycles(const std::string& id, std::vector<Problem>& out) {
  if (!id.empty()) {
    CT_TRY_ASSIGN(std::vector<DiagnosticRow> loop, rows(ScanKind::SelfReachable, {id}));
    if (!loop.empty()) {
      out.push_back({"dependency-cycle", id, "", id + " depends on itself through its dependencies", false,
                     call("tasks.deps", {{"id", id}}) +
                         " shows the chain; remove one link with tasks.update {depends, mode:'replace'}"});
    }
    return {};
  }
  CT_TRY_ASSIGN(std::vector<DiagnosticRow> edges, rows(ScanKind::DependencyRows));
  const DependencyGraph graph = dependency_graph(edges);
  const std::vector<int> component = strong_components(graph.next);
  // One problem per cycle group: its smallest task and one concrete loop through it.
  std::map<int, std::vector<int>> members;
  for (std::size_t v = 0; v < graph.names.size(); ++v) members[component[v]].push_back(static_cast<int>(v));
  for (auto& [group, list] : members) {
    const auto& first_next = graph.next[static_cast<std::size_t>(list[0])];
    bool self_loop = list.size() == 1 && std::find(first_next.begin(), first_next.end(), list[0]) != first_next.end();
    if (list.size() < 2 && !self_loop) continue;
    int first = *std::min_element(list.begin(), list.end(), [&](int a, int b) {
      return task_order(graph.names[static_cast<std::size_t>(a)], graph.names[static_cast<std::size_t>(b)]);
    });
    out.push_back(cycle_problem(graph, component, group, first));
  }
  return {};
}

}  // namespace ct
