// Dependency-graph analysis for handlers (engines/rules/graph.h): loading the set a call names (an
// epic's subtree or the project) with the configured stale limits, and the JSON shapes that
// tasks.analyze and the orchestrate reads share.
#pragma once

#include <cstddef>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "core/json.h"
#include "domains/context.h"
#include "engines/rules/graph.h"

namespace ct {

/// The graph of `epic`'s subtree (E_NOT_FOUND with a find fix when it does not exist), or of the
/// whole project when `epic` is empty.
Result<Graph> load_scope_graph(Context& context, std::string_view epic);

/// load_scope_graph of `epic` after writes that touched only `touched` (`created`: those they made;
/// `placed`: those whose position changed), from `before` (its graph before them): only the touched
/// tasks are read again, unless they may have moved others in or out of the subtree
/// (engines/rules/graph.h, load_graph_after).
Result<Graph> load_scope_graph_after(Context& context, std::string_view epic, const Graph& before,
                                     const std::vector<std::string>& touched, const std::set<std::string>& created,
                                     const std::set<std::string>& placed);

/// {length, ids[]}: the longest chain of unfinished tasks (at most `limit` ids, "…"-free: the
/// length says how long it is).
json::Value critical_path_json(const Graph& graph, std::size_t limit);
/// [{id, title, unblocks}] for the tasks that hold up the most unfinished work.
json::Value bottlenecks_json(const Graph& graph, std::size_t limit);
/// {id, title, priority, tier, unblocks?, wave?}: one ready task as an orchestrator sees it.
json::Value ready_json(const Graph& graph, std::size_t task);
/// [[id, …], …] — the cycles, when there are any.
json::Value cycles_json(const Graph& graph);
/// {pending: n, …}: counts of the statuses present.
json::Value counts_json(const Graph& graph);

}  // namespace ct
