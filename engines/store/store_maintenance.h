// The maintenance role of the storage seam (engines/store/store.h): the consistency scans the
// validator words (engines/rules/validator.h), the repair of derived rows, integrity, online
// copies, counts and statistics, and replacing the whole contents (system.restore).
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/clock.h"
#include "core/error.h"
#include "engines/store/sql_runner.h"
#include "engines/store/store_dump.h"

namespace ct {

/// A row of a consistency scan: every column as text (NULL reads as "").
using DiagnosticRow = std::vector<std::string>;

/// The consistency scans of engines/rules/validator.h, and the columns of their rows. "One task" marks
/// the scans that ScanScope::task narrows to that task; the others read the whole store.
enum class ScanKind {
  /// Every rule of task_rules() a task row breaks, one row per task and rule:
  /// (task, rule, details…) — the details per rule as task_rules() lists them. One task.
  /// ScanScope::number: timestamps after it lie in the future.
  TaskRules,
  MissingDependency,         // (task, dependency that does not exist). One task.
  DependencyEdges,           // (task, dependency, "extra" | "missing") against the depends lists. One task.
  OrphanSearchRows,          // ("", search index row of no task)
  MissingSearchTerms,        // ("", count) of words in the search index a search cannot expand into (none: no row)
  FocusMissingTask,          // (task, session) focused but gone. One task.
  FocusMissingSession,       // (task, session) claimed by a session that does not exist. One task.
  FocusEndedSession,         // (task, session, session status) claimed by an ended or closed session. One task.
  FocusNotActive,            // (task, session, status, archived 0|1) focused but not active. One task.
  SharedClaims,              // (task, sessions joined by ", ") claimed by several sessions. One task.
  SessionsWithSeveralTasks,  // ("", session, tasks joined by ", ")
  IdCounter,                 // ("", counter or "missing", largest task number) when the counter is not ahead
  SessionStatus,             // ("", session, status) that is no session status
  SessionEndedAt,            // ("", session, status) whose endedAt contradicts the status
  IntegrityQuick,            // (problem) found by the database's quick check
  IntegrityFull,             // (problem) found by its full integrity check
  ForeignKeys,               // (table, row, the table it points at) — references to missing rows
  CrowdedParents,            // (parent, open children) over ScanScope::number
  ActiveSessions,            // (count)
  ParentRows,                // (task, parent or "", type, archived 0|1) in row order; one task: it and its ancestors
  LiveChildren,              // (count of the unarchived children of ScanScope::task)
  DependencyRows,            // (task, dependency) for every depends entry naming an existing task, in row order
  SelfReachable,             // (1) when ScanScope::task reaches itself through dependency edges
  TaskExists,                // (1) when a row with id ScanScope::task exists, even one that cannot be read
  MemoryTotal,               // ("", kept total or "missing", memory entries counted) when they differ (schema v18)
};

struct ScanScope {
  std::string task;          // "" = the whole store
  std::int64_t number = 0;   // the scan's threshold (ScanKind says which)
};

/// The rules a task row can break on its own (ScanKind::TaskRules), in report order, with how
/// many detail columns each one's rows carry. engines/rules/validator.cpp describes them; every backend
/// tests each one.
struct TaskRule {
  std::string_view name;     // "invalid-value:status", "title", …
  int details = 0;
};
const std::vector<TaskRule>& task_rules();

/// A backend's TaskRules query answers one wide row per task: the task, then per rule of
/// task_rules() its flag and detail columns. This turns those rows into one row per broken rule
/// (task, rule, details…); `broken` reads a rule's flag (each dialect writes true its own way, and
/// may confirm it from the rest of the row).
std::vector<DiagnosticRow> split_task_rules(
    const std::vector<DiagnosticRow>& wide,
    const std::function<bool(const DiagnosticRow& row, const TaskRule& rule, std::string_view flag)>& broken);

/// What Store::rebuild_derived changed.
struct DerivedRepair {
  std::int64_t edges_removed = 0;        // dependency edge rows no depends list backs
  std::int64_t edges_added = 0;          // depends entries that had no edge row
  std::int64_t index_removed = 0;        // search index rows of missing tasks
  std::int64_t index_added = 0;          // tasks missing from the search index
  std::int64_t terms_added = 0;          // words of the search index missing from its list of words
  bool counter_raised = false;           // the id counter was behind a stored id
  bool memory_recounted = false;         // the kept total of memory entries was wrong or missing
};

/// Row counts of a store (system.restore reports them for the live store and a backup).
struct StoreCounts {
  std::int64_t tasks = 0;                // archived included
  std::int64_t audit_rows = 0;
  std::int64_t last_audit_seq = 0;
  std::int64_t sessions = 0;
};

/// A half-open time range [start, end) of system.stats.
struct StatsPeriod {
  TimeMs start = 0;
  TimeMs end = 0;
};

/// Throughput and durations over one StatsPeriod. Durations are nearest-rank percentiles over
/// the tasks completed in the period.
struct PeriodStats {
  std::int64_t created = 0;
  std::int64_t completed = 0;
  std::optional<TimeMs> cycle_p50;       // created → completed
  std::optional<TimeMs> cycle_p90;
  std::int64_t started = 0;              // completed tasks whose start is in the audit trail
  std::optional<TimeMs> work_p50;        // first start (status → active) → completed
  std::optional<TimeMs> work_p90;
};

/// Diagnostics (the validator's scans and repairs) and housekeeping (system.*).
class StoreMaintenance {
 public:
  // Diagnostics (engines/rules/validator.h), inside a transaction.
  /// The rows of one consistency scan (ScanKind says what each returns), answered by one
  /// set-based query in the backend's own dialect, so that checking 100k tasks costs a handful of
  /// queries, not one per task; business rules never use them.
  [[nodiscard]] virtual Result<std::vector<DiagnosticRow>> scan(ScanKind kind, const ScanScope& scope) = 0;
  /// Rewrites what is derived from the task rows: dependency edges from each depends list, the
  /// search index, and the id counter ahead of every stored id (validate.fix).
  [[nodiscard]] virtual Result<DerivedRepair> rebuild_derived() = 0;

  // Maintenance (outside any transaction).
  /// Problems found by the database's own consistency check; empty when healthy.
  [[nodiscard]] virtual Result<std::vector<std::string>> integrity_problems() = 0;
  /// A consistent copy of the whole store in `file` (taken online: writers may continue).
  [[nodiscard]] virtual Result<void> backup_to(const std::filesystem::path& file) = 0;

  // Housekeeping (system.dash, stats, gc, restore), inside a transaction.
  [[nodiscard]] Result<StoreCounts> counts();
  /// One result per period, in the order given, then one over all of them together: tasks
  /// created and completed in the period and percentiles of their durations (computed by the
  /// store, without loading the tasks).
  [[nodiscard]] Result<std::vector<PeriodStats>> period_stats(const std::vector<StatsPeriod>& periods);
  /// Replaces every row of every table with the rows of the database in `file`, which must have
  /// this store's schema version. Ids are never reused: the id counter keeps the higher of the
  /// two. Write transaction: other connections see the old contents or the new, never a mix.
  [[nodiscard]] virtual Result<void> replace_contents_from(const std::filesystem::path& file) = 0;
  /// Every row of every table of dumped_tables() (engines/store/store_dump.h), pushed into `sink`
  /// from one snapshot: inside a transaction. With load(), a store is copied into a store of
  /// another backend without either knowing the other.
  [[nodiscard]] virtual Result<void> dump(DumpSink& sink) = 0;
  /// Replaces every row of every dumped table with the rows `source` pushes (nothing changes
  /// when it pushes no table), and rebuilds the search index: inside a write transaction. Ids are
  /// never reused: the id counter keeps the higher of the two.
  [[nodiscard]] virtual Result<void> load(const DumpSource& source) = 0;

 protected:
  virtual sql::Runner& sql_runner() = 0;
  ~StoreMaintenance() = default;  // a role of a Store: never owned or deleted through it
};

}  // namespace ct
