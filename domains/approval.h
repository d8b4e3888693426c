// People approve what agents propose (issue 35). Config approval.required lists the mutations an
// agent may only propose: "domain.operation", or with a condition ("tasks.complete:epic",
// "memory.update:verified"). A rule names an effect, whatever operation has it: a call falls under
// it when its own operation or one of the effects it declares does (effects_of). The router
// (domains/router.cpp) asks rule_for() before a mutation of a caller who is not a person runs:
// under a rule, the call is previewed (run and rolled back: the changes it would make), kept as a
// proposal (engines/store/trust_store.h) and answered as a success with the note E_PROPOSED;
// nothing else changes. A person lists, approves or rejects
// proposals (system.proposal.*, `ct proposals`, `ct approve`, the dashboard): approving runs the
// stored call through the router as that person, refused with E_CONCURRENT_MODIFICATION when what
// it would change moved since it was proposed, and marks the proposal approved in the same
// transaction; its audit row names the proposal and who proposed it.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"
#include "domains/context.h"
#include "domains/params.h"
#include "domains/registry.h"
#include "engines/store/audit_log.h"
#include "engines/store/trust_store.h"

namespace ct::approval {

/// What a rule may add to an operation: the call is under the rule only when the condition holds.
struct Condition {
  std::string_view name;     // "epic"
  std::string_view meaning;  // "the task is an epic"
  /// Whether it can hold for calls of `spec` (a rule pairing them is refused when set).
  bool (*applies)(const OperationSpec& spec);
  /// Whether it holds for the record a call (or one of its effects) is on — a task or memory
  /// entry id, "" for none — read inside a transaction.
  Result<bool> (*holds)(Context& context, const std::string& id);
};
std::span<const Condition> conditions();

/// What is wrong with one rule of approval.required ("" when nothing): the config's check.
std::string check_rule(std::string_view rule);

/// Each rule of an approval.required value must name a mutation of `registry` that its condition
/// applies to (E_INVALID_INPUT with did-you-mean otherwise): the check the config key cannot make
/// itself, made where system.config.set sets it.
Result<void> check_rules(const Registry& registry, const json::Value& rules);

/// What a call of `spec` with `params` does, as rules name it (issue 52: rules name effects, not
/// entry points): its own operation on each of its `subjects` (its id, or each id of a bulk call),
/// then what the spec declares (OperationSpec::effects — tasks.undo of a creation is a tasks.delete,
/// memory.supersede of an entry a memory.update of it, a demoted epic is out of every epic rule's
/// reach).
Result<std::vector<Effect>> effects_of(Context& context, const OperationSpec& spec, const Params& params,
                                       const std::vector<std::string>& subjects);

/// The rule of approval.required that any effect of the call falls under, if any. Reads the store:
/// call inside a transaction.
Result<std::optional<std::string>> rule_for(Context& context, const OperationSpec& spec, const Params& params,
                                            const std::vector<std::string>& subjects);

/// A proposal being approved: the router runs its call with this.
struct Approval {
  Proposal proposal;
  std::string approver;
  std::string decision;
};

/// Refuses an approval whose call now changes something from another state than when it was
/// proposed (E_CONCURRENT_MODIFICATION listing what moved).
Result<void> check_unmoved(const Proposal& proposal, const std::vector<FieldChange>& now);

/// A proposal for replies: {id, operation, params, rule, status, agent?, at, reason?, intent?,
/// preview? (full), decidedBy?, decidedAt?, decision?}.
json::Value proposal_json(const Proposal& proposal, bool full);

}  // namespace ct::approval
