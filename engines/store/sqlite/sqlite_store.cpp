// The embedded store: one SQLite connection in WAL mode, prepared statements cached for the
// connection's lifetime, the schema versioned in PRAGMA user_version and migrated forward on open,
// and an FTS5 index written behind the tasks table in batches (tasks noted in tasks_fts_tail are
// searched from their rows until they are folded in; both in the caller's transaction). This part:
// the connection, transactions, the plumbing every part uses, the schema; and the public functions
// of engines/store/sqlite/sqlite_store.h.
#include "engines/store/sqlite/sqlite_store_impl.h"

#include <fcntl.h>

namespace ct::sqlite {

Result<void> SqliteStore::begin(TxKind kind) {
  if (in_transaction()) return fail(ErrorCode::Internal, "a transaction is already open on this store");
  CT_TRY(check_identity());
  if (kind == TxKind::Write) {
    if (read_only_)
      return fail(Error(ErrorCode::FileError, file_.string() + " is open read-only (--read-only, a read-only "
                                                               "filesystem, or no write permission); nothing was changed")
                      .with_fix("run without --read-only, on a writable copy, or as a user who may write " +
                                file_.parent_path().string())
                      .with_detail("readOnly", true));
    std::error_code ec;
    if (std::filesystem::exists(damaged_marker(file_), ec)) return fail(damaged_store_error(file_, damage_reason()));
  }
  if (kind == TxKind::Write) CT_TRY(take_write_turn());
  ++transactions_;
  auto begun = run(kind == TxKind::Write ? "BEGIN IMMEDIATE" : "BEGIN DEFERRED", "cannot begin a transaction");
  if (kind == TxKind::Write) sqlite3_busy_timeout(db_, busy_timeout_ms_);  // take_write_turn may have shortened it
  if (!begun) {
    give_back_write_turn();
    return begun;
  }
  if (kind == TxKind::Write) write_lock_.emplace();
  return {};
}

Result<void> SqliteStore::take_write_turn() {
  if (!write_turns_) {
    if (inode_ == 0) return {};  // not a file we know (a store opened before remember_identity)
    write_turns_ = WriteTurns::of(device_, inode_);
  }
  using std::chrono::milliseconds;
  const auto started = std::chrono::steady_clock::now();
  auto waited = [&] {
    return std::chrono::duration_cast<milliseconds>(std::chrono::steady_clock::now() - started);
  };
  // This process's other writers first, then other processes', all within the one busy timeout.
  write_turn_ = std::unique_lock(write_turns_->threads, std::defer_lock);
  if (!write_turn_.try_lock() && !write_turn_.try_lock_for(milliseconds(busy_timeout_ms_)))
    return fail(sqlite_error(SQLITE_BUSY, "another writer of this process held the write lock", "cannot begin a transaction",
                             file_));
  if (SharedTurn* shared = shared_by_processes_ ? write_turns_->shared_for(file_) : nullptr) {
    switch (shared->take(std::max(milliseconds(0), milliseconds(busy_timeout_ms_) - waited()))) {
      case SharedTurn::Taken::yes: shared_turn_ = shared; break;
      case SharedTurn::Taken::busy:
        write_turn_.unlock();
        return fail(sqlite_error(SQLITE_BUSY, "another process's writer held the write lock", "cannot begin a transaction",
                                 file_));
      case SharedTurn::Taken::unavailable: break;  // SQLite's lock alone, as without a turn
    }
  }
  // The time waited here comes off what BEGIN IMMEDIATE may still wait for writers outside the turn.
  if (const auto spent = waited(); spent.count() > 0)
    sqlite3_busy_timeout(db_, std::max(1, busy_timeout_ms_ - static_cast<int>(spent.count())));
  return {};
}

void SqliteStore::give_back_write_turn() {
  if (shared_turn_ != nullptr) std::exchange(shared_turn_, nullptr)->give_back();
  if (write_turn_.owns_lock()) write_turn_.unlock();
}

Result<void> SqliteStore::savepoint(std::string_view name) {
  if (!in_transaction()) return fail(ErrorCode::Internal, "a savepoint outside a transaction");
  return run("SAVEPOINT " + std::string(name), "cannot mark a savepoint");
}

Result<void> SqliteStore::rollback_to(std::string_view name) {
  const std::string sql = "ROLLBACK TO " + std::string(name) + "; RELEASE " + std::string(name);
  return exec(sql.c_str(), "cannot go back to a savepoint");
}

Result<void> SqliteStore::release(std::string_view name) {
  return run("RELEASE " + std::string(name), "cannot release a savepoint");
}

Result<void> SqliteStore::commit() {
  if (!in_transaction()) return fail(ErrorCode::Internal, "commit without an open transaction");
  auto result = run("COMMIT", "cannot commit");
  if (!result) rollback();
  write_lock_.reset();
  // Readers that never all stop (a fleet of agents) keep a passive checkpoint from ever reaching
  // the WAL's end, so the WAL never starts over: it grew by ~100 MB a second under 32 agents. Past
  // kWalRestartFrames a writer, still holding the turn (the next writer is woken when it ends),
  // waits a little for the readers of older snapshots and has the WAL start over (SQLite's RESTART
  // checkpoint; readers go on meanwhile). A reader that outlasts the wait (an export) keeps the
  // WAL as it is: tried again 1,000 frames later.
  if (result && wal_frames_ >= wal_restart_at_) {
    sqlite3_busy_timeout(db_, kWalRestartWaitMs);
    const int rc = sqlite3_wal_checkpoint_v2(db_, nullptr, SQLITE_CHECKPOINT_RESTART, nullptr, nullptr);
    sqlite3_busy_timeout(db_, busy_timeout_ms_);
    wal_restart_at_ = rc == SQLITE_OK ? kWalRestartFrames : wal_frames_ + kAutoCheckpointFrames;
    if (rc == SQLITE_OK) wal_frames_ = 0;
  }
  give_back_write_turn();
  // SQLite's automatic checkpoint, taken out of the turn: it runs without SQLite's write lock, so
  // writers of this and other processes go on while its syncs run (a passive checkpoint).
  if (wal_frames_ >= kAutoCheckpointFrames)
    sqlite3_wal_checkpoint_v2(db_, nullptr, SQLITE_CHECKPOINT_PASSIVE, nullptr, nullptr);
  return result;
}

void SqliteStore::rollback() {
  write_lock_.reset();
  if (!in_transaction()) {
    give_back_write_turn();
    return;
  }
  // ROLLBACK can only fail when there is nothing to roll back; either way the connection ends
  // up in autocommit mode. Every read ends here: the cached statement, not a parse per call
  // (sqlite3_exec cost ~5,600 instructions of a 110,000-instruction tasks.show).
  if (!run("ROLLBACK", "cannot roll back")) sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
  give_back_write_turn();
}

bool SqliteStore::in_transaction() const { return sqlite3_get_autocommit(db_) == 0; }

Error SqliteStore::error(int rc, std::string_view what) const {
  Error out = sqlite_error(rc, sqlite3_errmsg(db_), what, file_, sqlite3_system_errno(db_));
  // SQLite met a damaged page: remember it, so that no write lands on a damaged store.
  if ((rc & 0xff) == SQLITE_CORRUPT || (rc & 0xff) == SQLITE_NOTADB) {
    mark_damaged(sqlite3_errmsg(db_));
    out.details.set("damaged", true);
  }
  return out;
}

void SqliteStore::mark_damaged(std::string_view reason) const {
  if (read_only_) return;
  std::string text(reason.substr(0, 500));
  (void)write_file_atomically(damaged_marker(file_), text + "\n");
}

std::string SqliteStore::damage_reason() const {
  std::ifstream in(damaged_marker(file_));
  std::string line;
  std::getline(in, line);
  line = std::string(trim(line)).substr(0, 500);
  return line.empty() ? "a damaged page" : line;
}

void SqliteStore::remember_identity() {
  struct stat st{};
  if (::stat(file_.c_str(), &st) == 0) {
    device_ = st.st_dev;
    inode_ = st.st_ino;
    size_ = st.st_size;
  }
}

Result<void> SqliteStore::check_identity() {
  if (inode_ == 0) return {};
  struct stat st{};
  const bool exists = ::stat(file_.c_str(), &st) == 0;
  const bool same = exists && st.st_ino == inode_ && st.st_dev == device_ && st.st_size >= size_;
  // A file that is gone, replaced or truncated is left alone: closing this connection must not
  // checkpoint the WAL into it.
  if (!same) {
    sqlite3_db_config(db_, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, nullptr);
    replaced_ = true;
  }
  if (!exists)
    return fail(Error(ErrorCode::FileError, file_.string() + " was removed while this process had it open; "
                                                             "nothing was read or written")
                    .with_fix(call("system.restore") + " brings a backup back (or " + call("system.init") +
                              " starts a new store); then restart this process")
                    .with_detail("storeRemoved", true));
  if (st.st_ino != inode_ || st.st_dev != device_)
    return fail(Error(ErrorCode::FileError, file_.string() + " was replaced (restored, or re-created) since this "
                                                             "process opened it")
                    .with_fix("retry: the store is opened again")
                    .with_detail("reopen", true));
  // ct never shrinks the file (no VACUUM): a smaller file was truncated by someone else, and
  // its pages must not be read through the memory map (SIGBUS). Read it afresh.
  if (st.st_size < size_)
    return fail(Error(ErrorCode::FileError, file_.string() + " was truncated since this process opened it")
                    .with_fix(corrupt_fix())
                    .with_detail("reopen", true));
  size_ = st.st_size;
  return {};
}

int SqliteStore::on_wal_commit(void* store, sqlite3*, const char*, int frames) {
  static_cast<SqliteStore*>(store)->wal_frames_ = frames;
  return SQLITE_OK;
}

namespace {

sqlite3_vfs* system_vfs = nullptr;

/// Syncs the directory holding `file`, so that its entry survives a power loss.
void sync_directory_of(const char* file) {
  const std::string dir = std::filesystem::path(file).parent_path().string();
  const int fd = ::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  (void)::fsync(fd);
  ::close(fd);
}

int open_file(sqlite3_vfs*, const char* name, sqlite3_file* file, int flags, int* out_flags) {
  if (name != nullptr && (flags & SQLITE_OPEN_WAL) != 0 && (flags & SQLITE_OPEN_CREATE) != 0) {
    // The WAL's entry in the directory is durable: whoever created it synced the directory (here
    // below, or SQLite at the creator's first sync). Opened without CREATE, SQLite does not sync
    // the directory again at this process's first sync.
    if (::access(name, F_OK) == 0 &&
        system_vfs->xOpen(system_vfs, name, file, flags & ~SQLITE_OPEN_CREATE, out_flags) == SQLITE_OK)
      return SQLITE_OK;
    const int rc = system_vfs->xOpen(system_vfs, name, file, flags, out_flags);
    // A reader creates the WAL too and never syncs: the entry is made durable now, once per WAL.
    if (rc == SQLITE_OK) sync_directory_of(name);
    return rc;
  }
  return system_vfs->xOpen(system_vfs, name, file, flags, out_flags);
}

}  // namespace

const char* store_vfs() {
  static const char* const name = [] {
    // Before SQLite initialises (the first connection): no count of the memory SQLite holds is
    // kept (nothing reads it), which took a global mutex around every allocation and free
    // (~0.5 million instructions of a `ct show`, issue 56). Too late when something opened a
    // connection already (SQLITE_MISUSE, nothing changes).
    sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
    static sqlite3_vfs vfs{};
    system_vfs = sqlite3_vfs_find(nullptr);
    if (system_vfs == nullptr) return static_cast<const char*>(nullptr);
    vfs = *system_vfs;  // its methods and pAppData (the unix VFS's locking finder), as they are
    vfs.pNext = nullptr;
    vfs.zName = "ct-unix";
    vfs.xOpen = &open_file;
    if (sqlite3_vfs_register(&vfs, 0) != SQLITE_OK) return static_cast<const char*>(nullptr);
    return vfs.zName;
  }();
  return name;
}

Result<sqlite3_stmt*> SqliteStore::prepare(std::string_view sql) {
  if (auto found = statements_.find(sql); found != statements_.end()) return found->second;
  sqlite3_stmt* stmt = nullptr;
  int rc = sqlite3_prepare_v3(db_, sql.data(), static_cast<int>(sql.size()), SQLITE_PREPARE_PERSISTENT, &stmt,
                              nullptr);
  if (rc != SQLITE_OK) {
    sqlite3_finalize(stmt);
    return fail(error(rc, "cannot prepare a query"));
  }
  statements_.emplace(std::string(sql), stmt);
  return stmt;
}

Result<void> SqliteStore::run(std::string_view sql, std::string_view what) { return runner_.run(sql, {}, what); }

Result<void> SqliteStore::exec(const char* sql, std::string_view what) {
  int rc = sqlite3_exec(db_, sql, nullptr, nullptr, nullptr);
  if (rc != SQLITE_OK) return fail(error(rc, what));
  return {};
}

Result<std::int64_t> SqliteStore::schema_version() { return user_version(); }

Result<std::int64_t> SqliteStore::change_stamp() {
  return runner_.integer("PRAGMA data_version", {}, "cannot read the database's change counter");
}

namespace {

/// The row a statement stands on, for the roles.
class Cursor final : public sql::Cursor {
 public:
  explicit Cursor(sqlite3_stmt* stmt) : stmt_(stmt) {}
  std::string_view text(int column) const override { return column_text(stmt_, column); }
  std::int64_t integer(int column) const override { return sqlite3_column_int64(stmt_, column); }
  std::optional<std::int64_t> optional_int(int column) const override { return column_optional_int(stmt_, column); }
  double real(int column) const override { return sqlite3_column_double(stmt_, column); }
  std::optional<double> optional_real(int column) const override {
    if (is_null(column)) return std::nullopt;
    return sqlite3_column_double(stmt_, column);
  }
  bool is_null(int column) const override { return sqlite3_column_type(stmt_, column) == SQLITE_NULL; }
  int columns() const override { return sqlite3_column_count(stmt_); }

 private:
  sqlite3_stmt* stmt_;
};

}  // namespace

Result<void> SqliteStore::Runner::run(std::string_view sql, std::span<const sql::Value> args, std::string_view what,
                                      sql::RowFn on_row) {
  CT_TRY_ASSIGN(sqlite3_stmt* raw, store_.prepare(sql));
  Statement stmt(raw);
  stmt.bind_all(args);
  const Cursor cursor(raw);
  while (true) {
    const int rc = sqlite3_step(raw);
    if (rc == SQLITE_DONE) return {};
    if (rc != SQLITE_ROW) return fail(store_.error(rc, what));
    if (on_row) CT_TRY(on_row(cursor));
  }
}

Result<std::int64_t> SqliteStore::user_version() {
  return runner_.integer("PRAGMA user_version", {}, "cannot read the schema version");
}

Error SqliteStore::newer_schema(std::int64_t version) const {
  return Error(ErrorCode::FileError,
               file_.string() + " was created by a newer ct (schema version " + std::to_string(version) +
                   ", this binary knows " + std::to_string(sqlite_schema_version()) + "); upgrade ct")
      .with_fix("install the latest ct and retry");
}

Result<SqliteStore::StepTables> SqliteStore::step_tables() {
  // Each name compared where it stands, none copied: every process that opens a store asks (issue 56).
  StepTables tables;
  const auto steps = sqlite::schema_steps();
  CT_TRY(runner_.each("SELECT name FROM sqlite_schema WHERE type IN ('table', 'index')", {}, "cannot read the schema",
                      [&](const sql::Cursor& row) {
                        tables.any = true;
                        const std::string_view name = row.text(0);
                        for (const auto& migration : steps)
                          if (migration.creates && name == migration.creates) tables.present.emplace(name);
                      }));
  return tables;
}

Error SqliteStore::inconsistent(std::string why) const {
  return Error(ErrorCode::FileError, file_.string() + " " + std::move(why) + "; ct neither migrates nor writes it")
      .with_fix(corrupt_fix())
      .with_detail("damaged", true);
}

Result<std::int64_t> SqliteStore::checked_version(bool create) {
  auto version = user_version();
  if (!version) {
    const int rc = sqlite3_errcode(db_) & 0xff;
    if ((rc == SQLITE_CANTOPEN || rc == SQLITE_READONLY) && read_only_)
      // A WAL store is read through its -shm index; where the directory cannot be written that
      // file cannot be created (open_sqlite_store then reads the store as immutable).
      return fail(std::move(version.error()).with_detail("readOnlyDirectory", true));
    if (rc != SQLITE_NOTADB && rc != SQLITE_CORRUPT) return std::unexpected(std::move(version.error()));
    return fail(Error(ErrorCode::FileError, file_.string() + " is not a task database (" + version.error().message +
                                                ")")
                    .with_fix(corrupt_fix())
                    .with_detail("damaged", true));
  }
  CT_TRY_ASSIGN(StepTables tables, step_tables());
  const std::int64_t target = sqlite_schema_version();
  if (*version == 0 && !tables.any) {
    if (create) return 0;
    std::error_code ec;
    const bool empty_file = std::filesystem::file_size(file_, ec) == 0;
    return fail(Error(ErrorCode::FileError,
                      file_.string() + (empty_file ? " is empty (truncated, or ct init was interrupted)"
                                                   : " holds no CLEO tables"))
                    .with_fix(call("system.restore") + " brings back the newest good backup; with no backup, " +
                              call("system.init") + " starts an empty store")
                    .with_detail("damaged", true));
  }
  if (*version > target) return fail(newer_schema(*version));
  // The version the tables show: the last step whose table exists, with every earlier one.
  std::int64_t shown = 0;
  bool consistent = true;
  for (const auto& migration : sqlite::schema_steps()) {
    // A step that creates no table (it fills rows) shows in none: it is not checked.
    const bool present = migration.creates ? tables.present.contains(migration.creates) : migration.version <= *version;
    if (present && shown == migration.version - 1) shown = migration.version;
    consistent = consistent && present == (migration.version <= *version);
  }
  if (*version < 0 || !consistent) {
    return fail(inconsistent("says schema version " + std::to_string(*version) + " but holds the tables of version " +
                             std::to_string(shown))
                    .with_detail("schemaVersion", *version)
                    .with_detail("tablesOfVersion", shown));
  }
  return *version;
}

Result<void> SqliteStore::migrate(const SqliteOptions& options, std::int64_t version) {
  const bool create = options.create;
  const std::int64_t target = sqlite_schema_version();
  if (version == target) return {};
  if (version == 0 && !create) {
    return fail(Error(ErrorCode::NotInitialized, file_.string() + " holds no CLEO task database")
                    .with_fix(call("system.init")));
  }
  CT_TRY(begin(TxKind::Write));
  auto result = [&]() -> Result<void> {
    // Another process may have migrated while we waited for the lock.
    CT_TRY_ASSIGN(std::int64_t current, user_version());
    if (current > target) return fail(newer_schema(current));
    if (current >= 1 && current < target && !options.migration_backups.empty()) {
      // Under the write lock, before the first step: the copy (read through a second
      // connection) is the store exactly as the previous version left it.
      CT_TRY(backup_before_migration(options, current));
    }
    for (const auto& migration : sqlite::schema_steps()) {
      if (migration.version <= current) continue;
      CT_TRY(exec(migration.sql.c_str(),
                  "cannot upgrade the task database to schema version " + std::to_string(migration.version)));
    }
    if (current >= 1 && current < 2) CT_TRY(chain_existing_audit_rows());
    std::string pragma = "PRAGMA user_version = " + std::to_string(target);
    return exec(pragma.c_str(), "cannot record the schema version");
  }();
  if (!result) {
    rollback();
    return result;
  }
  return commit();
}

Result<void> SqliteStore::backup_before_migration(const SqliteOptions& options, std::int64_t current) {
  namespace fs = std::filesystem;
  const std::string note = "pre-migrate-v" + std::to_string(current);
  std::error_code ec;
  fs::create_directories(options.migration_backups, ec);
  const auto changed = fs::last_write_time(file_, ec);
  for (const auto& entry : fs::directory_iterator(options.migration_backups, ec)) {
    const std::string name = entry.path().filename().string();
    std::error_code time_ec;
    if (name.ends_with("-" + note + ".db") && !ec && entry.last_write_time(time_ec) >= changed && !time_ec) {
      log::warn("upgrading " + file_.string() + " from schema version " + std::to_string(current) +
                "; the store as it was is already saved in " + entry.path().string());
      return {};
    }
  }
  const TimeMs now = options.clock ? options.clock->now() : SystemClock().now();
  auto copy = reserve_backup_path(options.migration_backups, now, note);
  const bool copied = copy && copy_sqlite_database(file_, *copy);
  if (copy && !copied) fs::remove(*copy, ec);
  if (!copied)
    return fail(Error(ErrorCode::FileError, "cannot back up " + file_.string() + " before upgrading its schema "
                                            "from version " + std::to_string(current) + "; nothing was changed")
                    .with_fix("check the free space and permissions of " + options.migration_backups.string() +
                              ", then run the command again"));
  log::warn("upgrading " + file_.string() + " from schema version " + std::to_string(current) + " to " +
            std::to_string(sqlite_schema_version()) + "; the store as it was is saved in " + copy->string());
  return {};
}

Result<void> SqliteStore::chain_existing_audit_rows() {
  std::string previous;
  AuditQuery query;
  query.ascending = true;
  query.limit = -1;
  CT_TRY_ASSIGN(std::vector<AuditEntry> rows, read_audit(query));
  for (const auto& row : rows) {
    previous = audit_hash(previous, row);
    CT_TRY(runner_.run("UPDATE audit SET hash = ?1 WHERE seq = ?2", sql::values(previous, row.seq),
                       "cannot chain the audit trail"));
  }
  return {};
}

}  // namespace ct::sqlite

namespace ct {

void remove_sqlite_files(const std::filesystem::path& file) {
  std::error_code ec;
  for (const char* suffix : {"", "-wal", "-shm", "-journal", "-turn"}) std::filesystem::remove(file.string() + suffix, ec);
}

using namespace sqlite;  // the store class and the helpers of sqlite_store_impl.h

std::int64_t sqlite_schema_version() { return sqlite::schema_steps().back().version; }

std::vector<MigrationStep> sqlite_migrations() {
  std::vector<MigrationStep> steps;
  for (const auto& migration : sqlite::schema_steps()) steps.push_back({migration.version, migration.description});
  return steps;
}

Result<StoreInfo> inspect_sqlite_file(const std::filesystem::path& file, bool check) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(file, ec))
    return fail(Error(ErrorCode::NotFound, file.string() + " is not a file").with_fix("check the path"));
  sqlite3* db = nullptr;
  int rc = sqlite3_open_v2(file.c_str(), &db, SQLITE_OPEN_READONLY, nullptr);
  std::unique_ptr<sqlite3, int (*)(sqlite3*)> guard(db, sqlite3_close_v2);
  if (rc != SQLITE_OK) {
    Error error = sqlite_error(rc, db ? sqlite3_errmsg(db) : sqlite3_errstr(rc), "cannot open", file);
    error.code = ErrorCode::FileError;
    return fail(std::move(error));
  }
  auto version = read_user_version(db);
  if (!version) {
    return fail(Error(ErrorCode::FileError, file.string() + " is not a SQLite database (" + sqlite3_errmsg(db) + ")")
                    .with_fix("pick another file"));
  }
  StoreInfo info;
  info.schema_version = *version;
  {
    sqlite3_stmt* count = nullptr;
    if (sqlite3_prepare_v2(db, "SELECT count(*) FROM sqlite_schema WHERE type = 'table'", -1, &count, nullptr) ==
            SQLITE_OK &&
        sqlite3_step(count) == SQLITE_ROW)
      info.tables = sqlite3_column_int64(count, 0);
    sqlite3_finalize(count);
  }
  if (check) info.problems = quick_check_problems(db);
  return info;
}

Result<void> copy_sqlite_database(const std::filesystem::path& source, const std::filesystem::path& target) {
  // Opened read-write but query-only: a read-only connection to a WAL database would leave its
  // -wal and -shm files behind; this one removes them when it closes, and writes nothing.
  sqlite3* from = nullptr;
  int rc = sqlite3_open_v2(source.c_str(), &from, SQLITE_OPEN_READWRITE, nullptr);
  std::unique_ptr<sqlite3, int (*)(sqlite3*)> from_guard(from, sqlite3_close_v2);
  if (rc == SQLITE_OK) sqlite3_exec(from, "PRAGMA query_only = 1", nullptr, nullptr, nullptr);
  if (rc != SQLITE_OK) {
    Error error = sqlite_error(rc, from ? sqlite3_errmsg(from) : sqlite3_errstr(rc), "cannot open", source);
    error.code = ErrorCode::FileError;
    return fail(std::move(error));
  }
  sqlite3* to = nullptr;
  rc = sqlite3_open_v2(target.c_str(), &to, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr);
  std::unique_ptr<sqlite3, int (*)(sqlite3*)> to_guard(to, sqlite3_close_v2);
  if (rc != SQLITE_OK) {
    Error error = sqlite_error(rc, to ? sqlite3_errmsg(to) : sqlite3_errstr(rc), "cannot create", target);
    error.code = ErrorCode::FileError;
    return fail(std::move(error));
  }
  sqlite3_backup* backup = sqlite3_backup_init(to, "main", from, "main");
  if (!backup) {
    Error error = sqlite_error(sqlite3_errcode(to), sqlite3_errmsg(to), "cannot copy", source);
    error.code = ErrorCode::FileError;
    return fail(std::move(error));
  }
  rc = sqlite3_backup_step(backup, -1);
  sqlite3_backup_finish(backup);
  if (rc != SQLITE_DONE) {
    Error error = sqlite_error(rc, rc == SQLITE_NOTADB ? "not a database" : sqlite3_errmsg(to), "cannot copy", source);
    error.code = ErrorCode::FileError;
    to_guard.reset();
    std::error_code ec;
    std::filesystem::remove(target, ec);
    return fail(std::move(error));
  }
  return {};
}

Result<std::unique_ptr<Store>> open_sqlite_store(const std::filesystem::path& file, const SqliteOptions& options,
                                                 bool shared_by_processes) {
  std::error_code ec;
  const auto status = std::filesystem::status(file, ec);
  const bool exists = std::filesystem::exists(status);
  if (!exists && !options.create) {
    return fail(Error(ErrorCode::NotInitialized, "no task database at " + file.string())
                    .with_fix(call("system.init")));
  }
  if (exists && std::filesystem::is_directory(status)) {
    return fail(Error(ErrorCode::FileError, file.string() + " is a directory, not a task database")
                    .with_fix("move " + file.string() + " aside, then " + call("system.init")));
  }
  if (!exists && file.has_parent_path()) {
    std::filesystem::create_directories(file.parent_path(), ec);
    if (ec) {
      return fail(Error(ErrorCode::FileError, "cannot create " + file.parent_path().string() + ": " + ec.message())
                      .with_fix("check the permissions of " + file.parent_path().string()));
    }
  }
  auto open = [&](const std::string& name, int flags) -> Result<std::unique_ptr<SqliteStore>> {
    sqlite3* db = nullptr;
    int rc = sqlite3_open_v2(name.c_str(), &db, flags | SQLITE_OPEN_NOMUTEX, sqlite::store_vfs());
    if (rc != SQLITE_OK) {
      std::string detail = db != nullptr ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
      const int system_errno = db != nullptr ? sqlite3_system_errno(db) : 0;
      sqlite3_close_v2(db);
      Error error = sqlite_error(rc, detail, "cannot open the task database", file, system_errno);
      if (error.code == ErrorCode::Internal) error.code = ErrorCode::FileError;
      return fail(std::move(error));
    }
    auto store = std::make_unique<SqliteStore>(db, file);
    store->set_shared_by_processes(shared_by_processes);
    CT_TRY(store->configure(options));
    return store;
  };
  auto store = open(file.string(), options.read_only ? SQLITE_OPEN_READONLY
                                                     : SQLITE_OPEN_READWRITE | (options.create ? SQLITE_OPEN_CREATE : 0));
  if (store) return std::unique_ptr<Store>(std::move(*store));
  // A store that cannot be written (read-only filesystem, permissions) is opened read-only, and
  // writes then fail saying so. Where its directory cannot be written, SQLite cannot create the
  // -shm index a WAL store is read through: the store is read as immutable — nobody can be
  // writing to a WAL store whose index nobody could create.
  if (store.error().details["readOnlyDirectory"] != json::Value(true)) return std::unexpected(std::move(store.error()));
  CT_TRY_ASSIGN(std::unique_ptr<SqliteStore> immutable,
                open("file:" + uri_path(std::filesystem::absolute(file, ec)) + "?immutable=1",
                     SQLITE_OPEN_READONLY | SQLITE_OPEN_URI));
  return std::unique_ptr<Store>(std::move(immutable));
}

}  // namespace ct
