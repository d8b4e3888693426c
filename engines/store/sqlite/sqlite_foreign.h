// Another program's SQLite database read as rows and never written: tasks.import reads the
// original CLEO's tasks.db through it. The file is opened read-only (its bytes, and any journal
// beside it, stay as they are), and what is read is bounded — tables, rows, the size of one value
// and of all of them — so that a huge or hostile file ends in a clear error, never in memory
// exhausted. Domains reach this through engines/store/open/open_store.h; no SQL leaves it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"
#include "core/json.h"

namespace ct {

struct ForeignReadLimits {
  std::size_t max_tables = 1000;              // tables the file may hold
  std::int64_t max_rows = 100'000;            // rows read from one table
  std::size_t max_value_bytes = 1 << 20;      // one text or blob value
  std::size_t max_total_bytes = 64 << 20;     // every text value read, together
};

struct ForeignTable {
  std::string name;
  std::vector<std::string> columns;  // in the table's order
  std::int64_t rows = 0;             // how many rows it holds
  /// Its rows when they were asked for: one object per row, {column: value} — integers, reals,
  /// text (valid UTF-8) or null; a blob is null. In rowid order where the table has one.
  json::Value records = json::Value::array();
};

struct ForeignDatabase {
  std::vector<ForeignTable> tables;  // every table of the file (sqlite_* excluded), by name
  const ForeignTable* find(std::string_view name) const;
};

/// Lists the tables of the SQLite database `file` (their columns and row counts) and reads the
/// rows of those named in `read` (a name that is not a table is skipped), as of one moment. A file
/// its program left no -wal or -journal beside is read as immutable: nothing appears beside it;
/// otherwise what was committed in its -wal is read too. Not a file: E_NOT_FOUND;
/// not a SQLite database, damaged, or left mid-write by its program (a hot journal, which a
/// read-only reader may not roll back): E_FILE_ERROR saying so; over a limit: E_VALIDATION naming
/// the limit and where it was passed.
Result<ForeignDatabase> read_foreign_sqlite(const std::filesystem::path& file, const std::vector<std::string>& read,
                                            const ForeignReadLimits& limits = {});

}  // namespace ct
