// What the readers of the original CLEO's store share (domains/tasks/original_store.h is the
// interface): its files read bounded, and the Reader that turns its tasks and sessions into
// tasks.import records and says where each field went (original_records.cpp). The JSON files are
// read by original_json.cpp, the SQLite store by original_sqlite.cpp, config.json and the log by
// original_config.cpp; original_store.cpp finds the store and puts the parts together.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "core/clock.h"
#include "core/error.h"
#include "core/json.h"
#include "domains/registry.h"
#include "domains/tasks/import_formats.h"
#include "domains/tasks/original_store.h"

namespace ct::tasks::original {

/// The original's v0.x JSON files.
inline constexpr std::string_view kJsonFiles[] = {"todo.json", "todo-archive.json", "sessions.json", "todo-log.json"};

/// A value that says something: not null, not empty, not false.
bool meaningful(const json::Value& value);

/// A file of the store (or of records), read whole but bounded (core/file_read.h: a regular file,
/// at most kMaxImportFileBytes, within a deadline). Missing: nullopt.
Result<std::optional<std::string>> read_bounded(const std::filesystem::path& file);

/// A JSON file (or JSON Lines) read and parsed; a clear error naming it when it does not parse —
/// a file cut short by a crash or a full disk is the usual reason.
Result<std::optional<json::Value>> read_json(const std::filesystem::path& file);

/// Where a field of the source is reported: JSON files by "task.parentId", "session.focus.nextAction";
/// the database by its table and column, "tasks.parent_id".
struct Naming {
  std::string prefix;                                   // "task.", "tasks."
  std::map<std::string, std::string, std::less<>> columns;  // a field's column where it differs

  std::string operator()(std::string_view field) const {
    if (auto found = columns.find(field); found != columns.end()) return found->second;
    return prefix + std::string(field);
  }
};

/// Reads the original's records: where each field goes, and what has no place (with counts).
class Reader {
 public:
  Reader(ForeignFile& file, const OperationSpec& add) : file_(file), limits_(add) {}

  void mapped(const std::string& field, std::string_view to) {
    if (!file_.mapped.contains(field)) file_.mapped.set(field, std::string(to));
  }
  void lost(const std::string& field, std::int64_t count = 1) {
    if (count <= 0) return;
    const json::Value& had = file_.unmapped[field];
    file_.unmapped.set(field, (had.is_int() ? had.as_int() : 0) + count);
  }
  /// A value changed on the way in (active → pending …): said once, with how many.
  void note_change(const std::string& what) { ++changes_[what]; }

  /// One of the original's tasks (its JSON shape; the database's rows are brought to it first) as
  /// a tasks.import record that keeps its id.
  json::Value task(const json::Value& task, bool in_archive, const Naming& name);
  /// One session (sessions.json's, a history entry, or the database's brought to that shape).
  json::Value session(const json::Value& session, bool history, const Naming& name);

  /// The warnings of the values changed on the way in, one per kind, with how many.
  void summarise();

 private:
  // The parts of task(), in its order.
  void task_fields(const json::Value& task, json::Value& out, const Naming& name);
  void task_status(const json::Value& task, bool in_archive, json::Value& out, const Naming& name);
  void task_type(const json::Value& task, json::Value& out, const Naming& name);
  void task_links(const json::Value& task, json::Value& out, const Naming& name);
  // The parts of session(), in its order.
  void session_note(const json::Value& session, json::Value& out, const Naming& name);
  void session_times(const json::Value& session, json::Value& out, const Naming& name);

  static json::Value ids(const json::Value& list);
  static void add_label(json::Value& out, std::string label);
  static void labels(json::Value& out, const json::Value& given);
  /// Notes with the time their text starts with: the CLI wrote "2026-02-11 14:30:00 UTC: text",
  /// the MCP engine "[2026-02-11T14:30:00Z] text". A note without one takes the time of the note
  /// before it (the first, the task's createdAt).
  void notes(json::Value& out, const json::Value& given, const json::Value& created);
  static std::pair<std::optional<TimeMs>, std::string> split_note(const std::string& note);
  /// Criteria past what a task holds here (count or length) become notes, never lost.
  void acceptance(json::Value& out, const json::Value& given);
  /// A scope object ({type, rootTaskId | epicId, explicitTaskIds}) in this store's words.
  std::string scope_text(const json::Value& scope, const Naming& name);

  ForeignFile& file_;
  TaskLimits limits_;
  std::map<std::string, std::int64_t> changes_;
};

/// config.json's keys with an equivalent here become those keys in `file.config`; the others are
/// reported (original_config.cpp).
void read_config(Reader& reader, ForeignFile& file, const json::Value& config);
/// The log: counted by action, never written into this store's audit trail.
void count_log(Reader& reader, const json::Value& entries, std::string_view prefix);

/// The v0.x JSON files: todo.json, its archive, sessions.json, todo-log.json, config.json
/// (original_json.cpp).
Result<void> read_json_store(const OriginalSource& source, Reader& reader, ForeignFile& file);
/// The SQLite store: tasks.db's tables, or cleo.db's tasks_ tables (original_sqlite.cpp).
Result<void> read_sqlite_store(const OriginalSource& source, Reader& reader, ForeignFile& file);

}  // namespace ct::tasks::original
