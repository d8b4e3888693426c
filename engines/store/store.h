// The storage seam. Business rules (engines/task_engine) talk to this interface only, so that a
// server database can take over from the embedded SQLite store for teams on many machines.
// SQLite stays real in tests (a temp file); this interface is not for mocking.
//
// Contract for every implementation:
//  - All reads and writes happen inside begin()/commit(); begin(Write) takes the write lock at once
//    (SQLite: BEGIN IMMEDIATE) and waits up to the busy timeout, then fails with E_LOCK_TIMEOUT.
//  - Failures are values: E_FILE_ERROR for I/O and corruption (with a fix), E_LOCK_TIMEOUT for
//    contention, E_INTERNAL for bugs. No exceptions escape.
//  - A task's dependency list, labels, notes and relations are stored with it; insert_task and
//    update_task write the whole record and keep the full-text index in sync in the same
//    transaction.
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"
#include "core/json.h"
#include "engines/store/task.h"

namespace ct {

enum class TxKind { Read, Write };
enum class ArchivedFilter { Exclude, Only, Include };
enum class SortKey { Position, Priority, Created, Updated, Title, Status, Id };

/// Whether a task can start now (PRODUCT.md §4: a dependency holds a task until it is done or
/// cancelled).
enum class Readiness {
  Any,
  Ready,    // pending, every dependency finished, not an epic whose children are still open
  Blocked,  // open, and blocked by hand (status blocked) or waiting on an unfinished dependency
};

struct TaskFilter {
  std::vector<TaskStatus> statuses;      // empty = any
  std::optional<std::string> parent;     // "" = root tasks only; nullopt = any
  std::optional<TaskType> type;
  std::vector<std::string> labels;       // tasks carrying every one of these labels
  std::optional<std::string> under;      // descendants of this task, at any depth
  std::optional<std::string> phase;
  std::optional<Priority> priority;
  ArchivedFilter archived = ArchivedFilter::Exclude;
  Readiness readiness = Readiness::Any;
};

struct TaskQuery {
  TaskFilter filter;
  SortKey sort = SortKey::Position;      // Position sorts by parent, then position, then id
  bool descending = false;
  std::int64_t limit = -1;               // -1 = no limit
  std::int64_t offset = 0;
};

struct SearchHit {
  Task task;
  double score = 0;  // higher is better; an exact id match ranks first
};

/// One row of the audit trail: a mutation and what it changed.
struct FieldChange {
  std::string task_id;
  std::string field;
  json::Value before;  // null when the field was absent (e.g. task created)
  json::Value after;   // null when removed
};

struct AuditEntry {
  std::int64_t seq = 0;    // assigned by the store
  TimeMs at = 0;
  std::string session;     // empty when no session
  std::string agent;
  std::string operation;   // "tasks.update"
  std::string task_id;     // the subject, when there is one
  json::Value params = json::Value::object();
  std::string outcome;     // "ok", or the error code on failure
  std::string reason;      // the caller's intent, when given
  std::vector<FieldChange> changes;
  std::string hash;        // SHA-256 chaining this row to the previous one (set by the store)
};

struct AuditQuery {
  std::optional<std::string> task_id;    // rows that changed this task
  std::optional<std::string> field;      // with task_id: only changes of this field
  std::optional<std::string> operation;  // rows of this operation ("tasks.add")
  std::optional<std::string> session;    // rows written in this session ("" = outside any)
  std::optional<std::string> agent;      // rows written by this agent
  std::optional<TimeMs> since;           // rows at or after this time
  std::optional<std::int64_t> after_seq; // rows after this sequence number (paging oldest first)
  bool ascending = false;                // oldest first (verification) instead of newest first
  std::int64_t limit = 50;
  std::int64_t offset = 0;
};

/// The weights of tasks.next's score.
struct ReadyScoring {
  std::array<int, 4> priority_points{};  // indexed by Priority (critical, high, medium, low)
  std::string phase;                     // tasks in this phase get phase_bonus ("" = none)
  int phase_bonus = 0;
  int leaf_bonus = 0;                    // for tasks without open children
  std::int64_t limit = 1;
  /// Only these tasks (a session's scope); null = every task.
  const std::set<std::string>* within = nullptr;
};

/// A task as dependency-graph analysis sees it (engines/rules/graph.h): what the analysis reads, and no
/// more, so that a 100k-task project loads in one pass without decoding notes or descriptions.
struct GraphTask {
  std::string id;
  std::string title;
  std::string parent;                    // "" for a root task
  TaskStatus status = TaskStatus::Pending;
  Priority priority = Priority::Medium;
  TaskType type = TaskType::Task;
  std::int64_t position = 0;
  TimeMs created_at = 0;
  TimeMs updated_at = 0;
  std::vector<std::string> depends;
  std::vector<std::string> labels;
  std::vector<std::string> files;
};

struct ReadyCandidate {
  std::string id;
  int score = 0;
  bool leaf = false;
  bool in_phase = false;
};

/// A mutation's reply kept under its idempotency key, so a retry returns it instead of running again.
struct IdempotentCall {
  std::string key;
  std::string operation;   // "tasks.add"
  std::string params;      // the validated params as compact JSON
  std::string reply;       // the envelope as compact JSON
  TimeMs at = 0;
};

/// Status of a session (PRODUCT.md §4): only active sessions count against session.maxConcurrent.
enum class SessionStatus { Active, Suspended, Ended, Closed };
inline std::string_view to_string(SessionStatus status) {
  switch (status) {
    case SessionStatus::Active: return "active";
    case SessionStatus::Suspended: return "suspended";
    case SessionStatus::Ended: return "ended";
    case SessionStatus::Closed: return "closed";
  }
  return "active";
}
inline std::optional<SessionStatus> parse_session_status(std::string_view text) {
  for (auto status : {SessionStatus::Active, SessionStatus::Suspended, SessionStatus::Ended, SessionStatus::Closed})
    if (to_string(status) == text) return status;
  return std::nullopt;
}

/// A named, scoped unit of agent work (engines/rules/session_engine.h holds its rules).
struct Session {
  std::string id;                        // "ses_" + 12 hex
  std::string name;
  std::string scope;                     // as given: "epic:T001", "global", …
  std::string agent;
  SessionStatus status = SessionStatus::Active;
  std::string note;
  std::string next_action;
  TimeMs created_at = 0;
  TimeMs updated_at = 0;                 // last write made in the session (idle detection)
  std::optional<TimeMs> ended_at;
  std::optional<TimeMs> archived_at;     // set by session.gc; archived sessions are hidden from lists
};

struct SessionQuery {
  std::vector<SessionStatus> statuses;   // empty = any
  std::optional<TimeMs> updated_before;  // updated_at < this
  std::optional<TimeMs> ended_before;    // ended_at < this
  bool include_archived = false;
  std::int64_t limit = -1;               // -1 = no limit; newest (updated_at) first
  std::int64_t offset = 0;
};

/// One recorded protocol-check result (validate.compliance.record).
struct ComplianceRecord {
  std::int64_t id = 0;                   // assigned by the store
  TimeMs at = 0;
  std::string task_id;                   // "" when the check was not about one task
  std::string check;                     // the check's name, e.g. "protocol.implementation"
  bool passed = false;
  std::optional<std::int64_t> score;     // 0–100, when the check grades
  std::string details;                   // JSON text, "" when none
  std::string session;
  std::string agent;
};

/// What compliance_summary sums over: each check, each agent, or each agent's results per check.
enum class ComplianceGroup { Check, Agent, CheckAndAgent };

struct ComplianceQuery {
  std::optional<std::string> task_id;
  std::optional<std::string> check;
  std::optional<std::string> agent;      // results attributed to this agent
  std::optional<TimeMs> since;           // results at or after this time
  std::optional<bool> passed;            // list_compliance only: only passes / only failures
  std::int64_t limit = -1;               // list_compliance only; newest first
  ComplianceGroup group = ComplianceGroup::Check;  // compliance_summary only
};

/// Results of one group (ComplianceQuery::group) over a ComplianceQuery.
struct ComplianceSummary {
  std::string check;                     // "" when grouped by agent alone
  std::string agent;                     // "" when grouped by check alone, or for results of no agent
  std::int64_t runs = 0;
  std::int64_t passed = 0;
  std::optional<double> average_score;   // over the results that carry a score
  TimeMs last_at = 0;
  bool last_passed = false;
};

/// Status of a release (PRODUCT.md §5): planned when created, active once it holds tasks,
/// released when shipped; a rollback takes it back to active (or planned when it holds none).
enum class ReleaseStatus { Planned, Active, Released };
inline std::string_view to_string(ReleaseStatus status) {
  switch (status) {
    case ReleaseStatus::Planned: return "planned";
    case ReleaseStatus::Active: return "active";
    case ReleaseStatus::Released: return "released";
  }
  return "planned";
}
inline std::optional<ReleaseStatus> parse_release_status(std::string_view text) {
  for (auto status : {ReleaseStatus::Planned, ReleaseStatus::Active, ReleaseStatus::Released})
    if (to_string(status) == text) return status;
  return std::nullopt;
}

/// A release (the release domain): a semantic version, the tasks it ships, and what ship and tag
/// did in git, so that a rollback can undo it.
struct Release {
  std::string version;                   // semver without a leading "v": "1.2.0", "2.0.0-rc.1"
  ReleaseStatus status = ReleaseStatus::Planned;
  std::vector<std::string> tasks;        // task ids, in the order they were added
  std::string notes;
  TimeMs created_at = 0;
  TimeMs updated_at = 0;
  std::optional<TimeMs> released_at;
  std::string tag;                       // the annotated tag ship or tag made ("v1.2.0"); "" = none
  std::string commit;                    // the commit the tag points at (full sha)
  bool pushed = false;                   // the tag was pushed to `remote`
  std::string remote;
};

/// Status of a research entry (the research domain): what the agent that wrote it reached.
enum class ResearchStatus { Complete, Partial, Blocked };
inline std::string_view to_string(ResearchStatus status) {
  switch (status) {
    case ResearchStatus::Complete: return "complete";
    case ResearchStatus::Partial: return "partial";
    case ResearchStatus::Blocked: return "blocked";
  }
  return "complete";
}
inline std::optional<ResearchStatus> parse_research_status(std::string_view text) {
  for (auto status : {ResearchStatus::Complete, ResearchStatus::Partial, ResearchStatus::Blocked})
    if (to_string(status) == text) return status;
  return std::nullopt;
}

/// One agent output in the research manifest (engines/rules/research.h holds its rules): the file an
/// agent wrote, what it found, and the tasks it belongs to. Links are kept in both directions:
/// research_for_task() answers from the task's side.
struct ResearchEntry {
  std::string id;                        // "T001-auth-options": the task it started from, then a slug
  std::string file;                      // relative to the project root
  std::string title;
  std::string date;                      // YYYY-MM-DD
  ResearchStatus status = ResearchStatus::Complete;
  std::string agent_type = "research";
  std::vector<std::string> topics;
  std::vector<std::string> key_findings;
  bool actionable = false;
  std::vector<std::string> needs_followup;
  std::vector<std::string> linked_tasks; // task ids, in the order they were linked
  std::optional<double> confidence;      // 0..1
  std::string file_checksum;             // SHA-256 hex of the file when it existed; "" = unknown
  bool archived = false;
  std::optional<TimeMs> archived_at;
  TimeMs created_at = 0;
  TimeMs updated_at = 0;
};

struct ResearchQuery {
  std::vector<ResearchStatus> statuses;  // empty = any
  std::optional<std::string> agent_type;
  std::optional<std::string> topic;      // entries carrying this topic (exact, case-insensitive)
  std::optional<std::string> task_id;    // entries linked to this task
  std::optional<bool> actionable;
  bool needs_followup = false;           // only entries with something left to follow up
  std::optional<std::string> date_before;  // date < this (YYYY-MM-DD)
  ArchivedFilter archived = ArchivedFilter::Exclude;
  std::int64_t limit = -1;               // -1 = no limit; newest date first, then id
  std::int64_t offset = 0;
};

/// Counts over the whole research manifest (research.stats).
struct ResearchStats {
  std::int64_t total = 0;                // archived included
  std::int64_t archived = 0;
  std::int64_t actionable = 0;           // unarchived
  std::int64_t pending = 0;              // unarchived with needsFollowup
  std::int64_t linked = 0;               // unarchived with at least one linked task
  std::map<std::string, std::int64_t> by_status;      // unarchived
  std::map<std::string, std::int64_t> by_agent_type;  // unarchived
  std::optional<double> average_confidence;           // unarchived entries that carry one
};

/// How far research.sync has read a manifest file: the bytes and lines consumed, and a hash of
/// the file's head so that a file replaced or rotated under the same name is read again from 0.
struct ManifestCursor {
  std::string file;                      // as configured (research.manifestFile)
  std::int64_t offset = 0;               // bytes consumed: always the end of a complete line
  std::int64_t lines = 0;                // complete lines consumed
  std::string head_hash;                 // SHA-256 of the first min(offset, 4096) bytes
  TimeMs synced_at = 0;
};

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
  bool counter_raised = false;           // the id counter was behind a stored id
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

/// Where the audit trail starts after system.gc compacted it: the rows up to `seq` were written
/// to an archive file and removed, and the first remaining row chains to `hash`.
struct AuditAnchor {
  std::int64_t seq = 0;
  std::string hash;
  std::string archive;                   // file name of the newest archive (.cleo/audit-archive/)
};

class Store {
 public:
  virtual ~Store() = default;

  [[nodiscard]] virtual Result<void> begin(TxKind kind) = 0;
  [[nodiscard]] virtual Result<void> commit() = 0;
  virtual void rollback() = 0;  // never fails; a no-op outside a transaction
  virtual bool in_transaction() const = 0;

  // Tasks. get_task finds archived tasks too.
  [[nodiscard]] virtual Result<std::optional<Task>> get_task(std::string_view id) = 0;
  [[nodiscard]] virtual Result<std::vector<Task>> get_tasks(const std::vector<std::string>& ids) = 0;
  [[nodiscard]] virtual Result<std::vector<Task>> list_tasks(const TaskQuery& query) = 0;
  [[nodiscard]] virtual Result<std::int64_t> count_tasks(const TaskFilter& filter) = 0;
  /// Counts per status over the filter (ignores filter.statuses).
  [[nodiscard]] virtual Result<std::map<TaskStatus, std::int64_t>> count_by_status(const TaskFilter& filter) = 0;
  /// Next id from a counter kept in the store: allocated inside the write transaction, never reused
  /// (not even after a hard delete).
  [[nodiscard]] virtual Result<std::string> allocate_task_id() = 0;
  [[nodiscard]] virtual Result<void> insert_task(const Task& task) = 0;
  [[nodiscard]] virtual Result<void> update_task(const Task& task) = 0;
  /// Removes the row, its dependency edges in both directions, its index entries, its research
  /// links and its lifecycle records.
  [[nodiscard]] virtual Result<void> delete_task(std::string_view id) = 0;
  /// Direct children ids ordered by position (archived included when asked).
  [[nodiscard]] virtual Result<std::vector<std::string>> children_of(std::string_view id, bool include_archived) = 0;
  /// Ids of tasks whose depends list contains `id`.
  [[nodiscard]] virtual Result<std::vector<std::string>> dependents_of(std::string_view id) = 0;
  /// Largest position among the children of `parent` ("" = roots), 0 when none.
  [[nodiscard]] virtual Result<std::int64_t> max_position(std::string_view parent) = 0;
  /// tasks.next candidates: pending, unarchived tasks whose dependencies are all done or
  /// cancelled, except epics that still have open children, scored with `scoring` (the engine
  /// owns the formula; the store only evaluates it) and ordered by score, then position, then age.
  /// Only the best `scoring.limit` are returned (of `scoring.within` when set).
  [[nodiscard]] virtual Result<std::vector<ReadyCandidate>> top_ready(const ReadyScoring& scoring) = 0;
  /// Unarchived tasks for graph analysis: the subtree under `root` (the root itself excluded), or
  /// every task when `root` is empty; ordered by parent, then position. Dependencies may name tasks
  /// outside the result (another subtree, or archived).
  [[nodiscard]] virtual Result<std::vector<GraphTask>> graph_tasks(std::string_view root) = 0;
  /// Full-text search over title, description, labels and notes (every word, each a prefix); an
  /// exact id match ranks first, then best first: per word and column, the column's weight (title
  /// 10, description 3, labels 5, notes 1) times the word's hits there saturated as bm25 does,
  /// tf·2.2/(tf+1.2), summed — no length normalisation; equal scores in row order (oldest first).
  /// limit -1 = every match.
  [[nodiscard]] virtual Result<std::vector<SearchHit>> search(std::string_view text, const TaskFilter& filter,
                                                              std::int64_t limit) = 0;
  /// How many tasks search() finds for `text` in all (an exact id included).
  [[nodiscard]] virtual Result<std::int64_t> count_matches(std::string_view text, const TaskFilter& filter) = 0;

  // Focus: the task a session is working on ("" = no session).
  [[nodiscard]] virtual Result<std::optional<std::string>> get_focus(std::string_view session) = 0;
  [[nodiscard]] virtual Result<void> set_focus(std::string_view session, std::optional<std::string> task_id) = 0;
  /// The session focusing `task_id` ("" for the sessionless focus), nullopt when none does. A task
  /// is focused by at most one session (the atomic claim of tasks.start).
  [[nodiscard]] virtual Result<std::optional<std::string>> focus_holder(std::string_view task_id) = 0;

  // Sessions.
  [[nodiscard]] virtual Result<void> insert_session(const Session& session) = 0;
  [[nodiscard]] virtual Result<void> update_session(const Session& session) = 0;
  [[nodiscard]] virtual Result<std::optional<Session>> get_session(std::string_view id) = 0;
  [[nodiscard]] virtual Result<std::vector<Session>> list_sessions(const SessionQuery& query) = 0;
  [[nodiscard]] virtual Result<std::int64_t> count_sessions(const SessionQuery& query) = 0;

  // Audit trail. append_audit computes the row's chained hash (engines/store/audit_chain.h).
  [[nodiscard]] virtual Result<std::int64_t> append_audit(const AuditEntry& entry) = 0;
  [[nodiscard]] virtual Result<std::vector<AuditEntry>> read_audit(const AuditQuery& query) = 0;

  // Idempotency keys: remember_idempotent also forgets calls older than `forget_before`.
  [[nodiscard]] virtual Result<std::optional<IdempotentCall>> find_idempotent(std::string_view key) = 0;
  [[nodiscard]] virtual Result<void> remember_idempotent(const IdempotentCall& call, TimeMs forget_before) = 0;

  [[nodiscard]] virtual Result<std::int64_t> schema_version() = 0;
  /// A number that differs from the one this connection read before whenever another connection
  /// (of any process) has committed since: the cheap change signal live views watch. Its value
  /// means nothing else; call it outside a transaction.
  [[nodiscard]] virtual Result<std::int64_t> change_stamp() = 0;

  // Protocol-check results (validate.compliance*).
  [[nodiscard]] virtual Result<std::int64_t> insert_compliance(const ComplianceRecord& record) = 0;
  /// One summary per group (query.group) over the query's filters (limit and passed ignored),
  /// ordered by check name, then agent.
  [[nodiscard]] virtual Result<std::vector<ComplianceSummary>> compliance_summary(const ComplianceQuery& query) = 0;
  [[nodiscard]] virtual Result<std::vector<ComplianceRecord>> list_compliance(const ComplianceQuery& query) = 0;

  // Releases (the release domain), newest created first in lists.
  [[nodiscard]] virtual Result<std::optional<Release>> get_release(std::string_view version) = 0;
  [[nodiscard]] virtual Result<std::vector<Release>> list_releases() = 0;
  /// Inserts or replaces the release with this version.
  [[nodiscard]] virtual Result<void> put_release(const Release& release) = 0;

  // Research manifest (the research domain). Lists are newest date first, then by id.
  [[nodiscard]] virtual Result<std::optional<ResearchEntry>> get_research(std::string_view id) = 0;
  [[nodiscard]] virtual Result<std::vector<ResearchEntry>> list_research(const ResearchQuery& query) = 0;
  [[nodiscard]] virtual Result<std::int64_t> count_research(const ResearchQuery& query) = 0;
  /// Inserts or replaces the entry with this id, with its task links and search index entry.
  [[nodiscard]] virtual Result<void> put_research(const ResearchEntry& entry) = 0;
  /// Full-text search over title, topics and key findings (prefix match per word), best first;
  /// only the query's archived filter applies. An exact id ranks first.
  [[nodiscard]] virtual Result<std::vector<ResearchEntry>> search_research(std::string_view text, ArchivedFilter archived,
                                                                           std::int64_t limit) = 0;
  [[nodiscard]] virtual Result<std::int64_t> count_research_matches(std::string_view text, ArchivedFilter archived) = 0;
  /// Ids of the research entries linked to a task (archived included), by id.
  [[nodiscard]] virtual Result<std::vector<std::string>> research_for_task(std::string_view task_id) = 0;
  [[nodiscard]] virtual Result<ResearchStats> research_stats() = 0;
  [[nodiscard]] virtual Result<std::optional<ManifestCursor>> get_manifest_cursor(std::string_view file) = 0;
  [[nodiscard]] virtual Result<void> put_manifest_cursor(const ManifestCursor& cursor) = 0;

  // Lifecycle stages and verification gates (the lifecycle domain).
  /// The recorded states of a subject's stages or gates (a row exists once one was recorded).
  [[nodiscard]] virtual Result<std::vector<LifecycleState>> lifecycle_states(std::string_view subject,
                                                                             LifecycleKind kind) = 0;
  /// Stores event.state as the current state and appends the event to the subject's history.
  [[nodiscard]] virtual Result<void> put_lifecycle(const LifecycleEvent& event) = 0;
  /// A subject's history, newest first; only one kind when given.
  [[nodiscard]] virtual Result<std::vector<LifecycleEvent>> lifecycle_events(std::string_view subject,
                                                                             std::optional<LifecycleKind> kind,
                                                                             std::int64_t limit, std::int64_t offset) = 0;
  [[nodiscard]] virtual Result<std::int64_t> count_lifecycle_events(std::string_view subject,
                                                                    std::optional<LifecycleKind> kind) = 0;

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
  [[nodiscard]] virtual Result<StoreCounts> counts() = 0;
  /// One result per period, in the order given, then one over all of them together: tasks
  /// created and completed in the period and percentiles of their durations (computed by the
  /// store, without loading the tasks).
  [[nodiscard]] virtual Result<std::vector<PeriodStats>> period_stats(const std::vector<StatsPeriod>& periods) = 0;
  /// Where the audit trail starts after compaction; nullopt when it was never compacted.
  [[nodiscard]] virtual Result<std::optional<AuditAnchor>> audit_anchor() = 0;
  /// The seq of the newest audit row written before `before` (0 when none).
  [[nodiscard]] virtual Result<std::int64_t> last_audit_seq_before(TimeMs before) = 0;
  /// Deletes the audit rows up to anchor.seq with their changes and records the anchor, so that
  /// the rest of the chain stays verifiable. Returns the rows deleted. Write transaction.
  [[nodiscard]] virtual Result<std::int64_t> compact_audit(const AuditAnchor& anchor) = 0;
  /// Idempotency keys remembered before `before`: counted, and forgotten unless `count_only`.
  [[nodiscard]] virtual Result<std::int64_t> expire_idempotent(TimeMs before, bool count_only) = 0;
  /// Replaces every row of every table with the rows of the database in `file`, which must have
  /// this store's schema version. Ids are never reused: the id counter keeps the higher of the
  /// two. Write transaction: other connections see the old contents or the new, never a mix.
  [[nodiscard]] virtual Result<void> replace_contents_from(const std::filesystem::path& file) = 0;
};

}  // namespace ct
