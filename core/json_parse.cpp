// The only translation unit that includes simdjson.
#define SIMDJSON_EXCEPTIONS 0
#include "core/json_parse.h"

#include <simdjson.h>

#include <unordered_map>

#include "core/text.h"

namespace ct::json {
namespace {

/// Turns simdjson's DOM into owned values, refusing documents beyond the limits.
class Converter {
 public:
  /// Empty when the document was converted; else why not.
  const std::string& error() const { return error_; }

  Value convert(simdjson::dom::element element, int depth) {
    using simdjson::dom::element_type;
    switch (element.type()) {
      case element_type::ARRAY: {
        if (!enter(depth)) return Value();
        // get() into a local: `for (x : element.get_array().value_unsafe())` iterated a reference
        // into a temporary that was already destroyed (GCC 12 -Wdangling-pointer at -O2).
        simdjson::dom::array elements;
        if (element.get_array().get(elements)) return Value::array();
        Value::Array items;
        items.reserve(elements.size());
        for (simdjson::dom::element child : elements) {
          items.push_back(convert(child, depth + 1));
          if (!error_.empty()) return Value();
        }
        return Value(std::move(items));
      }
      case element_type::OBJECT: {
        if (!enter(depth)) return Value();
        simdjson::dom::object members;
        if (element.get_object().get(members)) return Value::object();
        if (members.size() > kMaxMembers) {
          error_ = "an object has more than " + std::to_string(kMaxMembers) + " members";
          return Value();
        }
        Value::Object out;
        out.reserve(members.size());
        // Value::set would scan the members for every key (quadratic in their number); an index
        // finds repeats instead. A repeated key keeps its first position and its last value.
        std::unordered_map<std::string_view, std::size_t> index;
        const bool small = members.size() <= 16;
        for (auto field : members) {
          Value value = convert(field.value, depth + 1);
          if (!error_.empty()) return Value();
          std::size_t found = out.size();
          if (small) {
            for (std::size_t i = 0; i < out.size(); ++i)
              if (out[i].first == field.key) found = i;
          } else if (auto it = index.find(field.key); it != index.end()) {
            found = it->second;
          } else {
            index.emplace(field.key, out.size());
          }
          if (found < out.size()) {
            out[found].second = std::move(value);
          } else {
            out.emplace_back(std::string(field.key), std::move(value));
          }
        }
        return Value(std::move(out));
      }
      case element_type::INT64: return Value(element.get_int64().value_unsafe());
      case element_type::UINT64: return Value(static_cast<double>(element.get_uint64().value_unsafe()));
      case element_type::DOUBLE: return Value(element.get_double().value_unsafe());
      case element_type::STRING: return Value(element.get_string().value_unsafe());
      case element_type::BOOL: return Value(element.get_bool().value_unsafe());
      case element_type::NULL_VALUE: return Value();
    }
    return Value();
  }

 private:
  bool enter(int depth) {
    if (depth < kMaxDepth) return true;
    error_ = "nesting deeper than " + std::to_string(kMaxDepth) + " levels";
    return false;
  }

  std::string error_;
};

// ---- outline: a syntax-only scanner ------------------------------------------------------------

class Scanner {
 public:
  explicit Scanner(std::string_view text) : text_(text) {}

  Outline run() {
    Outline out;
    skip_space();
    if (!at_end()) out.top = type_at(pos_);
    if (out.top == Type::Object) {
      if (!object(0, &out.members)) return Outline{};
    } else if (out.top == Type::Array) {
      if (!array(0, &out.elements)) return Outline{};
    } else if (!value(0)) {
      return Outline{};
    }
    skip_space();
    if (!at_end()) return Outline{};
    out.well_formed = true;
    return out;
  }

 private:
  bool at_end() const { return pos_ >= text_.size(); }
  char peek() const { return text_[pos_]; }

  Type type_at(std::size_t at) const {
    switch (text_[at]) {
      case '{': return Type::Object;
      case '[': return Type::Array;
      case '"': return Type::String;
      case 't':
      case 'f': return Type::Bool;
      case 'n': return Type::Null;
      default: return Type::Double;
    }
  }

  void skip_space() {
    while (!at_end() && (peek() == ' ' || peek() == '\t' || peek() == '\n' || peek() == '\r')) ++pos_;
  }

  bool literal(std::string_view word) {
    if (text_.substr(pos_, word.size()) != word) return false;
    pos_ += word.size();
    return true;
  }

  static bool is_hex(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }
  static bool is_digit(char c) { return c >= '0' && c <= '9'; }

  /// A string token; `escaped` tells whether it held a backslash.
  bool string(bool* escaped = nullptr) {
    if (at_end() || peek() != '"') return false;
    ++pos_;
    while (!at_end()) {
      auto c = static_cast<unsigned char>(peek());
      if (c == '"') {
        ++pos_;
        return true;
      }
      if (c < 0x20) return false;
      if (c == '\\') {
        if (escaped) *escaped = true;
        ++pos_;
        if (at_end()) return false;
        char e = peek();
        if (e == 'u') {
          for (int i = 1; i <= 4; ++i)
            if (pos_ + static_cast<std::size_t>(i) >= text_.size() || !is_hex(text_[pos_ + static_cast<std::size_t>(i)]))
              return false;
          pos_ += 5;
          continue;
        }
        if (e != '"' && e != '\\' && e != '/' && e != 'b' && e != 'f' && e != 'n' && e != 'r' && e != 't') return false;
      }
      ++pos_;
    }
    return false;
  }

  bool number() {
    if (!at_end() && peek() == '-') ++pos_;
    if (at_end()) return false;
    if (peek() == '0') {
      ++pos_;
    } else if (is_digit(peek())) {
      while (!at_end() && is_digit(peek())) ++pos_;
    } else {
      return false;
    }
    if (!at_end() && peek() == '.') {
      ++pos_;
      if (at_end() || !is_digit(peek())) return false;
      while (!at_end() && is_digit(peek())) ++pos_;
    }
    if (!at_end() && (peek() == 'e' || peek() == 'E')) {
      ++pos_;
      if (!at_end() && (peek() == '+' || peek() == '-')) ++pos_;
      if (at_end() || !is_digit(peek())) return false;
      while (!at_end() && is_digit(peek())) ++pos_;
    }
    return true;
  }

  bool value(int depth) {
    if (at_end()) return false;
    switch (peek()) {
      case '{': return object(depth, nullptr);
      case '[': return array(depth, nullptr);
      case '"': return string();
      case 't': return literal("true");
      case 'f': return literal("false");
      case 'n': return literal("null");
      default: return number();
    }
  }

  bool object(int depth, std::vector<std::pair<std::string, std::string_view>>* members) {
    if (depth >= kMaxOutlineDepth) return false;
    ++pos_;  // '{'
    skip_space();
    if (!at_end() && peek() == '}') {
      ++pos_;
      return true;
    }
    while (true) {
      skip_space();
      std::size_t key_start = pos_;
      bool escaped = false;
      if (!string(&escaped)) return false;
      std::string_view raw_key = text_.substr(key_start + 1, pos_ - key_start - 2);
      std::string key = escaped ? unescape(raw_key) : std::string(raw_key);
      skip_space();
      if (at_end() || peek() != ':') return false;
      ++pos_;
      skip_space();
      std::size_t value_start = pos_;
      if (!value(depth + 1)) return false;
      if (members) members->emplace_back(std::move(key), text_.substr(value_start, pos_ - value_start));
      skip_space();
      if (at_end()) return false;
      if (peek() == ',') {
        ++pos_;
        continue;
      }
      if (peek() != '}') return false;
      ++pos_;
      return true;
    }
  }

  bool array(int depth, std::vector<std::string_view>* elements) {
    if (depth >= kMaxOutlineDepth) return false;
    ++pos_;  // '['
    skip_space();
    if (!at_end() && peek() == ']') {
      ++pos_;
      return true;
    }
    while (true) {
      skip_space();
      std::size_t start = pos_;
      if (!value(depth + 1)) return false;
      if (elements) elements->push_back(text_.substr(start, pos_ - start));
      skip_space();
      if (at_end()) return false;
      if (peek() == ',') {
        ++pos_;
        continue;
      }
      if (peek() != ']') return false;
      ++pos_;
      return true;
    }
  }

  /// The text of a string token's content (escapes decoded; a lone surrogate becomes U+FFFD).
  static std::string unescape(std::string_view raw) {
    auto hex4 = [&](std::size_t at) {
      unsigned value = 0;
      for (std::size_t k = at; k < at + 4; ++k) {
        char c = raw[k];
        value = value * 16 + static_cast<unsigned>(c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10);
      }
      return value;
    };
    auto append_utf8 = [](std::string& out, unsigned cp) {
      if (cp < 0x80) {
        out += static_cast<char>(cp);
      } else if (cp < 0x800) {
        out += static_cast<char>(0xC0 | (cp >> 6));
        out += static_cast<char>(0x80 | (cp & 0x3F));
      } else if (cp < 0x10000) {
        out += static_cast<char>(0xE0 | (cp >> 12));
        out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (cp & 0x3F));
      } else {
        out += static_cast<char>(0xF0 | (cp >> 18));
        out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
        out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (cp & 0x3F));
      }
    };
    std::string out;
    for (std::size_t i = 0; i < raw.size(); ++i) {
      if (raw[i] != '\\') {
        out += raw[i];
        continue;
      }
      char e = raw[++i];  // the scanner checked every escape
      switch (e) {
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'n': out += '\n'; break;
        case 'r': out += '\r'; break;
        case 't': out += '\t'; break;
        case 'u': {
          unsigned cp = hex4(i + 1);
          i += 4;
          if (cp >= 0xD800 && cp <= 0xDBFF && i + 6 < raw.size() && raw[i + 1] == '\\' && raw[i + 2] == 'u') {
            unsigned low = hex4(i + 3);
            if (low >= 0xDC00 && low <= 0xDFFF) {
              cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
              i += 6;
            }
          }
          if (cp >= 0xD800 && cp <= 0xDFFF) cp = 0xFFFD;
          append_utf8(out, cp);
          break;
        }
        default: out += e;  // " \ /
      }
    }
    return out;
  }

  std::string_view text_;
  std::size_t pos_ = 0;
};

}  // namespace

Result<Value> parse(std::string_view text) {
  // One parser per thread: simdjson parsers are not thread-safe but are cheap to reuse.
  thread_local simdjson::dom::parser parser;
  simdjson::dom::element root;
  auto error = parser.parse(text.data(), text.size()).get(root);
  if (error) {
    return fail(ErrorCode::InvalidInput,
                std::string("invalid JSON: ") + simdjson::error_message(error));
  }
  Converter converter;
  Value value = converter.convert(root, 0);
  if (!converter.error().empty()) return fail(ErrorCode::InvalidInput, "invalid JSON: " + converter.error());
  return value;
}

std::string_view Outline::member(std::string_view key) const {
  // The last one, as parse() keeps the last value of a repeated key.
  for (auto it = members.rbegin(); it != members.rend(); ++it)
    if (it->first == key) return it->second;
  return {};
}

Outline outline(std::string_view text) {
  if (!valid_utf8(text)) return Outline{};
  return Scanner(text).run();
}

std::optional<Value> parse_lines(std::string_view text) {
  Value items = Value::array();
  for (auto line : split_lines(text)) {
    if (trim(line).empty()) continue;
    auto item = parse(line);
    if (!item) return std::nullopt;
    items.push_back(std::move(*item));
  }
  if (items.size() < 2) return std::nullopt;
  return items;
}

}  // namespace ct::json

namespace ct {
bool valid_utf8(std::string_view text) { return simdjson::validate_utf8(text.data(), text.size()); }
}  // namespace ct
