// Rows as every backend stores them: the column order of every task, session, release and research
// SELECT, the codecs of the JSON list columns (depends, labels, notes, relations…), one reader of
// each kind of row over any backend's row type, and the audit anchor's codec. Internal to the
// backends (engines/sqlite_*, engines/pg_*).
#pragma once

#include <array>
#include <span>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"
#include "core/json.h"
#include "core/json_parse.h"
#include "engines/store/sql_runner.h"
#include "engines/store/store.h"
#include "engines/store/task.h"

namespace ct {

// Column order of every task SELECT; read_task() indexes by these.
inline constexpr std::string_view kTaskColumns =
    "t.id, t.title, t.description, t.status, t.priority, t.type, t.parent, t.position, t.depends, "
    "t.labels, t.acceptance, t.files, t.notes, t.relates, t.phase, t.size, t.blocked_by, "
    "t.created_at, t.updated_at, t.completed_at, t.cancelled_at, t.cancellation_reason, "
    "t.archived, t.archived_at, t.archive_reason, t.version";

/// "SELECT <kTaskColumns> FROM tasks t".
const std::string& task_select();

enum TaskColumn : int {
  kId, kTitle, kDescription, kStatus, kPriority, kType, kParent, kPosition, kDepends,
  kLabels, kAcceptance, kFiles, kNotes, kRelates, kPhase, kSize, kBlockedBy,
  kCreatedAt, kUpdatedAt, kCompletedAt, kCancelledAt, kCancellationReason,
  kArchived, kArchivedAt, kArchiveReason, kVersion, kTaskColumnCount
};

/// A task row as every backend writes it: the INSERT (?1 num, ?2…?26 the fields, ?27 id) and the
/// SET list of an UPDATE (?2…?26, ?1 left to name the row), with task_values() for the values.
const std::string& task_insert_sql();
const std::string& task_set_sql();
/// The values of one task row, held in place: 27 values are over 1 KB, which as a vector was a
/// block of the allocator's large sizes on every write of a task — on a heap of an import's
/// size, each such block searched the allocator's sorted free lists (docs/performance.md,
/// "Imports: the allocator"). Passes as the span of the values set.
struct TaskValues {
  std::array<sql::Value, 27> values;
  std::size_t size = 0;
  operator std::span<const sql::Value>() const { return {values.data(), size}; }
};
/// `key` (?1), the task's fields from title to version (?2…?26), and with `with_id` its id (?27).
TaskValues task_values(sql::Value key, const Task& task, bool with_id);

inline Advice corrupt_fix() {
  return "restore the newest backup that passes an integrity check; the damaged store is moved aside first: " +
         call("system.restore");
}

// The JSON list columns as stored, and the search index's text of labels and notes.
std::string encode_strings(const std::vector<std::string>& items);
std::string encode_notes(const std::vector<Note>& notes);
std::string encode_relations(const std::vector<Relation>& relations);
std::string join_labels(const std::vector<std::string>& labels);
std::string join_notes(const std::vector<Note>& notes);

/// A task row whose `column` cannot be read: E_FILE_ERROR with the restore fix.
Error corrupt_column(std::string_view task_id, std::string_view column);
// Parses a JSON array column. "[]" (the common case) skips the parser.
Result<json::Value> parse_array(std::string_view text, std::string_view task_id, std::string_view column);
Result<std::vector<std::string>> decode_strings(std::string_view text, std::string_view task_id,
                                                std::string_view column);
Result<std::vector<Note>> decode_notes(std::string_view text, std::string_view task_id);
Result<std::vector<Relation>> decode_relations(std::string_view text, std::string_view task_id);
/// Reads one task from a row selected with kTaskColumns first. `Row` gives text(i) (a
/// string_view, empty for NULL), integer(i) and optional_int(i) (nullopt for NULL).
template <typename Row>
Result<Task> read_task_row(const Row& row) {
  Task task;
  task.id = std::string(row.text(kId));
  task.title = std::string(row.text(kTitle));
  task.description = std::string(row.text(kDescription));
  auto status = parse_status(row.text(kStatus));
  auto priority = parse_priority(row.text(kPriority));
  auto type = parse_type(row.text(kType));
  if (!status) return fail(corrupt_column(task.id, "status"));
  if (!priority) return fail(corrupt_column(task.id, "priority"));
  if (!type) return fail(corrupt_column(task.id, "type"));
  task.status = *status;
  task.priority = *priority;
  task.type = *type;
  task.parent = std::string(row.text(kParent));
  task.position = row.integer(kPosition);
  CT_TRY_ASSIGN(task.depends, decode_strings(row.text(kDepends), task.id, "depends"));
  CT_TRY_ASSIGN(task.labels, decode_strings(row.text(kLabels), task.id, "labels"));
  CT_TRY_ASSIGN(task.acceptance, decode_strings(row.text(kAcceptance), task.id, "acceptance"));
  CT_TRY_ASSIGN(task.files, decode_strings(row.text(kFiles), task.id, "files"));
  CT_TRY_ASSIGN(task.notes, decode_notes(row.text(kNotes), task.id));
  CT_TRY_ASSIGN(task.relates, decode_relations(row.text(kRelates), task.id));
  task.phase = std::string(row.text(kPhase));
  std::string_view size = row.text(kSize);
  if (!size.empty()) {
    auto parsed = parse_size(size);
    if (!parsed) return fail(corrupt_column(task.id, "size"));
    task.size = *parsed;
  }
  task.blocked_by = std::string(row.text(kBlockedBy));
  task.created_at = row.integer(kCreatedAt);
  task.updated_at = row.integer(kUpdatedAt);
  task.completed_at = row.optional_int(kCompletedAt);
  task.cancelled_at = row.optional_int(kCancelledAt);
  task.cancellation_reason = std::string(row.text(kCancellationReason));
  task.archived = row.integer(kArchived) != 0;
  task.archived_at = row.optional_int(kArchivedAt);
  task.archive_reason = std::string(row.text(kArchiveReason));
  task.version = row.integer(kVersion);
  return task;
}

// Column order of every session SELECT; read_session_row() indexes by these.
inline constexpr std::string_view kSessionSelect =
    "SELECT id, name, scope, agent, status, note, next_action, created_at, updated_at, ended_at, archived_at, owner, "
    "notice, worktree, branch FROM sessions";

template <typename Row>
Session read_session_row(const Row& row) {
  Session session;
  session.id = std::string(row.text(0));
  session.name = std::string(row.text(1));
  session.scope = std::string(row.text(2));
  session.agent = std::string(row.text(3));
  session.status = parse_session_status(row.text(4)).value_or(SessionStatus::Ended);
  session.note = std::string(row.text(5));
  session.next_action = std::string(row.text(6));
  session.created_at = row.integer(7);
  session.updated_at = row.integer(8);
  session.ended_at = row.optional_int(9);
  session.archived_at = row.optional_int(10);
  session.owner = std::string(row.text(11));
  session.notice = std::string(row.text(12));
  session.worktree = std::string(row.text(13));
  session.branch = std::string(row.text(14));
  return session;
}

inline constexpr std::string_view kReleaseSelect =
    "SELECT version, status, tasks, notes, created_at, updated_at, released_at, tag, commit_sha, pushed, remote "
    "FROM releases";

template <typename Row>
Result<Release> read_release_row(const Row& row) {
  Release release;
  release.version = std::string(row.text(0));
  auto status = parse_release_status(row.text(1));
  if (!status)
    return fail(Error(ErrorCode::FileError, "release " + release.version + " has an unknown status '" +
                                                std::string(row.text(1)) + "'")
                    .with_fix(corrupt_fix()));
  release.status = *status;
  CT_TRY_ASSIGN(release.tasks, decode_strings(row.text(2), release.version, "tasks"));
  release.notes = std::string(row.text(3));
  release.created_at = row.integer(4);
  release.updated_at = row.integer(5);
  release.released_at = row.optional_int(6);
  release.tag = std::string(row.text(7));
  release.commit = std::string(row.text(8));
  release.pushed = row.integer(9) != 0;
  release.remote = std::string(row.text(10));
  return release;
}

/// A research entry whose `column` cannot be read: E_FILE_ERROR with the restore fix.
Error corrupt_research(std::string_view id, std::string_view column);

/// The columns read_research_row() reads, of entry r.
std::string research_columns(const sql::Dialect& dialect);

/// Reads a research row: its columns in the order id, file, title, date, status, agent_type,
/// topics, key_findings, actionable, needs_followup, confidence, file_checksum, archived,
/// archived_at, created_at, updated_at, then its linked tasks as a JSON list in link order.
template <typename Row>
Result<ResearchEntry> read_research_row(const Row& row) {
  ResearchEntry entry;
  entry.id = std::string(row.text(0));
  entry.file = std::string(row.text(1));
  entry.title = std::string(row.text(2));
  entry.date = std::string(row.text(3));
  auto status = parse_research_status(row.text(4));
  if (!status) return fail(corrupt_research(entry.id, "status"));
  entry.status = *status;
  entry.agent_type = std::string(row.text(5));
  CT_TRY_ASSIGN(entry.topics, decode_strings(row.text(6), entry.id, "topics"));
  CT_TRY_ASSIGN(entry.key_findings, decode_strings(row.text(7), entry.id, "key_findings"));
  entry.actionable = row.integer(8) != 0;
  CT_TRY_ASSIGN(entry.needs_followup, decode_strings(row.text(9), entry.id, "needs_followup"));
  entry.confidence = row.optional_real(10);
  entry.file_checksum = std::string(row.text(11));
  entry.archived = row.integer(12) != 0;
  entry.archived_at = row.optional_int(13);
  entry.created_at = row.integer(14);
  entry.updated_at = row.integer(15);
  CT_TRY_ASSIGN(entry.linked_tasks, decode_strings(row.text(16), entry.id, "links"));
  return entry;
}

/// A stored JSON text (params, before/after values) as a value; text that is not JSON is kept as
/// a string rather than lost.
json::Value stored_json(std::string_view text);

// Column order of every audit SELECT; read_audit_row() indexes by these (changes are read apart).
inline constexpr std::string_view kAuditColumns =
    "seq, at, session, agent, operation, task_id, params, outcome, reason, hash, intent, principal";

template <typename Row>
AuditEntry read_audit_row(const Row& row) {
  AuditEntry entry;
  entry.seq = row.integer(0);
  entry.at = row.integer(1);
  entry.session = std::string(row.text(2));
  entry.agent = std::string(row.text(3));
  entry.operation = std::string(row.text(4));
  entry.task_id = std::string(row.text(5));
  auto parsed = json::parse(row.text(6));
  entry.params = parsed && parsed->is_object() ? std::move(*parsed) : json::Value::object();
  entry.outcome = std::string(row.text(7));
  entry.reason = std::string(row.text(8));
  entry.hash = std::string(row.text(9));
  if (auto intent = row.text(10); !intent.empty()) {
    auto value = json::parse(intent);
    if (value && value->is_object()) entry.intent = std::move(*value);
  }
  entry.principal = std::string(row.text(11));
  return entry;
}

/// An audit change from its columns task_id, field, before, after, starting at column `first`.
template <typename Row>
FieldChange read_change_row(const Row& row, int first) {
  FieldChange change;
  change.task_id = std::string(row.text(first));
  change.field = std::string(row.text(first + 1));
  change.before = row.is_null(first + 2) ? json::Value() : stored_json(row.text(first + 2));
  change.after = row.is_null(first + 3) ? json::Value() : stored_json(row.text(first + 3));
  return change;
}

inline constexpr std::string_view kComplianceColumns =
    "c.id, c.at, c.task_id, c.check_name, c.passed, c.score, c.details, c.session, c.agent";

template <typename Row>
ComplianceRecord read_compliance_row(const Row& row) {
  ComplianceRecord record;
  record.id = row.integer(0);
  record.at = row.integer(1);
  record.task_id = std::string(row.text(2));
  record.check = std::string(row.text(3));
  record.passed = row.integer(4) != 0;
  record.score = row.optional_int(5);
  record.details = std::string(row.text(6));
  record.session = std::string(row.text(7));
  record.agent = std::string(row.text(8));
  return record;
}

/// The keys a compliance summary selects (check_key, agent_key) and groups and orders by.
struct ComplianceGrouping {
  const char* keys;
  const char* by;
};
inline ComplianceGrouping compliance_grouping(ComplianceGroup group) {
  switch (group) {
    case ComplianceGroup::Check: return {"c.check_name AS check_key, '' AS agent_key", "check_key"};
    case ComplianceGroup::Agent: return {"'' AS check_key, c.agent AS agent_key", "agent_key"};
    case ComplianceGroup::CheckAndAgent: break;
  }
  return {"c.check_name AS check_key, c.agent AS agent_key", "check_key, agent_key"};
}

/// A summary row: check, agent, runs, passed, average score, last at, last passed.
template <typename Row>
ComplianceSummary read_compliance_summary_row(const Row& row) {
  ComplianceSummary summary;
  summary.check = std::string(row.text(0));
  summary.agent = std::string(row.text(1));
  summary.runs = row.integer(2);
  summary.passed = row.integer(3);
  summary.average_score = row.optional_real(4);
  summary.last_at = row.integer(5);
  summary.last_passed = row.integer(6) != 0;
  return summary;
}

inline LifecycleKind parse_lifecycle_kind(std::string_view text) {
  return text == "gate" ? LifecycleKind::Gate : LifecycleKind::Stage;
}

inline constexpr std::string_view kLifecycleStateColumns = "name, status, at, agent, session, notes, evidence";

template <typename Row>
LifecycleState read_lifecycle_state_row(const Row& row, std::string_view subject, LifecycleKind kind) {
  return LifecycleState{std::string(subject),        kind, std::string(row.text(0)), std::string(row.text(1)),
                        row.integer(2),              std::string(row.text(3)), std::string(row.text(4)),
                        std::string(row.text(5)),    std::string(row.text(6))};
}

inline constexpr std::string_view kLifecycleEventColumns =
    "seq, kind, name, from_status, status, at, agent, session, notes, evidence, operation";

template <typename Row>
LifecycleEvent read_lifecycle_event_row(const Row& row, std::string_view subject) {
  LifecycleEvent event;
  event.seq = row.integer(0);
  event.state = LifecycleState{std::string(subject),     parse_lifecycle_kind(row.text(1)), std::string(row.text(2)),
                               std::string(row.text(4)), row.integer(5),                    std::string(row.text(6)),
                               std::string(row.text(7)), std::string(row.text(8)),          std::string(row.text(9))};
  event.from = std::string(row.text(3));
  event.operation = std::string(row.text(10));
  return event;
}

/// The audit anchor as meta.audit_anchor holds it (JSON {seq, hash, archive}); E_FILE_ERROR when
/// unreadable.
Result<AuditAnchor> parse_audit_anchor(std::string_view text);

}  // namespace ct
