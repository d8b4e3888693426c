// The one gate of approval.required (domains/approval.h holds its rules): before a mutation runs —
// alone or inside another call — the rule that stops it here, if any. A call a rule stops alone is
// proposed (propose: previewed, kept as a proposal, answered E_PROPOSED); an op a rule stops
// inside another call (a batch's or a plan's op, tasks.import's memory) refuses the whole call
// (refused_inside), since a person approving a proposed batch runs it whole.
#pragma once

#include <optional>
#include <string>

#include "core/error.h"
#include "domains/context.h"
#include "domains/envelope.h"
#include "domains/nested_runs.h"
#include "domains/pipeline.h"

namespace ct {
struct Caller;
}

namespace ct::approval {

/// Where the gate is asked: before the call's transaction (it reads the rule's condition in a read
/// transaction of its own), or inside the running call's transaction.
enum class Asked { BeforeTransaction, InTransaction };

/// The rule of approval.required that stops `call` here, or none: a kept mutation (Call::writes),
/// from a caller who is not a person reviewing (Context::is_person), that is not the run of
/// an approved proposal (`approved`), on a store whose config lists rules, that a rule names (its
/// condition read in the store). Nothing is read when no rule can apply.
Result<std::optional<std::string>> gate(Context& context, const pipeline::Call& call, bool approved, Asked asked);

/// A call the gate stopped alone, kept for a person: what it would change (its handler run in a
/// write transaction rolled back, after its external step when that only checks; a call whose
/// external step acts, or a bulk call, is previewed when it is approved), the proposal and an audit
/// row naming it, answered as a success with the note E_PROPOSED. Keeping the proposal is the
/// call's commit point (core/cancel.h); a call that would fail is not proposed.
Result<Envelope> propose(const pipeline::Call& call, Context& context, const Caller& caller, const std::string& rule,
                         NestedRuns& runs);

/// An op the gate stopped inside another call: E_MUTATION_DISABLED, its fix to call it alone.
Error refused_inside(const OperationSpec& spec, const std::string& rule);

}  // namespace ct::approval
