// The session rules of docs/architecture.md §4 over the Store seam: scopes (parsed, then computed from live
// data so that new children join), the session life cycle (active ⇄ suspended → ended | closed),
// session.maxConcurrent, session.enforcement for writes, and gc of idle and old sessions. The
// claim of a task (tasks.start) lives in TaskEngine, which keys focus by session.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"
#include "engines/project/config.h"
#include "engines/store/session_store.h"
#include "engines/store/store_roles.h"
#include "engines/rules/task_engine.h"

namespace ct {

enum class ScopeKind { Task, TaskGroup, Subtree, Epic, Custom, Global };

struct Scope {
  ScopeKind kind = ScopeKind::Global;
  std::vector<std::string> ids;  // normalised task ids ("T001"); empty for global
  std::string text;              // canonical form: "epic:T001", "custom:T001,T002", "global"
};

/// The accepted scope forms, for messages.
inline constexpr std::string_view kScopeForms =
    "task:T1, taskGroup:T1, subtree:T1, epic:T1, custom:T1,T2, global";

/// Parses a scope; E_SCOPE_INVALID (with the accepted forms in details.valid) when malformed.
Result<Scope> parse_scope(std::string_view text);

/// A new session's id: "ses_" + 12 hex characters.
std::string new_session_id();

struct GcResult {
  std::vector<std::string> ended;     // active sessions idle longer than session.idleMinutes
  std::vector<std::string> archived;  // ended/closed sessions older than session.archiveDays
};

class SessionEngine {
 public:
  /// Reads tasks for scopes; the audit trail only through the TaskEngine that releases a claim.
  SessionEngine(StoreRoles<SessionStore, TaskStore, AuditLog> store, const Config& config, TimeMs now, ChangeSink sink)
      : store_(store.get<SessionStore>()), tasks_(store.get<TaskStore>()), audit_(store.get<AuditLog>()),
        config_(config), now_(now), sink_(std::move(sink)) {}

  /// The tasks a scope covers right now (archived tasks excluded). E_NOT_FOUND for a missing
  /// root; E_SCOPE_INVALID when an epic: root is not an epic. Global is not enumerated: use
  /// contains() or open_tasks().
  Result<std::set<std::string>> tasks_of(const Scope& scope);
  Result<bool> contains(const Scope& scope, const std::string& task_id);
  /// Unfinished (pending, active, blocked) tasks in scope, in id order.
  Result<std::vector<Task>> open_tasks(const Scope& scope);

  /// E_SESSION_NOT_FOUND (31) with a list fix.
  Result<Session> get(const std::string& id);
  /// Validates the scope against live data and the session.maxConcurrent limit, then inserts,
  /// owned by `owner` (the caller's principal id).
  Result<Session> start(const std::string& name, const std::string& scope_text, const std::string& agent,
                        const std::string& owner = "");
  /// Ends (or closes) the session and releases its claim: the focused task goes back to pending.
  Result<Session> finish(const std::string& id, SessionStatus final_status, const std::string& note);
  Result<Session> suspend(const std::string& id, const std::string& note);
  /// The session becomes `owner`'s, and active. Exclusive: an active session another owner renewed
  /// within session.leaseSeconds is E_SESSION_OWNED (two agents never both resume one handoff);
  /// one whose lease ran out, or a suspended or ended one, is taken over (Session::owner says whose
  /// it was before: the caller's reply names them).
  /// A session that changes owner takes the new owner's `label` (the name its rows go by).
  Result<Session> resume(const std::string& id, const std::string& owner = "", const std::string& label = "");
  /// E_SESSION_OWNED unless `owner` may write in the session: its own, one from before owners
  /// (owner ""), or an in-process caller's (owner "").
  static Result<void> check_owner(const Session& session, const std::string& owner);
  /// Records where the session runs now (Session::worktree, branch), as its caller's transport
  /// says when it starts or resumes it; a change is audited.
  Result<Session> place(const std::string& id, const std::string& worktree, const std::string& branch);
  Result<Session> set_note(const std::string& id, const std::optional<std::string>& note,
                           const std::optional<std::string>& next_action);
  Result<GcResult> gc();

  /// Checks a write of the tasks domain against session.enforcement and the bound session:
  /// returns the warnings to add, or E_SESSION_REQUIRED / E_SESSION_NOT_FOUND. Touches the
  /// session's updated_at (idle detection).
  Result<std::vector<std::string>> check_write(const std::string& session);
  /// Marks an active session as working now (its updated_at, which idle detection reads):
  /// E_SESSION_NOT_FOUND, or E_SESSION_REQUIRED when it is not active.
  Result<Session> touch(const std::string& session);
  /// How long an active session may go without a write before gc() ends it (session.idleMinutes).
  TimeMs idle_after() const;

 private:
  Result<void> check_concurrency();
  Result<Session> save(const Session& before, Session after);
  void record(const std::string& id, std::string field, json::Value before, json::Value after);

  SessionStore& store_;
  TaskStore& tasks_;
  AuditLog& audit_;
  const Config& config_;
  TimeMs now_;
  ChangeSink sink_;
};

}  // namespace ct
