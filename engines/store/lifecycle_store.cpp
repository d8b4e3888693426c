// The lifecycle role, written once over the backend's sql::Runner.
#include "engines/store/lifecycle_store.h"

#include <algorithm>

#include "engines/store/store_rows.h"

namespace ct {

using sql::Value;

const std::string& LifecycleStore::lifecycle_states_sql() {
  static const std::string sql = "SELECT " + std::string(kLifecycleStateColumns) +
                                 " FROM lifecycle WHERE subject = ?1 AND kind = ?2 ORDER BY name";
  return sql;
}

Result<std::vector<LifecycleState>> LifecycleStore::lifecycle_states(std::string_view subject, LifecycleKind kind) {
  const Value args[] = {Value(subject), Value(to_string(kind))};
  return sql_runner().all(lifecycle_states_sql(), args, "cannot read lifecycle states", [&](const sql::Cursor& row) {
    return read_lifecycle_state_row(row, subject, kind);
  });
}

Result<void> LifecycleStore::put_lifecycle(const LifecycleEvent& event) {
  const LifecycleState& s = event.state;
  auto& db = sql_runner();
  return db.atomically([&]() -> Result<void> {
    CT_TRY(db.run("INSERT INTO lifecycle(subject, kind, name, status, at, agent, session, notes, evidence) "
                  "VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9) "
                  "ON CONFLICT(subject, kind, name) DO UPDATE SET status = excluded.status, at = excluded.at, "
                  "agent = excluded.agent, session = excluded.session, notes = excluded.notes, "
                  "evidence = excluded.evidence",
                  sql::values(s.subject, to_string(s.kind), s.name, s.status, s.at, s.agent, s.session, s.notes,
                              s.evidence),
                  "cannot save the lifecycle state"));
    // seq one past the largest, as SQLite numbers its rows (writers are serialised).
    return db.run("INSERT INTO lifecycle_events(seq, subject, kind, name, from_status, status, at, agent, session, "
                  "notes, evidence, operation) VALUES((SELECT coalesce(max(seq), 0) + 1 FROM lifecycle_events), ?1, ?2, "
                  "?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
                  sql::values(s.subject, to_string(s.kind), s.name, event.from, s.status, s.at, s.agent, s.session,
                              s.notes, s.evidence, event.operation),
                  "cannot save the lifecycle history");
  });
}

Result<std::vector<LifecycleEvent>> LifecycleStore::lifecycle_events(std::string_view subject,
                                                                     std::optional<LifecycleKind> kind,
                                                                     std::int64_t limit, std::int64_t offset) {
  static const std::string sql = "SELECT " + std::string(kLifecycleEventColumns) +
                                 " FROM lifecycle_events WHERE subject = ?1 AND (CAST(?2 AS TEXT) = '' OR kind = ?2) "
                                 "ORDER BY seq DESC LIMIT ?3 OFFSET ?4";
  const Value args[] = {Value(subject), Value(kind ? to_string(*kind) : std::string_view()), Value(sql::limit_of(limit)),
                        Value(std::max<std::int64_t>(0, offset))};
  return sql_runner().all(sql, args, "cannot read the lifecycle history",
                          [&](const sql::Cursor& row) { return read_lifecycle_event_row(row, subject); });
}

Result<std::int64_t> LifecycleStore::count_lifecycle_events(std::string_view subject, std::optional<LifecycleKind> kind) {
  const Value args[] = {Value(subject), Value(kind ? to_string(*kind) : std::string_view())};
  return sql_runner().integer("SELECT count(*) FROM lifecycle_events WHERE subject = ?1 "
                              "AND (CAST(?2 AS TEXT) = '' OR kind = ?2)",
                              args, "cannot count the lifecycle history");
}

}  // namespace ct
