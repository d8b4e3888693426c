// plan domain (issue 36): plans as sandboxes. A plan holds mutations of tasks staged apart from the
// store — plan.apply checks them by running them on the store plus what the plan already holds,
// then takes them back, so no other agent sees a half-made decomposition. plan.diff shows what
// one or more plans would do to the graph (waves, critical path, parallelism, what `next` would
// suggest) beside the current one; plan.commit runs them all in one transaction and one audit row
// (tasks.undo takes it back whole), refused with E_CONCURRENT_MODIFICATION when what the plan
// rests on moved since it was staged; plan.rebase takes the moves in where nothing conflicts.
//
// What a plan rests on (Plan::base): the version of every task of its epic's subtree when it
// began (the epic included), and of every task its ops name or change, when first staged; and the
// value each field its ops change on the tasks they name had before the plan changed it. Conflicts
// are per field: replayed on the store as it is now, a field whose value another agent changed
// since (its base differs) and which the plan changes too is one rebase cannot resolve alone
// (force overwrites exactly those fields, named); anything else that moved — another field of the
// same task, a note added beside the plan's, a sibling added under the epic — is taken in.
#include <algorithm>
#include <cctype>
#include <map>
#include <set>

#include "core/text.h"
#include "domains/analysis.h"
#include "domains/batch.h"
#include "domains/bind.h"
#include "domains/call_text.h"
#include "domains/registry.h"
#include "engines/rules/task_engine.h"
#include "engines/store/task_json.h"

namespace ct {
namespace {

constexpr std::string_view kSavepoint = "ct_plan";
constexpr std::string_view kPlanPattern = "PL[0-9]{1,15}";

/// Changes made after it are taken back when it goes out of scope.
class Speculation {
 public:
  static Result<Speculation> begin(Store& store) {
    CT_TRY(store.savepoint(kSavepoint));
    return Speculation(&store);
  }
  Speculation(Speculation&& other) noexcept : store_(std::exchange(other.store_, nullptr)) {}
  Speculation& operator=(Speculation&&) = delete;
  ~Speculation() { (void)end(); }
  Result<void> end() {
    if (!store_) return {};
    return std::exchange(store_, nullptr)->rollback_to(kSavepoint);
  }

 private:
  explicit Speculation(Store* store) : store_(store) {}
  Store* store_;
};

json::Value example_ops();

Result<Plan> get_plan(Context& context, const std::string& id) {
  CT_TRY_ASSIGN(std::optional<Plan> plan, context.db().get_plan(id));
  if (!plan)
    return fail(Error(ErrorCode::NotFound, "Plan " + id + " not found")
                    .with_fix(call("plan.list", {{"status", "all"}}) + " lists the plans")
                    .with_detail("plan", id));
  return std::move(*plan);
}

Result<Plan> open_plan(Context& context, const std::string& id) {
  CT_TRY_ASSIGN(Plan plan, get_plan(context, id));
  if (plan.status != "open")
    return fail(Error(ErrorCode::Validation, "Plan " + id + " is " + plan.status + ": only an open plan changes")
                    .with_fix(call("plan.begin", {{"label", plan.label}}) + " starts another")
                    .with_detail("plan", id)
                    .with_detail("status", plan.status));
  return plan;
}

/// The plan's ops as staged, read back under the plan's own limit (plan.apply let it grow to
/// kMaxPlanOps; a call's limit would leave a plan of more ops unreadable for ever). A plan that
/// cannot be read — an op this ct no longer batches — answers why, naming the op.
Result<std::vector<batch::Op>> staged_ops(Context& context, const Plan& plan) {
  if (plan.ops.empty()) return std::vector<batch::Op>{};
  auto ops = batch::parse(*context.registry, plan.ops, 0, batch::kPlanOps, "plan.ops");
  if (!ops) {
    Error error = std::move(ops.error());
    error.message = plan.id + " cannot be read: " + error.message;
    return fail(std::move(error).with_fix(Advice("discard it (") + call("plan.discard", {{"plan", plan.id}}) +
                                          ") and stage its changes again")
                    .with_detail("plan", plan.id));
  }
  return ops;
}

/// The tasks an op names in its task id params (placeholders aside), as this store spells them.
void named_tasks(const batch::Op& op, std::set<std::string>& out) {
  for (const auto& text : batch::id_values(op))
    if (!batch::placeholder(text))
      if (auto id = normalize_task_id(text)) out.insert(*id);
}

/// The ids the plan's ops created (their `created` changes).
std::set<std::string> created_by(const std::vector<FieldChange>& changes) {
  std::set<std::string> out;
  for (const auto& change : changes)
    if (change.field == "created") out.insert(change.task_id);
  return out;
}

/// The epic's subtree with the epic itself: id → version. `graph`, when given, is the subtree as
/// this transaction already read it (plan.diff's graph before): it is not read again.
Result<std::map<std::string, std::int64_t>> subtree_versions(Context& context, const std::string& epic,
                                                             const Graph* graph = nullptr) {
  std::map<std::string, std::int64_t> out;
  if (epic.empty()) return out;
  CT_TRY_ASSIGN(std::optional<Task> root, context.db().get_task(epic));
  if (root) out.emplace(root->id, root->version);
  if (graph) {
    for (const auto& task : graph->tasks) out.emplace(task.id, task.version);
    return out;
  }
  CT_TRY_ASSIGN(std::vector<GraphTask> tasks, context.db().graph_tasks(epic));
  for (const auto& task : tasks) out.emplace(task.id, task.version);
  return out;
}

Result<std::map<std::string, std::int64_t>> versions_of(Context& context, const std::set<std::string>& ids) {
  std::map<std::string, std::int64_t> out;
  if (ids.empty()) return out;
  CT_TRY_ASSIGN(std::vector<Task> tasks, context.db().get_tasks(std::vector<std::string>(ids.begin(), ids.end())));
  for (const auto& task : tasks) out.emplace(task.id, task.version);
  return out;
}

/// One field an op of a plan changes on the task it names: its value before the plan (the first
/// such change's `before`) and the value the plan leaves (the last one's `after`).
struct FieldEdit {
  json::Value before;
  json::Value after;
  std::size_t first_op = 0;  // the op (from 0) that changed it first
};
using FieldEdits = std::map<std::pair<std::string, std::string>, FieldEdit>;  // (task, field) →

/// The fields the ops change on the tasks they name — not on the tasks the plan makes, and not what
/// an op changes elsewhere as a consequence (a sibling's position, a dependent's list), which a
/// replay works out again from the store as it then is and so never brings back a stale value.
FieldEdits own_edits(const batch::Ran& ran) {
  const std::set<std::string> created = created_by(ran.changes);
  FieldEdits out;
  std::size_t begin = 0;
  for (std::size_t op = 0; op < ran.ends.size() && op < ran.ids.size(); ++op) {
    const std::string& task = ran.ids[op];
    for (std::size_t i = begin; i < ran.ends[op]; ++i) {
      const FieldChange& change = ran.changes[i];
      if (task.empty() || change.task_id != task || created.contains(task)) continue;
      auto [at, inserted] = out.try_emplace({task, change.field}, FieldEdit{change.before, change.after, op});
      if (!inserted) at->second.after = change.after;
    }
    begin = ran.ends[op];
  }
  return out;
}

/// Updates `base` with what `ops` (run as `ran`) rest on, read from the store as it is now (after
/// the run was taken back):
///   versions  {task: version} — the epic's subtree and every task the ops name or change; a task
///             already in it keeps the version it was staged on, unless `fresh`;
///   fields    {task: {field: value}} — each field the ops change on a task they name, as it was
///             before the plan changed it: the base rebase tells another agent's change of that
///             field by. Kept as first staged unless `fresh`; ops from `first_new` on add theirs.
/// (Plans staged before fields were kept have versions alone; rebase reads them conservatively.)
Result<json::Value> rest_on(Context& context, const Plan& plan, std::span<const batch::Op> ops, const batch::Ran& ran,
                            bool fresh, std::size_t first_new = 0) {
  std::set<std::string> created = created_by(ran.changes);
  std::set<std::string> named;
  for (const auto& op : ops) named_tasks(op, named);
  for (const auto& change : ran.changes)
    if (!change.task_id.empty()) named.insert(change.task_id);
  std::erase_if(named, [&](const std::string& id) { return created.contains(id); });

  json::Value versions = fresh || !plan.base["versions"].is_object() ? json::Value::object() : plan.base["versions"];
  CT_TRY_ASSIGN(auto subtree, subtree_versions(context, plan.epic_id));
  if (fresh)
    for (const auto& [id, version] : subtree) versions.set(id, version);
  std::set<std::string> unseen;
  for (const auto& id : named)
    if (!versions.contains(id)) unseen.insert(id);
  CT_TRY_ASSIGN(auto found, versions_of(context, unseen));
  for (const auto& [id, version] : found) versions.set(id, version);

  json::Value fields = fresh || !plan.base["fields"].is_object() ? json::Value::object() : plan.base["fields"];
  for (const auto& [key, edit] : own_edits(ran)) {
    if (!fresh && edit.first_op < first_new) continue;  // an earlier op's field keeps the base it was staged on
    const auto& [task, field] = key;
    json::Value of_task = fields.contains(task) ? fields[task] : json::Value::object();
    if (of_task.contains(field)) continue;
    of_task.set(field, edit.before);
    fields.set(task, std::move(of_task));
  }
  json::Value base = json::Value::object();
  base.set("versions", std::move(versions));
  base.set("fields", std::move(fields));
  return base;
}

/// What moved since the plan was staged: [{id, was, now}] (was null: a task added under its epic;
/// now null: a task gone). `graph`: its epic's subtree as already read (subtree_versions).
Result<json::Value> moved_since(Context& context, const Plan& plan, const Graph* graph = nullptr) {
  json::Value moved = json::Value::array();
  if (!plan.base["versions"].is_object()) return moved;
  // Looked up once per task of the subtree: a map, not the JSON object's linear search.
  std::map<std::string, std::int64_t, std::less<>> versions;
  for (const auto& [id, version] : plan.base["versions"].as_object())
    versions.emplace(id, version.is_int() ? version.as_int() : 0);
  CT_TRY_ASSIGN(auto subtree, subtree_versions(context, plan.epic_id, graph));
  std::set<std::string> outside;
  for (const auto& [id, version] : versions)
    if (!subtree.contains(id)) outside.insert(id);
  CT_TRY_ASSIGN(auto now_outside, versions_of(context, outside));
  auto add = [&](const std::string& id, json::Value was, json::Value now) {
    json::Value row = json::Value::object();
    row.set("id", id);
    row.set("was", std::move(was));
    row.set("now", std::move(now));
    moved.push_back(std::move(row));
  };
  for (const auto& [id, was] : versions) {
    std::optional<std::int64_t> now;
    if (auto in = subtree.find(id); in != subtree.end()) now = in->second;
    else if (auto out = now_outside.find(id); out != now_outside.end()) now = out->second;
    if (!now) add(id, was, json::Value());
    else if (*now != was) add(id, was, *now);
  }
  for (const auto& [id, version] : subtree)
    if (!versions.contains(id)) add(id, json::Value(), version);
  return moved;
}

/// Runs the plan's ops (and `more` after them) on the store as it is; the caller takes them back
/// or keeps them. An op that fails answers its error, saying the plan does not apply.
Result<batch::Ran> replay(Context& context, const Plan& plan, std::span<const batch::Op> staged,
                          std::span<const batch::Op> more = {}) {
  std::vector<batch::Op> all(staged.begin(), staged.end());
  all.insert(all.end(), more.begin(), more.end());
  auto ran = batch::run(context, all);
  if (!ran) {
    Error error = std::move(ran.error());
    error.message = plan.id + ", " + error.message;
    return fail(std::move(error).with_detail("plan", plan.id));
  }
  return std::move(*ran);
}

/// replay() inside a speculation, taken back whatever happens: what the ops would do, or the error
/// of the op that fails, saying `then` (what that means for the call).
Result<batch::Ran> tried(Context& context, const Plan& plan, std::span<const batch::Op> staged,
                         std::span<const batch::Op> more, std::string_view then) {
  CT_TRY_ASSIGN(Speculation speculation, Speculation::begin(context.db()));
  auto replayed = replay(context, plan, staged, more);
  CT_TRY(speculation.end());
  if (!replayed) {
    Error error = std::move(replayed.error());
    error.message += "; " + std::string(then);
    return fail(std::move(error));
  }
  return std::move(*replayed);
}

/// "$N" for the tasks the plan creates, their ids otherwise.
std::map<std::string, std::string> placeholder_names(const batch::Ran& ran) {
  std::set<std::string> created = created_by(ran.changes);
  std::map<std::string, std::string> names;
  for (std::size_t i = 0; i < ran.ids.size(); ++i)
    if (created.contains(ran.ids[i])) names.emplace(ran.ids[i], "$" + std::to_string(i + 1));
  return names;
}

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
  if (auto order = graph.ready_order(); !order.empty()) out.set("next", name(graph.tasks[order.front()].id));
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

json::Value plan_row(const Plan& plan) {
  json::Value row = json::Value::object();
  row.set("id", plan.id);
  row.set("label", plan.label);
  if (!plan.epic_id.empty()) row.set("epicId", plan.epic_id);
  row.set("status", plan.status);
  row.set("ops", static_cast<std::int64_t>(plan.ops.size()));
  if (!plan.agent.empty()) row.set("agent", plan.agent);
  row.set("updatedAt", format_iso8601(plan.updated_at));
  return row;
}

// -- handlers --------------------------------------------------------------------------------

struct BeginArgs {
  std::string label;
  std::optional<std::string> epic_id;
};

Result<Reply> begin(Context& context, const BeginArgs& args) {
  Plan plan;
  CT_TRY_ASSIGN(std::int64_t number, context.db().next_plan_number());
  plan.id = prefixed_id("PL", number);
  plan.label = args.label;
  if (const auto& epic = args.epic_id) {
    TaskEngine tasks(context.db(), *context.config, 0, context.session, nullptr);
    CT_TRY_ASSIGN(Task task, tasks.get(*epic));
    plan.epic_id = task.id;
  }
  plan.ops = json::Value::array();
  batch::Ran none;
  CT_TRY_ASSIGN(plan.base, rest_on(context, plan, {}, none, /*fresh=*/true));
  CT_TRY_ASSIGN(plan.agent, context.agent_name());
  plan.session = context.session;
  plan.created_at = plan.updated_at = context.now();
  CT_TRY(context.db().put_plan(plan));
  if (context.audit) context.record({"", "plan." + plan.id, json::Value(), "open"});
  json::Value data = json::Value::object();
  data.set("plan", plan.id);
  return Reply::of(std::move(data));
}

/// The params of an operation on one plan.
struct PlanArgs {
  std::string plan;
};

struct ApplyArgs {
  std::string plan;
  json::Value ops;
};

Result<Reply> apply(Context& context, const ApplyArgs& args) {
  CT_TRY_ASSIGN(Plan plan, open_plan(context, args.plan));
  const std::size_t before = plan.ops.size();
  // One call sends at most kMaxOps; the plan they join holds at most kMaxPlanOps, checked here,
  // where it is built, and read back under that same limit (staged_ops).
  CT_TRY_ASSIGN(std::vector<batch::Op> more, batch::parse(*context.registry, args.ops, before, batch::kCallOps));
  if (before + more.size() > batch::kPlanOps.max)
    return fail(Error(ErrorCode::Validation, plan.id + " would hold " + std::to_string(before + more.size()) + " ops; " +
                                                 std::string(batch::kPlanOps.holder) + " at most " +
                                                 std::to_string(batch::kPlanOps.max))
                    .with_fix(std::string(batch::kPlanOps.fix))
                    .with_detail("plan", plan.id)
                    .with_detail("max", static_cast<std::int64_t>(batch::kPlanOps.max)));
  for (std::size_t i = 0; i < more.size(); ++i)
    if (more[i].spec->external)
      return fail(Error(ErrorCode::InvalidParams,
                        "op " + std::to_string(before + i + 1) + " (" + more[i].spec->full_name() +
                            ") checks evidence when it runs, so a plan cannot stage it")
                      .with_fix("commit the plan first, then call " + more[i].spec->full_name() + " on its own")
                      .with_detail("op", static_cast<std::int64_t>(before + i + 1)));
  CT_TRY_ASSIGN(std::vector<batch::Op> staged, staged_ops(context, plan));
  CT_TRY_ASSIGN(batch::Ran ran, tried(context, plan, staged, more, "nothing was staged"));
  std::vector<batch::Op> all = std::move(staged);
  all.insert(all.end(), more.begin(), more.end());
  CT_TRY_ASSIGN(plan.base, rest_on(context, plan, all, ran, /*fresh=*/false, /*first_new=*/before));
  plan.ops = batch::ops_json(all);
  plan.updated_at = context.now();
  CT_TRY(context.db().put_plan(plan));
  if (context.audit)
    context.record({"", "plan." + plan.id, static_cast<std::int64_t>(before), static_cast<std::int64_t>(all.size())});
  json::Value data = json::Value::object();
  data.set("plan", plan.id);
  data.set("ops", static_cast<std::int64_t>(all.size()));
  data.set("from", static_cast<std::int64_t>(before + 1));  // the new ops are $from…$ops
  std::vector<std::string> warnings;
  for (auto& warning : ran.warnings)
    if (warning.starts_with("op ")) warnings.push_back(std::move(warning));
  return Reply::warned(std::move(data), std::move(warnings));
}

struct ListArgs {
  std::string status;
  std::int64_t limit = 0;
  std::int64_t offset = 0;
};

Result<Reply> list(Context& context, const ListArgs& args) {
  std::string status = args.status;
  if (status == "all") status.clear();
  const std::int64_t limit = args.limit;
  const std::int64_t offset = args.offset;
  CT_TRY_ASSIGN(std::vector<Plan> plans, context.db().list_plans(status, limit, offset));
  CT_TRY_ASSIGN(std::int64_t total, context.db().count_plans(status));
  json::Value rows = json::Value::array();
  for (const auto& plan : plans) rows.push_back(plan_row(plan));
  Reply reply = Reply::paged(std::move(rows), Page{total, static_cast<std::int64_t>(plans.size()), offset});
  reply.note = no_data_if(plans.empty() && offset == 0);
  return reply;
}

struct DiffArgs {
  std::vector<std::string> plans;
  std::string detail;
};

Result<Reply> diff(Context& context, const DiffArgs& args) {
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
    auto ran = replay(context, plan, *staged);
    if (!ran) {
      CT_TRY(speculation.end());
      shown_failing(ran.error());
      continue;
    }
    CT_TRY_ASSIGN(Graph after, load_scope_graph(context, plan.epic_id));
    CT_TRY(speculation.end());
    const auto names = placeholder_names(*ran);
    changes_summary(row, *ran, names, after, full);
    row.set("before", graph_summary(before_graphs.at(plan.epic_id), {}, full));
    row.set("after", graph_summary(after, names, full));
    out.push_back(std::move(row));
  }
  return Reply::of(std::move(out));
}

Result<Reply> commit(Context& context, const PlanArgs& args) {
  CT_TRY_ASSIGN(Plan plan, open_plan(context, args.plan));
  if (plan.ops.empty())
    return fail(Error(ErrorCode::Validation, plan.id + " holds no ops: there is nothing to commit")
                    .with_fix(call("plan.apply", {{"plan", plan.id}, {"ops", example_ops()}}) + " stages changes first")
                    .with_detail("plan", plan.id));
  CT_TRY_ASSIGN(std::vector<batch::Op> staged, staged_ops(context, plan));
  CT_TRY_ASSIGN(json::Value moved, moved_since(context, plan));
  if (!moved.empty()) {
    const json::Value& first = moved.as_array().front();
    std::string what = first["id"].as_string() + (first["was"].is_null() ? " was added" : first["now"].is_null() ? " is gone" : " changed");
    return fail(Error(ErrorCode::ConcurrentModification,
                      plan.id + " rests on tasks that moved since it was staged: " + what +
                          (moved.size() > 1 ? " and " + std::to_string(moved.size() - 1) + " more" : ""))
                    .with_fix(call("plan.rebase", {{"plan", plan.id}}) + " takes the moves in where nothing conflicts; " +
                              call("plan.diff", {{"plans", json::Value::array_of(std::vector<std::string>{plan.id})}}) +
                              " shows it again")
                    .with_detail("plan", plan.id)
                    .with_detail("moved", std::move(moved)));
  }
  CT_TRY_ASSIGN(batch::Ran ran, replay(context, plan, staged));
  plan.status = "committed";
  plan.updated_at = context.now();
  plan.closed_at = plan.updated_at;
  json::Value outcome = json::Value::object();
  outcome.set("ids", json::Value::array_of(ran.ids));
  plan.outcome = outcome;
  CT_TRY(context.db().put_plan(plan));
  if (context.audit) {
    // One row for the whole plan, as a batch: tasks.undo takes it back whole.
    if (json::Value made = batch::placeholders_json(staged, ran.ids); !made.empty())
      context.audit->params.set("placeholders", std::move(made));
    for (auto& change : ran.changes) context.audit->changes.push_back(std::move(change));
    // tasks.undo of this row opens the plan again (domains/tasks/tasks_undo.cpp).
    context.record({"", "plan." + plan.id, "open", "committed"});
  }
  json::Value data = json::Value::object();
  data.set("plan", plan.id);
  data.set("ids", json::Value::array_of(ran.ids));
  return Reply::warned(std::move(data), std::move(ran.warnings));
}

struct DiscardArgs {
  std::string plan;
  std::optional<std::string> why;
};

Result<Reply> discard(Context& context, const DiscardArgs& args) {
  CT_TRY_ASSIGN(Plan plan, get_plan(context, args.plan));
  json::Value data = json::Value::object();
  data.set("plan", plan.id);
  if (plan.status == "discarded") return Reply::noted(std::move(data), ErrorCode::NoChange);
  CT_TRY_ASSIGN(plan, open_plan(context, plan.id));
  plan.status = "discarded";
  plan.updated_at = context.now();
  plan.closed_at = plan.updated_at;
  json::Value outcome = json::Value::object();
  if (args.why) outcome.set("reason", *args.why);
  plan.outcome = outcome;
  CT_TRY(context.db().put_plan(plan));
  if (context.audit) context.record({"", "plan." + plan.id, "open", "discarded"});
  return Reply::of(std::move(data));
}

/// Whether another agent's change of a field (`base` → `theirs`) survives the plan's (`theirs` →
/// `ours`): for a list (labels, depends, notes, acceptance …) when every item they added is still
/// there and none they removed came back — an append-only list never loses theirs; for a single
/// value never, since the plan replaces it.
bool keeps_theirs(const json::Value& base, const json::Value& theirs, const json::Value& ours) {
  auto list = [](const json::Value& value) { return value.is_array() || value.is_null(); };
  if (!list(base) || !list(theirs) || !list(ours) || !(base.is_array() || theirs.is_array() || ours.is_array()))
    return false;
  static const json::Value::Array kNone;
  auto items = [](const json::Value& value) -> const json::Value::Array& { return value.is_array() ? value.as_array() : kNone; };
  auto holds = [&](const json::Value& value, const json::Value& item) {
    return std::find(items(value).begin(), items(value).end(), item) != items(value).end();
  };
  for (const auto& item : items(theirs))
    if (!holds(base, item) && !holds(ours, item)) return false;  // they added it; the plan drops it
  for (const auto& item : items(base))
    if (!holds(theirs, item) && holds(ours, item)) return false;  // they removed it; the plan brings it back
  return true;
}

/// The plan's field changes that would overwrite another agent's since it was staged, per field:
/// {id, field, base (as staged; absent when unknown), ours (what the plan writes now), theirs (the
/// value now)}. `ran`: the plan replayed on the store as it is; `moved`: the tasks whose version
/// moved. A field whose base the plan did not keep (staged before bases were kept per field, or one
/// an op left as it was when staged) conflicts when its task moved: nothing tells the change apart.
json::Value field_conflicts(const Plan& plan, const batch::Ran& ran, const std::set<std::string>& moved) {
  const auto names = placeholder_names(ran);
  auto named = [&](const json::Value& value) {
    auto rename = [&](const json::Value& item) {
      if (!item.is_string()) return item;
      auto found = names.find(item.as_string());
      return found == names.end() ? item : json::Value(found->second);
    };
    if (!value.is_array()) return rename(value);
    json::Value out = json::Value::array();
    for (const auto& item : value.as_array()) out.push_back(rename(item));
    return out;
  };
  const json::Value& fields = plan.base["fields"];
  json::Value conflicts = json::Value::array();
  for (const auto& [key, edit] : own_edits(ran)) {
    const auto& [task, field] = key;
    const json::Value* base = fields.is_object() && fields[task].is_object() ? fields[task].find(field) : nullptr;
    if (base ? (*base == edit.before || keeps_theirs(*base, edit.before, edit.after)) : !moved.contains(task)) continue;
    json::Value row = json::Value::object();
    row.set("id", task);
    row.set("field", field);
    if (base) row.set("base", *base);
    row.set("ours", named(edit.after));
    row.set("theirs", edit.before);
    conflicts.push_back(std::move(row));
  }
  return conflicts;
}

/// A value in a message: a string quoted, anything else as JSON; cut to 80 characters.
std::string shown(const json::Value& value) {
  std::string text = value.is_string() ? "'" + value.as_string() + "'" : value.dump();
  return clip(text, 80);
}

/// "T004.title 'Their title' overwritten with 'Plan's title'" — what a forced rebase overwrites.
std::string overwrite_text(const json::Value& conflict) {
  return conflict["id"].as_string() + "." + conflict["field"].as_string() + " " + shown(conflict["theirs"]) +
         " overwritten with " + shown(conflict["ours"]);
}

struct RebaseArgs {
  std::string plan;
  bool force = false;
};

Result<Reply> rebase(Context& context, const RebaseArgs& args) {
  CT_TRY_ASSIGN(Plan plan, open_plan(context, args.plan));
  // A plan that cannot be read is never "nothing to do": its error comes first.
  CT_TRY_ASSIGN(std::vector<batch::Op> staged, staged_ops(context, plan));
  CT_TRY_ASSIGN(json::Value moved, moved_since(context, plan));
  json::Value data = json::Value::object();
  data.set("plan", plan.id);
  if (moved.empty()) return Reply::noted(std::move(data), ErrorCode::NoChange);
  // The plan replayed on the store as it is: what it would change now, field by field. A field
  // another agent changed since it was staged, which the plan changes too, is a conflict; their
  // change of anything else — another field of the same task, a note beside the plan's — is taken in.
  CT_TRY_ASSIGN(batch::Ran ran,
                tried(context, plan, staged, {}, "the plan no longer applies (discard it and stage it again)"));
  std::set<std::string> moved_ids;
  for (const auto& row : moved.as_array()) moved_ids.insert(row["id"].as_string());
  json::Value conflicts = field_conflicts(plan, ran, moved_ids);
  std::vector<std::string> warnings;
  if (!conflicts.empty()) {
    std::vector<std::string> what;
    for (const auto& conflict : conflicts.as_array())
      what.push_back(conflict["id"].as_string() + "." + conflict["field"].as_string());
    const json::Value& first = conflicts.as_array().front();
    const bool unknown_base = std::ranges::any_of(conflicts.as_array(), [](const json::Value& c) { return !c.contains("base"); });
    if (!args.force)
      return fail(Error(ErrorCode::ConcurrentModification,
                        plan.id + " changes " + join(what, ", ") + ", which " + (what.size() == 1 ? "was" : "were") +
                            " changed since it was staged: rebasing would overwrite " +
                            (what.size() == 1 ? shown(first["theirs"]) + " with " + shown(first["ours"])
                                              : std::string("each (details.conflicts: base, ours, theirs)")) +
                            (unknown_base ? std::string(" (a field without a base — one the plan left as it was when "
                                                        "staged, or a plan staged before bases were kept — is named "
                                                        "when its task moved)")
                                          : ""))
                      .with_fix(Advice("read " + first["id"].as_string() + " (") +
                                call("tasks.show", {{"id", first["id"].as_string()}}) +
                                "); rebase with force:true to overwrite exactly these fields, or discard the plan and "
                                "stage it again")
                      .with_detail("plan", plan.id)
                      .with_detail("conflicts", std::move(conflicts))
                      .with_detail("moved", moved));
    for (const auto& conflict : conflicts.as_array())
      warnings.push_back("forced: " + overwrite_text(conflict));
  }
  CT_TRY_ASSIGN(plan.base, rest_on(context, plan, staged, ran, /*fresh=*/true));
  plan.updated_at = context.now();
  CT_TRY(context.db().put_plan(plan));
  if (context.audit) context.record({"", "plan." + plan.id, "rebased", static_cast<std::int64_t>(moved.size())});
  data.set("moved", std::move(moved));
  if (!conflicts.empty()) data.set("overwrites", std::move(conflicts));
  return Reply::warned(std::move(data), std::move(warnings));
}

/// [{operation:"tasks.add", params:{title:"First step"}}], for fixes that name plan.apply.
json::Value example_ops() {
  json::Value params = json::Value::object();
  params.set("title", "First step");
  json::Value op = json::Value::object();
  op.set("operation", "tasks.add");
  op.set("params", std::move(params));
  json::Value ops = json::Value::array();
  ops.push_back(std::move(op));
  return ops;
}

ParamSpec plan_param() {
  return ParamSpec{.name = "plan", .type = ParamType::String, .required = true, .pattern = kPlanPattern,
                   .description = "Plan id, e.g. PL001", .positional = true};
}

ParamSpec ops_param() {
  return ParamSpec{.name = "ops", .type = ParamType::Object, .required = true,
                   .description = "[{operation, params}] as tasks.batch takes them, at most 500 a call and 2000 a plan; "
                                  "\"$N\" as a task id is the plan's op N's task"};
}

}  // namespace

void register_plan_domain(Registry& registry) {
  const std::vector<ErrorCode> op_errors = batch::op_errors(registry, {ErrorCode::NotFound, ErrorCode::Validation,
                                                                         ErrorCode::ConcurrentModification});
  const auto begin_args = bind(
      field(&BeginArgs::label, {.name = "label", .type = ParamType::String, .required = true, .min = 1, .max = 120,
                                .description = "What the plan is for", .positional = true, .single_line = true}),
      field(&BeginArgs::epic_id, {.name = "epicId", .type = ParamType::TaskId,
                                  .description = "The epic it decomposes: its whole subtree is what the plan rests on"}));
  registry.add({.domain = "plan", .name = "begin", .gateway = Gateway::Mutate,
                .summary = "Start a plan: changes staged apart until committed",
                .params = begin_args.specs(),
                .returns = "{plan}",
                .errors = {ErrorCode::NotFound},
                .examples = {{R"({"label":"split auth","epicId":"T001"})", "a plan for epic T001"}},
                .tier = 2, .handler = begin_args.handler(begin)});
  const auto apply_args = bind(field(&ApplyArgs::plan, plan_param()), field(&ApplyArgs::ops, ops_param()));
  registry.add({.domain = "plan", .name = "apply", .gateway = Gateway::Mutate,
                .summary = "Stage changes in a plan (checked, not yet made)",
                .params = apply_args.specs(),
                .returns = "{plan, ops (how many it holds), from (the first new op: $from…$ops)}; the ops are run on "
                           "the store plus what the plan holds and taken back; one that fails answers its error",
                .errors = op_errors,
                .examples = {{R"({"plan":"PL001","ops":[{"operation":"tasks.add","params":{"title":"API","parent":"T001"}},{"operation":"tasks.add","params":{"title":"UI","parent":"T001","depends":["$1"]}}]})",
                              "two tasks, the second waiting on the first"}},
                .tier = 2, .handler = apply_args.handler(apply)});
  const auto list_args = bind(
      field(&ListArgs::status, {.name = "status", .type = ParamType::Enum, .default_json = R"("open")",
                                .choices = {"open", "committed", "discarded", "all"}, .description = "Which plans"}),
      field(&ListArgs::limit, {.name = "limit", .type = ParamType::Int, .default_json = "20", .min = 1, .max = 200,
                               .description = "Rows per page"}),
      field(&ListArgs::offset, {.name = "offset", .type = ParamType::Int, .default_json = "0", .min = 0,
                                .description = "Rows to skip"}));
  registry.add({.domain = "plan", .name = "list", .gateway = Gateway::Query,
                .summary = "List plans",
                .params = list_args.specs(),
                .returns = "[{id, label, epicId?, status, ops, agent?, updatedAt}], newest first",
                .examples = {{R"({})", "the open plans"}},
                .tier = 2, .handler = list_args.handler(list)});
  const auto diff_args = bind(
      field(&DiffArgs::plans, {.name = "plans", .type = ParamType::Array, .required = true, .min = 1, .max = 5,
                               .pattern = kPlanPattern, .description = "Plan ids", .positional = true}),
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
  const auto plan_args = bind(field(&PlanArgs::plan, plan_param()));
  OperationSpec commit_spec{.domain = "plan", .name = "commit", .gateway = Gateway::Mutate,
                .summary = "Make a plan's changes, all at once",
                .params = plan_args.specs(),
                .returns = "{plan, ids[the task of each op]}; one audit row (tasks.undo takes it back whole). "
                           "E_CONCURRENT_MODIFICATION (details.moved) when what it rests on moved: plan.rebase",
                .errors = op_errors,
                .examples = {{R"({"plan":"PL001"})", "make every change it stages"}},
                .needs_session = true, .tier = 2, .handler = plan_args.handler(commit)};
  registry.add(std::move(commit_spec));
  const auto discard_args =
      bind(field(&DiscardArgs::plan, plan_param()),
           field(&DiscardArgs::why, {.name = "why", .type = ParamType::String, .max = 300,
                                     .description = "Why it is dropped"}));
  registry.add({.domain = "plan", .name = "discard", .gateway = Gateway::Mutate,
                .summary = "Drop a plan; nothing it staged is made",
                .params = discard_args.specs(),
                .returns = "{plan}; E_NO_CHANGE note when already discarded",
                .errors = {ErrorCode::NotFound, ErrorCode::Validation},
                .examples = {{R"({"plan":"PL002","why":"PL001 won"})", "drop the other decomposition"}},
                .idempotent = true, .tier = 2, .handler = discard_args.handler(discard)});
  const auto rebase_args = bind(
      field(&RebaseArgs::plan, plan_param()),
      field(&RebaseArgs::force, {.name = "force", .type = ParamType::Bool,
                                 .description = "Also when a field it changes was changed since (that change is "
                                                "overwritten)"}));
  registry.add({.domain = "plan", .name = "rebase", .gateway = Gateway::Mutate,
                .summary = "Re-check a plan on the store as it is now",
                .params = rebase_args.specs(),
                .returns = "{plan, moved[{id, was, now}], overwrites?}: what it now rests on; E_NO_CHANGE note when "
                           "nothing moved; E_CONCURRENT_MODIFICATION (details.conflicts[{id, field, base, ours, theirs}]) "
                           "when a field it changes was changed since — other fields and notes are taken in",
                .errors = op_errors,
                .examples = {{R"({"plan":"PL002"})", "take in what another plan committed"}},
                .tier = 2, .handler = rebase_args.handler(rebase)});
}

}  // namespace ct
