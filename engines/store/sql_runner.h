// One statement at a time over either backend, for the roles whose SQL both dialects write alike
// and is therefore written once above the backends (engines/store/memory_store.h). The SQL uses
// ?1, ?2, … for its values; the PostgreSQL backend writes them as $1, $2, …. Internal to the
// store: the backends implement it, the shared roles use it.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>

#include "core/error.h"

namespace ct::sql {

/// A value bound to a statement: NULL, an integer, a real or a text.
using Value = std::variant<std::monostate, std::int64_t, double, std::string>;

/// The current row of a statement. Columns are numbered from 0; text() is empty for NULL.
class Cursor {
 public:
  virtual std::string_view text(int column) const = 0;
  virtual std::optional<std::int64_t> optional_int(int column) const = 0;
  virtual std::optional<double> optional_real(int column) const = 0;
  std::int64_t integer(int column) const { return optional_int(column).value_or(0); }

 protected:
  ~Cursor() = default;
};

class Runner {
 public:
  /// Runs one statement (prepared once per connection and cached by its text), calling `on_row`
  /// for each row it answers. Failures are the backend's errors, `what` saying what was being done.
  [[nodiscard]] virtual Result<void> run(std::string_view sql, std::span<const Value> args, std::string_view what,
                                         const std::function<void(const Cursor&)>& on_row) = 0;
  [[nodiscard]] Result<void> run(std::string_view sql, std::span<const Value> args, std::string_view what) {
    return run(sql, args, what, {});
  }

 protected:
  ~Runner() = default;
};

/// `sql` with every ?N outside quotes written as $N (PostgreSQL's placeholders).
std::string dollar_placeholders(std::string_view sql);

}  // namespace ct::sql
