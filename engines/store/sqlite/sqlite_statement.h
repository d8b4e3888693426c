// Statements of the SQLite backend: a cached statement borrowed for one use (bound, then reset),
// column readers, and identifiers quoted for SQL built at run time. Internal to the SQLite backend.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "engines/store/sql_runner.h"

namespace ct::sqlite {

// SQLITE_TRANSIENT is an old-style cast inside sqlite3.h; this is its one use.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wold-style-cast"
inline const sqlite3_destructor_type kTransient = SQLITE_TRANSIENT;
#pragma GCC diagnostic pop

/// A name (a table's, a column's) as an SQL identifier: quoted, inner quotes doubled.
inline std::string sql_identifier(std::string_view name) {
  std::string out = "\"";
  for (char c : name) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

inline std::string_view column_text(sqlite3_stmt* stmt, int column) {
  const unsigned char* text = sqlite3_column_text(stmt, column);
  if (text == nullptr) return {};
  return {reinterpret_cast<const char*>(text), static_cast<std::size_t>(sqlite3_column_bytes(stmt, column))};
}

inline std::optional<std::int64_t> column_optional_int(sqlite3_stmt* stmt, int column) {
  if (sqlite3_column_type(stmt, column) == SQLITE_NULL) return std::nullopt;
  return sqlite3_column_int64(stmt, column);
}

/// Borrows a cached statement for one use: binds its values, and resets it and clears them when
/// done, so that the next user starts clean even after an early return.
class Statement {
 public:
  explicit Statement(sqlite3_stmt* stmt) : stmt_(stmt) {}
  ~Statement() {
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
  }
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  /// Binds values to ?1, ?2, … in order (an empty text stays a text: std::string's data is never null).
  void bind_all(std::span<const sql::Value> values) {
    for (std::size_t i = 0; i < values.size(); ++i) {
      const int index = static_cast<int>(i) + 1;
      if (const auto* text = std::get_if<std::string>(&values[i]))
        sqlite3_bind_text64(stmt_, index, text->data(), text->size(), kTransient, SQLITE_UTF8);
      else if (const auto* number = std::get_if<std::int64_t>(&values[i])) sqlite3_bind_int64(stmt_, index, *number);
      else if (const auto* real = std::get_if<double>(&values[i])) sqlite3_bind_double(stmt_, index, *real);
      else sqlite3_bind_null(stmt_, index);
    }
  }

 private:
  sqlite3_stmt* stmt_;
};

}  // namespace ct::sqlite
