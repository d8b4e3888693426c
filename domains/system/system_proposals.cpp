// system domain — proposals (issue 35, domains/approval.h): what agents proposed under
// approval.required, listed for anyone, approved or rejected by a person (`ct approve`, `ct reject`,
// the dashboard in write mode). Approving runs the stored call through the router.
#include <algorithm>

#include "core/text.h"
#include "domains/approval.h"
#include "domains/bind.h"
#include "domains/context.h"
#include "domains/nested_runs.h"
#include "domains/pipeline.h"
#include "domains/registry.h"

namespace ct {
namespace {

/// The person deciding, as the trail names them (their principal): refused for an agent. An agent's
/// proposal is never its own to decide, whatever session or name it is in.
Result<std::string> decider(Context& context, const Proposal& proposal, std::string_view verb) {
  if (!context.is_person())
    return fail(Error(ErrorCode::MutationDisabled, "only a person may " + std::string(verb) + " " + proposal.id +
                                                       ": agents propose, people decide")
                    .with_fix("ask a person to run: ct " + std::string(verb) + " " + proposal.id)
                    .with_detail("id", proposal.id));
  return context.principal.id;
}

Result<Proposal> pending(Context& context, const std::string& id) {
  CT_TRY_ASSIGN(std::optional<Proposal> found, context.db().get_proposal(id));
  if (!found)
    return fail(Error(ErrorCode::NotFound, "proposal " + echo(id) + " not found")
                    .with_fix(call("system.proposal.list", {{"status", "all"}})));
  if (found->status != "pending")
    return fail(Error(ErrorCode::Validation, id + " was " + found->status + " already" +
                                                 (found->decided_by.empty() ? "" : " by " + found->decided_by))
                    .with_detail("status", found->status));
  return std::move(*found);
}

struct ListArgs {
  std::string status;
  std::optional<std::string> id;
  std::int64_t limit = 0;
  std::int64_t offset = 0;
  Projection rows;
};

Result<Reply> list(Context& context, const ListArgs& args) {
  if (const auto& id = args.id) {
    CT_TRY_ASSIGN(std::optional<Proposal> found, context.db().get_proposal(*id));
    if (!found)
      return fail(Error(ErrorCode::NotFound, "proposal " + echo(*id) + " not found")
                      .with_fix(call("system.proposal.list", {{"status", "all"}})));
    json::Value rows = json::Value::array();
    rows.push_back(approval::proposal_json(*found, true));
    return Reply::of(std::move(rows));
  }
  const std::string status = args.status == "all" ? "" : args.status;
  const std::int64_t limit = args.limit, offset = args.offset;
  CT_TRY_ASSIGN(std::vector<Proposal> found, context.db().list_proposals(status, limit, offset));
  CT_TRY_ASSIGN(std::int64_t total, context.db().count_proposals(status));
  json::Value rows = json::Value::array();
  for (const auto& proposal : found) rows.push_back(approval::proposal_json(proposal, args.rows.full));
  Reply reply = Reply::paged(std::move(rows), Page{total, static_cast<std::int64_t>(found.size()), offset});
  reply.note = no_data_if(found.empty());
  return reply;
}

struct ApproveArgs {
  std::string id;
  std::optional<std::string> note;
};

Result<Reply> approve_external(Context& context, const ApproveArgs& args, NestedRuns& runs) {
  // The proposal and who decides, in one read before the stored call runs in its own transaction.
  Proposal proposal;
  std::string who;
  CT_TRY(pipeline::read_in_own_transaction(context, [&]() -> Result<void> {
    CT_TRY_ASSIGN(proposal, pending(context, args.id));
    CT_TRY_ASSIGN(who, decider(context, proposal, "approve"));
    return {};
  }));
  CT_TRY_ASSIGN(Reply ran, runs.run_approved(proposal, who, args.note.value_or("")));
  json::Value data = json::Value::object();
  data.set("id", proposal.id);
  data.set("operation", proposal.operation);
  data.set("status", "approved");
  data.set("proposedBy", proposal.agent);
  data.set("approvedBy", who);
  if (!ran.data.is_null()) data.set("result", std::move(ran.data));
  Reply reply = Reply::warned(std::move(data), std::move(ran.warnings));
  reply.advice_warnings = std::move(ran.advice_warnings);
  return reply;
}

struct RejectArgs {
  std::string id;
  std::string note;
};

Result<Reply> reject(Context& context, const RejectArgs& args) {
  CT_TRY_ASSIGN(Proposal proposal, pending(context, args.id));
  CT_TRY_ASSIGN(std::string who, decider(context, proposal, "reject"));
  json::Value before = json::Value::object();
  before.set("id", proposal.id);
  before.set("status", proposal.status);
  proposal.status = "rejected";
  proposal.decided_by = who;
  proposal.decided_at = context.now();
  proposal.decision = args.note;
  CT_TRY(context.db().put_proposal(proposal));
  json::Value after = before;
  after.set("status", proposal.status);
  after.set("decidedBy", who);
  context.record({"", "proposal", std::move(before), std::move(after)});
  return Reply::of(approval::proposal_json(proposal, false));
}

ParamSpec proposal_id() {
  return {.name = "id", .type = ParamType::String, .required = true, .pattern = "P[0-9]{1,9}",
          .description = "The proposal, e.g. P001", .positional = true};
}

}  // namespace

void register_system_proposals(Registry& registry) {
  const auto list_args = bind(
      field(&ListArgs::status, {.name = "status", .type = ParamType::Enum, .default_json = R"("pending")",
                                .choices = {"pending", "approved", "rejected", "all"}, .description = "Which"}),
      field(&ListArgs::id, {.name = "id", .type = ParamType::String, .pattern = "P[0-9]{1,9}",
                            .description = "Only this proposal (with its preview)"}),
      field(&ListArgs::limit, {.name = "limit", .type = ParamType::Int, .default_json = "20", .min = 1, .max = 200,
                               .description = "Rows"}),
      field(&ListArgs::offset, {.name = "offset", .type = ParamType::Int, .default_json = "0", .min = 0,
                                .description = "Rows to skip"}),
      projection(&ListArgs::rows));
  registry.add({.domain = "system", .name = "proposal.list", .gateway = Gateway::Query,
                .summary = "Proposals awaiting a person",
                .params = list_args.specs(),
                .returns = "[{id, operation, params, rule, status, agent?, at, reason?, intent?, preview?{changes} "
                           "(full), decidedBy?, decidedAt?, decision?}] newest first; E_NO_DATA note when none",
                .errors = {ErrorCode::NotFound},
                .examples = {{R"({})", "what waits for a person"}},
                .idempotent = true, .tier = 2, .shortcut = "proposals",
                .row_fields = {"id", "operation", "params", "rule", "status", "agent", "at", "reason", "intent",
                               "preview", "decidedBy", "decidedAt", "decision"},
                .handler = list_args.handler(list)});
  const auto approve_args =
      bind(field(&ApproveArgs::id, proposal_id()),
           field(&ApproveArgs::note, {.name = "note", .type = ParamType::String, .max = 1000,
                                      .description = "Why, for the record"}));
  registry.add({.domain = "system", .name = "proposal.approve", .gateway = Gateway::Mutate,
                .summary = "Approve and run a proposal (people)",
                .params = approve_args.specs(),
                .returns = "{id, operation, status:'approved', proposedBy, approvedBy, result (the call's reply)}: the "
                           "call runs as this person, revalidated; refused with E_CONCURRENT_MODIFICATION when what "
                           "it changes moved since it was proposed. An agent (MCP) or the proposer itself: "
                           "E_MUTATION_DISABLED",
                .errors = {ErrorCode::NotFound, ErrorCode::Validation, ErrorCode::MutationDisabled,
                           ErrorCode::ConcurrentModification},
                .examples = {{R"({"id":"P001"})", "approve P001"}},
                .tier = 2, .shortcut = "approve", .dashboard = true,
                .external = approve_args.handler(approve_external)});
  const auto reject_args =
      bind(field(&RejectArgs::id, proposal_id()),
           field(&RejectArgs::note, {.name = "note", .type = ParamType::String, .required = true, .min = 3,
                                     .max = 1000, .description = "Why it is rejected", .positional = true}));
  registry.add({.domain = "system", .name = "proposal.reject", .gateway = Gateway::Mutate,
                .summary = "Reject a proposal (people)",
                .params = reject_args.specs(),
                .returns = "the proposal, status 'rejected'; an agent (MCP) or the proposer itself: E_MUTATION_DISABLED",
                .errors = {ErrorCode::NotFound, ErrorCode::Validation, ErrorCode::MutationDisabled},
                .examples = {{R"({"id":"P001","note":"keep the epic open until the audit"})", "reject P001"}},
                .tier = 2, .shortcut = "reject", .dashboard = true,
                .handler = reject_args.handler(reject)});
}

}  // namespace ct
