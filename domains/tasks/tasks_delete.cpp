// tasks domain — a task's way out and back: tasks.delete (cancel and archive, or remove the rows),
// tasks.archive, tasks.restore and tasks.reopen.
#include "domains/tasks/tasks_common.h"

namespace ct::tasks {
namespace {

Result<Reply> remove(Context& context, const Params& params) {
  DeleteOptions options;
  options.hard = params.flag("hard");
  options.force = params.flag("force");
  const std::string& strategy = params.str("children");
  options.children = strategy == "cascade" ? ChildStrategy::Cascade
                     : strategy == "orphan" ? ChildStrategy::Orphan : ChildStrategy::Block;
  options.reason = params.opt_str("reason").value_or("");
  auto engine_ = engine(context);
  CT_TRY_ASSIGN(DeleteResult result, engine_.remove(params.str("id"), options, params.opt_integer("ifVersion")));
  json::Value data = json::Value::object();
  data.set("id", result.id);
  if (result.hard) {
    data.set("deleted", true);
  } else {
    data.set("status", "cancelled");
    data.set("archived", true);
  }
  if (!result.affected.empty()) data.set("affected", json::Value::array_of(result.affected));
  Reply reply{std::move(data), std::move(result.warnings), {}, {}};
  if (result.no_change) reply.note = ErrorCode::NoChange;
  return reply;
}

Result<Reply> archive(Context& context, const Params& params) {
  CT_TRY_ASSIGN(std::optional<TimeMs> before, params.time("before", context.now()));
  if (!params.has("id") && !params.flag("all") && !before) {
    Error error(ErrorCode::InvalidParams, "say which tasks to archive: id, before, or all:true");
    error.fix = call("tasks.archive", {{"all", true}});
    return fail(std::move(error).with_detail("field", "id"));
  }
  std::vector<std::string> warnings;
  auto engine_ = engine(context);
  CT_TRY_ASSIGN(std::vector<std::string> archived, engine_.archive(params.opt_str("id"), before, warnings));
  json::Value data = json::Value::object();
  data.set("archived", json::Value::array_of(archived));
  data.set("count", static_cast<std::int64_t>(archived.size()));
  Reply reply{std::move(data), std::move(warnings), {}, {}};
  if (archived.empty()) reply.note = ErrorCode::NoChange;
  return reply;
}

Result<Reply> restore(Context& context, const Params& params) {
  auto engine_ = engine(context);
  CT_TRY_ASSIGN(UpdateResult result, engine_.restore(params.str("id")));
  return update_reply(result, params);
}

Result<Reply> reopen(Context& context, const Params& params) {
  auto engine_ = engine(context);
  CT_TRY_ASSIGN(UpdateResult result, engine_.reopen(params.str("id"), params.opt_str("notes").value_or(""),
                                            params.opt_integer("ifVersion")));
  return update_reply(result, params);
}

}  // namespace

void register_tasks_delete(Registry& registry) {
  add_task_write(registry,
                 {.domain = "tasks", .name = "delete", .gateway = Gateway::Mutate,
                  .summary = "Cancel and archive a task",
                  .params = {id_param(),
                             {.name = "reason", .type = ParamType::String, .max = 300, .description = "Why it is cancelled"},
                             {.name = "children", .type = ParamType::Enum, .default_json = R"("block")",
                              .choices = {"block", "orphan", "cascade"},
                              .description = "Children: refuse (block), move up to this task's parent (orphan), or delete too (cascade)"},
                             {.name = "hard", .type = ParamType::Bool, .description = "Remove the rows instead of cancelling (history stays)"},
                             {.name = "force", .type = ParamType::Bool, .description = "With hard: also drop the id from tasks that depend on it"},
                             if_version_param()},
                  .returns = "{status:'cancelled',archived:true,affected?} or {deleted:true,affected?} when hard",
                  .errors = {ErrorCode::NotFound, ErrorCode::HasChildren, ErrorCode::HasDependents,
                             ErrorCode::TaskCompleted, ErrorCode::ConcurrentModification},
                  .examples = {{R"({"id":"T004","reason":"duplicate of T002"})", "cancel T004"}},
                  .destructive = true, .tier = 1, .shortcut = "delete", .shortcut_aliases = {"rm"},
                  .text_view = TextView::Deleted, .bulk = true,
                  .aliases = {"remove", "rm", "del", "cancel", "drop"}, .handler = remove});
  add_task_write(registry,
                 {.domain = "tasks", .name = "archive", .gateway = Gateway::Mutate,
                  .summary = "Archive done and cancelled tasks",
                  .params = {{.name = "id", .type = ParamType::TaskId, .description = "One task to archive", .positional = true},
                             {.name = "before", .type = ParamType::String, .max = 40,
                              .description = "Only tasks finished before this: 2026-01-31, a time, yesterday, or an age (30d, 2w)"},
                             {.name = "all", .type = ParamType::Bool, .description = "Every done or cancelled task"}},
                  .returns = "{archived[ids], count}",
                  .errors = {ErrorCode::NotFound, ErrorCode::Validation, ErrorCode::HasChildren},
                  .examples = {{R"({"id":"T001"})", "archive T001"}, {R"({"all":true})", "archive everything finished"}},
                  .idempotent = true, .tier = 2, .text_view = TextView::Archived, .handler = archive});
  add_task_write(registry,
                 {.domain = "tasks", .name = "restore", .gateway = Gateway::Mutate,
                  .summary = "Bring back an archived or cancelled task",
                  .params = {id_param()},
                  .returns = "{<changed fields>, version}",
                  .errors = {ErrorCode::NotFound, ErrorCode::Validation},
                  .examples = {{R"({"id":"T004"})", "restore T004"}},
                  .idempotent = true, .tier = 2, .text_view = TextView::Restored, .bulk = true,
                  .original_names = {"tasks.unarchive", "system.uncancel"}, .handler = restore});
  add_task_write(registry,
                 {.domain = "tasks", .name = "reopen", .gateway = Gateway::Mutate,
                  .summary = "Reopen a done task",
                  .params = {id_param(), {.name = "notes", .type = ParamType::String, .max = 5000,
                                          .description = "Why it is reopened"},
                             if_version_param()},
                  .returns = "{status,completedAt:null,version}",
                  .errors = {ErrorCode::NotFound, ErrorCode::Validation, ErrorCode::ConcurrentModification},
                  .examples = {{R"({"id":"T001","notes":"regression found"})", "reopen T001"}},
                  .idempotent = true, .tier = 2, .text_view = TextView::Reopened, .dashboard = true, .bulk = true,
                  .handler = reopen});
}

}  // namespace ct::tasks
