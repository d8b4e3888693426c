// The text views of tasks (render_views.h): a task list and a task card, the next tasks, the tree,
// a task's dependencies and blockers, and the one-line confirmations of a task's changes.
#include <algorithm>
#include <cctype>

#include "cli/render_views.h"
#include "core/text.h"
#include "disclosure/cli_syntax.h"
#include "engines/store/task_json.h"

namespace ct::cli::views {
namespace {

/// What keeps a row's task from starting: the dependencies it waits on, then the reason it was
/// blocked by hand ("T002, T004; vendor reply").
std::string waits_on(const json::Value& row) {
  std::string out = ids_text(row["waitingOn"]);
  std::string why = str(row, "blockedBy");
  if (!why.empty()) out += (out.empty() ? "" : "; ") + why;
  return out;
}

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

}  // namespace

/// The colour of a cell of a task row, by its field.
std::string cell_sgr(std::string_view field, const std::string& text) {
  if (field == "id") return "1";
  if (field == "status") return std::string(status_sgr(text));
  if (field == "priority") return text == "critical" ? "31" : text == "high" ? "33" : "";
  return "";
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
  // Who works on it and where (issue 53): the claim's agent and session, its worktree and branch.
  if (const json::Value& claim = task["claim"]; claim.is_object()) {
    std::string held = str(claim, "session").empty() ? std::string("the command line") : str(claim, "session");
    if (claim.contains("agent")) held = str(claim, "agent") + " (" + held + ")";
    std::string where = str(claim, "worktree");
    if (claim.contains("branch")) where += (where.empty() ? "" : " @ ") + str(claim, "branch");
    if (!where.empty()) held += " in " + where;
    if (claim["lapsed"] == json::Value(true)) held += ", lapsed";
    else if (claim.contains("leaseEnds")) held += ", lease ends " + time_text(str(claim, "leaseEnds"), view.options);
    facts.emplace_back("claimed by", std::move(held));
    sgrs.emplace_back();
  }
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
  // Messages sent to it (session.send): how many, the newest few.
  if (const json::Value& thread = task["thread"]; thread.is_object()) {
    out += "\n" + style.bold("Thread") + "  " + style.dim(std::to_string(thread["count"].is_int() ? thread["count"].as_int() : 0) + " messages") + "\n";
    if (thread["last"].is_array())
      for (const auto& message : thread["last"].as_array())
        out += "  " + style.dim(time_text(str(message, "at"), view.options)) + "  " + str(message, "from") + ": " +
               str(message, "body") + "\n";
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

}  // namespace ct::cli::views
