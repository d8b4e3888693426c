#include "cli/render.h"

#include <algorithm>
#include <cctype>
#include <utility>

#include "cli/usage.h"
#include "core/clock.h"
#include "core/text.h"
#include "disclosure/cli_syntax.h"
#include "domains/projection.h"
#include "engines/store/task_json.h"

namespace ct::cli {
namespace {

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

/// Whether a field holds a time: createdAt, at, lastActivityAt …
bool is_time_field(std::string_view key) { return key == "at" || key.ends_with("At"); }

/// Indents every line of `text` by `indent`.
std::string indented(std::string_view text, std::string_view indent) {
  std::string out;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    out += indent;
    out += text.substr(start, end - start);
    out += '\n';
    start = end + 1;
  }
  return out;
}

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

// ---- per-operation renderers ---------------------------------------------------------------

struct View {
  const OperationSpec& spec;
  const json::Value& params;
  const json::Value& shown;                   // the reply's data, advice in it as people type it
  const std::vector<std::string>& warnings;   // the reply's warnings, likewise
  const RenderOptions& options;
  const json::Value& data() const { return shown; }
  const Style& style() const { return options.out; }
};

/// The colour of a cell of a task row, by its field.
std::string cell_sgr(std::string_view field, const std::string& text) {
  if (field == "id") return "1";
  if (field == "status") return std::string(status_sgr(text));
  if (field == "priority") return text == "critical" ? "31" : text == "high" ? "33" : "";
  return "";
}

/// What keeps a row's task from starting: the dependencies it waits on, then the reason it was
/// blocked by hand ("T002, T004; vendor reply").
std::string waits_on(const json::Value& row) {
  std::string out = ids_text(row["waitingOn"]);
  std::string why = str(row, "blockedBy");
  if (!why.empty()) out += (out.empty() ? "" : "; ") + why;
  return out;
}

std::string task_list(const View& view, std::string_view empty_text, const json::Value& rows) {
  if (!rows.is_array() || rows.empty()) return std::string(empty_text) + "\n";
  // The fields asked for are the columns, in the order asked: text never drops what --fields named.
  if (view.params["fields"].is_array() && !view.params["fields"].empty()) {
    std::vector<std::string> fields, headers;
    for (const auto& field : view.params["fields"].as_array()) {
      fields.push_back(field.as_string());
      std::string header = disclosure::kebab_case(field.as_string());
      for (char& c : header) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
      headers.push_back(std::move(header));
    }
    Table table(std::move(headers));
    for (const auto& row : rows.as_array()) {
      std::vector<Table::Cell> cells;
      for (const auto& field : fields) {
        std::string text = row.contains(field) ? scalar_text(row[field]) : "";
        cells.push_back({text, cell_sgr(field, text)});
      }
      table.add_row(std::move(cells));
    }
    return table.render(view.style(), view.options.width);
  }
  bool any_parent = false, any_waiting = false;
  for (const auto& row : rows.as_array()) {
    any_parent = any_parent || row.contains("parent");
    any_waiting = any_waiting || row.contains("waitingOn") || row.contains("blockedBy");
  }
  std::vector<std::string> headers = {"ID", "STATUS", "PRIORITY"};
  if (any_parent) headers.emplace_back("PARENT");
  if (any_waiting) headers.emplace_back("WAITS ON");
  headers.emplace_back("TITLE");
  Table table(std::move(headers));
  for (const auto& row : rows.as_array()) {
    std::string status = str(row, "status");
    std::string priority = str(row, "priority");
    std::vector<Table::Cell> cells = {{str(row, "id"), cell_sgr("id", "")},
                                      {status, cell_sgr("status", status)},
                                      {priority, cell_sgr("priority", priority)}};
    if (any_parent) cells.push_back({str(row, "parent"), ""});
    if (any_waiting) cells.push_back({waits_on(row), "33"});
    std::string title = str(row, "title");
    if (row["archived"] == json::Value(true)) title += " (archived)";
    cells.push_back({title, ""});
    table.add_row(std::move(cells));
  }
  return table.render(view.style(), view.options.width);
}

/// The line under a page of rows: how many of how many, and how to get the rest. Every cut says so.
std::string page_footer(const Page& page, std::size_t shown, std::string_view noun, const Style& style) {
  std::string footer = "showing " + std::to_string(shown);
  if (page.total >= 0) footer += " of " + std::to_string(page.total);
  if (!noun.empty()) footer += " " + std::string(noun);
  if (page.offset > 0) footer += " (from " + std::to_string(page.offset + 1) + ")";
  if (page.has_more()) footer += " — next: --offset " + std::to_string(page.next_offset());
  return style.dim(footer) + "\n";
}

std::string show_card(const View& view) {
  const json::Value& task = view.data();
  if (!task.is_object() || !task.contains("id")) return render_value(task, view.options);
  const Style& style = view.style();
  std::string out = style.bold(str(task, "id")) + "  " + style.bold(str(task, "title")) + "\n";
  std::vector<std::pair<std::string, std::string>> facts;
  std::vector<std::string> sgrs;
  auto fact = [&](std::string label, std::string_view key, std::string sgr = "") {
    const json::Value& value = task[key];
    if (value.is_null() || (value.is_array() && value.empty())) return;
    facts.emplace_back(std::move(label), time_text(scalar_text(value), view.options));
    sgrs.push_back(std::move(sgr));
  };
  std::string status = str(task, "status");
  fact("status", "status", std::string(status_sgr(status)));
  fact("priority", "priority");
  fact("type", "type");
  fact("parent", "parent");
  fact("position", "position");
  fact("phase", "phase");
  fact("size", "size");
  fact("labels", "labels");
  fact("depends", "depends");
  fact("blocked by", "blockedBy", "31");
  fact("created", "createdAt");
  fact("updated", "updatedAt");
  fact("completed", "completedAt");
  fact("cancelled", "cancelledAt");
  fact("reason", "cancellationReason");
  if (task["archived"] == json::Value(true)) {
    std::string archived = "yes";
    if (task.contains("archivedAt")) archived += ", " + time_text(str(task, "archivedAt"), view.options);
    if (task.contains("archiveReason")) archived += " (" + str(task, "archiveReason") + ")";
    facts.emplace_back("archived", archived);
    sgrs.emplace_back("2");
  }
  fact("version", "version");
  std::size_t width = 0;
  for (const auto& [label, value] : facts) width = std::max(width, display_width(label));
  for (std::size_t i = 0; i < facts.size(); ++i)
    out += "  " + pad_to(facts[i].first, width) + "  " + style.paint(facts[i].second, sgrs[i]) + "\n";
  if (task.contains("description")) out += "\n" + style.bold("Description") + "\n" + indented(str(task, "description"), "  ");
  auto list_section = [&](std::string_view title, std::string_view key) {
    const json::Value& items = task[key];
    if (!items.is_array() || items.empty()) return;
    out += "\n" + style.bold(title) + "\n";
    for (const auto& item : items.as_array()) out += "  - " + scalar_text(item) + "\n";
  };
  list_section("Acceptance", "acceptance");
  list_section("Files", "files");
  if (task["notes"].is_array() && !task["notes"].empty()) {
    out += "\n" + style.bold("Notes") + "\n";
    for (const auto& note : task["notes"].as_array()) {
      std::string text = str(note, "text");
      std::string at = time_text(str(note, "at"), view.options);
      std::string lead = "  " + style.dim(at) + "  ";
      std::string continuation(2 + display_width(at) + 2, ' ');
      std::string body = indented(text, continuation);
      out += lead + body.substr(continuation.size());
    }
  }
  if (task["relates"].is_array() && !task["relates"].empty()) {
    out += "\n" + style.bold("Related") + "\n";
    for (const auto& rel : task["relates"].as_array()) {
      out += "  " + str(rel, "id") + "  " + str(rel, "type");
      if (rel.contains("reason")) out += "  " + str(rel, "reason");
      out += "\n";
    }
  }
  return out;
}

std::string next_table(const View& view) {
  const json::Value& rows = view.data();
  if (!rows.is_array() || rows.empty()) return "";
  bool reasons = false;
  bool scores = false;  // score and reasons come with --explain
  for (const auto& row : rows.as_array()) {
    reasons = reasons || row.contains("reasons");
    scores = scores || row.contains("score");
  }
  std::vector<std::string> headers = {"ID", "PRIORITY"};
  if (scores) headers.emplace_back("SCORE");
  headers.emplace_back("TITLE");
  if (reasons) headers.emplace_back("WHY");
  Table table(std::move(headers));
  for (const auto& row : rows.as_array()) {
    std::vector<Table::Cell> cells = {{str(row, "id"), "1"}, {str(row, "priority"), ""}};
    if (scores) cells.push_back({str(row, "score"), ""});
    cells.push_back({str(row, "title"), ""});
    if (reasons) cells.push_back({scalar_text(row["reasons"]), "2"});
    table.add_row(std::move(cells));
  }
  return table.render(view.style(), view.options.width);
}

/// One change of an audit row: "T002.status pending → done" (the task id when the rows span tasks).
std::string change_text(const json::Value& change, bool with_id) {
  std::string field = str(change, "field");
  std::string out = with_id && change.contains("id") ? str(change, "id") + "." + field : field;
  if (field == "created") return out;
  // A note reads as its text; an empty value (no notes yet, no date) as nothing.
  auto item = [](const json::Value& v) {
    if (v.is_object() && v["text"].is_string()) return "\"" + v["text"].as_string() + "\"";
    return v.is_object() ? v.dump() : scalar_text(v);
  };
  auto value = [&item](const json::Value& v) {
    if (!v.is_array()) return item(v);
    std::vector<std::string> items;
    for (const auto& each : v.as_array()) items.push_back(item(each));
    return join(items, ", ");
  };
  auto given = [&](std::string_view key) {
    const json::Value& v = change[key];
    return change.contains(key) && !v.is_null() && !(v.is_string() && v.as_string().empty()) &&
           !(v.is_array() && v.empty());
  };
  const bool before = given("before"), after = given("after");
  const json::Value& was = change["before"];
  const json::Value& now = change["after"];
  if (before && after && was.is_array() && now.is_array() && now.size() > was.size() &&
      std::equal(was.as_array().begin(), was.as_array().end(), now.as_array().begin())) {
    // An append (a note, a label): only what was added.
    json::Value added = json::Value::array();
    for (std::size_t i = was.size(); i < now.size(); ++i) added.push_back(now.as_array()[i]);
    return out + " + " + value(added);
  }
  if (before && after) return out + " " + value(was) + " → " + value(now);
  if (after) return out + " → " + value(now);
  if (before) return out + " " + value(was) + " → (none)";
  return out;
}

/// Audit rows (tasks.history, system.log): when, who, what, and each change with its before and
/// after values when the rows carry them (history; log with detail full), else the fields changed.
std::string audit_table(const View& view, std::string_view empty_text, bool spans_tasks) {
  const json::Value& rows = view.data();
  if (!rows.is_array() || rows.empty()) return std::string(empty_text) + "\n";
  bool who = false, reasons = false, ids = false;
  for (const auto& row : rows.as_array()) {
    who = who || row.contains("agent") || row.contains("session");
    reasons = reasons || row.contains("reason");
    ids = ids || (spans_tasks && row.contains("id"));
  }
  std::vector<std::string> headers = {"SEQ", "AT"};
  if (who) headers.emplace_back("WHO");
  headers.insert(headers.end(), {"OPERATION", "CHANGED"});
  if (reasons) headers.emplace_back("WHY");
  if (ids) headers.emplace_back("ID");
  Table table(std::move(headers));
  for (const auto& row : rows.as_array()) {
    std::vector<std::string> changes;
    if (row["changes"].is_array())
      for (const auto& change : row["changes"].as_array()) changes.push_back(change_text(change, spans_tasks));
    else if (row["changed"].is_array())
      for (const auto& field : row["changed"].as_array()) changes.push_back(scalar_text(field));
    std::string operation = str(row, "operation");
    if (row.contains("outcome")) operation += " (" + str(row, "outcome") + ")";
    std::vector<Table::Cell> cells = {{str(row, "seq"), ""}, {time_text(str(row, "at"), view.options), "2"}};
    if (who) {
      std::string by = str(row, "agent");
      if (row.contains("session")) by += (by.empty() ? "" : " ") + str(row, "session");
      cells.push_back({by, ""});
    }
    cells.push_back({operation, ""});
    cells.push_back({join(changes, "; "), ""});
    if (reasons) cells.push_back({str(row, "reason"), ""});
    if (ids) cells.push_back({str(row, "id"), "1"});
    table.add_row(std::move(cells));
  }
  return table.render(view.style(), view.options.width);
}

void tree_lines(std::string& out, const json::Value& node, const std::string& prefix, bool root, bool last,
                const Style& style) {
  std::string status = str(node, "status");
  std::string branch = root ? "" : (last ? "└─ " : "├─ ");
  std::string priority = str(node, "priority");
  out += prefix + branch + style.bold(str(node, "id")) + " " + str(node, "title") + " " +
         style.paint("[" + status + "]", status_sgr(status));
  if (!priority.empty() && priority != "medium") out += " " + style.paint(priority, cell_sgr("priority", priority));
  if (node["waitingOn"].is_array()) out += " " + style.yellow("waits on " + ids_text(node["waitingOn"]));
  if (str(node, "type") == "epic") out += style.dim(" epic");
  out += "\n";
  const json::Value& children = node["children"];
  if (!children.is_array()) return;
  std::string child_prefix = root ? prefix : prefix + (last ? "   " : "│  ");
  for (std::size_t i = 0; i < children.size(); ++i)
    tree_lines(out, children.as_array()[i], child_prefix, false, i + 1 == children.size(), style);
}

std::string tree_view(const View& view) {
  const json::Value& forest = view.data();
  if (!forest.is_array() || forest.empty()) return "No tasks\n";
  std::string out;
  for (const auto& root : forest.as_array()) tree_lines(out, root, "", true, true, view.style());
  return out;
}

std::string deps_view(const View& view) {
  const json::Value& data = view.data();
  std::string id = str(data, "id");
  std::string out;
  auto section = [&](std::string_view key, std::string heading) {
    if (!data.contains(key)) return;
    out += view.style().bold(heading) + "\n";
    const json::Value& nodes = data[key];
    if (!nodes.is_array() || nodes.empty()) {
      out += "  (none)\n";
      return;
    }
    Table table({"ID", "STATUS", "DISTANCE", "TITLE"});
    for (const auto& node : nodes.as_array()) {
      std::string status = str(node, "status");
      table.add_row({{str(node, "id"), "1"}, {status, std::string(status_sgr(status))}, {str(node, "distance"), ""},
                     {str(node, "title"), ""}});
    }
    out += table.render(view.style(), view.options.width, "  ");
  };
  section("upstream", "Upstream: what " + id + " waits on");
  if (data.contains("upstream") && data.contains("downstream")) out += "\n";
  section("downstream", "Downstream: what waits on " + id);
  return out;
}

std::string changed_fields(const View& view, std::string_view verb) {
  const json::Value& data = view.data();
  if (!data.is_object()) return render_value(data, view.options);
  if (data.contains("createdAt")) return std::string(verb) + " " + str(data, "id") + "\n" + show_card(view);
  std::string out = std::string(verb) + " " + str(data, "id");
  if (data.contains("version")) out += " (version " + str(data, "version") + ")";
  out += "\n";
  // The reply leaves out the note added: the person sees it too, after the reply's values.
  json::Value rest = json::Value::object();
  for (const auto& [key, value] : data.as_object())
    if (key != "id" && key != "version") rest.set(key, value.is_null() ? json::Value("(cleared)") : value);
  if (view.params.is_object()) {
    const auto fields = task_field_names();
    for (const auto& [key, value] : view.params.as_object())
      if (key != "id" && !rest.contains(key) && std::find(fields.begin(), fields.end(), key) != fields.end())
        rest.set(key, value);
  }
  if (!rest.empty()) render_into(out, rest, view.options, "  ");
  return out;
}

std::string complete_view(const View& view) {
  const json::Value& data = view.data();
  std::string out = "Completed " + str(data, "id") + "\n";
  if (data["unblocked"].is_array() && !data["unblocked"].empty())
    out += "Unblocked: " + ids_text(data["unblocked"]) + "\n";
  return out;
}

std::string delete_view(const View& view) {
  const json::Value& data = view.data();
  std::string out = data["deleted"] == json::Value(true) ? "Deleted " + str(data, "id") + "\n"
                                                         : "Cancelled and archived " + str(data, "id") + "\n";
  if (data["affected"].is_array() && !data["affected"].empty())
    out += "Also affected: " + ids_text(data["affected"]) + "\n";
  return out;
}

std::string import_view(const View& view) {
  const json::Value& data = view.data();
  bool dry = data["dryRun"] == json::Value(true);
  std::string count = str(data, "imported");
  std::string format = data["format"].is_string() ? " from " + str(data, "format") : "";
  // The original CLEO's store: which of its generations, where, and what came along.
  if (data["format"] == json::Value("original")) {
    format = " from the original CLEO's " +
             std::string(data["generation"] == json::Value("sqlite") ? "database " : "files in ") + str(data, "store") +
             ", ids kept" + (data.contains("lastId") ? " (up to " + str(data, "lastId") + ")" : "");
    std::vector<std::string> also;
    if (data.contains("archived")) also.push_back(str(data, "archived") + " archived");
    if (data.contains("sessions")) also.push_back(str(data, "sessions") + " session(s)");
    if (const json::Value& memory = data["memory"]["added"]; memory.is_int())
      also.push_back(std::to_string(memory.as_int()) + (memory.as_int() == 1 ? " memory entry" : " memory entries"));
    if (!also.empty()) format += "; " + join(also, ", ");
  }
  std::string out = dry ? "Dry run: would import " + count + " task(s)" + format + "; nothing was written\n"
                        : "Imported " + count + " task(s)" + format + "\n";
  // Another tracker's file: where each of its fields went, and what has no place here.
  if (data["mapped"].is_object() && !data["mapped"].empty()) {
    Table table({"FIELD", "BECAME"});
    for (const auto& [field, to] : data["mapped"].as_object()) table.add_row({{field, ""}, {scalar_text(to), ""}});
    out += "Mapped:\n" + table.render(view.style(), view.options.width, "  ");
  }
  if (data["unmapped"].is_object() && !data["unmapped"].empty()) {
    Table table({"FIELD", "RECORDS"});
    for (const auto& [field, records] : data["unmapped"].as_object())
      table.add_row({{field, ""}, {scalar_text(records), ""}});
    out += "Not imported (no place for them here):\n" + table.render(view.style(), view.options.width, "  ");
  }
  if (data["skipped"].is_array() && !data["skipped"].empty()) {
    out += "Skipped " + std::to_string(data["skipped"].size()) + " invalid record(s):\n";
    for (const auto& item : data["skipped"].as_array())
      out += "  " + (item.contains("of") ? str(item, "of") : std::string("tasks")) + "[" + str(item, "index") + "]" +
             (item.contains("id") ? " (" + str(item, "id") + ")" : "") + ": " + str(item, "message") + "\n";
  }
  if (data["config"].is_object() && !data["config"].empty()) {
    Table table({"KEY", "VALUE"});
    for (const auto& [key, value] : data["config"].as_object()) table.add_row({{key, ""}, {scalar_text(value), ""}});
    out += std::string(dry ? "Config it would set:\n" : "Config set:\n") + table.render(view.style(), view.options.width, "  ");
  }
  const json::Value& map = data["idMap"];
  if (map.is_object()) {
    Table table({"FROM", "TO"});
    for (const auto& [from, to] : map.as_object()) table.add_row({{from, ""}, {scalar_text(to), "1"}});
    if (!table.empty()) out += table.render(view.style(), view.options.width, "  ");
  }
  return out;
}

std::string undo_view(const View& view) {
  const json::Value& data = view.data();
  std::string seqs;
  for (const auto& seq : data["undid"].as_array()) seqs += (seqs.empty() ? "" : ", ") + seq.dump();
  bool dry = view.params["dryRun"] == json::Value(true);
  std::string out = (dry ? "Dry run: would undo seq " : "Undid seq ") + seqs + " (" + str(data, "operation") + ")" +
                    (dry ? "; nothing was changed" : "") + "\n";
  auto value = [](const json::Value& v) {
    return v.is_null() || (v.is_array() && v.empty()) ? std::string("(none)") : scalar_text(v);
  };
  Table table({"ID", "FIELD", "CHANGE"});
  for (const auto& item : data["changes"].as_array()) {
    std::string id = str(item, "id");
    if (item["removed"] == json::Value(true)) table.add_row({{id, "1"}, {"", ""}, {"removed", ""}});
    else if (item["restored"] == json::Value(true)) table.add_row({{id, "1"}, {"", ""}, {"restored", ""}});
    else table.add_row({{id, "1"}, {str(item, "field"), ""}, {value(item["from"]) + " → " + value(item["to"]), ""}});
  }
  if (!table.empty()) out += table.render(view.style(), view.options.width, "  ");
  return out;
}

/// plan.diff for people: per plan, its counts, the graph before and after side by side, what moved
/// since it was staged, and (detail full) the tasks it adds and the fields it changes.
std::string plan_diff_view(const View& view) {
  const json::Value& data = view.data();
  if (!data.is_array()) return render_value(data, view.options);
  std::string out;
  for (const auto& plan : data.as_array()) {
    if (!out.empty()) out += "\n";
    out += view.style().bold(str(plan, "id") + " " + str(plan, "label")) + " (" +
           (plan.contains("epicId") ? "epic " + str(plan, "epicId") + ", " : std::string()) + str(plan, "status") + ", " +
           str(plan, "ops") + " ops)";
    if (plan.contains("outcome")) {
      const json::Value& outcome = plan["outcome"];
      out += outcome.contains("ids") ? ": made " + ids_text(outcome["ids"]) + "\n"
             : outcome.contains("reason") ? ": " + str(outcome, "reason") + "\n"
                                           : "\n";
      continue;
    }
    if (plan.contains("error")) {
      out += "\n  does not apply: " + str(plan["error"], "message") + " (" + str(plan["error"], "code") + ")\n";
      continue;
    }
    out += ": +" + str(plan, "adds") + " added, ~" + str(plan, "changes") + " changed, -" + str(plan, "removes") +
           " removed\n";
    const json::Value& before = plan["before"];
    const json::Value& after = plan["after"];
    Table table({"", "NOW", "AFTER"});
    auto row = [&](std::string_view label, std::string_view key) {
      auto text = [&](const json::Value& side) {
        const json::Value& value = side[key];
        if (value.is_array()) {
          std::vector<std::string> ids;
          for (const auto& id : value.as_array()) ids.push_back(id.is_string() ? id.as_string() : id.dump());
          return join(ids, " > ");
        }
        return str(side, key);
      };
      std::string now = text(before), then = text(after);
      table.add_row({{std::string(label), ""}, {now, ""}, {then, now == then ? "" : "1"}});
    };
    row("tasks", "tasks");
    row("open", "open");
    row("waves", "waves");
    row("critical path", "critical");
    row("parallelism", "parallelism");
    row("next", "next");
    out += table.render(view.style(), view.options.width, "  ");
    if (const json::Value& moved = plan["moved"]; moved.is_array() && !moved.empty()) {
      std::vector<std::string> what;
      for (const auto& item : moved.as_array())
        what.push_back(str(item, "id") + (item["was"].is_null() ? " added" : item["now"].is_null() ? " gone" : " changed"));
      out += "  moved since it was staged: " + join(what, ", ") + " (ct plan rebase " + str(plan, "id") + ")\n";
    }
    if (const json::Value& added = plan["added"]; added.is_array() && !added.empty()) {
      out += "  adds:\n";
      for (const auto& task : added.as_array()) {
        out += "    " + str(task, "id") + " " + str(task, "title");
        if (task.contains("parent")) out += " (under " + str(task, "parent") + ")";
        if (task.contains("depends")) out += " after " + ids_text(task["depends"]);
        out += "\n";
      }
    }
    if (const json::Value& changed = plan["changed"]; changed.is_array() && !changed.empty()) {
      out += "  changes:\n";
      for (const auto& change : changed.as_array())
        out += "    " + str(change, "id") + " " + str(change, "field") + ": " + str(change, "from") + " -> " +
               str(change, "to") + "\n";
    }
    if (const json::Value& removed = plan["removed"]; removed.is_array() && !removed.empty())
      out += "  removes: " + ids_text(removed) + "\n";
  }
  return out;
}

std::string blockers_view(const View& view) {
  const json::Value& data = view.data();
  std::string id = str(data, "id");
  if (data["blocked"] != json::Value(true)) return id + " is not blocked\n";
  std::string out = id + " is blocked by:\n";
  Table table({"KIND", "ID", "STATUS", "DETAIL"});
  for (const auto& item : data["blockers"].as_array()) {
    std::string status = str(item, "status");
    std::string detail = item.contains("title") ? str(item, "title") : str(item, "detail");
    table.add_row({{str(item, "kind"), ""}, {str(item, "id"), "1"}, {status, std::string(status_sgr(status))},
                   {detail, ""}});
  }
  return out + table.render(view.style(), view.options.width, "  ");
}

/// system.dash: one block per section, a label column and one line per item.
std::string dash_view(const View& view) {
  const json::Value& data = view.data();
  const Style& style = view.style();
  std::string out;
  auto section = [&](std::string_view label, const std::vector<std::string>& lines) {
    if (lines.empty()) return;
    for (std::size_t i = 0; i < lines.size(); ++i)
      out += (i == 0 ? style.bold(pad_to(label, 9)) : std::string(9, ' ')) + " " + lines[i] + "\n";
  };
  std::vector<std::string> parts;
  const json::Value& counts = data["counts"];
  if (counts.is_object()) {
    for (const auto& [status, count] : counts.as_object()) {
      if (status == "total") continue;
      parts.push_back(style.paint(scalar_text(count) + " " + status, status_sgr(status)));
    }
  }
  std::string tasks = parts.empty() ? "none" : join(parts, " · ");
  if (!parts.empty()) tasks += style.dim("  (" + str(counts, "total") + " in all)");
  section("Tasks", {tasks});
  std::vector<std::string> lines;
  if (data["sessions"].is_array()) {
    for (const auto& session : data["sessions"].as_array()) {
      std::string line = session.contains("name") ? style.bold(str(session, "name")) + " " + style.dim(str(session, "id"))
                                                  : style.bold(str(session, "id"));
      line += " " + str(session, "scope");
      if (session.contains("focus")) line += " → " + str(session, "focus");
      lines.push_back(std::move(line));
    }
    if (data.contains("moreSessions")) lines.push_back(style.dim("… and " + str(data, "moreSessions") + " more"));
  }
  section("Sessions", lines);
  lines.clear();
  if (data["focus"].is_array()) {
    for (const auto& task : data["focus"].as_array()) {
      std::string line = style.paint(str(task, "id"), "36") + " " + str(task, "title");
      if (task.contains("session")) line += style.dim(" [" + str(task, "session") + "]");
      lines.push_back(std::move(line));
    }
  }
  section("Focus", lines);
  lines.clear();
  if (data["next"].is_array()) {
    for (const auto& task : data["next"].as_array()) {
      std::string priority = str(task, "priority");
      lines.push_back(style.bold(str(task, "id")) + " " +
                      style.paint(priority, priority == "critical" ? "31" : priority == "high" ? "33" : "") + " " +
                      str(task, "title"));
    }
  }
  section("Next", lines);
  lines.clear();
  if (data["recent"].is_array())
    for (const auto& line : data["recent"].as_array()) lines.push_back(style.dim(scalar_text(line)));
  section("Recent", lines);
  return out;
}

/// "prefix a (created), b (inserted)\n" for a [{file, action}] list; "" when empty.
std::string files_written(const json::Value& files, std::string_view prefix) {
  if (!files.is_array() || files.empty()) return "";
  std::string out(prefix);
  bool first = true;
  for (const auto& file : files.as_array()) {
    out += (first ? "" : ", ") + str(file, "file") + " (" + str(file, "action") + ")";
    first = false;
  }
  return out + "\n";
}

/// system.help prints its text as is (a JSON Schema pretty-printed), plus where people find the
/// CLI's own help.
std::string help_text(const View& view) {
  const json::Value& data = view.data();
  if (data["unchanged"] == json::Value(true)) return "Unchanged (hash " + str(data, "hash") + ")\n";
  if (data.contains("schema")) return data["schema"].dump_pretty() + "\n";
  std::string out = str(data, "content");
  if (!out.empty() && out.back() != '\n') out += '\n';
  return out + view.style().dim("(≈" + str(data, "tokens") + " tokens. Commands and flags: ct --help, ct <command> --help)") + "\n";
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
