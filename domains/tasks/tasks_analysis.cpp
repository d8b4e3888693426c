// tasks domain — the analyses of the task graph (cleo_query): next, analyze, deps, blockers. The
// reports over tasks (stats, history, current, relates, export) are tasks_report.cpp's.
#include <algorithm>
#include <map>
#include <set>

#include "domains/analysis.h"
#include "domains/claims.h"
#include "domains/tasks/tasks_common.h"

namespace ct::tasks {
namespace {

json::Value dep_nodes(const std::vector<DepNode>& nodes) {
  json::Value out = json::Value::array();
  for (const auto& node : nodes) {
    json::Value item = json::Value::object();
    item.set("id", node.id);
    item.set("title", node.title);
    item.set("status", to_string(node.status));
    item.set("distance", node.distance);
    out.push_back(std::move(item));
  }
  return out;
}

struct NextArgs {
  std::int64_t count = 0;
  bool explain = false;
  std::optional<bool> in_scope;
};

Result<Reply> next(Context& context, const NextArgs& args) {
  auto engine_ = engine(context);
  CT_TRY_ASSIGN(std::optional<std::set<std::string>> scoped, scope_filter(context, args.in_scope, true));
  CT_TRY_ASSIGN(std::vector<ScoredTask> picks,
                engine_.next(static_cast<int>(args.count), scoped ? &*scoped : nullptr));
  // A task whose files another session reserved (exclusively, its claim live) ranks after the
  // others, saying whose they are; more candidates are read to take its place.
  CT_TRY_ASSIGN(std::vector<Reservation> held, reserved_by_others(context));
  const auto first_conflict = [&](const Task& task) -> std::optional<reservations::Conflict> {
    if (held.empty()) return std::nullopt;
    std::vector<reservations::Conflict> found = reservations::conflicts(task.files, false, &context.session, held);
    return found.empty() ? std::nullopt : std::optional(std::move(found.front()));
  };
  if (std::ranges::any_of(picks, [&](const ScoredTask& pick) { return first_conflict(pick.task).has_value(); })) {
    CT_TRY_ASSIGN(picks, engine_.next(static_cast<int>(args.count + 50), scoped ? &*scoped : nullptr));
    std::ranges::stable_partition(picks, [&](const ScoredTask& pick) { return !first_conflict(pick.task); });
    if (picks.size() > static_cast<std::size_t>(args.count)) picks.resize(static_cast<std::size_t>(args.count));
  }
  json::Value rows = json::Value::array();
  for (const auto& pick : picks) {
    json::Value row = task_suggestion(pick.task);
    if (std::optional<reservations::Conflict> conflict = first_conflict(pick.task))
      row.set("reservedBy", reservations::reservation_json(conflict->held, *context.config));
    if (args.explain) {
      row.set("score", pick.score);
      row.set("reasons", json::Value::array_of(pick.reasons));
    }
    rows.push_back(std::move(row));
  }
  Reply reply = Reply::noted(std::move(rows), no_data_if(picks.empty()));
  if (picks.empty()) {
    // Say when the scope, not the project, ran dry: the caller may not know it was applied.
    if (scoped && !args.in_scope) {
      CT_TRY_ASSIGN(std::vector<ScoredTask> wider, engine_.next(1));
      if (!wider.empty())
        reply.warnings.push_back("nothing ready in this session's scope; " + wider.front().task.id +
                                 " is ready elsewhere in the project (inScope:false)");
    }
  }
  return reply;
}

struct AnalyzeArgs {
  std::optional<std::string> epic_id;
  std::string detail;
};

Result<Reply> analyze(Context& context, const AnalyzeArgs& args) {
  std::string epic = args.epic_id.value_or("");
  CT_TRY_ASSIGN(Graph graph, load_scope_graph(context, epic));
  const bool full = args.detail == "full";
  const std::size_t cap = full ? SIZE_MAX : 5;
  json::Value data = json::Value::object();
  data.set("scope", epic.empty() ? std::string("project") : epic);
  data.set("tasks", static_cast<std::int64_t>(graph.tasks.size()));
  data.set("counts", counts_json(graph));
  data.set("waves", static_cast<std::int64_t>(graph.waves.size()));
  if (auto current = graph.current_wave()) data.set("currentWave", *current);
  std::vector<std::size_t> order = graph.ready_order();
  data.set("ready", static_cast<std::int64_t>(order.size()));
  data.set("criticalPath", critical_path_json(graph, full ? SIZE_MAX : 10));
  data.set("bottlenecks", bottlenecks_json(graph, full ? 20 : 3));
  json::Value tiers = json::Value::object();
  std::map<Tier, std::int64_t> per_tier;
  for (auto index : order) ++per_tier[graph.tier(index)];
  for (auto tier : {Tier::Unblock, Tier::Critical, Tier::Progress, Tier::Routine})
    tiers.set(to_string(tier), per_tier[tier]);
  data.set("tiers", std::move(tiers));
  json::Value action = json::Value::array();
  for (std::size_t i = 0; i < order.size() && i < cap; ++i) action.push_back(ready_json(graph, order[i]));
  data.set("actionOrder", std::move(action));
  if (!graph.cycles.empty()) data.set("cycles", cycles_json(graph));
  if (!graph.stale.empty()) {
    json::Value stale = json::Value::array();
    for (std::size_t i = 0; i < graph.stale.size() && i < cap; ++i) {
      const GraphTask& task = graph.tasks[graph.stale[i].task];
      json::Value row = json::Value::object();
      row.set("id", task.id);
      row.set("status", to_string(task.status));
      row.set("days", graph.stale[i].days);
      stale.push_back(std::move(row));
    }
    data.set("stale", std::move(stale));
    if (!full && graph.stale.size() > cap) data.set("staleTotal", static_cast<std::int64_t>(graph.stale.size()));
  }
  if (full) {
    json::Value waves = json::Value::array();
    for (const auto& members : graph.waves) {
      json::Value ids = json::Value::array();
      for (auto index : members) ids.push_back(graph.tasks[index].id);
      waves.push_back(std::move(ids));
    }
    data.set("waveTasks", std::move(waves));
  }
  return Reply::noted(std::move(data), no_data_if(graph.tasks.empty()));
}

struct DepsArgs {
  std::string id;
  std::string direction;
};

Result<Reply> deps(Context& context, const DepsArgs& args) {
  auto engine_ = engine(context);
  CT_TRY_ASSIGN(Task task, engine_.get(args.id));
  const std::string& direction = args.direction;
  json::Value data = json::Value::object();
  data.set("id", task.id);
  if (direction != "downstream") {
    CT_TRY_ASSIGN(std::vector<DepNode> up, engine_.upstream(task));
    data.set("upstream", dep_nodes(up));
  }
  if (direction != "upstream") {
    CT_TRY_ASSIGN(std::vector<DepNode> down, engine_.downstream(task));
    data.set("downstream", dep_nodes(down));
  }
  return Reply::of(std::move(data));
}

Result<Reply> blockers(Context& context, const IdArgs& args) {
  auto engine_ = engine(context);
  CT_TRY_ASSIGN(Task task, engine_.get(args.id));
  CT_TRY_ASSIGN(std::vector<Blocker> found, engine_.blockers(task));
  json::Value list = json::Value::array();
  for (const auto& blocker : found) {
    json::Value item = json::Value::object();
    item.set("kind", blocker.kind);
    if (!blocker.id.empty()) {
      item.set("id", blocker.id);
      item.set("title", blocker.title);
      item.set("status", to_string(blocker.status));
    }
    if (!blocker.detail.empty()) item.set("detail", blocker.detail);
    list.push_back(std::move(item));
  }
  json::Value data = json::Value::object();
  data.set("id", task.id);
  data.set("blocked", !found.empty());
  data.set("blockers", std::move(list));
  return Reply::of(std::move(data));
}
}  // namespace

void register_tasks_analyses(Registry& registry) {
  const auto next_args = bind(
      field(&NextArgs::count, {.name = "count", .type = ParamType::Int, .default_json = "1", .min = 1, .max = 10,
                               .description = "How many suggestions"}),
      field(&NextArgs::explain, {.name = "explain", .type = ParamType::Bool,
                                 .description = "Include the score and its reasons"}),
      field(&NextArgs::in_scope, {.name = "inScope", .type = ParamType::Bool,
                                  .description = "Only tasks in the bound session's scope (default: true when a "
                                                 "session is bound; false widens to the project)"}));
  registry.add({.domain = "tasks", .name = "next", .gateway = Gateway::Query,
                .summary = "What to work on next, and why",
                .params = next_args.specs(),
                .returns = "[{id,title,priority,score?,reasons?}] (score and reasons with explain): pending tasks "
                           "whose dependencies are finished and that nobody holds, never an epic with open children, "
                           "those whose files another session reserved last (reservedBy), "
                           "scored by priority (critical 100, high 75, medium 50, low 25) + current phase 30 + "
                           "leaf 10; ties by position then age. E_NO_DATA note when none is ready",
                .errors = {ErrorCode::SessionRequired, ErrorCode::SessionNotFound},
                .examples = {{R"({"count":3,"explain":true})", "top three with reasons"}},
                .idempotent = true, .tier = 1, .shortcut = "next",
                .text_view = TextView::NextTasks, .aliases = {"suggest", "recommend", "todo"},
                .handler = next_args.handler(next)});
  const auto analyze_args = bind(
      field(&AnalyzeArgs::epic_id, {.name = "epicId", .type = ParamType::TaskId,
                                    .description = "Analyse this epic's subtree (default: the whole project)",
                                    .positional = true}),
      field(&AnalyzeArgs::detail, {.name = "detail", .type = ParamType::Enum, .default_json = R"("compact")",
                                   .choices = {"compact", "full"},
                                   .description = "full: every ready task, stale task and wave, and the whole critical path"}));
  registry.add({.domain = "tasks", .name = "analyze", .gateway = Gateway::Query,
                .summary = "Analyse dependencies: waves, critical path, bottlenecks, what first",
                .params = analyze_args.specs(),
                .returns = "{scope, tasks, counts{status:n}, waves, currentWave?, ready, criticalPath{length,ids}, "
                           "bottlenecks[{id,title,unblocks}], tiers{unblock,critical,progress,routine}, "
                           "actionOrder[{id,title,priority,tier,unblocks?}], cycles?[[ids]], stale?[{id,status,days}], "
                           "staleTotal?, waveTasks?[[ids]] (full)}. wave = 0 without a dependency inside the set, else "
                           "1 + the highest wave of its dependencies; unblocks = unfinished tasks held up, transitively; "
                           "tiers: unblock (holds up 2+), critical (critical path, critical/high priority), progress, "
                           "routine. E_NO_DATA note for an empty set",
                .errors = {ErrorCode::NotFound},
                .examples = {{R"({})", "the whole project"}, {R"({"epicId":"T001","detail":"full"})", "one epic, everything"}},
                .idempotent = true, .tier = 2, .shortcut = "analyze",
                .handler = analyze_args.handler(analyze)});
  const auto deps_args =
      bind(field(&DepsArgs::id, id_param()),
           field(&DepsArgs::direction, {.name = "direction", .type = ParamType::Enum, .default_json = R"("both")",
                                        .choices = {"upstream", "downstream", "both"},
                                        .description = "upstream: what it needs; downstream: what needs it"}));
  registry.add({.domain = "tasks", .name = "deps", .gateway = Gateway::Query,
                .summary = "What a task needs, what needs it",
                .params = deps_args.specs(),
                .returns = "{id, upstream?[{id,title,status,distance}], downstream?[…]} (transitive)",
                .errors = {ErrorCode::NotFound},
                .examples = {{R"({"id":"T003","direction":"upstream"})", "what T003 waits on"}},
                .idempotent = true, .tier = 1, .shortcut = "deps",
                .text_view = TextView::Dependencies, .original_names = {"tasks.depends"},
                .handler = deps_args.handler(deps)});
  const auto blockers_args = bind(field(&IdArgs::id, id_param()));
  registry.add({.domain = "tasks", .name = "blockers", .gateway = Gateway::Query,
                .summary = "Explain what keeps a task from starting",
                .params = blockers_args.specs(),
                .returns = "{id, blocked, blockers[{kind: dependency|parent|manual, id?, title?, status?, detail?}]}",
                .errors = {ErrorCode::NotFound},
                .examples = {{R"({"id":"T003"})", "why T003 cannot start"}},
                .idempotent = true, .tier = 2, .text_view = TextView::Blockers,
                .handler = blockers_args.handler(blockers)});
}

}  // namespace ct::tasks
