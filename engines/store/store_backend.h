// Which database holds a project's store, and what is done to it before (or instead of) opening
// a Store: open (creating or migrating), the schema this binary writes and its steps, what a
// store holds without using it, a consistent copy, and removing an empty one. Domains reach the
// live store only through this seam (project_store()), never through a backend's own functions;
// SQLite in .cleo/tasks.db is the embedded default (engines/store/sqlite/sqlite_store.h).
//
// Backups are SQLite database files whatever the live backend: a portable, self-contained copy
// that any backend's Store::replace_contents_from() restores. The *_backup_file functions read
// and write them.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/clock.h"
#include "core/error.h"
#include "engines/project/config.h"
#include "engines/project/project.h"
#include "engines/store/store.h"
#include "engines/store/store_dump.h"

namespace ct {

struct StoreOptions {
  int busy_timeout_ms = 5000;     // how long a writer waits for the lock before E_LOCK_TIMEOUT
  bool synchronous_full = false;  // storage.synchronous = full: durable across power loss
  bool create = false;            // create the store and its schema (system.init); otherwise it must exist
  /// Open read-only: writes fail with E_FILE_ERROR. (A store that cannot be written is opened
  /// read-only anyway.)
  bool read_only = false;
  /// Bring the store up to date on open (schema migrations). Without it nothing is written on
  /// open, and a store needing an upgrade is refused.
  bool upgrade = true;
  /// When set, an existing store is copied into this directory (reserve_backup_path, note
  /// "pre-migrate-v<N>") before a schema migration changes it; `clock` names the copy.
  std::filesystem::path migration_backups;
  Clock* clock = nullptr;
  /// A process that makes one call and exits (a `ct` command). SQLite: each commit is made
  /// durable by itself (synchronous=FULL, one fdatasync of the WAL), and closing leaves the WAL
  /// to the next process instead of checkpointing it into the database and deleting it (two more
  /// syncs, a directory sync and two unlinks per write), unless it has grown past
  /// kShortLivedWalFrames, whose index every later process would rebuild on open.
  bool short_lived = false;
};

/// The options a project's configuration sets (storage.busyTimeoutMs, storage.synchronous).
StoreOptions store_options(const Config& config);

/// What a store holds, read without using it (nothing is migrated or changed).
struct StoreInfo {
  std::int64_t schema_version = 0;    // 0 = not a CLEO store
  std::int64_t tables = 0;            // tables it holds (0: nothing there yet, e.g. an empty file)
  std::vector<std::string> problems;  // the integrity check's findings (with check)
};

/// One forward schema step (system.migrate lists them).
struct MigrationStep {
  std::int64_t version = 0;   // the version the step moves the store to
  std::string description;
};

/// One finding of StoreBackend::health() (system.health lists it with its own checks).
struct StoreHealth {
  std::string name;    // "wal"
  std::string status;  // "ok" | "warn" | "fail"
  std::string detail;
  Advice fix;          // empty when nothing needs doing
};

class StoreBackend {
 public:
  virtual ~StoreBackend() = default;

  /// "sqlite": named in reports.
  virtual std::string_view kind() const = 0;
  /// Where the store lives, for messages (a path; never a credential).
  virtual std::string location() const = 0;
  /// Opens (or with options.create, creates) the store and migrates it forward (options.upgrade).
  /// Missing: E_NOT_INITIALIZED; damaged: E_FILE_ERROR with `details.damaged` and the restore fix;
  /// newer than this binary: E_FILE_ERROR telling the user to upgrade.
  virtual Result<std::unique_ptr<Store>> open(const StoreOptions& options) const = 0;
  /// Every step up to store_schema_version(), oldest first.
  virtual std::vector<MigrationStep> migrations() const = 0;
  /// The store's schema version and tables (with `check`, its integrity problems), without
  /// migrating anything. Missing: E_NOT_FOUND; not a store: E_FILE_ERROR.
  virtual Result<StoreInfo> inspect(bool check) const = 0;
  /// A consistent copy of the store as a backup file (it may be in use meanwhile). On failure
  /// `file` is removed.
  virtual Result<void> copy_to(const std::filesystem::path& file) const = 0;
  /// Removes a store that holds nothing (an interrupted init), with whatever it keeps beside it.
  virtual void erase_empty() const = 0;
  /// What this backend watches beside the store's own integrity (system.health), read without
  /// opening the store.
  virtual std::vector<StoreHealth> health() const = 0;
  /// Recovery of a store nobody can open (missing, empty, corrupt): it is moved into `aside_dir`,
  /// never deleted, and the backup file `copy` (closed, nothing beside it) takes its place whole,
  /// so that other processes see the old store or the new one. Returns the name the old store was
  /// moved aside under ("" when there was none); `copy` is gone on success.
  virtual Result<std::string> replace_with_backup(const std::filesystem::path& copy, const std::filesystem::path& aside_dir,
                                                  TimeMs now) const = 0;
};

/// Whether a PostgreSQL URL carries a password (user:secret@, password=…): such a URL must not be
/// kept in a config file or the audit trail.
bool url_has_password(std::string_view url);
/// A connection string without its password ("postgresql://ann@db:5432/cleo"), for messages.
/// libpq's own key=value form has its password=… value masked too.
std::string redact_url(std::string_view url);
/// How a PostgreSQL store names its location (StoreBackend::location): the URL without its
/// password, and the schema.
std::string postgresql_location(std::string_view url, std::string_view schema);

/// The PostgreSQL backend (engines/store/postgres/pg_store.h), registered by that library when a
/// program links it in or loads it: `ct` and `ct-serve` load it as a module only when a store URL
/// names a server (engines/store/open/), so that a project on SQLite never loads libpq.
using PostgresqlBackendFactory = std::unique_ptr<StoreBackend> (*)(std::string url, std::string schema,
                                                                   const BackupFiles& backups);
void provide_postgresql_backend(PostgresqlBackendFactory factory);
/// The registered factory; nullptr before the library is linked in or loaded.
PostgresqlBackendFactory provided_postgresql_backend();

/// The version of the data model this binary writes: every backend's schema carries it, and so
/// does every backup file.
std::int64_t store_schema_version();

}  // namespace ct
