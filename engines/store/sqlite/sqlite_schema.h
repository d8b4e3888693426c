// The SQLite store's schema, step by step: each step moves the database from version - 1 to
// `version`, steps are only ever appended, and the store's PRAGMA user_version says where it is.
// Internal to the SQLite backend (engines/store/sqlite/sqlite_store.cpp runs them; system.migrate lists them
// through engines/store/store_backend.h).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace ct::sqlite {

struct Migration {
  std::int64_t version;
  std::string sql;          // the statements (engines/store/schema_ddl.h's shared tables among them)
  const char* creates;      // a table (or index) this step creates: present exactly when the store is at
                            // this version or later; nullptr for a step that only fills rows
  const char* description;  // what the step does, for system.migrate
};

/// FTS5's own vocabulary of tasks_fts, in the connection's temp schema (validate reads it).
inline constexpr std::string_view kIndexVocabulary =
    "CREATE VIRTUAL TABLE IF NOT EXISTS temp.tasks_fts_vocab USING fts5vocab(main, tasks_fts, row); ";
/// Fills tasks_fts_terms (schema v16) with every term of tasks_fts, from FTS5's own vocabulary (it
/// reads every posting: once per schema step, restore, repair or a fold that finds the table
/// marked incomplete), and marks it complete (the row '').
inline constexpr std::string_view kRebuildIndexTerms =
    "DELETE FROM tasks_fts_terms; "
    "CREATE VIRTUAL TABLE IF NOT EXISTS temp.tasks_fts_vocab USING fts5vocab(main, tasks_fts, row); "
    "INSERT INTO tasks_fts_terms(term) SELECT term FROM temp.tasks_fts_vocab; "
    "DROP TABLE temp.tasks_fts_vocab; "
    "INSERT INTO tasks_fts_terms(term) VALUES(''); ";

/// Every step, oldest first.
std::span<const Migration> schema_steps();

}  // namespace ct::sqlite
