// What the plan domain's files share (plan_common.h): the plan a call names, what a plan rests on
// and its ops replayed on the store as it is (what moved since: plan_moved.cpp).
#include "domains/plan/plan_common.h"

#include "domains/bind.h"
#include "engines/store/task_json.h"

namespace ct::plan {
namespace {

/// The tasks an op names in its task id params (placeholders aside), as this store spells them.
void named_tasks(const batch::Op& op, std::set<std::string>& out) {
  for (const auto& text : batch::id_values(op))
    if (!batch::placeholder(text))
      if (auto id = normalize_task_id(text)) out.insert(*id);
}

Result<std::map<std::string, std::int64_t>> versions_of(Context& context, const std::set<std::string>& ids) {
  std::map<std::string, std::int64_t> out;
  if (ids.empty()) return out;
  CT_TRY_ASSIGN(std::vector<Task> tasks, context.db().get_tasks(std::vector<std::string>(ids.begin(), ids.end())));
  for (const auto& task : tasks) out.emplace(task.id, task.version);
  return out;
}

}  // namespace

Result<Plan> get_plan(Context& context, const std::string& id) {
  const bool named = !(id.size() > 2 && id.starts_with("PL") && id[2] >= '0' && id[2] <= '9');
  CT_TRY_ASSIGN(std::optional<Plan> plan, named ? context.db().plan_named(id) : context.db().get_plan(id));
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

Result<std::vector<batch::Op>> staged_ops(Context& context, const Plan& plan) {
  if (plan.ops.empty()) return std::vector<batch::Op>{};
  auto ops = batch::parse(*context.registry, plan.ops, 0, batch::Holder::Plan, batch::kPlanOps, "plan.ops");
  if (!ops) {
    Error error = std::move(ops.error());
    error.message = plan.id + " cannot be read: " + error.message;
    return fail(std::move(error).with_fix(Advice("discard it (") + call("plan.discard", {{"plan", plan.id}}) +
                                          ") and stage its changes again")
                    .with_detail("plan", plan.id));
  }
  return ops;
}

std::set<std::string> created_by(const std::vector<FieldChange>& changes) {
  std::set<std::string> out;
  for (const auto& change : changes)
    if (change.field == "created") out.insert(change.task_id);
  return out;
}

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

Result<void> rest_on(Context& context, Plan& plan, std::span<const batch::Op> ops, const batch::Ran& ran, bool fresh,
                     std::size_t first_new) {
  std::set<std::string> created = created_by(ran.changes);
  std::set<std::string> named;
  for (const auto& op : ops) named_tasks(op, named);
  for (const auto& change : ran.changes)
    if (!change.task_id.empty()) named.insert(change.task_id);
  std::erase_if(named, [&](const std::string& id) { return created.contains(id); });

  // Afresh, the plan rests on the audit trail's last row (schema v17): what moved since is read
  // from the changes after it, not from a copy of the epic's versions taken here — plan.begin read
  // every task of the subtree (issue 56). A plan begun before keeps the versions it holds.
  const bool kept = !fresh && plan.base["versions"].is_object();
  json::Value versions = kept ? plan.base["versions"] : json::Value::object();
  if (fresh) {
    CT_TRY_ASSIGN(plan.since, context.db().last_audit_seq());
  }
  // The ids are unique: each is appended, not looked for among those before it (json::Value::set).
  std::set<std::string, std::less<>> have;
  for (const auto& member : versions.as_object()) have.insert(member.first);
  std::set<std::string> unseen;
  for (const auto& id : named)
    if (!have.contains(id)) unseen.insert(id);
  CT_TRY_ASSIGN(auto found, versions_of(context, unseen));
  for (auto& [id, version] : found) versions.as_object().emplace_back(id, json::Value(version));

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
  plan.base = std::move(base);
  return {};
}

Result<batch::Ran> replay(Context& context, NestedRuns& runs, const Plan& plan, std::span<const batch::Op> staged,
                          std::span<const batch::Op> more) {
  std::vector<batch::Op> all(staged.begin(), staged.end());
  all.insert(all.end(), more.begin(), more.end());
  auto ran = batch::run(context, runs, all);
  if (!ran) {
    Error error = std::move(ran.error());
    error.message = plan.id + ", " + error.message;
    return fail(std::move(error).with_detail("plan", plan.id));
  }
  return std::move(*ran);
}

Result<batch::Ran> tried(Context& context, NestedRuns& runs, const Plan& plan, std::span<const batch::Op> staged,
                         std::span<const batch::Op> more, std::string_view then) {
  CT_TRY_ASSIGN(Speculation speculation, Speculation::begin(context.db()));
  auto replayed = replay(context, runs, plan, staged, more);
  CT_TRY(speculation.end());
  if (!replayed) {
    Error error = std::move(replayed.error());
    error.message += "; " + std::string(then);
    return fail(std::move(error));
  }
  return std::move(*replayed);
}

std::map<std::string, std::string> placeholder_names(const batch::Ran& ran) {
  std::set<std::string> created = created_by(ran.changes);
  std::map<std::string, std::string> names;
  for (std::size_t i = 0; i < ran.ids.size(); ++i)
    if (created.contains(ran.ids[i])) names.emplace(ran.ids[i], "$" + std::to_string(i + 1));
  return names;
}

json::Value plan_row(const Plan& plan) {
  json::Value row = json::Value::object();
  row.set("id", plan.id);
  if (!plan.name.empty()) row.set("name", plan.name);
  row.set("label", plan.label);
  if (!plan.epic_id.empty()) row.set("epicId", plan.epic_id);
  row.set("status", plan.status);
  row.set("ops", static_cast<std::int64_t>(plan.ops.size()));
  if (!plan.agent.empty()) row.set("agent", plan.agent);
  row.set("updatedAt", format_iso8601(plan.updated_at));
  return row;
}

ParamSpec plan_param() {
  return ParamSpec{.name = "plan", .type = ParamType::String, .required = true, .pattern = kPlanPattern,
                   .description = "Plan id or name, e.g. PL001", .positional = true};
}

std::vector<ErrorCode> plan_op_errors(const Registry& registry) {
  return batch::op_errors(registry, {ErrorCode::NotFound, ErrorCode::Validation, ErrorCode::ConcurrentModification});
}

}  // namespace ct::plan
