// The session tree (issue 54, seed 002): which session each child was started from, with the intent
// and paths it was delegated and the report it ended with — the sessions role (session_store.h),
// written once over the backend's sql::Runner.
#include "core/json_parse.h"
#include "engines/store/session_store.h"

namespace ct {
namespace {

using sql::Value;

constexpr std::string_view kChildSelect =
    "SELECT child, parent, intent, paths, report, reported_at, created_at FROM session_children";

Result<SessionChild> read_child(const sql::Cursor& row) {
  SessionChild child{std::string(row.text(0)), std::string(row.text(1)), std::string(row.text(2)), {},
                     std::string(row.text(4)), row.optional_int(5), row.integer(6)};
  auto paths = json::parse(row.text(3));
  if (!paths || !paths->is_array())
    return fail(Error(ErrorCode::FileError, "session " + child.child + " has unreadable delegated paths")
                    .with_detail("id", child.child));
  for (const auto& path : paths->as_array())
    if (path.is_string()) child.paths.push_back(path.as_string());
  return child;
}

}  // namespace

Result<void> SessionStore::put_session_child(const SessionChild& child) {
  return sql_runner().run(
      "INSERT INTO session_children(child, parent, intent, paths, report, reported_at, created_at) "
      "VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7) "
      "ON CONFLICT(child) DO UPDATE SET parent = excluded.parent, intent = excluded.intent, paths = excluded.paths, "
      "report = excluded.report, reported_at = excluded.reported_at",
      sql::values(child.child, child.parent, child.intent, json::Value::array_of(child.paths).dump(), child.report,
                  child.reported_at, child.created_at),
      "cannot record the child session");
}

Result<std::optional<SessionChild>> SessionStore::session_parent(std::string_view id) {
  static const std::string sql = std::string(kChildSelect) + " WHERE child = ?1";
  const Value args[] = {Value(id)};
  return sql_runner().first(sql, args, "cannot read the session's parent", read_child);
}

Result<std::vector<SessionChild>> SessionStore::session_children(std::string_view parent) {
  static const std::string sql = std::string(kChildSelect) + " WHERE parent = ?1 ORDER BY created_at, child";
  const Value args[] = {Value(parent)};
  return sql_runner().all(sql, args, "cannot read the session's children", read_child);
}

Result<std::vector<SessionChild>> SessionStore::session_links(const std::vector<std::string>& ids) {
  if (ids.empty()) return std::vector<SessionChild>{};
  sql::Args args;
  std::string sql = std::string(kChildSelect) + " WHERE child IN (";
  for (std::size_t i = 0; i < ids.size(); ++i) sql += (i ? ", " : "") + args(Value(ids[i]));
  sql += ")";
  return sql_runner().all(sql, args, "cannot read the sessions' parents", read_child);
}

}  // namespace ct
