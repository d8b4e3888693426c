// Statements of the SQLite backend: a cached statement borrowed for one use (bound, stepped,
// reset), its column readers, identifiers quoted for SQL built at run time, and the transparent
// hash of the statement cache. Internal to the SQLite backend.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <span>
#include <vector>

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

/// Borrows a cached statement for one use; resets it and clears its bindings when done, so the
/// next user starts clean even after an early return.
class Statement {
 public:
  explicit Statement(sqlite3_stmt* stmt) : stmt_(stmt) {}
  ~Statement() {
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
  }
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  Statement& bind(int index, std::string_view text) {
    // A null data pointer would bind SQL NULL; an empty string must stay an empty string.
    const char* data = text.data() != nullptr ? text.data() : "";
    sqlite3_bind_text64(stmt_, index, data, text.size(), kTransient, SQLITE_UTF8);
    return *this;
  }
  Statement& bind(int index, const std::string& text) { return bind(index, std::string_view(text)); }
  Statement& bind(int index, std::int64_t value) {
    sqlite3_bind_int64(stmt_, index, value);
    return *this;
  }
  Statement& bind(int index, const std::optional<std::int64_t>& value) {
    if (value) return bind(index, *value);
    return bind_null(index);
  }
  Statement& bind_null(int index) {
    sqlite3_bind_null(stmt_, index);
    return *this;
  }
  Statement& bind(int index, const sql::Value& value) {
    if (const auto* number = std::get_if<std::int64_t>(&value)) return bind(index, *number);
    if (const auto* text = std::get_if<std::string>(&value)) return bind(index, *text);
    if (const auto* real = std::get_if<double>(&value)) {
      sqlite3_bind_double(stmt_, index, *real);
      return *this;
    }
    return bind_null(index);
  }
  /// Binds values to ?1, ?2, … in order.
  Statement& bind_all(std::span<const sql::Value> values) {
    for (std::size_t i = 0; i < values.size(); ++i) bind(static_cast<int>(i) + 1, values[i]);
    return *this;
  }

  sqlite3_stmt* get() const { return stmt_; }
  std::string_view text(int column) const { return column_text(stmt_, column); }
  std::int64_t integer(int column) const { return sqlite3_column_int64(stmt_, column); }
  double real(int column) const { return sqlite3_column_double(stmt_, column); }
  bool is_null(int column) const { return sqlite3_column_type(stmt_, column) == SQLITE_NULL; }
  // With text() and integer(), the row shape engines/store/store_rows.h reads.
  std::optional<std::int64_t> optional_int(int column) const { return column_optional_int(stmt_, column); }
  std::optional<double> optional_real(int column) const {
    if (is_null(column)) return std::nullopt;
    return real(column);
  }

 private:
  sqlite3_stmt* stmt_;
};

}  // namespace ct::sqlite
