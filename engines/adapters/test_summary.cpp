#include "engines/adapters/test_summary.h"

#include <array>
#include <charconv>
#include <functional>
#include <vector>

namespace ct {
namespace {

std::string strip_ansi(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\x1b' && i + 1 < text.size() && text[i + 1] == '[') {
      i += 2;
      while (i < text.size() && !(text[i] >= '@' && text[i] <= '~')) ++i;
      continue;
    }
    if (text[i] != '\r') out += text[i];
  }
  return out;
}

std::string_view trim_view(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

bool is_digit(char c) { return c >= '0' && c <= '9'; }

/// Reads a number at the start of `s`, advancing past it.
std::optional<std::int64_t> take_number(std::string_view& s) {
  std::int64_t value = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec != std::errc() || end == s.data()) return std::nullopt;
  s.remove_prefix(static_cast<std::size_t>(end - s.data()));
  return value;
}

/// "3 failed, 10 passed, 1 skipped" (separators ',' or '|' or ';'): each count with its word.
std::vector<std::pair<std::string, std::int64_t>> counted_words(std::string_view s) {
  std::vector<std::pair<std::string, std::int64_t>> out;
  while (!s.empty()) {
    s = trim_view(s);
    while (!s.empty() && (s.front() == ',' || s.front() == '|' || s.front() == ';')) s = trim_view(s.substr(1));
    auto n = take_number(s);
    if (!n) break;
    s = trim_view(s);
    std::size_t len = 0;
    while (len < s.size() && ((s[len] >= 'a' && s[len] <= 'z') || (s[len] >= 'A' && s[len] <= 'Z'))) ++len;
    if (len == 0) break;
    out.emplace_back(std::string(s.substr(0, len)), *n);
    s.remove_prefix(len);
  }
  return out;
}

struct Found {
  std::size_t line = 0;  // index of the last line that matched
  TestSummary summary;
};

using Parser = std::function<bool(std::string_view line, TestSummary& sum)>;

// ctest: "100% tests passed, 0 tests failed out of 116"; skipped tests are listed afterwards as
// "  12 - name (Skipped)" and are inside the total.
bool ctest_line(std::string_view line, TestSummary& sum) {
  line = trim_view(line);
  if (line.ends_with("(Skipped)") && !line.empty() && is_digit(line.front()) && sum.total) {
    ++sum.skipped;
    if (sum.passed > 0) --sum.passed;
    return true;
  }
  auto pct = line.find("% tests passed, ");
  if (pct == std::string_view::npos || pct == 0) return false;
  std::string_view rest = line.substr(pct + 16);
  auto failed = take_number(rest);
  if (!failed) return false;
  auto out_of = rest.find(" failed out of ");
  if (out_of == std::string_view::npos) return false;
  rest.remove_prefix(out_of + 15);
  auto total = take_number(rest);
  if (!total) return false;
  sum.failed = *failed;
  sum.total = *total;
  sum.passed = *total - *failed;
  sum.skipped = 0;
  return true;
}

// pytest: "=== 3 failed, 10 passed, 1 skipped in 0.12s ===" (or without the rules, with -q).
bool pytest_line(std::string_view line, TestSummary& sum) {
  line = trim_view(line);
  while (!line.empty() && line.front() == '=') line.remove_prefix(1);
  while (!line.empty() && line.back() == '=') line.remove_suffix(1);
  line = trim_view(line);
  auto in = line.rfind(" in ");
  if (in == std::string_view::npos) return false;
  std::string_view time = line.substr(in + 4);
  if (time.empty() || !is_digit(time.front()) || time.find('s') == std::string_view::npos) return false;
  std::string_view counts = line.substr(0, in);
  if (counts == "no tests ran") {
    sum = TestSummary{.format = sum.format};
    return true;
  }
  auto words = counted_words(counts);
  if (words.empty()) return false;
  TestSummary here{.format = sum.format};
  bool known = false;
  for (const auto& [word, n] : words) {
    if (word == "passed" || word == "xpassed") here.passed += n, known = true;
    else if (word == "failed" || word == "error" || word == "errors") here.failed += n, known = true;
    else if (word == "skipped" || word == "xfailed") here.skipped += n, known = true;
    else if (word != "warning" && word != "warnings" && word != "deselected" && word != "rerun") return false;
  }
  if (!known) return false;
  sum = here;
  return true;
}

// cargo test: "test result: ok. 12 passed; 0 failed; 1 ignored; 0 measured; 0 filtered out"
// — one per test binary, summed.
bool cargo_line(std::string_view line, TestSummary& sum) {
  line = trim_view(line);
  if (!line.starts_with("test result: ")) return false;
  auto dot = line.find(". ");
  if (dot == std::string_view::npos) return false;
  auto words = counted_words(line.substr(dot + 2));
  bool known = false;
  for (const auto& [word, n] : words) {
    if (word == "passed") sum.passed += n, known = true;
    else if (word == "failed") sum.failed += n, known = true;
    else if (word == "ignored") sum.skipped += n, known = true;
  }
  return known;
}

// go test: "--- FAIL: TestX (0.00s)" / "--- PASS:" / "--- SKIP:" per top-level test (with -v),
// "ok  \tpkg\t0.01s" / "FAIL\tpkg\t0.01s" per package. Counted in tests when passing tests are
// listed (-v), else in packages (see parse_test_summary).
struct GoCounts {
  std::int64_t test_pass = 0, test_fail = 0, test_skip = 0, pkg_ok = 0, pkg_fail = 0;
};

bool go_line(std::string_view line, GoCounts& go) {
  if (line.starts_with("--- FAIL: ")) return ++go.test_fail, true;
  if (line.starts_with("--- PASS: ")) return ++go.test_pass, true;
  if (line.starts_with("--- SKIP: ")) return ++go.test_skip, true;
  auto package_after = [&](std::string_view word) {
    if (!line.starts_with(word) || line.size() <= word.size()) return false;
    char sep = line[word.size()];
    if (sep != ' ' && sep != '\t') return false;
    std::string_view rest = trim_view(line.substr(word.size()));
    return !rest.empty() && rest.find_first_of(" \t") != 0;
  };
  if (package_after("ok")) {
    std::string_view rest = trim_view(line.substr(2));
    // "ok  \tpkg\t0.01s" or "(cached)"; a pytest or TAP "ok 1 - name" line has a number first.
    if (is_digit(rest.front())) return false;
    if (rest.find('\t') == std::string_view::npos && rest.find("  ") == std::string_view::npos) return false;
    return ++go.pkg_ok, true;
  }
  if (package_after("FAIL")) {
    std::string_view rest = trim_view(line.substr(4));
    if (rest.find('\t') == std::string_view::npos && rest.find("[") == std::string_view::npos) return false;
    return ++go.pkg_fail, true;
  }
  return false;
}

// jest: "Tests:       1 failed, 5 passed, 6 total".
bool jest_line(std::string_view line, TestSummary& sum) {
  line = trim_view(line);
  if (!line.starts_with("Tests:")) return false;
  auto words = counted_words(line.substr(6));
  TestSummary here{.format = sum.format};
  bool known = false;
  for (const auto& [word, n] : words) {
    if (word == "passed") here.passed += n, known = true;
    else if (word == "failed") here.failed += n, known = true;
    else if (word == "skipped" || word == "todo" || word == "pending") here.skipped += n, known = true;
    else if (word == "total") here.total = n;
  }
  if (!known) return false;
  sum = here;
  return true;
}

// vitest: " Tests  2 failed | 8 passed (10)".
bool vitest_line(std::string_view line, TestSummary& sum) {
  line = trim_view(line);
  if (!line.starts_with("Tests ") || line.starts_with("Tests:")) return false;
  std::string_view rest = trim_view(line.substr(6));
  std::optional<std::int64_t> total;
  if (rest.ends_with(")")) {
    auto open = rest.rfind('(');
    if (open != std::string_view::npos) {
      std::string_view inner = rest.substr(open + 1, rest.size() - open - 2);
      total = take_number(inner);
      rest = trim_view(rest.substr(0, open));
    }
  }
  auto words = counted_words(rest);
  TestSummary here{.format = sum.format};
  bool known = false;
  for (const auto& [word, n] : words) {
    if (word == "passed") here.passed += n, known = true;
    else if (word == "failed") here.failed += n, known = true;
    else if (word == "skipped" || word == "todo") here.skipped += n, known = true;
  }
  if (!known) return false;
  here.total = total;
  sum = here;
  return true;
}

// node --test: TAP "# pass 5" / "# fail 1" / "# skipped 0" / "# todo 0" / "# tests 6", or the
// spec reporter's "ℹ pass 5".
bool node_line(std::string_view line, TestSummary& sum) {
  line = trim_view(line);
  if (line.starts_with("# ")) line.remove_prefix(2);
  else if (line.starts_with("\xE2\x84\xB9 ")) line.remove_prefix(4);  // ℹ
  else return false;
  for (std::string_view word : {"pass ", "fail ", "skipped ", "todo ", "tests "}) {
    if (!line.starts_with(word)) continue;
    std::string_view rest = line.substr(word.size());
    auto n = take_number(rest);
    if (!n || !trim_view(rest).empty()) return false;
    if (word == "pass ") sum.passed = *n;
    else if (word == "fail ") sum.failed = *n;
    else if (word == "tests ") sum.total = *n;
    else sum.skipped += *n;  // skipped and todo
    return true;
  }
  return false;
}

/// The number before a trailing "%" of `s` ("90%", "85.2%"), within 0..100.
std::optional<double> trailing_percent(std::string_view s) {
  s = trim_view(s);
  if (!s.ends_with('%')) return std::nullopt;
  s.remove_suffix(1);
  std::size_t start = s.size();
  while (start > 0 && (is_digit(s[start - 1]) || s[start - 1] == '.')) --start;
  double value = 0;
  auto [end, ec] = std::from_chars(s.data() + start, s.data() + s.size(), value);
  if (ec != std::errc() || end != s.data() + s.size() || start == s.size() || value < 0 || value > 100)
    return std::nullopt;
  return value;
}

std::optional<double> leading_number(std::string_view s) {
  s = trim_view(s);
  double value = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec != std::errc() || end == s.data() || value < 0 || value > 100) return std::nullopt;
  return value;
}

bool starts_with_word(std::string_view line, std::string_view word) {
  return line.starts_with(word) && line.size() > word.size() && (line[word.size()] == ' ' || line[word.size()] == '\t');
}

// The coverage totals named in TestSummary::coverage.
std::optional<double> coverage_line(std::string_view line) {
  line = trim_view(line);
  if (starts_with_word(line, "TOTAL")) return trailing_percent(line);             // pytest-cov, gcovr
  if (line.starts_with("total:") && line.find("(statements)") != std::string_view::npos)
    return trailing_percent(line);                                                 // go tool cover -func
  if (line.starts_with("All files")) {                                             // istanbul's table
    auto bar = line.find('|');
    if (bar == std::string_view::npos) return std::nullopt;
    return leading_number(line.substr(bar + 1));
  }
  if (line.starts_with("lines.")) {                                                // lcov / genhtml
    auto colon = line.find(':');
    if (colon == std::string_view::npos) return std::nullopt;
    std::string_view rest = trim_view(line.substr(colon + 1));
    auto percent = rest.find('%');
    if (percent == std::string_view::npos) return std::nullopt;
    return trailing_percent(rest.substr(0, percent + 1));
  }
  if (auto at = line.find("coverage: "); at != std::string_view::npos) {           // go test -cover
    std::string_view rest = line.substr(at + 10);
    auto percent = rest.find("% of statements");
    if (percent == std::string_view::npos) return std::nullopt;
    return trailing_percent(rest.substr(0, percent + 1));
  }
  return std::nullopt;
}

}  // namespace

std::optional<TestSummary> parse_test_summary(std::string_view output) {
  const std::string text = strip_ansi(output);
  std::vector<std::string_view> lines;
  std::string_view rest = text;
  while (!rest.empty()) {
    auto newline = rest.find('\n');
    lines.push_back(rest.substr(0, newline));
    if (newline == std::string_view::npos) break;
    rest.remove_prefix(newline + 1);
  }

  struct Candidate {
    std::string format;
    Parser parse;
  };
  const std::array<Candidate, 6> candidates = {{{"ctest", ctest_line},
                                                {"pytest", pytest_line},
                                                {"cargo", cargo_line},
                                                {"jest", jest_line},
                                                {"vitest", vitest_line},
                                                {"node", node_line}}};
  std::optional<Found> best;
  for (const auto& candidate : candidates) {
    Found found;
    found.summary.format = candidate.format;
    bool any = false;
    for (std::size_t i = 0; i < lines.size(); ++i) {
      if (candidate.parse(lines[i], found.summary)) {
        any = true;
        found.line = i;
      }
    }
    if (any && (!best || found.line > best->line)) best = std::move(found);
  }
  GoCounts go;
  std::optional<std::size_t> go_last;
  for (std::size_t i = 0; i < lines.size(); ++i)
    if (go_line(lines[i], go)) go_last = i;
  if (go_last && (!best || *go_last > best->line)) {
    Found found;
    found.line = *go_last;
    found.summary.format = "go";
    // Without -v go prints only the failing tests: counting those next to no passing ones would
    // say "0 passed", so packages are counted then.
    if (go.test_pass > 0) {
      found.summary.passed = go.test_pass;
      found.summary.failed = go.test_fail;
      found.summary.skipped = go.test_skip;
    } else {
      found.summary.unit = "packages";
      found.summary.passed = go.pkg_ok;
      found.summary.failed = go.pkg_fail;
    }
    best = std::move(found);
  }
  if (!best) return std::nullopt;
  for (const auto line : lines)
    if (auto coverage = coverage_line(line)) best->summary.coverage = coverage;
  return best->summary;
}

}  // namespace ct
