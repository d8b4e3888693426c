// memory.turn (issue 54, seed 000): an agent closes a turn with a report of what it did, or with
// a rejection when its output did not follow the rules it loaded. Each is kept with the agent,
// its session, the host's own session id the session bound (session.start hostSession) and the
// task, written in the audit trail, and counted by memory.stats.
#include "core/text.h"
#include "domains/bind.h"
#include "domains/memory/memory_common.h"
#include "domains/memory/memory_constraints.h"
#include "domains/registry.h"

namespace ct::memory {
namespace {

struct TurnArgs {
  std::string outcome;
  std::optional<std::string> summary;
  std::optional<std::string> task_id;
};

Result<Reply> turn(Context& context, const TurnArgs& args) {
  const std::string summary = std::string(trim(args.summary.value_or("")));
  if (args.outcome == "reported" && summary.empty())
    return fail(Error(ErrorCode::InvalidParams, "a reported turn needs its summary: what the work did")
                    .with_fix("add summary: one line on what the turn did")
                    .with_detail("field", "summary"));
  MemoryTurn row;
  row.at = context.now();
  row.outcome = args.outcome;
  row.text = summary;
  CT_TRY_ASSIGN(row.task_id, source_task(context, args.task_id));
  CT_TRY_ASSIGN(row.agent, who(context));
  row.session = context.session;
  CT_TRY_ASSIGN(row.host_session, caller_host_session(context));
  CT_TRY_ASSIGN(std::int64_t number, context.db().add_memory_turn(row));
  context.record(FieldChange{"", "memory.turn", json::Value(), json::Value(row.outcome)});
  if (context.audit && !row.task_id.empty()) context.audit->task_id = row.task_id;
  json::Value data = json::Value::object();
  data.set("turn", number);
  if (!row.task_id.empty() && !args.task_id) data.set("taskId", row.task_id);
  return Reply::of(std::move(data));
}

}  // namespace

void register_memory_turn(Registry& registry) {
  const auto args = bind(
      field(&TurnArgs::outcome, {.name = "outcome", .type = ParamType::Enum, .required = true,
                                 .choices = {"reported", "rejected"},
                                 .description = "reported, or rejected: the output did not follow the rules loaded",
                                 .positional = true}),
      field(&TurnArgs::summary, {.name = "summary", .type = ParamType::String, .max = 2000,
                                 .description = "What the turn did (required when reported), or why it was rejected"}),
      field(&TurnArgs::task_id,
            {.name = "taskId", .type = ParamType::TaskId, .description = "The work (default: the session's focus)"}));
  registry.add({.domain = "memory", .name = "turn", .gateway = Gateway::Mutate,
                .summary = "Close a turn: reported, or rejected when it broke loaded rules",
                .params = args.specs(),
                .returns = "{turn (its number), taskId? (the session's focus)}; kept with the host's session id, "
                           "counted by memory.stats",
                .errors = {ErrorCode::InvalidParams, ErrorCode::NotFound},
                .examples = {{R"({"outcome":"reported","summary":"ledger refunds written, M002#Steps followed"})",
                              "the turn is done"},
                             {R"({"outcome":"rejected","summary":"used floats, against M002#Rules/1"})",
                              "the output broke a loaded rule"}},
                .tier = 2, .handler = args.handler(turn)});
}

}  // namespace ct::memory
