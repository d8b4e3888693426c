// What the protocol files share (engines/rules/protocol.h is the interface): the text scanners
// the rules read output files with (protocol_text.cpp), the outcomes and the rules several
// protocols hold (protocol_shared_rules.cpp), and each protocol's row of the table, defined in its
// own file (protocol_research.cpp … protocol_testing.cpp) and put in order by protocol.cpp.
#pragma once

#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/clock.h"
#include "engines/rules/protocol.h"

namespace ct::protocol_rules {

// ---- text scanning (no std::regex: output files are up to 256 KiB, and libstdc++'s regex
// recurses per character) ---------------------------------------------------------------------

/// `word` in `text` with no letter or digit right before or after it.
bool contains_word(std::string_view text, std::string_view word);
bool contains_any_word(std::string_view text, std::initializer_list<std::string_view> words);
/// A Markdown ATX heading ("## Scope").
bool has_heading(std::string_view text);
/// A heading that names one of `words` ("## 5. References" for "references").
bool has_heading_with(std::string_view text, std::initializer_list<std::string_view> words);
/// Lines that introduce one option of a decision: "### Option A", "- Option 2: Postgres",
/// "| Option B | …", "**Alternative 1**" (the word, then a name or number; a header cell
/// "| Option |" is not one).
int count_option_lines(std::string_view lower);
/// The RFC 2119 keywords written in capitals, in the order of the RFC.
std::vector<std::string> rfc2119_keywords(std::string_view text);
/// A version line: "version: 1.0.0", "Version 2.1", "**Version**: v0.3" (lowercase text).
bool has_version_line(std::string_view lower);
bool has_url(std::string_view lower);
/// A time estimate in a title or description: "2h", "1.5d", "3wk" written together, or a
/// duration in words ("3 days", "2-3 hours") that reads as an estimate — after "~", "est",
/// "estimate", "effort", "eta", "takes", "about", "approx" or inside brackets — so that "tokens
/// expire after 30 days" stays a requirement.
std::optional<std::string> time_estimate(std::string_view text);
/// "12 passed", "3 failed", "40 tests": a test run's counts written out.
bool has_count_summary(std::string_view lower);
/// "@task T001" (any spaces or tabs between, no digit after the id).
bool has_task_tag(std::string_view text, std::string_view id);
/// Source code, as opposed to documents and data.
bool is_code_file(std::string_view path);
/// A file in a test folder (tests/, test/, __tests__/, spec/).
bool looks_like_test(std::string_view path);
/// The usual test file names: test_x.py, x_test.go, x.test.ts, x.spec.js, XTest.java, x_spec.rb.
bool test_named(std::string_view path);
/// "0.3", "85.71", "90": at most two decimals, no trailing zeros.
std::string decimal(double value);
/// The first `shown` items joined with commas, and how many more.
std::string quoted_list(const std::vector<std::string>& items, std::size_t shown = 5);

// ---- rule outcomes and the rules several protocols hold -----------------------------------------

inline RuleOutcome passed(std::string message = "") { return {RuleStatus::Pass, std::move(message)}; }
inline RuleOutcome failed(std::string message) { return {RuleStatus::Fail, std::move(message)}; }
inline RuleOutcome skipped(std::string message) { return {RuleStatus::Skipped, std::move(message)}; }
/// What cannot be seen afterwards: skipped with the reason.
inline RuleOutcome not_observable(std::string why) { return skipped(std::move(why)); }

inline std::string no_task() { return "no subject task: name one with id, or link the entry to its task"; }
/// Why a rule that reads the entry is skipped; the rule that requires an entry says more.
inline std::string no_entry(const RuleInput&) { return "no manifest entry to read"; }
/// Why the rule that requires an entry fails: "no research entry is linked to T001 (…)".
std::string entry_missing(const RuleInput& in);
/// Why the output file cannot be read (a failure: the entry names a file that is not there),
/// or why there is nothing to read (skipped: no entry); nullopt when its text is at hand.
std::optional<RuleOutcome> output_unavailable(const RuleInput& in);
/// Appended to a failure found in a file read only in part.
std::string partly(const ProjectFile& file);
inline std::string when(TimeMs at) { return format_iso8601(at); }

/// The entry carries one of the protocol's agent types (every protocol's last rule).
RuleOutcome agent_type_rule(const RuleInput& in);
/// The subject's latest test run passed (IMPL-004, RLSE-003, TEST-004).
RuleOutcome tests_pass_rule(const RuleInput& in);
/// Every other check recorded about the task passed on its latest run (CONT-003, VALID-003).
RuleOutcome recorded_checks_rule(const RuleInput& in);
/// "@task T001" in each of the task's files that can be read (IMPL-003, CONT-002).
RuleOutcome provenance_rule(const RuleInput& in);

// ---- each protocol's row of the table, in the stack's order --------------------------------------

ProtocolInfo research_protocol();
ProtocolInfo consensus_protocol();
ProtocolInfo specification_protocol();
ProtocolInfo decomposition_protocol();
ProtocolInfo implementation_protocol();
ProtocolInfo contribution_protocol();
ProtocolInfo release_protocol();
ProtocolInfo validation_protocol();
ProtocolInfo testing_protocol();

}  // namespace ct::protocol_rules
