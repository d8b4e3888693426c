// tasks domain — tasks.relate: a link between two tasks that blocks neither (or every link to the
// target taken off).
#include "domains/tasks/tasks_common.h"

namespace ct::tasks {
namespace {

Result<Reply> relate(Context& context, const Params& params) {
  auto engine_ = engine(context);
  if (params.flag("remove")) {
    CT_TRY_ASSIGN(UpdateResult result, engine_.unrelate(params.str("id"), params.str("target")));
    return update_reply(result, params);
  }
  CT_TRY_ASSIGN(UpdateResult result, engine_.relate(params.str("id"), params.str("target"), params.str("type"),
                                            params.opt_str("notes").value_or("")));
  return update_reply(result, params);
}

}  // namespace

void register_tasks_relate(Registry& registry) {
  add_task_write(registry,
                 {.domain = "tasks", .name = "relate", .gateway = Gateway::Mutate,
                  .summary = "Link two tasks without blocking either",
                  .params = {id_param(),
                             {.name = "target", .type = ParamType::TaskId, .required = true, .description = "The other task",
                              .positional = true},
                             {.name = "type", .type = ParamType::Enum, .default_json = R"("relates-to")",
                              .choices = {"relates-to", "spawned-from", "deferred-to", "supersedes", "duplicates"},
                              .description = "Kind of link"},
                             {.name = "notes", .type = ParamType::String, .max = 200, .description = "Why they are linked"},
                             {.name = "remove", .type = ParamType::Bool, .description = "Remove every link to target instead"}},
                  .returns = "{relates,version}; E_NO_CHANGE note when nothing changed",
                  .errors = {ErrorCode::NotFound, ErrorCode::Validation},
                  .examples = {{R"({"id":"T005","target":"T002","type":"duplicates"})", "mark a duplicate"},
                               {R"({"id":"T005","target":"T002","remove":true})", "unlink them"}},
                  .idempotent = true, .tier = 2, .text_view = TextView::Linked, .original_names = {"tasks.relates.add"},
                  .handler = relate});
}

}  // namespace ct::tasks
