// The SQLite store, part: consistency scans (ScanKind) in SQLite's dialect — json_each over the
// JSON list columns, GLOB for ids, the FTS5 index, PRAGMA checks — with the shared ones of
// engines/store/scan_sql.h, repairs, integrity, backups, restore.
#include <map>
#include <utility>

#include "engines/store/scan_sql.h"
#include "engines/store/sqlite/sqlite_store_impl.h"

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

/// The query of `kind` with the marks of engines/store/scan_sql.h.
std::string marked_scan_sql(ScanKind kind, bool one_task) {
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
    case ScanKind::MissingSearchTerms:
      // A search expands its words into tasks_fts_terms (schema v16) once it is marked complete (the
      // '' row): a word of the index missing from it is a match no search finds. (Extra words cost
      // nothing but a lookup.) temp.tasks_fts_vocab is made by scan().
      return "SELECT '', count(*) FROM temp.tasks_fts_vocab v WHERE EXISTS (SELECT 1 FROM tasks_fts_terms "
             "WHERE term = '') AND NOT EXISTS (SELECT 1 FROM tasks_fts_terms s WHERE s.term = v.term) "
             "HAVING count(*) > 0";
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
      // The parent chain of one task: it and its ancestors (a loop stops after 64 steps).
      if (one_task)
        return "WITH RECURSIVE up(id, n) AS (SELECT {TASK}, 0 UNION ALL SELECT t.parent, up.n + 1 FROM tasks t "
               "JOIN up ON t.id = up.id WHERE t.parent IS NOT NULL AND up.n < 64) "
               "SELECT t.id, coalesce(t.parent, ''), t.type, t.archived FROM up JOIN tasks t ON t.id = up.id";
      return "SELECT t.id, coalesce(t.parent, ''), t.type, t.archived FROM tasks t ORDER BY t.num";
    case ScanKind::DependencyRows:
      return "SELECT t.id, j.value FROM tasks t, json_each(" + depends_json() + ") j "
             "WHERE t.depends != '[]' AND j.type = 'text' AND EXISTS (SELECT 1 FROM tasks u WHERE u.id = j.value) "
             "ORDER BY t.num";
    default: return sql::common_scan_sql(kind);
  }
  return {};
}

/// The query of `kind`; `one_task` narrows it to the task bound as ?1 (where ScanKind says the
/// scan narrows). ?2 is ScanScope::number. Both are bound as text. The TaskRules query returns
/// wide rows: the task, then for each rule of task_rules(), in order, its flag (1 when broken)
/// and its detail columns; only rows breaking at least one rule.
std::string scan_sql(ScanKind kind, bool one_task) {
  return sql::expand_scan_marks(marked_scan_sql(kind, one_task), one_task, "1", "?1", "CAST(?2 AS INTEGER)");
}

}  // namespace

Result<std::vector<DiagnosticRow>> SqliteStore::scan(ScanKind kind, const ScanScope& scope) {
  // The index's own words, read through FTS5's vocabulary table (in the connection's temp schema,
  // which even a read-only store has).
  if (kind == ScanKind::MissingSearchTerms)
    CT_TRY(exec(std::string(kIndexVocabulary).c_str(), "cannot run a consistency check"));
  const std::string sql = scan_sql(kind, !scope.task.empty());
  CT_TRY_ASSIGN(sqlite3_stmt* raw, prepare(sql));
  if (!sqlite3_stmt_readonly(raw)) return fail(ErrorCode::Internal, "a consistency scan must not write");
  // ?1 the task and ?2 the number, both as text, as far as the scan has them.
  const sql::Value scope_values[] = {sql::Value(scope.task), sql::Value(std::to_string(scope.number))};
  const auto args = std::span<const sql::Value>(scope_values).first(
      static_cast<std::size_t>(std::clamp(sqlite3_bind_parameter_count(raw), 0, 2)));
  std::vector<DiagnosticRow> rows;
  CT_TRY(runner_.each(sql, args, "cannot run a consistency check", [&](const sql::Cursor& row) {
    DiagnosticRow out;
    for (int c = 0; c < row.columns(); ++c) out.emplace_back(row.text(c));
    rows.push_back(std::move(out));
  }));
  if (kind == ScanKind::IntegrityQuick || kind == ScanKind::IntegrityFull)
    std::erase_if(rows, [](const DiagnosticRow& row) { return row.empty() || row[0] == "ok"; });
  if (kind == ScanKind::TaskRules)
    return split_task_rules(rows, [](const DiagnosticRow&, const TaskRule&, std::string_view flag) { return flag == "1"; });
  return rows;
}

Result<DerivedRepair> SqliteStore::rebuild_derived() {
  DerivedRepair repair;
  auto changes = [this](const char* sql, std::string_view what) -> Result<std::int64_t> {
    CT_TRY(exec(sql, what));
    return static_cast<std::int64_t>(sqlite3_changes64(db_));
  };
  CT_TRY(run("SAVEPOINT ct_rebuild", "cannot start a repair"));
  auto result = [&]() -> Result<void> {
    CT_TRY(exec("INSERT OR IGNORE INTO meta(key, value) VALUES('next_task_num', '1')", "cannot repair the task id counter"));
    CT_TRY_ASSIGN(repair.edges_removed,
                  changes("DELETE FROM task_deps WHERE NOT EXISTS (SELECT 1 FROM tasks t, json_each(t.depends) j "
                          "WHERE t.id = task_deps.task_id AND j.value = task_deps.depends_on)",
                          "cannot repair dependency edges"));
    CT_TRY_ASSIGN(repair.edges_added,
                  changes("INSERT OR IGNORE INTO task_deps(task_id, depends_on) SELECT t.id, j.value "
                          "FROM tasks t, json_each(t.depends) j WHERE json_valid(t.depends) AND j.type = 'text'",
                          "cannot repair dependency edges"));
    CT_TRY_ASSIGN(repair.index_removed,
                  changes("DELETE FROM tasks_fts WHERE rowid NOT IN (SELECT num FROM tasks)",
                          "cannot repair the search index"));
    CT_TRY(exec("DELETE FROM tasks_fts_tail WHERE num NOT IN (SELECT num FROM tasks)", "cannot repair the search index"));
    // Noted tasks are indexed at the next fold.
    static const std::string add_missing =
        "INSERT INTO tasks_fts(rowid, title, description, labels, notes) SELECT " + std::string(kIndexedTaskColumns) +
        " FROM tasks t WHERE t.num NOT IN (SELECT rowid FROM tasks_fts) AND t.num NOT IN (SELECT num FROM tasks_fts_tail)";
    CT_TRY_ASSIGN(repair.index_added, changes(add_missing.c_str(), "cannot repair the search index"));
    // The terms a search expands its words into (schema v16), read again from the index.
    CT_TRY_ASSIGN(std::vector<DiagnosticRow> missing, scan(ScanKind::MissingSearchTerms, {}));
    if (!missing.empty()) repair.terms_added = std::stoll(missing.front().at(1));
    CT_TRY(exec(std::string(kRebuildIndexTerms).c_str(), "cannot repair the search index"));
    CT_TRY_ASSIGN(std::int64_t raised,
                  changes("UPDATE meta SET value = CAST((SELECT max(num) FROM tasks) + 1 AS TEXT) "
                          "WHERE key = 'next_task_num' AND CAST(value AS INTEGER) <= (SELECT max(num) FROM tasks)",
                          "cannot repair the task id counter"));
    repair.counter_raised = raised > 0;
    CT_TRY_ASSIGN(repair.memory_recounted, recount_memory());
    return {};
  }();
  if (!result) {
    sqlite3_exec(db_, "ROLLBACK TO ct_rebuild; RELEASE ct_rebuild", nullptr, nullptr, nullptr);
    return std::unexpected(std::move(result.error()));
  }
  CT_TRY(run("RELEASE ct_rebuild", "cannot finish a repair"));
  return repair;
}

Result<std::vector<std::string>> SqliteStore::integrity_problems() {
  auto problems = find_integrity_problems();
  if (!problems) return problems;
  // The verdict is kept beside the store: writes are refused while it stands (begin()), and a
  // clean check lifts it.
  if (!problems->empty()) {
    mark_damaged(problems->front());
  } else if (!read_only_) {
    std::error_code ec;
    std::filesystem::remove(damaged_marker(file_), ec);
  }
  return problems;
}

Result<std::vector<std::string>> SqliteStore::find_integrity_problems() {
  std::vector<std::string> problems;
  CT_TRY(runner_.each("PRAGMA quick_check", {}, "cannot check the database", [&](const sql::Cursor& row) {
    if (is_problem_line(row.text(0))) problems.emplace_back(row.text(0));
  }));
  CT_TRY(runner_.each("PRAGMA foreign_key_check", {}, "cannot check foreign keys", [&](const sql::Cursor& row) {
    problems.push_back("foreign key violation in " + std::string(row.text(0)) + " row " + std::to_string(row.integer(1)));
  }));
  return problems;
}

Result<void> SqliteStore::backup_to(const std::filesystem::path& file) {
  sqlite3* target = nullptr;
  int rc = sqlite3_open_v2(file.c_str(), &target, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr);
  if (rc != SQLITE_OK) {
    Error failure = sqlite_error(rc, target ? sqlite3_errmsg(target) : "cannot open", "cannot create the backup", file);
    sqlite3_close(target);
    return fail(std::move(failure));
  }
  sqlite3_backup* backup = sqlite3_backup_init(target, "main", db_, "main");
  if (!backup) {
    Error failure = sqlite_error(sqlite3_errcode(target), sqlite3_errmsg(target), "cannot start the backup", file);
    sqlite3_close(target);
    return fail(std::move(failure));
  }
  // All pages in one step: the source is read in one consistent snapshot.
  rc = sqlite3_backup_step(backup, -1);
  sqlite3_backup_finish(backup);
  auto discard = [&] {
    sqlite3_close(target);
    remove_sqlite_files(file);
  };
  if (rc != SQLITE_DONE) {
    Error failure = sqlite_error(rc, sqlite3_errmsg(target), "cannot write the backup", file);
    discard();
    return fail(std::move(failure));
  }
  // A backup is only kept when it passes an integrity check: the copy holds the source's pages
  // as they are, so a damaged page of the store shows here (and marks the store damaged).
  const std::vector<std::string> problems = quick_check_problems(target);
  if (!problems.empty()) {
    discard();
    mark_damaged(problems.front());
    return fail(std::move(damaged_store_error(file_, problems.front()).with_detail("backupKept", false)));
  }
  if (sqlite3_close(target) != SQLITE_OK) {
    discard();
    return fail(Error(ErrorCode::FileError, "cannot finish the backup " + file.string()));
  }
  return {};
}

Result<void> SqliteStore::replace_contents_from(const std::filesystem::path& file) {
  return load([&](DumpSink& sink) { return sqlite_backup_files().read(file, sink); });
}

Result<std::int64_t> SqliteStore::meta_int(std::string_view key) {
  const sql::Value args[] = {sql::Value(key)};
  return runner_.integer("SELECT CAST(value AS INTEGER) FROM meta WHERE key = ?1", args, "cannot read the meta table");
}

}  // namespace ct::sqlite
