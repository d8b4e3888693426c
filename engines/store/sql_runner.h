// One statement at a time over either backend: the roles of the store are written once over this
// (engines/store/store.h), in SQL both dialects read alike, with ?1, ?2, … for its values (the
// PostgreSQL backend writes them as $1, $2, …) and the backend's Dialect for the words that differ.
// Internal to the store: the backends implement Runner, the roles use it.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "core/error.h"

namespace ct::sql {

/// A value bound to a statement: NULL, an integer, a real or a text.
struct Value : std::variant<std::monostate, std::int64_t, double, std::string> {
  using variant::variant;
  Value(std::string_view text) : variant(std::string(text)) {}
  Value(const char* text) : variant(std::string(text)) {}
  /// NULL for nullopt.
  Value(const std::optional<std::int64_t>& value) {
    if (value) emplace<std::int64_t>(*value);
  }
  Value(const std::optional<double>& value) {
    if (value) emplace<double>(*value);
  }
};

/// The values of a statement, in order (each one a Value's constructor takes).
template <typename... Vs>
std::vector<Value> values(Vs&&... vs) {
  std::vector<Value> out;
  out.reserve(sizeof...(vs));
  (out.emplace_back(std::forward<Vs>(vs)), ...);
  return out;
}

/// The current row of a statement. Columns are numbered from 0; text() is empty for NULL, integer()
/// and real() 0.
class Cursor {
 public:
  virtual std::string_view text(int column) const = 0;
  virtual std::int64_t integer(int column) const = 0;
  virtual std::optional<std::int64_t> optional_int(int column) const = 0;
  virtual double real(int column) const = 0;
  virtual std::optional<double> optional_real(int column) const = 0;
  virtual bool is_null(int column) const = 0;
  virtual int columns() const = 0;

 protected:
  ~Cursor() = default;
};

/// What the dialects write differently in the roles' SQL. Fragments name task t and research entry
/// r, and hold "{}" where their value goes.
struct Dialect {
  std::string_view has_label;      // t's labels (a JSON list) hold the value
  std::string_view open_children;  // t has an unfinished child (an epic's work is its children)
  std::string_view has_topic;      // r's topics hold the value, ASCII letters compared case-folded
  std::string_view roots_first;    // after "t.parent" in ORDER BY: NULL (a root) sorts first
  std::string_view roots_last;     // after "t.parent DESC": NULL sorts last
  std::string_view title_key;      // the title as a sort key, ASCII letters case-folded
  std::string_view ordered_join;   // a join whose left side the planner must read first
  std::string_view list_items;     // the items of the JSON list {} as rows (value: text, pos: from 0)
  std::string_view linked_tasks;   // research entry r's linked tasks as a JSON list, in link order
  std::string_view find_text;      // the function giving where its second argument is in its first (1-based; 0: absent)
  std::string_view intent_category;    // the category of an audit row's intent (JSON), as text
  std::string_view intent_confidence;  // its confidence, as a number
  std::string_view intent_has_tag;     // its tags hold the value
  std::string_view change_order;       // audit_changes in the order written
  /// A UNION ALL of SELECTs each in index order, under ORDER BY … LIMIT, is merged as it is read
  /// and stops at the limit (SQLite). Otherwise (PostgreSQL appends the parts, then sorts them)
  /// each part is cut to the limit in a subquery of its own first.
  bool merges_ordered_union = false;
};

/// A function to call, borrowed for the length of a call (no copy, no allocation).
template <typename Signature>
class FunctionRef;
template <typename R, typename... Args>
class FunctionRef<R(Args...)> {
 public:
  FunctionRef() = default;
  template <typename F>
    requires(!std::is_same_v<std::remove_cvref_t<F>, FunctionRef> && std::is_invocable_r_v<R, F&, Args...>)
  FunctionRef(F&& f)  // NOLINT: implicit, as a lambda is passed
      : object_(const_cast<void*>(static_cast<const void*>(&f))),
        call_([](void* object, Args... args) -> R {
          return (*static_cast<std::remove_reference_t<F>*>(object))(std::forward<Args>(args)...);
        }) {}
  explicit operator bool() const { return call_ != nullptr; }
  R operator()(Args... args) const { return call_(object_, std::forward<Args>(args)...); }

 private:
  void* object_ = nullptr;
  R (*call_)(void*, Args...) = nullptr;
};

/// What a statement does with each row; an error ends the statement and is its result.
using RowFn = FunctionRef<Result<void>(const Cursor&)>;

namespace detail {
template <typename X>
struct Unwrapped {
  using type = X;
  static constexpr bool result = false;
};
template <typename X>
struct Unwrapped<Result<X>> {
  using type = X;
  static constexpr bool result = true;
};
/// What a reader of rows gives: the T of a T or of a Result<T>.
template <typename Read>
using ReadOf = Unwrapped<std::remove_cvref_t<std::invoke_result_t<Read&, const Cursor&>>>;
}  // namespace detail

/// The largest LIMIT: "every row" on both dialects (PostgreSQL has no LIMIT -1).
inline constexpr std::int64_t kNoLimit = std::int64_t{1} << 62;
/// A LIMIT's value: kNoLimit for a negative one.
inline std::int64_t limit_of(std::int64_t limit) { return limit < 0 ? kNoLimit : limit; }

class Runner {
 public:
  explicit Runner(const Dialect& dialect) : dialect_(dialect) {}

  /// Runs one statement (prepared once per connection and cached by its text), calling `on_row`
  /// for each row it answers. Failures are the backend's errors, `what` saying what was being done.
  [[nodiscard]] virtual Result<void> run(std::string_view sql, std::span<const Value> args, std::string_view what,
                                         RowFn on_row) = 0;
  /// Runs `body`, a write of several statements, all or nothing: inside the caller's transaction,
  /// what it wrote is gone again when it fails.
  [[nodiscard]] virtual Result<void> atomically(FunctionRef<Result<void>()> body) = 0;
  /// The rows the last INSERT, UPDATE or DELETE changed.
  virtual std::int64_t changes() const = 0;
  /// A statement as run() takes it (views: read_ahead() keeps its own copy).
  struct StatementRef {
    std::string_view sql;
    std::span<const Value> args;
    std::string_view what;
  };
  /// Whether read_ahead() does anything here: callers build the statements only then.
  virtual bool reads_ahead() const { return false; }
  /// Reads the caller runs next, in this order, none needing another's answer. A backend whose
  /// statements are round trips (PostgreSQL) sends them together with the next statement (in one
  /// round trip) and answers each from that when run() runs it, as long as nothing but them was run
  /// since: one of them not run is skipped, and any other statement, a savepoint or the
  /// transaction's end forgets the rest. A failure among them is the failure of the statement that
  /// sent them. What run() answers is what it would have answered without; an in-process backend
  /// (SQLite) ignores it.
  virtual void read_ahead(std::span<const StatementRef> /*statements*/) {}
  const Dialect& dialect() const { return dialect_; }

  [[nodiscard]] Result<void> run(std::string_view sql, std::span<const Value> args, std::string_view what) {
    return run(sql, args, what, RowFn());
  }
  /// run() with a function of each row returning void, or Result<void>.
  template <typename F>
    requires std::is_invocable_v<F&, const Cursor&>
  [[nodiscard]] Result<void> each(std::string_view sql, std::span<const Value> args, std::string_view what, F&& f) {
    if constexpr (std::is_void_v<std::invoke_result_t<F&, const Cursor&>>) {
      auto adapted = [&](const Cursor& row) -> Result<void> {
        f(row);
        return {};
      };
      return run(sql, args, what, RowFn(adapted));
    } else {
      return run(sql, args, what, RowFn(f));
    }
  }
  /// Every row, each read by `read` (returning a T, or a Result<T>).
  template <typename Read, typename T = typename detail::ReadOf<Read>::type>
  [[nodiscard]] Result<std::vector<T>> all(std::string_view sql, std::span<const Value> args, std::string_view what,
                                           Read&& read) {
    std::vector<T> out;
    CT_TRY(each(sql, args, what, [&](const Cursor& row) -> Result<void> {
      auto item = read(row);
      if constexpr (detail::ReadOf<Read>::result) {
        if (!item) return fail(std::move(item.error()));
        out.push_back(std::move(*item));
      } else {
        out.push_back(std::move(item));
      }
      return {};
    }));
    return out;
  }
  /// The first row read by `read`; nullopt when there is none.
  template <typename Read, typename T = typename detail::ReadOf<Read>::type>
  [[nodiscard]] Result<std::optional<T>> first(std::string_view sql, std::span<const Value> args, std::string_view what,
                                               Read&& read) {
    std::optional<T> out;
    CT_TRY(each(sql, args, what, [&](const Cursor& row) -> Result<void> {
      if (out) return {};
      auto item = read(row);
      if constexpr (detail::ReadOf<Read>::result) {
        if (!item) return fail(std::move(item.error()));
        out = std::move(*item);
      } else {
        out = std::move(item);
      }
      return {};
    }));
    return out;
  }
  /// The integer of the first row's first column; 0 when there is no row.
  [[nodiscard]] Result<std::int64_t> integer(std::string_view sql, std::span<const Value> args, std::string_view what) {
    std::int64_t out = 0;
    CT_TRY(each(sql, args, what, [&](const Cursor& row) { out = row.integer(0); }));
    return out;
  }
  /// The first column of every row, as text.
  [[nodiscard]] Result<std::vector<std::string>> strings(std::string_view sql, std::span<const Value> args,
                                                         std::string_view what) {
    return all(sql, args, what, [](const Cursor& row) { return std::string(row.text(0)); });
  }

 protected:
  ~Runner() = default;

 private:
  const Dialect& dialect_;
};

/// The values of a statement built at run time, bound in order: mark() is the placeholder of the
/// value bound next ("?3" when two are bound).
class Args {
 public:
  std::string mark() const { return "?" + std::to_string(values_.size() + 1); }
  Args& bind(Value value) {
    values_.push_back(std::move(value));
    return *this;
  }
  /// mark(), then binds `value`.
  std::string operator()(Value value) {
    std::string out = mark();
    bind(std::move(value));
    return out;
  }
  operator std::span<const Value>() const { return values_; }
  std::size_t size() const { return values_.size(); }

 private:
  std::vector<Value> values_;
};

/// `sql` with every ?N outside quotes written as $N (PostgreSQL's placeholders).
std::string dollar_placeholders(std::string_view sql);

}  // namespace ct::sql
