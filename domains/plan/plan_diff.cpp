// plan.diff: what one or more plans would do to the graph — what each adds, changes and removes,
// and the waves, critical path, parallelism and next task it leaves — beside the graph as it is.
// A query that speculates: each plan's ops run inside a savepoint and are taken back.
#include "domains/bind.h"
#include "domains/plan/plan_common.h"

namespace ct::plan {
namespace {

/// {tasks, waves, critical[ids], parallelism, next?, waveIds? (full)} of a graph.
json::Value graph_summary(const Graph& graph, const std::map<std::string, std::string>& names, bool full) {
  auto name = [&](const std::string& id) {
    auto found = names.find(id);
    return found == names.end() ? id : found->second;
  };
  json::Value out = json::Value::object();
  std::int64_t unfinished = 0;
  for (const auto& task : graph.tasks)
    if (is_unfinished(task.status)) ++unfinished;
  out.set("tasks", static_cast<std::int64_t>(graph.tasks.size()));
  out.set("open", unfinished);
  json::Value waves = json::Value::array();
  std::int64_t open_waves = 0;
  for (const auto& wave : graph.waves) {
    std::vector<std::string> ids;
    for (auto index : wave)
      if (is_unfinished(graph.tasks[index].status)) ids.push_back(name(graph.tasks[index].id));
    if (ids.empty()) continue;
    ++open_waves;
    waves.push_back(json::Value::array_of(ids));
  }
  out.set("waves", open_waves);
  std::vector<std::string> critical;
  for (auto index : graph.critical_path) critical.push_back(name(graph.tasks[index].id));
  out.set("critical", json::Value::array_of(critical));
  out.set("parallelism", graph.max_parallelism());
  if (auto first = graph.first_ready()) out.set("next", name(graph.tasks[*first].id));
  if (!graph.cycles.empty()) out.set("cycles", cycles_json(graph));
  if (full) out.set("waveIds", std::move(waves));
  return out;
}

/// What the ops add, change and remove, beside what they are now: compact counts, or the lists.
void changes_summary(json::Value& out, const batch::Ran& ran, const std::map<std::string, std::string>& names,
                     const Graph& after, bool full) {
  json::Value added = json::Value::array();
  json::Value changed = json::Value::array();
  std::set<std::string> changed_ids;
  std::vector<std::string> removed;
  auto name = [&](const std::string& id) {
    auto found = names.find(id);
    return found == names.end() ? id : found->second;
  };
  // A value naming tasks the plan makes names them $N (a dependency on a staged task).
  auto renamed = [&](const json::Value& value) {
    if (value.is_string()) return json::Value(name(value.as_string()));
    if (!value.is_array()) return value;
    json::Value items = json::Value::array();
    for (const auto& item : value.as_array()) items.push_back(item.is_string() ? json::Value(name(item.as_string())) : item);
    return items;
  };
  std::set<std::string> created = created_by(ran.changes);
  for (const auto& change : ran.changes) {
    if (change.task_id.empty()) continue;
    if (change.field == "created") {
      json::Value row = json::Value::object();
      row.set("id", name(change.task_id));
      // Its dependencies as the graph has them once every op ran (an op after the one that made it may add some).
      if (auto index = after.index_of(change.task_id); index && !after.tasks[*index].depends.empty()) {
        std::vector<std::string> depends;
        for (const auto& id : after.tasks[*index].depends) depends.push_back(name(id));
        row.set("depends", json::Value::array_of(depends));
      }
      for (std::string_view field : {"title", "parent", "priority", "type"}) {
        const json::Value& value = change.after[field];
        if (value.is_null() || (value.is_array() && value.empty()) || (value.is_string() && value.as_string().empty()))
          continue;
        if (value.is_string()) row.set(field, name(value.as_string()));
        else if (value.is_array()) {
          std::vector<std::string> ids;
          for (const auto& item : value.as_array()) ids.push_back(item.is_string() ? name(item.as_string()) : item.dump());
          row.set(field, json::Value::array_of(ids));
        } else {
          row.set(field, value);
        }
      }
      added.push_back(std::move(row));
    } else if (change.field == "deleted") {
      removed.push_back(change.task_id);
    } else if (!created.contains(change.task_id)) {
      changed_ids.insert(change.task_id);
      json::Value row = json::Value::object();
      row.set("id", change.task_id);
      row.set("field", change.field);
      row.set("from", renamed(change.before));
      row.set("to", renamed(change.after));
      changed.push_back(std::move(row));
    }
  }
  out.set("adds", static_cast<std::int64_t>(added.size()));
  out.set("changes", static_cast<std::int64_t>(changed_ids.size()));
  out.set("removes", static_cast<std::int64_t>(removed.size()));
  if (full) {
    out.set("added", std::move(added));
    out.set("changed", std::move(changed));
    out.set("removed", json::Value::array_of(removed));
  }
}

struct DiffArgs {
  std::vector<std::string> plans;
  std::string detail;
};

Result<Reply> diff(Context& context, const DiffArgs& args, NestedRuns& runs) {
  const bool full = args.detail == "full";
  std::map<std::string, Graph> before_graphs;
  json::Value out = json::Value::array();
  for (const auto& id : args.plans) {
    CT_TRY_ASSIGN(Plan plan, get_plan(context, id));
    json::Value row = plan_row(plan);
    row.erase("updatedAt");
    if (plan.status != "open") {
      row.set("outcome", plan.outcome);
      out.push_back(std::move(row));
      continue;
    }
    if (!before_graphs.contains(plan.epic_id)) {
      CT_TRY_ASSIGN(Graph graph, load_scope_graph(context, plan.epic_id));
      before_graphs.emplace(plan.epic_id, std::move(graph));
    }
    CT_TRY_ASSIGN(json::Value moved, moved_since(context, plan, &before_graphs.at(plan.epic_id)));
    if (!moved.empty()) row.set("moved", std::move(moved));
    // A plan that cannot be read, or no longer applies, is shown with why, beside the others.
    auto shown_failing = [&](const Error& failed) {
      json::Value error = json::Value::object();
      error.set("code", to_string(failed.code));
      error.set("message", failed.message);
      if (failed.details.is_object() && failed.details.contains("op")) error.set("op", failed.details["op"]);
      row.set("error", std::move(error));
      out.push_back(std::move(row));
    };
    auto staged = staged_ops(context, plan);
    if (!staged) {
      shown_failing(staged.error());
      continue;
    }
    CT_TRY_ASSIGN(Speculation speculation, Speculation::begin(context.db()));
    auto ran = replay(context, runs, plan, *staged);
    if (!ran) {
      CT_TRY(speculation.end());
      shown_failing(ran.error());
      continue;
    }
    // The graph before with the tasks the ops touched read again, not the epic's whole subtree (issue 56).
    std::vector<std::string> touched;
    std::set<std::string> seen;
    std::set<std::string> placed;
    for (const auto& change : ran->changes) {
      if (change.task_id.empty()) continue;
      if (seen.insert(change.task_id).second) touched.push_back(change.task_id);
      if (change.field == "position") placed.insert(change.task_id);
    }
    CT_TRY_ASSIGN(Graph after, load_scope_graph_after(context, plan.epic_id, before_graphs.at(plan.epic_id), touched,
                                                      created_by(ran->changes), placed));
    CT_TRY(speculation.end());
    const auto names = placeholder_names(*ran);
    changes_summary(row, *ran, names, after, full);
    row.set("before", graph_summary(before_graphs.at(plan.epic_id), {}, full));
    row.set("after", graph_summary(after, names, full));
    out.push_back(std::move(row));
  }
  return Reply::of(std::move(out));
}

}  // namespace

void register_plan_diff(Registry& registry) {
  const auto diff_args = bind(
      field(&DiffArgs::plans, {.name = "plans", .type = ParamType::Array, .required = true, .min = 1, .max = 5,
                               .pattern = kPlanPattern, .description = "Plan ids or names", .positional = true}),
      field(&DiffArgs::detail, {.name = "detail", .type = ParamType::Enum, .default_json = R"("compact")",
                                .choices = {"compact", "full"},
                                .description = "full: the tasks, changes and waves themselves"}));
  registry.add({.domain = "plan", .name = "diff", .gateway = Gateway::Query,
                .summary = "Compare plans: what each adds, changes, and the graph it leaves",
                .params = diff_args.specs(),
                .returns = "[{id, label, status, ops, adds, changes, removes, before/after{tasks, open, waves, critical[], "
                           "parallelism, next?}, moved?[{id, was, now}], error?}]; tasks a plan makes are $N",
                .errors = {ErrorCode::NotFound},
                .examples = {{R"({"plans":["PL001","PL002"]})", "two decompositions side by side"}},
                .tier = 2, .text_view = TextView::PlanDiff, .speculates = true,
                .handler = diff_args.handler(diff)});
}

}  // namespace ct::plan
