#include "engines/rules/session_engine.h"

#include "engines/rules/claim_lease.h"

#include <algorithm>
#include <deque>

#include "core/text.h"
#include "engines/rules/claim_lease.h"

namespace ct {
namespace {

constexpr std::int64_t kMinuteMs = 60LL * 1000;
constexpr std::int64_t kDayMs = 24LL * 3600 * 1000;

Error scope_error(std::string_view text, std::string why) {
  Error error(ErrorCode::ScopeInvalid, "invalid scope '" + std::string(text) + "': " + std::move(why) +
                                           "; accepted forms: " + std::string(kScopeForms));
  error.fix = call("session.start", {{"scope", "epic:T001"}, {"name", "..."}});
  json::Value valid = json::Value::array();
  for (auto form : {"task:T1", "taskGroup:T1", "subtree:T1", "epic:T1", "custom:T1,T2", "global"}) valid.push_back(form);
  return std::move(error).with_detail("field", "scope").with_detail("valid", std::move(valid));
}

bool open_status(TaskStatus status) { return status != TaskStatus::Done && status != TaskStatus::Cancelled; }

Error session_not_found(const std::string& id) {
  Error error(ErrorCode::SessionNotFound, "Session " + id + " not found");
  error.fix = call("session.list", {});
  return std::move(error).with_detail("id", id);
}

}  // namespace

Result<Scope> parse_scope(std::string_view raw) {
  std::string_view text = trim(raw);
  if (text == "global") return Scope{ScopeKind::Global, {}, "global"};
  auto colon = text.find(':');
  if (colon == std::string_view::npos) return fail(scope_error(text, "expected <kind>:<ids> or global"));
  std::string_view kind_text = text.substr(0, colon);
  std::string_view rest = text.substr(colon + 1);
  Scope scope;
  if (kind_text == "task") {
    scope.kind = ScopeKind::Task;
  } else if (kind_text == "taskGroup") {
    scope.kind = ScopeKind::TaskGroup;
  } else if (kind_text == "subtree") {
    scope.kind = ScopeKind::Subtree;
  } else if (kind_text == "epic") {
    scope.kind = ScopeKind::Epic;
  } else if (kind_text == "custom") {
    scope.kind = ScopeKind::Custom;
  } else {
    return fail(scope_error(text, "unknown kind '" + std::string(kind_text) + "'"));
  }
  std::size_t start = 0;
  while (start <= rest.size()) {
    std::size_t comma = rest.find(',', start);
    std::string_view part = trim(rest.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start));
    auto id = normalize_task_id(part);
    if (!id) return fail(scope_error(text, "'" + std::string(part) + "' is not a task id"));
    if (std::find(scope.ids.begin(), scope.ids.end(), *id) == scope.ids.end()) scope.ids.push_back(*id);
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  if (scope.kind != ScopeKind::Custom && scope.ids.size() != 1)
    return fail(scope_error(text, std::string(kind_text) + ": takes exactly one task id"));
  if (scope.ids.size() > 1000) return fail(scope_error(text, "custom: takes at most 1000 ids"));
  scope.text = std::string(kind_text) + ":";
  for (std::size_t i = 0; i < scope.ids.size(); ++i) scope.text += (i ? "," : "") + scope.ids[i];
  return scope;
}

std::string new_session_id() { return "ses_" + random_hex(6); }

Result<std::set<std::string>> SessionEngine::tasks_of(const Scope& scope) {
  std::set<std::string> out;
  if (scope.kind == ScopeKind::Global) return out;
  for (const auto& root_id : scope.ids) {
    CT_TRY_ASSIGN(std::optional<Task> root, tasks_.get_task(root_id));
    if (!root || root->archived) {
      Error error(ErrorCode::NotFound, "Task " + root_id + " (the scope's root) not found");
      error.fix = call("tasks.find", {{"query", root_id}});
      return fail(std::move(error).with_detail("id", root_id).with_detail("field", "scope"));
    }
    if (scope.kind == ScopeKind::Epic && root->type != TaskType::Epic)
      return fail(scope_error(scope.text, "Task " + root_id + " is a " + std::string(to_string(root->type)) +
                                              ", not an epic (use subtree:" + root_id + ")"));
    out.insert(root_id);
    if (scope.kind == ScopeKind::Task || scope.kind == ScopeKind::Custom) continue;
    std::deque<std::string> queue{root_id};
    while (!queue.empty()) {
      std::string id = std::move(queue.front());
      queue.pop_front();
      CT_TRY_ASSIGN(std::vector<std::string> children, tasks_.children_of(id, false));
      for (auto& child : children) {
        if (!out.insert(child).second) continue;
        if (scope.kind != ScopeKind::TaskGroup) queue.push_back(std::move(child));
      }
    }
  }
  return out;
}

Result<bool> SessionEngine::contains(const Scope& scope, const std::string& task_id) {
  if (scope.kind == ScopeKind::Global) return true;
  CT_TRY_ASSIGN(std::set<std::string> ids, tasks_of(scope));
  return ids.contains(task_id);
}

Result<std::vector<Task>> SessionEngine::open_tasks(const Scope& scope) {
  std::vector<Task> tasks;
  if (scope.kind == ScopeKind::Global) {
    TaskQuery query;
    query.filter.statuses = {TaskStatus::Pending, TaskStatus::Active, TaskStatus::Blocked};
    query.sort = SortKey::Id;
    CT_TRY_ASSIGN(tasks, tasks_.list_tasks(query));
    return tasks;
  }
  CT_TRY_ASSIGN(std::set<std::string> ids, tasks_of(scope));
  CT_TRY_ASSIGN(tasks, tasks_.get_tasks(std::vector<std::string>(ids.begin(), ids.end())));
  std::erase_if(tasks, [](const Task& task) { return task.archived || !open_status(task.status); });
  std::sort(tasks.begin(), tasks.end(), [](const Task& a, const Task& b) {
    return parse_task_id(a.id).value_or(0) < parse_task_id(b.id).value_or(0);
  });
  return tasks;
}

Result<Session> SessionEngine::get(const std::string& id) {
  CT_TRY_ASSIGN(std::optional<Session> session, store_.get_session(id));
  if (!session) return fail(session_not_found(id));
  return std::move(*session);
}

Result<void> SessionEngine::check_concurrency() {
  const std::int64_t limit = config_.get_int("session.maxConcurrent");
  if (limit == 0) return {};
  SessionQuery active;
  active.statuses = {SessionStatus::Active};
  CT_TRY_ASSIGN(std::int64_t count, store_.count_sessions(active));
  if (count < limit) return {};
  Error error(ErrorCode::SessionExists, std::to_string(count) + " sessions are active; session.maxConcurrent is " +
                                            std::to_string(limit));
  // Only a session's owner ends it (domains/principal.h): the caller's own, or what a person allows.
  error.fix = "end or suspend one of your own (" + call("session.end", {{"id", "..."}}) +
              "); or, to allow more at once, " + config_set_fix("session.maxConcurrent", json::Value(2 * limit));
  return fail(std::move(error).with_alternative("List active sessions", "session.list")
                  .with_detail("active", count).with_detail("maxConcurrent", limit));
}

Result<Session> SessionEngine::start(const std::string& name, const std::string& scope_text, const std::string& agent,
                                     const std::string& owner) {
  CT_TRY_ASSIGN(Scope scope, parse_scope(scope_text));
  CT_TRY(tasks_of(scope));  // roots exist, epic: is an epic
  CT_TRY(check_concurrency());
  Session session;
  session.id = new_session_id();
  // Ids are random; in test mode they come from a per-process counter, so step past any taken.
  for (int attempt = 0; attempt < 1000; ++attempt) {
    CT_TRY_ASSIGN(std::optional<Session> taken, store_.get_session(session.id));
    if (!taken) break;
    session.id = new_session_id();
  }
  session.name = name;
  session.scope = scope.text;
  session.agent = agent;
  session.owner = owner;
  session.created_at = now_;
  session.updated_at = now_;
  CT_TRY(store_.insert_session(session));
  record(session.id, "status", json::Value(), "active");
  record(session.id, "scope", json::Value(), session.scope);
  return session;
}

Result<Session> SessionEngine::finish(const std::string& id, SessionStatus final_status, const std::string& note) {
  CT_TRY_ASSIGN(Session before, get(id));
  if (before.status == SessionStatus::Ended || before.status == SessionStatus::Closed) {
    if (final_status == SessionStatus::Ended || before.status == SessionStatus::Closed) return before;  // no change
  }
  if (final_status == SessionStatus::Closed) {
    CT_TRY_ASSIGN(Scope scope, parse_scope(before.scope));
    CT_TRY_ASSIGN(std::vector<Task> open, open_tasks(scope));
    if (!open.empty()) {
      json::Value list = json::Value::array();
      std::vector<std::string> ids;
      for (const auto& task : open) {
        json::Value item = json::Value::object();
        item.set("id", task.id);
        item.set("title", task.title);
        item.set("status", to_string(task.status));
        list.push_back(std::move(item));
        ids.push_back(task.id);
      }
      Error error(ErrorCode::SessionCloseBlocked,
                  std::to_string(open.size()) + " task" + (open.size() == 1 ? "" : "s") + " in scope " + before.scope +
                      " " + (open.size() == 1 ? "is" : "are") + " not done");
      error.fix = call("tasks.complete", {{"id", ids.front()}}) +
                  " for each open task, or end the session instead (session.end)";
      return fail(std::move(error).with_alternative("End without closing", "session.end")
                      .with_detail("id", id).with_detail("open", std::move(list)));
    }
  }
  // Release the claim: the focused task goes back to pending for someone else.
  TaskEngine tasks({tasks_, audit_}, config_, now_, id, sink_);
  CT_TRY(tasks.stop());
  Session after = before;
  after.status = final_status;
  after.ended_at = now_;
  if (!note.empty()) after.note = note;
  return save(before, std::move(after));
}

Result<Session> SessionEngine::suspend(const std::string& id, const std::string& note) {
  CT_TRY_ASSIGN(Session before, get(id));
  if (before.status == SessionStatus::Suspended) return before;
  if (before.status != SessionStatus::Active) {
    Error error(ErrorCode::Validation, "Session " + id + " is " + std::string(to_string(before.status)) +
                                           "; only an active session can be suspended");
    error.fix = call("session.start", {{"scope", before.scope}});
    return fail(std::move(error).with_detail("id", id).with_detail("status", std::string(to_string(before.status))));
  }
  Session after = before;
  after.status = SessionStatus::Suspended;
  if (!note.empty()) after.note = note;
  return save(before, std::move(after));
}

Result<void> SessionEngine::check_owner(const Session& session, const std::string& owner) {
  if (session.owner.empty() || owner.empty() || session.owner == owner) return {};
  return fail(Error(ErrorCode::SessionOwned, "Session " + session.id + " belongs to another caller (" + session.owner +
                                                 "): a session is its starter's, and a call in it is refused to others")
                  .with_fix(call("session.start", {{"scope", session.scope}}))
                  .with_detail("id", session.id)
                  .with_detail("owner", session.owner));
}

Result<Session> SessionEngine::resume(const std::string& id, const std::string& owner, const std::string& label) {
  CT_TRY_ASSIGN(Session before, get(id));
  if (before.status == SessionStatus::Active) {
    if (before.owner == owner || before.owner.empty() || owner.empty()) {
      if (before.owner == owner || owner.empty()) return before;
      Session after = before;
      after.owner = owner;
      if (!label.empty()) after.agent = label;
      return save(before, std::move(after));
    }
    // Held by another caller: taken over only once its lease ran out (0: sessions never lapse).
    const TimeMs lease = lease_ms(config_);
    if (lease == 0 || before.updated_at > now_ - lease) {
      CT_TRY(check_owner(before, owner));
    }
    Session after = before;
    after.owner = owner;
    if (!label.empty()) after.agent = label;
    return save(before, std::move(after));
  }
  if (before.status == SessionStatus::Closed) {
    Error error(ErrorCode::Validation, "Session " + id + " is closed (its work is done) and cannot be resumed");
    error.fix = call("session.start", {{"scope", before.scope}});
    return fail(std::move(error).with_detail("id", id).with_detail("status", "closed"));
  }
  CT_TRY(check_concurrency());
  Session after = before;
  after.status = SessionStatus::Active;
  after.ended_at.reset();
  if (!owner.empty() && owner != before.owner) {
    after.owner = owner;
    if (!label.empty()) after.agent = label;
  }
  return save(before, std::move(after));
}

Result<Session> SessionEngine::place(const std::string& id, const std::string& worktree, const std::string& branch) {
  CT_TRY_ASSIGN(Session before, get(id));
  if (before.worktree == worktree && before.branch == branch) return before;
  Session after = before;
  after.worktree = worktree;
  after.branch = branch;
  return save(before, std::move(after));
}

Result<Session> SessionEngine::set_note(const std::string& id, const std::optional<std::string>& note,
                                        const std::optional<std::string>& next_action) {
  CT_TRY_ASSIGN(Session before, get(id));
  Session after = before;
  if (note) after.note = *note;
  if (next_action) after.next_action = *next_action;
  return save(before, std::move(after));
}

Result<GcResult> SessionEngine::gc() {
  GcResult result;
  SessionQuery idle;
  idle.statuses = {SessionStatus::Active};
  idle.updated_before = now_ - idle_after();
  CT_TRY_ASSIGN(std::vector<Session> stale, store_.list_sessions(idle));
  for (const auto& session : stale) {
    CT_TRY(finish(session.id, SessionStatus::Ended, ""));
    result.ended.push_back(session.id);
  }
  SessionQuery old;
  old.statuses = {SessionStatus::Ended, SessionStatus::Closed};
  old.ended_before = now_ - config_.get_int("session.archiveDays") * kDayMs;
  CT_TRY_ASSIGN(std::vector<Session> finished, store_.list_sessions(old));
  for (const auto& session : finished) {
    Session after = session;
    after.archived_at = now_;
    CT_TRY(save(session, std::move(after)));
    result.archived.push_back(session.id);
  }
  return result;
}

Result<std::vector<std::string>> SessionEngine::check_write(const std::string& session_id) {
  std::vector<std::string> warnings;
  const std::string& mode = config_.get_string("session.enforcement");
  if (session_id.empty()) {
    if (mode == "strict") {
      Error error(ErrorCode::SessionRequired,
                  "session.enforcement is strict: start a session before changing tasks (a caller that cannot be "
                  "bound to it, such as a stateless MCP request, names it on each call: sessionId)");
      error.fix = call("session.start", {{"scope", "global"}, {"name", "..."}});
      return fail(std::move(error).with_alternative("List sessions to resume one", "session.list"));
    }
    if (mode == "advisory") {
      // Only where sessions are in use: a project nobody runs sessions in stays quiet.
      SessionQuery active;
      active.statuses = {SessionStatus::Active};
      CT_TRY_ASSIGN(std::int64_t count, store_.count_sessions(active));
      if (count > 0) warnings.emplace_back("no session: advisory mode (start one with session.start, or name yours with sessionId)");
    }
    return warnings;
  }
  CT_TRY(touch(session_id));
  return warnings;
}

Result<Session> SessionEngine::touch(const std::string& session_id) {
  CT_TRY_ASSIGN(std::optional<Session> session, store_.get_session(session_id));
  if (!session) return fail(session_not_found(session_id));
  if (session->status != SessionStatus::Active) {
    Error error(ErrorCode::SessionRequired, "Session " + session_id + " is " +
                                                std::string(to_string(session->status)) + "; writes need an active session");
    error.fix = session->status == SessionStatus::Closed
                    ? call("session.start", {{"scope", session->scope}})
                    : call("session.resume", {{"id", session_id}});
    return fail(std::move(error).with_detail("id", session_id)
                    .with_detail("status", std::string(to_string(session->status))));
  }
  Session touched = *session;
  touched.updated_at = now_;
  CT_TRY(store_.update_session(touched));
  return touched;
}

TimeMs SessionEngine::idle_after() const { return config_.get_int("session.idleMinutes") * kMinuteMs; }

Result<Session> SessionEngine::save(const Session& before, Session after) {
  after.updated_at = now_;
  if (before.status != after.status)
    record(after.id, "status", std::string(to_string(before.status)), std::string(to_string(after.status)));
  if (before.note != after.note) record(after.id, "note", before.note, after.note);
  if (before.next_action != after.next_action) record(after.id, "nextAction", before.next_action, after.next_action);
  if (before.archived_at != after.archived_at) record(after.id, "archived", false, true);
  if (before.owner != after.owner) record(after.id, "owner", before.owner, after.owner);
  if (before.agent != after.agent) record(after.id, "agent", before.agent, after.agent);
  if (before.worktree != after.worktree) record(after.id, "worktree", before.worktree, after.worktree);
  if (before.branch != after.branch) record(after.id, "branch", before.branch, after.branch);
  CT_TRY(store_.update_session(after));
  return after;
}

void SessionEngine::record(const std::string& id, std::string field, json::Value before, json::Value after) {
  if (sink_) sink_(FieldChange{id, std::move(field), std::move(before), std::move(after)});
}

}  // namespace ct
