// tasks domain — a task's place in the tree: tasks.reparent, tasks.promote (to the top level) and
// tasks.reorder among its siblings.
#include "domains/tasks/tasks_common.h"

namespace ct::tasks {
namespace {

struct ReparentArgs {
  std::string id;
  std::string parent;
  std::optional<std::int64_t> if_version;
};

Result<Reply> reparent(Context& context, const ReparentArgs& args) {
  auto engine_ = engine(context);
  CT_TRY_ASSIGN(UpdateResult result, engine_.reparent(args.id, args.parent, args.if_version));
  return update_reply(result);
}

Result<Reply> promote(Context& context, const VersionedArgs& args) {
  auto engine_ = engine(context);
  CT_TRY_ASSIGN(UpdateResult result, engine_.reparent(args.id, "", args.if_version));
  return update_reply(result);
}

struct ReorderArgs {
  std::string id;
  std::int64_t position = 0;
  std::optional<std::int64_t> if_version;
};

Result<Reply> reorder(Context& context, const ReorderArgs& args) {
  auto engine_ = engine(context);
  CT_TRY_ASSIGN(UpdateResult result, engine_.reorder(args.id, args.position, args.if_version));
  return update_reply(result);
}

}  // namespace

void register_tasks_move(Registry& registry) {
  const auto reparent_args =
      bind(field(&ReparentArgs::id, id_param()),
           field(&ReparentArgs::parent, {.name = "parent", .type = ParamType::TaskId, .required = true,
                                         .description = "New parent", .positional = true}),
           field(&ReparentArgs::if_version, if_version_param()));
  add_task_write(registry,
                 {.domain = "tasks", .name = "reparent", .gateway = Gateway::Mutate,
                  .summary = "Move a task under another parent",
                  .params = reparent_args.specs(),
                  .returns = "{position,type?,version}",
                  .errors = {ErrorCode::NotFound, ErrorCode::ParentNotFound, ErrorCode::DepthExceeded,
                             ErrorCode::SiblingLimit, ErrorCode::InvalidParentType, ErrorCode::CircularReference},
                  .examples = {{R"({"id":"T005","parent":"T002"})", "move T005 under T002"}},
                  .idempotent = true, .tier = 2,
                  .text_view = TextView::Moved, .batchable = true, .aliases = {"move", "mv"},
                  // An epic given a parent becomes a task (TaskEngine::reparent).
                  .effects = [](Context&, const Params&, const std::vector<std::string>& subjects)
                      -> Result<std::vector<Effect>> { return demotions(subjects); },
                  .handler = reparent_args.handler(reparent)});
  const auto promote_args =
      bind(field(&VersionedArgs::id, id_param()), field(&VersionedArgs::if_version, if_version_param()));
  add_task_write(registry,
                 {.domain = "tasks", .name = "promote", .gateway = Gateway::Mutate,
                  .summary = "Make a task top-level",
                  .params = promote_args.specs(),
                  .returns = "{parent:null,position,type?,version}",
                  .errors = {ErrorCode::NotFound},
                  .examples = {{R"({"id":"T005"})", "promote T005"}},
                  .idempotent = true, .tier = 2, .text_view = TextView::Promoted, .bulk = true,
                  .batchable = true, .handler = promote_args.handler(promote)});
  const auto reorder_args =
      bind(field(&ReorderArgs::id, id_param()),
           field(&ReorderArgs::position, {.name = "position", .type = ParamType::Int, .required = true, .min = 1,
                                          .description = "1-based position", .positional = true}),
           field(&ReorderArgs::if_version, if_version_param()));
  add_task_write(registry,
                 {.domain = "tasks", .name = "reorder", .gateway = Gateway::Mutate,
                  .summary = "Move a task to a position among its siblings",
                  .params = reorder_args.specs(),
                  .returns = "{position?,version} (position when it is not the one sent)",
                  .errors = {ErrorCode::NotFound},
                  .examples = {{R"({"id":"T005","position":1})", "move T005 first"}},
                  .idempotent = true, .tier = 2, .text_view = TextView::Reordered,
                  .batchable = true, .handler = reorder_args.handler(reorder)});
}

}  // namespace ct::tasks
