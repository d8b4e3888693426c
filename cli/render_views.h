// The text views of replies, shared by the files that write them (cli/render.h is their one
// entrance): render.cpp holds the generic rendering of any JSON, the choice of a reply's view and
// errors; render_tasks.cpp the views of tasks; render_records.cpp the views of what was recorded
// and what the project holds. Nothing outside cli/render*.cpp includes this.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "cli/render.h"
#include "cli/table.h"
#include "core/json.h"
#include "domains/registry.h"

namespace ct::cli::views {

/// A successful reply as a view reads it: what was called, and the data and warnings with their
/// advice already written as people type it (PeopleAdvice).
struct View {
  const OperationSpec& spec;
  const json::Value& params;
  const json::Value& shown;                   // the reply's data, advice in it as people type it
  const std::vector<std::string>& warnings;   // the reply's warnings, likewise
  const RenderOptions& options;
  const json::Value& data() const { return shown; }
  const Style& style() const { return options.out; }
};

// ---- what every view uses (render.cpp) -----------------------------------------------------

/// A scalar, or a list of them, as one piece of text ("-" for null, "yes"/"no", "a, b").
std::string scalar_text(const json::Value& value);
/// The field `key` of an object as text ("" when absent).
std::string str(const json::Value& value, std::string_view key);
/// The ids of a list of ids or of objects with an id, "T001, T002".
std::string ids_text(const json::Value& list);
/// An ISO-8601 time as people read it: the time, and how long ago ("2026-11-24T09:12:00Z (3h ago)").
std::string time_text(const std::string& text, const RenderOptions& options);
/// Any value appended to `out` as render_value() writes it, each line after `indent`.
void render_into(std::string& out, const json::Value& value, const RenderOptions& options, std::string_view indent);

// ---- tasks (render_tasks.cpp) --------------------------------------------------------------

/// The colour of a cell of a task row, by its field.
std::string cell_sgr(std::string_view field, const std::string& text);
/// Rows of tasks as a table (the columns --fields named, in its order, when it named any).
std::string task_list(const View& view, std::string_view empty_text, const json::Value& rows);
std::string show_card(const View& view);
std::string next_table(const View& view);
std::string tree_view(const View& view);
std::string deps_view(const View& view);
std::string blockers_view(const View& view);
/// "<Verb> T5 (version n)" and the fields the change set.
std::string changed_fields(const View& view, std::string_view verb);
std::string complete_view(const View& view);
std::string delete_view(const View& view);

// ---- what was recorded, and what the project holds (render_records.cpp) ---------------------

/// Audit rows (tasks.history, system.log); `spans_tasks`: the rows are of several tasks.
std::string audit_table(const View& view, std::string_view empty_text, bool spans_tasks);
std::string import_view(const View& view);
std::string undo_view(const View& view);
std::string plan_diff_view(const View& view);
std::string dash_view(const View& view);
/// "prefix a (created), b (inserted)\n" for a [{file, action}] list; "" when empty.
std::string files_written(const json::Value& files, std::string_view prefix);
std::string help_text(const View& view);

}  // namespace ct::cli::views
