// The lifecycle engine (docs/architecture.md §5, issue 11): the RCSD-IVTR stages an epic moves through and
// the verification gates a task passes before it is trusted, with the rules of both declared once
// here. The lifecycle domain serves them; tasks.complete asks check_complete() before it finishes
// a task.
//
// Stages: research → consensus → specification → decomposition (RCSD) → implementation →
// validation → testing → release (IVTR), each pending|active|completed|skipped|failed. Entering a
// stage needs every earlier one completed or skipped. Only epics with a recorded stage are gated:
// a project that never uses the lifecycle is never blocked by it.
//
// Gates: implemented → testsPassed → qaPassed → cleanupDone → securityPassed → documented, each
// pending|passed|failed. Passing one needs the one before passed; failing one resets every later
// gate to pending. Gates never change a task's status.
//
// lifecycle.enforcement decides what a missing prerequisite does: strict (an error), advisory (a
// warning) or off (nothing). A transition the state machine has no arrow for (completing a stage
// twice, skipping a completed one) is refused in every mode: lifecycle.reset is the way back.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"
#include "engines/project/config.h"
#include "engines/store/audit_log.h"
#include "engines/store/lifecycle_store.h"
#include "engines/store/store_roles.h"
#include "engines/store/task_store.h"

namespace ct {

inline constexpr std::array<std::string_view, 8> kLifecycleStages = {
    "research", "consensus", "specification", "decomposition", "implementation", "validation", "testing", "release"};
inline constexpr std::array<std::string_view, 5> kStageStatuses = {"pending", "active", "completed", "skipped",
                                                                   "failed"};
inline constexpr std::array<std::string_view, 6> kVerificationGates = {
    "implemented", "testsPassed", "qaPassed", "cleanupDone", "securityPassed", "documented"};

enum class Enforcement { Strict, Advisory, Off };
std::string_view to_string(Enforcement enforcement);
Enforcement lifecycle_enforcement(const Config& config);

std::optional<std::size_t> stage_index(std::string_view stage);
std::optional<std::size_t> gate_index(std::string_view gate);
/// "rcsd" for research … decomposition (setting the work up), "ivtr" for the rest (doing it).
std::string_view stage_pipeline(std::string_view stage);
/// Completed or skipped: what the stages after it need.
bool stage_finished(std::string_view status);

/// A task operation the lifecycle gates, declared once: tasks.complete enforces these rules and
/// lifecycle.stages and lifecycle.check show them.
struct StageGate {
  std::string_view operation;  // "tasks.complete"
  std::string_view applies_to; // which tasks
  std::string_view needs;      // what must hold first
};
std::span<const StageGate> stage_gates();

/// The stage whose work a task of an epic does: the latest stage one of its labels names, else
/// implementation.
std::string_view task_stage(const Task& task);

/// Who makes a lifecycle change (the session's agent, else the caller's).
struct Actor {
  std::string agent;
  std::string session;
  /// Who it really is (domains/principal.h): what verification.separateAgents compares, since an
  /// agent renames itself per session but not its connection. "" for in-process callers.
  std::string principal;
};

/// What a record, skip, reset, gate.pass or gate.fail did.
struct LifecycleChange {
  LifecycleState state;                  // after the change
  std::string from;                      // the status before
  bool changed = false;                  // false: it already had this status (E_NO_CHANGE)
  std::vector<std::string> reset;        // gate.fail: the later gates it reset to pending
  std::vector<Advice> warnings;
};

class LifecycleEngine {
 public:
  using Recorder = std::function<void(FieldChange)>;
  /// Reads tasks and, for the agents who worked on a task, the audit trail.
  LifecycleEngine(StoreRoles<LifecycleStore, TaskStore, AuditLog> store, const Config& config, TimeMs now, Actor actor,
                  Recorder record);

  Enforcement enforcement() const { return enforcement_; }
  std::vector<std::string> allow_skip() const { return config_.get_strings("lifecycle.allowSkip"); }

  /// The task, or E_NOT_FOUND with a fix.
  Result<Task> task(const std::string& id);
  /// The epic a task belongs to: itself when it is an epic, else its nearest epic ancestor;
  /// nullopt when it has none.
  Result<std::optional<Task>> epic_of(const Task& task);
  /// The epic of `id` for a stage change: `id` itself must be an epic (E_VALIDATION naming its
  /// epic, when it has one, otherwise).
  Result<Task> stage_subject(const std::string& id);

  /// All eight stages in order; a stage never recorded is pending (at 0, no agent).
  Result<std::vector<LifecycleState>> stages(const std::string& epic);
  /// Whether the epic has any recorded stage (only those are gated).
  static bool tracked(const std::vector<LifecycleState>& stages);
  /// The stages before `stage` that are neither completed nor skipped.
  static std::vector<std::string> missing_before(std::string_view stage, const std::vector<LifecycleState>& stages);

  /// lifecycle.record: status active|completed|failed, its prerequisites checked per enforcement.
  /// A completed or skipped stage changes only through reset (E_LIFECYCLE_TRANSITION_INVALID).
  Result<LifecycleChange> record(const Task& epic, std::string_view stage, std::string_view status,
                                 const std::string& notes);
  /// lifecycle.skip: only stages in lifecycle.allowSkip, and not a completed one.
  Result<LifecycleChange> skip(const Task& epic, std::string_view stage, const std::string& reason);
  /// lifecycle.reset: back to pending, whatever it was (the emergency way back).
  Result<LifecycleChange> reset(const Task& epic, std::string_view stage, const std::string& reason);

  /// All six gates in order; a gate never recorded is pending.
  Result<std::vector<LifecycleState>> gates(const std::string& task_id);
  /// Only the stages (or gates) of `subject` ever recorded, in the order stages() (gates()) gives
  /// them: one read, nothing built for the rest (tasks.show).
  Result<std::vector<LifecycleState>> recorded(const std::string& subject, LifecycleKind kind);
  Result<LifecycleChange> pass_gate(const Task& task, std::string_view gate, const std::string& notes,
                                    const std::string& evidence);
  Result<LifecycleChange> fail_gate(const Task& task, std::string_view gate, const std::string& notes,
                                    const std::string& evidence);
  /// The gates of verification.required that `task` has not passed.
  Result<std::vector<std::string>> missing_required_gates(const std::string& task_id);

  /// The stages `task`'s work waits for (stage_gates()): its epic, the stage whose prerequisites
  /// apply ("release" for the epic itself) and those not completed or skipped; nullopt when it
  /// waits for none (or its epic is not tracked).
  struct StageWait {
    std::string epic;
    std::string stage;
    std::vector<std::string> missing;
  };
  Result<std::optional<StageWait>> stage_wait(const Task& task);

  /// What tasks.complete of `task` needs first (stage_gates()): E_LIFECYCLE_GATE_FAILED for
  /// missing stages and E_GATE_DEPENDENCY for required gates not passed in strict mode; warnings
  /// in advisory mode.
  Result<void> check_complete(const Task& task, std::vector<std::string>& warnings);

 private:
  /// Applies the enforcement to a missing prerequisite: the error in strict mode, else a warning.
  Result<void> enforce(Error error, std::vector<std::string>& warnings) const;
  Result<LifecycleChange> put(const std::string& subject, LifecycleKind kind, std::string_view name,
                              std::string_view status, const std::string& from, const std::string& notes,
                              const std::string& evidence, std::string_view operation);
  /// The agents who worked on the task: whoever passed `implemented` and whoever started or
  /// completed it (the audit trail).
  Result<std::vector<std::string>> authors(const std::string& task_id, const std::vector<LifecycleState>& gates);

  LifecycleStore& store_;
  TaskStore& tasks_;
  AuditLog& audit_;
  const Config& config_;
  TimeMs now_;
  Actor actor_;
  Recorder record_;
  Enforcement enforcement_;
};

}  // namespace ct
