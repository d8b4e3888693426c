// The compliance role, written once over the backend's sql::Runner.
#include "engines/store/compliance_store.h"

#include "engines/store/sql_query.h"
#include "engines/store/store_rows.h"

namespace ct {

Result<std::int64_t> ComplianceStore::insert_compliance(const ComplianceRecord& record) {
  // Ids one past the largest (writers are serialised), as SQLite numbers its rows.
  CT_TRY_ASSIGN(std::optional<std::int64_t> id,
                sql_runner().first("INSERT INTO compliance(id, at, task_id, check_name, passed, score, details, "
                                   "session, agent) VALUES((SELECT coalesce(max(id), 0) + 1 FROM compliance), ?1, ?2, "
                                   "?3, ?4, ?5, ?6, ?7, ?8) RETURNING id",
                                   sql::values(record.at, record.task_id, record.check,
                                               std::int64_t{record.passed ? 1 : 0}, record.score, record.details,
                                               record.session, record.agent),
                                   "cannot record the compliance result",
                                   [](const sql::Cursor& row) { return row.integer(0); }));
  if (!id) return fail(ErrorCode::Internal, "INSERT … RETURNING gave no row");
  return *id;
}

Result<std::vector<ComplianceSummary>> ComplianceStore::compliance_summary(const ComplianceQuery& query) {
  sql::Args args;
  const std::string where = sql::compliance_where(query, false, args);
  const auto [keys, by] = compliance_grouping(query.group);
  // The group's latest result is the row of its largest id; scores averaged as doubles.
  const std::string sql =
      std::string("SELECT g.check_key, g.agent_key, g.runs, g.passes, g.score, l.at, l.passed FROM (SELECT ") + keys +
      ", count(*) AS runs, sum(c.passed) AS passes, avg(CAST(c.score AS DOUBLE PRECISION)) AS score, max(c.id) AS "
      "last FROM compliance c" + where + " GROUP BY " + by + ") AS g JOIN compliance l ON l.id = g.last ORDER BY " +
      by;
  return sql_runner().all(sql, args, "cannot summarise compliance results",
                          [](const sql::Cursor& row) { return read_compliance_summary_row(row); });
}

Result<std::vector<ComplianceRecord>> ComplianceStore::list_compliance(const ComplianceQuery& query) {
  sql::Args args;
  std::string sql = "SELECT " + std::string(kComplianceColumns) + " FROM compliance c" +
                    sql::compliance_where(query, true, args) + " ORDER BY c.id DESC";
  sql += " LIMIT " + args(sql::limit_of(query.limit));
  return sql_runner().all(sql, args, "cannot read compliance results",
                          [](const sql::Cursor& row) { return read_compliance_row(row); });
}

}  // namespace ct
