#include "domains/analysis.h"

#include <algorithm>

#include "engines/rules/claim_lease.h"

namespace ct {

namespace {

GraphOptions scope_graph_options(Context& context) {
  GraphOptions options;
  options.now = context.now();
  options.lapsed_before = lapsed_before(*context.config, options.now);
  options.stale_pending_days = static_cast<int>(context.config->get_int("analyze.stalePendingDays"));
  options.stale_blocked_days = static_cast<int>(context.config->get_int("analyze.staleBlockedDays"));
  return options;
}

}  // namespace

Result<Graph> load_scope_graph(Context& context, std::string_view epic) {
  if (!epic.empty()) {
    CT_TRY_ASSIGN(std::optional<Task> root, context.db().get_task(epic));
    if (!root || root->archived) {
      Error error(ErrorCode::NotFound, "Task " + std::string(epic) + (root ? " is archived" : " not found"));
      error.fix = call("tasks.list", {{"type", "epic"}});
      return fail(std::move(error).with_detail("id", std::string(epic)));
    }
  }
  return load_graph(context.db(), epic, scope_graph_options(context));
}

Result<Graph> load_scope_graph_after(Context& context, std::string_view epic, const Graph& before,
                                     const std::vector<std::string>& touched, const std::set<std::string>& created,
                                     const std::set<std::string>& placed) {
  CT_TRY_ASSIGN(std::optional<Graph> after,
                load_graph_after(context.db(), epic, before, touched, created, placed, scope_graph_options(context)));
  if (after) return std::move(*after);
  return load_scope_graph(context, epic);
}

json::Value critical_path_json(const Graph& graph, std::size_t limit) {
  json::Value out = json::Value::object();
  out.set("length", static_cast<std::int64_t>(graph.critical_path.size()));
  json::Value ids = json::Value::array();
  for (std::size_t i = 0; i < graph.critical_path.size() && i < limit; ++i)
    ids.push_back(graph.tasks[graph.critical_path[i]].id);
  out.set("ids", std::move(ids));
  return out;
}

json::Value bottlenecks_json(const Graph& graph, std::size_t limit) {
  json::Value out = json::Value::array();
  for (auto index : graph.bottlenecks(limit)) {
    json::Value row = json::Value::object();
    row.set("id", graph.tasks[index].id);
    row.set("title", graph.tasks[index].title);
    row.set("unblocks", graph.leverage[index]);
    out.push_back(std::move(row));
  }
  return out;
}

json::Value ready_json(const Graph& graph, std::size_t task) {
  const GraphTask& t = graph.tasks[task];
  json::Value row = json::Value::object();
  row.set("id", t.id);
  row.set("title", t.title);
  row.set("priority", to_string(t.priority));
  row.set("tier", to_string(graph.tier(task)));
  if (graph.leverage[task] > 0) row.set("unblocks", graph.leverage[task]);
  return row;
}

json::Value cycles_json(const Graph& graph) {
  json::Value out = json::Value::array();
  for (const auto& cycle : graph.cycles) out.push_back(json::Value::array_of(cycle));
  return out;
}

json::Value counts_json(const Graph& graph) {
  json::Value out = json::Value::object();
  for (auto status : kTaskStatuses)
    if (auto found = graph.counts.find(status); found != graph.counts.end() && found->second > 0)
      out.set(to_string(status), found->second);
  return out;
}

}  // namespace ct
