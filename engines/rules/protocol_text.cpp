// The text scanners of the protocol rules (engines/rules/protocol_rules.h): words, Markdown
// headings, options, RFC 2119 keywords, versions, time estimates, test counts, @task tags, and what
// a path names (code, a test file). Hand-written and linear: no std::regex (output files are up to
// 256 KiB, and libstdc++'s regex recurses per character).
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <set>

#include "core/text.h"
#include "engines/rules/protocol_rules.h"

namespace ct::protocol_rules {
namespace {

namespace fs = std::filesystem;

bool is_alnum(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool is_digit(char c) { return c >= '0' && c <= '9'; }

/// The text of a Markdown ATX heading ("## Scope" → "scope", lowercase); nullopt for other lines.
std::optional<std::string> heading_text(std::string_view line) {
  std::size_t indent = 0;
  while (indent < line.size() && indent < 3 && line[indent] == ' ') ++indent;
  line.remove_prefix(indent);
  if (!line.starts_with('#')) return std::nullopt;
  std::size_t hashes = 0;
  while (hashes < line.size() && line[hashes] == '#') ++hashes;
  if (hashes > 6 || (hashes < line.size() && line[hashes] != ' ' && line[hashes] != '\t')) return std::nullopt;
  return to_lower_ascii(trim(line.substr(hashes)));
}

std::string extension_of(std::string_view path) {
  std::string name = fs::path(std::string(path)).filename().string();
  auto dot = name.rfind('.');
  return dot == std::string::npos || dot == 0 ? "" : to_lower_ascii(name.substr(dot + 1));
}

}  // namespace

bool contains_word(std::string_view text, std::string_view word) {
  for (std::size_t at = text.find(word); at != std::string_view::npos; at = text.find(word, at + 1)) {
    const bool start = at == 0 || !is_alnum(text[at - 1]);
    const bool end = at + word.size() == text.size() || !is_alnum(text[at + word.size()]);
    if (start && end) return true;
  }
  return false;
}

bool contains_any_word(std::string_view text, std::initializer_list<std::string_view> words) {
  return std::any_of(words.begin(), words.end(), [&](std::string_view word) { return contains_word(text, word); });
}

bool has_heading(std::string_view text) {
  for (auto line : split_lines(text))
    if (heading_text(line)) return true;
  return false;
}

bool has_heading_with(std::string_view text, std::initializer_list<std::string_view> words) {
  for (auto line : split_lines(text)) {
    auto heading = heading_text(line);
    if (heading && contains_any_word(*heading, words)) return true;
  }
  return false;
}

int count_option_lines(std::string_view lower) {
  int count = 0;
  for (auto line : split_lines(lower)) {
    line = trim(line);
    while (!line.empty() && (line.front() == '#' || line.front() == '-' || line.front() == '*' || line.front() == '|' ||
                             line.front() == ' ' || line.front() == '>' || line.front() == '+'))
      line.remove_prefix(1);
    std::size_t number = 0;
    while (number < line.size() && (is_digit(line[number]) || line[number] == '.' || line[number] == ')')) ++number;
    if (number > 0 && number < line.size() && line[number] == ' ') line = trim(line.substr(number));
    for (std::string_view word : {"option", "alternative"}) {
      if (!line.starts_with(word)) continue;
      std::string_view rest = line.substr(word.size());
      if (!rest.empty() && is_alnum(rest.front())) break;  // "options", "optional"
      while (!rest.empty() && (rest.front() == ' ' || rest.front() == ':' || rest.front() == '.' || rest.front() == '-'))
        rest.remove_prefix(1);
      if (!rest.empty() && is_alnum(rest.front())) ++count;
      break;
    }
  }
  return count;
}

std::vector<std::string> rfc2119_keywords(std::string_view text) {
  std::vector<std::string> found;
  for (std::string_view word : {"MUST", "SHALL", "REQUIRED", "SHOULD", "RECOMMENDED", "MAY", "OPTIONAL"})
    if (contains_word(text, word)) found.emplace_back(word);
  return found;
}

bool has_version_line(std::string_view lower) {
  for (auto line : split_lines(lower)) {
    for (std::size_t at = line.find("version"); at != std::string_view::npos; at = line.find("version", at + 1)) {
      if (at > 0 && is_alnum(line[at - 1])) continue;
      std::string_view rest = line.substr(at + 7);
      std::size_t skipped = 0;
      while (!rest.empty() && skipped < 8 && !is_alnum(rest.front())) rest.remove_prefix(1), ++skipped;
      if (rest.starts_with('v')) rest.remove_prefix(1);
      std::size_t digits = 0;
      while (digits < rest.size() && is_digit(rest[digits])) ++digits;
      if (digits > 0 && digits + 1 < rest.size() && rest[digits] == '.' && is_digit(rest[digits + 1])) return true;
    }
  }
  return false;
}

bool has_url(std::string_view lower) {
  return lower.find("https://") != std::string_view::npos || lower.find("http://") != std::string_view::npos;
}

std::optional<std::string> time_estimate(std::string_view text) {
  static const std::set<std::string_view> compact = {"h", "hr", "hrs", "d", "w", "wk", "wks"};
  static const std::set<std::string_view> words = {"min",  "mins",  "minute", "minutes", "hour",   "hours",
                                                   "hr",   "hrs",   "day",    "days",    "week",   "weeks",
                                                   "sprint", "sprints", "month", "months"};
  static const std::set<std::string_view> cues = {"est",   "estimate", "estimated", "effort", "eta",   "takes",
                                                  "take",  "about",    "approx",    "approximately", "roughly", "~"};
  const std::string lower = to_lower_ascii(text);
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (!is_digit(text[i]) || (i > 0 && (is_alnum(text[i - 1]) || text[i - 1] == '.'))) continue;
    std::size_t end = i;
    while (end < text.size() && (is_digit(text[end]) || text[end] == '.')) ++end;
    // A range "2-3 days" is read from its second number.
    if (end + 1 < text.size() && text[end] == '-' && is_digit(text[end + 1])) continue;
    std::size_t unit_start = end;
    const bool spaced = unit_start < text.size() && text[unit_start] == ' ';
    if (spaced) ++unit_start;
    std::size_t unit_end = unit_start;
    while (unit_end < text.size() && ((text[unit_end] >= 'a' && text[unit_end] <= 'z') ||
                                      (text[unit_end] >= 'A' && text[unit_end] <= 'Z')))
      ++unit_end;
    if (unit_end == unit_start || (unit_end < text.size() && is_digit(text[unit_end]))) continue;
    // Written together, a lowercase unit letter is an estimate ("3D" is not).
    std::string_view unit = std::string_view(text).substr(unit_start, unit_end - unit_start);
    if (!spaced && compact.contains(unit)) return std::string(text.substr(i, unit_end - i));
    if (!words.contains(std::string_view(lower).substr(unit_start, unit_end - unit_start))) continue;
    // Spelled out: only as an estimate.
    std::size_t before = i;
    while (before > 0 && is_digit(text[before - 1])) --before;
    if (before >= 2 && text[before - 1] == '-') {  // the first number of a range
      --before;
      while (before > 0 && is_digit(text[before - 1])) --before;
    }
    std::size_t cue_end = before;
    while (cue_end > 0 && (text[cue_end - 1] == ' ' || text[cue_end - 1] == ':')) --cue_end;
    if (cue_end > 0 && (text[cue_end - 1] == '~' || text[cue_end - 1] == '(' || text[cue_end - 1] == '['))
      return std::string(text.substr(cue_end - 1, unit_end - cue_end + 1));
    std::size_t cue_start = cue_end;
    while (cue_start > 0 && (is_alnum(text[cue_start - 1]) || text[cue_start - 1] == '.')) --cue_start;
    std::string cue = lower.substr(cue_start, cue_end - cue_start);
    while (cue.ends_with('.')) cue.pop_back();
    if (cues.contains(cue)) return std::string(text.substr(cue_start, unit_end - cue_start));
  }
  return std::nullopt;
}

bool has_count_summary(std::string_view lower) {
  for (std::size_t i = 0; i < lower.size(); ++i) {
    if (!is_digit(lower[i]) || (i > 0 && is_alnum(lower[i - 1]))) continue;
    std::size_t end = i;
    while (end < lower.size() && is_digit(lower[end])) ++end;
    std::string_view rest = lower.substr(end);
    if (rest.starts_with(' ')) rest.remove_prefix(1);
    for (std::string_view word : {"passed", "failed", "tests", "test", "passing", "failing"})
      if (rest.starts_with(word) && (rest.size() == word.size() || !is_alnum(rest[word.size()]))) return true;
    i = end;
  }
  return false;
}

bool has_task_tag(std::string_view text, std::string_view id) {
  for (std::size_t at = text.find("@task"); at != std::string_view::npos; at = text.find("@task", at + 1)) {
    std::string_view rest = text.substr(at + 5);
    std::size_t gap = 0;
    while (gap < rest.size() && (rest[gap] == ' ' || rest[gap] == '\t')) ++gap;
    if (gap == 0) continue;
    rest.remove_prefix(gap);
    if (rest.starts_with(id) && (rest.size() == id.size() || !is_digit(rest[id.size()]))) return true;
  }
  return false;
}

bool is_code_file(std::string_view path) {
  static const std::set<std::string, std::less<>> code = {
      "c",   "cc",  "cpp", "cxx", "h",    "hh",  "hpp", "hxx",   "py",  "js",    "mjs",   "cjs",  "ts",
      "tsx", "jsx", "go",  "rs",  "java", "kt",  "kts", "swift", "rb",  "php",   "cs",    "scala", "sh",
      "bash", "zsh", "ps1", "sql", "lua",  "pl",  "m",   "mm",    "dart", "ex",   "exs",   "erl",  "hs",
      "clj", "vue", "svelte", "zig", "nim", "r",   "jl"};
  return code.contains(extension_of(path));
}

bool looks_like_test(std::string_view path) {
  const fs::path p{std::string(path)};
  for (const auto& part : p.parent_path())
    if (part == "test" || part == "tests" || part == "__tests__" || part == "spec" || part == "specs") return true;
  return false;
}

bool test_named(std::string_view path) {
  const std::string name = fs::path(std::string(path)).filename().string();
  const std::string stem = fs::path(name).stem().string();
  const std::string lower = to_lower_ascii(stem);
  const bool camel = stem.size() > 4 && stem.starts_with("Test") && stem[4] >= 'A' && stem[4] <= 'Z';
  return lower == "test" || lower.starts_with("test_") || lower.ends_with("_test") || lower.ends_with("_tests") ||
         lower.ends_with(".test") || lower.ends_with(".spec") || lower.ends_with("_spec") || stem.ends_with("Test") ||
         stem.ends_with("Tests") || camel || lower == "conftest";
}

std::string decimal(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.2f", value);
  std::string out = buffer;
  while (out.ends_with('0')) out.pop_back();
  if (out.ends_with('.')) out.pop_back();
  return out;
}

std::string quoted_list(const std::vector<std::string>& items, std::size_t shown) {
  std::vector<std::string> head(items.begin(), items.begin() + static_cast<std::ptrdiff_t>(std::min(items.size(), shown)));
  std::string out = join(head, ", ");
  if (items.size() > shown) out += " and " + std::to_string(items.size() - shown) + " more";
  return out;
}

}  // namespace ct::protocol_rules
