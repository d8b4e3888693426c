// tasks domain — a task's way out and back: tasks.delete (cancel and archive, or remove the rows),
// tasks.archive, tasks.restore and tasks.reopen.
#include "domains/tasks/tasks_common.h"

namespace ct::tasks {
namespace {

struct RemoveArgs {
  std::string id;
  std::optional<std::string> reason;
  std::string children;
  bool hard = false;
  bool force = false;
  std::optional<std::int64_t> if_version;
};

Result<Reply> remove(Context& context, const RemoveArgs& args) {
  DeleteOptions options;
  options.hard = args.hard;
  options.force = args.force;
  const std::string& strategy = args.children;
  options.children = strategy == "cascade" ? ChildStrategy::Cascade
                     : strategy == "orphan" ? ChildStrategy::Orphan : ChildStrategy::Block;
  options.reason = args.reason.value_or("");
  auto engine_ = engine(context);
  CT_TRY_ASSIGN(DeleteResult result, engine_.remove(args.id, options, args.if_version));
  json::Value data = json::Value::object();
  data.set("id", result.id);
  if (result.hard) {
    data.set("deleted", true);
  } else {
    data.set("status", "cancelled");
    data.set("archived", true);
  }
  if (!result.affected.empty()) data.set("affected", json::Value::array_of(result.affected));
  return Reply::noted(std::move(data), no_change_if(result.no_change), std::move(result.warnings));
}

struct ArchiveArgs {
  std::optional<std::string> id;
  Moment before;
  bool all = false;
};

Result<Reply> archive(Context& context, const ArchiveArgs& args) {
  const std::optional<TimeMs> before = args.before.at;
  if (!args.id && !args.all && !before) {
    Error error(ErrorCode::InvalidParams, "say which tasks to archive: id, before, or all:true");
    error.fix = call("tasks.archive", {{"all", true}});
    return fail(std::move(error).with_detail("field", "id"));
  }
  std::vector<std::string> warnings;
  auto engine_ = engine(context);
  CT_TRY_ASSIGN(std::vector<std::string> archived, engine_.archive(args.id, before, warnings));
  json::Value data = json::Value::object();
  data.set("archived", json::Value::array_of(archived));
  data.set("count", static_cast<std::int64_t>(archived.size()));
  return Reply::noted(std::move(data), no_change_if(archived.empty()), std::move(warnings));
}

Result<Reply> restore(Context& context, const IdArgs& args) {
  auto engine_ = engine(context);
  CT_TRY_ASSIGN(UpdateResult result, engine_.restore(args.id));
  return update_reply(result);
}

struct ReopenArgs {
  std::string id;
  std::optional<std::string> notes;
  std::optional<std::int64_t> if_version;
};

Result<Reply> reopen(Context& context, const ReopenArgs& args) {
  auto engine_ = engine(context);
  CT_TRY_ASSIGN(UpdateResult result, engine_.reopen(args.id, args.notes.value_or(""), args.if_version));
  return update_reply(result);
}

}  // namespace

void register_tasks_delete(Registry& registry) {
  const auto remove_args = bind(
      field(&RemoveArgs::id, id_param()),
      field(&RemoveArgs::reason, {.name = "reason", .type = ParamType::String, .max = 300,
                                  .description = "Why it is cancelled"}),
      field(&RemoveArgs::children, {.name = "children", .type = ParamType::Enum, .default_json = R"("block")",
                                    .choices = {"block", "orphan", "cascade"},
                                    .description = "Children: refuse (block), move up to this task's parent (orphan), "
                                                   "or delete too (cascade)"}),
      field(&RemoveArgs::hard, {.name = "hard", .type = ParamType::Bool,
                                .description = "Remove the rows instead of cancelling (history stays)"}),
      field(&RemoveArgs::force, {.name = "force", .type = ParamType::Bool,
                                 .description = "With hard: also drop the id from tasks that depend on it"}),
      field(&RemoveArgs::if_version, if_version_param()));
  add_task_write(registry,
                 {.domain = "tasks", .name = "delete", .gateway = Gateway::Mutate,
                  .summary = "Cancel and archive a task",
                  .params = remove_args.specs(),
                  .returns = "{status:'cancelled',archived:true,affected?} or {deleted:true,affected?} when hard",
                  .errors = {ErrorCode::NotFound, ErrorCode::HasChildren, ErrorCode::HasDependents,
                             ErrorCode::TaskCompleted, ErrorCode::ConcurrentModification},
                  .examples = {{R"({"id":"T004","reason":"duplicate of T002"})", "cancel T004"}},
                  .destructive = true, .tier = 1, .shortcut = "delete", .shortcut_aliases = {"rm"},
                  .text_view = TextView::Deleted, .bulk = true,
                  .batchable = true, .aliases = {"remove", "rm", "del", "cancel", "drop"},
                  .handler = remove_args.handler(remove)});
  const auto archive_args = bind(
      field(&ArchiveArgs::id, {.name = "id", .type = ParamType::TaskId, .description = "One task to archive",
                               .positional = true}),
      field(&ArchiveArgs::before, {.name = "before", .type = ParamType::String, .max = 40,
                                   .description = "Only tasks finished before this: 2026-01-31, a time, yesterday, "
                                                  "or an age (30d, 2w)"}),
      field(&ArchiveArgs::all, {.name = "all", .type = ParamType::Bool, .description = "Every done or cancelled task"}));
  add_task_write(registry,
                 {.domain = "tasks", .name = "archive", .gateway = Gateway::Mutate,
                  .summary = "Archive done and cancelled tasks",
                  .params = archive_args.specs(),
                  .returns = "{archived[ids], count}",
                  .errors = {ErrorCode::NotFound, ErrorCode::Validation, ErrorCode::HasChildren},
                  .examples = {{R"({"id":"T001"})", "archive T001"}, {R"({"all":true})", "archive everything finished"}},
                  .idempotent = true, .tier = 2, .text_view = TextView::Archived,
                  .handler = archive_args.handler(archive)});
  const auto restore_args = bind(field(&IdArgs::id, id_param()));
  add_task_write(registry,
                 {.domain = "tasks", .name = "restore", .gateway = Gateway::Mutate,
                  .summary = "Bring back an archived or cancelled task",
                  .params = restore_args.specs(),
                  .returns = "{<changed fields>, version}",
                  .errors = {ErrorCode::NotFound, ErrorCode::Validation},
                  .examples = {{R"({"id":"T004"})", "restore T004"}},
                  .idempotent = true, .tier = 2, .text_view = TextView::Restored, .bulk = true,
                  .batchable = true, .original_names = {"tasks.unarchive", "system.uncancel"},
                  .handler = restore_args.handler(restore)});
  const auto reopen_args =
      bind(field(&ReopenArgs::id, id_param()),
           field(&ReopenArgs::notes, {.name = "notes", .type = ParamType::String, .max = 5000,
                                      .description = "Why it is reopened"}),
           field(&ReopenArgs::if_version, if_version_param()));
  add_task_write(registry,
                 {.domain = "tasks", .name = "reopen", .gateway = Gateway::Mutate,
                  .summary = "Reopen a done task",
                  .params = reopen_args.specs(),
                  .returns = "{status,completedAt:null,version}",
                  .errors = {ErrorCode::NotFound, ErrorCode::Validation, ErrorCode::ConcurrentModification},
                  .examples = {{R"({"id":"T001","notes":"regression found"})", "reopen T001"}},
                  .idempotent = true, .tier = 2, .text_view = TextView::Reopened, .dashboard = true, .bulk = true,
                  .batchable = true, .handler = reopen_args.handler(reopen)});
}

}  // namespace ct::tasks
