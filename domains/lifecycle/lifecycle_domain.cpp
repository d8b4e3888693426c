// lifecycle domain (docs/architecture.md §5, issue 11): the RCSD-IVTR stages of an epic and the verification
// gates of a task. The rules live in engines/rules/lifecycle.h; this file turns them into operations.
// tasks.complete enforces the same rules through LifecycleEngine::check_complete.
#include <algorithm>

#include "core/text.h"
#include "domains/context.h"
#include "domains/evidence.h"
#include "domains/params.h"
#include "domains/projection.h"
#include "domains/registry.h"
#include "engines/rules/evidence.h"
#include "engines/rules/lifecycle.h"

namespace ct {
namespace {

Result<LifecycleEngine> engine(Context& context) {
  CT_TRY_ASSIGN(std::string agent, context.agent_name());
  return LifecycleEngine(context.db(), *context.config, context.now(), Actor{agent, context.session},
                         [&context](FieldChange change) { context.record(std::move(change)); });
}

/// A stage or gate: its name under `key`, its status, and who recorded it when.
json::Value state_json(const LifecycleState& state, std::string_view key) {
  json::Value out = json::Value::object();
  out.set(key, state.name);
  out.set("status", state.status);
  if (state.at != 0) out.set("at", format_iso8601(state.at));
  if (!state.agent.empty()) out.set("agent", state.agent);
  if (!state.notes.empty()) out.set("notes", state.notes);
  if (!state.evidence.empty()) out.set("evidence", state.evidence);
  return out;
}

json::Value states_json(const std::vector<LifecycleState>& states, std::string_view key) {
  json::Value out = json::Value::array();
  for (const auto& state : states) out.push_back(state_json(state, key));
  return out;
}

/// The reply of a change: the subject, the new state, what it was, and an E_NO_CHANGE note when
/// it already was so.
Reply change_reply(const LifecycleChange& change, std::string_view key) {
  json::Value data = json::Value::object();
  data.set("id", change.state.subject);
  json::Value state = state_json(change.state, key);
  for (const auto& [name, value] : state.as_object()) data.set(name, value);
  data.set("from", change.from);
  if (!change.reset.empty()) data.set("reset", json::Value::array_of(change.reset));
  Reply reply{std::move(data), {}, {}, {}};
  reply.advice_warnings = change.warnings;
  if (!change.changed) reply.note = ErrorCode::NoChange;
  return reply;
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

// -- queries ----------------------------------------------------------------------------------

Result<Reply> status(Context& context, const Params& params) {
  CT_TRY_ASSIGN(LifecycleEngine lifecycle, engine(context));
  const std::string& id = params.str("id");
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
  return Reply{std::move(data), {}, {}, {}};
}

Result<Reply> stages(Context& context, const Params&) {
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
  return Reply{std::move(data), {}, {}, {}};
}

Result<Reply> check(Context& context, const Params& params) {
  CT_TRY_ASSIGN(LifecycleEngine lifecycle, engine(context));
  const std::string& id = params.str("id");
  const std::string& stage = params.str("stage");
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
  return Reply{std::move(data), std::move(warnings), {}, {}};
}

Result<Reply> history(Context& context, const Params& params) {
  CT_TRY_ASSIGN(LifecycleEngine lifecycle, engine(context));
  CT_TRY_ASSIGN(Task task, lifecycle.task(params.str("id")));
  std::optional<LifecycleKind> kind;
  if (auto text = params.opt_str("kind")) kind = *text == "gate" ? LifecycleKind::Gate : LifecycleKind::Stage;
  const std::int64_t limit = params.integer("limit");
  const std::int64_t offset = params.integer("offset");
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
    if (wants_full(params)) {
      row.set("operation", event.operation);
      if (!event.state.session.empty()) row.set("session", event.state.session);
      if (!event.state.evidence.empty()) row.set("evidence", event.state.evidence);
    }
    if (!event.state.agent.empty()) row.set("agent", event.state.agent);
    if (!event.state.notes.empty()) row.set("notes", event.state.notes);
    rows.push_back(std::move(row));
  }
  Reply reply{std::move(rows), {}, Page{total, limit, offset}, {}};
  if (total == 0) reply.note = ErrorCode::NoData;
  return reply;
}

Result<Reply> gates(Context& context, const Params& params) {
  CT_TRY_ASSIGN(LifecycleEngine lifecycle, engine(context));
  CT_TRY_ASSIGN(Task task, lifecycle.task(params.str("id")));
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
  return Reply{std::move(data), {}, {}, {}};
}

// -- mutations --------------------------------------------------------------------------------

Result<Reply> record(Context& context, const Params& params) {
  CT_TRY_ASSIGN(LifecycleEngine lifecycle, engine(context));
  CT_TRY_ASSIGN(Task epic, lifecycle.stage_subject(params.str("id")));
  CT_TRY_ASSIGN(LifecycleChange change, lifecycle.record(epic, params.str("stage"), params.str("status"),
                                                         params.opt_str("notes").value_or("")));
  return change_reply(change, "stage");
}

Result<Reply> skip(Context& context, const Params& params) {
  CT_TRY_ASSIGN(LifecycleEngine lifecycle, engine(context));
  CT_TRY_ASSIGN(Task epic, lifecycle.stage_subject(params.str("id")));
  CT_TRY_ASSIGN(LifecycleChange change, lifecycle.skip(epic, params.str("stage"), params.str("reason")));
  return change_reply(change, "stage");
}

Result<Reply> reset(Context& context, const Params& params) {
  CT_TRY_ASSIGN(LifecycleEngine lifecycle, engine(context));
  CT_TRY_ASSIGN(Task epic, lifecycle.stage_subject(params.str("id")));
  CT_TRY_ASSIGN(LifecycleChange change, lifecycle.reset(epic, params.str("stage"), params.str("reason")));
  return change_reply(change, "stage");
}

Result<Reply> gate_pass(Context& context, const Params& params) {
  CT_TRY_ASSIGN(LifecycleEngine lifecycle, engine(context));
  CT_TRY_ASSIGN(Task task, lifecycle.task(params.str("id")));
  // The atoms the external step checked are recorded first: verification.evidence decides whether
  // a required gate may pass on them (domains/evidence.h).
  CT_TRY_ASSIGN(std::vector<EvidenceAtom> recorded, evidence::record_atoms(context, params, task, params.str("gate")));
  std::vector<std::string> warnings;
  CT_TRY(evidence::gate_rules(context, task, params.str("gate"), recorded, warnings));
  CT_TRY_ASSIGN(LifecycleChange change,
                lifecycle.pass_gate(task, params.str("gate"), params.opt_str("notes").value_or(""),
                                    evidence::summary(recorded)));
  Reply reply = change_reply(change, "gate");
  for (auto& warning : warnings) reply.warnings.push_back(std::move(warning));
  if (!recorded.empty()) {
    json::Value atoms = json::Value::array();
    for (const auto& atom : recorded) {
      json::Value item = json::Value::object();
      item.set("id", atom.id);
      item.set("kind", atom.kind);
      item.set("verified", atom.verified);
      atoms.push_back(std::move(item));
    }
    reply.data.set("atoms", std::move(atoms));
    // Recorded evidence is a change even when the gate had passed before.
    if (!change.changed) reply.note.reset();
  }
  if (change.changed && task.status != TaskStatus::Done) {
    CT_TRY_ASSIGN(std::vector<std::string> missing, lifecycle.missing_required_gates(task.id));
    if (missing.empty() && !context.config->get_strings("verification.required").empty())
      reply.data.set("readyToComplete", true);
  }
  return reply;
}

Result<Reply> gate_fail(Context& context, const Params& params) {
  CT_TRY_ASSIGN(LifecycleEngine lifecycle, engine(context));
  CT_TRY_ASSIGN(Task task, lifecycle.task(params.str("id")));
  CT_TRY_ASSIGN(LifecycleChange change, lifecycle.fail_gate(task, params.str("gate"), params.str("notes"),
                                                            params.opt_str("evidence").value_or("")));
  return change_reply(change, "gate");
}

ParamSpec id_param(std::string_view description) {
  return {.name = "id", .type = ParamType::TaskId, .required = true, .description = description, .positional = true};
}

ParamSpec stage_param() {
  return {.name = "stage", .type = ParamType::Enum, .required = true,
          .choices = std::vector<std::string_view>(kLifecycleStages.begin(), kLifecycleStages.end()),
          .description = "RCSD-IVTR stage", .positional = true};
}

ParamSpec gate_param() {
  return {.name = "gate", .type = ParamType::Enum, .required = true,
          .choices = std::vector<std::string_view>(kVerificationGates.begin(), kVerificationGates.end()),
          .description = "Verification gate, in order", .positional = true};
}

ParamSpec failure_evidence_param() {
  return {.name = "evidence", .type = ParamType::String, .max = 500,
          .description = "What shows it: a link, file, commit or test run"};
}

}  // namespace

void register_lifecycle_domain(Registry& registry) {
  registry.add({.domain = "lifecycle", .name = "status", .gateway = Gateway::Query,
                .summary = "Show an epic's RCSD-IVTR stages and where it stands",
                .params = {id_param("The epic, or a task of it")},
                .returns = "{epic, id?, tracked, enforcement, currentStage?, nextStage?, finished, stages[{stage, "
                           "status, at?, agent?, notes?}]}; tracked: a stage was recorded (only tracked epics are "
                           "gated)",
                .errors = {ErrorCode::NotFound, ErrorCode::Validation},
                .examples = {{R"({"id":"T001"})", "where is epic T001?"}},
                .idempotent = true, .tier = 2, .handler = status});
  registry.add({.domain = "lifecycle", .name = "stages", .gateway = Gateway::Query,
                .summary = "List the stages, their prerequisites and the operations they gate",
                .returns = "{enforcement, stages[{stage, pipeline rcsd|ivtr, prerequisites[], skippable}], "
                           "gatedOperations[{operation, appliesTo, needs}], verificationGates[], requiredGates[]}",
                .examples = {{R"({})", "the lifecycle's rules"}},
                .idempotent = true, .tier = 2, .handler = stages});
  registry.add({.domain = "lifecycle", .name = "check", .gateway = Gateway::Query,
                .summary = "Can an epic enter a stage? Which prerequisites are missing",
                .params = {id_param("The epic, or a task of it"), stage_param()},
                .returns = "{epic, stage, status, canEnter, missing[], skippable, enforcement, tracked, "
                           "gatedOperations[{operation, appliesTo, needs}]}",
                .errors = {ErrorCode::NotFound, ErrorCode::Validation},
                .examples = {{R"({"id":"T001","stage":"implementation"})", "may T001 start implementing?"}},
                .idempotent = true, .tier = 2, .aliases = {"prerequisites"}, .original_names = {"lifecycle.validate"},
                .handler = check});
  registry.add({.domain = "lifecycle", .name = "history", .gateway = Gateway::Query,
                .summary = "List the stage and gate changes of an epic or task, newest first",
                .params = {id_param("The epic (stages) or task (gates)"),
                           {.name = "kind", .type = ParamType::Enum, .choices = {"stage", "gate"},
                            .description = "Only stage or only gate changes"},
                           limit_param("50"), offset_param()},
                .returns = "[{seq, at, kind, name, from, to, agent?, notes?}] (operation, session?, evidence? with "
                           "detail:'full'); E_NO_DATA note when none",
                .errors = {ErrorCode::NotFound},
                .examples = {{R"({"id":"T001"})", "what happened to T001's lifecycle"}},
                .idempotent = true, .tier = 2,
                .row_fields = {"seq", "at", "kind", "name", "from", "to", "agent", "notes", "operation", "session",
                               "evidence"},
                .handler = history});
  registry.add({.domain = "lifecycle", .name = "gates", .gateway = Gateway::Query,
                .summary = "Show a task's verification gates",
                .params = {id_param("The task")},
                .returns = "{id, passed, next?, gates[{gate, status pending|passed|failed, at?, agent?, notes?, "
                           "evidence?}], required[], missingRequired[], separateAgents}",
                .errors = {ErrorCode::NotFound},
                .examples = {{R"({"id":"T002"})", "is T002 verified?"}},
                .idempotent = true, .tier = 2, .handler = gates});

  registry.add({.domain = "lifecycle", .name = "record", .gateway = Gateway::Mutate,
                .summary = "Record an epic's stage as active, completed or failed",
                .params = {id_param("The epic"), stage_param(),
                           {.name = "status", .type = ParamType::Enum, .required = true,
                            .choices = {"active", "completed", "failed"}, .description = "The stage's new status",
                            .positional = true},
                           {.name = "notes", .type = ParamType::String, .max = 2000,
                            .description = "What was decided or produced"}},
                .returns = "{id, stage, status, at, agent?, notes?, from}; E_NO_CHANGE note when it already had that status. Earlier stages not completed "
                           "or skipped: E_LIFECYCLE_GATE_FAILED (strict) or a warning (advisory)",
                .errors = {ErrorCode::NotFound, ErrorCode::Validation, ErrorCode::LifecycleGateFailed,
                           ErrorCode::LifecycleTransitionInvalid},
                .examples = {{R"({"id":"T001","stage":"research","status":"completed","notes":"options compared"})",
                              "research is done"}},
                .idempotent = true, .tier = 2, .original_names = {"lifecycle.progress"}, .handler = record});
  registry.add({.domain = "lifecycle", .name = "skip", .gateway = Gateway::Mutate,
                .summary = "Skip a stage that lifecycle.allowSkip allows",
                .params = {id_param("The epic"), stage_param(),
                           {.name = "reason", .type = ParamType::String, .required = true, .min = 10, .max = 2000,
                            .description = "Why it is skipped (10+ characters)"}},
                .returns = "{id, stage, status:'skipped', at, agent?, notes, from}; E_NO_CHANGE note when already "
                           "skipped",
                .errors = {ErrorCode::NotFound, ErrorCode::Validation, ErrorCode::LifecycleTransitionInvalid},
                .examples = {{R"({"id":"T001","stage":"consensus","reason":"one viable option, nothing to vote on"})",
                              "skip consensus"}},
                .idempotent = true, .tier = 2, .handler = skip});
  registry.add({.domain = "lifecycle", .name = "reset", .gateway = Gateway::Mutate,
                .summary = "Set a stage back to pending (emergency, with a reason)",
                .params = {id_param("The epic"), stage_param(),
                           {.name = "reason", .type = ParamType::String, .required = true, .min = 20, .max = 2000,
                            .description = "Why it must be done again (20+ characters)"}},
                .returns = "{id, stage, status:'pending', at, agent?, notes, from}; later stages keep their status "
                           "(a warning lists them); E_NO_CHANGE note when already pending",
                .errors = {ErrorCode::NotFound, ErrorCode::Validation},
                .examples = {{R"({"id":"T001","stage":"specification","reason":"the API changed under the spec"})",
                              "redo the specification"}},
                .tier = 2, .aliases = {"unskip"}, .handler = reset});
  registry.add({.domain = "lifecycle", .name = "gate.pass", .gateway = Gateway::Mutate,
                .summary = "Pass a task's verification gate",
                .params = {id_param("The task"), gate_param(),
                           {.name = "notes", .type = ParamType::String, .max = 2000, .description = "What was checked"},
                           evidence::evidence_param("Atoms: [{commit}|{files:[…]}|{test:<run id>}|{pr}|{note}, each "
                                                    "with covers?:[criteria]]; text is a note")},
                .returns = "{id, gate, status:'passed', at, agent?, notes?, evidence? (the atoms in a line), from, "
                           "atoms?[{id, kind, verified}], readyToComplete?}; the task's status is unchanged (complete "
                           "it with tasks.complete); E_NO_CHANGE note when already passed and no evidence given. The "
                           "gate before not passed: E_GATE_DEPENDENCY (strict) or a warning. Atoms are checked (a "
                           "commit exists, files are read, a test run passed): E_EVIDENCE_INVALID; a gate "
                           "verification.required names needs checked atoms in strict verification.evidence: "
                           "E_EVIDENCE_UNVERIFIED",
                .errors = {ErrorCode::NotFound, ErrorCode::GateDependency, ErrorCode::CircularValidation,
                           ErrorCode::InvalidAgent, ErrorCode::Validation, ErrorCode::EvidenceInvalid,
                           ErrorCode::EvidenceUnverified},
                .examples = {{R"({"id":"T002","gate":"implemented","evidence":[{"commit":"1a2b3c4"}]})", "the code is in"},
                             {R"({"id":"T002","gate":"testsPassed","evidence":[{"test":12,"covers":[1,2]}]})",
                              "tests pass, covering two criteria"}},
                .idempotent = true, .tier = 2,
                .external = [](Context& context, const Params& params) {
                  return evidence::check_atoms(context, params, /*recheck=*/false);
                },
                .external_checks_only = true,
                .handler = gate_pass});
  registry.add({.domain = "lifecycle", .name = "gate.fail", .gateway = Gateway::Mutate,
                .summary = "Fail a task's verification gate; later gates reset",
                .params = {id_param("The task"), gate_param(),
                           {.name = "notes", .type = ParamType::String, .required = true, .min = 10, .max = 2000,
                            .description = "What failed (10+ characters)"},
                           failure_evidence_param()},
                .returns = "{id, gate, status:'failed', at, agent?, notes, evidence?, from, reset?[gates set back to "
                           "pending]}; the task's status is unchanged",
                .errors = {ErrorCode::NotFound},
                .examples = {{R"({"id":"T002","gate":"testsPassed","notes":"login test fails on empty password"})",
                              "tests fail"}},
                .tier = 2, .handler = gate_fail});
}

}  // namespace ct
