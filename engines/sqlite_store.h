// The embedded default store: SQLite in WAL mode in .cleo/tasks.db.
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "core/clock.h"
#include "core/error.h"
#include "engines/store.h"

namespace ct {

struct SqliteOptions {
  int busy_timeout_ms = 5000;   // how long a writer waits for the lock before E_LOCK_TIMEOUT
  bool synchronous_full = false;  // storage.synchronous = full: durable across power loss
  bool create = false;          // create the file and schema (system.init); otherwise it must exist
  /// Open a read-only connection: writes fail with E_FILE_ERROR. (A store whose file or directory
  /// cannot be written is opened read-only anyway.)
  bool read_only = false;
  /// Bring the store up to date on open (WAL mode, schema migrations). Without it nothing is
  /// written on open, and a store needing an upgrade is refused.
  bool upgrade = true;
  /// When set, an existing store is copied into this directory (reserve_backup_path, note
  /// "pre-migrate-v<N>") before a schema migration changes it; `clock` names the copy (read only
  /// then, so a test clock does not move on every open).
  std::filesystem::path migration_backups;
  Clock* clock = nullptr;
};

/// Opens (or with options.create, creates) the database, applies pragmas (WAL, foreign keys,
/// busy timeout, synchronous) and runs forward migrations. A missing file is E_NOT_INITIALIZED;
/// a file that is not a database, is empty, is corrupt or whose schema version contradicts its
/// tables is E_FILE_ERROR with `details.damaged` and the restore fix, found before anything is
/// written; a schema newer than this binary is E_FILE_ERROR telling the user to upgrade.
///
/// Every transaction then checks that the file is still the one opened (a store removed or
/// replaced under a running process: E_FILE_ERROR, `details.reopen` when a new one took its
/// place), and write transactions refuse while `<file>.damaged` marks it (an integrity check or
/// SQLite itself found a damaged page; a clean integrity_problems() lifts it).
Result<std::unique_ptr<Store>> open_sqlite_store(const std::filesystem::path& file,
                                                 const SqliteOptions& options);

/// The schema version this binary writes.
std::int64_t sqlite_schema_version();

/// One forward schema step (system.migrate lists them).
struct MigrationStep {
  std::int64_t version = 0;   // the version the step moves the database to
  std::string description;
};

/// Every step, oldest first; the last one's version is sqlite_schema_version().
std::vector<MigrationStep> sqlite_migrations();

struct SqliteFileInfo {
  std::int64_t schema_version = 0;    // PRAGMA user_version; 0 = not a CLEO store
  std::int64_t tables = 0;            // tables it holds (0: an empty database, e.g. a 0-byte file)
  std::vector<std::string> problems;  // PRAGMA quick_check findings (with check)
};

/// Reads a database file's schema version (and with `check`, runs its integrity check) through
/// a read-only connection: nothing is migrated or changed. Not a file: E_NOT_FOUND; not a
/// database: E_FILE_ERROR.
Result<SqliteFileInfo> inspect_sqlite_file(const std::filesystem::path& file, bool check);

/// A consistent copy of the database `source` in `target` (SQLite's online backup, reading
/// `source` read-only, so it may be in use meanwhile). On failure `target` is removed.
Result<void> copy_sqlite_database(const std::filesystem::path& source, const std::filesystem::path& target);

}  // namespace ct
