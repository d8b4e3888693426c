// The version field of a version file (engines/rules/release_engine.h, find_version_field): one small
// reader per format — JSON's top-level "version", TOML's [project]/[tool.poetry]/[package]/
// [workspace.package] `version`, CMake's project(VERSION), else the file's one version string —
// so that release.ship bumps the project's version and nothing that merely looks like one
// (`setuptools>=61.0.0`, `cmake_minimum_required(VERSION 3.20.0)`). Hand-written scanners, linear
// in the text and with bounded nesting: no regular expression (libstdc++'s std::regex recurses per
// character).
#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "core/json_parse.h"
#include "core/text.h"
#include "engines/rules/release_engine.h"

namespace ct {
namespace {

namespace fs = std::filesystem;

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

/// A character of a version token in running text ("1.2.0-rc.1+b5").
bool is_token_char(char c) { return is_digit(c) || is_alpha(c) || c == '.' || c == '-' || c == '+' || c == '_'; }

/// The version at `at`, running to the end of its word; empty when the word from there is not a
/// semantic version. A sentence's full stop after it is not part of it.
std::string_view version_token_at(std::string_view text, std::size_t at) {
  if (at >= text.size() || !is_digit(text[at])) return {};
  std::size_t end = at;
  while (end < text.size() && is_token_char(text[end])) ++end;
  std::string_view token = text.substr(at, end - at);
  while (token.ends_with('.')) token.remove_suffix(1);
  return is_semver(token) ? token : std::string_view();
}

std::size_t line_of(std::string_view text, std::size_t offset) {
  return 1 + static_cast<std::size_t>(std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(offset), '\n'));
}

/// A version field found in a version file: where its value is, and how the file names it.
struct FieldHit {
  std::size_t offset = 0;  // the value's text (inside its quotes)
  std::size_t length = 0;
  std::string name;        // "[project] version", "\"version\"", "project(VERSION)"
  bool literal = true;     // a plain string or token the version can replace
};

Error field_error(std::string_view file, std::string message, std::string fix) {
  return Error(ErrorCode::Validation, "release.versionFile " + std::string(file) + " " + std::move(message))
      .with_fix(std::move(fix))
      .with_detail("file", std::string(file));
}

/// The one hit of a format, or E_VALIDATION when there is none or more than one.
Result<FieldHit> one_field(std::string_view file, std::string_view text, std::vector<FieldHit> hits,
                           std::string_view expected, std::string_view add_fix) {
  if (hits.empty())
    return fail(field_error(file, "has no version field (" + std::string(expected) + ")",
                            std::string(add_fix) + ", or set release.versionFile to the file that holds the "
                                                   "project's version (\"\" for none)"));
  if (hits.size() > 1) {
    std::string where;
    for (const auto& hit : hits)
      where += (where.empty() ? "" : ", ") + hit.name + " on line " + std::to_string(line_of(text, hit.offset));
    return fail(field_error(file, "has " + std::to_string(hits.size()) + " version fields (" + where +
                                      "): which one is the project's is not clear",
                            "keep one version field in it, or set release.versionFile to a file with one"));
  }
  if (!hits.front().literal)
    return fail(field_error(file, "writes its version field (" + hits.front().name + " on line " +
                                      std::to_string(line_of(text, hits.front().offset)) +
                                      ") as something else than a literal string",
                            "write the version there literally (\"1.2.0\"), or set release.versionFile to the "
                            "file it comes from"));
  return std::move(hits.front());
}

/// A TOML document read far enough to find keys: tables, dotted and quoted keys, every kind of
/// string (a '[' or '=' inside one is text), multi-line arrays and inline tables, comments. Values
/// are skipped, not decoded. Nesting deeper than kMaxDepth is refused (no recursion without bound).
class TomlKeys {
 public:
  static constexpr int kMaxDepth = 32;

  explicit TomlKeys(std::string_view text) : t_(text) {}

  /// Every key whose full path (table + key) is one of `paths`, with where its value is; false
  /// when the text is not TOML this reader understands (the line is in error_line()).
  bool find(const std::vector<std::vector<std::string>>& paths, std::vector<FieldHit>& hits) {
    std::vector<std::string> table;
    while (true) {
      skip_blank_lines();
      if (at_end()) return true;
      if (peek() == '[') {
        const bool array = i_ + 1 < t_.size() && t_[i_ + 1] == '[';
        i_ += array ? 2 : 1;
        std::vector<std::string> name;
        if (!key(name)) return false;
        if (array) {
          if (!(i_ + 1 < t_.size() && t_[i_] == ']' && t_[i_ + 1] == ']')) return false;
          i_ += 2;
        } else {
          if (at_end() || peek() != ']') return false;
          ++i_;
        }
        table = std::move(name);
        if (!end_of_line()) return false;
        continue;
      }
      std::vector<std::string> path = table;
      const std::size_t line_start = i_;
      if (!key(path)) return false;
      if (at_end() || peek() != '=') return false;
      ++i_;
      skip_space();
      const std::size_t value_start = i_;
      if (!value(0)) return false;
      if (std::find(paths.begin(), paths.end(), path) != paths.end()) {
        std::string_view raw = t_.substr(value_start, i_ - value_start);
        FieldHit hit;
        hit.name = "[" + join(std::vector<std::string>(path.begin(), path.end() - 1), ".") + "] " + path.back();
        const bool plain = raw.size() >= 2 && (raw.front() == '"' || raw.front() == '\'') && raw.back() == raw.front() &&
                           !raw.starts_with("\"\"\"") && !raw.starts_with("'''") &&
                           raw.find('\\') == std::string_view::npos;
        hit.literal = plain;
        hit.offset = plain ? value_start + 1 : line_start;
        hit.length = plain ? raw.size() - 2 : 0;
        hits.push_back(std::move(hit));
      }
      if (!end_of_line()) return false;
    }
  }

  std::size_t error_line() const { return line_of(t_, std::min(i_, t_.size())); }

 private:
  bool at_end() const { return i_ >= t_.size(); }
  char peek() const { return t_[i_]; }
  void skip_space() {
    while (!at_end() && (peek() == ' ' || peek() == '\t')) ++i_;
  }
  void skip_comment() {
    if (!at_end() && peek() == '#')
      while (!at_end() && peek() != '\n') ++i_;
  }
  /// Blank lines, comments and line breaks (between statements, or inside an array).
  void skip_blank_lines() {
    while (!at_end()) {
      skip_space();
      skip_comment();
      if (at_end() || (peek() != '\n' && peek() != '\r')) return;
      ++i_;
    }
  }
  /// The rest of a statement's line: spaces, a comment, then the line break (or the end).
  bool end_of_line() {
    skip_space();
    skip_comment();
    if (!at_end() && peek() == '\r') ++i_;
    if (at_end()) return true;
    if (peek() != '\n') return false;
    ++i_;
    return true;
  }
  /// A dotted key, its parts appended to `out`; stops after the spaces that follow it.
  bool key(std::vector<std::string>& out) {
    while (true) {
      skip_space();
      if (at_end()) return false;
      std::string part;
      if (peek() == '"' || peek() == '\'') {
        const char quote = peek();
        ++i_;
        while (!at_end() && peek() != quote && peek() != '\n') {
          if (quote == '"' && peek() == '\\' && i_ + 1 < t_.size()) ++i_;
          part += t_[i_++];
        }
        if (at_end() || peek() != quote) return false;
        ++i_;
      } else {
        const std::size_t start = i_;
        while (!at_end() && (is_digit(peek()) || is_alpha(peek()) || peek() == '_' || peek() == '-')) ++i_;
        if (i_ == start) return false;
        part = std::string(t_.substr(start, i_ - start));
      }
      out.push_back(std::move(part));
      skip_space();
      if (at_end() || peek() != '.') return true;
      ++i_;
    }
  }
  bool string() {
    const char quote = peek();
    const std::string_view triple = quote == '"' ? "\"\"\"" : "'''";
    if (t_.substr(i_).starts_with(triple)) {
      i_ += 3;
      while (!at_end()) {
        if (quote == '"' && peek() == '\\') {
          i_ += 2;
          continue;
        }
        if (t_.substr(i_).starts_with(triple)) {
          i_ += 3;
          while (!at_end() && peek() == quote) ++i_;  // up to two quotes may end the content
          return true;
        }
        ++i_;
      }
      return false;
    }
    ++i_;
    while (!at_end() && peek() != quote && peek() != '\n') {
      if (quote == '"' && peek() == '\\') ++i_;
      ++i_;
    }
    if (at_end() || peek() != quote) return false;
    ++i_;
    return true;
  }
  bool value(int depth) {
    if (at_end() || depth > kMaxDepth) return false;
    const char c = peek();
    if (c == '"' || c == '\'') return string();
    if (c == '[' || c == '{') {
      const char close = c == '[' ? ']' : '}';
      ++i_;
      while (true) {
        skip_blank_lines();
        if (at_end()) return false;
        if (peek() == close) {
          ++i_;
          return true;
        }
        if (c == '{') {
          std::vector<std::string> ignored;
          if (!key(ignored) || at_end() || peek() != '=') return false;
          ++i_;
          skip_space();
        }
        if (!value(depth + 1)) return false;
        skip_blank_lines();
        if (!at_end() && peek() == ',') ++i_;
      }
    }
    // A number, boolean or date: up to what ends a value.
    const std::size_t start = i_;
    while (!at_end() && peek() != ',' && peek() != ']' && peek() != '}' && peek() != '\n' && peek() != '#' &&
           peek() != '\r')
      ++i_;
    return i_ > start;
  }

  std::string_view t_;
  std::size_t i_ = 0;
};

Result<FieldHit> toml_field(std::string_view file, std::string_view text) {
  static const std::vector<std::vector<std::string>> kPaths = {
      {"project", "version"}, {"tool", "poetry", "version"}, {"package", "version"}, {"workspace", "package", "version"}};
  std::vector<FieldHit> hits;
  TomlKeys reader(text);
  if (!reader.find(kPaths, hits))
    return fail(field_error(file, "cannot be read as TOML (line " + std::to_string(reader.error_line()) + ")",
                            "fix the file, or set release.versionFile to the file that holds the version"));
  return one_field(file, text, std::move(hits),
                   "`version = \"…\"` under [project], [tool.poetry], [package] or [workspace.package]",
                   "add `version = \"<current version>\"` under the table of the project ([project] in "
                   "pyproject.toml, [package] in Cargo.toml)");
}

Result<FieldHit> json_field(std::string_view file, std::string_view text) {
  const json::Outline outline = json::outline(text);
  if (!outline.well_formed || outline.top != json::Type::Object)
    return fail(field_error(file, "is not a JSON object", "fix the file, or set release.versionFile to the file "
                                                          "that holds the version"));
  std::vector<FieldHit> hits;
  for (const auto& [key, raw] : outline.members) {
    if (key != "version") continue;
    FieldHit hit;
    hit.name = "\"version\"";
    // raw is a view of `text` (outline keeps the raw text of each value).
    const auto offset = static_cast<std::size_t>(raw.data() - text.data());
    hit.literal = raw.size() >= 2 && raw.front() == '"' && raw.find('\\') == std::string_view::npos;
    hit.offset = hit.literal ? offset + 1 : offset;
    hit.length = hit.literal ? raw.size() - 2 : 0;
    hits.push_back(std::move(hit));
  }
  return one_field(file, text, std::move(hits), "a top-level \"version\" member",
                   "add \"version\": \"<current version>\" to the top-level object");
}

/// CMake's commands read far enough to find project(… VERSION x …): comments (line and bracket),
/// quoted and bracket arguments, nested parentheses. Only a command's own arguments count, so a
/// project() in a comment, a string or cmake_minimum_required(VERSION …) is none.
/// A CMake file read command by command: comments (# and #[[…]]), quoted and bracket arguments
/// skipped as CMake skips them, each command's arguments read up to its matching ')'.
struct CmakeScanner {
  struct Arg {
    std::size_t offset, length;
  };

  std::string_view t;
  std::size_t i = 0;

  /// "[[" / "[=[" … at `at`: the closing "]]" / "]=]"; empty when `at` opens no bracket.
  std::string bracket_close(std::size_t at) const {
    if (at >= t.size() || t[at] != '[') return {};
    std::size_t j = at + 1;
    while (j < t.size() && t[j] == '=') ++j;
    if (j >= t.size() || t[j] != '[') return {};
    return "]" + std::string(j - at - 1, '=') + "]";
  }
  void skip_bracket(const std::string& close) {
    auto end = t.find(close, i);
    i = end == std::string_view::npos ? t.size() : end + close.size();
  }
  void skip_comment() {  // at '#'
    ++i;
    if (auto close = bracket_close(i); !close.empty()) return skip_bracket(close);
    while (i < t.size() && t[i] != '\n') ++i;
  }
  void skip_quoted() {  // at '"'
    for (++i; i < t.size() && t[i] != '"'; ++i)
      if (t[i] == '\\') ++i;
    if (i < t.size()) ++i;
  }

  /// The arguments after a command's '(' (`i` just past it), up to the matching ')': quoted ones
  /// without their quotes, bracket ones with their brackets.
  std::vector<Arg> arguments() {
    const std::size_t n = t.size();
    std::vector<Arg> args;
    int depth = 1;
    while (i < n && depth > 0) {
      const char a = t[i];
      if (a == ' ' || a == '\t' || a == '\n' || a == '\r') {
        ++i;
      } else if (a == '#') {
        skip_comment();
      } else if (a == '(') {
        ++depth;
        ++i;
      } else if (a == ')') {
        --depth;
        ++i;
      } else if (a == '"') {
        const std::size_t start = i;
        skip_quoted();
        args.push_back({start + 1, i > start + 1 ? i - start - 2 : 0});
      } else if (auto close = bracket_close(i); !close.empty()) {
        const std::size_t start = i;
        skip_bracket(close);
        args.push_back({start, i - start});
      } else {
        const std::size_t start = i;
        while (i < n && t[i] != ' ' && t[i] != '\t' && t[i] != '\n' && t[i] != '\r' && t[i] != '(' && t[i] != ')' &&
               t[i] != '"' && t[i] != '#') {
          if (t[i] == '\\') ++i;
          ++i;
        }
        args.push_back({start, std::min(i, n) - start});
      }
    }
    return args;
  }
};

Result<FieldHit> cmake_field(std::string_view file, std::string_view t) {
  std::vector<FieldHit> hits;
  CmakeScanner scan{t};
  std::size_t& i = scan.i;
  const std::size_t n = t.size();
  while (i < n) {
    const char c = t[i];
    if (c == '#') {
      scan.skip_comment();
      continue;
    }
    if (c == '"') {
      scan.skip_quoted();
      continue;
    }
    if (!(is_alpha(c) || c == '_') || (i > 0 && (is_alpha(t[i - 1]) || is_digit(t[i - 1]) || t[i - 1] == '_'))) {
      ++i;
      continue;
    }
    const std::size_t name_start = i;
    while (i < n && (is_alpha(t[i]) || is_digit(t[i]) || t[i] == '_')) ++i;
    const std::string name = to_lower_ascii(t.substr(name_start, i - name_start));
    std::size_t j = i;
    while (j < n && (t[j] == ' ' || t[j] == '\t')) ++j;
    if (j >= n || t[j] != '(') continue;
    i = j + 1;
    const std::vector<CmakeScanner::Arg> args = scan.arguments();
    if (name != "project") continue;
    for (std::size_t k = 1; k < args.size(); ++k) {
      if (t.substr(args[k].offset, args[k].length) != "VERSION") continue;
      FieldHit hit;
      hit.name = "project(VERSION)";
      if (k + 1 >= args.size()) {
        hit.literal = false;
        hit.offset = args[k].offset;
      } else {
        hit.offset = args[k + 1].offset;
        hit.length = args[k + 1].length;
        std::string_view value = t.substr(hit.offset, hit.length);
        hit.literal = !value.empty() && std::all_of(value.begin(), value.end(),
                                                    [](char v) { return is_digit(v) || v == '.'; });
      }
      hits.push_back(std::move(hit));
      break;
    }
  }
  return one_field(file, t, std::move(hits), "project(<name> VERSION <version> …)",
                   "add VERSION <current version> to the project() command");
}

/// Any other file: exactly one version string, as a whole token (a word of its own, "v" allowed
/// before it: never part of "demo-1.2.0.tar.gz" or ">=61.0.0rc1").
Result<FieldHit> token_field(std::string_view file, std::string_view text) {
  std::vector<FieldHit> hits;
  std::string found;
  for (std::size_t i = 0; i < text.size();) {
    if (!is_token_char(text[i])) {
      ++i;
      continue;
    }
    const std::size_t at = text[i] == 'v' || text[i] == 'V' ? i + 1 : i;
    if (std::string_view token = version_token_at(text, at); !token.empty()) {
      found += (found.empty() ? "" : ", ") + std::string(token) + " on line " + std::to_string(line_of(text, at));
      hits.push_back({.offset = at, .length = token.size(), .name = std::string(token)});
    }
    while (i < text.size() && is_token_char(text[i])) ++i;
  }
  if (hits.empty())
    return fail(field_error(file, "holds no version string (like 1.2.0) to replace",
                            "write the current version into it, or set release.versionFile to the file that holds "
                            "it (package.json, pyproject.toml, Cargo.toml, CMakeLists.txt or a VERSION file)"));
  if (hits.size() > 1)
    return fail(field_error(file, "holds " + std::to_string(hits.size()) + " version strings (" + found +
                                      "): which one is the project's is not clear",
                            "name a file that holds only the version (a VERSION file) or one whose format "
                            "names it (package.json, pyproject.toml, Cargo.toml, CMakeLists.txt)"));
  return std::move(hits.front());
}

}  // namespace

Result<VersionField> find_version_field(std::string_view file, std::string_view text) {
  const std::string name = to_lower_ascii(fs::path(file).filename().string());
  Result<FieldHit> hit = name.ends_with(".json")                                   ? json_field(file, text)
                         : name.ends_with(".toml")                                 ? toml_field(file, text)
                         : name == "cmakelists.txt" || name.ends_with(".cmake")    ? cmake_field(file, text)
                                                                                   : token_field(file, text);
  if (!hit) return std::unexpected(std::move(hit.error()));
  return VersionField{.offset = hit->offset, .length = hit->length, .numeric_only = hit->name == "project(VERSION)"};
}

Result<std::optional<std::string>> bump_version_text(std::string_view file, std::string_view text,
                                                     std::string_view next) {
  CT_TRY_ASSIGN(VersionField field, find_version_field(file, text));
  if (field.numeric_only && next.find_first_of("-+") != std::string_view::npos)
    return fail(field_error(file, "is CMake's project(VERSION), which takes numbers only: " + std::string(next) +
                                      " cannot be written there",
                            "ship a version without a pre-release or build part, or set release.versionFile to "
                            "a file that can hold it"));
  if (text.substr(field.offset, field.length) == next) return std::optional<std::string>();
  std::string out(text);
  out.replace(field.offset, field.length, next);
  return std::optional<std::string>(std::move(out));
}

}  // namespace ct
