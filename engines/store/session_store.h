// The sessions role of the storage seam (engines/store/store.h): session rows
// (engines/rules/session_engine.h holds their rules).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/clock.h"
#include "core/error.h"
#include "engines/store/sql_runner.h"

namespace ct {

/// Status of a session (docs/architecture.md §4): only active sessions count against session.maxConcurrent.
enum class SessionStatus { Active, Suspended, Ended, Closed };
inline std::string_view to_string(SessionStatus status) {
  switch (status) {
    case SessionStatus::Active: return "active";
    case SessionStatus::Suspended: return "suspended";
    case SessionStatus::Ended: return "ended";
    case SessionStatus::Closed: return "closed";
  }
  return "active";
}
inline std::optional<SessionStatus> parse_session_status(std::string_view text) {
  for (auto status : {SessionStatus::Active, SessionStatus::Suspended, SessionStatus::Ended, SessionStatus::Closed})
    if (to_string(status) == text) return status;
  return std::nullopt;
}

/// A named, scoped unit of agent work (engines/rules/session_engine.h holds its rules).
struct Session {
  std::string id;                        // "ses_" + 12 hex
  std::string name;
  std::string scope;                     // as given: "epic:T001", "global", …
  std::string agent;
  SessionStatus status = SessionStatus::Active;
  std::string note;
  std::string next_action;
  TimeMs created_at = 0;
  TimeMs updated_at = 0;                 // last write made in the session (idle detection)
  std::optional<TimeMs> ended_at;
  std::optional<TimeMs> archived_at;     // set by session.gc; archived sessions are hidden from lists
  /// The principal that started or last resumed it (domains/principal.h: "agent:…", "person:…");
  /// "" for sessions from before principals: the first caller to resume one owns it.
  std::string owner;
  /// What its next call is told once (JSON {task, by, at}: another session took over its claim).
  std::string notice;
  /// Where it runs (issue 53): the git work tree (its top-level directory) and branch of the caller
  /// that started or last resumed it; "" when that caller was not in git or could not say (HTTP).
  std::string worktree;
  std::string branch;
};

struct SessionQuery {
  std::vector<SessionStatus> statuses;   // empty = any
  std::optional<TimeMs> updated_before;  // updated_at < this
  std::optional<TimeMs> ended_before;    // ended_at < this
  bool include_archived = false;
  std::int64_t limit = -1;               // -1 = no limit; newest (updated_at) first
  std::int64_t offset = 0;
};

/// The git worktree orchestrate.spawn made for a task (orchestrator.worktrees, issue 53): its
/// folder, its branch, the commit it branched from (what the task's change is diffed against) and
/// the session that spawned it; `pruned_at` once orchestrate.worktrees.prune removed it.
struct TaskWorktree {
  std::string task_id;
  std::string worktree;  // absolute top-level directory
  std::string branch;    // "cleo/T012"
  std::string base;      // full commit sha
  std::string session;
  TimeMs created_at = 0;
  std::optional<TimeMs> pruned_at;
};

/// A child session (issue 54, seed 002): started from `parent` with a delegated intent and the paths
/// it may touch (its tasks are its scope); `report` is what it ended with, which reached the parent.
struct SessionChild {
  std::string child;
  std::string parent;
  std::string intent;
  std::vector<std::string> paths;
  std::string report;
  std::optional<TimeMs> reported_at;
  TimeMs created_at = 0;
};

/// An active session's id and owner: what a call that names no session may adopt.
struct ActiveSession {
  std::string id;
  std::string owner;  // empty: anyone's
};

/// Session rows and the worktrees of tasks; a session's focus is kept by TaskStore.
class SessionStore {
 public:
  [[nodiscard]] Result<void> insert_session(const Session& session);
  [[nodiscard]] Result<void> update_session(const Session& session);
  /// Removes a session row (undoing tasks.import takes back the sessions it brought; sessions
  /// otherwise end and are archived, never removed). Nothing to remove is no error.
  [[nodiscard]] Result<void> delete_session(std::string_view id);
  [[nodiscard]] Result<std::optional<Session>> get_session(std::string_view id);
  [[nodiscard]] Result<std::vector<Session>> list_sessions(const SessionQuery& query);
  [[nodiscard]] Result<std::int64_t> count_sessions(const SessionQuery& query);
  /// At most `limit` active sessions (not archived), the most recently updated first, as
  /// list_sessions orders them: only their ids and owners, which every `ct` command that names no
  /// session asks for (domains/pipeline.h's adopt_session; issue 56).
  [[nodiscard]] Result<std::vector<ActiveSession>> active_sessions(std::int64_t limit);
  /// Records a child session's link to its parent, or its report (engines/store/session_children.cpp).
  [[nodiscard]] Result<void> put_session_child(const SessionChild& child);
  /// The link of session `id` to its parent; nullopt when it has none.
  [[nodiscard]] Result<std::optional<SessionChild>> session_parent(std::string_view id);
  /// The children of session `parent`, oldest first.
  [[nodiscard]] Result<std::vector<SessionChild>> session_children(std::string_view parent);
  /// The links of those of `ids` that are children (for a page of sessions).
  [[nodiscard]] Result<std::vector<SessionChild>> session_links(const std::vector<std::string>& ids);
  /// Records a task's worktree (one per task: a new one replaces the pruned one before it).
  [[nodiscard]] Result<void> save_task_worktree(const TaskWorktree& worktree);
  [[nodiscard]] Result<std::optional<TaskWorktree>> get_task_worktree(std::string_view task_id);
  /// Every task's worktree in task order; pruned ones only with `include_pruned`.
  [[nodiscard]] Result<std::vector<TaskWorktree>> list_task_worktrees(bool include_pruned);

 protected:
  virtual sql::Runner& sql_runner() = 0;
  ~SessionStore() = default;  // a role of a Store: never owned or deleted through it
};

}  // namespace ct
