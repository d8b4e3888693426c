// tasks domain — a task's place in the tree: tasks.reparent, tasks.promote (to the top level) and
// tasks.reorder among its siblings.
#include "domains/tasks/tasks_common.h"

namespace ct::tasks {
namespace {

Result<Reply> reparent(Context& context, const Params& params) {
  auto engine_ = engine(context);
  CT_TRY_ASSIGN(UpdateResult result, engine_.reparent(params.str("id"), params.str("parent"),
                                              params.opt_integer("ifVersion")));
  return update_reply(result, params);
}

Result<Reply> promote(Context& context, const Params& params) {
  auto engine_ = engine(context);
  CT_TRY_ASSIGN(UpdateResult result, engine_.reparent(params.str("id"), "", params.opt_integer("ifVersion")));
  return update_reply(result, params);
}

Result<Reply> reorder(Context& context, const Params& params) {
  auto engine_ = engine(context);
  CT_TRY_ASSIGN(UpdateResult result, engine_.reorder(params.str("id"), params.integer("position"),
                                             params.opt_integer("ifVersion")));
  return update_reply(result, params);
}

}  // namespace

void register_tasks_move(Registry& registry) {
  add_task_write(registry,
                 {.domain = "tasks", .name = "reparent", .gateway = Gateway::Mutate,
                  .summary = "Move a task under another parent",
                  .params = {id_param(),
                             {.name = "parent", .type = ParamType::TaskId, .required = true, .description = "New parent",
                              .positional = true},
                             if_version_param()},
                  .returns = "{position,type?,version}",
                  .errors = {ErrorCode::NotFound, ErrorCode::ParentNotFound, ErrorCode::DepthExceeded,
                             ErrorCode::SiblingLimit, ErrorCode::InvalidParentType, ErrorCode::CircularReference},
                  .examples = {{R"({"id":"T005","parent":"T002"})", "move T005 under T002"}},
                  .idempotent = true, .tier = 2,
                  .text_view = TextView::Moved, .aliases = {"move", "mv"}, .handler = reparent});
  add_task_write(registry,
                 {.domain = "tasks", .name = "promote", .gateway = Gateway::Mutate,
                  .summary = "Make a task top-level",
                  .params = {id_param(), if_version_param()},
                  .returns = "{parent:null,position,type?,version}",
                  .errors = {ErrorCode::NotFound},
                  .examples = {{R"({"id":"T005"})", "promote T005"}},
                  .idempotent = true, .tier = 2, .text_view = TextView::Promoted, .bulk = true, .handler = promote});
  add_task_write(registry,
                 {.domain = "tasks", .name = "reorder", .gateway = Gateway::Mutate,
                  .summary = "Move a task to a position among its siblings",
                  .params = {id_param(),
                             {.name = "position", .type = ParamType::Int, .required = true, .min = 1,
                              .description = "1-based position", .positional = true},
                             if_version_param()},
                  .returns = "{position?,version} (position when it is not the one sent)",
                  .errors = {ErrorCode::NotFound},
                  .examples = {{R"({"id":"T005","position":1})", "move T005 first"}},
                  .idempotent = true, .tier = 2, .text_view = TextView::Reordered, .handler = reorder});
}

}  // namespace ct::tasks
