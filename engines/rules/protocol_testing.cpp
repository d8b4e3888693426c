// The testing protocol of seed 003 (TEST-…, engines/rules/protocol.h): a configured framework, test
// files named by convention, every test passing, coverage reported and at
// validate.coverageThreshold, the counts in the manifest. Its rules and their checks; protocol.cpp
// puts the nine in one table.
#include "core/text.h"
#include "engines/rules/protocol.h"
#include "engines/rules/protocol_rules.h"

namespace ct::protocol_rules {
namespace {

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

}  // namespace

ProtocolInfo testing_protocol() {
  using enum RuleLevel;
  return {
      .protocol = Protocol::Testing, .name = to_string(Protocol::Testing), .code = ErrorCode::TestsSkipped,
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
      }};
}

}  // namespace ct::protocol_rules
