#include "engines/store/scan_sql.h"

namespace ct::sql {

std::map<std::string_view, RuleSql> common_rule_sql(const ScanDialect& dialect) {
  auto truth = [&](std::string_view condition) {
    return std::string(dialect.truth_open) + std::string(condition) + std::string(dialect.truth_close);
  };
  auto one_of = [](std::string_view column, std::string_view values) {
    return RuleSql{"t." + std::string(column) + " NOT IN (" + std::string(values) + ")", {"t." + std::string(column)}};
  };
  std::map<std::string_view, RuleSql> r;
  r["invalid-value:status"] = one_of("status", "'pending', 'active', 'blocked', 'done', 'cancelled'");
  r["invalid-value:priority"] = one_of("priority", "'critical', 'high', 'medium', 'low'");
  r["invalid-value:type"] = one_of("type", "'epic', 'task', 'subtask'");
  r["invalid-value:size"] = one_of("size", "'', 'small', 'medium', 'large'");
  r["description"] = {"length(t.description) > 2000", {"length(t.description)"}};
  r["completed-at"] = {"((t.status = 'done' AND t.completed_at IS NULL) OR "
                       "(t.status IN ('pending', 'active', 'blocked') AND t.completed_at IS NOT NULL))",
                       {"t.status", truth("t.completed_at IS NULL")}};
  r["cancelled-at"] = {"((t.status = 'cancelled' AND t.cancelled_at IS NULL) OR "
                       "(t.status <> 'cancelled' AND t.cancelled_at IS NOT NULL))",
                       {"t.status", truth("t.cancelled_at IS NULL")}};
  r["timestamp-order"] = {"(t.updated_at < t.created_at OR t.completed_at < t.created_at OR t.cancelled_at < t.created_at OR "
                          "t.archived_at < t.created_at)",
                          {"CASE WHEN t.updated_at < t.created_at THEN 'updatedAt' WHEN t.completed_at < t.created_at THEN "
                           "'completedAt' WHEN t.cancelled_at < t.created_at THEN 'cancelledAt' ELSE 'archivedAt' END"}};
  r["future-timestamp"] = {std::string(dialect.greatest) +
                               "(t.created_at, t.updated_at, coalesce(t.completed_at, 0), coalesce(t.cancelled_at, 0), "
                               "coalesce(t.archived_at, 0)) > {NUM}",
                           {"CASE WHEN t.created_at > {NUM} THEN 'createdAt' WHEN t.updated_at > {NUM} THEN 'updatedAt' "
                            "WHEN t.completed_at > {NUM} THEN 'completedAt' WHEN t.cancelled_at > {NUM} THEN "
                            "'cancelledAt' ELSE 'archivedAt' END"}};
  r["archived-open"] = {"(t.archived <> 0 AND t.status IN ('pending', 'active', 'blocked'))", {"t.status"}};
  r["archived-at"] = {"((t.archived <> 0 AND t.archived_at IS NULL) OR (t.archived = 0 AND t.archived_at IS NOT NULL))",
                      {truth("t.archived <> 0")}};
  r["archived-modified"] = {"(t.archived <> 0 AND t.updated_at > t.archived_at)", {}};
  return r;
}

std::string task_rules_query(const std::map<std::string_view, RuleSql>& rules, std::string_view no,
                             std::string_view more_columns, std::string_view order) {
  std::string columns = "t.id";
  std::string any;
  for (const auto& rule : task_rules()) {
    const RuleSql& sql = rules.at(rule.name);  // every rule has its SQL (tested per backend)
    columns += ", coalesce(" + sql.flag + ", " + std::string(no) + ")";
    for (const auto& detail : sql.details) columns += ", " + detail;
    any += (any.empty() ? "" : " OR ") + sql.flag;
  }
  return "SELECT " + columns + std::string(more_columns) + " FROM tasks t WHERE {ID:t.id} AND (" + any + ")" +
         std::string(order);
}

std::string common_scan_sql(ScanKind kind) {
  switch (kind) {
    case ScanKind::FocusMissingTask:
      return "SELECT f.task_id, f.session FROM focus f WHERE {ID:f.task_id} AND "
             "NOT EXISTS (SELECT 1 FROM tasks t WHERE t.id = f.task_id)";
    case ScanKind::FocusMissingSession:
      return "SELECT f.task_id, f.session FROM focus f WHERE {ID:f.task_id} AND f.session <> '' AND "
             "NOT EXISTS (SELECT 1 FROM sessions s WHERE s.id = f.session)";
    case ScanKind::FocusEndedSession:
      return "SELECT f.task_id, f.session, s.status FROM focus f JOIN sessions s ON s.id = f.session "
             "WHERE {ID:f.task_id} AND s.status IN ('ended', 'closed')";
    case ScanKind::FocusNotActive:
      return "SELECT f.task_id, f.session, t.status, t.archived FROM focus f JOIN tasks t ON t.id = f.task_id "
             "WHERE {ID:f.task_id} AND (t.status <> 'active' OR t.archived <> 0)";
    case ScanKind::SessionStatus:
      return "SELECT '', s.id, s.status FROM sessions s WHERE s.status NOT IN ('active', 'suspended', 'ended', 'closed')";
    case ScanKind::SessionEndedAt:
      return "SELECT '', s.id, s.status FROM sessions s WHERE (s.status IN ('ended', 'closed') AND s.ended_at IS NULL) "
             "OR (s.status IN ('active', 'suspended') AND s.ended_at IS NOT NULL)";
    case ScanKind::CrowdedParents:
      return "SELECT t.parent, count(*) FROM tasks t WHERE t.parent IS NOT NULL AND t.archived = 0 AND "
             "t.status IN ('pending', 'active', 'blocked') GROUP BY t.parent HAVING count(*) > {NUM} "
             "ORDER BY t.parent";
    case ScanKind::ActiveSessions: return "SELECT count(*) FROM sessions WHERE status = 'active'";
    case ScanKind::LiveChildren: return "SELECT count(*) FROM tasks WHERE parent = {TASK} AND archived = 0";
    case ScanKind::SelfReachable:
      return "WITH RECURSIVE reach(id) AS (SELECT depends_on FROM task_deps WHERE task_id = {TASK} "
             "UNION SELECT d.depends_on FROM task_deps d JOIN reach r ON d.task_id = r.id) "
             "SELECT 1 FROM reach WHERE id = {TASK} LIMIT 1";
    case ScanKind::TaskExists: return "SELECT 1 FROM tasks WHERE id = {TASK}";
    case ScanKind::MemoryTotal:
      return "SELECT '', coalesce(CAST(kept AS TEXT), 'missing'), counted FROM (SELECT (SELECT entries FROM memory_terms "
             "WHERE key = '') AS kept, (SELECT count(*) FROM memory) AS counted) x WHERE kept IS NULL OR kept <> counted";
    default: return {};
  }
}

std::string expand_scan_marks(std::string_view sql, bool one_task, std::string_view every_row, std::string_view task,
                              std::string_view number) {
  std::string out;
  out.reserve(sql.size() + 32);
  std::size_t at = 0;
  while (at < sql.size()) {
    const std::size_t open = sql.find('{', at);
    if (open == std::string_view::npos) break;
    out += sql.substr(at, open - at);
    const std::string_view rest = sql.substr(open);
    if (rest.starts_with("{ID:") && rest.find('}') != std::string_view::npos) {
      const std::size_t close = rest.find('}');
      out += one_task ? std::string(rest.substr(4, close - 4)) + " = " + std::string(task) : std::string(every_row);
      at = open + close + 1;
    } else if (rest.starts_with("{TASK}")) {
      out += task;
      at = open + 6;
    } else if (rest.starts_with("{NUM}")) {
      out += number;
      at = open + 5;
    } else {
      out += '{';  // not a mark: a regular expression's quantifier, say
      at = open + 1;
    }
  }
  out += sql.substr(std::min(at, sql.size()));
  return out;
}

}  // namespace ct::sql
