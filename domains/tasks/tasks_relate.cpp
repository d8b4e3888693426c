// tasks domain — tasks.relate: a link between two tasks that blocks neither (or every link to the
// target taken off).
#include "domains/tasks/tasks_common.h"

namespace ct::tasks {
namespace {

struct RelateArgs {
  std::string id;
  std::string target;
  std::string type;
  std::optional<std::string> notes;
  bool remove = false;
};

Result<Reply> relate(Context& context, const RelateArgs& args) {
  auto engine_ = engine(context);
  if (args.remove) {
    CT_TRY_ASSIGN(UpdateResult result, engine_.unrelate(args.id, args.target));
    return update_reply(result);
  }
  CT_TRY_ASSIGN(UpdateResult result, engine_.relate(args.id, args.target, args.type, args.notes.value_or("")));
  return update_reply(result);
}

}  // namespace

void register_tasks_relate(Registry& registry) {
  const auto args = bind(
      field(&RelateArgs::id, id_param()),
      field(&RelateArgs::target, {.name = "target", .type = ParamType::TaskId, .required = true,
                                  .description = "The other task", .positional = true}),
      field(&RelateArgs::type, {.name = "type", .type = ParamType::Enum, .default_json = R"("relates-to")",
                                .choices = {"relates-to", "spawned-from", "deferred-to", "supersedes", "duplicates"},
                                .description = "Kind of link"}),
      field(&RelateArgs::notes, {.name = "notes", .type = ParamType::String, .max = 200,
                                 .description = "Why they are linked"}),
      field(&RelateArgs::remove, {.name = "remove", .type = ParamType::Bool,
                                  .description = "Remove every link to target instead"}));
  add_task_write(registry,
                 {.domain = "tasks", .name = "relate", .gateway = Gateway::Mutate,
                  .summary = "Link two tasks without blocking either",
                  .params = args.specs(),
                  .returns = "{relates,version}; E_NO_CHANGE note when nothing changed",
                  .errors = {ErrorCode::NotFound, ErrorCode::Validation},
                  .examples = {{R"({"id":"T005","target":"T002","type":"duplicates"})", "mark a duplicate"},
                               {R"({"id":"T005","target":"T002","remove":true})", "unlink them"}},
                  .idempotent = true, .tier = 2, .text_view = TextView::Linked, .batchable = true, .original_names = {"tasks.relates.add"},
                  .handler = args.handler(relate)});
}

}  // namespace ct::tasks
