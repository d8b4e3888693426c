// What tasks.import's files share (the operation is tasks_import.cpp): a file's records read as
// tasks.add reads them, with the checks of the file as a whole (import_records.cpp), and the
// original CLEO's store imported with its ids, sessions and config (import_original.cpp) and its
// memory (import_original_memory.cpp).
#pragma once

#include <cstddef>
#include <filesystem>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "domains/context.h"
#include "domains/params.h"
#include "domains/registry.h"
#include "domains/tasks/import_formats.h"
#include "engines/rules/task_engine.h"

namespace ct::tasks {

/// tasks.import's params (tasks_import.cpp).
struct ImportArgs {
  json::Value tasks;  // null when not given
  std::optional<std::string> from;
  std::string format;
  std::optional<std::string> parent;
  bool skip_invalid = false;
  bool dry_run = false;
};

/// One record of a tasks.import file, validated exactly as tasks.add validates its params.
struct ImportRecord {
  std::size_t index = 0;
  std::string id;                        // the id in the file ("" when it has none)
  std::string parent;                    // the parent's id in the file
  std::vector<std::string> depends;      // ids in the file
  std::vector<Relation> relates;         // links to ids in the file
  TaskStatus status = TaskStatus::Pending;
  std::string cancellation_reason;
  NewTask task;                          // parent and depends are filled in when placed
  std::optional<TaskType> given_type;    // as the record gave it
  // Records that keep their ids (the original CLEO's store): when and how they stand there.
  TimeMs created_at = 0;
  std::optional<TimeMs> updated_at, completed_at, cancelled_at, archived_at;
  bool archived = false;
  std::string archive_reason;
};

/// The specs a record's params are checked against: tasks.add's, and tasks.delete's reason and
/// tasks.relate's type and notes.
struct RecordSpecs {
  const OperationSpec* add = nullptr;
  const OperationSpec* remove = nullptr;
  const OperationSpec* relate = nullptr;
};

/// Why one record cannot be imported: {index, id?, field?, message}.
json::Value record_problem(std::size_t index, const json::Value& item, const Error& error);

/// Reads a record through the tasks.add spec: every text is trimmed, bounded and free of control
/// characters, every enum value one of its choices — nothing the agent API refuses is stored —
/// and its content decoded as tasks.add decodes its params (add_args()). With `keep_ids` (the
/// original CLEO's store) the record must carry its id and createdAt, and its times and archive
/// state are read too.
Result<ImportRecord> read_record(Context& context, const RecordSpecs& specs, std::size_t index, const json::Value& item,
                                 TimeMs now, bool keep_ids);

/// "tasks[3] (B7)": a record of the file, by its place and its id there.
std::string record_label(std::size_t index, const std::string& id);

/// "tasks[3] (T004)" or "sessions[1] (session_…)": where a problem of the original's store is.
inline std::string store_label(std::string_view of, std::size_t index, const std::string& id) {
  return std::string(of) + "[" + std::to_string(index) + "]" + (id.empty() ? "" : " (" + id + ")");
}

/// Two records with one id: every reference to it would be ambiguous (parent, depends and relates
/// would all bind to one of them, silently). Refused, naming both; checked on every record of the
/// file, valid or not, so that skipInvalid cannot make the choice either.
Result<void> check_unique_ids(const json::Value& list);

/// The links inside the file, checked in the file's terms before anything is written: no record
/// depends on itself, and neither the dependencies nor the parent links form a loop. (Left to the
/// task engine, these are found only while writing, and named by the ids the import was about to
/// give — ids that never exist, since the refused import is rolled back.)
Result<void> check_file_links(const std::vector<ImportRecord>& records);

/// The original CLEO's store, ids kept (import_original.cpp): its tasks, sessions, config and
/// memory in the call's transaction and its one audit row.
Result<Reply> import_kept(Context& context, const ImportArgs& args, ForeignFile file, std::vector<ImportRecord> records,
                          json::Value problems);

/// References of the original's store to tasks it does not hold (a parent, a dependency, a link, a
/// session's scope, a memory entry's task) or to files outside this project (a memory entry's):
/// refused, naming each; with skipInvalid dropped, each said.
class Dangling {
 public:
  void add(const std::string& where, std::string_view field, const std::string& missing);
  /// Nothing dangles, or skipInvalid: the warnings for what was dropped. Otherwise the refusal
  /// naming the first.
  Result<void> settle(const ImportArgs& args, std::vector<std::string>& warnings) const;

 private:
  json::Value items_ = json::Value::array();  // {record, field, missing}
};

/// One entry of the original's memory (original_brain.h) on its way in: memory.observe's params.
struct MemoryRecord {
  std::size_t index = 0;
  std::string from;  // "brain_decisions D001"
  json::Value params;
};

/// The original's memory entries (import_original_memory.cpp), each checked as memory.observe
/// checks its params before anything is written; references to tasks not in `in_store` and to
/// files outside this project are dropped into `dangling`. Invalid entries refuse the import,
/// unless skipInvalid: then they join `problems`.
Result<std::vector<MemoryRecord>> read_memory(Context& context, const ImportArgs& args, const json::Value& entries,
                                              const std::set<std::string>& in_store, Dangling& dangling,
                                              json::Value& problems);

/// The entries, each a memory.observe run as this caller inside this call: the report of
/// tasks.import's data.memory (null when there were none).
Result<json::Value> import_memory(Context& context, const std::vector<MemoryRecord>& records,
                                  std::vector<std::string>& warnings);

/// A scope path of the original's memory as this project names it: a relative path as it is, an
/// absolute one inside the project made relative; nullopt for a path outside the project (or one
/// memory's rules refuse), which has no place here.
std::optional<std::string> scope_path_here(const std::filesystem::path& root, const std::string& path);

}  // namespace ct::tasks
