#include "cli/render.h"

#include <algorithm>
#include <utility>

#include "cli/render_views.h"
#include "cli/usage.h"
#include "core/clock.h"
#include "core/text.h"
#include "domains/projection.h"

namespace ct::cli {
namespace views {

std::string scalar_text(const json::Value& value) {
  switch (value.type()) {
    case json::Type::Null: return "-";
    case json::Type::Bool: return value.as_bool() ? "yes" : "no";
    case json::Type::String: return value.as_string();
    case json::Type::Array: {
      std::string out;
      for (const auto& item : value.as_array()) {
        if (!out.empty()) out += ", ";
        out += item.is_string() ? item.as_string() : item.dump();
      }
      return out;
    }
    default: return value.dump();
  }
}

std::string str(const json::Value& value, std::string_view key) {
  const json::Value& v = value[key];
  if (v.is_string()) return v.as_string();
  if (v.is_null()) return "";
  return v.dump();
}

std::string ids_text(const json::Value& list) {
  std::vector<std::string> ids;
  if (list.is_array())
    for (const auto& item : list.as_array()) ids.push_back(item.is_string() ? item.as_string() : str(item, "id"));
  return join(ids, ", ");
}

/// An ISO-8601 time as people read it: the time, and how long ago ("2026-11-24T09:12:00Z (3h ago)").
/// Anything else is returned as it is.
std::string time_text(const std::string& text, const RenderOptions& options) {
  if (options.now <= 0 || text.size() < 20 || text[10] != 'T' || text.back() != 'Z') return text;
  auto at = parse_iso8601(text);
  return at ? text + " (" + relative_time(*at, options.now) + ")" : text;
}

}  // namespace views

using namespace views;

namespace {

bool is_scalar(const json::Value& value) { return !value.is_array() && !value.is_object(); }

bool is_scalar_list(const json::Value& value) {
  if (!value.is_array()) return false;
  return std::all_of(value.as_array().begin(), value.as_array().end(), [](const auto& v) { return is_scalar(v); });
}

bool is_object_list(const json::Value& value) {
  if (!value.is_array() || value.empty()) return false;
  return std::all_of(value.as_array().begin(), value.as_array().end(), [](const auto& v) { return v.is_object(); });
}

std::string upper(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c >= 'a' && c <= 'z') {
      out += static_cast<char>(c - 'a' + 'A');
    } else if (c >= 'A' && c <= 'Z' && !out.empty()) {
      out += '_';
      out += c;
    } else {
      out += c;
    }
  }
  return out;
}

/// Whether a field holds a time: createdAt, at, lastActivityAt …
bool is_time_field(std::string_view key) { return key == "at" || key.ends_with("At"); }

// ---- generic rendering ---------------------------------------------------------------------

Table object_table(const json::Value& rows, const RenderOptions& options) {
  std::vector<std::string> columns;
  for (const auto& row : rows.as_array())
    for (const auto& [key, value] : row.as_object())
      if ((is_scalar(value) || is_scalar_list(value)) &&
          std::find(columns.begin(), columns.end(), key) == columns.end())
        columns.push_back(key);
  // Long text reads best at the end of a line.
  for (std::string_view last : {"title", "description", "message", "text"}) {
    auto it = std::find(columns.begin(), columns.end(), last);
    if (it != columns.end()) std::rotate(it, it + 1, columns.end());
  }
  std::vector<std::string> headers;
  for (const auto& column : columns) headers.push_back(upper(column));
  Table table(std::move(headers));
  for (const auto& row : rows.as_array()) {
    std::vector<Table::Cell> cells;
    for (const auto& column : columns) {
      const json::Value& value = row[column];
      std::string sgr = column == "status" && value.is_string() ? std::string(status_sgr(value.as_string())) : "";
      std::string text = value.is_null() ? "" : scalar_text(value);
      if (is_time_field(column)) text = time_text(text, options);
      cells.push_back({std::move(text), sgr});
    }
    table.add_row(std::move(cells));
  }
  return table;
}

}  // namespace

namespace views {

void render_into(std::string& out, const json::Value& value, const RenderOptions& options, std::string_view indent) {
  if (is_scalar(value) || is_scalar_list(value)) {
    out += std::string(indent) + scalar_text(value) + "\n";
    return;
  }
  if (is_object_list(value)) {
    out += object_table(value, options).render(options.out, options.width, indent);
    return;
  }
  if (value.is_array()) {
    for (const auto& item : value.as_array()) render_into(out, item, options, indent);
    return;
  }
  std::size_t key_width = 0;
  for (const auto& [key, item] : value.as_object())
    if (is_scalar(item) || is_scalar_list(item) || (item.is_array() && item.empty()))
      key_width = std::max(key_width, display_width(key));
  for (const auto& [key, item] : value.as_object()) {
    if (item.is_array() && item.empty()) {
      out += std::string(indent) + pad_to(key, key_width) + "  -\n";
    } else if (is_scalar(item) || is_scalar_list(item)) {
      std::string text = scalar_text(item);
      if (is_time_field(key)) text = time_text(text, options);
      out += std::string(indent) + (text.empty() ? key : pad_to(key, key_width) + "  " + text) + "\n";
    } else {
      out += std::string(indent) + key + ":\n";
      render_into(out, item, options, std::string(indent) + "  ");
    }
  }
}

}  // namespace views

namespace {

// ---- the reply's own view ------------------------------------------------------------------

/// The line under a page of rows: how many of how many, and how to get the rest. Every cut says so.
std::string page_footer(const Page& page, std::size_t shown, std::string_view noun, const Style& style) {
  std::string footer = "showing " + std::to_string(shown);
  if (page.total >= 0) footer += (page.total_at_least ? " of at least " : " of ") + std::to_string(page.total);
  if (!noun.empty()) footer += " " + std::string(noun);
  if (page.offset > 0) footer += " (from " + std::to_string(page.offset + 1) + ")";
  if (page.has_more()) footer += " — next: --offset " + std::to_string(page.next_offset());
  return style.dim(footer) + "\n";
}

/// The operation's own text view (OperationSpec::text_view), or the generic one.
std::string render_one(const View& v) {
  // knownHash matched: nothing else was sent.
  if (v.data()["unchanged"] == json::Value(true) && v.data().size() == 1) return "Unchanged\n";
  switch (v.spec.text_view) {
    case TextView::Briefing: {
      // For a host's hook: exactly what it loads (its format is the host's, not ct's).
      if (v.data()["hook"].is_string()) return v.data()["hook"].as_string() + "\n";
      return render_value(v.data(), v.options);
    }
    case TextView::Generic: return render_value(v.data(), v.options);
    case TextView::Created:
      return "Created " + str(v.data(), "id") + ": " + std::string(trim(str(v.params, "title"))) + "\n";
    case TextView::TaskCard: return show_card(v);
    case TextView::TaskTable: return task_list(v, "No tasks", v.data());
    case TextView::FoundTasks: {
      json::Value rows = table_as_rows(v.data());
      return rows.empty() ? std::string() : task_list(v, "", rows);
    }
    case TextView::NextTasks: return next_table(v);
    case TextView::TaskHistory: return audit_table(v, "No recorded changes", false);
    case TextView::AuditLog: return audit_table(v, "No audit rows", true);
    case TextView::TaskTree: return tree_view(v);
    case TextView::Dependencies: return deps_view(v);
    case TextView::Blockers: return blockers_view(v);
    case TextView::PlanDiff: return plan_diff_view(v);
    case TextView::Completed: return complete_view(v);
    case TextView::Deleted: return delete_view(v);
    case TextView::Imported: return import_view(v);
    case TextView::Undone: return undo_view(v);
    case TextView::Updated: return changed_fields(v, "Updated");
    case TextView::Restored: return changed_fields(v, "Restored");
    case TextView::Reopened: return changed_fields(v, "Reopened");
    case TextView::Moved: return changed_fields(v, "Moved");
    case TextView::Promoted: return changed_fields(v, "Promoted");
    case TextView::Reordered: return changed_fields(v, "Reordered");
    case TextView::Linked: return changed_fields(v, v.params["remove"] == json::Value(true) ? "Unlinked" : "Linked");
    case TextView::Started: {
      std::string out = "Started " + str(v.data(), "id");
      if (v.data().contains("previous")) out += " (" + str(v.data(), "previous") + " is back to pending)";
      return out + "\n";
    }
    case TextView::Stopped: return "Stopped " + str(v.data(), "id") + " (now " + str(v.data(), "status") + ")\n";
    case TextView::CurrentTask: {
      std::string status = str(v.data(), "status");
      return "Current: " + v.style().bold(str(v.data(), "id")) + " " + str(v.data(), "title") + " " +
             v.style().paint("[" + status + "]", status_sgr(status)) + "\n";
    }
    case TextView::Exists: {
      std::string out = str(v.data(), "id") + " exists";
      if (v.data()["archived"] == json::Value(true)) out += " (archived)";
      return out + "\n";
    }
    case TextView::Archived:
      return "Archived " + str(v.data(), "count") + " task(s): " + ids_text(v.data()["archived"]) + "\n";
    case TextView::Json: return v.data().dump() + "\n";
    case TextView::Markdown: return str(v.data(), "markdown");
    case TextView::Initialised:
      return "Initialised a CLEO project in " + str(v.data(), "root") + "\n" + "  database: " + str(v.data(), "db") +
             "\n" + files_written(v.data()["instructions"], "  agent instructions: ");
    case TextView::HelpText: return help_text(v);
    case TextView::Injected:
      return files_written(v.data()["templates"], "Templates: ") +
             files_written(v.data()["targets"], "Instruction files: ");
    case TextView::Dashboard: return dash_view(v);
    case TextView::Version:
      return "ct " + str(v.data(), "version") + " (schema " + str(v.data(), "schemaVersion") + ")\n";
  }
  return render_value(v.data(), v.options);
}

/// A bulk call (`ct done T3 T4`): each task as if it had been changed alone, then one line for all.
std::string bulk_view(const View& view) {
  std::string out;
  json::Value ids = json::Value::array();
  for (const auto& result : view.data()["results"].as_array()) {
    json::Value params = view.params.is_object() ? view.params : json::Value::object();
    params.erase("ids");
    params.set("id", result["id"]);
    out += render_one(View{view.spec, params, result, {}, view.options});
    ids.push_back(result["id"]);
  }
  if (ids.size() > 1)
    out += view.style().dim(std::to_string(ids.size()) + " tasks in one transaction: " + ids_text(ids)) + "\n";
  return out;
}

/// The short line for a success that carries a note (100–103). Uses the first warning when the
/// operation explained itself, else a sentence built from the request.
std::string note_line(const View& view, ErrorCode note, bool& used_warning) {
  std::string label = note == ErrorCode::NoData ? "No data" : note == ErrorCode::AlreadyExists ? "Already exists" : "No change";
  used_warning = false;
  if (!view.warnings.empty()) {
    used_warning = true;
    return label + ": " + view.warnings.front();
  }
  const TextView kind = view.spec.text_view;
  std::string id = str(view.data(), "id");
  if (id.empty()) id = str(view.params, "id");
  if (note == ErrorCode::NoData) {
    if (kind == TextView::FoundTasks) return "No tasks match '" + str(view.params, "query") + "'";
    if (kind == TextView::TaskTable) return "No tasks";
    if (kind == TextView::NextTasks)
      return "No task is ready to start (nothing pending, or everything waits on dependencies)";
    if (kind == TextView::CurrentTask) return "No task in focus (start one with: ct start <id>)";
    if (kind == TextView::Exists) return id + " does not exist";
    return label;
  }
  if (note == ErrorCode::NoChange) {
    if (kind == TextView::Completed) return label + ": " + id + " was already done";
    if (kind == TextView::Started) return label + ": " + id + " is already in focus";
    if (kind == TextView::Archived) return label + ": nothing to archive";
    if (kind == TextView::Injected) return label + ": the agent instructions are current";
    if (!id.empty()) return label + ": " + id + " already matches";
  }
  return label;
}

}  // namespace

std::string relative_time(std::int64_t at, std::int64_t now) {
  std::int64_t seconds = (now - at) / 1000;
  const bool future = seconds < 0;
  if (future) seconds = -seconds;
  if (seconds < 60) return "just now";
  struct Unit {
    std::int64_t seconds;
    const char* suffix;
  };
  static constexpr Unit kUnits[] = {{365 * 86400, "y"}, {30 * 86400, "mo"}, {7 * 86400, "w"}, {86400, "d"},
                                    {3600, "h"}, {60, "m"}};
  for (const auto& unit : kUnits) {
    // Two of a unit before using it (36h, not 1d; 10d, not 1w): the number stays meaningful.
    if (seconds < 2 * unit.seconds && unit.seconds > 60) continue;
    std::string count = std::to_string(seconds / unit.seconds) + unit.suffix;
    return future ? "in " + count : count + " ago";
  }
  return "just now";
}

std::string render_value(const json::Value& value, const RenderOptions& options) {
  if (value.is_null()) return "";
  std::string out;
  render_into(out, value, options, "");
  return out;
}

Rendered render_envelope(const OperationSpec& spec, const json::Value& params, const Envelope& envelope,
                         const RenderOptions& options, const Registry& registry, std::string_view help_command) {
  Rendered rendered;
  if (!envelope.success) {
    rendered.err = render_error(envelope.error ? *envelope.error : Error(ErrorCode::Internal, "unknown failure"),
                                options.err, registry, help_command);
    // A check that failed (validate.*: E_VALIDATION, or a protocol's own code) carries its whole
    // report: people read it as they would a pass.
    if (envelope.error && envelope.error->details["valid"] == json::Value(false)) {
      json::Value report = written(envelope.error->details, PeopleAdvice(registry));
      report.erase("warnings");
      rendered.out = render_value(report, options);
    }
    return rendered;
  }
  // Advice, in the data as in the warnings, as the `ct` commands people type.
  const json::Value data = written(envelope.data, PeopleAdvice(registry));
  std::vector<std::string> warnings;
  for (const auto& warning : envelope.warnings) warnings.push_back(advice_for_people(warning, registry));
  View view{spec, params, data, warnings, options};
  bool used_warning = false;
  std::string note;
  if (envelope.note) note = note_line(view, *envelope.note, used_warning);
  for (std::size_t i = used_warning ? 1 : 0; i < warnings.size(); ++i)
    rendered.err += options.err.yellow("warning:") + " " + warnings[i] + "\n";

  if (envelope.note) {
    // A success with a note (nothing found, already there, nothing changed) is answered by the
    // note alone: the data is the unchanged state and would read like a fresh change.
    rendered.out = note + "\n";
  } else if (spec.bulk && view.data()["results"].is_array()) {
    rendered.out = bulk_view(view);
  } else {
    rendered.out = render_one(view);
    if (rendered.out.empty()) rendered.out = "Done\n";
    const json::Value& rows = data.is_object() && data.contains("rows") ? data["rows"] : data;
    if (envelope.page && rows.is_array())
      rendered.out += page_footer(*envelope.page, rows.size(),
                                  spec.text_view == TextView::TaskTree ? "top-level tasks" : "", options.out);
  }
  if (envelope.meta.is_object() && !envelope.meta.empty()) {
    std::string meta;
    for (const auto& [key, value] : envelope.meta.as_object()) meta += " " + key + "=" + scalar_text(value);
    rendered.err += options.err.dim("meta:" + meta) + "\n";
  }
  return rendered;
}

std::string render_error(const Error& error, const Style& style, const Registry& registry,
                         std::string_view help_command) {
  std::string message = error.message;
  const json::Value& guess = error.details["didYouMean"];
  if (guess.is_string()) {
    std::string suffix = " (did you mean '" + guess.as_string() + "'?)";
    if (message.ends_with(suffix)) message.resize(message.size() - suffix.size());
  }
  std::string out = style.paint("error:", "1;31") + " " + message + " " + style.dim("(" + std::string(to_string(error.code)) + ")") + "\n";
  std::string fix = error.fix.empty() ? "" : advice_for_people(error.fix, registry);
  if (!fix.empty()) out += "  fix: " + fix + "\n";
  // Params that do not fit the spec, or a value that breaks one param's rule (E_VALIDATION naming
  // the field): the command's help says what each takes.
  bool about_params = error.code == ErrorCode::InvalidParams || error.code == ErrorCode::InvalidInput ||
                      (error.code == ErrorCode::Validation && error.details["field"].is_string());
  if (about_params && !help_command.empty() && fix != help_command) out += "  help: " + std::string(help_command) + "\n";
  if (guess.is_string()) out += "  did you mean: " + style.bold(guess.as_string()) + "\n";
  const json::Value& valid = error.details["valid"];
  if (valid.is_array() && !valid.empty()) {
    std::vector<std::string> names;
    for (const auto& name : valid.as_array()) names.push_back(scalar_text(name));
    constexpr std::size_t kShown = 20;
    std::string listed = join(std::vector<std::string>(names.begin(), names.begin() + static_cast<std::ptrdiff_t>(
                                                                                           std::min(names.size(), kShown))),
                              ", ");
    if (names.size() > kShown) listed += ", … (" + std::to_string(names.size()) + " in all)";
    out += "  valid: " + listed + "\n";
  }
  for (const auto& alternative : error.alternatives) {
    std::string how = alternative.operation;
    auto dot = how.find('.');
    if (dot != std::string::npos) {
      if (const OperationSpec* spec = registry.find(how.substr(0, dot), how.substr(dot + 1))) how = command_prefix(*spec);
    }
    out += "  or: " + alternative.action + " (" + how + ")\n";
  }
  return out;
}

}  // namespace ct::cli
