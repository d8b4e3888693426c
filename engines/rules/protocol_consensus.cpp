// The consensus protocol of seed 003 (CONS-…, engines/rules/protocol.h): a decision between
// options, with the vote, a rationale, a confidence against the 50 % threshold, dissent, and an
// escalation below it. Its rules and their checks; protocol.cpp puts the nine in one table.
#include "engines/rules/protocol.h"
#include "engines/rules/protocol_rules.h"

namespace ct::protocol_rules {
namespace {

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

}  // namespace

ProtocolInfo consensus_protocol() {
  using enum RuleLevel;
  return {
      .protocol = Protocol::Consensus, .name = to_string(Protocol::Consensus), .code = ErrorCode::ProtocolConsensus,
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
      }};
}

}  // namespace ct::protocol_rules
