// Other task trackers' exports as tasks.import records: Taskwarrior (`task export`, a JSON array)
// and beads (`.beads/issues.jsonl`, one issue per line, read as an array). Each foreign record
// becomes a record of the shape tasks.export writes ({id, title, description, status, priority,
// type, parent, depends, labels, acceptance, notes, relates, cancellationReason}); the report
// says where each foreign field went and which ones have no place here, with how many records
// carried them. Pure functions: nothing here reads or writes the store.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/clock.h"
#include "core/error.h"
#include "core/json.h"
#include "domains/registry.h"

namespace ct::tasks {

struct ForeignFile {
  std::string format;                          // "cleo", "taskwarrior", "beads" or "original"
  json::Value records = json::Value::array();  // tasks.import records
  json::Value mapped = json::Value::object();  // {foreign field: where it went}
  json::Value unmapped = json::Value::object();  // {foreign field: records that carried it}
  std::vector<std::string> warnings;
  // The original CLEO's store (format "original", domains/tasks/original_store.h): its records keep
  // their ids, states and times, and carry createdAt, updatedAt, completedAt, cancelledAt,
  // archived, archivedAt and archiveReason as tasks.export writes them.
  std::string generation;                        // "json" (v0.x files) or "sqlite" (tasks.db, cleo.db)
  std::string source;                            // the folder or file read
  json::Value sessions = json::Value::array();   // {id, was, name, scope, agent?, status, note?, nextAction?,
                                                 //  createdAt, updatedAt, endedAt?, archivedAt?}
  json::Value config = json::Value::object();    // {our key: the value the original's config maps to}
  json::Value memory = json::Value::array();     // its brain (original_brain.h): {from, params (memory.observe's)}
};

/// A file read as JSON and back: what tasks.import's external step read, handed to its handler
/// (the file is read before the write transaction, never under it). Both take their argument by
/// value: the records are moved, not copied (an import of 100k records holds them several times
/// over otherwise; docs/performance.md, "Imports: fewer copies").
json::Value foreign_json(ForeignFile file);
ForeignFile foreign_from_json(json::Value value);

/// The limits of tasks.add's params that foreign text is fitted to (the rest goes into notes),
/// read from its spec: the registry says them once.
struct TaskLimits {
  std::size_t title, description, note, acceptance_item, acceptance_items, label, labels;

  explicit TaskLimits(const OperationSpec& add)
      : title(bound(add, "title", false)), description(bound(add, "description", false)),
        note(bound(add, "notes", false)), acceptance_item(bound(add, "acceptance", true)),
        acceptance_items(bound(add, "acceptance", false)), label(bound(add, "labels", true)),
        labels(bound(add, "labels", false)) {}

  static std::size_t bound(const OperationSpec& add, std::string_view name, bool per_item) {
    const ParamSpec* param = add.find_param(name);
    std::int64_t limit = !param ? kUnbounded : per_item ? param->item_max : param->max;
    return limit == kUnbounded ? SIZE_MAX : static_cast<std::size_t>(limit);
  }
};

/// "taskwarrior" or "beads" when the records look like one of them, else "cleo".
std::string detect_format(const json::Value& records);

/// The records of `input` (an array, or tasks.export's {tasks:[…]}) in tasks.import's shape.
/// `format` is "auto", "cleo", "taskwarrior" or "beads"; text is fitted to the limits of
/// `add_spec` (tasks.add); `now` bounds the times of notes.
Result<ForeignFile> read_foreign(const json::Value& input, std::string_view format, const OperationSpec& add_spec,
                                 TimeMs now);

}  // namespace ct::tasks
