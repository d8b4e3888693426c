// The sessions role, written once over the backend's sql::Runner.
#include "engines/store/session_store.h"

#include <algorithm>

#include "engines/store/sql_query.h"
#include "engines/store/store_rows.h"

namespace ct {
namespace {

using sql::Value;

Session read_session(const sql::Cursor& row) { return read_session_row(row); }

/// ?1…?15 in the column order of kSessionSelect.
std::vector<Value> session_values(const Session& session) {
  return sql::values(session.id, session.name, session.scope, session.agent, to_string(session.status), session.note,
                     session.next_action, session.created_at, session.updated_at, session.ended_at,
                     session.archived_at, session.owner, session.notice, session.worktree, session.branch);
}

constexpr std::string_view kTaskWorktreeSelect =
    "SELECT task_id, worktree, branch, base, session, created_at, pruned_at FROM task_worktrees";

TaskWorktree read_task_worktree(const sql::Cursor& row) {
  return TaskWorktree{std::string(row.text(0)), std::string(row.text(1)), std::string(row.text(2)),
                      std::string(row.text(3)), std::string(row.text(4)), row.integer(5), row.optional_int(6)};
}

}  // namespace

Result<void> SessionStore::insert_session(const Session& session) {
  return sql_runner().run("INSERT INTO sessions(id, name, scope, agent, status, note, next_action, created_at, "
                          "updated_at, ended_at, archived_at, owner, notice, worktree, branch) "
                          "VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)",
                          session_values(session), "cannot save the session");
}

Result<void> SessionStore::update_session(const Session& session) {
  return sql_runner().run("UPDATE sessions SET name = ?2, scope = ?3, agent = ?4, status = ?5, note = ?6, "
                          "next_action = ?7, created_at = ?8, updated_at = ?9, ended_at = ?10, archived_at = ?11, "
                          "owner = ?12, notice = ?13, worktree = ?14, branch = ?15 WHERE id = ?1",
                          session_values(session), "cannot save the session");
}

Result<void> SessionStore::delete_session(std::string_view id) {
  const Value args[] = {Value(id)};
  return sql_runner().run("DELETE FROM sessions WHERE id = ?1", args, "cannot remove the session");
}

Result<std::optional<Session>> SessionStore::get_session(std::string_view id) {
  static const std::string sql = std::string(kSessionSelect) + " WHERE id = ?1";
  const Value args[] = {Value(id)};
  return sql_runner().first(sql, args, "cannot read the session", read_session);
}

Result<std::vector<Session>> SessionStore::list_sessions(const SessionQuery& query) {
  sql::Args args;
  std::string sql = std::string(kSessionSelect) + sql::session_where(query, args);
  sql += " ORDER BY updated_at DESC, created_at DESC, id LIMIT " + args(sql::limit_of(query.limit));
  sql += " OFFSET " + args(std::max<std::int64_t>(0, query.offset));
  return sql_runner().all(sql, args, "cannot list sessions", read_session);
}

Result<std::vector<ActiveSession>> SessionStore::active_sessions(std::int64_t limit) {
  const Value args[] = {Value(limit)};
  return sql_runner().all(
      "SELECT id, owner FROM sessions WHERE status = 'active' AND archived_at IS NULL "
      "ORDER BY updated_at DESC, created_at DESC, id LIMIT ?1",
      args, "cannot list sessions",
      [](const sql::Cursor& row) { return ActiveSession{std::string(row.text(0)), std::string(row.text(1))}; });
}

Result<std::int64_t> SessionStore::count_sessions(const SessionQuery& query) {
  sql::Args args;
  const std::string where = sql::session_where(query, args);
  return sql_runner().integer("SELECT count(*) FROM sessions" + where, args, "cannot count sessions");
}

Result<void> SessionStore::save_task_worktree(const TaskWorktree& worktree) {
  return sql_runner().run(
      "INSERT INTO task_worktrees(task_id, worktree, branch, base, session, created_at, pruned_at) "
      "VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7) ON CONFLICT(task_id) DO UPDATE SET worktree = excluded.worktree, "
      "branch = excluded.branch, base = excluded.base, session = excluded.session, created_at = excluded.created_at, "
      "pruned_at = excluded.pruned_at",
      sql::values(worktree.task_id, worktree.worktree, worktree.branch, worktree.base, worktree.session,
                  worktree.created_at, worktree.pruned_at),
      "cannot record the task's worktree");
}

Result<std::optional<TaskWorktree>> SessionStore::get_task_worktree(std::string_view task_id) {
  static const std::string sql = std::string(kTaskWorktreeSelect) + " WHERE task_id = ?1";
  const Value args[] = {Value(task_id)};
  return sql_runner().first(sql, args, "cannot read the task's worktree", read_task_worktree);
}

Result<std::vector<TaskWorktree>> SessionStore::list_task_worktrees(bool include_pruned) {
  // By task number: T999 before T1000 (ids are "T" and digits, so the shorter is the smaller).
  static const std::string all = std::string(kTaskWorktreeSelect) + " ORDER BY length(task_id), task_id";
  static const std::string kept =
      std::string(kTaskWorktreeSelect) + " WHERE pruned_at IS NULL ORDER BY length(task_id), task_id";
  return sql_runner().all(include_pruned ? all : kept, {}, "cannot list the tasks' worktrees", read_task_worktree);
}

}  // namespace ct
