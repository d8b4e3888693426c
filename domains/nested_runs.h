// Nested runs: the few operations that run other operations' calls inside their own — tasks.batch
// and the plans (domains/batch.h), tasks.import's memory (memory.observe for each entry),
// system.proposal.approve (the stored call) — are handed this by the router, as their handler's
// third parameter (domains/registry.h: Handler). No other handler reaches the router: a Context is
// the call's data alone.
#pragma once

#include <string>

#include "core/error.h"
#include "core/json.h"
#include "domains/context.h"
#include "domains/registry.h"
#include "engines/store/audit_log.h"
#include "engines/store/trust_store.h"

namespace ct {

class NestedRuns {
 public:
  /// One more call of a mutation inside the running call's transaction, in `context` (the running
  /// call's): validated, checked against the session rules and approval.required (the gate of
  /// domains/approval_gate.h: an op a rule names refuses the whole call), its handler run with
  /// `audit` as its audit row (filled, not appended) and `external` as its external step's reply
  /// (an operation with an external step runs only with it), and answered with its shaped reply.
  virtual Result<Reply> run_inside(Context& context, const OperationSpec& spec, const json::Value& params,
                                   AuditEntry& audit, const Reply* external) = 0;
  /// A stored proposal's call run through the router as the running call's caller (its own
  /// external step, transaction and audit row), the proposal marked approved with it.
  virtual Result<Reply> run_approved(const Proposal& proposal, const std::string& approver,
                                     const std::string& decision) = 0;

 protected:
  ~NestedRuns() = default;
};

}  // namespace ct
