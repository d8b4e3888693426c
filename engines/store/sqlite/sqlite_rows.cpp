#include "engines/store/sqlite/sqlite_rows.h"

#include "engines/store/sqlite/sqlite_statement.h"

namespace ct::sqlite {
namespace {

// A statement's current row as read_task_row() reads it.
struct StatementRow {
  sqlite3_stmt* stmt;
  std::string_view text(int column) const { return column_text(stmt, column); }
  std::int64_t integer(int column) const { return sqlite3_column_int64(stmt, column); }
  std::optional<std::int64_t> optional_int(int column) const { return column_optional_int(stmt, column); }
};

}  // namespace

Result<Task> read_task(sqlite3_stmt* stmt) { return read_task_row(StatementRow{stmt}); }

}  // namespace ct::sqlite
