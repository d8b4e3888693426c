// The SQLite store's schema, step by step: each step moves the database from version - 1 to
// `version`, steps are only ever appended, and the store's PRAGMA user_version says where it is.
// Internal to the SQLite backend (engines/store/sqlite/sqlite_store.cpp runs them; system.migrate lists them
// through engines/store/store_backend.h).
#pragma once

#include <cstdint>
#include <span>
#include <string>

namespace ct::sqlite {

struct Migration {
  std::int64_t version;
  std::string sql;          // the statements (engines/store/schema_ddl.h's shared tables among them)
  const char* creates;      // a table (or index) this step creates: present exactly when the store is at
                            // this version or later
  const char* description;  // what the step does, for system.migrate
};

/// Every step, oldest first.
std::span<const Migration> schema_steps();

}  // namespace ct::sqlite
