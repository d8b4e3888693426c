// The consistency rules of docs/architecture.md §4 checked against stored data (validate.schema,
// validate.task) and the safe repairs of what they find (validate.fix).
//
// Checks are set-based: each is one consistency scan of the whole store (StoreMaintenance::scan, answered by
// the backend in its own dialect), plus an in-memory pass over the parent and dependency graphs,
// so a store of 100k tasks costs a handful of queries. The same task-level scans, narrowed to one
// id, serve validate.task. No SQL here: the checks' names, rules and words are.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"
#include "engines/project/config.h"
#include "engines/store/session_store.h"
#include "engines/store/store_maintenance.h"
#include "engines/store/store_roles.h"
#include "engines/store/task_store.h"
#include "engines/rules/task_engine.h"
#include "engines/rules/trail_state.h"

namespace ct {

struct Problem {
  std::string check;      // stable name, e.g. "completed-at" (Validator::checks())
  std::string task_id;    // "" when not about one task
  std::string session;    // the session concerned (focus and session checks)
  std::string message;
  bool repairable = false;  // validate.fix repairs it
  Advice fix;             // what validate.fix does, or the call that resolves it by hand
};

struct Repair {
  std::string check;
  std::string task_id;
  std::string session;
  std::string action;     // what was (or, in a dry run, would be) done
};

struct FixReport {
  std::vector<Repair> repairs;
  std::vector<Problem> remaining;  // what schema still finds afterwards (dry run: the unrepairable)
};

class Validator {
 public:
  /// The scans and repairs go through StoreMaintenance; tasks and sessions are read and fixed
  /// through their roles (and the audit trail through the TaskEngine that releases a claim).
  Validator(StoreRoles<StoreMaintenance, TaskStore, SessionStore, AuditLog> store, const Config& config, TimeMs now,
            ChangeSink sink)
      : store_(store.get<StoreMaintenance>()), tasks_(store.get<TaskStore>()), sessions_(store.get<SessionStore>()),
        audit_(store.get<AuditLog>()), config_(config), now_(now), sink_(std::move(sink)) {}

  /// Every check over the whole store. `quick` uses SQLite's quick_check instead of the full
  /// integrity_check (which also verifies that indexes match their tables).
  Result<std::vector<Problem>> schema(bool quick);
  /// The anti-hallucination checks of one task: fields, title ≠ description, status/timestamp
  /// coherence, dependencies, parent. E_NOT_FOUND when the task does not exist.
  Result<std::vector<Problem>> task(const std::string& id);
  /// Repairs what schema() finds that is safely repairable; every change goes to the sink (the
  /// audit trail). With dry_run nothing changes and the repairs are only listed.
  Result<FixReport> fix(bool dry_run);

  /// Every check name, in report order.
  static const std::vector<std::string_view>& checks();

 private:
  /// schema()'s problems, a repairable one's fix only saying what validate.fix does.
  Result<std::vector<Problem>> find_problems(bool quick);
  Result<void> run_task_checks(const std::string& id, std::vector<Problem>& out);
  Result<void> run_store_checks(bool quick, std::vector<Problem>& out);
  // The hierarchy and dependency cycles (validator_graph.cpp).
  Result<void> check_parents(const std::string& id, std::vector<Problem>& out);
  Result<void> check_cycles(const std::string& id, std::vector<Problem>& out);
  Result<std::vector<DiagnosticRow>> rows(ScanKind kind, ScanScope scope = {});
  /// The tasks whose stored fields are not what the audit trail's last changes say.
  Result<std::vector<TrailState::Difference>> trail_differences();
  // validate.fix's repairs (validator_fix.cpp).
  Result<void> repair_task(const std::string& id, std::vector<Repair>& repairs);
  Result<std::vector<Repair>> adopt_trail(const std::vector<Problem>& problems);
  Result<void> rebuild_derived(std::vector<Repair>& repairs);
  Result<void> release_claim(const std::string& session, const std::string& check, std::vector<Repair>& repairs);
  Result<void> repair_session_end(const std::string& id, std::vector<Repair>& repairs);
  /// `version`: the task's version the change was made to (FieldChange::version), 0 when not a row's.
  void record(std::string id, std::string field, json::Value before, json::Value after, std::int64_t version = 0);
  /// Numeric order of task ids ("T0999" < "T1000"), others after.
  static bool task_order(const std::string& a, const std::string& b);

  StoreMaintenance& store_;
  TaskStore& tasks_;
  SessionStore& sessions_;
  std::vector<FieldChange> recorded_;  // what this validator recorded (its call's audit row, pending)
  AuditLog& audit_;
  const Config& config_;
  TimeMs now_;
  ChangeSink sink_;
};

}  // namespace ct
