#include "engines/adapters/host_config.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstddef>
#include <cstring>
#include <optional>

#include "core/atomic_file.h"
#include "core/file_read.h"
#include "core/json_parse.h"

namespace ct::host_config {
namespace {

std::size_t line_of(std::string_view text, std::size_t pos) {
  pos = std::min(pos, text.size());
  return 1 + static_cast<std::size_t>(std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(pos), '\n'));
}

Error invalid(std::string_view label, std::size_t line, std::string problem) {
  Error error(ErrorCode::Validation, std::string(label) + ":" + std::to_string(line) + ": " + std::move(problem));
  error.fix = "correct " + std::string(label) + " (or move it away), then run again; nothing was written";
  return std::move(error).with_detail("file", std::string(label)).with_detail("line", static_cast<std::int64_t>(line));
}

std::string repeat(std::string_view unit, int times) {
  std::string out;
  for (int i = 0; i < times; ++i) out += unit;
  return out;
}

std::size_t line_start(std::string_view text, std::size_t pos) {
  if (pos == 0) return 0;
  std::size_t nl = text.rfind('\n', pos - 1);
  return nl == std::string_view::npos ? 0 : nl + 1;
}

bool only_space_before(std::string_view text, std::size_t pos) {
  for (std::size_t i = line_start(text, pos); i < pos; ++i)
    if (text[i] != ' ' && text[i] != '\t') return false;
  return true;
}

/// With CRLF files, the lines we add end the same way.
std::string with_eol(std::string text, bool crlf) {
  if (!crlf) return text;
  std::string out;
  for (char c : text) {
    if (c == '\n') out += '\r';
    out += c;
  }
  return out;
}

constexpr std::string_view kBom = "\xEF\xBB\xBF";

/// `edit` of the text after a UTF-8 byte order mark, which stays first: not JSON or TOML, but
/// editors write it and hosts accept it, so it is kept, not parsed.
Result<Edit> keeping_bom(std::string_view text, const std::function<Result<Edit>(std::string_view)>& edit) {
  const bool bom = text.starts_with(kBom);
  CT_TRY_ASSIGN(Edit done, edit(bom ? text.substr(kBom.size()) : text));
  if (bom) done.text.insert(0, kBom);
  return done;
}

/// Whether `token` is a number as JSON's grammar writes one, whatever its size.
bool is_json_number(std::string_view token) {
  std::size_t i = 0;
  auto digits = [&] {
    std::size_t start = i;
    while (i < token.size() && std::isdigit(static_cast<unsigned char>(token[i]))) ++i;
    return i > start;
  };
  if (i < token.size() && token[i] == '-') ++i;
  if (i < token.size() && token[i] == '0') {
    ++i;
  } else if (!digits()) {
    return false;
  }
  if (i < token.size() && token[i] == '.') {
    ++i;
    if (!digits()) return false;
  }
  if (i < token.size() && (token[i] == 'e' || token[i] == 'E')) {
    ++i;
    if (i < token.size() && (token[i] == '+' || token[i] == '-')) ++i;
    if (!digits()) return false;
  }
  return i == token.size();
}

// ---- JSONC ---------------------------------------------------------------------------------

/// A value of the document with where its text is. Objects keep their members (in order) as
/// children, with the position of the closing brace and whether a comma follows the last member.
struct Node {
  std::string key;            // a member's key (children of an object)
  std::size_t key_begin = 0;  // where the member's key starts
  json::Value value;
  std::size_t begin = 0;
  std::size_t end = 0;
  std::vector<Node> children;  // object members
  std::size_t close = 0;       // '}' of an object
  bool trailing_comma = false;
};

class JsoncReader {
 public:
  JsoncReader(std::string_view text, std::string_view label) : text_(text), label_(label) {}

  /// The document's value; nullopt for a text holding only whitespace and comments.
  Result<std::optional<Node>> document() {
    CT_TRY(skip());
    if (pos_ == text_.size()) return std::optional<Node>();
    CT_TRY_ASSIGN(Node root, value(0));
    CT_TRY(skip());
    if (pos_ != text_.size()) return fail(here("unexpected text after the end of the document"));
    return std::optional<Node>(std::move(root));
  }

 private:
  Error here(std::string problem) const { return invalid(label_, line_of(text_, pos_), std::move(problem)); }

  Result<void> skip() {
    while (pos_ < text_.size()) {
      char c = text_[pos_];
      if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
        ++pos_;
      } else if (c == '/' && pos_ + 1 < text_.size() && text_[pos_ + 1] == '/') {
        std::size_t nl = text_.find('\n', pos_);
        pos_ = nl == std::string_view::npos ? text_.size() : nl;
      } else if (c == '/' && pos_ + 1 < text_.size() && text_[pos_ + 1] == '*') {
        std::size_t close = text_.find("*/", pos_ + 2);
        if (close == std::string_view::npos) return fail(here("unterminated /* comment"));
        pos_ = close + 2;
      } else {
        break;
      }
    }
    return {};
  }

  Result<Node> value(int depth) {
    if (depth > 64) return fail(here("nested too deeply"));
    if (pos_ >= text_.size()) return fail(here("unexpected end of file"));
    char c = text_[pos_];
    if (c == '{') return object(depth);
    if (c == '[') return array(depth);
    Node node;
    node.begin = pos_;
    if (c == '"') {
      CT_TRY_ASSIGN(node.value, string());
    } else {
      std::size_t start = pos_;
      while (pos_ < text_.size() && (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '-' ||
                                     text_[pos_] == '+' || text_[pos_] == '.'))
        ++pos_;
      std::string_view token = text_.substr(start, pos_ - start);
      auto parsed = token.empty() ? Result<json::Value>(fail(ErrorCode::InvalidInput, "")) : json::parse(token);
      if (!parsed && is_json_number(token)) {
        // Valid JSON beyond what a double or a 64-bit integer holds (1E400, a 30-digit id): its
        // text stays as it is in the file; the value stands in only for comparisons.
        parsed = json::Value(std::string(token));
      }
      if (!parsed || parsed->is_array() || parsed->is_object()) {
        pos_ = start;
        return fail(here(token.empty() ? "unexpected character '" + std::string(1, c) + "'"
                                       : "invalid value '" + std::string(token) + "'"));
      }
      node.value = std::move(*parsed);
    }
    node.end = pos_;
    return node;
  }

  Result<json::Value> string() {
    std::size_t start = pos_++;
    while (pos_ < text_.size() && text_[pos_] != '"') {
      if (text_[pos_] == '\n') return fail(here("unterminated string"));
      pos_ += text_[pos_] == '\\' ? 2 : 1;
    }
    if (pos_ >= text_.size()) return fail(here("unterminated string"));
    ++pos_;
    auto parsed = json::parse(text_.substr(start, pos_ - start));
    if (!parsed) {
      pos_ = start;
      return fail(here("invalid string: " + parsed.error().message));
    }
    return std::move(*parsed);
  }

  Result<Node> object(int depth) {
    Node node;
    node.begin = pos_++;
    node.value = json::Value::object();
    while (true) {
      CT_TRY(skip());
      if (pos_ >= text_.size()) return fail(here("unterminated object (a } is missing)"));
      if (text_[pos_] == '}') break;
      if (text_[pos_] != '"') return fail(here("expected a member name in double quotes or }"));
      std::size_t key_begin = pos_;
      CT_TRY_ASSIGN(json::Value key, string());
      CT_TRY(skip());
      if (pos_ >= text_.size() || text_[pos_] != ':') return fail(here("expected : after the member name"));
      ++pos_;
      CT_TRY(skip());
      CT_TRY_ASSIGN(Node child, value(depth + 1));
      child.key = key.as_string();
      child.key_begin = key_begin;
      node.value.set(child.key, child.value);
      node.children.push_back(std::move(child));
      CT_TRY(skip());
      if (pos_ < text_.size() && text_[pos_] == ',') {
        ++pos_;
        CT_TRY(skip());
        if (pos_ < text_.size() && text_[pos_] == '}') node.trailing_comma = true;
      } else if (pos_ >= text_.size() || text_[pos_] != '}') {
        return fail(here("expected , or } after a member"));
      }
    }
    node.close = pos_++;
    node.end = pos_;
    return node;
  }

  Result<Node> array(int depth) {
    Node node;
    node.begin = pos_++;
    node.value = json::Value::array();
    while (true) {
      CT_TRY(skip());
      if (pos_ >= text_.size()) return fail(here("unterminated array (a ] is missing)"));
      if (text_[pos_] == ']') break;
      CT_TRY_ASSIGN(Node item, value(depth + 1));
      node.value.push_back(std::move(item.value));
      CT_TRY(skip());
      if (pos_ < text_.size() && text_[pos_] == ',') {
        ++pos_;
      } else if (pos_ >= text_.size() || text_[pos_] != ']') {
        return fail(here("expected , or ] after an array item"));
      }
    }
    node.close = pos_++;
    node.end = pos_;
    return node;
  }

  std::string_view text_;
  std::string_view label_;
  std::size_t pos_ = 0;
};

bool is_scalar(const json::Value& value) { return !value.is_array() && !value.is_object(); }

/// Indented JSON with the file's own indentation unit; arrays of scalars on one line, as people
/// write `"args": ["mcp"]`.
std::string render(const json::Value& value, std::string_view unit, const std::string& indent) {
  if (value.is_object()) {
    if (value.empty()) return "{}";
    std::string out = "{\n";
    bool first = true;
    for (const auto& [key, member] : value.as_object()) {
      if (!first) out += ",\n";
      first = false;
      out += indent + std::string(unit);
      json::write_string(out, key);
      out += ": " + render(member, unit, indent + std::string(unit));
    }
    return out + "\n" + indent + "}";
  }
  if (value.is_array()) {
    const auto& items = value.as_array();
    if (std::all_of(items.begin(), items.end(), is_scalar)) {
      std::string out = "[";
      for (std::size_t i = 0; i < items.size(); ++i) out += (i ? ", " : "") + items[i].dump();
      return out + "]";
    }
    std::string out = "[\n";
    for (std::size_t i = 0; i < items.size(); ++i)
      out += (i ? ",\n" : "") + indent + std::string(unit) + render(items[i], unit, indent + std::string(unit));
    return out + "\n" + indent + "]";
  }
  return value.dump();
}

/// The file's indentation unit: the whitespace before the first member of the top-level object
/// when it starts a line; two spaces otherwise.
std::string indent_unit(std::string_view text, const Node& root) {
  if (!root.children.empty()) {
    std::size_t key = root.children.front().key_begin;
    if (only_space_before(text, key) && key > line_start(text, key))
      return std::string(text.substr(line_start(text, key), key - line_start(text, key)));
  }
  return "  ";
}

/// `text` with member `key: value` added as the last member of `object` (at nesting `depth`).
std::string insert_member(std::string_view text, const Node& object, int depth, std::string_view unit,
                          std::string_view key, const json::Value& value, bool crlf) {
  const std::string indent = repeat(unit, depth + 1);
  std::string member = indent;
  json::write_string(member, key);
  member += ": " + render(value, unit, indent);
  if (object.trailing_comma) member += ',';
  std::string out(text);
  std::size_t at;
  std::string insert;
  if (only_space_before(text, object.close)) {
    at = line_start(text, object.close);  // the new member goes on its own line before the brace
    insert = member + "\n";
  } else {
    at = object.close;
    insert = "\n" + member + "\n" + repeat(unit, depth);
  }
  out.insert(at, with_eol(std::move(insert), crlf));
  // The comma right after the last value (before any comment that follows it on its line).
  if (!object.children.empty() && !object.trailing_comma) out.insert(object.children.back().end, ",");
  return out;
}

// ---- TOML ----------------------------------------------------------------------------------

/// One statement of a TOML file: a table header or a key/value pair, over one or more lines.
struct TomlStatement {
  std::size_t begin = 0;  // start of its first line
  std::size_t end = 0;    // end of its last line (before the newline)
  std::size_t next = 0;   // after the newline of its last line
  std::size_t line = 0;
  bool header = false;
  bool array_table = false;
  std::vector<std::string> table;  // the table it is in (for a header: the table it opens)
  std::vector<std::string> key;    // dotted key parts
  std::string value;               // raw value text (after '=')
};

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

/// Where `what` first occurs in `line` from `from` on, outside quoted keys ("a]b", 'c=d', with
/// basic strings' escapes); npos when it does not.
std::size_t find_unquoted(std::string_view line, std::string_view what, std::size_t from) {
  char quote = 0;
  for (std::size_t i = from; i < line.size(); ++i) {
    if (quote) {
      if (quote == '"' && line[i] == '\\') ++i;
      else if (line[i] == quote) quote = 0;
    } else if (line[i] == '"' || line[i] == '\'') {
      quote = line[i];
    } else if (line.substr(i, what.size()) == what) {
      return i;
    }
  }
  return std::string_view::npos;
}

/// Splits a dotted key (`a."b.c".d`) into its parts; nullopt when it is not a valid key.
std::optional<std::vector<std::string>> split_key(std::string_view text) {
  std::vector<std::string> parts;
  std::size_t i = 0;
  while (true) {
    while (i < text.size() && (text[i] == ' ' || text[i] == '\t')) ++i;
    if (i >= text.size()) return std::nullopt;
    std::string part;
    if (text[i] == '"' || text[i] == '\'') {
      char quote = text[i++];
      while (i < text.size() && text[i] != quote) {
        if (quote == '"' && text[i] == '\\' && i + 1 < text.size()) ++i;
        part += text[i++];
      }
      if (i >= text.size()) return std::nullopt;
      ++i;
    } else {
      while (i < text.size() && (std::isalnum(static_cast<unsigned char>(text[i])) || text[i] == '_' || text[i] == '-'))
        part += text[i++];
      if (part.empty()) return std::nullopt;
    }
    parts.push_back(std::move(part));
    while (i < text.size() && (text[i] == ' ' || text[i] == '\t')) ++i;
    if (i >= text.size()) return parts;
    if (text[i] != '.') return std::nullopt;
    ++i;
  }
}

/// Reads the statements of a TOML text: headers, and key/value pairs whose values may continue
/// over lines (arrays, inline tables, multi-line strings). A light syntax check, not a full TOML
/// parser: every line must be blank, a comment, a header or `key = value`.
Result<std::vector<TomlStatement>> read_toml(std::string_view text, std::string_view label) {
  std::vector<TomlStatement> statements;
  std::vector<std::string> table;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t nl = text.find('\n', pos);
    std::size_t end = nl == std::string_view::npos ? text.size() : nl;
    std::size_t next = nl == std::string_view::npos ? text.size() : nl + 1;
    std::string_view line = trim(text.substr(pos, end - pos));
    const std::size_t number = line_of(text, pos);
    if (line.empty() || line.front() == '#') {
      pos = next;
      continue;
    }
    TomlStatement statement;
    statement.begin = pos;
    statement.line = number;
    if (line.front() == '[') {
      bool array = line.starts_with("[[");
      std::string_view close = array ? "]]" : "]";
      std::size_t stop = find_unquoted(line, close, array ? 2 : 1);
      if (stop == std::string_view::npos) return fail(invalid(label, number, "a table header without its closing ]"));
      std::string_view rest = trim(line.substr(stop + close.size()));
      if (!rest.empty() && rest.front() != '#') return fail(invalid(label, number, "unexpected text after a table header"));
      auto parts = split_key(line.substr(array ? 2 : 1, stop - (array ? 2 : 1)));
      if (!parts) return fail(invalid(label, number, "invalid table name"));
      table = *parts;
      statement.header = true;
      statement.array_table = array;
      statement.table = table;
      statement.end = end;
      statement.next = next;
      statements.push_back(std::move(statement));
      pos = next;
      continue;
    }
    // key = value: find '=' outside quotes.
    std::size_t eq = find_unquoted(line, "=", 0);
    if (eq == std::string_view::npos) return fail(invalid(label, number, "expected key = value, a [table] or a # comment"));
    auto key = split_key(line.substr(0, eq));
    if (!key) return fail(invalid(label, number, "invalid key '" + std::string(trim(line.substr(0, eq))) + "'"));
    // The value runs until brackets close and strings end, possibly over several lines.
    std::size_t value_begin = static_cast<std::size_t>(line.data() - text.data()) + eq + 1;
    std::size_t i = value_begin;
    int depth = 0;
    std::string_view in_string;  // the delimiter of an open string
    bool any = false;
    while (true) {
      if (i >= text.size()) {
        if (depth > 0 || !in_string.empty()) return fail(invalid(label, number, "a value that never ends (an unclosed [, { or string)"));
        break;
      }
      char c = text[i];
      if (!in_string.empty()) {
        if (c == '\\' && (in_string == "\"" || in_string == "\"\"\"")) {
          i += 2;
          continue;
        }
        if (text.substr(i, in_string.size()) == in_string) {
          i += in_string.size();
          in_string = {};
          continue;
        }
        if (c == '\n' && in_string.size() == 1) return fail(invalid(label, line_of(text, i), "unterminated string"));
        ++i;
        continue;
      }
      if (c == '\n') {
        if (depth == 0) break;
        ++i;
        continue;
      }
      if (c == '#') {
        std::size_t stop = text.find('\n', i);
        i = stop == std::string_view::npos ? text.size() : stop;
        continue;
      }
      if (c != ' ' && c != '\t' && c != '\r') any = true;
      if (text.substr(i, 3) == "\"\"\"" || text.substr(i, 3) == "'''") {
        in_string = text.substr(i, 3);
        i += 3;
      } else if (c == '"' || c == '\'') {
        in_string = text.substr(i, 1);
        ++i;
      } else {
        if (c == '[' || c == '{') ++depth;
        if (c == ']' || c == '}') --depth;
        if (depth < 0) return fail(invalid(label, line_of(text, i), "unbalanced ] or }"));
        ++i;
      }
    }
    if (!any) return fail(invalid(label, number, "a key without a value"));
    // The statement ends before a CRLF line's \r: what replaces it keeps the line's own ending.
    statement.end = i > value_begin && text[i - 1] == '\r' && i < text.size() ? i - 1 : i;
    statement.next = i < text.size() ? i + 1 : i;
    statement.table = table;
    statement.key = *key;
    statement.value = std::string(text.substr(value_begin, statement.end - value_begin));
    statements.push_back(std::move(statement));
    pos = statements.back().next;
  }
  return statements;
}

/// A TOML value without comments and whitespace outside strings, and without a trailing comma
/// before a closing bracket: two spellings of the same value compare equal.
std::string normalized(std::string_view value) {
  std::string out;
  char quote = 0;
  for (std::size_t i = 0; i < value.size(); ++i) {
    char c = value[i];
    if (quote) {
      out += c;
      if (c == '\\' && quote == '"' && i + 1 < value.size()) out += value[++i];
      else if (c == quote) quote = 0;
      continue;
    }
    if (c == '"' || c == '\'') quote = c;
    if (c == '#') {
      while (i < value.size() && value[i] != '\n') ++i;
      continue;
    }
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') continue;
    if ((c == ']' || c == '}') && !out.empty() && out.back() == ',') out.pop_back();
    out += c;
  }
  return out;
}

std::string table_name(std::string_view table) { return std::string(table); }

std::string join_key(const std::vector<std::string>& parts) {
  std::string out;
  for (const auto& part : parts) {
    if (!out.empty()) out += '.';
    bool bare = !part.empty() && std::all_of(part.begin(), part.end(), [](char c) {
      return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-';
    });
    out += bare ? part : toml_string(part);
  }
  return out;
}

bool starts_with(const std::vector<std::string>& path, const std::vector<std::string>& prefix) {
  return path.size() >= prefix.size() && std::equal(prefix.begin(), prefix.end(), path.begin());
}

/// The lines of `text`, each with its newline (the last one may have none).
std::vector<std::string> split_lines(std::string_view text) {
  std::vector<std::string> lines;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t nl = text.find('\n', pos);
    std::size_t end = nl == std::string_view::npos ? text.size() : nl + 1;
    lines.emplace_back(text.substr(pos, end - pos));
    pos = end;
  }
  return lines;
}

}  // namespace

namespace {

bool is_owned(std::span<const std::string_view> owned, std::string_view key) {
  return std::find(owned.begin(), owned.end(), key) != owned.end();
}

/// The indentation of the line `pos` is on when only whitespace precedes it there.
std::optional<std::string> indent_at(std::string_view text, std::size_t pos) {
  if (!only_space_before(text, pos)) return std::nullopt;
  return std::string(text.substr(line_start(text, pos), pos - line_start(text, pos)));
}

/// The existing entry `object` merged with `entry`: the members `entry` names get its values,
/// other members named in `owned` go, every other member stays as written (the user's env, cwd,
/// timeout, disabled …); members added go after the last one kept. nullopt: nothing changes.
std::optional<std::string> merge_entry(std::string_view text, const Node& object, const json::Value& entry,
                                       std::span<const std::string_view> owned, std::string_view unit,
                                       const std::string& entry_indent, bool crlf) {
  const std::vector<Node>& members = object.children;
  std::vector<bool> kept(members.size(), true);
  std::vector<std::optional<std::string>> replaced(members.size());
  bool changed = false;
  for (std::size_t i = 0; i < members.size(); ++i) {
    const json::Value* wanted = entry.find(members[i].key);
    if (wanted) {
      if (members[i].value == *wanted) continue;
      const std::string indent = indent_at(text, members[i].key_begin).value_or(entry_indent + std::string(unit));
      replaced[i] = with_eol(render(*wanted, unit, indent), crlf);
      changed = true;
    } else if (is_owned(owned, members[i].key)) {
      kept[i] = false;
      changed = true;
    }
  }
  std::vector<std::pair<std::string, const json::Value*>> added;
  for (const auto& [key, value] : entry.as_object()) {
    bool present = std::any_of(members.begin(), members.end(), [&](const Node& m) { return m.key == key; });
    if (!present) added.emplace_back(key, &value);
  }
  if (!changed && added.empty()) return std::nullopt;
  std::vector<std::size_t> keep;
  for (std::size_t i = 0; i < members.size(); ++i)
    if (kept[i]) keep.push_back(i);
  if (keep.empty()) return with_eol(render(entry, unit, entry_indent), crlf);  // nothing of the user's to keep

  // The object rebuilt from the file's own pieces: what precedes the first member, each kept
  // member (its value replaced when it changes) followed by the separator that followed it, and
  // what followed the last member (a trailing comma, comments, the closing brace's indentation).
  const std::size_t first = members.front().key_begin;
  const std::string_view lead = text.substr(object.begin + 1, first - object.begin - 1);
  const std::string_view tail = text.substr(members.back().end, object.close - members.back().end);
  const bool multiline = lead.find('\n') != std::string_view::npos;
  const std::string member_indent = indent_at(text, first).value_or(entry_indent + std::string(unit));
  std::string out = "{" + std::string(lead);
  for (std::size_t j = 0; j < keep.size(); ++j) {
    const Node& member = members[keep[j]];
    if (replaced[keep[j]]) {
      out += text.substr(member.key_begin, member.begin - member.key_begin);
      out += *replaced[keep[j]];
    } else {
      out += text.substr(member.key_begin, member.end - member.key_begin);
    }
    if (j + 1 < keep.size()) {
      const std::size_t next = keep[j] + 1;  // the separator up to the next member of the file
      out += text.substr(member.end, members[next].key_begin - member.end);
    }
  }
  for (const auto& [key, value] : added) {
    std::string member = multiline ? "," + with_eol("\n", crlf) + member_indent : ", ";
    json::write_string(member, key);
    member += ": " + with_eol(render(*value, unit, member_indent), crlf);
    out += member;
  }
  out += tail;
  out += "}";
  return out;
}

/// The top-level object of a JSON(C) file; nullopt for one holding only whitespace and comments.
Result<std::optional<Node>> json_root(std::string_view text, std::string_view label) {
  CT_TRY_ASSIGN(std::optional<Node> root, JsoncReader(text, label).document());
  if (root && !root->value.is_object())
    return fail(invalid(label, line_of(text, root->begin), "the file holds a JSON " +
                                                               std::string(json::to_string(root->value.type())) +
                                                               ", not an object"));
  return root;
}

/// An empty (or comment-only) file with `document` written after what was there.
Edit new_json_document(std::string_view text, const json::Value& document) {
  const bool crlf = text.find("\r\n") != std::string_view::npos;
  std::string out(text);
  if (!out.empty() && out.back() != '\n') out += with_eol("\n", crlf);
  out += with_eol(render(document, "  ", "") + "\n", crlf);
  return Edit{std::move(out), true};
}

Result<Edit> set_json_document(std::string_view text, std::string_view servers_key, std::string_view name,
                               const json::Value& entry, std::span<const std::string_view> owned,
                               std::string_view label) {
  CT_TRY_ASSIGN(std::optional<Node> root, json_root(text, label));
  const bool crlf = text.find("\r\n") != std::string_view::npos;
  if (!root) {
    json::Value servers = json::Value::object();
    servers.set(name, entry);
    json::Value document = json::Value::object();
    document.set(servers_key, std::move(servers));
    return new_json_document(text, document);
  }
  const std::string unit = indent_unit(text, *root);
  const Node* servers = nullptr;
  for (const auto& child : root->children)
    if (child.key == servers_key) servers = &child;  // the last one counts, as in JSON parsers
  if (!servers) {
    json::Value members = json::Value::object();
    members.set(name, entry);
    return Edit{insert_member(text, *root, 0, unit, servers_key, members, crlf), true};
  }
  if (!servers->value.is_object())
    return fail(invalid(label, line_of(text, servers->begin), "\"" + std::string(servers_key) + "\" is a " +
                                                                  std::string(json::to_string(servers->value.type())) +
                                                                  ", not an object of servers"));
  const Node* existing = nullptr;
  for (const auto& child : servers->children)
    if (child.key == name) existing = &child;
  if (!existing) return Edit{insert_member(text, *servers, 1, unit, name, entry, crlf), true};
  const std::string indent = indent_at(text, existing->key_begin).value_or(repeat(unit, 2));
  std::optional<std::string> value;
  if (existing->value.is_object() && !existing->children.empty()) {
    value = merge_entry(text, *existing, entry, owned, unit, indent, crlf);
  } else if (existing->value != entry) {
    value = with_eol(render(entry, unit, indent), crlf);  // not an object of members to keep
  }
  if (!value) return Edit{std::string(text), false};
  std::string out(text);
  out.replace(existing->begin, existing->end - existing->begin, *value);
  return Edit{std::move(out), true};
}

}  // namespace

namespace {

Result<Edit> set_json_hook_document(std::string_view text, std::string_view event, const json::Value& entry,
                                    const std::function<bool(const json::Value&)>& is_ours, const json::Value& top,
                                    std::string_view label) {
  CT_TRY_ASSIGN(std::optional<Node> root, json_root(text, label));
  const bool crlf = text.find("\r\n") != std::string_view::npos;
  json::Value wanted = json::Value::array();
  wanted.push_back(entry);
  if (!root) {
    json::Value document = top.is_object() ? top : json::Value::object();
    json::Value hooks = json::Value::object();
    hooks.set(event, std::move(wanted));
    document.set("hooks", std::move(hooks));
    return new_json_document(text, document);
  }
  const std::string unit = indent_unit(text, *root);
  std::string out(text);
  bool changed = false;
  const Node* hooks = nullptr;
  for (const auto& child : root->children)
    if (child.key == "hooks") hooks = &child;
  if (!hooks) {
    json::Value members = json::Value::object();
    members.set(event, std::move(wanted));
    out = insert_member(out, *root, 0, unit, "hooks", members, crlf);
    changed = true;
  } else {
    if (!hooks->value.is_object())
      return fail(invalid(label, line_of(text, hooks->begin), "\"hooks\" is a " +
                                                                  std::string(json::to_string(hooks->value.type())) +
                                                                  ", not an object of events"));
    const Node* existing = nullptr;
    for (const auto& child : hooks->children)
      if (child.key == event) existing = &child;
    if (!existing) {
      out = insert_member(out, *hooks, 1, unit, event, wanted, crlf);
      changed = true;
    } else {
      if (!existing->value.is_array())
        return fail(invalid(label, line_of(text, existing->begin), "\"hooks." + std::string(event) + "\" is a " +
                                                                       std::string(json::to_string(existing->value.type())) +
                                                                       ", not an array of hooks"));
      // The user's hooks stay in their order; CLEO's one takes the place of the first it wrote.
      json::Value items = json::Value::array();
      bool placed = false;
      for (const auto& item : existing->value.as_array()) {
        if (!is_ours(item)) {
          items.push_back(item);
        } else if (!placed) {
          items.push_back(entry);
          placed = true;
        }
      }
      if (!placed) items.push_back(entry);
      if (items != existing->value) {
        const std::string indent = indent_at(text, existing->key_begin).value_or(repeat(unit, 2));
        out.replace(existing->begin, existing->end - existing->begin, with_eol(render(items, unit, indent), crlf));
        changed = true;
      }
    }
  }
  // Top-level members the host needs, when missing (re-read: the text may have moved).
  if (top.is_object()) {
    for (const auto& [key, value] : top.as_object()) {
      CT_TRY_ASSIGN(std::optional<Node> now, JsoncReader(out, label).document());
      bool present = std::any_of(now->children.begin(), now->children.end(), [&](const Node& m) { return m.key == key; });
      if (present) continue;
      out = insert_member(out, *now, 0, unit, key, value, crlf);
      changed = true;
    }
  }
  if (!changed) return Edit{std::string(text), false};
  return Edit{std::move(out), true};
}

}  // namespace

Result<json::Value> read_json(std::string_view text, std::string_view label) {
  if (text.starts_with(kBom)) text.remove_prefix(kBom.size());
  CT_TRY_ASSIGN(std::optional<Node> root, JsoncReader(text, label).document());
  return root ? std::move(root->value) : json::Value(nullptr);
}

Result<Edit> set_json_hook(std::string_view text, std::string_view event, const json::Value& entry,
                           const std::function<bool(const json::Value&)>& is_ours, const json::Value& top,
                           std::string_view label) {
  return keeping_bom(text, [&](std::string_view json) {
    return set_json_hook_document(json, event, entry, is_ours, top, label);
  });
}

Result<Edit> set_json_server(std::string_view text, std::string_view servers_key, std::string_view name,
                             const json::Value& entry, std::span<const std::string_view> owned,
                             std::string_view label) {
  return keeping_bom(text, [&](std::string_view json) {
    return set_json_document(json, servers_key, name, entry, owned, label);
  });
}

std::string toml_string(std::string_view text) {
  std::string out;
  json::write_string(out, text);  // JSON string escapes are valid TOML basic-string escapes
  return out;
}

namespace {

Result<Edit> set_toml_document(std::string_view text, std::string_view table, const std::vector<TomlKey>& keys,
                               std::span<const std::string_view> owned, std::string_view label) {
  CT_TRY_ASSIGN(std::vector<TomlStatement> statements, read_toml(text, label));
  auto target = split_key(table);
  if (!target) return fail(Error(ErrorCode::Internal, "invalid TOML table name '" + std::string(table) + "'"));
  const bool crlf = text.find("\r\n") != std::string_view::npos;

  // Where the table is, and that nothing else defines it.
  std::optional<std::size_t> header;
  for (std::size_t i = 0; i < statements.size(); ++i) {
    const TomlStatement& s = statements[i];
    if (s.header) {
      if (s.table == *target) {
        if (header || s.array_table)
          return fail(invalid(label, s.line, "[" + table_name(table) + "] is defined more than once"));
        header = i;
      } else if (s.array_table && starts_with(*target, s.table)) {
        // [[mcp_servers]]: a [mcp_servers.cleo] would land in its last element.
        return fail(invalid(label, s.line, "[[" + join_key(s.table) + "]] is an array of tables; " +
                                           table_name(table) + " cannot be added as a table under it"));
      }
      continue;
    }
    std::vector<std::string> path = s.table;
    path.insert(path.end(), s.key.begin(), s.key.end());
    if (s.table.size() < target->size() && starts_with(path, *target))
      return fail(invalid(label, s.line, table_name(table) + " is defined here with dotted keys or an inline table; "
                                         "edit it by hand, or turn it into a [" + table_name(table) + "] table"));
    if (path.size() < target->size() && starts_with(*target, path)) {
      // `mcp_servers = { … }`: TOML closes an inline table (or any value) for good, so a
      // [mcp_servers.cleo] header after it would make the whole file invalid.
      Error error = invalid(label, s.line, join_key(path) + " is set here as a value (an inline table); " +
                                               table_name(table) + " cannot be added as a table beside it");
      error.fix = "turn `" + join_key(path) + " = { … }` into [" + join_key(path) + ".<name>] tables (one per server), "
                  "or add " + target->back() + " = { … } inside it by hand; then run again. Nothing was written";
      return fail(std::move(error));
    }
  }

  if (!header) {
    std::string out(text);
    if (!out.empty() && out.back() != '\n') out += with_eol("\n", crlf);
    std::string block = out.empty() ? "" : "\n";
    block += "[" + table_name(table) + "]\n";
    for (const auto& [key, value] : keys) block += key + " = " + value + "\n";
    out += with_eol(std::move(block), crlf);
    return Edit{std::move(out), true};
  }

  struct Change {
    std::size_t begin;
    std::size_t end;
    std::string text;
  };
  std::vector<Change> changes;
  std::vector<bool> present(keys.size(), false);
  std::size_t insert_at = statements[*header].next;
  for (std::size_t i = *header + 1; i < statements.size() && !statements[i].header; ++i) {
    const TomlStatement& s = statements[i];
    insert_at = s.next;
    if (s.key.size() != 1) continue;
    auto wanted = std::find_if(keys.begin(), keys.end(), [&](const TomlKey& k) { return k.first == s.key[0]; });
    if (wanted != keys.end()) {
      present[static_cast<std::size_t>(wanted - keys.begin())] = true;
      if (normalized(s.value) == normalized(wanted->second)) continue;
      std::string_view first_line = text.substr(s.begin, s.end - s.begin);
      std::string indent(first_line.substr(0, first_line.find_first_not_of(" \t")));
      changes.push_back({s.begin, s.end, indent + wanted->first + " = " + wanted->second});
    } else if (std::find(owned.begin(), owned.end(), s.key[0]) != owned.end()) {
      changes.push_back({s.begin, s.next, ""});
    }
  }
  std::string added;
  for (std::size_t k = 0; k < keys.size(); ++k)
    if (!present[k]) added += keys[k].first + " = " + keys[k].second + "\n";
  if (!added.empty()) {
    // After the table's last key; a file ending without a newline gets one first.
    std::string prefix = insert_at > 0 && text[insert_at - 1] != '\n' ? "\n" : "";
    changes.push_back({insert_at, insert_at, prefix + added});
  }
  if (changes.empty()) return Edit{std::string(text), false};
  std::sort(changes.begin(), changes.end(), [](const Change& a, const Change& b) { return a.begin > b.begin; });
  std::string out(text);
  for (auto& change : changes) out.replace(change.begin, change.end - change.begin, with_eol(change.text, crlf));
  return Edit{std::move(out), true};
}

}  // namespace

Result<Edit> set_toml_table(std::string_view text, std::string_view table, const std::vector<TomlKey>& keys,
                            std::span<const std::string_view> owned, std::string_view label) {
  return keeping_bom(text, [&](std::string_view toml) {
    return set_toml_document(toml, table, keys, owned, label);
  });
}

std::string line_diff(std::string_view before, std::string_view after, std::string_view label) {
  if (before == after) return "";
  // Lines with their newline: a last line without one differs from the same text with one, and
  // is marked as diff(1) and patch(1) expect.
  std::vector<std::string> a = split_lines(before);
  std::vector<std::string> b = split_lines(after);
  std::size_t prefix = 0;
  while (prefix < a.size() && prefix < b.size() && a[prefix] == b[prefix]) ++prefix;
  std::size_t suffix = 0;
  while (suffix < a.size() - prefix && suffix < b.size() - prefix && a[a.size() - 1 - suffix] == b[b.size() - 1 - suffix])
    ++suffix;
  constexpr std::size_t kContext = 2;
  const std::size_t from = prefix > kContext ? prefix - kContext : 0;
  const std::size_t a_to = std::min(a.size(), a.size() - suffix + kContext);
  const std::size_t tail = a_to - (a.size() - suffix);  // context lines after the change
  const std::size_t b_to = b.size() - suffix + tail;
  std::string out = "--- " + std::string(label) + "\n+++ " + std::string(label) + "\n";
  out += "@@ -" + std::to_string(a_to > from ? from + 1 : from) + "," + std::to_string(a_to - from) + " +" +
         std::to_string(b_to > from ? from + 1 : from) + "," + std::to_string(b_to - from) + " @@\n";
  auto line = [&](char mark, const std::string& text) {
    out += mark;
    out += text;
    if (text.empty() || text.back() != '\n') out += "\n\\ No newline at end of file\n";
  };
  for (std::size_t i = from; i < prefix; ++i) line(' ', a[i]);
  for (std::size_t i = prefix; i < a.size() - suffix; ++i) line('-', a[i]);
  for (std::size_t i = prefix; i < b.size() - suffix; ++i) line('+', b[i]);
  for (std::size_t i = a.size() - suffix; i < a_to; ++i) line(' ', a[i]);
  return out;
}

namespace {

namespace fs = std::filesystem;

/// A file as read: whether it exists, its bytes, its mode and owner.
struct Snapshot {
  bool exists = false;
  std::string content;
  FileAttributes attributes;
};

Error file_problem(std::string message, std::string fix) {
  return Error(ErrorCode::FileError, std::move(message)).with_fix(std::move(fix));
}

Result<Snapshot> read_snapshot(const fs::path& file, std::string_view label) {
  Snapshot snapshot;
  // A host's file is read as any file of the user's (core/file_read.h): regular, bounded, quick.
  FileStamp stamp;
  auto text = read_regular_file(file, {16LL << 20, std::chrono::milliseconds(10000)}, &stamp);
  if (!text) {
    const Error& why = text.error();
    if (why.code == ErrorCode::NotFound) return snapshot;
    if (why.details["reason"] == json::Value("notRegular"))
      return fail(file_problem(std::string(label) + " is not a regular file", "move it away, then run again"));
    return fail(file_problem("cannot read " + std::string(label) + ": " + why.message, "check the file's permissions"));
  }
  struct stat info {};
  if (::stat(file.c_str(), &info) != 0)
    return fail(file_problem("cannot read " + std::string(label) + ": " + std::strerror(errno), "check the file's permissions"));
  snapshot.exists = true;
  snapshot.attributes = {static_cast<unsigned>(info.st_mode & 07777), static_cast<unsigned>(info.st_uid),
                         static_cast<unsigned>(info.st_gid)};
  snapshot.content = std::move(*text);
  return snapshot;
}

/// "<file>.bak-<UTC stamp>Z", or with "-2", "-3" … when taken: published with link(), which never
/// replaces a file, so a name in use (an older backup of the same second) is simply skipped.
Result<fs::path> write_backup(const fs::path& file, const Snapshot& original, TimeMs now) {
  std::string stamp;
  for (char c : format_iso8601(now).substr(0, 19))
    if (c != '-' && c != ':') stamp += c;
  fs::path base = file;
  base += ".bak-" + stamp + "Z";
  for (int n = 1; n <= 1000; ++n) {
    fs::path candidate = base;
    if (n > 1) candidate += "-" + std::to_string(n);
    CT_TRY_ASSIGN(AtomicFile copy, AtomicFile::create(candidate));
    copy.set_attributes(original.attributes);  // a private file's backup stays private
    CT_TRY(copy.write(original.content));
    auto published = copy.commit(Publish::Exclusive);
    if (published) return candidate;
    if (!is_target_exists(published.error())) return fail(std::move(published.error()));
  }
  return fail(file_problem("cannot find a free backup name beside " + file.string(),
                           "remove old " + file.filename().string() + ".bak-* files there"));
}

}  // namespace

Result<FileEdit> edit_file(const fs::path& path, std::string_view label, const Editor& editor, bool dry_run,
                           TimeMs now) {
  FileEdit result;
  CT_TRY_ASSIGN(result.file, write_target(path));
  const fs::path folder = result.file.has_parent_path() ? result.file.parent_path() : fs::path(".");
  std::optional<FolderLock> lock;
  if (!dry_run) {
    std::error_code ec;
    fs::create_directories(folder, ec);
    if (ec)
      return fail(file_problem("cannot create the folder of " + std::string(label) + ": " + ec.message(),
                               "check the folder's permissions"));
    CT_TRY_ASSIGN(lock, FolderLock::acquire(folder));
  }
  constexpr int kAttempts = 5;
  for (int attempt = 1;; ++attempt) {
    CT_TRY_ASSIGN(Snapshot snapshot, read_snapshot(result.file, label));
    result.existed = snapshot.exists;
    result.before = snapshot.content;
    CT_TRY_ASSIGN(result.edit, editor(snapshot.content));
    if (!result.edit.changed) return result;
    if (snapshot.exists) CT_TRY(may_replace(result.file));
    if (dry_run) return result;

    CT_TRY_ASSIGN(AtomicFile out, AtomicFile::create(result.file, Links::Follow));
    CT_TRY(out.write(result.edit.text));
    // Compare and swap: a writer that does not take the lock may have changed the file since it
    // was read; publishing now would drop its change.
    CT_TRY_ASSIGN(Snapshot current, read_snapshot(result.file, label));
    if (current.exists != snapshot.exists || current.content != snapshot.content) {
      if (attempt < kAttempts) continue;
      return fail(file_problem(std::string(label) + " kept changing while CLEO edited it; it was left as it was",
                               "close the program that keeps writing it (the agent host), then run again")
                      .with_detail("reason", "changing"));
    }
    if (snapshot.exists) {
      CT_TRY_ASSIGN(result.backup, write_backup(result.file, snapshot, now));
    }
    CT_TRY(out.commit(Publish::Replace));
    return result;
  }
}

}  // namespace ct::host_config
