#include "engines/rules/protocol.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <system_error>

#include "core/file_read.h"
#include "core/sha256.h"
#include "core/text.h"
#include "engines/project/project.h"
#include "engines/rules/release_engine.h"

namespace ct {
namespace {

namespace fs = std::filesystem;

// ---- text scanning (no std::regex: output files are up to 256 KiB, and libstdc++'s regex
// recurses per character) ---------------------------------------------------------------------

bool is_alnum(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool is_digit(char c) { return c >= '0' && c <= '9'; }

/// `word` in `text` with no letter or digit right before or after it.
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

bool has_heading(std::string_view text) {
  for (auto line : split_lines(text))
    if (heading_text(line)) return true;
  return false;
}

/// A heading that names one of `words` ("## 5. References" for "references").
bool has_heading_with(std::string_view text, std::initializer_list<std::string_view> words) {
  for (auto line : split_lines(text)) {
    auto heading = heading_text(line);
    if (heading && contains_any_word(*heading, words)) return true;
  }
  return false;
}

/// Lines that introduce one option of a decision: "### Option A", "- Option 2: Postgres",
/// "| Option B | …", "**Alternative 1**" (the word, then a name or number; a header cell
/// "| Option |" is not one).
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

/// The RFC 2119 keywords written in capitals, in the order of the RFC.
std::vector<std::string> rfc2119_keywords(std::string_view text) {
  std::vector<std::string> found;
  for (std::string_view word : {"MUST", "SHALL", "REQUIRED", "SHOULD", "RECOMMENDED", "MAY", "OPTIONAL"})
    if (contains_word(text, word)) found.emplace_back(word);
  return found;
}

/// A version line: "version: 1.0.0", "Version 2.1", "**Version**: v0.3" (lowercase text).
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

/// A time estimate in a title or description: "2h", "1.5d", "3wk" written together, or a
/// duration in words ("3 days", "2-3 hours") that reads as an estimate — after "~", "est",
/// "estimate", "effort", "eta", "takes", "about", "approx" or inside brackets — so that "tokens
/// expire after 30 days" stays a requirement.
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

/// "12 passed", "3 failed", "40 tests": a test run's counts written out.
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

/// "@task T001" (any spaces or tabs between, no digit after the id).
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

std::string extension_of(std::string_view path) {
  std::string name = fs::path(std::string(path)).filename().string();
  auto dot = name.rfind('.');
  return dot == std::string::npos || dot == 0 ? "" : to_lower_ascii(name.substr(dot + 1));
}

/// Source code, as opposed to documents and data.
bool is_code_file(std::string_view path) {
  static const std::set<std::string, std::less<>> code = {
      "c",   "cc",  "cpp", "cxx", "h",    "hh",  "hpp", "hxx",   "py",  "js",    "mjs",   "cjs",  "ts",
      "tsx", "jsx", "go",  "rs",  "java", "kt",  "kts", "swift", "rb",  "php",   "cs",    "scala", "sh",
      "bash", "zsh", "ps1", "sql", "lua",  "pl",  "m",   "mm",    "dart", "ex",   "exs",   "erl",  "hs",
      "clj", "vue", "svelte", "zig", "nim", "r",   "jl"};
  return code.contains(extension_of(path));
}

/// A file in a test folder (tests/, test/, __tests__/, spec/) or named like a test.
bool looks_like_test(std::string_view path) {
  const fs::path p{std::string(path)};
  for (const auto& part : p.parent_path())
    if (part == "test" || part == "tests" || part == "__tests__" || part == "spec" || part == "specs") return true;
  return false;
}

/// The usual test file names: test_x.py, x_test.go, x.test.ts, x.spec.js, XTest.java, x_spec.rb.
bool test_named(std::string_view path) {
  const std::string name = fs::path(std::string(path)).filename().string();
  const std::string stem = fs::path(name).stem().string();
  const std::string lower = to_lower_ascii(stem);
  const bool camel = stem.size() > 4 && stem.starts_with("Test") && stem[4] >= 'A' && stem[4] <= 'Z';
  return lower == "test" || lower.starts_with("test_") || lower.ends_with("_test") || lower.ends_with("_tests") ||
         lower.ends_with(".test") || lower.ends_with(".spec") || lower.ends_with("_spec") || stem.ends_with("Test") ||
         stem.ends_with("Tests") || camel || lower == "conftest";
}

/// "0.3", "85.71", "90": at most two decimals, no trailing zeros.
std::string decimal(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.2f", value);
  std::string out = buffer;
  while (out.ends_with('0')) out.pop_back();
  if (out.ends_with('.')) out.pop_back();
  return out;
}

std::string quoted_list(const std::vector<std::string>& items, std::size_t shown = 5) {
  std::vector<std::string> head(items.begin(), items.begin() + static_cast<std::ptrdiff_t>(std::min(items.size(), shown)));
  std::string out = join(head, ", ");
  if (items.size() > shown) out += " and " + std::to_string(items.size() - shown) + " more";
  return out;
}

// ---- rule outcomes --------------------------------------------------------------------------

RuleOutcome passed(std::string message = "") { return {RuleStatus::Pass, std::move(message)}; }
RuleOutcome failed(std::string message) { return {RuleStatus::Fail, std::move(message)}; }
RuleOutcome skipped(std::string message) { return {RuleStatus::Skipped, std::move(message)}; }

std::string no_task() { return "no subject task: name one with id, or link the entry to its task"; }

/// Why a rule that reads the entry is skipped; the rule that requires an entry says more.
std::string no_entry(const RuleInput&) { return "no manifest entry to read"; }

/// Why the rule that requires an entry fails: "no research entry is linked to T001 (…)".
std::string entry_missing(const RuleInput& in) {
  std::vector<std::string> types(in.protocol.agent_types.begin(), in.protocol.agent_types.end());
  return "no " + join(types, " or ") + " entry" +
         (in.evidence.task ? " is linked to " + in.evidence.task->id : std::string(" is named")) +
         " (name one with entryId)";
}

/// Why the output file cannot be read (a failure: the entry names a file that is not there),
/// or why there is nothing to read (skipped: no entry); nullopt when its text is at hand.
std::optional<RuleOutcome> output_unavailable(const RuleInput& in) {
  if (!in.evidence.entry) return skipped(no_entry(in));
  const auto& output = in.evidence.output;
  if (!output) return skipped("the output file was not read");
  switch (output->state) {
    case FileState::Read: return std::nullopt;
    case FileState::Missing: return failed("the output file " + output->path + " does not exist");
    case FileState::Outside: return failed("the output file " + output->path + " leads outside the project");
    case FileState::NotRegular: return failed("the output file " + output->path + " is not a regular file");
    case FileState::Unreadable: return failed("the output file " + output->path + " cannot be read");
  }
  return failed("the output file cannot be read");
}

/// Appended to a failure found in a file read only in part.
std::string partly(const ProjectFile& file) {
  return file.truncated ? " (in its first " + std::to_string(file.content.size() / 1024) + " KiB)" : "";
}

RuleOutcome agent_type_rule(const RuleInput& in) {
  const auto& types = in.protocol.agent_types;
  std::vector<std::string> names(types.begin(), types.end());
  if (!in.evidence.entry) return in.protocol.needs_entry ? failed(entry_missing(in)) : skipped(no_entry(in));
  const ResearchEntry& entry = *in.evidence.entry;
  if (std::find(types.begin(), types.end(), entry.agent_type) != types.end()) return passed();
  return failed(entry.id + " has agentType '" + entry.agent_type + "'; " + std::string(in.protocol.name) +
                " output has agentType " + join(names, " or "));
}

std::string when(TimeMs at) { return format_iso8601(at); }

/// The subject's latest test run passed (IMPL-004, RLSE-003, TEST-004).
RuleOutcome tests_pass_rule(const RuleInput& in) {
  const auto& run = in.evidence.test_run;
  if (!run)
    return failed("no validate.test.run is recorded" +
                  (in.evidence.task ? " for " + in.evidence.task->id + " or since it was created" : std::string()));
  if (!run->passed || run->failed.value_or(0) > 0)
    return failed("the latest test run (" + when(run->at) + ") failed" +
                  (run->failed ? ": " + std::to_string(*run->failed) + " failing" : std::string()));
  return passed("the test run of " + when(run->at) + " passed");
}

/// Every other check recorded about the task passed on its latest run (CONT-003, VALID-003).
RuleOutcome recorded_checks_rule(const RuleInput& in) {
  if (!in.evidence.task) return skipped(no_task());
  const std::string own = "protocol." + std::string(in.protocol.name);
  std::vector<std::string> failing;
  std::size_t others = 0;
  for (const auto& check : in.evidence.checks) {
    if (check.check == own) continue;
    ++others;
    if (!check.last_passed) failing.push_back(check.check);
  }
  if (others == 0)
    return skipped("no other check is recorded for " + in.evidence.task->id +
                   " (validate.compliance.record, validate.test.run {id})");
  if (!failing.empty()) return failed("the latest result of " + quoted_list(failing) + " failed");
  return passed(std::to_string(others) + " recorded check" + (others == 1 ? "" : "s") + " passed");
}

/// "@task T001" in each of the task's files that can be read (IMPL-003, CONT-002).
RuleOutcome provenance_rule(const RuleInput& in) {
  if (!in.evidence.task) return skipped(no_task());
  const Task& task = *in.evidence.task;
  if (task.files.empty()) return skipped(task.id + " lists no files (tasks.update {id, files})");
  std::vector<std::string> untagged, missing, unreadable;
  std::size_t checked = 0;
  for (const auto& file : in.evidence.task_files) {
    if (file.state == FileState::Read) {
      ++checked;
      if (!has_task_tag(file.content, task.id)) untagged.push_back(file.path + partly(file));
    } else if (file.state == FileState::Missing) {
      missing.push_back(file.path);
    } else {
      unreadable.push_back(file.path + " (" + std::string(to_string(file.state)) + ")");
    }
  }
  if (checked == 0) {
    std::vector<std::string> all = missing;
    all.insert(all.end(), unreadable.begin(), unreadable.end());
    return skipped("none of " + task.id + "'s files can be read: " + quoted_list(all));
  }
  if (!untagged.empty())
    return failed(quoted_list(untagged) + (untagged.size() == 1 ? " has" : " have") + " no @task " + task.id + " tag");
  std::string note = std::to_string(checked) + " file" + (checked == 1 ? "" : "s") + " tagged";
  if (!missing.empty()) note += "; not there: " + quoted_list(missing);
  return passed(std::move(note));
}

/// CONT-003: the verification gates verification.required names are passed, and so is every
/// check recorded about the task.
RuleOutcome gates_and_checks_rule(const RuleInput& in) {
  if (!in.evidence.task) return skipped(no_task());
  const auto& missing = in.evidence.missing_gates;
  if (!missing.empty())
    return failed(in.evidence.task->id + " has not passed the verification gate" + (missing.size() == 1 ? " " : "s ") +
                  quoted_list(missing) + " (verification.required)");
  RuleOutcome checks = recorded_checks_rule(in);
  if (in.evidence.required_gates.empty() || checks.status == RuleStatus::Fail) return checks;
  const std::string gates = std::to_string(in.evidence.required_gates.size()) + " required gate" +
                            (in.evidence.required_gates.size() == 1 ? "" : "s") + " passed";
  return passed(checks.status == RuleStatus::Pass ? gates + "; " + checks.message : gates);
}

RuleOutcome not_observable(std::string why) { return skipped(std::move(why)); }

// ---- research -------------------------------------------------------------------------------

RuleOutcome research_no_code(const RuleInput& in) {
  if (!in.evidence.entry) return skipped(no_entry(in));
  if (is_code_file(in.evidence.entry->file))
    return failed(in.evidence.entry->file + " is source code: research writes a document and changes no code");
  return passed("the output is a document (changes to code are in git, which this check does not read)");
}

RuleOutcome research_sources(const RuleInput& in) {
  if (auto unavailable = output_unavailable(in)) return *unavailable;
  const auto& output = *in.evidence.output;
  if (has_url(in.output_lower) ||
      has_heading_with(output.content, {"sources", "references", "bibliography", "citations", "links"}))
    return passed();
  return failed(output.path + " cites no sources: no URL and no Sources or References section" + partly(output));
}

RuleOutcome research_linked(const RuleInput& in) {
  if (!in.evidence.entry) return skipped(no_entry(in));
  const ResearchEntry& entry = *in.evidence.entry;
  if (entry.linked_tasks.empty()) return failed(entry.id + " links no task (linkedTasks is empty)");
  if (!in.evidence.missing_links.empty())
    return failed(entry.id + " links " + quoted_list(in.evidence.missing_links) + ", which do" +
                  (in.evidence.missing_links.size() == 1 ? "es" : "") + " not exist");
  if (in.evidence.task &&
      std::find(entry.linked_tasks.begin(), entry.linked_tasks.end(), in.evidence.task->id) == entry.linked_tasks.end())
    return failed(entry.id + " is not linked to " + in.evidence.task->id);
  return passed();
}

RuleOutcome research_entry(const RuleInput& in) {
  if (in.evidence.entry) return passed();
  return failed(entry_missing(in));
}

RuleOutcome research_output(const RuleInput& in) {
  if (auto unavailable = output_unavailable(in)) return *unavailable;
  const ResearchEntry& entry = *in.evidence.entry;
  const ProjectFile& output = *in.evidence.output;
  if (!entry.file_checksum.empty() && entry.file_checksum != output.sha256)
    return failed(output.path + " changed after it was recorded (its SHA-256 is not the entry's fileChecksum)");
  if (trim(output.content).empty()) return failed(output.path + " is empty");
  if (!has_heading(output.content))
    return failed(output.path + " has no Markdown heading: it is not the structured output (title, summary, "
                  "content, references)" + partly(output));
  return passed();
}

RuleOutcome research_findings(const RuleInput& in) {
  if (!in.evidence.entry) return skipped(no_entry(in));
  const std::size_t n = in.evidence.entry->key_findings.size();
  if (n >= 3 && n <= 7) return passed();
  return failed("keyFindings has " + std::to_string(n) + " item" + (n == 1 ? "" : "s") + "; 3–7 are required");
}

// ---- consensus ------------------------------------------------------------------------------

constexpr double kConsensusThreshold = 0.5;

RuleOutcome consensus_options(const RuleInput& in) {
  if (auto unavailable = output_unavailable(in)) return *unavailable;
  const int options = count_option_lines(in.output_lower);
  if (options >= 2) return passed(std::to_string(options) + " options");
  return failed(in.evidence.output->path + " weighs " + std::to_string(options) + " option" +
                (options == 1 ? "" : "s") + "; a voting matrix needs at least 2 (lines such as \"### Option A\")" +
                partly(*in.evidence.output));
}

RuleOutcome consensus_rationale(const RuleInput& in) {
  if (auto unavailable = output_unavailable(in)) return *unavailable;
  if (contains_any_word(in.output_lower, {"rationale", "rationales"})) return passed();
  return failed(in.evidence.output->path + " gives no rationale" + partly(*in.evidence.output));
}

RuleOutcome consensus_confidence(const RuleInput& in) {
  if (!in.evidence.entry) return skipped(no_entry(in));
  if (in.evidence.entry->confidence) return passed();
  return failed(in.evidence.entry->id + " records no confidence (0 to 1)");
}

RuleOutcome consensus_threshold(const RuleInput& in) {
  if (!in.evidence.entry) return skipped(no_entry(in));
  const auto& confidence = in.evidence.entry->confidence;
  if (!confidence) return skipped("no confidence is recorded (CONS-003)");
  if (*confidence >= kConsensusThreshold) return passed();
  return failed("confidence " + decimal(*confidence) + " is below the 0.5 threshold: no consensus");
}

bool escalated(const RuleInput& in) {
  const ResearchEntry& entry = *in.evidence.entry;
  return entry.status == ResearchStatus::Blocked || !entry.needs_followup.empty() ||
         in.output_lower.find("escalat") != std::string_view::npos;
}

RuleOutcome consensus_dissent(const RuleInput& in) {
  if (auto unavailable = output_unavailable(in)) return *unavailable;
  if (contains_any_word(in.output_lower, {"dissent", "dissents", "dissenting", "objection", "objections", "disagree",
                                          "disagreement", "minority"}))
    return passed();
  return failed(in.evidence.output->path + " records no dissent (or that there was none)");
}

RuleOutcome consensus_escalation(const RuleInput& in) {
  if (!in.evidence.entry) return skipped(no_entry(in));
  const auto& confidence = in.evidence.entry->confidence;
  if (!confidence) return skipped("no confidence is recorded (CONS-003)");
  if (*confidence >= kConsensusThreshold) return passed("not needed: the threshold is reached");
  if (escalated(in)) return passed("escalated");
  return failed("below the threshold and not escalated: no blocked status, needsFollowup or escalation in the output");
}

// ---- specification --------------------------------------------------------------------------

RuleOutcome spec_keywords(const RuleInput& in) {
  if (auto unavailable = output_unavailable(in)) return *unavailable;
  auto found = rfc2119_keywords(in.evidence.output->content);
  if (!found.empty()) return passed(join(found, ", "));
  return failed(in.evidence.output->path + " uses no RFC 2119 keyword in capitals (MUST, SHOULD, MAY)" +
                partly(*in.evidence.output));
}

RuleOutcome spec_version(const RuleInput& in) {
  if (auto unavailable = output_unavailable(in)) return *unavailable;
  if (has_version_line(in.output_lower)) return passed();
  return failed(in.evidence.output->path + " states no version (a line such as \"Version: 1.0.0\")" +
                partly(*in.evidence.output));
}

RuleOutcome section_rule(const RuleInput& in, std::initializer_list<std::string_view> words, std::string what) {
  if (auto unavailable = output_unavailable(in)) return *unavailable;
  if (has_heading_with(in.evidence.output->content, words)) return passed();
  return failed(in.evidence.output->path + " has no " + what + " section" + partly(*in.evidence.output));
}

RuleOutcome spec_scope(const RuleInput& in) { return section_rule(in, {"scope"}, "Scope"); }
RuleOutcome spec_conformance(const RuleInput& in) {
  return section_rule(in, {"conformance", "compliance"}, "Conformance");
}
RuleOutcome spec_changelog(const RuleInput& in) {
  return section_rule(in, {"changelog", "changes", "history", "revisions", "revision"}, "Changelog");
}
RuleOutcome spec_references(const RuleInput& in) { return section_rule(in, {"references"}, "References"); }

// ---- decomposition --------------------------------------------------------------------------

constexpr int kMaxDepth = 3;
constexpr std::size_t kMaxSiblings = 7;

/// The subject's open subtree: children per parent, cancelled tasks left out.
struct Tree {
  std::map<std::string, std::vector<const Task*>> children;
  std::vector<const Task*> tasks;
};

Tree open_tree(const ProtocolEvidence& evidence) {
  Tree tree;
  for (const auto& task : evidence.subtree) {
    if (task.status == TaskStatus::Cancelled) continue;
    tree.tasks.push_back(&task);
    tree.children[task.parent].push_back(&task);
  }
  return tree;
}

RuleOutcome dcmp_mece(const RuleInput& in) {
  if (!in.evidence.task) return skipped(no_task());
  const Task& root = *in.evidence.task;
  Tree tree = open_tree(in.evidence);
  auto found = tree.children.find(root.id);
  if (found == tree.children.end() || found->second.empty())
    return failed(root.id + " has no open subtasks: nothing is decomposed");
  for (const auto& [parent, kids] : tree.children) {
    std::map<std::string, std::string> titles;
    for (const Task* kid : kids) {
      auto [at, inserted] = titles.emplace(to_lower_ascii(trim(kid->title)), kid->id);
      if (!inserted)
        return failed(at->second + " and " + kid->id + " under " + parent + " have the same title: the parts overlap");
    }
  }
  return passed("no two parts share a title (whether they cover the whole is for a reviewer)");
}

RuleOutcome dcmp_cycles(const RuleInput& in) {
  if (!in.evidence.task) return skipped(no_task());
  if (in.evidence.cycles.empty()) return passed();
  const auto& cycle = in.evidence.cycles.front();
  std::string path = join(cycle, " → ");
  if (!cycle.empty()) path += " → " + cycle.front();
  return failed(std::to_string(in.evidence.cycles.size()) + " dependency cycle" +
                (in.evidence.cycles.size() == 1 ? "" : "s") + " among the subtasks: " + path);
}

RuleOutcome dcmp_depth(const RuleInput& in) {
  if (!in.evidence.task) return skipped(no_task());
  const Task& root = *in.evidence.task;
  std::map<std::string, int> depth{{root.id, in.evidence.depth}};
  int deepest = in.evidence.depth;
  std::string deepest_id = root.id;
  // graph_tasks orders parents before their children only within one level; iterate to a fixpoint.
  bool changed = true;
  while (changed) {
    changed = false;
    for (const auto& task : in.evidence.subtree) {
      if (depth.contains(task.id)) continue;
      auto parent = depth.find(task.parent);
      if (parent == depth.end()) continue;
      depth[task.id] = parent->second + 1;
      changed = true;
      if (parent->second + 1 > deepest) deepest = parent->second + 1, deepest_id = task.id;
    }
  }
  if (deepest <= kMaxDepth) return passed("depth " + std::to_string(deepest));
  return failed(deepest_id + " is at depth " + std::to_string(deepest) + "; at most 3 levels (epic > task > subtask)");
}

RuleOutcome dcmp_atomic(const RuleInput& in) {
  if (!in.evidence.task) return skipped(no_task());
  Tree tree = open_tree(in.evidence);
  std::vector<std::string> vague;
  std::size_t leaves = 0;
  for (const Task* task : tree.tasks) {
    if (tree.children.contains(task->id)) continue;
    ++leaves;
    if (task->acceptance.empty() && task->size != TaskSize::Small) vague.push_back(task->id);
  }
  if (leaves == 0) return skipped(in.evidence.task->id + " has no open subtasks (DCMP-001)");
  if (vague.empty()) return passed(std::to_string(leaves) + " leaves");
  return failed(quoted_list(vague) + (vague.size() == 1 ? " has" : " have") +
                " neither acceptance criteria nor size small: not atomic");
}

RuleOutcome dcmp_estimates(const RuleInput& in) {
  if (!in.evidence.task) return skipped(no_task());
  std::vector<const Task*> all{&*in.evidence.task};
  for (const auto& task : in.evidence.subtree)
    if (task.status != TaskStatus::Cancelled) all.push_back(&task);
  for (const Task* task : all) {
    for (const std::string* text : {&task->title, &task->description}) {
      if (auto estimate = time_estimate(*text))
        return failed(task->id + "'s " + (text == &task->title ? "title" : "description") +
                      " holds a time estimate: '" + *estimate + "'");
    }
  }
  return passed();
}

RuleOutcome dcmp_siblings(const RuleInput& in) {
  if (!in.evidence.task) return skipped(no_task());
  Tree tree = open_tree(in.evidence);
  for (const auto& [parent, kids] : tree.children)
    if (kids.size() > kMaxSiblings)
      return failed(parent + " has " + std::to_string(kids.size()) + " open subtasks; at most 7 siblings");
  return passed();
}

// ---- implementation and contribution --------------------------------------------------------

RuleOutcome impl_atomic_writes(const RuleInput&) {
  return not_observable("whether files were written atomically cannot be seen afterwards; review the code");
}

RuleOutcome impl_style(const RuleInput&) {
  return not_observable("style is the project's linter's to check; CLEO runs none");
}

RuleOutcome cont_commits(const RuleInput&) {
  return not_observable("commit messages are in git, which validate.protocol does not read; check `git log` for "
                        "<type>: <summary>");
}

RuleOutcome cont_conflicts(const RuleInput& in) {
  if (!in.evidence.task) return skipped(no_task());
  const Task& task = *in.evidence.task;
  if (task.files.empty()) return skipped(task.id + " lists no files");
  std::vector<std::string> unflagged;
  for (const auto& overlap : in.evidence.overlaps) {
    const bool noted = std::any_of(task.notes.begin(), task.notes.end(),
                                   [&](const Note& note) { return contains_word(note.text, overlap.task_id); });
    if (!noted) unflagged.push_back(overlap.task_id + " (" + overlap.file + ")");
  }
  if (unflagged.empty())
    return passed(in.evidence.overlaps.empty() ? "no other active task lists its files" : "overlaps are noted");
  return failed("active " + quoted_list(unflagged) + " also work on its files; no note of " + task.id + " names them");
}

// ---- release --------------------------------------------------------------------------------

std::string no_release(const RuleInput& in) {
  return (in.evidence.task ? in.evidence.task->id : std::string("the subject")) + " is in no release";
}

RuleOutcome release_semver(const RuleInput& in) {
  if (!in.evidence.task) return skipped(no_task());
  if (!in.evidence.release) return failed(no_release(in));
  if (normalize_semver(in.evidence.release->version)) return passed(in.evidence.release->version);
  return failed("'" + in.evidence.release->version + "' is not a semantic version");
}

RuleOutcome release_changelog(const RuleInput& in) {
  if (!in.evidence.release) return skipped(no_release(in));
  const std::string& version = in.evidence.release->version;
  const auto& changelog = in.evidence.changelog;
  if (!changelog || changelog->state == FileState::Missing) return failed("CHANGELOG.md does not exist");
  if (changelog->state != FileState::Read)
    return failed("CHANGELOG.md cannot be read (" + std::string(to_string(changelog->state)) + ")");
  if (changelog_section(changelog->content, version)) return passed();
  return failed("CHANGELOG.md has no section for " + version + partly(*changelog));
}

RuleOutcome release_tag_rule(const RuleInput& in) {
  if (!in.evidence.release) return skipped(no_release(in));
  const Release& release = *in.evidence.release;
  if (release.tag.empty()) return skipped(release.version + " is not tagged yet");
  if (release.tag == release_tag(release.version)) return passed(release.tag);
  return failed("the tag " + release.tag + " does not name the version " + release.version + " (" +
                release_tag(release.version) + ")");
}

RuleOutcome release_versions(const RuleInput& in) {
  if (!in.evidence.release) return skipped(no_release(in));
  const Release& release = *in.evidence.release;
  if (release.status != ReleaseStatus::Released) return skipped(release.version + " is not shipped yet");
  if (in.evidence.release_superseded) return skipped("a later release was shipped after " + release.version);
  std::vector<std::string> stale, checked;
  for (const auto& file : in.evidence.version_files) {
    if (file.state != FileState::Read) continue;
    checked.push_back(file.path);
    if (file.content.find(release.version) == std::string::npos) stale.push_back(file.path);
  }
  if (checked.empty()) return skipped("no VERSION, package.json or release.versionFile to compare");
  if (stale.empty()) return passed(quoted_list(checked));
  return failed(quoted_list(stale) + (stale.size() == 1 ? " does" : " do") + " not state " + release.version);
}

RuleOutcome release_rollback(const RuleInput& in) {
  if (!in.evidence.release) return skipped(no_release(in));
  const Release& release = *in.evidence.release;
  std::string text = to_lower_ascii(release.notes);
  if (in.evidence.changelog && in.evidence.changelog->state == FileState::Read)
    if (auto section = changelog_section(in.evidence.changelog->content, release.version))
      text += "\n" + to_lower_ascii(*section);
  if (contains_any_word(text, {"rollback", "roll back", "revert", "downgrade"})) return passed();
  return failed("neither the notes of " + release.version + " nor its changelog section describe a rollback");
}

// ---- validation -----------------------------------------------------------------------------

/// Lowercase, runs of whitespace as one space.
std::string normalized(std::string_view text) {
  std::string out;
  for (char c : text) {
    const bool space = c == ' ' || c == '\t' || c == '\n' || c == '\r';
    if (space) {
      if (!out.empty() && out.back() != ' ') out += ' ';
    } else {
      out += static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
    }
  }
  if (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

RuleOutcome valid_matches_spec(const RuleInput& in) {
  if (!in.evidence.task) return skipped(no_task());
  const Task& task = *in.evidence.task;
  if (task.acceptance.empty()) return skipped(task.id + " has no acceptance criteria to validate against");
  if (auto unavailable = output_unavailable(in)) return *unavailable;
  const std::string report = normalized(in.evidence.output->content);
  std::vector<std::string> unaddressed;
  for (std::size_t i = 0; i < task.acceptance.size(); ++i) {
    const std::string n = std::to_string(i + 1);
    const bool named = report.find(normalized(task.acceptance[i])) != std::string::npos ||
                       contains_any_word(report, {"ac" + n, "ac-" + n, "criterion " + n});
    if (!named) unaddressed.push_back(n + " (" + clip(task.acceptance[i], 40) + ")");
  }
  if (unaddressed.empty()) return passed(std::to_string(task.acceptance.size()) + " criteria addressed");
  return failed("the report does not address acceptance criteri" + std::string(unaddressed.size() == 1 ? "on " : "a ") +
                quoted_list(unaddressed) + ": quote each, or refer to it as AC<n>");
}

RuleOutcome valid_tests_run(const RuleInput& in) {
  const auto& run = in.evidence.test_run;
  if (!run)
    return failed("no validate.test.run is recorded" +
                  (in.evidence.task ? " for " + in.evidence.task->id + " or since it was created" : std::string()));
  return passed("tests ran at " + when(run->at) + (run->passed ? " and passed" : " and failed"));
}

RuleOutcome valid_report(const RuleInput& in) {
  if (!in.evidence.entry) return skipped(no_entry(in));
  if (!in.evidence.entry->key_findings.empty()) return passed();
  return failed(in.evidence.entry->id + " reports no keyFindings");
}

RuleOutcome valid_classified(const RuleInput& in) {
  if (auto unavailable = output_unavailable(in)) return *unavailable;
  if (contains_any_word(in.output_lower, {"severity", "critical", "major", "minor", "blocker", "blocking"}))
    return passed();
  return failed(in.evidence.output->path + " classifies no finding (severity: critical, major, minor)");
}

// ---- testing --------------------------------------------------------------------------------

RuleOutcome test_framework(const RuleInput& in) {
  if (!trim(in.evidence.test_command).empty()) return passed(in.evidence.test_command);
  return failed("no test framework is configured: validate.testCommand is empty");
}

RuleOutcome test_naming(const RuleInput& in) {
  if (!in.evidence.task) return skipped(no_task());
  std::vector<std::string> tests, misnamed;
  for (const auto& file : in.evidence.task->files) {
    if (!is_code_file(file) || !(looks_like_test(file) || test_named(file))) continue;
    tests.push_back(file);
    if (!test_named(file)) misnamed.push_back(file);
  }
  if (tests.empty()) return skipped(in.evidence.task->id + " lists no test files");
  if (misnamed.empty()) return passed();
  return failed(quoted_list(misnamed) + ": test files are named test_x, x_test, x.test or x.spec");
}

RuleOutcome test_coverage_reported(const RuleInput& in) {
  if (!in.evidence.test_run) return skipped("no test run is recorded (TEST-004)");
  if (in.evidence.test_run->coverage) return passed(decimal(*in.evidence.test_run->coverage) + "%");
  return failed("the test run of " + when(in.evidence.test_run->at) + " reports no coverage total");
}

RuleOutcome test_requirements(const RuleInput&) {
  return not_observable("which requirement each test covers is not recorded; review the tests against the spec");
}

RuleOutcome test_counts_reported(const RuleInput& in) {
  if (!in.evidence.entry) return skipped(no_entry(in));
  const ResearchEntry& entry = *in.evidence.entry;
  std::string findings = to_lower_ascii(join(entry.key_findings, "\n"));
  if (has_count_summary(findings) || (in.evidence.output && in.evidence.output->state == FileState::Read &&
                                      has_count_summary(in.output_lower)))
    return passed();
  return failed(entry.id + " states no test counts (\"12 passed, 0 failed\") in keyFindings or its file");
}

RuleOutcome test_coverage_threshold(const RuleInput& in) {
  const std::int64_t threshold = in.evidence.coverage_threshold;
  if (threshold <= 0) return skipped("validate.coverageThreshold is 0: no threshold");
  if (!in.evidence.test_run) return skipped("no test run is recorded (TEST-004)");
  const auto& coverage = in.evidence.test_run->coverage;
  if (!coverage) return skipped("the test run reports no coverage total (TEST-003)");
  const std::string figure = decimal(*coverage) + "%";
  if (*coverage + 1e-9 >= static_cast<double>(threshold)) return passed(figure);
  return failed("coverage " + figure + " is below validate.coverageThreshold " + std::to_string(threshold) + "%");
}

// ---- the table ------------------------------------------------------------------------------

std::vector<ProtocolInfo> build_protocols() {
  using enum RuleLevel;
  return {
      {.protocol = Protocol::Research, .name = "research", .code = ErrorCode::ProtocolResearch,
       .purpose = "Investigate and report findings, changing no code",
       .agent_types = {"research"}, .needs_entry = false,  // RSCH-004 itself requires the entry
       .rules = {
           {"RSCH-001", Must, "Changes no code: the output is a document, not source code",
            "write the findings to a Markdown file under .cleo/agent-outputs/ and record it with research.add",
            research_no_code},
           {"RSCH-002", Should, "Cites its sources (URLs, or a Sources or References section)",
            "add a References section with the URLs and documents used", research_sources},
           {"RSCH-003", Must, "Links its tasks through linkedTasks (tasks that exist)",
            call("research.link", {{"id", "{entryId}"}, {"taskId", "{id}"}}),
            research_linked},
           {"RSCH-004", Must, "Appends a manifest entry for its output",
            call("research.add", {{"id", "{entryId}"}, {"file", "…"}, {"title", "…"}, {"status", "complete"},
                                  {"keyFindings", json::Value::Array{"…"}}, {"linkedTasks", json::Value::Array{"{id}"}}}),
            research_entry},
           {"RSCH-005", Must, "Writes the structured output file (headings; unchanged since it was recorded)",
            "write the file the entry names with a title, Summary, Content and References sections, then record it "
            "again",
            research_output},
           {"RSCH-006", Must, "States 3–7 key findings", "state the 3–7 most important findings, one sentence each",
            research_findings},
           {"RSCH-007", Must, "Is recorded with agentType research", "record the entry with agentType 'research'",
            agent_type_rule},
       }},
      {.protocol = Protocol::Consensus, .name = "consensus", .code = ErrorCode::ProtocolConsensus,
       .purpose = "Decide between options and record the vote",
       .agent_types = {"analysis"}, .needs_entry = true,
       .rules = {
           {"CONS-001", Must, "Weighs at least 2 options in a voting matrix",
            "list each option under its own heading (### Option A, ### Option B) with its votes", consensus_options},
           {"CONS-002", Must, "Gives a rationale for each option", "add a Rationale to each option",
            consensus_rationale},
           {"CONS-003", Must, "Records a confidence from 0 to 1", "record the entry with confidence, e.g. 0.8",
            consensus_confidence},
           {"CONS-004", Must, "Reaches the 50 % threshold (confidence ≥ 0.5)",
            "gather more evidence and decide again, or escalate (CONS-006)", consensus_threshold},
           {"CONS-005", Should, "Records dissent (or that there was none)", "add a Dissent section",
            consensus_dissent},
           {"CONS-006", Must, "Escalates to a person below the threshold (status blocked or needsFollowup)",
            "record the entry with status 'blocked' and needsFollowup naming the decision a person must make",
            consensus_escalation},
           {"CONS-007", Must, "Is recorded with agentType analysis", "record the entry with agentType 'analysis'",
            agent_type_rule},
       }},
      {.protocol = Protocol::Specification, .name = "specification", .code = ErrorCode::ProtocolSpecification,
       .purpose = "Write a versioned specification with RFC 2119 requirements",
       .agent_types = {"specification"}, .needs_entry = true,
       .rules = {
           {"SPEC-001", Must, "States requirements with RFC 2119 keywords in capitals (MUST, SHOULD, MAY)",
            "write each requirement with MUST, SHOULD or MAY", spec_keywords},
           {"SPEC-002", Must, "Carries a version", "add a line 'Version: 1.0.0' at the top", spec_version},
           {"SPEC-003", Should, "Has a Scope section", "add a Scope section: what it covers and what not",
            spec_scope},
           {"SPEC-004", Should, "Has a Conformance section", "add a Conformance section: what conforming means",
            spec_conformance},
           {"SPEC-005", Should, "Has a Changelog section", "add a Changelog section with this version's changes",
            spec_changelog},
           {"SPEC-006", Should, "Has a References section", "add a References section", spec_references},
           {"SPEC-007", Must, "Is recorded with agentType specification",
            "record the entry with agentType 'specification'", agent_type_rule},
       }},
      {.protocol = Protocol::Decomposition, .name = "decomposition", .code = ErrorCode::ProtocolDecomposition,
       .purpose = "Split an epic into atomic, ordered tasks",
       .agent_types = {"specification"}, .needs_entry = false,
       .rules = {
           {"DCMP-001", Must, "Splits the work into parts that do not overlap (MECE)",
            call("tasks.add", {{"title", "…"}, {"parent", "{id}"}}) + "; merge parts that overlap",
            dcmp_mece},
           {"DCMP-002", Must, "Maps dependencies without cycles",
            call("tasks.analyze", {{"epicId", "{id}"}}) + " shows the cycle; remove one dependency of it",
            dcmp_cycles},
           {"DCMP-003", Must, "Stays within 3 levels (epic > task > subtask)",
            call("tasks.reparent", {{"id", "…"}, {"parent", "…"}}) + " to flatten it",
            dcmp_depth},
           {"DCMP-004", Must, "Ends in atomic leaves: acceptance criteria, or size small",
            call("tasks.update", {{"id", "…"}, {"acceptance", json::Value::Array{"…"}}}), dcmp_atomic},
           {"DCMP-005", Must, "Has no time estimates in titles or descriptions",
            "remove the estimate; use size small|medium|large instead", dcmp_estimates},
           {"DCMP-006", Must, "Keeps at most 7 siblings under one parent",
            "group the subtasks under intermediate tasks", dcmp_siblings},
           {"DCMP-007", Must, "Is recorded with agentType specification",
            "record the entry with agentType 'specification'", agent_type_rule},
       }},
      {.protocol = Protocol::Implementation, .name = "implementation", .code = ErrorCode::ProtocolImplementation,
       .purpose = "Change code with provenance and passing tests",
       .agent_types = {"implementation"}, .needs_entry = false,
       .rules = {
           {"IMPL-003", Must, "Tags the code it writes with @task provenance",
            "add a comment '@task {id}' to each file of {id}, and list the files: " +
                call("tasks.update", {{"id", "{id}"}, {"files", json::Value::Array{"…"}}}),
            provenance_rule},
           {"IMPL-004", Should, "Passes the tests", call("validate.test.run", {{"id", "{id}"}}), tests_pass_rule},
           {"IMPL-005", Must, "Writes files atomically", "write a temporary file and rename it over the target",
            impl_atomic_writes},
           {"IMPL-006", Should, "Follows the project's style", "run the project's formatter and linter",
            impl_style},
           {"IMPL-007", Must, "Is recorded with agentType implementation",
            "record the entry with agentType 'implementation'", agent_type_rule},
       }},
      {.protocol = Protocol::Contribution, .name = "contribution", .code = ErrorCode::ProtocolContribution,
       .purpose = "Hand work back: conventional commits, provenance, passed gates",
       .agent_types = {"implementation"}, .needs_entry = false,
       .rules = {
           {"CONT-001", Must, "Writes commit messages as <type>: <summary>", "git commit -m 'feat: …'",
            cont_commits},
           {"CONT-002", Must, "Tags its files with @task (and @session) provenance",
            "add a comment '@task {id}' to each file of {id}", provenance_rule},
           {"CONT-003", Must, "Passes its gates (verification.required) and recorded checks before merging",
            call("lifecycle.gates", {{"id", "{id}"}}) + " and " + call("validate.compliance", {{"id", "{id}"}}) +
                " show what is not passed",
            gates_and_checks_rule},
           {"CONT-005", Should, "Flags conflicts with other sessions' work on the same files",
            call("tasks.update", {{"id", "{id}"}, {"notes", "overlaps with T…"}}),
            cont_conflicts},
           {"CONT-007", Must, "Is recorded with agentType implementation",
            "record the entry with agentType 'implementation'", agent_type_rule},
       }},
      {.protocol = Protocol::Release, .name = "release", .code = ErrorCode::ProtocolRelease,
       .purpose = "Ship a versioned, documented, tagged release",
       .agent_types = {"release", "documentation"}, .needs_entry = false,
       .rules = {
           {"RLSE-001", Must, "Ships in a release with a semantic version",
            call("release.plan", {{"version", "1.0.0"}, {"add", json::Value::Array{"{id}"}}}),
            release_semver},
           {"RLSE-002", Must, "Has a changelog entry",
            call("release.changelog", {{"version", "…"}}), release_changelog},
           {"RLSE-003", Should, "Passes the tests", call("validate.test.run", {{"id", "{id}"}}), tests_pass_rule},
           {"RLSE-004", Must, "Tags git with the version (v<version>)",
            call("release.tag", {{"version", "…"}}), release_tag_rule},
           {"RLSE-005", Must, "States the same version in VERSION, package.json and release.versionFile",
            "set release.versionFile and ship again, or edit the file", release_versions},
           {"RLSE-006", Should, "Has a rollback plan", "describe the rollback in the release notes",
            release_rollback},
           {"RLSE-007", Must, "Is recorded with agentType release or documentation",
            "record the entry with agentType 'release'", agent_type_rule},
       }},
      {.protocol = Protocol::Validation, .name = "validation", .code = ErrorCode::ProtocolValidation,
       .purpose = "Check the output against the specification and run the tests",
       .agent_types = {"validation"}, .needs_entry = true,
       .rules = {
           {"VALID-001", Must, "Checks the output against the spec: every acceptance criterion addressed",
            "quote each acceptance criterion of {id} (or AC<n>) in the report with its verdict", valid_matches_spec},
           {"VALID-002", Must, "Runs the tests", call("validate.test.run", {{"id", "{id}"}}), valid_tests_run},
           {"VALID-003", Must, "Checks protocol compliance: the checks recorded for the task pass",
            call("validate.compliance", {{"id", "{id}"}}) + " lists what failed",
            recorded_checks_rule},
           {"VALID-004", Should, "Reports its findings (keyFindings)", "record the findings as keyFindings",
            valid_report},
           {"VALID-005", Should, "Classifies findings by severity", "mark each finding critical, major or minor",
            valid_classified},
           {"VALID-006", Must, "Is recorded with agentType validation",
            "record the entry with agentType 'validation'", agent_type_rule},
       }},
      {.protocol = Protocol::Testing, .name = "testing", .code = ErrorCode::TestsSkipped,
       .purpose = "Write and run the tests, all passing, coverage reported",
       .agent_types = {"testing"}, .needs_entry = true,
       .rules = {
           {"TEST-001", Must, "Runs a configured test framework",
            "a person runs `ct config set validate.testCommand 'ctest --test-dir build'` in a terminal, or edits "
            ".cleo/config.json (agents cannot set validate.testCommand)",
            test_framework},
           {"TEST-002", Should, "Names test files by convention (test_x, x_test, x.test, x.spec)",
            "rename the test files", test_naming},
           {"TEST-003", Should, "Reports coverage", "run the tests with coverage (pytest --cov, go test -cover, …)",
            test_coverage_reported},
           {"TEST-004", Must, "Passes 100 % of the tests",
            call("validate.test.run", {{"id", "{id}"}}) + "; fix what fails", tests_pass_rule},
           {"TEST-005", Must, "Covers every MUST requirement", "add a test per MUST requirement",
            test_requirements},
           {"TEST-006", Must, "Puts the test summary in the manifest (counts in keyFindings)",
            "record keyFindings such as '42 passed, 0 failed'", test_counts_reported},
           {"TEST-007", Must, "Is recorded with agentType testing", "record the entry with agentType 'testing'",
            agent_type_rule},
           {"TEST-008", Must, "Reaches validate.coverageThreshold",
            "add tests for the uncovered code, then " + call("validate.test.run", {{"id", "{id}"}}),
            test_coverage_threshold, ErrorCode::CoverageInsufficient},
       }},
  };
}

/// The rule's fix with the subject's ids in place of "{id}" and "{entryId}".
Advice filled_fix(const ProtocolRule& rule, const ProtocolEvidence& evidence) {
  std::string id = evidence.task ? evidence.task->id : "";
  if (id.empty() && evidence.entry) id = evidence.entry->id.substr(0, evidence.entry->id.find('-'));
  if (id.empty()) id = "T001";
  const std::string entry_id = evidence.entry ? evidence.entry->id : id + "-topic";
  return Advice(rule.fix).substitute("{entryId}", entry_id).substitute("{id}", id);
}

}  // namespace

std::string_view to_string(Protocol protocol) { return protocol_info(protocol).name; }

std::string_view to_string(RuleLevel level) { return level == RuleLevel::Must ? "MUST" : "SHOULD"; }

std::string_view to_string(RuleStatus status) {
  switch (status) {
    case RuleStatus::Pass: return "pass";
    case RuleStatus::Fail: return "fail";
    case RuleStatus::Skipped: return "skipped";
  }
  return "fail";
}

std::string_view to_string(FileState state) {
  switch (state) {
    case FileState::Read: return "read";
    case FileState::Missing: return "missing";
    case FileState::Outside: return "outside";
    case FileState::NotRegular: return "notRegular";
    case FileState::Unreadable: return "unreadable";
  }
  return "unreadable";
}

std::span<const ProtocolInfo> protocols() {
  static const std::vector<ProtocolInfo> table = build_protocols();
  return table;
}

const ProtocolInfo& protocol_info(Protocol protocol) {
  for (const auto& info : protocols())
    if (info.protocol == protocol) return info;
  return protocols().front();  // unreachable: the table holds every enumerator
}

std::optional<Protocol> parse_protocol(std::string_view name) {
  for (const auto& info : protocols())
    if (info.name == name) return info.protocol;
  return std::nullopt;
}

std::vector<std::string_view> protocol_names() {
  std::vector<std::string_view> names;
  for (const auto& info : protocols()) names.push_back(info.name);
  return names;
}

std::optional<Protocol> protocol_for_agent_type(std::string_view agent_type) {
  // Each protocol's first agent type is its own; the first protocol in the stack that owns it wins
  // (specification before decomposition, implementation before contribution).
  for (const auto& info : protocols())
    if (!info.agent_types.empty() && info.agent_types.front() == agent_type) return info.protocol;
  return std::nullopt;
}

ProjectFile read_project_file(const fs::path& root, std::string_view relative, std::size_t max_bytes,
                              bool checksum) {
  ProjectFile file;
  file.path = std::string(relative);
  const fs::path given(file.path);
  // Resolved with its symbolic links: a link inside the project may point anywhere.
  auto real = given.is_absolute() || file.path.find('\0') != std::string::npos
                  ? Result<fs::path>(fail(ErrorCode::Validation, "outside"))
                  : project_file(root, given);
  if (!real) {
    file.state = FileState::Outside;
    return file;
  }
  auto state_of = [](const Error& error) {
    if (error.code == ErrorCode::NotFound) return FileState::Missing;
    if (error.details["reason"] == json::Value("notRegular")) return FileState::NotRegular;
    return FileState::Unreadable;  // larger than kHashLimit, slower than its deadline, or refused by the system
  };
  // Its first bytes for the rules to read, and (with `checksum`) the hash of all of it — a file
  // read on a caller's behalf: regular, at most kHashLimit, within a deadline (core/file_read.h).
  auto content = read_regular_file_part(*real, 0, {static_cast<std::int64_t>(max_bytes), kHashLimit.deadline});
  if (!content) {
    file.state = state_of(content.error());
    return file;
  }
  FileStamp stamp;
  if (checksum) {
    auto hashed = hash_regular_file(*real, kHashLimit, &stamp);
    if (!hashed) {
      file.state = state_of(hashed.error());
      return file;
    }
    file.sha256 = std::move(*hashed);
  } else {
    stamp = file_stamp(*real);
  }
  file.content = std::move(*content);
  file.size = static_cast<std::uintmax_t>(std::max<std::int64_t>(stamp.size, 0));
  file.size = std::max<std::uintmax_t>(file.size, file.content.size());
  file.state = FileState::Read;
  file.truncated = file.size > file.content.size();
  return file;
}

const RuleResult* ProtocolReport::first_failure() const {
  for (const auto& result : rules)
    if (result.status == RuleStatus::Fail && (strict || result.rule->level == RuleLevel::Must)) return &result;
  return nullptr;
}

ErrorCode ProtocolReport::error_code() const {
  if (const RuleResult* failure = first_failure(); failure && failure->rule->code) return *failure->rule->code;
  return protocol_info(protocol).code;
}

ProtocolReport check_protocol(Protocol protocol, const ProtocolEvidence& evidence, bool strict) {
  const ProtocolInfo& info = protocol_info(protocol);
  const std::string output_lower = evidence.output && evidence.output->state == FileState::Read
                                       ? to_lower_ascii(evidence.output->content)
                                       : std::string();
  const RuleInput input{info, evidence, output_lower};
  ProtocolReport report;
  report.protocol = protocol;
  report.strict = strict;
  int musts_checked = 0;
  bool blocked = false;
  for (const auto& rule : info.rules) {
    RuleOutcome outcome = rule.check(input);
    RuleResult result{&rule, outcome.status, std::move(outcome.message), filled_fix(rule, evidence)};
    const bool must = rule.level == RuleLevel::Must;
    switch (result.status) {
      case RuleStatus::Pass: ++report.passed; break;
      case RuleStatus::Skipped: ++report.skipped; break;
      case RuleStatus::Fail:
        ++report.failed;
        report.score -= must ? 20 : 5;
        blocked = blocked || must || strict;
        break;
    }
    if (must && result.status != RuleStatus::Skipped) ++musts_checked;
    report.rules.push_back(std::move(result));
  }
  report.score = std::max(report.score, 0);
  report.valid = !blocked && musts_checked > 0;
  return report;
}

}  // namespace ct
