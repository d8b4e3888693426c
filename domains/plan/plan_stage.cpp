// plan.begin, plan.apply and plan.list: a plan started, changes staged in it (checked on the store
// plus what the plan already holds, then taken back) and the plans listed (plan_common.h).
#include "domains/bind.h"
#include "domains/plan/plan_common.h"
#include "engines/rules/task_engine.h"
#include "engines/store/task_json.h"

namespace ct::plan {
namespace {

struct BeginArgs {
  std::string label;
  std::optional<std::string> epic_id;
  std::optional<std::string> name;
};

Result<Reply> begin(Context& context, const BeginArgs& args) {
  Plan plan;
  CT_TRY_ASSIGN(std::int64_t number, context.db().next_plan_number());
  plan.id = prefixed_id("PL", number);
  plan.label = args.label;
  if (args.name) {
    // A name is a branch of the graph that lasts across sessions: one open plan holds it at a time.
    CT_TRY_ASSIGN(std::optional<Plan> holder, context.db().plan_named(*args.name));
    if (holder && holder->status == "open")
      return fail(Error(ErrorCode::Validation, "an open plan is already named " + *args.name + ": " + holder->id)
                      .with_fix(call("plan.diff", {{"plans", json::Value::array_of(std::vector<std::string>{*args.name})}}) +
                                " shows it; commit or discard it first, or pick another name")
                      .with_detail("field", "name")
                      .with_detail("plan", holder->id));
    plan.name = *args.name;
  }
  if (const auto& epic = args.epic_id) {
    TaskEngine tasks(context.db(), *context.config, 0, context.session, nullptr);
    CT_TRY_ASSIGN(Task task, tasks.get(*epic));
    plan.epic_id = task.id;
  }
  plan.ops = json::Value::array();
  batch::Ran none;
  CT_TRY(rest_on(context, plan, {}, none, /*fresh=*/true));
  CT_TRY_ASSIGN(plan.agent, context.agent_name());
  plan.session = context.session;
  plan.created_at = plan.updated_at = context.now();
  CT_TRY(context.db().put_plan(plan));
  if (context.audit) context.record({"", "plan." + plan.id, json::Value(), "open"});
  json::Value data = json::Value::object();
  data.set("plan", plan.id);
  return Reply::of(std::move(data));
}

struct ApplyArgs {
  std::string plan;
  json::Value ops;
};

Result<Reply> apply(Context& context, const ApplyArgs& args, NestedRuns& runs) {
  CT_TRY_ASSIGN(Plan plan, open_plan(context, args.plan));
  const std::size_t before = plan.ops.size();
  // One call sends at most kMaxOps; the plan they join holds at most kMaxPlanOps, checked here,
  // where it is built, and read back under that same limit (staged_ops).
  CT_TRY_ASSIGN(std::vector<batch::Op> more, batch::parse(*context.registry, args.ops, before, batch::Holder::Plan, batch::kCallOps));
  if (before + more.size() > batch::kPlanOps.max)
    return fail(Error(ErrorCode::Validation, plan.id + " would hold " + std::to_string(before + more.size()) + " ops; " +
                                                 std::string(batch::kPlanOps.holder) + " at most " +
                                                 std::to_string(batch::kPlanOps.max))
                    .with_fix(std::string(batch::kPlanOps.fix))
                    .with_detail("plan", plan.id)
                    .with_detail("max", static_cast<std::int64_t>(batch::kPlanOps.max)));
  CT_TRY_ASSIGN(std::vector<batch::Op> staged, staged_ops(context, plan));
  CT_TRY_ASSIGN(batch::Ran ran, tried(context, runs, plan, staged, more, "nothing was staged"));
  std::vector<batch::Op> all = std::move(staged);
  all.insert(all.end(), more.begin(), more.end());
  CT_TRY(rest_on(context, plan, all, ran, /*fresh=*/false, /*first_new=*/before));
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

ParamSpec ops_param() {
  return ParamSpec{.name = "ops", .type = ParamType::Object, .required = true,
                   .description = "[{operation, params}] as tasks.batch takes them, at most 500 a call and 2000 a plan; "
                                  "\"$N\" as a task id is the plan's op N's task"};
}

void register_begin(Registry& registry) {
  const auto begin_args = bind(
      field(&BeginArgs::label, {.name = "label", .type = ParamType::String, .required = true, .min = 1, .max = 120,
                                .description = "What the plan is for", .positional = true, .single_line = true}),
      field(&BeginArgs::epic_id, {.name = "epicId", .type = ParamType::TaskId,
                                  .description = "The epic it decomposes: its whole subtree is what the plan rests on"}),
      field(&BeginArgs::name, {.name = "name", .type = ParamType::String, .pattern = kPlanNamePattern,
                               .description = "A branch name other calls may use for its id, one open plan each"}));
  registry.add({.domain = "plan", .name = "begin", .gateway = Gateway::Mutate,
                .summary = "Start a plan: changes staged apart until committed",
                .params = begin_args.specs(),
                .returns = "{plan}",
                .errors = {ErrorCode::NotFound, ErrorCode::Validation},
                .examples = {{R"({"label":"split auth","epicId":"T001"})", "a plan for epic T001"}},
                .tier = 2, .handler = begin_args.handler(begin)});
}

void register_apply(Registry& registry) {
  const auto apply_args = bind(field(&ApplyArgs::plan, plan_param()), field(&ApplyArgs::ops, ops_param()));
  registry.add({.domain = "plan", .name = "apply", .gateway = Gateway::Mutate,
                .summary = "Stage changes in a plan (checked, not yet made)",
                .params = apply_args.specs(),
                .returns = "{plan, ops (how many it holds), from (the first new op: $from…$ops)}; the ops are run on "
                           "the store plus what the plan holds and taken back; one that fails answers its error",
                .errors = plan_op_errors(registry),
                .examples = {{R"({"plan":"PL001","ops":[{"operation":"tasks.add","params":{"title":"API","parent":"T001"}},{"operation":"tasks.add","params":{"title":"UI","parent":"T001","depends":["$1"]}}]})",
                              "two tasks, the second waiting on the first"}},
                .tier = 2, .handler = apply_args.handler(apply)});
}

void register_list(Registry& registry) {
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
                .returns = "[{id, name?, label, epicId?, status, ops, agent?, updatedAt}], newest first",
                .examples = {{R"({})", "the open plans"}},
                .tier = 2, .handler = list_args.handler(list)});
}

}  // namespace

void register_plan_stage(Registry& registry) {
  register_begin(registry);
  register_apply(registry);
  register_list(registry);
}

}  // namespace ct::plan
