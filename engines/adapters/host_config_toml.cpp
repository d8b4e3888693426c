// TOML host config files edited as text (engines/adapters/host_config.h): the file read as its
// statements (headers and key/value pairs over one or more lines), then one table made to hold
// CLEO's keys — found where nothing else defines it, added, or its keys rewritten — every other
// byte kept.
#include <algorithm>
#include <cctype>
#include <optional>

#include "engines/adapters/host_config.h"
#include "engines/adapters/host_config_text.h"

namespace ct::host_config {
namespace {

using detail::invalid;
using detail::keeping_bom;
using detail::line_of;
using detail::with_eol;

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

/// A table header, `[a.b]` or `[[a.b]]`, on `line`: the statement that opens the table.
Result<TomlStatement> read_header(std::string_view line, std::size_t number, std::string_view label) {
  TomlStatement statement;
  bool array = line.starts_with("[[");
  std::string_view close = array ? "]]" : "]";
  std::size_t stop = find_unquoted(line, close, array ? 2 : 1);
  if (stop == std::string_view::npos) return fail(invalid(label, number, "a table header without its closing ]"));
  std::string_view rest = trim(line.substr(stop + close.size()));
  if (!rest.empty() && rest.front() != '#') return fail(invalid(label, number, "unexpected text after a table header"));
  auto parts = split_key(line.substr(array ? 2 : 1, stop - (array ? 2 : 1)));
  if (!parts) return fail(invalid(label, number, "invalid table name"));
  statement.header = true;
  statement.array_table = array;
  statement.table = std::move(*parts);
  return statement;
}

/// Where the value that starts at `begin` ends: once its brackets close and its strings end,
/// possibly over several lines (comments skipped). `any`: it holds more than whitespace.
Result<std::size_t> value_end(std::string_view text, std::size_t begin, std::size_t number, std::string_view label,
                              bool& any) {
  std::size_t i = begin;
  int depth = 0;
  std::string_view in_string;  // the delimiter of an open string
  while (true) {
    if (i >= text.size()) {
      if (depth > 0 || !in_string.empty()) return fail(invalid(label, number, "a value that never ends (an unclosed [, { or string)"));
      return i;
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
      if (depth == 0) return i;
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
    if (line.front() == '[') {
      CT_TRY_ASSIGN(TomlStatement statement, read_header(line, number, label));
      table = statement.table;
      statement.begin = pos;
      statement.line = number;
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
    bool any = false;
    CT_TRY_ASSIGN(std::size_t i, value_end(text, value_begin, number, label, any));
    if (!any) return fail(invalid(label, number, "a key without a value"));
    TomlStatement statement;
    statement.begin = pos;
    statement.line = number;
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

/// The statement that opens `[<target>]`, nullopt when none does; E_VALIDATION when the table is
/// defined another way: twice, under an array of tables, by dotted keys or an inline table, or
/// beside a parent set as a value.
Result<std::optional<std::size_t>> find_table(const std::vector<TomlStatement>& statements,
                                              const std::vector<std::string>& target, std::string_view table,
                                              std::string_view label) {
  std::optional<std::size_t> header;
  for (std::size_t i = 0; i < statements.size(); ++i) {
    const TomlStatement& s = statements[i];
    if (s.header) {
      if (s.table == target) {
        if (header || s.array_table)
          return fail(invalid(label, s.line, "[" + table_name(table) + "] is defined more than once"));
        header = i;
      } else if (s.array_table && starts_with(target, s.table)) {
        // [[mcp_servers]]: a [mcp_servers.cleo] would land in its last element.
        return fail(invalid(label, s.line, "[[" + join_key(s.table) + "]] is an array of tables; " +
                                           table_name(table) + " cannot be added as a table under it"));
      }
      continue;
    }
    std::vector<std::string> path = s.table;
    path.insert(path.end(), s.key.begin(), s.key.end());
    if (s.table.size() < target.size() && starts_with(path, target))
      return fail(invalid(label, s.line, table_name(table) + " is defined here with dotted keys or an inline table; "
                                         "edit it by hand, or turn it into a [" + table_name(table) + "] table"));
    if (path.size() < target.size() && starts_with(target, path)) {
      // `mcp_servers = { … }`: TOML closes an inline table (or any value) for good, so a
      // [mcp_servers.cleo] header after it would make the whole file invalid.
      Error error = invalid(label, s.line, join_key(path) + " is set here as a value (an inline table); " +
                                               table_name(table) + " cannot be added as a table beside it");
      error.fix = "turn `" + join_key(path) + " = { … }` into [" + join_key(path) + ".<name>] tables (one per server), "
                  "or add " + target.back() + " = { … } inside it by hand; then run again. Nothing was written";
      return fail(std::move(error));
    }
  }
  return header;
}

/// `text` with the table `[<table>]` holding `keys` added at its end.
Edit append_table(std::string_view text, std::string_view table, const std::vector<TomlKey>& keys, bool crlf) {
  std::string out(text);
  if (!out.empty() && out.back() != '\n') out += with_eol("\n", crlf);
  std::string block = out.empty() ? "" : "\n";
  block += "[" + table_name(table) + "]\n";
  for (const auto& [key, value] : keys) block += key + " = " + value + "\n";
  out += with_eol(std::move(block), crlf);
  return Edit{std::move(out), true};
}

/// The table that `statements[header]` opens made to hold `keys`: a key asked for is rewritten
/// when its value differs, a key of `owned` not asked for removed, the keys missing added after
/// its last key.
Edit edit_table(std::string_view text, const std::vector<TomlStatement>& statements, std::size_t header,
                const std::vector<TomlKey>& keys, std::span<const std::string_view> owned, bool crlf) {
  struct Change {
    std::size_t begin;
    std::size_t end;
    std::string text;
  };
  std::vector<Change> changes;
  std::vector<bool> present(keys.size(), false);
  std::size_t insert_at = statements[header].next;
  for (std::size_t i = header + 1; i < statements.size() && !statements[i].header; ++i) {
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

Result<Edit> set_toml_document(std::string_view text, std::string_view table, const std::vector<TomlKey>& keys,
                               std::span<const std::string_view> owned, std::string_view label) {
  CT_TRY_ASSIGN(std::vector<TomlStatement> statements, read_toml(text, label));
  auto target = split_key(table);
  if (!target) return fail(Error(ErrorCode::Internal, "invalid TOML table name '" + std::string(table) + "'"));
  const bool crlf = text.find("\r\n") != std::string_view::npos;
  // Where the table is, and that nothing else defines it.
  CT_TRY_ASSIGN(std::optional<std::size_t> header, find_table(statements, *target, table, label));
  if (!header) return append_table(text, table, keys, crlf);
  return edit_table(text, statements, *header, keys, owned, crlf);
}

}  // namespace

std::string toml_string(std::string_view text) {
  std::string out;
  json::write_string(out, text);  // JSON string escapes are valid TOML basic-string escapes
  return out;
}

Result<Edit> set_toml_table(std::string_view text, std::string_view table, const std::vector<TomlKey>& keys,
                            std::span<const std::string_view> owned, std::string_view label) {
  return keeping_bom(text, [&](std::string_view toml) {
    return set_toml_document(toml, table, keys, owned, label);
  });
}

}  // namespace ct::host_config
