// The SQLite store, part: the audit trail (hash chain, changes), idempotency keys, the change
// signal, protocol-check results.
#include "engines/store/sqlite/sqlite_store_impl.h"

namespace ct::sqlite {

Result<std::int64_t> SqliteStore::append_audit(const AuditEntry& entry) {
  std::int64_t seq = 0;
  auto result = atomically([&]() -> Result<void> {
    // Writers are serialised by the write transaction, so the last row is stable here.
    std::string previous;
    {
      CT_TRY_ASSIGN(sqlite3_stmt* raw, prepare("SELECT seq, hash FROM audit ORDER BY seq DESC LIMIT 1"));
      Statement stmt(raw);
      CT_TRY_ASSIGN(bool row, step(stmt, "cannot read the audit trail"));
      if (row) {
        seq = stmt.integer(0);
        previous = stmt.text(1);
      }
    }
    CT_TRY_ASSIGN(const AuditLink link, next_link(*this, entry, seq, std::move(previous)));
    seq = link.seq;
    CT_TRY_ASSIGN(sqlite3_stmt* raw,
                  prepare("INSERT INTO audit(seq, at, session, agent, operation, task_id, params, outcome, reason, "
                          "hash, intent) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)"));
    {
      Statement stmt(raw);
      stmt.bind(1, seq).bind(2, static_cast<std::int64_t>(entry.at)).bind(3, entry.session);
      stmt.bind(4, entry.agent).bind(5, entry.operation).bind(6, entry.task_id);
      stmt.bind(7, link.text.params).bind(8, entry.outcome).bind(9, entry.reason).bind(10, link.hash);
      if (!link.text.intent) stmt.bind_null(11); else stmt.bind(11, *link.text.intent);
      CT_TRY(finish(stmt, "cannot append to the audit trail"));
    }
    if (entry.changes.empty()) return {};
    CT_TRY_ASSIGN(sqlite3_stmt* change_raw,
                  prepare("INSERT INTO audit_changes(seq, task_id, field, before, after) VALUES(?1, ?2, ?3, ?4, ?5)"));
    for (std::size_t i = 0; i < entry.changes.size(); ++i) {
      const auto& change = entry.changes[i];
      const auto& [before, after] = link.text.changes[i];
      Statement stmt(change_raw);
      stmt.bind(1, seq).bind(2, change.task_id).bind(3, change.field);
      if (!before) stmt.bind_null(4); else stmt.bind(4, *before);
      if (!after) stmt.bind_null(5); else stmt.bind(5, *after);
      CT_TRY(finish(stmt, "cannot append to the audit trail"));
    }
    return {};
  });
  if (!result) return std::unexpected(std::move(result.error()));
  return seq;
}

Result<std::vector<AuditEntry>> SqliteStore::read_audit(const AuditQuery& query) {
  std::string sql = "SELECT " + std::string(kAuditColumns) + " FROM audit";
  std::string changes_sql = "SELECT task_id, field, before, after FROM audit_changes WHERE seq = ?1";
  std::vector<SqlValue> params;
  std::vector<SqlValue> change_params;
  if (query.task_id && query.field) {
    sql += " WHERE seq IN (SELECT seq FROM audit_changes WHERE task_id = ? AND field = ?)";
    params = {*query.task_id, *query.field};
    changes_sql += " AND task_id = ?2 AND field = ?3";
    change_params = {*query.task_id, *query.field};
  } else if (query.task_id) {
    sql += " WHERE seq IN (SELECT seq FROM audit_changes WHERE task_id = ?1 "
           "UNION SELECT seq FROM audit WHERE task_id = ?1)";
    params = {*query.task_id};
    changes_sql += " AND task_id = ?2";
    change_params = {*query.task_id};
  } else if (query.field) {
    sql += " WHERE seq IN (SELECT seq FROM audit_changes WHERE field = ?)";
    params = {*query.field};
    changes_sql += " AND field = ?2";
    change_params = {*query.field};
  }
  // Further filters are ANDed; their placeholders follow the ones above.
  std::string where = params.empty() ? " WHERE " : " AND ";
  auto add_filter = [&](std::string_view condition, SqlValue value) {
    params.push_back(std::move(value));
    sql += where;
    sql += condition;
    sql += "?" + std::to_string(params.size());
    where = " AND ";
  };
  if (query.operation) add_filter("operation = ", *query.operation);
  if (query.session) add_filter("session = ", *query.session);
  if (query.agent) add_filter("agent = ", *query.agent);
  if (query.since) add_filter("at >= ", static_cast<std::int64_t>(*query.since));
  if (query.after_seq) add_filter("seq > ", *query.after_seq);
  if (query.upto_seq) add_filter("seq <= ", *query.upto_seq);
  if (query.category) add_filter("json_extract(intent, '$.category') = ", *query.category);
  if (query.tag) {
    params.push_back(*query.tag);
    sql += where + "EXISTS (SELECT 1 FROM json_each(intent, '$.tags') WHERE value = ?" + std::to_string(params.size()) + ")";
    where = " AND ";
  }
  // Confidences are bound as text (a statement binds text and integers) and compared as numbers.
  if (query.min_confidence)
    add_filter("json_extract(intent, '$.confidence') >= 0 + ", json::Value(*query.min_confidence).dump());
  if (query.max_confidence)
    add_filter("json_extract(intent, '$.confidence') <= 0 + ", json::Value(*query.max_confidence).dump());
  if (query.reason_text) {
    params.push_back(*query.reason_text);
    sql += where + "instr(lower(reason), lower(?" + std::to_string(params.size()) + ")) > 0";
    where = " AND ";
  }
  changes_sql += " ORDER BY rowid";
  sql += query.ascending ? " ORDER BY seq" : " ORDER BY seq DESC";
  if (query.limit >= 0 || query.offset > 0) {
    // Numbered after the filter parameters: ?N picks the next free index.
    int next = static_cast<int>(params.size()) + 1;
    sql += " LIMIT ?" + std::to_string(next) + " OFFSET ?" + std::to_string(next + 1);
    params.emplace_back(query.limit >= 0 ? query.limit : std::int64_t{-1});
    params.emplace_back(std::max<std::int64_t>(0, query.offset));
  }

  std::vector<AuditEntry> entries;
  {
    CT_TRY_ASSIGN(sqlite3_stmt* raw, prepare(sql));
    Statement stmt(raw);
    stmt.bind_all(params);
    CT_TRY(for_each_row(stmt, "cannot read the audit trail", [&] { entries.push_back(read_audit_row(stmt)); }));
  }
  CT_TRY_ASSIGN(sqlite3_stmt* change_raw, prepare(changes_sql));
  for (auto& entry : entries) {
    Statement stmt(change_raw);
    stmt.bind(1, entry.seq);
    stmt.bind_all(change_params, 2);
    CT_TRY(for_each_row(stmt, "cannot read the audit trail", [&] { entry.changes.push_back(read_change_row(stmt, 0)); }));
  }
  return entries;
}

Result<std::optional<IdempotentCall>> SqliteStore::find_idempotent(std::string_view key) {
  CT_TRY_ASSIGN(sqlite3_stmt* raw, prepare("SELECT operation, params, reply, at FROM idempotency WHERE key = ?1"));
  Statement stmt(raw);
  stmt.bind(1, key);
  CT_TRY_ASSIGN(bool row, step(stmt, "cannot read idempotency keys"));
  if (!row) return std::optional<IdempotentCall>();
  return std::optional<IdempotentCall>(IdempotentCall{std::string(key), std::string(stmt.text(0)),
                                                      std::string(stmt.text(1)), std::string(stmt.text(2)),
                                                      stmt.integer(3)});
}

Result<void> SqliteStore::remember_idempotent(const IdempotentCall& call, TimeMs forget_before) {
  return atomically([&]() -> Result<void> {
    {
      CT_TRY_ASSIGN(sqlite3_stmt* raw, prepare("DELETE FROM idempotency WHERE at < ?1"));
      Statement stmt(raw);
      stmt.bind(1, static_cast<std::int64_t>(forget_before));
      CT_TRY(finish(stmt, "cannot expire idempotency keys"));
    }
    CT_TRY_ASSIGN(sqlite3_stmt* raw, prepare("INSERT OR REPLACE INTO idempotency(key, operation, params, reply, at) "
                                             "VALUES(?1, ?2, ?3, ?4, ?5)"));
    Statement stmt(raw);
    stmt.bind(1, call.key).bind(2, call.operation).bind(3, call.params).bind(4, call.reply);
    stmt.bind(5, static_cast<std::int64_t>(call.at));
    return finish(stmt, "cannot record the idempotency key");
  });
}

Result<std::int64_t> SqliteStore::schema_version() { return user_version(); }

Result<std::int64_t> SqliteStore::change_stamp() {
  CT_TRY_ASSIGN(sqlite3_stmt* raw, prepare("PRAGMA data_version"));
  Statement stmt(raw);
  CT_TRY_ASSIGN(bool row, step(stmt, "cannot read the database's change counter"));
  if (!row) return fail(ErrorCode::Internal, "PRAGMA data_version returned no row");
  return stmt.integer(0);
}

Result<std::int64_t> SqliteStore::insert_compliance(const ComplianceRecord& record) {
  CT_TRY_ASSIGN(sqlite3_stmt* raw,
                prepare("INSERT INTO compliance(at, task_id, check_name, passed, score, details, session, agent) "
                        "VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8) RETURNING id"));
  Statement stmt(raw);
  stmt.bind(1, static_cast<std::int64_t>(record.at)).bind(2, record.task_id).bind(3, record.check);
  stmt.bind(4, std::int64_t{record.passed ? 1 : 0}).bind(5, record.score).bind(6, record.details);
  stmt.bind(7, record.session).bind(8, record.agent);
  CT_TRY_ASSIGN(bool row, step(stmt, "cannot record the compliance result"));
  if (!row) return fail(ErrorCode::Internal, "INSERT … RETURNING gave no row");
  std::int64_t id = stmt.integer(0);
  CT_TRY(finish(stmt, "cannot record the compliance result"));
  return id;
}

Result<std::vector<ComplianceSummary>> SqliteStore::compliance_summary(const ComplianceQuery& query) {
  std::vector<SqlValue> params;
  std::string where = compliance_where(query, false, params);
  const auto [keys, by] = compliance_grouping(query.group);
  // With max() the only min/max aggregate, SQLite takes the bare columns c.at and c.passed from
  // the row holding max(c.id): the group's latest result.
  std::string sql = std::string("SELECT ") + keys + ", count(*), sum(c.passed), avg(c.score), c.at, c.passed, " +
                    "max(c.id) FROM compliance c" + where + " GROUP BY " + by + " ORDER BY " + by;
  CT_TRY_ASSIGN(sqlite3_stmt* raw, prepare(sql));
  Statement stmt(raw);
  stmt.bind_all(params);
  std::vector<ComplianceSummary> out;
  CT_TRY(for_each_row(stmt, "cannot summarise compliance results",
                      [&] { out.push_back(read_compliance_summary_row(stmt)); }));
  return out;
}

Result<std::vector<ComplianceRecord>> SqliteStore::list_compliance(const ComplianceQuery& query) {
  std::vector<SqlValue> params;
  std::string sql = "SELECT " + std::string(kComplianceColumns) + " FROM compliance c" +
                    compliance_where(query, true, params) + " ORDER BY c.id DESC LIMIT ?";
  params.emplace_back(query.limit);
  CT_TRY_ASSIGN(sqlite3_stmt* raw, prepare(sql));
  Statement stmt(raw);
  stmt.bind_all(params);
  std::vector<ComplianceRecord> out;
  CT_TRY(for_each_row(stmt, "cannot read compliance results", [&] { out.push_back(read_compliance_row(stmt)); }));
  return out;
}

}  // namespace ct::sqlite
