// The embedded default store: SQLite in WAL mode in .cleo/tasks.db.
#pragma once

#include <filesystem>
#include <memory>

#include "core/error.h"
#include "engines/store.h"

namespace ct {

struct SqliteOptions {
  int busy_timeout_ms = 5000;   // how long a writer waits for the lock before E_LOCK_TIMEOUT
  bool synchronous_full = false;  // storage.synchronous = full: durable across power loss
  bool create = false;          // create the file and schema (system.init); otherwise it must exist
};

/// Opens (or with options.create, creates) the database, applies pragmas (WAL, foreign keys,
/// busy timeout, synchronous) and runs forward migrations. A missing file is E_NOT_INITIALIZED;
/// a file that is not a database, or is corrupt, is E_FILE_ERROR with a fix; a schema newer than
/// this binary is E_FILE_ERROR telling the user to upgrade.
Result<std::unique_ptr<Store>> open_sqlite_store(const std::filesystem::path& file,
                                                 const SqliteOptions& options);

/// The schema version this binary writes.
std::int64_t sqlite_schema_version();

}  // namespace ct
