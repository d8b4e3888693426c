// An owned JSON value (order-preserving objects) and a streaming writer of compact JSON.
// Parsing lives in json_parse.h so that only one .cpp includes simdjson.
#pragma once

#include <concepts>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace ct::json {

enum class Type { Null, Bool, Int, Double, String, Array, Object };
std::string_view to_string(Type type);

class Value {
 public:
  using Array = std::vector<Value>;
  using Member = std::pair<std::string, Value>;
  using Object = std::vector<Member>;  // insertion order is kept: output is stable

  Value() = default;
  Value(std::nullptr_t) {}
  Value(bool b) : data_(b) {}
  template <std::integral I>
    requires(!std::same_as<I, bool>)
  Value(I i) : data_(static_cast<std::int64_t>(i)) {}
  Value(double d) : data_(d) {}
  Value(const char* s) : data_(std::string(s)) {}
  Value(std::string s) : data_(std::move(s)) {}
  Value(std::string_view s) : data_(std::string(s)) {}
  Value(Array a) : data_(std::move(a)) {}
  Value(Object o) : data_(std::move(o)) {}

  static Value array() { return Value(Array{}); }
  static Value object() { return Value(Object{}); }
  template <typename Range>
  static Value array_of(const Range& items) {
    Array a;
    for (const auto& item : items) a.emplace_back(item);
    return Value(std::move(a));
  }

  Type type() const { return static_cast<Type>(data_.index()); }
  bool is_null() const { return type() == Type::Null; }
  bool is_bool() const { return type() == Type::Bool; }
  bool is_int() const { return type() == Type::Int; }
  bool is_number() const { return type() == Type::Int || type() == Type::Double; }
  bool is_string() const { return type() == Type::String; }
  bool is_array() const { return type() == Type::Array; }
  bool is_object() const { return type() == Type::Object; }

  bool as_bool() const { return std::get<bool>(data_); }
  std::int64_t as_int() const { return std::get<std::int64_t>(data_); }
  double as_double() const {
    return is_int() ? static_cast<double>(as_int()) : std::get<double>(data_);
  }
  const std::string& as_string() const { return std::get<std::string>(data_); }
  std::string& as_string() { return std::get<std::string>(data_); }
  /// The string this value holds, or "" for any other kind (a missing key reads as null).
  std::string string_or_empty() const { return is_string() ? as_string() : std::string(); }
  const Array& as_array() const { return std::get<Array>(data_); }
  Array& as_array() { return std::get<Array>(data_); }
  const Object& as_object() const { return std::get<Object>(data_); }
  Object& as_object() { return std::get<Object>(data_); }

  /// Object access. `set` replaces an existing key in place or appends.
  Value& set(std::string_view key, Value value);
  const Value* find(std::string_view key) const;
  Value* find(std::string_view key);
  bool contains(std::string_view key) const { return find(key) != nullptr; }
  bool erase(std::string_view key);
  /// The member's value or null when absent (or when this is not an object).
  const Value& operator[](std::string_view key) const;

  /// Array access.
  void push_back(Value value) { as_array().push_back(std::move(value)); }
  std::size_t size() const;
  bool empty() const { return size() == 0; }

  /// Compact JSON, no whitespace.
  std::string dump() const;
  void dump_to(std::string& out) const;
  /// Indented JSON for people (configuration snippets), two spaces per level.
  std::string dump_pretty() const;

  friend bool operator==(const Value& a, const Value& b) { return a.data_ == b.data_; }

 private:
  std::variant<std::nullptr_t, bool, std::int64_t, double, std::string, Array, Object> data_{nullptr};
};

/// Appends `text` as a JSON string literal (with quotes). `text` must be valid UTF-8.
void write_string(std::string& out, std::string_view text);
void write_double(std::string& out, double value);

/// Streams compact JSON into a string without building a Value. Commas are tracked for you.
class Writer {
 public:
  explicit Writer(std::string& out) : out_(out) {}

  Writer& begin_object() { separate(); out_ += '{'; first_ = true; return *this; }
  Writer& end_object() { out_ += '}'; first_ = false; return *this; }
  Writer& begin_array() { separate(); out_ += '['; first_ = true; return *this; }
  Writer& end_array() { out_ += ']'; first_ = false; return *this; }
  Writer& key(std::string_view name) {
    separate();
    write_string(out_, name);
    out_ += ':';
    after_key_ = true;
    return *this;
  }
  Writer& value(std::string_view s) { separate(); write_string(out_, s); return *this; }
  Writer& value(const char* s) { return value(std::string_view(s)); }
  Writer& value(const std::string& s) { return value(std::string_view(s)); }
  Writer& value(bool b) { separate(); out_ += b ? "true" : "false"; return *this; }
  Writer& value(std::int64_t i) { separate(); out_ += std::to_string(i); return *this; }
  Writer& value(int i) { return value(static_cast<std::int64_t>(i)); }
  Writer& value(double d) { separate(); write_double(out_, d); return *this; }
  Writer& null() { separate(); out_ += "null"; return *this; }
  Writer& value(const Value& v) { separate(); v.dump_to(out_); return *this; }
  /// Embeds text that is already valid compact JSON.
  Writer& raw(std::string_view json) { separate(); out_ += json; return *this; }

 private:
  void separate() {
    if (after_key_) { after_key_ = false; first_ = false; return; }
    if (!first_) out_ += ',';
    first_ = false;
  }
  std::string& out_;
  bool first_ = true;
  bool after_key_ = false;
};

/// True when `subset` is contained in `whole`: objects by key (extra keys allowed), arrays
/// element-wise with equal length, scalars equal. Used by transcript tests.
bool contains_subset(const Value& whole, const Value& subset);

}  // namespace ct::json
