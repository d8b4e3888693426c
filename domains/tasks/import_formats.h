// Other task trackers' exports as tasks.import records: Taskwarrior (`task export`, a JSON array)
// and beads (`.beads/issues.jsonl`, one issue per line, read as an array). Each foreign record
// becomes a record of the shape tasks.export writes ({id, title, description, status, priority,
// type, parent, depends, labels, acceptance, notes, relates, cancellationReason}); the report
// says where each foreign field went and which ones have no place here, with how many records
// carried them. Pure functions: nothing here reads or writes the store.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/clock.h"
#include "core/error.h"
#include "core/json.h"
#include "domains/registry.h"

namespace ct::tasks {

struct ForeignFile {
  std::string format;                          // "cleo", "taskwarrior" or "beads"
  json::Value records = json::Value::array();  // tasks.import records
  json::Value mapped = json::Value::object();  // {foreign field: where it went}
  json::Value unmapped = json::Value::object();  // {foreign field: records that carried it}
  std::vector<std::string> warnings;
};

/// "taskwarrior" or "beads" when the records look like one of them, else "cleo".
std::string detect_format(const json::Value& records);

/// The records of `input` (an array, or tasks.export's {tasks:[…]}) in tasks.import's shape.
/// `format` is "auto", "cleo", "taskwarrior" or "beads"; text is fitted to the limits of
/// `add_spec` (tasks.add); `now` bounds the times of notes.
Result<ForeignFile> read_foreign(const json::Value& input, std::string_view format, const OperationSpec& add_spec,
                                 TimeMs now);

}  // namespace ct::tasks
