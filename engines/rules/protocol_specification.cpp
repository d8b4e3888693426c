// The specification protocol of seed 003 (SPEC-…, engines/rules/protocol.h): a versioned document
// of RFC 2119 requirements with its Scope, Conformance, Changelog and References sections. Its
// rules and their checks; protocol.cpp puts the nine in one table.
#include "core/text.h"
#include "engines/rules/protocol.h"
#include "engines/rules/protocol_rules.h"

namespace ct::protocol_rules {
namespace {

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

}  // namespace

ProtocolInfo specification_protocol() {
  using enum RuleLevel;
  return {
      .protocol = Protocol::Specification, .name = to_string(Protocol::Specification), .code = ErrorCode::ProtocolSpecification,
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
      }};
}

}  // namespace ct::protocol_rules
