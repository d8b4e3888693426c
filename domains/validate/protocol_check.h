// What validate.protocol (a query: it reports) and validate.compliance.record (a mutation: it runs
// the same check server-side and records the outcome) share: resolving the subject — a task, a
// research manifest entry, or both — collecting the evidence the protocol's rules read
// (engines/rules/protocol.h) and the report's JSON.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/json.h"
#include "domains/context.h"
#include "domains/registry.h"
#include "engines/rules/protocol.h"

namespace ct::validate {

/// The check name validate.test.run records its runs under (the testing rules read them back).
inline constexpr std::string_view kTestRunCheck = "test.run";

struct ProtocolRequest {
  std::optional<std::string> task_id;    // param id
  std::optional<std::string> entry_id;   // param entryId
  std::optional<Protocol> protocol;      // nullopt: the one the entry's agentType implies
  bool strict = false;                   // SHOULD failures count as MUST failures
};

/// The request of the params id, entryId, protocol (a name protocol_param admits) and strict.
ProtocolRequest protocol_request(std::optional<std::string> task_id, std::optional<std::string> entry_id,
                                 const std::optional<std::string>& protocol, bool strict);

struct ProtocolCheck {
  ProtocolEvidence evidence;
  ProtocolReport report;
  /// How the protocol or the subject was chosen, and each failed SHOULD rule (when not strict).
  std::vector<std::string> warnings;
};

/// Loads the subject (E_NOT_FOUND for an unknown id or entryId; E_INVALID_PARAMS when neither is
/// given, or when no protocol is named and the entry's agentType implies none), completes it (the
/// entry's first linked task; the task's newest entry of the protocol's agentType), collects
/// the evidence the protocol's rules read and checks them. Reads only; call inside a transaction.
Result<ProtocolCheck> run_protocol_check(Context& context, const ProtocolRequest& request);

/// check name of a protocol's results in the compliance table: "protocol.research".
std::string protocol_check_name(Protocol protocol);

/// {protocol, subject{id?, entryId?}, valid, score, passed, failed, skipped, rules[{id, level,
/// status, message?, fix?}]}: failed and skipped rules only, every rule (with its text) when `full`.
json::Value protocol_report_json(const ProtocolCheck& check, bool full, const Registry& registry);

/// The error message and the fix of an invalid report.
std::string protocol_summary(const ProtocolCheck& check);
Advice protocol_fix(const ProtocolCheck& check);

/// The params the validate operations share.
ParamSpec protocol_param(std::string_view description);
ParamSpec entry_param();
ParamSpec strict_param();
/// `limit` of the checks that list problems (validate.schema, validate.manifest).
ParamSpec problems_limit_param();

/// E_NOT_FOUND for a task id, with a find call as its fix.
Error task_not_found(const std::string& id);

/// validate.protocol and validate.manifest.
void register_protocol_operations(Registry& registry);

}  // namespace ct::validate
