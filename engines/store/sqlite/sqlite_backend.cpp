// The SQLite implementation of engines/store/store_backend.h: the project's store is .cleo/tasks.db,
// and backups are SQLite files too.
#include <fcntl.h>
#include <unistd.h>

#include <system_error>

#include <sqlite3.h>

#include "core/sha256.h"
#include "engines/store/backups.h"
#include "engines/store/sqlite/sqlite_store.h"
#include "engines/store/store_backend.h"

namespace ct {
namespace {

class SqliteBackend final : public StoreBackend {
 public:
  explicit SqliteBackend(std::filesystem::path file) : file_(std::move(file)) {}

  std::string_view kind() const override { return "sqlite"; }
  std::string location() const override { return file_.string(); }
  Result<std::unique_ptr<Store>> open(const StoreOptions& options) const override {
    return open_sqlite_store(file_, options, /*shared_by_processes=*/true);
  }
  std::vector<MigrationStep> migrations() const override { return sqlite_migrations(); }
  Result<StoreInfo> inspect(bool check) const override { return inspect_sqlite_file(file_, check); }
  Result<void> copy_to(const std::filesystem::path& file) const override { return copy_sqlite_database(file_, file); }
  void erase_empty() const override { remove_sqlite_files(file_); }

  // The write-ahead log grows while a reader holds an old snapshot: checkpoints cannot reset it.
  std::vector<StoreHealth> health() const override {
    std::error_code ec;
    const std::filesystem::path wal = file_.string() + "-wal";
    auto bytes = std::filesystem::exists(wal, ec) ? std::filesystem::file_size(wal, ec) : 0;
    if (ec) bytes = 0;
    constexpr std::uintmax_t kLargeWal = 64ull * 1024 * 1024;
    if (bytes > kLargeWal)
      return {{"wal", "warn", std::to_string(bytes / (1024 * 1024)) + " MiB not yet checkpointed",
               "a long-running reader holds it open; restart idle ct serve / ct mcp processes"}};
    return {{"wal", "ok", std::to_string(bytes / 1024) + " KiB", ""}};
  }

  // The database moves aside with its -wal and -shm; the copy is fsynced, renamed over it, and the
  // directory fsynced.
  Result<std::string> replace_with_backup(const std::filesystem::path& copy, const std::filesystem::path& aside_dir,
                                          TimeMs now) const override {
    namespace fs = std::filesystem;
    std::error_code ec;
    const fs::path dir = file_.parent_path();
    std::string aside_name;
    if (fs::exists(fs::symlink_status(file_, ec))) {
      fs::create_directories(aside_dir, ec);
      if (ec) return fail(Error(ErrorCode::FileError, "cannot create " + aside_dir.string() + ": " + ec.message()));
      CT_TRY_ASSIGN(fs::path aside, reserve_backup_path(aside_dir, now, "damaged"));
      for (const char* suffix : {"", "-wal", "-shm"}) {
        fs::path from = file_.string() + suffix;
        if (!fs::exists(fs::symlink_status(from, ec))) continue;
        fs::rename(from, aside.string() + suffix, ec);
        if (ec)
          return fail(Error(ErrorCode::FileError, "cannot move " + from.string() + " aside: " + ec.message())
                          .with_fix("check the permissions of " + dir.string()));
      }
      aside_name = aside.filename().string();
    }
    fs::remove(file_.string() + ".damaged", ec);
    int fd = ::open(copy.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0 || ::fsync(fd) != 0) {
      if (fd >= 0) ::close(fd);
      return fail(Error(ErrorCode::FileError, "cannot write " + copy.string() + " to disk")
                      .with_fix("check the free space of " + dir.string()));
    }
    ::close(fd);
    fs::rename(copy, file_, ec);
    if (ec)
      return fail(Error(ErrorCode::FileError, "cannot move the restored store into place: " + ec.message())
                      .with_fix("check the permissions of " + dir.string()));
    int dir_fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dir_fd >= 0) {
      ::fsync(dir_fd);
      ::close(dir_fd);
    }
    return aside_name;
  }

 private:
  std::filesystem::path file_;
};

}  // namespace

StoreOptions store_options(const Config& config) {
  StoreOptions options;
  options.busy_timeout_ms = static_cast<int>(config.get_int("storage.busyTimeoutMs"));
  options.synchronous_full = config.get_string("storage.synchronous") == "full";
  return options;
}

std::unique_ptr<StoreBackend> sqlite_store_backend(const std::filesystem::path& file) {
  return std::make_unique<SqliteBackend>(file);
}

Result<StoreInfo> inspect_backup_file(const std::filesystem::path& file, bool check) {
  return inspect_sqlite_file(file, check);
}

Result<std::unique_ptr<Store>> open_backup_file(const std::filesystem::path& file) {
  return open_sqlite_store(file, StoreOptions{});
}

Result<void> copy_backup_file(const std::filesystem::path& source, const std::filesystem::path& target) {
  return copy_sqlite_database(source, target);
}

Result<std::vector<TableDigest>> backup_file_digests(const std::filesystem::path& file) {
  sqlite3* raw = nullptr;
  int rc = sqlite3_open_v2(file.c_str(), &raw, SQLITE_OPEN_READONLY, nullptr);
  std::unique_ptr<sqlite3, int (*)(sqlite3*)> db(raw, sqlite3_close_v2);
  auto failed = [&](std::string_view what) {
    return fail(Error(ErrorCode::FileError, std::string(what) + " " + file.string() + ": " +
                                                (raw ? sqlite3_errmsg(raw) : sqlite3_errstr(rc))));
  };
  if (rc != SQLITE_OK) return failed("cannot open");
  // Rows in primary-key order (rowid for the tables that have one), so that equal contents give
  // equal digests whatever order the rows were inserted in.
  auto rows_of = [&](const std::string& sql, auto&& on_row) -> Result<void> {
    sqlite3_stmt* stmt = nullptr;
    if (sqlite3_prepare_v2(raw, sql.c_str(), -1, &stmt, nullptr) != SQLITE_OK) {
      sqlite3_finalize(stmt);
      return failed("cannot read");
    }
    std::unique_ptr<sqlite3_stmt, int (*)(sqlite3_stmt*)> owned(stmt, sqlite3_finalize);
    while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) on_row(stmt);
    if (rc != SQLITE_DONE) return failed("cannot read");
    return {};
  };
  std::vector<std::string> tables;
  CT_TRY(rows_of("SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE "
                 "'%fts%' ORDER BY name",
                 [&](sqlite3_stmt* stmt) { tables.emplace_back(reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0))); }));
  std::vector<TableDigest> out;
  for (const auto& table : tables) {
    std::string keys;
    CT_TRY(rows_of("SELECT name FROM pragma_table_info('" + table + "') WHERE pk > 0 ORDER BY pk", [&](sqlite3_stmt* stmt) {
      keys += (keys.empty() ? "" : ", ") + std::string(reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0)));
    }));
    // audit_changes has no key: its rows keep their insertion order (rowid).
    if (keys.empty()) keys = "rowid";
    TableDigest digest;
    digest.table = table;
    Sha256 hash;
    CT_TRY(rows_of("SELECT * FROM \"" + table + "\" ORDER BY " + keys, [&](sqlite3_stmt* stmt) {
      ++digest.rows;
      std::string row;
      for (int c = 0; c < sqlite3_column_count(stmt); ++c) {
        if (sqlite3_column_type(stmt, c) == SQLITE_NULL) {
          row += "\x01";
        } else {
          const unsigned char* text = sqlite3_column_text(stmt, c);
          row.append(reinterpret_cast<const char*>(text), static_cast<std::size_t>(sqlite3_column_bytes(stmt, c)));
        }
        row += '\x1f';
      }
      row += '\x1e';
      hash.update(row);
    }));
    digest.sha256 = hash.hex();
    out.push_back(std::move(digest));
  }
  return out;
}

std::int64_t store_schema_version() { return sqlite_schema_version(); }

}  // namespace ct
