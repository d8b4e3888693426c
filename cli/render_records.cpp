// The text views of what was recorded and what the project holds (render_views.h): audit rows
// with their changes, an import, an undo, a plan's diff, the dashboard's sections, the files
// written by init and inject, and help's text.
#include <algorithm>

#include "cli/render_views.h"
#include "core/text.h"
#include "engines/store/task_json.h"

namespace ct::cli::views {
namespace {

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

}  // namespace

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
      // A person as who they are (their principal); an agent by the name it goes by.
      std::string by = str(row, "by").starts_with("person:") ? str(row, "by") : str(row, "agent");
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

}  // namespace ct::cli::views
