#include "engines/store/sqlite/sqlite_scans.h"

#include "engines/store/scan_sql.h"

#include <map>
#include <utility>

namespace ct::sqlite {
namespace {

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

/// How SQLite tests each rule of task_rules(): the rules both dialects test alike
/// (engines/store/scan_sql.h), and these.
const std::map<std::string_view, sql::RuleSql>& rule_sql() {
  static const std::map<std::string_view, sql::RuleSql> rules = [] {
    auto r = sql::common_rule_sql({.greatest = "max", .truth_open = "", .truth_close = ""});
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
    r["title-equals-description"] = {"(t.description != '' AND lower(trim(t.title, ' ' || char(9, 10, 13))) = "
                                     "lower(trim(t.description, ' ' || char(9, 10, 13))))",
                                     {}};
    // FTS5 keeps one row per indexed document in its docsize table: a plain lookup, where a rowid
    // query through the virtual table costs six times as much. A noted task (tasks_fts_tail) is
    // searched from its row until the next fold.
    r["search-index"] = {"NOT EXISTS (SELECT 1 FROM tasks_fts_docsize d WHERE d.id = t.num) AND "
                         "NOT EXISTS (SELECT 1 FROM tasks_fts_tail f WHERE f.num = t.num)",
                         {}};
    return r;
  }();
  return rules;
}

/// One pass over the tasks: the id, then per rule its flag and its detail columns; only rows
/// that break at least one rule come back.
std::string task_rules_sql() { return sql::task_rules_query(rule_sql(), "0", "", ""); }

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
    case ScanKind::SharedClaims:
      return "SELECT f.task_id, group_concat(f.session, ', ') FROM focus f WHERE {ID:f.task_id} "
             "GROUP BY f.task_id HAVING count(*) > 1";
    case ScanKind::SessionsWithSeveralTasks:
      return "SELECT '', f.session, group_concat(f.task_id, ', ') FROM focus f GROUP BY f.session HAVING count(*) > 1";
    case ScanKind::IdCounter:
      return "SELECT '', coalesce(counter, 'missing'), top FROM (SELECT (SELECT value FROM meta WHERE "
             "key = 'next_task_num') AS counter, (SELECT max(num) FROM tasks) AS top) "
             "WHERE top IS NOT NULL AND coalesce(CAST(counter AS INTEGER), 0) <= top";
    case ScanKind::IntegrityQuick: return "PRAGMA quick_check";
    case ScanKind::IntegrityFull: return "PRAGMA integrity_check";
    case ScanKind::ForeignKeys: return "PRAGMA foreign_key_check";
    case ScanKind::ParentRows:
      return "SELECT t.id, coalesce(t.parent, ''), t.type, t.archived FROM tasks t ORDER BY t.num";
    case ScanKind::DependencyRows:
      return "SELECT t.id, j.value FROM tasks t, json_each(" + depends_json() + ") j "
             "WHERE t.depends != '[]' AND j.type = 'text' AND EXISTS (SELECT 1 FROM tasks u WHERE u.id = j.value) "
             "ORDER BY t.num";
    default: return sql::common_scan_sql(kind);
  }
  return {};
}

/// The query of `kind` with the marks of engines/store/scan_sql.h.
std::string marked_scan_sql(ScanKind kind, bool one_task) {
  // The parent chain of one task: it and its ancestors (a loop stops after 64 steps).
  if (kind == ScanKind::ParentRows && one_task)
    return "WITH RECURSIVE up(id, n) AS (SELECT {TASK}, 0 UNION ALL SELECT t.parent, up.n + 1 FROM tasks t "
           "JOIN up ON t.id = up.id WHERE t.parent IS NOT NULL AND up.n < 64) "
           "SELECT t.id, coalesce(t.parent, ''), t.type, t.archived FROM up JOIN tasks t ON t.id = up.id";
  return whole_store_sql(kind);
}

}  // namespace

std::string scan_sql(ScanKind kind, bool one_task) {
  return sql::expand_scan_marks(marked_scan_sql(kind, one_task), one_task, "1", "?1", "CAST(?2 AS INTEGER)");
}

}  // namespace ct::sqlite
