// session domain, its changes: a session started (its scope checked, session.maxConcurrent held),
// ended, closed, suspended, resumed, noted for the next agent, and idle sessions collected.
// Operations that start or resume a session bind the caller to it (Context::bind_session); the
// router keeps the binding for the connection (MCP) or the invocation (CLI).
#include <algorithm>

#include "core/text.h"
#include "domains/session/session_common.h"
#include "domains/session/session_tree.h"
#include "engines/rules/task_engine.h"

namespace ct::session {
namespace {

TaskEngine tasks_in(Context& context, const std::string& session_id) {
  return TaskEngine(context.db(), *context.config, context.now(), session_id,
                    [&context](FieldChange change) { context.record(std::move(change)); });
}

/// {id}: the reply of a change whose outcome the caller named (end, suspend, close, note).
json::Value id_reply(const Session& session) {
  json::Value out = json::Value::object();
  out.set("id", session.id);
  return out;
}

/// {id, status} plus what the caller should know next.
json::Value status_reply(const Session& session) {
  json::Value out = id_reply(session);
  out.set("status", to_string(session.status));
  return out;
}

struct StartArgs {
  std::string scope;
  std::optional<std::string> name;
  std::optional<std::string> agent;
  std::optional<std::string> focus;
  bool auto_focus = false;
  std::optional<std::string> parent;  // a child session of this one (session_tree.h)
  std::optional<std::string> intent;
  std::vector<std::string> paths;
  std::optional<std::string> host_session;
};

Result<Reply> start(Context& context, const StartArgs& args) {
  if (args.focus && args.auto_focus)
    return fail(Error(ErrorCode::InvalidParams, "focus and autoFocus exclude each other: give one or neither")
                    .with_detail("field", "autoFocus"));
  if (args.agent && !context.is_person() && is_reserved_label(*args.agent))
    return fail(Error(ErrorCode::InvalidInput, "agent \"" + *args.agent + "\" is a name reserved for people and the product")
                    .with_fix(call("session.start", {{"scope", args.scope}}))
                    .with_detail("field", "agent"));
  std::string agent = args.agent.value_or(context.agent);
  if (args.parent) {
    if (args.focus || args.auto_focus)
      return fail(Error(ErrorCode::InvalidParams, "a child session claims its tasks once its agent resumes it: "
                                                  "give parent without focus or autoFocus")
                      .with_detail("field", args.focus ? "focus" : "autoFocus"));
    return start_child(context, args.scope, args.name.value_or(""), agent,
                       Delegation{*args.parent, args.intent.value_or(""), args.paths});
  }
  if (args.intent || !args.paths.empty())
    return fail(Error(ErrorCode::InvalidParams, "goal and paths are delegated to a child session: give parent too")
                    .with_detail("field", args.intent ? "goal" : "paths"));
  auto engine = sessions(context);
  CT_TRY_ASSIGN(Session session, engine.start(args.name.value_or(""), args.scope, agent, context.principal.id));
  // Where it runs: the caller's git worktree and branch, as its transport knows them.
  if (const Place place = context.project_place(); !place.worktree.empty()) {
    CT_TRY_ASSIGN(session, engine.place(session.id, place.worktree, place.branch));
  }
  // The host's own session or thread id (issue 54): data about the host's thread, carried on each
  // attestation made in this session; who calls is still the transport's to say.
  if (args.host_session) CT_TRY(context.db().bind_host_session(session.id, *args.host_session, context.now()));
  // Everything from here on (the claim, the audit row) happens in the new session.
  context.session = session.id;
  context.bind_session(session.id);
  if (context.audit) context.audit->task_id = session.id;
  CT_TRY_ASSIGN(Scope scope, parse_scope(session.scope));

  std::vector<std::string> warnings;
  std::optional<std::string> focus = args.focus;
  if (args.auto_focus) {
    auto tasks = tasks_in(context, session.id);
    std::optional<std::set<std::string>> within;
    if (scope.kind != ScopeKind::Global) {
      CT_TRY_ASSIGN(within, engine.tasks_of(scope));
    }
    // tasks.next's best ready task in scope (it skips tasks another caller holds).
    CT_TRY_ASSIGN(std::vector<ScoredTask> ranked, tasks.next(1, within ? &*within : nullptr));
    if (!ranked.empty()) focus = ranked.front().task.id;
    if (!focus) warnings.emplace_back("autoFocus: no ready task in scope " + session.scope);
  }
  if (focus) {
    CT_TRY_ASSIGN(bool inside, engine.contains(scope, *focus));
    if (!inside) {
      Error error(ErrorCode::TaskNotInScope, "Task " + *focus + " is outside scope " + session.scope);
      error.fix = "start the session with a scope that contains " + *focus + ", or focus a task inside it";
      return fail(std::move(error).with_detail("id", *focus).with_detail("scope", session.scope));
    }
    auto tasks = tasks_in(context, session.id);
    CT_TRY_ASSIGN(StartResult started, tasks.start(*focus));
    // Its reservations met others' (reservations.mode advisory): said as tasks.start says it.
    if (started.reserved && !started.reserved->conflicts.empty())
      warnings.push_back(reservations::kept_warning(started.reserved->conflicts, *context.config));
  }

  json::Value data = json::Value::object();
  data.set("id", session.id);
  data.set("scope", session.scope);  // left out by the router unless made canonical ("epic:t1")
  if (focus) data.set("focus", *focus);
  return Reply::warned(std::move(data), std::move(warnings));
}

/// end, suspend and close: the session, and the note it is left with.
struct NotedArgs {
  std::optional<std::string> id;
  std::string notes;
};

/// end and close: the session finishes and its claim is released; the caller is unbound.
Result<Reply> finish(Context& context, const NotedArgs& args, SessionStatus final_status) {
  CT_TRY_ASSIGN(std::string id, subject(context, args.id));
  auto engine = sessions(context);
  CT_TRY_ASSIGN(Session before, owned_session(context, engine, id));
  CT_TRY_ASSIGN(Session after, engine.finish(id, final_status, args.notes));
  if (context.audit) context.audit->task_id = id;
  // A child's end is its report to the parent.
  if (before.status != after.status) CT_TRY(report_to_parent(context, after, args.notes));
  if (id == context.session) context.bind_session("");
  context.session = id;
  return Reply::noted(id_reply(after), no_change_if(before.status == after.status));
}

Result<Reply> end(Context& context, const NotedArgs& args) { return finish(context, args, SessionStatus::Ended); }
Result<Reply> close(Context& context, const NotedArgs& args) { return finish(context, args, SessionStatus::Closed); }

Result<Reply> suspend(Context& context, const NotedArgs& args) {
  CT_TRY_ASSIGN(std::string id, subject(context, args.id));
  auto engine = sessions(context);
  CT_TRY_ASSIGN(Session before, owned_session(context, engine, id));
  CT_TRY_ASSIGN(Session after, engine.suspend(id, args.notes));
  if (context.audit) context.audit->task_id = id;
  if (id == context.session) context.bind_session("");
  context.session = id;
  return Reply::noted(id_reply(after), no_change_if(before.status == after.status));
}

Result<Reply> resume(Context& context, const IdArgs& args) {
  CT_TRY_ASSIGN(std::string id, subject(context, args.id));
  auto engine = sessions(context);
  CT_TRY_ASSIGN(Session before, engine.get(id));
  CT_TRY_ASSIGN(Session after, engine.resume(id, context.principal.id, context.agent));
  // It runs where its resumer works now ("" when the transport cannot know: HTTP).
  const Place place = context.project_place();
  CT_TRY_ASSIGN(after, engine.place(id, place.worktree, place.branch));
  if (context.audit) context.audit->task_id = id;
  std::vector<std::string> warnings;
  if (before.owner != after.owner && !before.owner.empty())
    warnings.push_back("session " + id + " was " + before.owner + "'s (last active " + format_iso8601(before.updated_at) +
                       "): it is this caller's now");
  context.session = id;
  context.bind_session(id);
  json::Value data = status_reply(after);
  data.set("scope", after.scope);
  // A child: what it was delegated, and by whom.
  CT_TRY_ASSIGN(json::Value delegated, delegated_json(context, id));
  if (!delegated.is_null()) data.set("delegated", std::move(delegated));
  CT_TRY_ASSIGN(std::optional<std::string> focus, context.db().get_focus(id));
  if (focus) data.set("focus", *focus);
  if (!after.next_action.empty()) data.set("nextAction", after.next_action);
  return Reply::noted(std::move(data),
                      no_change_if(before.status == after.status && before.owner == after.owner &&
                                   before.worktree == after.worktree && before.branch == after.branch),
                      std::move(warnings));
}

struct NoteArgs {
  std::optional<std::string> id;
  std::optional<std::string> notes;
  std::optional<std::string> next_action;
};

Result<Reply> note(Context& context, const NoteArgs& args) {
  if (!args.notes && !args.next_action) {
    Error error(ErrorCode::InvalidParams, "give notes, nextAction or both");
    error.fix = call("session.note", {{"notes", "..."}, {"nextAction", "..."}});
    return fail(std::move(error).with_detail("field", "notes"));
  }
  CT_TRY_ASSIGN(std::string id, subject(context, args.id));
  auto engine = sessions(context);
  CT_TRY_ASSIGN(Session before, owned_session(context, engine, id));
  CT_TRY_ASSIGN(Session after, engine.set_note(id, args.notes, args.next_action));
  if (context.audit) context.audit->task_id = id;
  // The caller's own text is not echoed back (a note may be 5,000 characters): session.show has it.
  return Reply::noted(id_reply(after),
                      no_change_if(before.note == after.note && before.next_action == after.next_action));
}

struct GcArgs {
  bool dry_run = false;
};

Result<Reply> gc(Context& context, const GcArgs& args) {
  auto engine = sessions(context);
  CT_TRY_ASSIGN(GcResult result, engine.gc());
  json::Value data = json::Value::object();
  data.set("ended", json::Value::array_of(result.ended));
  data.set("archived", json::Value::array_of(result.archived));
  if (args.dry_run) data.set("dryRun", true);
  return Reply::noted(std::move(data), no_change_if(result.ended.empty() && result.archived.empty()));
}

/// `notes`, described for the operation that takes it.
ParamSpec notes_param(std::string_view description) {
  return {.name = "notes", .type = ParamType::String, .max = 5000, .description = description, .alias = "note"};
}

Binding<NotedArgs> noted_args(std::string_view notes) {
  return bind(field(&NotedArgs::id, id_param(false, kCurrentOrId)), field(&NotedArgs::notes, notes_param(notes)));
}

}  // namespace

void register_session_mutations(Registry& registry) {
  const auto start_args = bind(
      field(&StartArgs::scope, {.name = "scope", .type = ParamType::String, .required = true, .min = 1, .max = 20000,
                                .description = "task:T1, taskGroup:T1, subtree:T1, epic:T1, custom:T1,T2 or global",
                                .positional = true}),
      field(&StartArgs::name,
            {.name = "name", .type = ParamType::String, .max = 100, .description = "A name for people", .single_line = true}),
      field(&StartArgs::agent, {.name = "agent", .type = ParamType::String, .max = 100,
                                .description = "Who works in it (default: the calling agent)"}),
      field(&StartArgs::focus, {.name = "focus", .type = ParamType::TaskId, .description = "Claim this task at once"}),
      field(&StartArgs::auto_focus, {.name = "autoFocus", .type = ParamType::Bool,
                                     .description = "Claim the best ready task in scope (tasks.next)"}),
      field(&StartArgs::parent, {.name = "parent", .type = ParamType::String, .max = 40, .pattern = "^ses_[0-9a-z]+$",
                                 .description = "Your session: start a child of it for another agent (suspended "
                                                "until resumed; you stay bound)"}),
      field(&StartArgs::intent, {.name = "goal", .type = ParamType::String, .max = 500,
                                 .description = "With parent: what the child is to do"}),
      field(&StartArgs::paths, {.name = "paths", .type = ParamType::Array, .max = 50, .item_max = 500,
                                .description = "With parent: the paths the child may touch"}),
      field(&StartArgs::host_session, {.name = "hostSession", .type = ParamType::String, .min = 1, .max = 200,
                                       .description = "Your host's own session or thread id, kept on attestations",
                                       .single_line = true}));
  registry.add({.domain = "session", .name = "start", .gateway = Gateway::Mutate,
                .summary = "Start a session and bind to it",
                .params = start_args.specs(),
                .returns = "{id,scope?,focus?} (scope when made canonical; focus when autoFocus chose it); "
                           "{id,status} for a child",
                .errors = {ErrorCode::ScopeInvalid, ErrorCode::NotFound, ErrorCode::SessionExists, ErrorCode::InvalidInput,
                           ErrorCode::TaskNotInScope, ErrorCode::TaskClaimed, ErrorCode::PathReserved,
                           ErrorCode::SessionNotFound, ErrorCode::SessionOwned, ErrorCode::Validation},
                .examples = {{R"({"scope":"epic:T001","name":"auth work","autoFocus":true})", "work on an epic"},
                             {R"({"scope":"global","focus":"T004"})", "claim one task"}},
                .tier = 1, .handler = start_args.handler(start)});
  const auto end_args = noted_args("Where things stand");
  registry.add({.domain = "session", .name = "end", .gateway = Gateway::Mutate,
                .summary = "End a session and release its task",
                .params = end_args.specs(),
                .returns = "{id}",
                .errors = {ErrorCode::SessionNotFound, ErrorCode::SessionRequired, ErrorCode::SessionOwned},
                .examples = {{R"({"notes":"login done, signup next"})", "end the current session"}},
                .idempotent = true, .tier = 1, .aliases = {"orchestrate.abort", "system.safestop"}, .handler = end_args.handler(end)});
  const auto resume_args =
      bind(field(&IdArgs::id, id_param(false, "Session id (default: the one sessionId names, or the one bound)")));
  registry.add({.domain = "session", .name = "resume", .gateway = Gateway::Mutate,
                .summary = "Resume a session",
                // Without id, the session the call names (sessionId) is resumed: the original CLEO's
                // session.switch {sessionId} runs here.
                .params = resume_args.specs(),
                .returns = "{id,status:'active',scope,focus?,nextAction?,delegated?{parent,goal,paths?}}",
                .errors = {ErrorCode::SessionNotFound, ErrorCode::SessionRequired, ErrorCode::SessionOwned, ErrorCode::SessionExists,
                           ErrorCode::Validation},
                .examples = {{R"({"id":"ses_0123456789ab"})", "pick up where it stopped"}},
                .idempotent = true, .tier = 1, .aliases = {"orchestrate.resume"}, .original_names = {"session.switch"},
                .handler = resume_args.handler(resume)});
  const auto suspend_args = noted_args("Why it pauses");
  registry.add({.domain = "session", .name = "suspend", .gateway = Gateway::Mutate,
                .summary = "Pause a session, keeping its task claimed",
                .params = suspend_args.specs(),
                .returns = "{id}",
                .errors = {ErrorCode::SessionNotFound, ErrorCode::SessionRequired, ErrorCode::SessionOwned, ErrorCode::Validation},
                .examples = {{R"({"notes":"waiting for review"})", "pause the current session"}},
                .idempotent = true, .tier = 2, .aliases = {"orchestrate.pause"}, .handler = suspend_args.handler(suspend)});
  const auto close_args = noted_args("A closing note");
  registry.add({.domain = "session", .name = "close", .gateway = Gateway::Mutate,
                .summary = "Close a session whose scope is all done",
                .params = close_args.specs(),
                .returns = "{id}; E_SESSION_CLOSE_BLOCKED with details.open when tasks remain",
                .errors = {ErrorCode::SessionNotFound, ErrorCode::SessionRequired, ErrorCode::SessionOwned, ErrorCode::SessionCloseBlocked},
                .examples = {{R"({})", "close the current session"}},
                .idempotent = true, .tier = 2, .handler = close_args.handler(close)});
  const auto note_args = bind(field(&NoteArgs::id, id_param(false, kCurrentOrId)),
                              field(&NoteArgs::notes, notes_param("Where things stand")),
                              field(&NoteArgs::next_action, {.name = "nextAction", .type = ParamType::String, .max = 500,
                                                             .description = "What to do next (shown on resume)"}));
  registry.add({.domain = "session", .name = "note", .gateway = Gateway::Mutate,
                .summary = "Set a session's note and next action",
                .params = note_args.specs(),
                .returns = "{id} (read them back with session.show); E_NO_CHANGE note when both were already so",
                .errors = {ErrorCode::SessionNotFound, ErrorCode::SessionRequired, ErrorCode::SessionOwned},
                .examples = {{R"({"notes":"API done","nextAction":"write tests for T012"})", "leave a handover"}},
                .idempotent = true, .tier = 2, .handler = note_args.handler(note)});
  const auto gc_args = bind(field(&GcArgs::dry_run, {.name = "dryRun", .type = ParamType::Bool,
                                                     .description = "Report without changing anything", .dry_run = true}));
  registry.add({.domain = "session", .name = "gc", .gateway = Gateway::Mutate,
                .summary = "End idle sessions and archive old ones",
                .params = gc_args.specs(),
                .returns = "{ended[ids],archived[ids],dryRun?}",
                .examples = {{R"({"dryRun":true})", "what would be cleaned up?"}},
                .tier = 2, .aliases = {"archive", "cleanup"}, .handler = gc_args.handler(gc)});
}

}  // namespace ct::session
