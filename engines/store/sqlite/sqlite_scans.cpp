#include "engines/store/sqlite/sqlite_scans.h"

#include <map>
#include <utility>

namespace ct::sqlite {
namespace {

/// Replaces each {ID:column} with "column = ?1" (one task) or "1" (the whole store).
std::string narrow(std::string_view sql, bool one_task) {
  std::string out;
  std::size_t at = 0;
  while (true) {
    std::size_t open = sql.find("{ID:", at);
    if (open == std::string_view::npos) break;
    std::size_t close = sql.find('}', open);
    out += sql.substr(at, open - at);
    std::string_view column = sql.substr(open + 4, close - open - 4);
    out += one_task ? std::string(column) + " = ?1" : std::string("1");
    at = close + 1;
  }
  out += sql.substr(at);
  return out;
}

/// `column` holds a JSON array (never evaluates json_type on invalid JSON).
std::string is_array(std::string_view column) {
  return "CASE WHEN json_valid(" + std::string(column) + ") THEN json_type(" + std::string(column) +
         ") = 'array' ELSE 0 END";
}

/// The depends list when it is a JSON array, else an empty one (json_each must not fail).
const std::string& depends_json() {
  static const std::string sql = "CASE WHEN " + is_array("t.depends") + " THEN t.depends ELSE '[]' END";
  return sql;
}

/// How SQLite tests one rule of task_rules(): the condition, and the detail columns.
struct RuleSql {
  std::string flag;
  std::vector<std::string> details;
};

const std::map<std::string_view, RuleSql>& rule_sql() {
  static const std::map<std::string_view, RuleSql> rules = [] {
    std::map<std::string_view, RuleSql> r;
    auto one_of = [](std::string_view column, std::string_view values) {
      return RuleSql{"t." + std::string(column) + " NOT IN (" + std::string(values) + ")", {"t." + std::string(column)}};
    };
    r["invalid-value:status"] = one_of("status", "'pending', 'active', 'blocked', 'done', 'cancelled'");
    r["invalid-value:priority"] = one_of("priority", "'critical', 'high', 'medium', 'low'");
    r["invalid-value:type"] = one_of("type", "'epic', 'task', 'subtask'");
    r["invalid-value:size"] = one_of("size", "'', 'small', 'medium', 'large'");
    // An empty list ("[]", most of them) is valid without parsing it.
    r["malformed-list:depends"] = {"(t.depends != '[]' AND (NOT (" + is_array("t.depends") + ") OR EXISTS (SELECT 1 FROM "
                                   "json_each(" + depends_json() + ") j WHERE j.type != 'text')))",
                                   {}};
    for (auto [name, column] : {std::pair<std::string_view, std::string_view>{"malformed-list:labels", "t.labels"},
                                {"malformed-list:acceptance", "t.acceptance"},
                                {"malformed-list:files", "t.files"},
                                {"malformed-list:notes", "t.notes"},
                                {"malformed-list:relates", "t.relates"}})
      r[name] = {"(" + std::string(column) + " != '[]' AND NOT (" + is_array(column) + "))", {}};
    r["task-id"] = {"(t.id NOT GLOB 'T[0-9][0-9][0-9]*' OR substr(t.id, 2) GLOB '*[^0-9]*' OR "
                    "CAST(substr(t.id, 2) AS INTEGER) != t.num)",
                    {"t.num"}};
    r["title"] = {"(length(trim(t.title)) < 3 OR length(t.title) > 200 OR instr(t.title, char(10)) > 0 OR "
                  "instr(t.title, char(13)) > 0)",
                  {"length(trim(t.title))"}};
    r["description"] = {"length(t.description) > 2000", {"length(t.description)"}};
    r["title-equals-description"] = {"(t.description != '' AND lower(trim(t.title, ' ' || char(9, 10, 13))) = "
                                     "lower(trim(t.description, ' ' || char(9, 10, 13))))",
                                     {}};
    r["completed-at"] = {"((t.status = 'done' AND t.completed_at IS NULL) OR "
                         "(t.status IN ('pending', 'active', 'blocked') AND t.completed_at IS NOT NULL))",
                         {"t.status", "t.completed_at IS NULL"}};
    r["cancelled-at"] = {"((t.status = 'cancelled' AND t.cancelled_at IS NULL) OR "
                         "(t.status != 'cancelled' AND t.cancelled_at IS NOT NULL))",
                         {"t.status", "t.cancelled_at IS NULL"}};
    r["timestamp-order"] = {"(t.updated_at < t.created_at OR t.completed_at < t.created_at OR t.cancelled_at < t.created_at OR "
                            "t.archived_at < t.created_at)",
                            {"CASE WHEN t.updated_at < t.created_at THEN 'updatedAt' WHEN t.completed_at < t.created_at THEN "
                             "'completedAt' WHEN t.cancelled_at < t.created_at THEN 'cancelledAt' ELSE 'archivedAt' END"}};
    r["future-timestamp"] = {"max(t.created_at, t.updated_at, coalesce(t.completed_at, 0), coalesce(t.cancelled_at, 0), "
                             "coalesce(t.archived_at, 0)) > CAST(?2 AS INTEGER)",
                             {"CASE WHEN t.created_at > CAST(?2 AS INTEGER) THEN 'createdAt' WHEN t.updated_at > "
                              "CAST(?2 AS INTEGER) THEN 'updatedAt' WHEN t.completed_at > CAST(?2 AS INTEGER) THEN "
                              "'completedAt' WHEN t.cancelled_at > CAST(?2 AS INTEGER) THEN 'cancelledAt' ELSE "
                              "'archivedAt' END"}};
    r["archived-open"] = {"(t.archived != 0 AND t.status IN ('pending', 'active', 'blocked'))", {"t.status"}};
    r["archived-at"] = {"((t.archived != 0 AND t.archived_at IS NULL) OR (t.archived = 0 AND t.archived_at IS NOT NULL))",
                        {"t.archived != 0"}};
    r["archived-modified"] = {"(t.archived != 0 AND t.updated_at > t.archived_at)", {}};
    // FTS5 keeps one row per indexed document in its docsize table: a plain lookup, where a rowid
    // query through the virtual table costs six times as much.
    r["search-index"] = {"NOT EXISTS (SELECT 1 FROM tasks_fts_docsize d WHERE d.id = t.num)", {}};
    return r;
  }();
  return rules;
}

/// One pass over the tasks: the id, then per rule its flag and its detail columns; only rows
/// that break at least one rule come back.
std::string task_rules_sql() {
  std::string columns = "t.id";
  std::string any;
  for (const auto& rule : task_rules()) {
    const RuleSql& sql = rule_sql().at(rule.name);  // every rule has its SQL (tested)
    columns += ", coalesce(" + sql.flag + ", 0)";
    for (const auto& detail : sql.details) columns += ", " + detail;
    any += (any.empty() ? "" : " OR ") + sql.flag;
  }
  return "SELECT " + columns + " FROM tasks t WHERE {ID:t.id} AND (" + any + ")";
}

std::string whole_store_sql(ScanKind kind) {
  switch (kind) {
    case ScanKind::TaskRules: return task_rules_sql();
    case ScanKind::MissingDependency:
      return "SELECT t.id, j.value FROM tasks t, json_each(" + depends_json() + ") j WHERE {ID:t.id} AND "
             "t.depends != '[]' AND j.type = 'text' AND NOT EXISTS (SELECT 1 FROM tasks u WHERE u.id = j.value)";
    case ScanKind::DependencyEdges:
      return "SELECT d.task_id, d.depends_on, 'extra' FROM task_deps d WHERE {ID:d.task_id} AND NOT EXISTS "
             "(SELECT 1 FROM tasks t, json_each(" + depends_json() + ") j WHERE t.id = d.task_id AND "
             "j.value = d.depends_on) "
             "UNION ALL SELECT t.id, j.value, 'missing' FROM tasks t, json_each(" + depends_json() + ") j "
             "WHERE {ID:t.id} AND t.depends != '[]' AND j.type = 'text' AND NOT EXISTS "
             "(SELECT 1 FROM task_deps d WHERE d.task_id = t.id AND d.depends_on = j.value)";
    case ScanKind::OrphanSearchRows:
      return "SELECT '', d.id FROM tasks_fts_docsize d WHERE d.id NOT IN (SELECT num FROM tasks)";
    case ScanKind::FocusMissingTask:
      return "SELECT f.task_id, f.session FROM focus f WHERE {ID:f.task_id} AND "
             "NOT EXISTS (SELECT 1 FROM tasks t WHERE t.id = f.task_id)";
    case ScanKind::FocusMissingSession:
      return "SELECT f.task_id, f.session FROM focus f WHERE {ID:f.task_id} AND f.session != '' AND "
             "NOT EXISTS (SELECT 1 FROM sessions s WHERE s.id = f.session)";
    case ScanKind::FocusEndedSession:
      return "SELECT f.task_id, f.session, s.status FROM focus f JOIN sessions s ON s.id = f.session "
             "WHERE {ID:f.task_id} AND s.status IN ('ended', 'closed')";
    case ScanKind::FocusNotActive:
      return "SELECT f.task_id, f.session, t.status, t.archived FROM focus f JOIN tasks t ON t.id = f.task_id "
             "WHERE {ID:f.task_id} AND (t.status != 'active' OR t.archived != 0)";
    case ScanKind::SharedClaims:
      return "SELECT f.task_id, group_concat(f.session, ', ') FROM focus f WHERE {ID:f.task_id} "
             "GROUP BY f.task_id HAVING count(*) > 1";
    case ScanKind::SessionsWithSeveralTasks:
      return "SELECT '', f.session, group_concat(f.task_id, ', ') FROM focus f GROUP BY f.session HAVING count(*) > 1";
    case ScanKind::IdCounter:
      return "SELECT '', coalesce(counter, 'missing'), top FROM (SELECT (SELECT value FROM meta WHERE "
             "key = 'next_task_num') AS counter, (SELECT max(num) FROM tasks) AS top) "
             "WHERE top IS NOT NULL AND coalesce(CAST(counter AS INTEGER), 0) <= top";
    case ScanKind::SessionStatus:
      return "SELECT '', s.id, s.status FROM sessions s WHERE s.status NOT IN ('active', 'suspended', 'ended', 'closed')";
    case ScanKind::SessionEndedAt:
      return "SELECT '', s.id, s.status FROM sessions s WHERE (s.status IN ('ended', 'closed') AND s.ended_at IS NULL) "
             "OR (s.status IN ('active', 'suspended') AND s.ended_at IS NOT NULL)";
    case ScanKind::IntegrityQuick: return "PRAGMA quick_check";
    case ScanKind::IntegrityFull: return "PRAGMA integrity_check";
    case ScanKind::ForeignKeys: return "PRAGMA foreign_key_check";
    case ScanKind::CrowdedParents:
      return "SELECT t.parent, count(*) FROM tasks t WHERE t.parent IS NOT NULL AND t.archived = 0 AND "
             "t.status IN ('pending', 'active', 'blocked') GROUP BY t.parent HAVING count(*) > CAST(?2 AS INTEGER)";
    case ScanKind::ActiveSessions: return "SELECT count(*) FROM sessions WHERE status = 'active'";
    case ScanKind::ParentRows:
      return "SELECT t.id, coalesce(t.parent, ''), t.type, t.archived FROM tasks t ORDER BY t.num";
    case ScanKind::LiveChildren: return "SELECT count(*) FROM tasks WHERE parent = ?1 AND archived = 0";
    case ScanKind::DependencyRows:
      return "SELECT t.id, j.value FROM tasks t, json_each(" + depends_json() + ") j "
             "WHERE t.depends != '[]' AND j.type = 'text' AND EXISTS (SELECT 1 FROM tasks u WHERE u.id = j.value) "
             "ORDER BY t.num";
    case ScanKind::SelfReachable:
      return "WITH RECURSIVE reach(id) AS (SELECT depends_on FROM task_deps WHERE task_id = ?1 "
             "UNION SELECT d.depends_on FROM task_deps d JOIN reach r ON d.task_id = r.id) "
             "SELECT 1 FROM reach WHERE id = ?1 LIMIT 1";
    case ScanKind::TaskExists: return "SELECT 1 FROM tasks WHERE id = ?1";
  }
  return {};
}

}  // namespace

std::string scan_sql(ScanKind kind, bool one_task) {
  // The parent chain of one task: it and its ancestors (a loop stops after 64 steps).
  if (kind == ScanKind::ParentRows && one_task)
    return "WITH RECURSIVE up(id, n) AS (SELECT ?1, 0 UNION ALL SELECT t.parent, up.n + 1 FROM tasks t "
           "JOIN up ON t.id = up.id WHERE t.parent IS NOT NULL AND up.n < 64) "
           "SELECT t.id, coalesce(t.parent, ''), t.type, t.archived FROM up JOIN tasks t ON t.id = up.id";
  return narrow(whole_store_sql(kind), one_task);
}

}  // namespace ct::sqlite
