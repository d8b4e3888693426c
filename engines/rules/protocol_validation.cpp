// The validation protocol of seed 003 (VALID-…, engines/rules/protocol.h): a report that addresses
// every acceptance criterion, after a test run, with the recorded checks passed and findings
// classified by severity. Its rules and their checks; protocol.cpp puts the nine in one table.
#include "core/text.h"
#include "engines/rules/protocol.h"
#include "engines/rules/protocol_rules.h"

namespace ct::protocol_rules {
namespace {

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

}  // namespace

ProtocolInfo validation_protocol() {
  using enum RuleLevel;
  return {
      .protocol = Protocol::Validation, .name = to_string(Protocol::Validation), .code = ErrorCode::ProtocolValidation,
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
      }};
}

}  // namespace ct::protocol_rules
