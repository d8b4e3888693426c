// Opening the project's store: which backend holds it, and the backends by name. The one header
// above the backends that domains include to reach a store, open backup files, read another
// program's SQLite file (sqlite_foreign.h: tasks.import of the original CLEO's tasks.db) or name a
// backend (tests/layering.cmake refuses engines/store/sqlite/ and engines/store/postgres/ above
// engines/).
#pragma once

#include <memory>
#include <string>

#include "engines/project/config.h"
#include "engines/project/project.h"
#include "engines/store/sqlite/sqlite_foreign.h"
#include "engines/store/sqlite/sqlite_store.h"
#include "engines/store/store_backend.h"

namespace ct {

/// The store of `project`, where store_location() (engines/project/project.h) says it is: the
/// PostgreSQL backend, or SQLite in .cleo/tasks.db.
std::unique_ptr<StoreBackend> project_store(const Project& project);
/// The same, with the project's configuration already read (a Workspace holds it).
std::unique_ptr<StoreBackend> project_store(const Project& project, const Config& config);

/// The PostgreSQL store at `url` in `schema`, its backups SQLite files (sqlite_backup_files()).
/// The backend is in its own module, libct_postgres.so (with libpq), loaded on the first call
/// when the program does not link it in; when it does not load, every use of the store answers
/// E_FILE_ERROR saying why.
std::unique_ptr<StoreBackend> postgresql_store_backend(std::string url, std::string schema);

}  // namespace ct
