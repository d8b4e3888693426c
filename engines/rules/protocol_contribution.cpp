// The contribution protocol of seed 003 (CONT-…, engines/rules/protocol.h): work handed back with
// provenance, passed gates and recorded checks, and overlaps with other active tasks noted. Its
// rules and their checks; protocol.cpp puts the nine in one table.
#include <algorithm>

#include "engines/rules/protocol.h"
#include "engines/rules/protocol_rules.h"

namespace ct::protocol_rules {
namespace {

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

}  // namespace

ProtocolInfo contribution_protocol() {
  using enum RuleLevel;
  return {
      .protocol = Protocol::Contribution, .name = to_string(Protocol::Contribution), .code = ErrorCode::ProtocolContribution,
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
      }};
}

}  // namespace ct::protocol_rules
