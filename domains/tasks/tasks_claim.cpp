// tasks domain — who works on a task: tasks.start (the atomic claim, inside the session's scope),
// tasks.stop and tasks.reclaim (a person frees a task whoever holds it).
#include "domains/tasks/tasks_common.h"
#include "domains/claims.h"
#include "engines/rules/session_engine.h"

namespace ct::tasks {
namespace {

/// tasks.start's params: the paths its claim reserves (default: the task's declared files).
struct StartArgs {
  std::string id;
  std::optional<std::vector<std::string>> paths;
  bool shared = false;
};

Result<Reply> start(Context& context, const StartArgs& args) {
  auto engine_ = engine(context);
  if (!context.session.empty()) {
    // Inside a session only tasks in its scope can be claimed.
    CT_TRY_ASSIGN(Task task, engine_.get_live(args.id));
    SessionEngine sessions(context.db(), *context.config, context.now(), nullptr);
    CT_TRY_ASSIGN(Session session, sessions.get(context.session));
    CT_TRY_ASSIGN(Scope scope, parse_scope(session.scope));
    CT_TRY_ASSIGN(bool inside, sessions.contains(scope, task.id));
    if (!inside) {
      Error error(ErrorCode::TaskNotInScope, "Task " + task.id + " is outside the session's scope " + session.scope);
      error.fix = call("tasks.next", {{"inScope", true}});
      return fail(std::move(error).with_alternative("Start another session for it", "session.start")
                      .with_detail("id", task.id).with_detail("scope", session.scope));
    }
  }
  std::optional<std::vector<std::string>> paths;
  if (args.paths) {
    CT_TRY_ASSIGN(paths, reserved_paths(*args.paths, "paths"));
  }
  CT_TRY_ASSIGN(StartResult result, engine_.start(args.id, paths, args.shared));
  const std::optional<ReserveResult>& reserved = result.reserved;
  json::Value data = json::Value::object();
  data.set("id", result.task.id);
  if (result.previous) data.set("previous", *result.previous);
  // A lapsed claim taken over: whose it was, so the caller can read what they left.
  if (result.taken_over) {
    CT_TRY(notify_displaced(context, result.taken_over->session, result.task.id));
    json::Value from = json::Value::object();
    from.set("session", result.taken_over->session);
    if (!result.taken_over->agent.empty()) from.set("agent", result.taken_over->agent);
    data.set("takenOver", std::move(from));
  }
  if (reserved && !reserved->held.empty()) data.set("reserved", reservations::audit_value(reserved->held));
  Reply reply = Reply::noted(std::move(data), no_change_if(result.no_change && !(reserved && reserved->changed)));
  if (reserved) add_conflicts(context, *reserved, reply);
  return reply;
}

Result<Reply> stop(Context& context, const NoArgs&) {
  auto engine_ = engine(context);
  CT_TRY_ASSIGN(std::optional<Task> stopped, engine_.stop());
  if (!stopped) return Reply::noted(json::Value(), ErrorCode::NoChange, {"nothing was in focus"});
  json::Value data = json::Value::object();
  data.set("id", stopped->id);
  data.set("status", to_string(stopped->status));
  if (context.audit) context.audit->task_id = stopped->id;
  return Reply::of(std::move(data));
}

/// tasks.reclaim's params: the reason is audited with them.
struct ReclaimArgs {
  std::string id;
  std::string reason;
};

Result<Reply> reclaim(Context& context, const ReclaimArgs& args) {
  // Freeing a live claim is a person's act; an agent frees only one whose lease ran out (as
  // tasks.start takes one over).
  if (!context.is_person()) {
    CT_TRY_ASSIGN(std::optional<Claim> held, live_claim(context, args.id));
    if (held)
      return fail(Error(ErrorCode::MutationDisabled, "Task " + args.id + " is claimed by session " + held->session +
                                                         ", whose lease has not run out: only a person frees a live claim")
                      .with_fix("ask a person to run: ct reclaim " + args.id + " --reason \"…\"")
                      .with_detail("id", args.id)
                      .with_detail("holder", held->session));
  }
  auto engine_ = engine(context);
  CT_TRY_ASSIGN(std::optional<Claim> freed, engine_.reclaim(args.id));
  if (!freed) return Reply::noted(json::Value(), ErrorCode::NoChange, {"nobody holds " + args.id});
  CT_TRY(notify_displaced(context, freed->session, args.id));
  json::Value data = json::Value::object();
  data.set("id", args.id);
  json::Value from = json::Value::object();
  from.set("session", freed->session);
  if (!freed->agent.empty()) from.set("agent", freed->agent);
  data.set("from", std::move(from));
  return Reply::of(std::move(data));
}

}  // namespace

void register_tasks_claim(Registry& registry) {
  const auto start_args =
      bind(field(&StartArgs::id, id_param()),
           field(&StartArgs::paths, paths_param("paths", "Paths or globs the work touches (default: the task's files)")),
           field(&StartArgs::shared, shared_param()));
  add_task_write(registry,
                 {.domain = "tasks", .name = "start", .gateway = Gateway::Mutate,
                  .summary = "Focus on a task and mark it active",
                  .params = start_args.specs(),
                  .returns = "{previous?,takenOver?{session,agent?},reserved?,conflicts?} (the task is active; the "
                             "previous focus goes back to pending; takenOver: a lapsed claim; reserved: the paths the "
                             "claim holds, conflicts: others' live reservations they overlap — warned, or "
                             "E_PATH_RESERVED in strict reservations.mode)",
                  .errors = {ErrorCode::NotFound, ErrorCode::TaskCompleted, ErrorCode::Validation, ErrorCode::TaskClaimed,
                             ErrorCode::TaskNotInScope, ErrorCode::PathReserved},
                  .examples = {{R"({"id":"T001"})", "work on T001"}},
                  .idempotent = true, .tier = 0, .shortcut = "start",
                  .text_view = TextView::Started, .dashboard = true, .aliases = {"begin", "claim", "work", "pick"},
                  .original_names = {"session.focus.set", "session.focus-set"},
                  .handler = start_args.handler(start)});
  add_task_write(registry,
                 {.domain = "tasks", .name = "stop", .gateway = Gateway::Mutate,
                  .summary = "Release the focus",
                  .returns = "{id,status}; E_NO_CHANGE note when nothing was in focus",
                  .examples = {{R"({})", "stop working on the current task"}},
                  .idempotent = true, .tier = 1, .shortcut = "stop",
                  .text_view = TextView::Stopped, .dashboard = true, .aliases = {"pause", "unfocus", "release"},
                  .original_names = {"session.focus.clear", "session.focus-clear"},
                  .handler = no_args(stop)});
  const auto reclaim_args =
      bind(field(&ReclaimArgs::id, id_param()),
           field(&ReclaimArgs::reason, {.name = "reason", .type = ParamType::String, .required = true, .min = 1,
                                        .max = 300, .description = "Why (audited)"}));
  add_task_write(registry,
                 {.domain = "tasks", .name = "reclaim", .gateway = Gateway::Mutate,
                  .summary = "Free a task a session holds; it goes back to pending",
                  .params = reclaim_args.specs(),
                  .returns = "{id,from{session,agent?}}; E_NO_CHANGE note when nobody held it",
                  .errors = {ErrorCode::NotFound, ErrorCode::Validation, ErrorCode::MutationDisabled},
                  .examples = {{R"({"id":"T005","reason":"its agent crashed"})", "free T005 at once"}},
                  .idempotent = true, .tier = 2, .shortcut = "reclaim", .text_view = TextView::Generic,
                  .handler = reclaim_args.handler(reclaim)});
}

}  // namespace ct::tasks
