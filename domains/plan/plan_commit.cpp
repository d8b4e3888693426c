// plan.commit, plan.discard and plan.rebase: a plan settled against the store as it is now — its
// changes made in one transaction and one audit row, refused when what it rests on moved; dropped;
// or re-checked, the moves taken in where they touch no field the plan changes (plan_common.h).
#include <algorithm>

#include "core/text.h"
#include "domains/bind.h"
#include "domains/plan/plan_common.h"

namespace ct::plan {
namespace {

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

/// The params of an operation on one plan.
struct PlanArgs {
  std::string plan;
};

Result<Reply> commit(Context& context, const PlanArgs& args, NestedRuns& runs) {
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
  CT_TRY_ASSIGN(batch::Ran ran, replay(context, runs, plan, staged));
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
    row.set("path", task + "." + field);
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

Result<Reply> rebase(Context& context, const RebaseArgs& args, NestedRuns& runs) {
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
                tried(context, runs, plan, staged, {}, "the plan no longer applies (discard it and stage it again)"));
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
                                call("tasks.show", {{"id", first["id"].as_string()}}) + "); settle each field with " +
                                call("plan.resolve", {{"plan", plan.id}, {"path", first["path"].as_string()}, {"take", "theirs"}}) +
                                " (ours, theirs or a value), or rebase with force:true to overwrite them all")
                      .with_detail("plan", plan.id)
                      .with_detail("conflicts", std::move(conflicts))
                      .with_detail("moved", moved));
    for (const auto& conflict : conflicts.as_array())
      warnings.push_back("forced: " + overwrite_text(conflict));
  }
  CT_TRY(rest_on(context, plan, staged, ran, /*fresh=*/true));
  plan.updated_at = context.now();
  CT_TRY(context.db().put_plan(plan));
  if (context.audit) context.record({"", "plan." + plan.id, "rebased", static_cast<std::int64_t>(moved.size())});
  data.set("moved", std::move(moved));
  if (!conflicts.empty()) data.set("overwrites", std::move(conflicts));
  return Reply::warned(std::move(data), std::move(warnings));
}

/// The paths ("T004.title") of `conflicts`.
json::Value conflict_paths(const json::Value& conflicts) {
  json::Value out = json::Value::array();
  for (const auto& conflict : conflicts.as_array()) out.push_back(conflict["path"]);
  return out;
}

struct ResolveArgs {
  std::string plan;
  std::string path;
  std::string take;
  json::Value value;
};

/// One field conflict of a rebase settled (issue 54): `ours` keeps the plan's value (their change
/// is overwritten, knowingly); `theirs` keeps the value another agent set, `value` sets another —
/// both by a tasks.update op appended to the plan. Either way the field's base becomes their value,
/// so the next rebase takes it as settled; a further change of it conflicts again.
Result<Reply> resolve(Context& context, const ResolveArgs& args, NestedRuns& runs) {
  CT_TRY_ASSIGN(Plan plan, open_plan(context, args.plan));
  CT_TRY_ASSIGN(std::vector<batch::Op> staged, staged_ops(context, plan));
  CT_TRY_ASSIGN(json::Value moved, moved_since(context, plan));
  std::set<std::string> moved_ids;
  for (const auto& row : moved.as_array()) moved_ids.insert(row["id"].as_string());
  CT_TRY_ASSIGN(batch::Ran ran,
                tried(context, runs, plan, staged, {}, "the plan no longer applies (discard it and stage it again)"));
  json::Value conflicts = field_conflicts(plan, ran, moved_ids);
  const json::Value* conflict = nullptr;
  for (const auto& row : conflicts.as_array())
    if (row["path"].as_string() == args.path) conflict = &row;
  if (!conflict)
    return fail(Error(ErrorCode::NotFound, plan.id + " has no conflict at " + args.path +
                                               (conflicts.empty() ? std::string(": it has none") : ""))
                    .with_fix(call("plan.rebase", {{"plan", plan.id}}) + " names the conflicts (details.conflicts)")
                    .with_detail("plan", plan.id)
                    .with_detail("conflicts", conflict_paths(conflicts)));
  const std::string task = (*conflict)["id"].as_string();
  const std::string field = (*conflict)["field"].as_string();
  const json::Value theirs = (*conflict)["theirs"];
  if (args.take == "value" && args.value.is_null())
    return fail(Error(ErrorCode::InvalidParams, "take:'value' needs the value to set " + args.path + " to")
                    .with_fix(call("plan.resolve", {{"plan", plan.id}, {"path", args.path}, {"take", "theirs"}}) +
                              " keeps theirs instead")
                    .with_detail("field", "value"));
  if (args.take != "value" && !args.value.is_null())
    return fail(Error(ErrorCode::InvalidParams, "value goes with take:'value' only").with_detail("field", "value"));
  if (args.take != "ours") {
    // The field set to theirs, or to the value given, after everything else the plan does.
    const OperationSpec* update = context.registry->find("tasks", "update");
    const bool settable = update && std::ranges::any_of(update->params, [&](const ParamSpec& p) { return p.name == field; });
    if (!settable)
      return fail(Error(ErrorCode::Validation, "tasks.update does not set " + field + ": " + args.path +
                                                   " can only be resolved as ours, or the plan discarded")
                      .with_fix(call("plan.resolve", {{"plan", plan.id}, {"path", args.path}, {"take", "ours"}}))
                      .with_detail("plan", plan.id)
                      .with_detail("field", "take"));
    json::Value params = json::Value::object();
    params.set("id", task);
    const json::Value& to = args.take == "theirs" ? theirs : args.value;
    params.set(field, to.is_null() ? json::Value("") : to);
    if (to.is_array()) params.set("mode", "replace");
    json::Value op = json::Value::object();
    op.set("operation", "tasks.update");
    op.set("params", std::move(params));
    json::Value ops = json::Value::array();
    ops.push_back(std::move(op));
    CT_TRY_ASSIGN(std::vector<batch::Op> more,
                  batch::parse(*context.registry, ops, staged.size(), batch::Holder::Plan, batch::kCallOps));
    CT_TRY_ASSIGN(ran, tried(context, runs, plan, staged, more, "nothing was resolved"));
    std::vector<batch::Op> all = std::move(staged);
    all.insert(all.end(), more.begin(), more.end());
    CT_TRY(rest_on(context, plan, all, ran, /*fresh=*/false, /*first_new=*/all.size() - more.size()));
    plan.ops = batch::ops_json(all);
  }
  // Their value is the field's base from now on: the plan's write over it is settled.
  if (!plan.base.is_object()) plan.base = json::Value::object();
  json::Value fields = plan.base["fields"].is_object() ? plan.base["fields"] : json::Value::object();
  json::Value of_task = fields[task].is_object() ? fields[task] : json::Value::object();
  of_task.set(field, theirs);
  fields.set(task, std::move(of_task));
  plan.base.set("fields", std::move(fields));
  plan.updated_at = context.now();
  CT_TRY(context.db().put_plan(plan));
  if (context.audit) context.record({"", "plan." + plan.id, args.path, args.take});
  json::Value data = json::Value::object();
  data.set("plan", plan.id);
  data.set("conflicts", conflict_paths(field_conflicts(plan, ran, moved_ids)));
  return Reply::of(std::move(data));
}

void register_commit(Registry& registry) {
  const auto plan_args = bind(field(&PlanArgs::plan, plan_param()));
  OperationSpec commit_spec{.domain = "plan", .name = "commit", .gateway = Gateway::Mutate,
                .summary = "Make a plan's changes, all at once",
                .params = plan_args.specs(),
                .returns = "{plan, ids[the task of each op]}; one audit row (tasks.undo takes it back whole). "
                           "E_CONCURRENT_MODIFICATION (details.moved) when what it rests on moved: plan.rebase",
                .errors = plan_op_errors(registry),
                .examples = {{R"({"plan":"PL001"})", "make every change it stages"}},
                .needs_session = true, .tier = 2, .handler = plan_args.handler(commit)};
  registry.add(std::move(commit_spec));
}

void register_discard(Registry& registry) {
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
}

void register_rebase(Registry& registry) {
  const auto rebase_args = bind(
      field(&RebaseArgs::plan, plan_param()),
      field(&RebaseArgs::force, {.name = "force", .type = ParamType::Bool,
                                 .description = "Also when a field it changes was changed since (that change is "
                                                "overwritten)"}));
  registry.add({.domain = "plan", .name = "rebase", .gateway = Gateway::Mutate,
                .summary = "Re-check a plan on the store as it is now",
                .params = rebase_args.specs(),
                .returns = "{plan, moved[{id, was, now}], overwrites?}: what it now rests on; E_NO_CHANGE note when "
                           "nothing moved; E_CONCURRENT_MODIFICATION (details.conflicts[{path, id, field, base, ours, theirs}]) "
                           "when a field it changes was changed since (plan.resolve settles each) — other fields and notes are taken in",
                .errors = plan_op_errors(registry),
                .examples = {{R"({"plan":"PL002"})", "take in what another plan committed"}},
                .tier = 2, .handler = rebase_args.handler(rebase)});
}

void register_resolve(Registry& registry) {
  const auto resolve_args = bind(
      field(&ResolveArgs::plan, plan_param()),
      field(&ResolveArgs::path, {.name = "path", .type = ParamType::String, .required = true,
                                 .pattern = "T[0-9]{1,15}\\.[a-zA-Z]{1,40}",
                                 .description = "The conflict's path, e.g. T012.title (plan.rebase details.conflicts)"}),
      field(&ResolveArgs::take, {.name = "take", .type = ParamType::Enum, .required = true,
                                 .choices = {"ours", "theirs", "value"},
                                 .description = "ours: the plan's value; theirs: the value now; value: the one given"}),
      field(&ResolveArgs::value, {.name = "value", .type = ParamType::Object,
                                  .description = "With take:'value': what the field becomes", .or_text = true}));
  registry.add({.domain = "plan", .name = "resolve", .gateway = Gateway::Mutate,
                .summary = "Settle one field conflict of a rebase",
                .params = resolve_args.specs(),
                .returns = "{plan, conflicts[paths left]}; plan.rebase once none are left",
                .errors = plan_op_errors(registry),
                .examples = {{R"({"plan":"PL002","path":"T004.title","take":"theirs"})", "keep the other agent's title"}},
                .tier = 2, .handler = resolve_args.handler(resolve)});
}

}  // namespace

void register_plan_commit(Registry& registry) {
  register_commit(registry);
  register_discard(registry);
  register_rebase(registry);
  register_resolve(registry);
}

}  // namespace ct::plan
