// lifecycle domain, its changes: an epic's stages recorded, skipped or reset, and a task's
// verification gates passed (with evidence: domains/evidence.h) or failed. The rules live in
// engines/rules/lifecycle.h; the reads are lifecycle_query.cpp's.
#include "domains/bind.h"
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
  Reply reply = Reply::noted(std::move(data), no_change_if(!change.changed));
  reply.advice_warnings = change.warnings;
  return reply;
}

struct RecordArgs {
  std::string id;
  std::string stage;
  std::string status;
  std::string notes;
};

Result<Reply> record(Context& context, const RecordArgs& args) {
  CT_TRY_ASSIGN(LifecycleEngine lifecycle, engine(context));
  CT_TRY_ASSIGN(Task epic, lifecycle.stage_subject(args.id));
  CT_TRY_ASSIGN(LifecycleChange change, lifecycle.record(epic, args.stage, args.status, args.notes));
  return change_reply(change, "stage");
}

/// skip and reset: the epic, the stage and why.
struct ReasonArgs {
  std::string id;
  std::string stage;
  std::string reason;
};

Result<Reply> skip(Context& context, const ReasonArgs& args) {
  CT_TRY_ASSIGN(LifecycleEngine lifecycle, engine(context));
  CT_TRY_ASSIGN(Task epic, lifecycle.stage_subject(args.id));
  CT_TRY_ASSIGN(LifecycleChange change, lifecycle.skip(epic, args.stage, args.reason));
  return change_reply(change, "stage");
}

Result<Reply> reset(Context& context, const ReasonArgs& args) {
  CT_TRY_ASSIGN(LifecycleEngine lifecycle, engine(context));
  CT_TRY_ASSIGN(Task epic, lifecycle.stage_subject(args.id));
  CT_TRY_ASSIGN(LifecycleChange change, lifecycle.reset(epic, args.stage, args.reason));
  return change_reply(change, "stage");
}

struct GatePassArgs {
  std::string id;
  std::string gate;
  std::string notes;
  json::Value evidence;  // atoms, one atom or a note's text; null when not given
};

/// gate.pass's external step: the call's atoms checked before the transaction.
Result<Reply> check_gate_atoms(Context& context, const GatePassArgs& args) {
  return evidence::check_atoms(context, args.id, args.evidence, /*recheck=*/false);
}

Result<Reply> gate_pass(Context& context, const GatePassArgs& args) {
  CT_TRY_ASSIGN(LifecycleEngine lifecycle, engine(context));
  CT_TRY_ASSIGN(Task task, lifecycle.task(args.id));
  // The atoms the external step checked are recorded first: verification.evidence decides whether
  // a required gate may pass on them (domains/evidence.h). gate.pass takes no waivers.
  std::vector<std::string> warnings;
  CT_TRY_ASSIGN(std::vector<EvidenceAtom> recorded,
                evidence::record_atoms(context, json::Value(), task, args.gate, warnings));
  CT_TRY(evidence::gate_rules(context, task, args.gate, recorded, warnings));
  CT_TRY_ASSIGN(LifecycleChange change,
                lifecycle.pass_gate(task, args.gate, args.notes, evidence::summary(recorded)));
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

struct GateFailArgs {
  std::string id;
  std::string gate;
  std::string notes;
  std::string evidence;
};

Result<Reply> gate_fail(Context& context, const GateFailArgs& args) {
  CT_TRY_ASSIGN(LifecycleEngine lifecycle, engine(context));
  CT_TRY_ASSIGN(Task task, lifecycle.task(args.id));
  CT_TRY_ASSIGN(LifecycleChange change, lifecycle.fail_gate(task, args.gate, args.notes, args.evidence));
  return change_reply(change, "gate");
}


void register_record(Registry& registry) {
  const auto record_args =
      bind(field(&RecordArgs::id, id_param("The epic")), field(&RecordArgs::stage, stage_param()),
           field(&RecordArgs::status, {.name = "status", .type = ParamType::Enum, .required = true,
                                       .choices = {"active", "completed", "failed"}, .description = "The stage's new status",
                                       .positional = true}),
           field(&RecordArgs::notes,
                 {.name = "notes", .type = ParamType::String, .max = 2000, .description = "What was decided or produced"}));
  registry.add({.domain = "lifecycle", .name = "record", .gateway = Gateway::Mutate,
                .summary = "Record an epic's stage as active, completed or failed",
                .params = record_args.specs(),
                .returns = "{id, stage, status, at, agent?, notes?, from}; E_NO_CHANGE note when it already had that status. Earlier stages not completed "
                           "or skipped: E_LIFECYCLE_GATE_FAILED (strict) or a warning (advisory)",
                .errors = {ErrorCode::NotFound, ErrorCode::Validation, ErrorCode::LifecycleGateFailed,
                           ErrorCode::LifecycleTransitionInvalid},
                .examples = {{R"({"id":"T001","stage":"research","status":"completed","notes":"options compared"})",
                              "research is done"}},
                .idempotent = true, .tier = 2, .original_names = {"lifecycle.progress"},
                .handler = record_args.handler(record)});
}

void register_skip(Registry& registry) {
  const auto skip_args =
      bind(field(&ReasonArgs::id, id_param("The epic")), field(&ReasonArgs::stage, stage_param()),
           field(&ReasonArgs::reason, {.name = "reason", .type = ParamType::String, .required = true, .min = 10, .max = 2000,
                                       .description = "Why it is skipped (10+ characters)"}));
  registry.add({.domain = "lifecycle", .name = "skip", .gateway = Gateway::Mutate,
                .summary = "Skip a stage that lifecycle.allowSkip allows",
                .params = skip_args.specs(),
                .returns = "{id, stage, status:'skipped', at, agent?, notes, from}; E_NO_CHANGE note when already "
                           "skipped",
                .errors = {ErrorCode::NotFound, ErrorCode::Validation, ErrorCode::LifecycleTransitionInvalid},
                .examples = {{R"({"id":"T001","stage":"consensus","reason":"one viable option, nothing to vote on"})",
                              "skip consensus"}},
                .idempotent = true, .tier = 2, .handler = skip_args.handler(skip)});
}

void register_reset(Registry& registry) {
  const auto reset_args =
      bind(field(&ReasonArgs::id, id_param("The epic")), field(&ReasonArgs::stage, stage_param()),
           field(&ReasonArgs::reason, {.name = "reason", .type = ParamType::String, .required = true, .min = 20, .max = 2000,
                                       .description = "Why it must be done again (20+ characters)"}));
  registry.add({.domain = "lifecycle", .name = "reset", .gateway = Gateway::Mutate,
                .summary = "Set a stage back to pending (emergency, with a reason)",
                .params = reset_args.specs(),
                .returns = "{id, stage, status:'pending', at, agent?, notes, from}; later stages keep their status "
                           "(a warning lists them); E_NO_CHANGE note when already pending",
                .errors = {ErrorCode::NotFound, ErrorCode::Validation},
                .examples = {{R"({"id":"T001","stage":"specification","reason":"the API changed under the spec"})",
                              "redo the specification"}},
                .tier = 2, .aliases = {"unskip"}, .handler = reset_args.handler(reset)});
}

void register_gate_pass(Registry& registry) {
  const auto pass_args = bind(
      field(&GatePassArgs::id, id_param("The task")), field(&GatePassArgs::gate, gate_param()),
      field(&GatePassArgs::notes, {.name = "notes", .type = ParamType::String, .max = 2000, .description = "What was checked"}),
      field(&GatePassArgs::evidence, evidence::evidence_param("Atoms: [{commit}|{files:[…]}|{test:<run id>}|{pr}|{note}, each "
                                                              "with covers?:[criteria]]; text is a note")));
  registry.add({.domain = "lifecycle", .name = "gate.pass", .gateway = Gateway::Mutate,
                .summary = "Pass a task's verification gate",
                .params = pass_args.specs(),
                .returns = "{id, gate, status:'passed', at, agent?, notes?, evidence? (the atoms in a line), from, "
                           "atoms?[{id, kind, verified}], readyToComplete?}; the task's status is unchanged (complete "
                           "it with tasks.complete); E_NO_CHANGE note when already passed and no evidence given. The "
                           "gate before not passed: E_GATE_DEPENDENCY (strict) or a warning. Atoms are checked (a "
                           "commit exists, files are read, a test run passed): E_EVIDENCE_INVALID; a commit or files "
                           "verify only as the task's own change (its branch against its base, else the commits "
                           "cited): outside it strict refuses, advisory records it unrelated; a gate "
                           "verification.required names needs checked atoms in strict verification.evidence: "
                           "E_EVIDENCE_UNVERIFIED",
                .errors = {ErrorCode::NotFound, ErrorCode::GateDependency, ErrorCode::CircularValidation,
                           ErrorCode::InvalidAgent, ErrorCode::Validation, ErrorCode::EvidenceInvalid,
                           ErrorCode::EvidenceUnverified},
                .examples = {{R"({"id":"T002","gate":"implemented","evidence":[{"commit":"1a2b3c4"}]})", "the code is in"},
                             {R"({"id":"T002","gate":"testsPassed","evidence":[{"test":12,"covers":[1,2]}]})",
                              "tests pass, covering two criteria"}},
                .idempotent = true, .tier = 2, .external = pass_args.handler(check_gate_atoms), .external_checks_only = true,
                .handler = pass_args.handler(gate_pass)});
}

void register_gate_fail(Registry& registry) {
  const auto fail_args = bind(
      field(&GateFailArgs::id, id_param("The task")), field(&GateFailArgs::gate, gate_param()),
      field(&GateFailArgs::notes, {.name = "notes", .type = ParamType::String, .required = true, .min = 10, .max = 2000,
                                   .description = "What failed (10+ characters)"}),
      field(&GateFailArgs::evidence, {.name = "evidence", .type = ParamType::String, .max = 500,
                                      .description = "What shows it: a link, file, commit or test run"}));
  registry.add({.domain = "lifecycle", .name = "gate.fail", .gateway = Gateway::Mutate,
                .summary = "Fail a task's verification gate; later gates reset",
                .params = fail_args.specs(),
                .returns = "{id, gate, status:'failed', at, agent?, notes, evidence?, from, reset?[gates set back to "
                           "pending]}; the task's status is unchanged",
                .errors = {ErrorCode::NotFound},
                .examples = {{R"({"id":"T002","gate":"testsPassed","notes":"login test fails on empty password"})",
                              "tests fail"}},
                .tier = 2, .handler = fail_args.handler(gate_fail)});
}

}  // namespace

void register_lifecycle_mutations(Registry& registry) {
  register_record(registry);
  register_skip(registry);
  register_reset(registry);
  register_gate_pass(registry);
  register_gate_fail(registry);
}

}  // namespace ct::lifecycle
