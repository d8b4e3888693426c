// The SQLite store, part: consistency scans and repairs, integrity, backups, restore.
#include "engines/store/sqlite/sqlite_store_impl.h"

namespace ct::sqlite {

Result<std::vector<DiagnosticRow>> SqliteStore::scan(ScanKind kind, const ScanScope& scope) {
  const std::string sql = sqlite::scan_sql(kind, !scope.task.empty());
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
    CT_TRY_ASSIGN(std::int64_t raised,
                  changes("UPDATE meta SET value = CAST((SELECT max(num) FROM tasks) + 1 AS TEXT) "
                          "WHERE key = 'next_task_num' AND CAST(value AS INTEGER) <= (SELECT max(num) FROM tasks)",
                          "cannot repair the task id counter"));
    repair.counter_raised = raised > 0;
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
    std::error_code ec;
    for (const char* suffix : {"", "-wal", "-shm", "-journal"}) std::filesystem::remove(file.string() + suffix, ec);
  };
  if (rc != SQLITE_DONE) {
    Error failure = sqlite_error(rc, sqlite3_errmsg(target), "cannot write the backup", file);
    discard();
    return fail(std::move(failure));
  }
  // A backup is only kept when it passes an integrity check: the copy holds the source's pages
  // as they are, so a damaged page of the store shows here (and marks the store damaged).
  std::vector<std::string> problems;
  sqlite3_stmt* check = nullptr;
  rc = sqlite3_prepare_v2(target, "PRAGMA quick_check", -1, &check, nullptr);
  if (rc == SQLITE_OK) {
    while ((rc = sqlite3_step(check)) == SQLITE_ROW) {
      std::string_view line = column_text(check, 0);
      if (is_problem_line(line)) problems.emplace_back(line);
    }
  }
  if (rc != SQLITE_DONE) problems.emplace_back(sqlite3_errmsg(target));
  sqlite3_finalize(check);
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
