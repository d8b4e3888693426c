// lifecycle domain, its changes: an epic's stages recorded, skipped or reset, and a task's
// verification gates passed (with evidence: domains/evidence.h) or failed. The rules live in
// engines/rules/lifecycle.h; the reads are lifecycle_query.cpp's.
#include "domains/evidence.h"
#include "domains/lifecycle/lifecycle_common.h"
#include "engines/rules/evidence.h"

namespace ct::lifecycle {
namespace {

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
  CT_TRY_ASSIGN(std::vector<EvidenceAtom> recorded,
                evidence::record_atoms(context, /*waive=*/json::Value(), task, params.str("gate")));
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

ParamSpec failure_evidence_param() {
  return {.name = "evidence", .type = ParamType::String, .max = 500,
          .description = "What shows it: a link, file, commit or test run"};
}

}  // namespace

void register_lifecycle_mutations(Registry& registry) {
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
                  return evidence::check_atoms(context, params.str("id"), params.value("evidence"), /*recheck=*/false);
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

}  // namespace ct::lifecycle
