#include "core/json.h"

#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <utility>

#include "core/text.h"

namespace ct::json {

std::string_view to_string(Type type) {
  switch (type) {
    case Type::Null: return "null";
    case Type::Bool: return "boolean";
    case Type::Int: return "integer";
    case Type::Double: return "number";
    case Type::String: return "string";
    case Type::Array: return "array";
    case Type::Object: return "object";
  }
  return "unknown";
}

Value& Value::set(std::string_view key, Value value) {
  if (is_null()) data_ = Object{};
  auto& members = as_object();
  for (auto& [k, v] : members) {
    if (k == key) {
      v = std::move(value);
      return v;
    }
  }
  members.emplace_back(std::string(key), std::move(value));
  return members.back().second;
}

const Value* Value::find(std::string_view key) const {
  if (!is_object()) return nullptr;
  for (const auto& [k, v] : as_object())
    if (k == key) return &v;
  return nullptr;
}

Value* Value::find(std::string_view key) {
  return const_cast<Value*>(static_cast<const Value*>(this)->find(key));
}

bool Value::erase(std::string_view key) {
  if (!is_object()) return false;
  auto& members = as_object();
  for (auto it = members.begin(); it != members.end(); ++it) {
    if (it->first == key) {
      members.erase(it);
      return true;
    }
  }
  return false;
}

const Value& Value::operator[](std::string_view key) const {
  static const Value kNull;
  const Value* found = find(key);
  return found ? *found : kNull;
}

std::size_t Value::size() const {
  if (is_array()) return as_array().size();
  if (is_object()) return as_object().size();
  if (is_string()) return as_string().size();
  return 0;
}

namespace {

constexpr char kHex[] = "0123456789abcdef";

/// What a byte of text becomes in a JSON string: kPlain itself, kShort a backslash and the letter
/// in `letter`, kUnicode \u00XX, kHigh part of a UTF-8 sequence (checked, then copied).
enum ByteKind : std::uint8_t { kPlain, kShort, kUnicode, kHigh };

struct ByteTable {
  ByteKind kind[256];
  char letter[256];
};

constexpr ByteTable make_byte_table() {
  ByteTable table{};
  for (int c = 0; c < 256; ++c) {
    table.kind[c] = c >= 0x80 ? kHigh : c < 0x20 ? kUnicode : kPlain;
    table.letter[c] = 0;
  }
  const std::pair<char, char> shorts[] = {{'"', '"'}, {'\\', '\\'}, {'\n', 'n'}, {'\r', 'r'},
                                          {'\t', 't'}, {'\b', 'b'}, {'\f', 'f'}};
  for (auto [c, letter] : shorts) {
    table.kind[static_cast<unsigned char>(c)] = kShort;
    table.letter[static_cast<unsigned char>(c)] = letter;
  }
  return table;
}

constexpr ByteTable kBytes = make_byte_table();
constexpr std::size_t kWidth[] = {1, 2, 6, 1};

/// write_string for text that is not all UTF-8: each bad byte becomes U+FFFD.
void write_string_repairing(std::string& out, std::string_view text) {
  out += '"';
  std::size_t run_start = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(text[i]);
    if (c >= 0x80) {
      // Not UTF-8 (a file name, a program's output): U+FFFD, so that what is written parses, and
      // reads back to the same text.
      std::size_t next = i;
      bool valid = true;
      (void)next_code_point(text, next, &valid);
      if (valid) {
        i = next - 1;
        continue;
      }
      out.append(text.data() + run_start, i - run_start);
      out += "\xEF\xBF\xBD";
      run_start = i + 1;
      continue;
    }
    if (c >= 0x20 && c != '"' && c != '\\') continue;
    out.append(text.data() + run_start, i - run_start);
    run_start = i + 1;
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      default:
        out += "\\u00";
        out += kHex[c >> 4];
        out += kHex[c & 0xF];
    }
  }
  out.append(text.data() + run_start, text.size() - run_start);
  out += '"';
}

}  // namespace

// Two passes: measure (checking any UTF-8), then write into the string grown once. The text block
// of every MCP reply is a whole envelope written through here, a quote every few bytes.
void write_string(std::string& out, std::string_view text) {
  std::size_t width = 2;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const ByteKind kind = kBytes.kind[static_cast<unsigned char>(text[i])];
    if (kind == kHigh) {
      std::size_t next = i;
      bool valid = true;
      (void)next_code_point(text, next, &valid);
      if (!valid) return write_string_repairing(out, text);
      width += next - i;
      i = next - 1;
      continue;
    }
    width += kWidth[kind];
  }
  const std::size_t at = out.size();
  out.resize(at + width);  // not resize_and_overwrite: libstdc++ 12's sets a wrong length when it grows
  char* p = out.data() + at;
  *p++ = '"';
  if (width == text.size() + 2) {
    std::memcpy(p, text.data(), text.size());
    p += text.size();
  } else {
    for (char ch : text) {
      const auto c = static_cast<unsigned char>(ch);
      switch (kBytes.kind[c]) {
        case kShort:
          *p++ = '\\';
          *p++ = kBytes.letter[c];
          break;
        case kUnicode:
          std::memcpy(p, "\\u00", 4);
          p[4] = kHex[c >> 4];
          p[5] = kHex[c & 0xF];
          p += 6;
          break;
        default:
          *p++ = ch;
      }
    }
  }
  *p = '"';
}

void write_double(std::string& out, double value) {
  if (!std::isfinite(value)) {
    out += "null";  // JSON has no NaN or infinity
    return;
  }
  // Negative zero is written "-0.0": "-0" reads back as the integer 0, and a value hashed as it
  // was written (the audit chain) must read back to the same text.
  if (value == 0 && std::signbit(value)) {
    out += "-0.0";
    return;
  }
  char buffer[32];
  auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, value);
  out.append(buffer, end);
  // The shortest form of a large integral double has no point or exponent
  // (18446744073709552000): read back, it would be an integer beyond 64 bits, which no parser
  // represents. ".0" keeps it a double.
  if (std::fabs(value) >= 9.2e18 && std::string_view(buffer, static_cast<std::size_t>(end - buffer))
                                            .find_first_of(".eE") == std::string_view::npos)
    out += ".0";
}

void Value::dump_to(std::string& out) const {
  switch (type()) {
    case Type::Null: out += "null"; break;
    case Type::Bool: out += as_bool() ? "true" : "false"; break;
    case Type::Int: out += std::to_string(as_int()); break;
    case Type::Double: write_double(out, std::get<double>(data_)); break;
    case Type::String: write_string(out, as_string()); break;
    case Type::Array: {
      out += '[';
      bool first = true;
      for (const auto& item : as_array()) {
        if (!first) out += ',';
        first = false;
        item.dump_to(out);
      }
      out += ']';
      break;
    }
    case Type::Object: {
      out += '{';
      bool first = true;
      for (const auto& [key, item] : as_object()) {
        if (!first) out += ',';
        first = false;
        write_string(out, key);
        out += ':';
        item.dump_to(out);
      }
      out += '}';
      break;
    }
  }
}

std::string Value::dump() const {
  std::string out;
  dump_to(out);
  return out;
}

namespace {

void pretty_to(const Value& value, std::string& out, int depth) {
  auto newline = [&](int d) {
    out += '\n';
    out.append(static_cast<std::size_t>(d) * 2, ' ');
  };
  if (value.is_array() && !value.empty()) {
    out += '[';
    bool first = true;
    for (const auto& item : value.as_array()) {
      if (!first) out += ',';
      first = false;
      newline(depth + 1);
      pretty_to(item, out, depth + 1);
    }
    newline(depth);
    out += ']';
  } else if (value.is_object() && !value.empty()) {
    out += '{';
    bool first = true;
    for (const auto& [key, item] : value.as_object()) {
      if (!first) out += ',';
      first = false;
      newline(depth + 1);
      write_string(out, key);
      out += ": ";
      pretty_to(item, out, depth + 1);
    }
    newline(depth);
    out += '}';
  } else {
    value.dump_to(out);
  }
}

}  // namespace

std::string Value::dump_pretty() const {
  std::string out;
  pretty_to(*this, out, 0);
  return out;
}

bool contains_subset(const Value& whole, const Value& subset) {
  if (subset.is_object()) {
    if (!whole.is_object()) return false;
    for (const auto& [key, expected] : subset.as_object()) {
      const Value* actual = whole.find(key);
      if (!actual || !contains_subset(*actual, expected)) return false;
    }
    return true;
  }
  if (subset.is_array()) {
    if (!whole.is_array() || whole.size() != subset.size()) return false;
    for (std::size_t i = 0; i < subset.size(); ++i)
      if (!contains_subset(whole.as_array()[i], subset.as_array()[i])) return false;
    return true;
  }
  if (subset.is_number() && whole.is_number()) return subset.as_double() == whole.as_double();
  return whole == subset;
}

}  // namespace ct::json
