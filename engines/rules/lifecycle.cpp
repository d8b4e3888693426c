#include "engines/rules/lifecycle.h"

#include <algorithm>

#include "core/text.h"
#include "engines/rules/task_engine.h"

namespace ct {
namespace {

constexpr std::array<StageGate, 2> kStageGates = {{
    {"tasks.complete",
     "a task of an epic with a recorded stage; its stage is the latest stage one of its labels names, else "
     "implementation",
     "every stage before the task's own completed or skipped"},
    {"tasks.complete", "the epic itself, once it has a recorded stage", "all eight stages completed or skipped"},
}};

Advice record_call(const std::string& epic, std::string_view stage, std::string_view status) {
  return call("lifecycle.record", {{"id", epic}, {"stage", stage}, {"status", status}});
}

Advice reset_call(const std::string& id, std::string_view stage) {
  return call("lifecycle.reset", {{"id", id}, {"stage", stage}, {"reason", "<why it must be done again, 20+ characters>"}});
}

/// The fix for missing stages: record the first one, or skip it when that is allowed.
Advice missing_fix(const std::string& epic, const std::vector<std::string>& missing,
                   const std::vector<std::string>& skippable) {
  const std::string& first = missing.front();
  if (std::find(skippable.begin(), skippable.end(), first) != skippable.end())
    return record_call(epic, first, "completed") + ", or skip it: " +
           call("lifecycle.skip", {{"id", epic}, {"stage", first}, {"reason", "<why, 10+ characters>"}});
  return record_call(epic, first, "completed");
}

/// Whether lifecycle.record may move a stage from `from` to `to` (active|completed|failed).
bool record_allowed(std::string_view from, std::string_view to) {
  if (from == "pending") return true;
  if (from == "active") return to == "completed" || to == "failed";
  if (from == "failed") return to == "active" || to == "completed";
  return false;  // completed, skipped: only reset goes back
}

/// Every stage or gate of `subject` in `names`' order; one never recorded is pending (at 0).
Result<std::vector<LifecycleState>> in_order(LifecycleStore& store, const std::string& subject, LifecycleKind kind,
                                             std::span<const std::string_view> names) {
  CT_TRY_ASSIGN(std::vector<LifecycleState> recorded, store.lifecycle_states(subject, kind));
  std::vector<LifecycleState> out;
  for (auto name : names) {
    auto found = std::find_if(recorded.begin(), recorded.end(), [&](const auto& s) { return s.name == name; });
    out.push_back(found != recorded.end() ? *found
                                          : LifecycleState{subject, kind, std::string(name), "pending"});
  }
  return out;
}

/// The reply of a change to the status it already had (E_NO_CHANGE).
LifecycleChange unchanged(const LifecycleState& current) {
  LifecycleChange same;
  same.state = current;
  same.from = current.status;
  return same;
}

// lifecycle.allowSkip lists stages, verification.required gates (engines/project/config.h declares
// the keys).
const bool kAllowSkipRegistered =
    register_config_rule({.key = "lifecycle.allowSkip", .choices = {kLifecycleStages.begin(), kLifecycleStages.end()}});
const bool kRequiredRegistered = register_config_rule(
    {.key = "verification.required", .choices = {kVerificationGates.begin(), kVerificationGates.end()}});

}  // namespace

std::string_view to_string(Enforcement enforcement) {
  switch (enforcement) {
    case Enforcement::Strict: return "strict";
    case Enforcement::Advisory: return "advisory";
    case Enforcement::Off: return "off";
  }
  return "strict";
}

Enforcement lifecycle_enforcement(const Config& config) {
  const std::string& mode = config.get_string("lifecycle.enforcement");
  return mode == "off" ? Enforcement::Off : mode == "advisory" ? Enforcement::Advisory : Enforcement::Strict;
}

std::optional<std::size_t> stage_index(std::string_view stage) {
  auto found = std::find(kLifecycleStages.begin(), kLifecycleStages.end(), stage);
  if (found == kLifecycleStages.end()) return std::nullopt;
  return static_cast<std::size_t>(found - kLifecycleStages.begin());
}

std::optional<std::size_t> gate_index(std::string_view gate) {
  auto found = std::find(kVerificationGates.begin(), kVerificationGates.end(), gate);
  if (found == kVerificationGates.end()) return std::nullopt;
  return static_cast<std::size_t>(found - kVerificationGates.begin());
}

std::string_view stage_pipeline(std::string_view stage) {
  auto index = stage_index(stage);
  return index && *index < 4 ? "rcsd" : "ivtr";
}

bool stage_finished(std::string_view status) { return status == "completed" || status == "skipped"; }

std::span<const StageGate> stage_gates() { return kStageGates; }

std::string_view task_stage(const Task& task) {
  std::optional<std::size_t> latest;
  for (const auto& label : task.labels)
    if (auto index = stage_index(label); index && (!latest || *index > *latest)) latest = index;
  return latest ? kLifecycleStages[*latest] : std::string_view("implementation");
}

LifecycleEngine::LifecycleEngine(StoreRoles<LifecycleStore, TaskStore, AuditLog> store, const Config& config,
                                 TimeMs now, Actor actor, Recorder record)
    : store_(store.get<LifecycleStore>()), tasks_(store.get<TaskStore>()), audit_(store.get<AuditLog>()),
      config_(config), now_(now), actor_(std::move(actor)), record_(std::move(record)),
      enforcement_(lifecycle_enforcement(config)) {}

Result<Task> LifecycleEngine::task(const std::string& id) {
  return TaskEngine({tasks_, audit_}, config_, now_, actor_.session, nullptr).get(id);
}

Result<std::optional<Task>> LifecycleEngine::epic_of(const Task& task) {
  std::optional<Task> current = task;
  // Depth is at most hierarchy.maxDepth (3); the bound only guards against a damaged parent chain.
  for (int hops = 0; current && hops < 16; ++hops) {
    if (current->type == TaskType::Epic) return current;
    if (current->parent.empty()) return std::optional<Task>();
    CT_TRY_ASSIGN(current, tasks_.get_task(current->parent));
  }
  return std::optional<Task>();
}

Result<Task> LifecycleEngine::stage_subject(const std::string& id) {
  CT_TRY_ASSIGN(Task subject, task(id));
  if (subject.type == TaskType::Epic) return subject;
  CT_TRY_ASSIGN(std::optional<Task> epic, epic_of(subject));
  Error error(ErrorCode::Validation, "Task " + id + " is a " + std::string(to_string(subject.type)) +
                                         ": lifecycle stages belong to epics" +
                                         (epic ? " (its epic is " + epic->id + ")" : ""));
  error.fix = epic ? Advice("use its epic: params {id:'" + epic->id + "', …}")
                   : "make it an epic: " + call("tasks.update", {{"id", id}, {"type", "epic"}});
  error.details.set("id", id);
  error.details.set("field", "id");
  if (epic) error.details.set("epic", epic->id);
  return fail(std::move(error));
}

Result<std::vector<LifecycleState>> LifecycleEngine::stages(const std::string& epic) {
  return in_order(store_, epic, LifecycleKind::Stage, kLifecycleStages);
}

bool LifecycleEngine::tracked(const std::vector<LifecycleState>& stages) {
  return std::any_of(stages.begin(), stages.end(), [](const auto& s) { return s.at != 0; });
}

std::vector<std::string> LifecycleEngine::missing_before(std::string_view stage,
                                                         const std::vector<LifecycleState>& stages) {
  std::vector<std::string> missing;
  auto index = stage_index(stage).value_or(kLifecycleStages.size());
  for (std::size_t i = 0; i < index && i < stages.size(); ++i)
    if (!stage_finished(stages[i].status)) missing.push_back(stages[i].name);
  return missing;
}

Result<void> LifecycleEngine::enforce(Error error, std::vector<std::string>& warnings) const {
  if (enforcement_ == Enforcement::Strict) return fail(std::move(error));
  if (enforcement_ == Enforcement::Advisory)
    warnings.push_back(error.message + " (lifecycle.enforcement is advisory: allowed)");
  return {};
}

Result<LifecycleChange> LifecycleEngine::put(const std::string& subject, LifecycleKind kind, std::string_view name,
                                             std::string_view status, const std::string& from,
                                             const std::string& notes, const std::string& evidence,
                                             std::string_view operation) {
  LifecycleEvent event;
  event.state = LifecycleState{subject, kind, std::string(name), std::string(status), now_, actor_.agent,
                               actor_.session, notes, evidence};
  event.from = from;
  event.operation = std::string(operation);
  CT_TRY(store_.put_lifecycle(event));
  if (record_)
    record_(FieldChange{subject, std::string(to_string(kind)) + "." + std::string(name), json::Value(from),
                        json::Value(std::string(status))});
  LifecycleChange change;
  change.state = std::move(event.state);
  change.from = from;
  change.changed = true;
  return change;
}

Result<LifecycleChange> LifecycleEngine::record(const Task& epic, std::string_view stage, std::string_view status,
                                                const std::string& notes) {
  CT_TRY_ASSIGN(std::vector<LifecycleState> all, stages(epic.id));
  const LifecycleState& current = all[*stage_index(stage)];
  if (current.status == status) {
    return unchanged(current);
  }
  if (!record_allowed(current.status, status)) {
    Error error(ErrorCode::LifecycleTransitionInvalid, "Stage " + std::string(stage) + " of " + epic.id + " is " +
                                                           current.status + "; it cannot become " +
                                                           std::string(status));
    error.fix = stage_finished(current.status) ? "reset it first if it must be done again: " + reset_call(epic.id, stage)
                                               : record_call(epic.id, stage, "active");
    return fail(std::move(error)
                    .with_detail("id", epic.id)
                    .with_detail("stage", std::string(stage))
                    .with_detail("from", current.status)
                    .with_detail("to", std::string(status)));
  }
  std::vector<std::string> warnings;
  std::vector<std::string> missing = missing_before(stage, all);
  if (!missing.empty()) {
    Error error(ErrorCode::LifecycleGateFailed, epic.id + " cannot enter " + std::string(stage) + ": " +
                                                    join(missing, ", ") + (missing.size() == 1 ? " is" : " are") +
                                                    " not completed or skipped");
    error.fix = missing_fix(epic.id, missing, allow_skip());
    CT_TRY(enforce(std::move(error)
                       .with_detail("id", epic.id)
                       .with_detail("stage", std::string(stage))
                       .with_detail("missing", json::Value::array_of(missing)),
                   warnings));
  }
  CT_TRY_ASSIGN(LifecycleChange change, put(epic.id, LifecycleKind::Stage, stage, status, current.status, notes, "",
                                            "lifecycle.record"));
  change.warnings.assign(warnings.begin(), warnings.end());
  return change;
}

Result<LifecycleChange> LifecycleEngine::skip(const Task& epic, std::string_view stage, const std::string& reason) {
  std::vector<std::string> skippable = allow_skip();
  if (std::find(skippable.begin(), skippable.end(), stage) == skippable.end()) {
    Error error(ErrorCode::LifecycleTransitionInvalid,
                "Stage " + std::string(stage) + " may not be skipped (lifecycle.allowSkip: " +
                    (skippable.empty() ? std::string("none") : join(skippable, ", ")) + ")");
    std::vector<std::string> with_stage = skippable;
    with_stage.emplace_back(stage);
    // lifecycle.allowSkip is a person's to widen (engines/project/config.cpp): the fix says who.
    error.fix = "complete it: " + record_call(epic.id, stage, "completed") +
                "; or, if this project may skip it: " + config_set_fix("lifecycle.allowSkip", json::Value::array_of(with_stage));
    return fail(std::move(error)
                    .with_detail("stage", std::string(stage))
                    .with_detail("allowSkip", json::Value::array_of(skippable)));
  }
  CT_TRY_ASSIGN(std::vector<LifecycleState> all, stages(epic.id));
  const LifecycleState& current = all[*stage_index(stage)];
  if (current.status == "skipped") {
    return unchanged(current);
  }
  if (current.status == "completed") {
    Error error(ErrorCode::LifecycleTransitionInvalid,
                "Stage " + std::string(stage) + " of " + epic.id + " is completed; a completed stage is not skipped");
    error.fix = "reset it first if it must not count: " + reset_call(epic.id, stage);
    return fail(std::move(error).with_detail("stage", std::string(stage)).with_detail("from", current.status));
  }
  return put(epic.id, LifecycleKind::Stage, stage, "skipped", current.status, reason, "", "lifecycle.skip");
}

Result<LifecycleChange> LifecycleEngine::reset(const Task& epic, std::string_view stage, const std::string& reason) {
  CT_TRY_ASSIGN(std::vector<LifecycleState> all, stages(epic.id));
  const std::size_t index = *stage_index(stage);
  const LifecycleState& current = all[index];
  if (current.status == "pending") {
    return unchanged(current);
  }
  CT_TRY_ASSIGN(LifecycleChange change, put(epic.id, LifecycleKind::Stage, stage, "pending", current.status, reason,
                                            "", "lifecycle.reset"));
  std::vector<std::string> later;
  for (std::size_t i = index + 1; i < all.size(); ++i)
    if (all[i].status != "pending") later.push_back(all[i].name + " (" + all[i].status + ")");
  if (!later.empty())
    change.warnings.push_back("later stages keep their status: " + join(later, ", ") +
                              "; reset them too if they rest on this one");
  return change;
}

Result<std::vector<LifecycleState>> LifecycleEngine::gates(const std::string& task_id) {
  return in_order(store_, task_id, LifecycleKind::Gate, kVerificationGates);
}

Result<std::vector<LifecycleState>> LifecycleEngine::recorded(const std::string& subject, LifecycleKind kind) {
  CT_TRY_ASSIGN(std::vector<LifecycleState> states, store_.lifecycle_states(subject, kind));
  const std::span<const std::string_view> names =
      kind == LifecycleKind::Stage ? std::span<const std::string_view>(kLifecycleStages) : std::span<const std::string_view>(kVerificationGates);
  auto index = [&](const LifecycleState& state) {
    return static_cast<std::size_t>(std::find(names.begin(), names.end(), state.name) - names.begin());
  };
  std::erase_if(states, [&](const LifecycleState& state) { return index(state) == names.size(); });  // as in_order()
  std::stable_sort(states.begin(), states.end(), [&](const auto& a, const auto& b) { return index(a) < index(b); });
  return states;
}

Result<std::vector<std::string>> LifecycleEngine::authors(const std::string& task_id,
                                                          const std::vector<LifecycleState>& gates) {
  // Each author as who they really were (the row's principal), else as the name they went by.
  std::vector<std::string> out;
  auto add = [&](const std::string& who) {
    if (!who.empty() && std::find(out.begin(), out.end(), who) == out.end()) out.push_back(who);
  };
  auto identity = [](const AuditEntry& row) { return row.principal.empty() ? row.agent : row.principal; };
  bool front_found = false;
  for (std::string_view operation : {"tasks.start", "tasks.complete", "lifecycle.gate.pass"}) {
    AuditQuery query;
    query.task_id = task_id;
    query.operation = std::string(operation);
    query.limit = 200;
    CT_TRY_ASSIGN(std::vector<AuditEntry> rows, audit_.read_audit(query));
    for (const auto& row : rows) {
      if (row.outcome != "ok") continue;
      if (operation != "lifecycle.gate.pass") {
        add(identity(row));
      } else if (row.params["gate"].is_string() && row.params["gate"].as_string() == gates.front().name) {
        add(identity(row));
        front_found = true;
      }
    }
  }
  if (!front_found && gates.front().status == "passed") add(gates.front().agent);
  return out;
}

Result<LifecycleChange> LifecycleEngine::pass_gate(const Task& task, std::string_view gate, const std::string& notes,
                                                   const std::string& evidence) {
  CT_TRY_ASSIGN(std::vector<LifecycleState> all, gates(task.id));
  const std::size_t index = *gate_index(gate);
  const LifecycleState& current = all[index];
  if (current.status == "passed") {
    return unchanged(current);
  }
  if (index > 0 && config_.get_bool("verification.separateAgents")) {
    const std::string& actor = actor_.principal.empty() ? actor_.agent : actor_.principal;
    if (actor.empty()) {
      Error error(ErrorCode::InvalidAgent, "verification.separateAgents is on, and this caller has no agent name: "
                                           "who passes " + std::string(gate) + " cannot be told apart from who did "
                                           "the work");
      error.fix = "have another agent verify it: orchestrate.spawn with a validator skill";
      return fail(std::move(error).with_detail("gate", std::string(gate)));
    }
    CT_TRY_ASSIGN(std::vector<std::string> workers, authors(task.id, all));
    if (std::find(workers.begin(), workers.end(), actor) != workers.end()) {
      const std::string shown = actor_.agent.empty() || actor_.agent == actor ? actor : actor_.agent + " (" + actor + ")";
      Error error(ErrorCode::CircularValidation, "Agent " + shown + " worked on " + task.id +
                                                     " and may not pass its " + std::string(gate) +
                                                     " gate (verification.separateAgents)");
      error.fix = "have another agent verify it: orchestrate.spawn with a validator skill, then that agent calls " +
                  call("lifecycle.gate.pass", {{"id", task.id}, {"gate", gate}});
      return fail(std::move(error)
                      .with_detail("gate", std::string(gate))
                      .with_detail("agent", actor_.agent.empty() ? actor : actor_.agent)
                      .with_detail("principal", actor)
                      .with_detail("authors", json::Value::array_of(workers)));
    }
  }
  std::vector<std::string> warnings;
  if (index > 0 && all[index - 1].status != "passed") {
    const std::string& before = all[index - 1].name;
    Error error(ErrorCode::GateDependency, "Gate " + std::string(gate) + " of " + task.id + " needs " + before +
                                               " passed first (it is " + all[index - 1].status + ")");
    error.fix = call("lifecycle.gate.pass", {{"id", task.id}, {"gate", before}});
    CT_TRY(enforce(std::move(error).with_detail("gate", std::string(gate)).with_detail("needs", before), warnings));
  }
  CT_TRY_ASSIGN(LifecycleChange change, put(task.id, LifecycleKind::Gate, gate, "passed", current.status, notes,
                                            evidence, "lifecycle.gate.pass"));
  change.warnings.assign(warnings.begin(), warnings.end());
  return change;
}

Result<LifecycleChange> LifecycleEngine::fail_gate(const Task& task, std::string_view gate, const std::string& notes,
                                                   const std::string& evidence) {
  CT_TRY_ASSIGN(std::vector<LifecycleState> all, gates(task.id));
  const std::size_t index = *gate_index(gate);
  // A repeated failure is recorded too: each one is a round of review with its own notes.
  CT_TRY_ASSIGN(LifecycleChange change, put(task.id, LifecycleKind::Gate, gate, "failed", all[index].status, notes,
                                            evidence, "lifecycle.gate.fail"));
  for (std::size_t i = index + 1; i < all.size(); ++i) {
    if (all[i].status == "pending") continue;
    CT_TRY(put(task.id, LifecycleKind::Gate, all[i].name, "pending", all[i].status,
               "reset: " + std::string(gate) + " failed", "", "lifecycle.gate.fail"));
    change.reset.push_back(all[i].name);
  }
  if (task.status == TaskStatus::Done)
    change.warnings.push_back(task.id + " is done but failed " + std::string(gate) +
                              "; reopen it if it needs more work: " + call("tasks.reopen", {{"id", task.id}}));
  return change;
}

Result<std::vector<std::string>> LifecycleEngine::missing_required_gates(const std::string& task_id) {
  std::vector<std::string> required = config_.get_strings("verification.required");
  std::vector<std::string> missing;
  if (required.empty()) return missing;
  CT_TRY_ASSIGN(std::vector<LifecycleState> all, gates(task_id));
  for (const auto& state : all)
    if (state.status != "passed" && std::find(required.begin(), required.end(), state.name) != required.end())
      missing.push_back(state.name);
  return missing;
}

Result<std::optional<LifecycleEngine::StageWait>> LifecycleEngine::stage_wait(const Task& task) {
  CT_TRY_ASSIGN(std::optional<Task> epic, epic_of(task));
  if (!epic) return std::optional<StageWait>();
  CT_TRY_ASSIGN(std::vector<LifecycleState> all, stages(epic->id));
  if (!tracked(all)) return std::optional<StageWait>();
  const bool is_epic = epic->id == task.id;
  StageWait wait{epic->id, is_epic ? "release" : std::string(task_stage(task)), {}};
  wait.missing = is_epic ? missing_before("", all) : missing_before(wait.stage, all);
  if (wait.missing.empty()) return std::optional<StageWait>();
  return std::optional<StageWait>(std::move(wait));
}

Result<void> LifecycleEngine::check_complete(const Task& task, std::vector<std::string>& warnings) {
  if (enforcement_ == Enforcement::Off) return {};
  CT_TRY_ASSIGN(std::optional<StageWait> wait, stage_wait(task));
  if (wait) {
    const auto& missing = wait->missing;
    std::string what = wait->epic == task.id
                           ? "epic " + task.id + " cannot be completed"
                           : task.id + " (" + wait->stage + " work of epic " + wait->epic + ") cannot be completed";
    Error error(ErrorCode::LifecycleGateFailed, what + ": stage" + (missing.size() == 1 ? " " : "s ") +
                                                    join(missing, ", ") + (missing.size() == 1 ? " is" : " are") +
                                                    " not completed or skipped");
    error.fix = missing_fix(wait->epic, missing, allow_skip());
    CT_TRY(enforce(std::move(error)
                       .with_detail("id", task.id)
                       .with_detail("epic", wait->epic)
                       .with_detail("stage", wait->stage)
                       .with_detail("missing", json::Value::array_of(missing)),
                   warnings));
  }
  if (task.type == TaskType::Epic) return {};
  CT_TRY_ASSIGN(std::vector<std::string> gates_missing, missing_required_gates(task.id));
  if (!gates_missing.empty()) {
    Error error(ErrorCode::GateDependency, task.id + " cannot be completed before its verification gate" +
                                               (gates_missing.size() == 1 ? " " : "s ") + join(gates_missing, ", ") +
                                               (gates_missing.size() == 1 ? " passes" : " pass") +
                                               " (verification.required)");
    error.fix = call("lifecycle.gate.pass", {{"id", task.id}, {"gate", gates_missing.front()}});
    CT_TRY(enforce(std::move(error)
                       .with_detail("id", task.id)
                       .with_detail("missingGates", json::Value::array_of(gates_missing)),
                   warnings));
  }
  return {};
}

}  // namespace ct
