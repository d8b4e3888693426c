// Task rows of the SQLite backend: the column order of every task SELECT, and the codecs of
// the JSON list columns (depends, labels, notes, relations…) to and from a Task. Internal to the
// SQLite backend.
#pragma once

#include <sqlite3.h>

#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"
#include "core/json.h"
#include "engines/task.h"

namespace ct::sqlite {

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
/// Reads one task from a statement positioned on a row selected with kTaskColumns first.
Result<Task> read_task(sqlite3_stmt* stmt);

}  // namespace ct::sqlite
