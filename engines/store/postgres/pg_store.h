// The PostgreSQL store, for teams whose agents run on many machines: its one public function.
// Domains reach it through engines/store/open/open_store.h, never by naming this header.
#pragma once

#include <memory>
#include <string>

#include "engines/store/store_backend.h"
#include "engines/store/store_dump.h"

namespace ct {

/// The PostgreSQL store at `url` (libpq's URL or key=value form) in `schema`; its backups are
/// written and read through `backups` (which must outlive it).
std::unique_ptr<StoreBackend> postgresql_store_backend(std::string url, std::string schema, const BackupFiles& backups);

}  // namespace ct
