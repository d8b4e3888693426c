// The SQLite backend, part: dumps and loads (engines/store/store_dump.h) of a store, and the backup
// files of every backend: a new SQLite store loaded from any store's dump, and a backup file read
// back as one.
#include <unistd.h>

#include "engines/store/sqlite/sqlite_store_impl.h"

namespace ct::sqlite {
namespace {

namespace fs = std::filesystem;

using OwnedStatement = std::unique_ptr<sqlite3_stmt, int (*)(sqlite3_stmt*)>;

Error failure(sqlite3* db, std::string_view what, const fs::path& file) {
  return sqlite_error(sqlite3_errcode(db), sqlite3_errmsg(db), what, file);
}

Result<OwnedStatement> prepare_once(sqlite3* db, const std::string& sql, std::string_view what, const fs::path& file) {
  sqlite3_stmt* raw = nullptr;
  if (sqlite3_prepare_v2(db, sql.c_str(), -1, &raw, nullptr) != SQLITE_OK) {
    sqlite3_finalize(raw);
    return fail(failure(db, what, file));
  }
  return OwnedStatement(raw, sqlite3_finalize);
}

}  // namespace

/// Pushes every dumped table of `db` into `sink`: the columns as the file has them, the rows in
/// the table's dump order.
Result<void> dump_database(sqlite3* db, DumpSink& sink, const fs::path& file) {
  for (const auto& table : dumped_tables()) {
    const std::string what = "cannot read " + std::string(table.name) + " for a copy";
    std::vector<std::string> columns;
    {
      CT_TRY_ASSIGN(OwnedStatement info, prepare_once(db, "PRAGMA table_info(" + sql_identifier(table.name) + ")", what, file));
      int rc = SQLITE_ROW;
      while ((rc = sqlite3_step(info.get())) == SQLITE_ROW) columns.emplace_back(column_text(info.get(), 1));
      if (rc != SQLITE_DONE) return fail(failure(db, what, file));
    }
    if (columns.empty())
      return fail(Error(ErrorCode::FileError, "the store " + file.string() + " has no table " + std::string(table.name))
                      .with_fix(corrupt_fix()));
    std::string select = "SELECT ";
    for (std::size_t i = 0; i < columns.size(); ++i) select += (i ? ", " : "") + sql_identifier(columns[i]);
    select += " FROM " + sql_identifier(table.name);
    if (table.name == "meta") select += " WHERE " + std::string(kLocalMetaRows);
    select += " ORDER BY " + std::string(table.order.empty() ? "rowid" : table.order);
    CT_TRY_ASSIGN(OwnedStatement rows, prepare_once(db, select, what, file));
    CT_TRY(sink.table(table.name, columns));
    std::vector<std::optional<std::string_view>> values(columns.size());
    int rc = SQLITE_ROW;
    while ((rc = sqlite3_step(rows.get())) == SQLITE_ROW) {
      for (std::size_t i = 0; i < values.size(); ++i) {
        const int c = static_cast<int>(i);
        if (sqlite3_column_type(rows.get(), c) == SQLITE_NULL) {
          values[i].reset();
        } else {
          values[i] = column_text(rows.get(), c);
        }
      }
      CT_TRY(sink.row(values));
    }
    if (rc != SQLITE_DONE) return fail(failure(db, what, file));
  }
  return {};
}

Result<void> DumpLoader::table(std::string_view name, const std::vector<std::string>& columns) {
    if (!started_) {
      // Children first (audit_changes references audit); this store's own meta rows stay.
      for (auto table = dumped_tables().rbegin(); table != dumped_tables().rend(); ++table) {
        std::string clear = "DELETE FROM " + sql_identifier(table->name);
        if (table->name == "meta") clear += " WHERE " + std::string(kLocalMetaRows);
        CT_TRY(exec(clear.c_str(), "cannot clear " + std::string(table->name) + " of " + file_.string()));
      }
      CT_TRY(exec("DELETE FROM tasks_fts; DELETE FROM tasks_fts_tail; DELETE FROM research_fts", "cannot clear the search index of " + file_.string()));
      started_ = true;
    }
    table_ = std::string(name);
    std::string list;
    std::string marks;
    for (std::size_t i = 0; i < columns.size(); ++i) {
      list += (i ? ", " : "") + sql_identifier(columns[i]);
      marks += (i ? ", ?" : "?") + std::to_string(i + 1);
    }
    CT_TRY_ASSIGN(insert_, prepare_once(db_, "INSERT INTO " + sql_identifier(name) + "(" + list + ") VALUES(" + marks + ")",
                                        "cannot write " + table_ + " to " + file_.string(), file_));
    return {};
  }

Result<void> DumpLoader::row(std::span<const std::optional<std::string_view>> values) {
    sqlite3_stmt* insert = insert_.get();
    for (std::size_t i = 0; i < values.size(); ++i) {
      const int index = static_cast<int>(i) + 1;
      if (values[i]) {
        sqlite3_bind_text64(insert, index, values[i]->data(), values[i]->size(), kTransient, SQLITE_UTF8);
      } else {
        sqlite3_bind_null(insert, index);
      }
    }
    const int written = sqlite3_step(insert);
    sqlite3_reset(insert);
    if (written != SQLITE_DONE) return fail(failure(db_, "cannot write " + table_ + " to " + file_.string(), file_));
    return {};
  }

Result<void> DumpLoader::finish() {
    insert_.reset();
    static const std::string sql =
        "INSERT INTO tasks_fts(rowid, title, description, labels, notes) SELECT " + std::string(kIndexedTaskColumns) +
        " FROM tasks t ORDER BY t.num; "
        "INSERT INTO research_fts(rowid, title, topics, key_findings) "
        "SELECT r.num, r.title, coalesce((SELECT group_concat(j.value, ' ') FROM json_each(r.topics) j), ''), "
        "coalesce((SELECT group_concat(j.value, char(10)) FROM json_each(r.key_findings) j), '') "
        "FROM research r ORDER BY r.num; " + std::string(kRebuildIndexTerms);
    return exec(sql.c_str(), "cannot fill the search index of " + file_.string());
  }

Result<void> DumpLoader::exec(const char* sql, std::string_view what) {
    if (sqlite3_exec(db_, sql, nullptr, nullptr, nullptr) != SQLITE_OK) return fail(failure(db_, what, file_));
    return {};
  }

namespace {

/// Backup files are SQLite stores of this binary's schema.
class SqliteBackupFiles final : public BackupFiles {
 public:
  Result<void> write(const fs::path& file, const DumpSource& source) const override {
    const fs::path temp = file.parent_path() / ("." + file.filename().string() + ".part-" + std::to_string(::getpid()));
    remove_sqlite_files(temp);
    auto written = [&]() -> Result<void> {
      {
        SqliteOptions options;
        options.create = true;
        CT_TRY_ASSIGN(std::unique_ptr<Store> created, open_sqlite_store(temp, options));
      }
      sqlite3* raw = nullptr;
      const int rc = sqlite3_open_v2(temp.c_str(), &raw, SQLITE_OPEN_READWRITE, nullptr);
      std::unique_ptr<sqlite3, int (*)(sqlite3*)> db(raw, sqlite3_close);
      if (rc != SQLITE_OK)
        return fail(sqlite_error(rc, raw ? sqlite3_errmsg(raw) : sqlite3_errstr(rc), "cannot open the backup", temp));
      if (sqlite3_exec(raw, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr) != SQLITE_OK)
        return fail(failure(raw, "cannot write the backup", temp));
      DumpLoader loader(raw, temp);
      CT_TRY(source(loader));
      CT_TRY(loader.finish());
      if (sqlite3_exec(raw, "COMMIT", nullptr, nullptr, nullptr) != SQLITE_OK)
        return fail(failure(raw, "cannot write the backup", temp));
      if (sqlite3_close(db.release()) != SQLITE_OK)
        return fail(Error(ErrorCode::FileError, "cannot finish the backup " + file.string()));
      std::error_code ec;
      fs::rename(temp, file, ec);
      if (ec)
        return fail(Error(ErrorCode::FileError, "cannot move the backup into place at " + file.string() + ": " +
                                                    ec.message()));
      return {};
    }();
    if (!written) remove_sqlite_files(temp);
    return written;
  }

  Result<void> read(const fs::path& file, DumpSink& sink) const override {
    sqlite3* raw = nullptr;
    const int rc = sqlite3_open_v2(file.c_str(), &raw, SQLITE_OPEN_READONLY, nullptr);
    std::unique_ptr<sqlite3, int (*)(sqlite3*)> db(raw, sqlite3_close_v2);
    if (rc != SQLITE_OK)
      return fail(sqlite_error(rc, raw ? sqlite3_errmsg(raw) : sqlite3_errstr(rc), "cannot open the backup", file));
    auto version = read_user_version(raw);
    if (!version) return fail(failure(raw, "cannot read the schema version of the backup", file));
    if (*version != store_schema_version())
      return fail(Error(ErrorCode::FileError, "the backup " + file.string() + " has schema version " +
                                                  std::to_string(*version) + "; restoring needs version " +
                                                  std::to_string(store_schema_version()))
                      .with_fix("open the backup with this ct once (it migrates a copy), or pick another backup"));
    // One read transaction: every table from the same snapshot.
    if (sqlite3_exec(raw, "BEGIN", nullptr, nullptr, nullptr) != SQLITE_OK)
      return fail(failure(raw, "cannot read the backup", file));
    auto dumped = dump_database(raw, sink, file);
    sqlite3_exec(raw, "ROLLBACK", nullptr, nullptr, nullptr);
    return dumped;
  }
};

}  // namespace

Result<void> SqliteStore::dump(DumpSink& sink) {
  if (!in_transaction()) return fail(ErrorCode::Internal, "dump needs a transaction");
  return dump_database(db_, sink, file_);
}

Result<void> SqliteStore::load(const DumpSource& source) {
  if (!in_transaction()) return fail(ErrorCode::Internal, "load needs a write transaction");
  CT_TRY_ASSIGN(std::int64_t next_id, meta_int("next_task_num"));
  // The rows of child tables arrive after their parents'; foreign keys are checked at commit.
  CT_TRY(exec("PRAGMA defer_foreign_keys = ON", "cannot load the store"));
  DumpLoader loader(db_, file_);
  CT_TRY(source(loader));
  if (!loader.started()) return {};
  CT_TRY(loader.finish());
  // The memory entries' kept total is theirs, whatever the dump said (or did not: v18).
  CT_TRY(recount_memory());
  // Ids are never reused, not even the ones allocated after the dump was taken.
  const sql::Value args[] = {sql::Value(next_id)};
  return runner_.run("INSERT INTO meta(key, value) VALUES('next_task_num', CAST(?1 AS TEXT)) "
                     "ON CONFLICT(key) DO UPDATE SET value = CAST(max(CAST(value AS INTEGER), ?1) AS TEXT)",
                     args, "cannot restore the task id counter");
}

}  // namespace ct::sqlite

namespace ct {

const BackupFiles& sqlite_backup_files() {
  static const sqlite::SqliteBackupFiles files;
  return files;
}

}  // namespace ct
