// The embedded default store: SQLite in WAL mode in .cleo/tasks.db, and backup files (SQLite
// database files whatever the live backend). Domains reach these through
// engines/store/open/open_store.h, never by naming this header.
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "core/clock.h"
#include "core/error.h"
#include "engines/store/store.h"
#include "engines/store/store_backend.h"
#include "engines/store/store_dump.h"

namespace ct {

/// The SQLite store's options are the neutral ones (engines/store/store_backend.h).
using SqliteOptions = StoreOptions;

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
/// `shared_by_processes`: a project's store, whose writers in many processes take turns through
/// `<file>-turn` (engines/store/sqlite/write_turns.h); a file of one process's own (a backup being
/// written, a restore's copy) makes no such file.
Result<std::unique_ptr<Store>> open_sqlite_store(const std::filesystem::path& file,
                                                 const SqliteOptions& options, bool shared_by_processes = false);

/// The schema version this binary writes.
std::int64_t sqlite_schema_version();

/// Every step, oldest first; the last one's version is sqlite_schema_version().
std::vector<MigrationStep> sqlite_migrations();

/// Reads a database file's schema version (and with `check`, runs its integrity check) through
/// a read-only connection: nothing is migrated or changed. Not a file: E_NOT_FOUND; not a
/// database: E_FILE_ERROR.
Result<StoreInfo> inspect_sqlite_file(const std::filesystem::path& file, bool check);

/// A consistent copy of the database `source` in `target` (SQLite's online backup, reading
/// `source` read-only, so it may be in use meanwhile). On failure `target` is removed.
Result<void> copy_sqlite_database(const std::filesystem::path& source, const std::filesystem::path& target);

/// Removes a store's database file and the files SQLite and its writers keep beside it (-wal,
/// -shm, -journal, the writers' -turn); what is missing is skipped.
void remove_sqlite_files(const std::filesystem::path& file);

/// Backup files, for every backend: written from a store's dump (a new SQLite store of this schema,
/// loaded) and read back as one.
const BackupFiles& sqlite_backup_files();

/// The SQLite store in `file`.
std::unique_ptr<StoreBackend> sqlite_store_backend(const std::filesystem::path& file);

/// A backup file's schema version and tables (with `check`, its integrity problems).
Result<StoreInfo> inspect_backup_file(const std::filesystem::path& file, bool check);
/// Opens a backup file as a store, migrating it to this binary's schema (use a copy).
Result<std::unique_ptr<Store>> open_backup_file(const std::filesystem::path& file);
/// A consistent copy of the backup file `source` in `target`; on failure `target` is removed.
Result<void> copy_backup_file(const std::filesystem::path& source, const std::filesystem::path& target);
/// One table of a backup file: its rows and a SHA-256 over them (every column as text, rows in
/// primary-key order), so that two copies of a store can be compared table by table.
struct TableDigest {
  std::string table;
  std::int64_t rows = 0;
  std::string sha256;
};
/// The digest of every table of a backup file (the search index's tables excluded: they are
/// derived, and rebuilt by every copy), by table name.
Result<std::vector<TableDigest>> backup_file_digests(const std::filesystem::path& file);

}  // namespace ct
