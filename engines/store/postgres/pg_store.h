// The PostgreSQL store, for teams whose agents run on many machines: its one public function.
// Domains reach it through engines/store/open/open_store.h, never by naming this header.
#pragma once

#include <memory>
#include <string>

#include "engines/store/store_backend.h"

namespace ct {

/// The PostgreSQL store at `url` (libpq's URL or key=value form) in `schema`.
std::unique_ptr<StoreBackend> postgresql_store_backend(std::string url, std::string schema);

}  // namespace ct
