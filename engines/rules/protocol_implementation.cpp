// The implementation protocol of seed 003 (IMPL-…, engines/rules/protocol.h): code with @task
// provenance and passing tests; what cannot be seen afterwards (atomic writes, style) is skipped
// with the reason. Its rules and their checks; protocol.cpp puts the nine in one table.
#include "engines/rules/protocol.h"
#include "engines/rules/protocol_rules.h"

namespace ct::protocol_rules {
namespace {

RuleOutcome impl_atomic_writes(const RuleInput&) {
  return not_observable("whether files were written atomically cannot be seen afterwards; review the code");
}

RuleOutcome impl_style(const RuleInput&) {
  return not_observable("style is the project's linter's to check; CLEO runs none");
}

}  // namespace

ProtocolInfo implementation_protocol() {
  using enum RuleLevel;
  return {
      .protocol = Protocol::Implementation, .name = to_string(Protocol::Implementation), .code = ErrorCode::ProtocolImplementation,
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
      }};
}

}  // namespace ct::protocol_rules
