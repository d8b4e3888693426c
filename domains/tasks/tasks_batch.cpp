// tasks.batch — several changes of tasks in one call, all or nothing (domains/batch.h). The ops'
// external steps (the evidence checks of tasks.complete) run first, before the transaction; then
// every op runs in the call's transaction, and their changes make the call's one audit row, which
// tasks.undo takes back whole. A dry run answers every change it would make.
#include "domains/batch.h"
#include "domains/tasks/tasks_common.h"

namespace ct::tasks {
namespace {

struct BatchArgs {
  json::Value ops;
  bool dry_run = false;
};

Result<Reply> external(Context& context, const BatchArgs& args) {
  CT_TRY_ASSIGN(std::vector<batch::Op> ops, batch::parse(*context.registry, args.ops, 0, batch::kCallOps));
  CT_TRY_ASSIGN(json::Value externals, batch::run_externals(context, ops));
  return Reply::of(std::move(externals));
}

Result<Reply> run_batch(Context& context, const BatchArgs& args) {
  CT_TRY_ASSIGN(std::vector<batch::Op> ops, batch::parse(*context.registry, args.ops, 0, batch::kCallOps));
  auto ran = batch::run(context, ops, {}, context.external ? &context.external->data : nullptr);
  if (!ran) {
    Error error = std::move(ran.error());
    if (ops.size() > 1) error.message += "; nothing was changed (a batch is all or nothing)";
    return fail(std::move(error));
  }
  json::Value data = json::Value::object();
  data.set("results", std::move(ran->results));
  if (args.dry_run) data.set("changes", changes_json(ran->changes));
  if (context.audit) {
    // One row for the whole batch: undo takes it back as one. It says what each placeholder became.
    if (json::Value made = batch::placeholders_json(ops, ran->ids); !made.empty())
      context.audit->params.set("placeholders", std::move(made));
    for (auto& change : ran->changes) context.audit->changes.push_back(std::move(change));
  }
  return Reply::warned(std::move(data), std::move(ran->warnings));
}

}  // namespace

void register_tasks_batch(Registry& registry) {
  const auto args = bind(
      field(&BatchArgs::ops, {.name = "ops", .type = ParamType::Object, .required = true,
                              .description = "[{operation, params}], at most 500: tasks.add, update, complete, delete, "
                                             "reparent, relate…; \"$N\" as a task id is op N's task"}),
      field(&BatchArgs::dry_run, {.name = "dryRun", .type = ParamType::Bool,
                                  .description = "Answer every change it would make, change nothing", .dry_run = true}));
  registry.add({.domain = "tasks", .name = "batch", .gateway = Gateway::Mutate,
                .summary = "Run several task changes at once, all or nothing",
                .params = args.specs(),
                .returns = "{results[{op, id?, …its reply}], changes? (dryRun: [{id, field, from, to}])}; one audit "
                           "row: tasks.undo takes the batch back whole. A failing op answers its error (details.op) "
                           "and nothing changes",
                .errors = batch::op_errors(registry, {}),
                .examples = {{R"({"ops":[{"operation":"tasks.add","params":{"title":"API"}},{"operation":"tasks.add","params":{"title":"UI","depends":["$1"]}}]})",
                              "two tasks, the second waiting on the first"},
                             {R"({"ops":[{"operation":"tasks.update","params":{"id":"T002","priority":"high"}},{"operation":"tasks.complete","params":{"id":"T001"}}]})",
                              "two changes together"}},
                .needs_session = true, .tier = 2, .external = args.handler(external),
                .external_checks_only = true, .handler = args.handler(run_batch)});
}

}  // namespace ct::tasks
