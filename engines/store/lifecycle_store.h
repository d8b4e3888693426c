// The lifecycle role of the storage seam (engines/store/store.h): the states and history of an
// epic's stages and a task's verification gates (engines/rules/lifecycle.h holds their rules).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/clock.h"
#include "core/error.h"
#include "engines/store/sql_runner.h"

namespace ct {

/// What a lifecycle record is about: a stage of an epic (RCSD-IVTR) or a verification gate of a
/// task (engines/rules/lifecycle.h holds the rules of both).
enum class LifecycleKind { Stage, Gate };
inline std::string_view to_string(LifecycleKind kind) { return kind == LifecycleKind::Stage ? "stage" : "gate"; }

/// The state of one stage or gate: the last status recorded, by whom and why. A stage or gate
/// never recorded has no row (it is pending).
struct LifecycleState {
  std::string subject;                   // the epic (stages) or task (gates)
  LifecycleKind kind = LifecycleKind::Stage;
  std::string name;                      // "research" … "release" | "implemented" … "documented"
  std::string status;                    // stage: pending|active|completed|skipped|failed; gate: pending|passed|failed
  TimeMs at = 0;
  std::string agent;
  std::string session;
  std::string notes;
  std::string evidence;                  // gates: a link, file or test run that shows it
};

/// One change of a LifecycleState, kept in its history (lifecycle.history).
struct LifecycleEvent {
  std::int64_t seq = 0;                  // assigned by the store; newest is highest
  LifecycleState state;                  // the state after the change
  std::string from;                      // the status before ("pending" when never recorded)
  std::string operation;                 // "lifecycle.record", "lifecycle.gate.fail", …
};

/// Lifecycle stages and verification gates.
class LifecycleStore {
 public:
  /// The recorded states of a subject's stages or gates (a row exists once one was recorded).
  [[nodiscard]] Result<std::vector<LifecycleState>> lifecycle_states(std::string_view subject,
                                                                     LifecycleKind kind);
  /// The statement lifecycle_states runs (?1 the subject, ?2 the kind): a backend may send it
  /// ahead (TaskStore::expect).
  static const std::string& lifecycle_states_sql();
  /// Stores event.state as the current state and appends the event to the subject's history.
  [[nodiscard]] Result<void> put_lifecycle(const LifecycleEvent& event);
  /// A subject's history, newest first; only one kind when given.
  [[nodiscard]] Result<std::vector<LifecycleEvent>> lifecycle_events(std::string_view subject,
                                                                     std::optional<LifecycleKind> kind,
                                                                     std::int64_t limit, std::int64_t offset);
  [[nodiscard]] Result<std::int64_t> count_lifecycle_events(std::string_view subject,
                                                            std::optional<LifecycleKind> kind);

 protected:
  virtual sql::Runner& sql_runner() = 0;
  ~LifecycleStore() = default;  // a role of a Store: never owned or deleted through it
};

}  // namespace ct
