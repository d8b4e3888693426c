// `ct edit T005`: a task as a small text form a person edits in $EDITOR, and the form read back
// as the one tasks.update call that makes the changes.
#pragma once

#include <string>
#include <string_view>

#include "core/error.h"
#include "core/json.h"

namespace ct::cli {

/// The form for a task (tasks.show with detail full): header comments, then one `key: value` line
/// per field; lists as `- item` lines; description and a new note as indented blocks.
std::string edit_form(const json::Value& task);

/// The params of tasks.update (less id and ifVersion) for what changed between `task` and the
/// edited `form`: only changed fields, lists replaced whole (mode replace), a new note as notes.
/// An empty object when nothing changed. E_INVALID_INPUT naming the line for a form that does not
/// read (an unknown field, an item outside a list).
Result<json::Value> edit_changes(const json::Value& task, std::string_view form);

/// The program and arguments to edit a file with: $VISUAL, else $EDITOR, else vi — split into
/// words (quotes group words; no shell runs).
std::vector<std::string> editor_command();

}  // namespace ct::cli
