// lifecycle domain (docs/architecture.md §5, issue 11), its reads: an epic's RCSD-IVTR stages
// (status, stages, check, history) and a task's verification gates. The rules live in
// engines/rules/lifecycle.h; the changes are lifecycle_mutate.cpp's. tasks.complete enforces the
// same rules through LifecycleEngine::check_complete.
#include <algorithm>

#include "core/text.h"
#include "domains/bind.h"
#include "domains/lifecycle/lifecycle_common.h"

namespace ct::lifecycle {
namespace {

json::Value states_json(const std::vector<LifecycleState>& states, std::string_view key) {
  json::Value out = json::Value::array();
  for (const auto& state : states) out.push_back(state_json(state, key));
  return out;
}

/// The stage being worked on: the active one, else the last completed, skipped or failed.
std::string current_stage(const std::vector<LifecycleState>& stages) {
  for (const auto& state : stages)
    if (state.status == "active") return state.name;
  std::string last;
  for (const auto& state : stages)
    if (state.status != "pending") last = state.name;
  return last;
}

/// The first stage that is neither completed nor skipped ("" when all are).
std::string next_stage(const std::vector<LifecycleState>& stages) {
  for (const auto& state : stages)
    if (!stage_finished(state.status)) return state.name;
  return "";
}

json::Value stage_gates_json(std::string_view only_operation = {}) {
  json::Value out = json::Value::array();
  for (const auto& gate : stage_gates()) {
    if (!only_operation.empty() && gate.operation != only_operation) continue;
    json::Value item = json::Value::object();
    item.set("operation", gate.operation);
    item.set("appliesTo", gate.applies_to);
    item.set("needs", gate.needs);
    out.push_back(std::move(item));
  }
  return out;
}

/// The epic a query is about: `id` itself, or the epic it belongs to. E_VALIDATION when none.
Result<Task> epic_for_query(LifecycleEngine& lifecycle, const std::string& id) {
  CT_TRY_ASSIGN(Task task, lifecycle.task(id));
  CT_TRY_ASSIGN(std::optional<Task> epic, lifecycle.epic_of(task));
  if (epic) return *epic;
  return lifecycle.stage_subject(id);  // the error that says why, with a fix
}

/// status and gates: the epic or task.
struct IdArgs {
  std::string id;
};

Result<Reply> status(Context& context, const IdArgs& args) {
  CT_TRY_ASSIGN(LifecycleEngine lifecycle, engine(context));
  const std::string& id = args.id;
  CT_TRY_ASSIGN(Task epic, epic_for_query(lifecycle, id));
  CT_TRY_ASSIGN(std::vector<LifecycleState> stages, lifecycle.stages(epic.id));
  json::Value data = json::Value::object();
  data.set("epic", epic.id);
  if (epic.id != id) data.set("id", id);
  data.set("tracked", LifecycleEngine::tracked(stages));
  data.set("enforcement", to_string(lifecycle.enforcement()));
  if (auto current = current_stage(stages); !current.empty()) data.set("currentStage", current);
  if (auto next = next_stage(stages); !next.empty()) data.set("nextStage", next);
  data.set("finished", static_cast<std::int64_t>(
                           std::count_if(stages.begin(), stages.end(), [](const auto& s) { return stage_finished(s.status); })));
  data.set("stages", states_json(stages, "stage"));
  return Reply::of(std::move(data));
}

Result<Reply> stages(Context& context, const NoArgs&) {
  CT_TRY_ASSIGN(LifecycleEngine lifecycle, engine(context));
  std::vector<std::string> skippable = lifecycle.allow_skip();
  json::Value list = json::Value::array();
  std::vector<std::string> before;
  for (auto stage : kLifecycleStages) {
    json::Value item = json::Value::object();
    item.set("stage", stage);
    item.set("pipeline", stage_pipeline(stage));
    item.set("prerequisites", json::Value::array_of(before));
    item.set("skippable", std::find(skippable.begin(), skippable.end(), stage) != skippable.end());
    list.push_back(std::move(item));
    before.emplace_back(stage);
  }
  json::Value data = json::Value::object();
  data.set("enforcement", to_string(lifecycle.enforcement()));
  data.set("stages", std::move(list));
  data.set("gatedOperations", stage_gates_json());
  data.set("verificationGates", json::Value::array_of(std::vector<std::string>(kVerificationGates.begin(),
                                                                               kVerificationGates.end())));
  data.set("requiredGates", json::Value::array_of(context.config->get_strings("verification.required")));
  return Reply::of(std::move(data));
}

struct CheckArgs {
  std::string id;
  std::string stage;
};

Result<Reply> check(Context& context, const CheckArgs& args) {
  CT_TRY_ASSIGN(LifecycleEngine lifecycle, engine(context));
  const std::string& id = args.id;
  const std::string& stage = args.stage;
  CT_TRY_ASSIGN(Task epic, epic_for_query(lifecycle, id));
  CT_TRY_ASSIGN(std::vector<LifecycleState> all, lifecycle.stages(epic.id));
  std::vector<std::string> missing = LifecycleEngine::missing_before(stage, all);
  std::vector<std::string> skippable = lifecycle.allow_skip();
  json::Value data = json::Value::object();
  data.set("epic", epic.id);
  data.set("stage", stage);
  data.set("status", all[*stage_index(stage)].status);
  data.set("canEnter", missing.empty());
  data.set("missing", json::Value::array_of(missing));
  data.set("skippable", std::find(skippable.begin(), skippable.end(), stage) != skippable.end());
  data.set("enforcement", to_string(lifecycle.enforcement()));
  data.set("tracked", LifecycleEngine::tracked(all));
  data.set("gatedOperations", stage_gates_json());
  std::vector<std::string> warnings;
  if (!missing.empty())
    warnings.push_back(lifecycle.enforcement() == Enforcement::Strict
                           ? "entering " + stage + " now fails with E_LIFECYCLE_GATE_FAILED"
                           : "entering " + stage + " now is allowed with a warning (lifecycle.enforcement " +
                                 std::string(to_string(lifecycle.enforcement())) + ")");
  return Reply::warned(std::move(data), std::move(warnings));
}

struct HistoryArgs {
  std::string id;
  std::optional<std::string> kind;
  Paging page;
  Projection rows;
};

Result<Reply> history(Context& context, const HistoryArgs& args) {
  CT_TRY_ASSIGN(LifecycleEngine lifecycle, engine(context));
  CT_TRY_ASSIGN(Task task, lifecycle.task(args.id));
  std::optional<LifecycleKind> kind;
  if (args.kind) kind = *args.kind == "gate" ? LifecycleKind::Gate : LifecycleKind::Stage;
  const std::int64_t limit = args.page.limit;
  const std::int64_t offset = args.page.offset;
  CT_TRY_ASSIGN(std::vector<LifecycleEvent> events, context.db().lifecycle_events(task.id, kind, limit, offset));
  CT_TRY_ASSIGN(std::int64_t total, context.db().count_lifecycle_events(task.id, kind));
  json::Value rows = json::Value::array();
  for (const auto& event : events) {
    json::Value row = json::Value::object();
    row.set("seq", event.seq);
    row.set("at", format_iso8601(event.state.at));
    row.set("kind", to_string(event.state.kind));
    row.set("name", event.state.name);
    row.set("from", event.from);
    row.set("to", event.state.status);
    if (args.rows.full) {
      row.set("operation", event.operation);
      if (!event.state.session.empty()) row.set("session", event.state.session);
      if (!event.state.evidence.empty()) row.set("evidence", event.state.evidence);
    }
    if (!event.state.agent.empty()) row.set("agent", event.state.agent);
    if (!event.state.notes.empty()) row.set("notes", event.state.notes);
    rows.push_back(std::move(row));
  }
  Reply reply = Reply::paged(std::move(rows), Page{total, limit, offset});
  reply.note = no_data_if(total == 0);
  return reply;
}

Result<Reply> gates(Context& context, const IdArgs& args) {
  CT_TRY_ASSIGN(LifecycleEngine lifecycle, engine(context));
  CT_TRY_ASSIGN(Task task, lifecycle.task(args.id));
  CT_TRY_ASSIGN(std::vector<LifecycleState> all, lifecycle.gates(task.id));
  CT_TRY_ASSIGN(std::vector<std::string> missing, lifecycle.missing_required_gates(task.id));
  json::Value data = json::Value::object();
  data.set("id", task.id);
  data.set("passed", static_cast<std::int64_t>(
                         std::count_if(all.begin(), all.end(), [](const auto& g) { return g.status == "passed"; })));
  auto next = std::find_if(all.begin(), all.end(), [](const auto& g) { return g.status != "passed"; });
  if (next != all.end()) data.set("next", next->name);
  data.set("gates", states_json(all, "gate"));
  data.set("required", json::Value::array_of(context.config->get_strings("verification.required")));
  data.set("missingRequired", json::Value::array_of(missing));
  data.set("separateAgents", context.config->get_bool("verification.separateAgents"));
  return Reply::of(std::move(data));
}

}  // namespace

void register_lifecycle_queries(Registry& registry) {
  const auto status_args = bind(field(&IdArgs::id, id_param("The epic, or a task of it")));
  registry.add({.domain = "lifecycle", .name = "status", .gateway = Gateway::Query,
                .summary = "Show an epic's RCSD-IVTR stages and where it stands",
                .params = status_args.specs(),
                .returns = "{epic, id?, tracked, enforcement, currentStage?, nextStage?, finished, stages[{stage, "
                           "status, at?, agent?, notes?}]}; tracked: a stage was recorded (only tracked epics are "
                           "gated)",
                .errors = {ErrorCode::NotFound, ErrorCode::Validation},
                .examples = {{R"({"id":"T001"})", "where is epic T001?"}},
                .idempotent = true, .tier = 2, .handler = status_args.handler(status)});
  registry.add({.domain = "lifecycle", .name = "stages", .gateway = Gateway::Query,
                .summary = "List the stages, their prerequisites and the operations they gate",
                .returns = "{enforcement, stages[{stage, pipeline rcsd|ivtr, prerequisites[], skippable}], "
                           "gatedOperations[{operation, appliesTo, needs}], verificationGates[], requiredGates[]}",
                .examples = {{R"({})", "the lifecycle's rules"}},
                .idempotent = true, .tier = 2, .handler = no_args(stages)});
  const auto check_args =
      bind(field(&CheckArgs::id, id_param("The epic, or a task of it")), field(&CheckArgs::stage, stage_param()));
  registry.add({.domain = "lifecycle", .name = "check", .gateway = Gateway::Query,
                .summary = "Can an epic enter a stage? Which prerequisites are missing",
                .params = check_args.specs(),
                .returns = "{epic, stage, status, canEnter, missing[], skippable, enforcement, tracked, "
                           "gatedOperations[{operation, appliesTo, needs}]}",
                .errors = {ErrorCode::NotFound, ErrorCode::Validation},
                .examples = {{R"({"id":"T001","stage":"implementation"})", "may T001 start implementing?"}},
                .idempotent = true, .tier = 2, .aliases = {"prerequisites"}, .original_names = {"lifecycle.validate"},
                .handler = check_args.handler(check)});
  const auto history_args =
      bind(field(&HistoryArgs::id, id_param("The epic (stages) or task (gates)")),
           field(&HistoryArgs::kind, {.name = "kind", .type = ParamType::Enum, .choices = {"stage", "gate"},
                                      .description = "Only stage or only gate changes"}),
           paging(&HistoryArgs::page, "50"), projection(&HistoryArgs::rows));
  registry.add({.domain = "lifecycle", .name = "history", .gateway = Gateway::Query,
                .summary = "List the stage and gate changes of an epic or task, newest first",
                .params = history_args.specs(),
                .returns = "[{seq, at, kind, name, from, to, agent?, notes?}] (operation, session?, evidence? with "
                           "detail:'full'); E_NO_DATA note when none",
                .errors = {ErrorCode::NotFound},
                .examples = {{R"({"id":"T001"})", "what happened to T001's lifecycle"}},
                .idempotent = true, .tier = 2,
                .row_fields = {"seq", "at", "kind", "name", "from", "to", "agent", "notes", "operation", "session",
                               "evidence"},
                .handler = history_args.handler(history)});
  const auto gates_args = bind(field(&IdArgs::id, id_param("The task")));
  registry.add({.domain = "lifecycle", .name = "gates", .gateway = Gateway::Query,
                .summary = "Show a task's verification gates",
                .params = gates_args.specs(),
                .returns = "{id, passed, next?, gates[{gate, status pending|passed|failed, at?, agent?, notes?, "
                           "evidence?}], required[], missingRequired[], separateAgents}",
                .errors = {ErrorCode::NotFound},
                .examples = {{R"({"id":"T002"})", "is T002 verified?"}},
                .idempotent = true, .tier = 2, .handler = gates_args.handler(gates)});
}

}  // namespace ct::lifecycle
