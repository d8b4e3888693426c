#include "domains/approval_gate.h"

#include "core/cancel.h"
#include "core/json_parse.h"
#include "domains/approval.h"
#include "domains/router.h"
#include "engines/store/task_json.h"

namespace ct::approval {
namespace {

/// What `call` would change: its handler run in a write transaction that is rolled back (after its
/// external step, when that only checks); null for a call previewed when it is approved.
Result<json::Value> preview(const pipeline::Call& call, Context& context, const Caller& caller, NestedRuns& runs) {
  const OperationSpec& spec = *call.spec;
  if ((spec.external && !spec.external_checks_only) || !call.ids.empty() || !spec.handler) return json::Value();
  if (spec.external) {
    CT_TRY_ASSIGN(Reply external, pipeline::serve(spec.external, call, context, runs));
    context.external = std::move(external);
  }
  AuditEntry audit;
  context.audit = &audit;
  CT_TRY(context.store->begin(TxKind::Write));
  pipeline::Transaction tx(context.store);
  CT_TRY_ASSIGN(std::vector<std::string> ignored,
                pipeline::check_session(call, context, caller, !call.common.session_id.empty()));
  (void)ignored;
  Result<Reply> reply = pipeline::serve(spec.handler, call, context, runs);
  tx.rollback();
  context.audit = nullptr;
  if (!reply) return std::unexpected(std::move(reply.error()));  // a call that would fail is not proposed
  json::Value out = json::Value::object();
  out.set("changes", changes_json(audit.changes));
  return out;
}

}  // namespace

Result<std::optional<std::string>> gate(Context& context, const pipeline::Call& call, bool approved, Asked asked) {
  if (!call.writes() || approved || context.is_person() || !context.store ||
      context.config->get_strings("approval.required").empty())
    return std::optional<std::string>();
  // The records the call is on: each of a bulk call's ids (an epic among them is still an epic).
  std::vector<std::string> subjects = call.ids;
  if (auto id = call.params.opt_str("id"); subjects.empty() && id) subjects.push_back(*id);
  if (asked == Asked::InTransaction) return rule_for(context, *call.spec, call.params, subjects);
  return pipeline::read_in_own_transaction(context, [&] { return rule_for(context, *call.spec, call.params, subjects); });
}

Result<Envelope> propose(const pipeline::Call& call, Context& context, const Caller& caller, const std::string& rule,
                         NestedRuns& runs) {
  const OperationSpec& spec = *call.spec;
  // Keeping the proposal is the call's commit point (core/cancel.h).
  if (!begin_commit()) return fail(pipeline::cancelled(spec));
  CT_TRY_ASSIGN(json::Value previewed, preview(call, context, caller, runs));
  CT_TRY(context.store->begin(TxKind::Write));
  pipeline::Transaction tx(context.store);
  Proposal proposal;
  CT_TRY_ASSIGN(std::int64_t number, context.store->next_proposal_number());
  proposal.id = prefixed_id("P", number);
  proposal.operation = spec.full_name();
  CT_TRY_ASSIGN(proposal.params, json::parse(call.params_text));
  if (!call.ids.empty()) proposal.params.erase("id");  // a bulk call is stored with its ids alone
  proposal.rule = rule;
  proposal.task_id = call.params.opt_str("id").value_or("");
  proposal.preview = std::move(previewed);
  proposal.reason = call.common.reason;
  proposal.intent = call.common.intent;
  CT_TRY_ASSIGN(proposal.agent, context.agent_name());
  proposal.session = context.session;
  proposal.at = context.now();
  CT_TRY(context.store->put_proposal(proposal));
  // The audit row says who proposed what; it changes nothing, so there is nothing to undo.
  AuditEntry audit;
  audit.params.set("proposal", proposal.id);
  pipeline::fill_audit(audit, context, call);
  audit.outcome = std::string(to_string(ErrorCode::Proposed));
  CT_TRY(context.store->append_audit(audit));
  CT_TRY(tx.commit());
  Envelope ok;
  ok.data = proposal_json(proposal, /*full=*/true);
  ok.note = ErrorCode::Proposed;
  ok.warnings.push_back(spec.full_name() + " needs a person's approval here (approval.required: " + rule +
                        "): nothing changed yet; " + proposal.id + " waits for `ct approve " + proposal.id +
                        "` or a rejection");
  return ok;
}

Error refused_inside(const OperationSpec& spec, const std::string& rule) {
  return Error(ErrorCode::MutationDisabled, spec.full_name() + " needs a person's approval here (approval.required: " +
                                                rule + "), so it cannot run inside another call")
      .with_fix("call it on its own: it becomes a proposal a person approves")
      .with_detail("rule", rule);
}

}  // namespace ct::approval
