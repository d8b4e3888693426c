#include "engines/store/store_maintenance.h"

#include <algorithm>

namespace ct {

const std::vector<TaskRule>& task_rules() {
  static const std::vector<TaskRule> rules = {
      {"invalid-value:status", 1},   {"invalid-value:priority", 1}, {"invalid-value:type", 1},
      {"invalid-value:size", 1},     {"malformed-list:depends", 0}, {"malformed-list:labels", 0},
      {"malformed-list:acceptance", 0}, {"malformed-list:files", 0}, {"malformed-list:notes", 0},
      {"malformed-list:relates", 0}, {"task-id", 1},                {"title", 1},
      {"description", 1},            {"title-equals-description", 0}, {"completed-at", 2},
      {"cancelled-at", 2},           {"timestamp-order", 1},        {"future-timestamp", 1},
      {"archived-open", 1},          {"archived-at", 1},            {"archived-modified", 0},
      {"search-index", 0},
  };
  return rules;
}

std::vector<DiagnosticRow> split_task_rules(
    const std::vector<DiagnosticRow>& wide,
    const std::function<bool(const DiagnosticRow& row, const TaskRule& rule, std::string_view flag)>& broken) {
  std::vector<DiagnosticRow> out;
  for (const auto& row : wide) {
    std::size_t column = 1;
    for (const auto& rule : task_rules()) {
      const auto details = static_cast<std::size_t>(rule.details);
      if (column + details >= row.size()) break;  // cannot happen: the query has every rule's columns
      if (broken(row, rule, row[column])) {
        DiagnosticRow one{row[0], std::string(rule.name)};
        one.insert(one.end(), row.begin() + static_cast<std::ptrdiff_t>(column + 1),
                   row.begin() + static_cast<std::ptrdiff_t>(column + 1 + details));
        out.push_back(std::move(one));
      }
      column += 1 + details;
    }
  }
  return out;
}

Result<StoreCounts> StoreMaintenance::counts() {
  StoreCounts out;
  CT_TRY(sql_runner().each("SELECT (SELECT count(*) FROM tasks), (SELECT count(*) FROM audit), "
                           "(SELECT coalesce(max(seq), 0) FROM audit), (SELECT count(*) FROM sessions)",
                           {}, "cannot count the store's rows", [&](const sql::Cursor& row) {
                             out.tasks = row.integer(0);
                             out.audit_rows = row.integer(1);
                             out.last_audit_seq = row.integer(2);
                             out.sessions = row.integer(3);
                           }));
  return out;
}

Result<std::vector<PeriodStats>> StoreMaintenance::period_stats(const std::vector<StatsPeriod>& periods) {
  std::vector<PeriodStats> out(periods.size() + 1);
  if (periods.empty()) return out;
  // The periods as a table p(i, s, e); a row's period is found by one lookup in it, so each
  // query makes a single pass over the tasks of the whole span.
  sql::Args args;
  std::string table = "WITH p(i, s, e) AS (VALUES ";
  TimeMs first = periods.front().start;
  TimeMs last = periods.front().end;
  for (std::size_t i = 0; i < periods.size(); ++i) {
    table += (i ? ", (" : "(") + std::to_string(i) + ", CAST(" + args(periods[i].start) + " AS BIGINT), CAST(" +
             args(periods[i].end) + " AS BIGINT))";
    first = std::min(first, periods[i].start);
    last = std::max(last, periods[i].end);
  }
  table += ")";
  const std::string lo = args(first);
  const std::string hi = args(last);
  const std::size_t all = periods.size();
  auto slot = [&](std::int64_t bucket) -> PeriodStats* {
    if (bucket < 0) return &out[all];
    return static_cast<std::size_t>(bucket) < all ? &out[static_cast<std::size_t>(bucket)] : nullptr;
  };
  auto& db = sql_runner();
  CT_TRY(db.each(table + " SELECT (SELECT i FROM p WHERE t.created_at >= p.s AND t.created_at < p.e) AS b, count(*) "
                         "FROM tasks t WHERE t.created_at >= " + lo + " AND t.created_at < " + hi + " GROUP BY 1",
                 args, "cannot compute task statistics", [&](const sql::Cursor& row) {
                   if (!row.is_null(0))
                     if (PeriodStats* stats = slot(row.integer(0))) stats->created += row.integer(1);
                   out[all].created += row.integer(1);
                 }));
  // Completed tasks with their durations: created → completed, and first start → completed
  // where the audit trail still records the start (status set to active). Each duration kind
  // (k) is ranked within its period (b, and -1 for the whole span); nearest-rank percentiles.
  const std::string sql =
      table +
      ", c AS MATERIALIZED (SELECT (SELECT i FROM p WHERE t.completed_at >= p.s AND t.completed_at < p.e) AS b, "
      "t.completed_at - t.created_at AS d, t.completed_at - (SELECT min(a.at) FROM audit_changes ch "
      "JOIN audit a ON a.seq = ch.seq WHERE ch.task_id = t.id AND ch.field = 'status' AND ch.after = '\"active\"' "
      "AND a.at <= t.completed_at) AS w FROM tasks t WHERE t.status = 'done' AND t.completed_at >= " + lo +
      " AND t.completed_at < " + hi +
      "), x AS (SELECT 0 AS k, b, d AS v FROM c UNION ALL SELECT 0, -1, d FROM c "
      "UNION ALL SELECT 1, b, w FROM c WHERE w IS NOT NULL UNION ALL SELECT 1, -1, w FROM c WHERE w IS NOT NULL), "
      "r AS (SELECT k, b, v, row_number() OVER (PARTITION BY k, b ORDER BY v) AS rn, "
      "count(*) OVER (PARTITION BY k, b) AS n FROM x) "
      "SELECT k, b, max(n), max(CASE WHEN rn = (n + 1) / 2 THEN v END), "
      "max(CASE WHEN rn = (9 * n + 9) / 10 THEN v END) FROM r GROUP BY k, b";
  CT_TRY(db.each(sql, args, "cannot compute task statistics", [&](const sql::Cursor& row) {
    if (row.is_null(1)) return;
    PeriodStats* stats = slot(row.integer(1));
    if (!stats) return;
    if (row.integer(0) == 0) {
      stats->completed = row.integer(2);
      stats->cycle_p50 = row.optional_int(3);
      stats->cycle_p90 = row.optional_int(4);
    } else {
      stats->started = row.integer(2);
      stats->work_p50 = row.optional_int(3);
      stats->work_p90 = row.optional_int(4);
    }
  }));
  return out;
}

}  // namespace ct
