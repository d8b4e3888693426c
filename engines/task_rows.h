// Task rows as every backend stores them: the column order of every task SELECT, the codecs of
// the JSON list columns (depends, labels, notes, relations…) to and from a Task, and one reader of
// a task row over any backend's row type. Internal to the backends (engines/sqlite_*, engines/pg_*).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"
#include "core/json.h"
#include "engines/task.h"

namespace ct {

// Column order of every task SELECT; read_task() indexes by these.
inline constexpr std::string_view kTaskColumns =
    "t.id, t.title, t.description, t.status, t.priority, t.type, t.parent, t.position, t.depends, "
    "t.labels, t.acceptance, t.files, t.notes, t.relates, t.phase, t.size, t.blocked_by, "
    "t.created_at, t.updated_at, t.completed_at, t.cancelled_at, t.cancellation_reason, "
    "t.archived, t.archived_at, t.archive_reason, t.version";

enum TaskColumn : int {
  kId, kTitle, kDescription, kStatus, kPriority, kType, kParent, kPosition, kDepends,
  kLabels, kAcceptance, kFiles, kNotes, kRelates, kPhase, kSize, kBlockedBy,
  kCreatedAt, kUpdatedAt, kCompletedAt, kCancelledAt, kCancellationReason,
  kArchived, kArchivedAt, kArchiveReason, kVersion, kTaskColumnCount
};

inline constexpr std::string_view kCorruptFix =
    "restore the newest backup that passes an integrity check; the damaged store is moved aside first: "
    "cleo_mutate {domain:'system', operation:'restore'}";

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

}  // namespace ct
