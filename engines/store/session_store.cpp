// The sessions role, written once over the backend's sql::Runner.
#include "engines/store/session_store.h"

#include <algorithm>

#include "engines/store/sql_query.h"
#include "engines/store/store_rows.h"

namespace ct {
namespace {

using sql::Value;

Session read_session(const sql::Cursor& row) { return read_session_row(row); }

/// ?1…?13 in the column order of kSessionSelect.
std::vector<Value> session_values(const Session& session) {
  return sql::values(session.id, session.name, session.scope, session.agent, to_string(session.status), session.note,
                     session.next_action, session.created_at, session.updated_at, session.ended_at,
                     session.archived_at, session.owner, session.notice);
}

}  // namespace

Result<void> SessionStore::insert_session(const Session& session) {
  return sql_runner().run("INSERT INTO sessions(id, name, scope, agent, status, note, next_action, created_at, "
                          "updated_at, ended_at, archived_at, owner, notice) "
                          "VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)",
                          session_values(session), "cannot save the session");
}

Result<void> SessionStore::update_session(const Session& session) {
  return sql_runner().run("UPDATE sessions SET name = ?2, scope = ?3, agent = ?4, status = ?5, note = ?6, "
                          "next_action = ?7, created_at = ?8, updated_at = ?9, ended_at = ?10, archived_at = ?11, "
                          "owner = ?12, notice = ?13 WHERE id = ?1",
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

Result<std::int64_t> SessionStore::count_sessions(const SessionQuery& query) {
  sql::Args args;
  const std::string where = sql::session_where(query, args);
  return sql_runner().integer("SELECT count(*) FROM sessions" + where, args, "cannot count sessions");
}

}  // namespace ct
