// A store's contents as rows of text, backend-neutral: what a backend dumps table by table and
// loads back, and how backup files (SQLite files whatever the live backend,
// engines/store/store_backend.h) are written from a dump and read back as one, so that a backend
// needs no other backend to write or restore a backup.
#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"

namespace ct {

/// A table a dump holds, and the order its rows are dumped in: columns every backend has, or ""
/// for the order they were inserted in (SQLite's rowid, PostgreSQL's ord), which a load keeps.
struct DumpedTable {
  std::string_view name;
  std::string_view order;
};

/// Every table of a dump, in an order that inserts parents before children (audit before
/// audit_changes; deletion runs in reverse). The search indexes are not dumped: they are derived,
/// and every load rebuilds them.
std::span<const DumpedTable> dumped_tables();

/// meta rows a backend keeps for itself (the schema version, the change stamp): never dumped or
/// loaded. A condition on the meta table's `key` column, the same in every dialect.
inline constexpr std::string_view kLocalMetaRows = "key NOT IN ('schema_version', 'change_stamp')";

/// Receives a dump: each table of dumped_tables() in turn, then its rows.
class DumpSink {
 public:
  /// The next table, and the columns each of its rows holds, in order.
  [[nodiscard]] virtual Result<void> table(std::string_view name, const std::vector<std::string>& columns) = 0;
  /// One row of that table: every column as text (numbers in decimal), nullopt for NULL. The
  /// views last for the call only.
  [[nodiscard]] virtual Result<void> row(std::span<const std::optional<std::string_view>> values) = 0;

 protected:
  ~DumpSink() = default;
};

/// Pushes a whole dump into the sink it is given (a store's dump, a backup file's rows).
using DumpSource = std::function<Result<void>(DumpSink& sink)>;

/// Backup files: the SQLite backend writes and reads them for every backend (the opener,
/// engines/store/open/, hands them to the others).
class BackupFiles {
 public:
  /// Writes `file` from `source` (a new store of this binary's schema, loaded and renamed into
  /// place). On failure nothing is left at `file`.
  [[nodiscard]] virtual Result<void> write(const std::filesystem::path& file, const DumpSource& source) const = 0;
  /// Pushes the rows of the backup `file` into `sink`. A backup of another schema version:
  /// E_FILE_ERROR with a fix.
  [[nodiscard]] virtual Result<void> read(const std::filesystem::path& file, DumpSink& sink) const = 0;

 protected:
  ~BackupFiles() = default;
};

}  // namespace ct
