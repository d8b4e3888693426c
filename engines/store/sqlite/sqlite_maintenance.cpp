// The SQLite store, part: consistency scans and repairs, integrity, backups, counts and statistics,
// audit compaction, restore.
#include "engines/store/sqlite/sqlite_store_impl.h"

namespace ct::sqlite {

Result<std::vector<DiagnosticRow>> SqliteStore::scan(ScanKind kind, const ScanScope& scope) {
  const bool one = !scope.task.empty();
  CT_TRY_ASSIGN(sqlite3_stmt* raw, prepare(sqlite::scan_sql(kind, one)));
  if (!sqlite3_stmt_readonly(raw)) return fail(ErrorCode::Internal, "a consistency scan must not write");
  Statement stmt(raw);
  const int parameters = sqlite3_bind_parameter_count(raw);
  if (parameters >= 1) stmt.bind(1, scope.task);
  if (parameters >= 2) stmt.bind(2, std::to_string(scope.number));
  std::vector<DiagnosticRow> rows;
  const int columns = sqlite3_column_count(raw);
  CT_TRY(for_each_row(stmt, "cannot run a consistency check", [&] {
    DiagnosticRow out;
    out.reserve(static_cast<std::size_t>(columns));
    for (int c = 0; c < columns; ++c) out.emplace_back(stmt.text(c));
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
  CT_TRY_ASSIGN(sqlite3_stmt* raw, prepare("PRAGMA quick_check"));
  Statement stmt(raw);
  CT_TRY(for_each_row(stmt, "cannot check the database", [&] {
    if (is_problem_line(stmt.text(0))) problems.emplace_back(stmt.text(0));
  }));
  CT_TRY_ASSIGN(sqlite3_stmt* fk_raw, prepare("PRAGMA foreign_key_check"));
  Statement fk(fk_raw);
  CT_TRY(for_each_row(fk, "cannot check foreign keys", [&] {
    problems.push_back("foreign key violation in " + std::string(fk.text(0)) + " row " +
                       std::to_string(fk.integer(1)));
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

Result<StoreCounts> SqliteStore::counts() {
  CT_TRY_ASSIGN(sqlite3_stmt* raw, prepare("SELECT (SELECT count(*) FROM tasks), (SELECT count(*) FROM audit), "
                                           "(SELECT coalesce(max(seq), 0) FROM audit), (SELECT count(*) FROM sessions)"));
  Statement stmt(raw);
  CT_TRY_ASSIGN(bool row, step(stmt, "cannot count the store's rows"));
  StoreCounts out;
  if (!row) return out;
  out.tasks = stmt.integer(0);
  out.audit_rows = stmt.integer(1);
  out.last_audit_seq = stmt.integer(2);
  out.sessions = stmt.integer(3);
  return out;
}

Result<std::vector<PeriodStats>> SqliteStore::period_stats(const std::vector<StatsPeriod>& periods) {
  std::vector<PeriodStats> out(periods.size() + 1);
  if (periods.empty()) return out;
  // The periods as a table p(i, s, e); a row's period is found by one lookup in it, so each
  // query makes a single pass over the tasks of the whole span.
  std::string table = "WITH p(i, s, e) AS (VALUES ";
  std::vector<SqlValue> params;
  TimeMs first = periods.front().start;
  TimeMs last = periods.front().end;
  for (std::size_t i = 0; i < periods.size(); ++i) {
    if (i > 0) table += ", ";
    table += "(" + std::to_string(i) + ", ?" + std::to_string(2 * i + 1) + ", ?" + std::to_string(2 * i + 2) + ")";
    params.emplace_back(static_cast<std::int64_t>(periods[i].start));
    params.emplace_back(static_cast<std::int64_t>(periods[i].end));
    first = std::min(first, periods[i].start);
    last = std::max(last, periods[i].end);
  }
  table += ")";
  const std::string lo = "?" + std::to_string(params.size() + 1);
  const std::string hi = "?" + std::to_string(params.size() + 2);
  params.emplace_back(static_cast<std::int64_t>(first));
  params.emplace_back(static_cast<std::int64_t>(last));
  const std::size_t all = periods.size();
  auto slot = [&](std::int64_t bucket) -> PeriodStats* {
    if (bucket < 0) return &out[all];
    return static_cast<std::size_t>(bucket) < all ? &out[static_cast<std::size_t>(bucket)] : nullptr;
  };
  {
    std::string sql = table + " SELECT (SELECT i FROM p WHERE t.created_at >= p.s AND t.created_at < p.e) AS b, "
                              "count(*) FROM tasks t WHERE t.created_at >= " + lo + " AND t.created_at < " + hi +
                      " GROUP BY b";
    CT_TRY_ASSIGN(sqlite3_stmt* raw, prepare(sql));
    Statement stmt(raw);
    stmt.bind_all(params);
    CT_TRY(for_each_row(stmt, "cannot compute task statistics", [&] {
      if (stmt.is_null(0)) return;
      if (PeriodStats* stats = slot(stmt.integer(0))) stats->created += stmt.integer(1);
      out[all].created += stmt.integer(1);
    }));
  }
  // Completed tasks with their durations: created → completed, and first start → completed
  // where the audit trail still records the start (status set to active). Each duration kind
  // (k) is ranked within its period (b, and -1 for the whole span); nearest-rank percentiles.
  std::string sql =
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
  CT_TRY_ASSIGN(sqlite3_stmt* raw, prepare(sql));
  Statement stmt(raw);
  stmt.bind_all(params);
  CT_TRY(for_each_row(stmt, "cannot compute task statistics", [&] {
    if (stmt.is_null(1)) return;
    PeriodStats* stats = slot(stmt.integer(1));
    if (!stats) return;
    if (stmt.integer(0) == 0) {
      stats->completed = stmt.integer(2);
      stats->cycle_p50 = column_optional_int(raw, 3);
      stats->cycle_p90 = column_optional_int(raw, 4);
    } else {
      stats->started = stmt.integer(2);
      stats->work_p50 = column_optional_int(raw, 3);
      stats->work_p90 = column_optional_int(raw, 4);
    }
  }));
  return out;
}

Result<std::optional<AuditAnchor>> SqliteStore::audit_anchor() {
  CT_TRY_ASSIGN(sqlite3_stmt* raw, prepare("SELECT value FROM meta WHERE key = 'audit_anchor'"));
  Statement stmt(raw);
  CT_TRY_ASSIGN(bool row, step(stmt, "cannot read the audit anchor"));
  if (!row) return std::optional<AuditAnchor>();
  CT_TRY_ASSIGN(AuditAnchor anchor, parse_audit_anchor(stmt.text(0)));
  return std::optional<AuditAnchor>(std::move(anchor));
}

Result<std::int64_t> SqliteStore::last_audit_seq_before(TimeMs before) {
  CT_TRY_ASSIGN(sqlite3_stmt* raw, prepare("SELECT coalesce(max(seq), 0) FROM audit WHERE at < ?1"));
  Statement stmt(raw);
  stmt.bind(1, static_cast<std::int64_t>(before));
  CT_TRY_ASSIGN(bool row, step(stmt, "cannot read the audit trail"));
  return row ? stmt.integer(0) : 0;
}

Result<std::int64_t> SqliteStore::compact_audit(const AuditAnchor& anchor) {
  std::int64_t removed = 0;
  auto result = atomically([&]() -> Result<void> {
    {
      CT_TRY_ASSIGN(sqlite3_stmt* raw, prepare("DELETE FROM audit_changes WHERE seq <= ?1"));
      Statement stmt(raw);
      stmt.bind(1, anchor.seq);
      CT_TRY(finish(stmt, "cannot compact the audit trail"));
    }
    {
      CT_TRY_ASSIGN(sqlite3_stmt* raw, prepare("DELETE FROM audit WHERE seq <= ?1"));
      Statement stmt(raw);
      stmt.bind(1, anchor.seq);
      CT_TRY(finish(stmt, "cannot compact the audit trail"));
      removed = sqlite3_changes64(db_);
    }
    std::string value;
    json::Writer writer(value);
    writer.begin_object().key("seq").value(anchor.seq).key("hash").value(anchor.hash);
    writer.key("archive").value(anchor.archive).end_object();
    CT_TRY_ASSIGN(sqlite3_stmt* raw, prepare("INSERT OR REPLACE INTO meta(key, value) VALUES('audit_anchor', ?1)"));
    Statement stmt(raw);
    stmt.bind(1, value);
    return finish(stmt, "cannot record the audit anchor");
  });
  if (!result) return std::unexpected(std::move(result.error()));
  return removed;
}

Result<std::int64_t> SqliteStore::expire_idempotent(TimeMs before, bool count_only) {
  std::int64_t count = 0;
  {
    CT_TRY_ASSIGN(sqlite3_stmt* raw, prepare("SELECT count(*) FROM idempotency WHERE at < ?1"));
    Statement stmt(raw);
    stmt.bind(1, static_cast<std::int64_t>(before));
    CT_TRY_ASSIGN(bool row, step(stmt, "cannot read idempotency keys"));
    count = row ? stmt.integer(0) : 0;
  }
  if (count_only || count == 0) return count;
  CT_TRY_ASSIGN(sqlite3_stmt* raw, prepare("DELETE FROM idempotency WHERE at < ?1"));
  Statement stmt(raw);
  stmt.bind(1, static_cast<std::int64_t>(before));
  CT_TRY(finish(stmt, "cannot expire idempotency keys"));
  return count;
}

Result<void> SqliteStore::replace_contents_from(const std::filesystem::path& file) {
  return load([&](DumpSink& sink) { return sqlite_backup_files().read(file, sink); });
}

Result<std::int64_t> SqliteStore::meta_int(std::string_view key) {
  CT_TRY_ASSIGN(sqlite3_stmt* raw, prepare("SELECT CAST(value AS INTEGER) FROM meta WHERE key = ?1"));
  Statement stmt(raw);
  stmt.bind(1, key);
  CT_TRY_ASSIGN(bool row, step(stmt, "cannot read the meta table"));
  return row ? stmt.integer(0) : 0;
}


}  // namespace ct::sqlite
