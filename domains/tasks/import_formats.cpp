#include "domains/tasks/import_formats.h"

#include <algorithm>
#include <set>

#include "core/text.h"

namespace ct::tasks {
namespace {

std::string text_of(const json::Value& value) {
  if (value.is_string()) return value.as_string();
  if (value.is_null()) return {};
  return value.dump();
}

/// One foreign record being turned into a tasks.import record, and the file's report.
class Converter {
 public:
  Converter(ForeignFile& file, const OperationSpec& add, TimeMs now) : file_(file), limits_(add), now_(now) {}

  void mapped(std::string_view field, std::string_view to) {
    if (!file_.mapped.contains(field)) file_.mapped.set(field, std::string(to));
  }
  void lost(std::string_view field) {
    const json::Value& count = file_.unmapped[field];
    file_.unmapped.set(field, (count.is_int() ? count.as_int() : 0) + 1);
  }

  /// The first line as the title, cut to the limit; what does not fit opens the description.
  void title(json::Value& out, std::string_view text, std::string& overflow) {
    std::string whole(trim(text));
    auto lines = split_lines(whole);
    std::string first = lines.empty() ? std::string() : std::string(trim(lines.front()));
    if (first.size() != whole.size() || utf8_length(first) > limits_.title) {
      overflow = whole;
      ++long_titles_;
    }
    out.set("title", utf8_length(first) > limits_.title ? clip(first, limits_.title) : first);
  }

  /// The description, cut to the limit; the rest becomes a note.
  void description(json::Value& out, std::string text) {
    text = std::string(trim(text));
    if (text.empty()) return;
    if (utf8_length(text) > limits_.description) {
      note(out, "Description (continued): " + text);
      text = clip(text, limits_.description);
    }
    // tasks.add refuses a description that only repeats the title.
    if (out["title"].is_string() && to_lower_ascii(text) == to_lower_ascii(out["title"].as_string())) return;
    out.set("description", std::move(text));
  }

  void note(json::Value& out, std::string text, std::optional<TimeMs> at = std::nullopt) {
    text = std::string(trim(text));
    if (text.empty()) return;
    json::Value notes = out.contains("notes") ? out["notes"] : json::Value::array();
    json::Value item = json::Value::object();
    item.set("text", clip(text, limits_.note));
    if (at && *at <= now_) item.set("at", format_iso8601(*at));
    notes.push_back(std::move(item));
    out.set("notes", std::move(notes));
  }

  /// Lowercase, only the characters labels allow (others become '-'), at most 50 of them.
  void label(json::Value& out, std::string_view text) {
    std::string clean;
    for (char c : to_lower_ascii(trim(text))) {
      bool allowed = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == ':' ||
                     c == '/' || c == '-';
      clean += allowed ? c : '-';
    }
    while (!clean.empty() && !((clean[0] >= 'a' && clean[0] <= 'z') || (clean[0] >= '0' && clean[0] <= '9')))
      clean.erase(0, 1);
    if (clean.size() > limits_.label) clean.resize(limits_.label);
    if (clean.empty()) return;
    json::Value labels = out.contains("labels") ? out["labels"] : json::Value::array();
    for (const auto& existing : labels.as_array())
      if (existing.as_string() == clean) return;
    if (labels.size() >= limits_.labels) {
      ++dropped_labels_;
      return;
    }
    labels.push_back(clean);
    out.set("labels", std::move(labels));
  }

  /// Every label of a foreign list (tags, labels); anything but a list adds none.
  void labels(json::Value& out, const json::Value& list) {
    if (!list.is_array()) return;
    for (const auto& item : list.as_array()) label(out, text_of(item));
  }

  /// An epic under another issue: epics have no parent here, so it becomes a task that says what
  /// it was.
  void demote_epic(json::Value& out) {
    if (out["type"] != json::Value("epic") || !out.contains("parent")) return;
    out.erase("type");
    label(out, "epic");
  }

  void acceptance(json::Value& out, std::string_view text) {
    json::Value items = out.contains("acceptance") ? out["acceptance"] : json::Value::array();
    for (auto line : split_lines(text)) {
      std::string item(trim(line));
      // Markdown list marks and check boxes are presentation, not criteria.
      for (std::string_view mark : {"- [ ] ", "- [x] ", "* [ ] ", "- ", "* ", "+ "})
        if (item.starts_with(mark)) {
          item = std::string(trim(item.substr(mark.size())));
          break;
        }
      if (item.empty()) continue;
      if (utf8_length(item) > limits_.acceptance_item || items.size() >= limits_.acceptance_items) {
        note(out, "Acceptance: " + item);
        continue;
      }
      items.push_back(std::move(item));
    }
    if (!items.empty()) out.set("acceptance", std::move(items));
  }

  void relate(json::Value& out, std::string_view id, std::string_view type) {
    json::Value relates = out.contains("relates") ? out["relates"] : json::Value::array();
    json::Value item = json::Value::object();
    item.set("id", std::string(id));
    item.set("type", std::string(type));
    relates.push_back(std::move(item));
    out.set("relates", std::move(relates));
  }

  void depend(json::Value& out, std::string_view id) {
    json::Value depends = out.contains("depends") ? out["depends"] : json::Value::array();
    depends.push_back(std::string(id));
    out.set("depends", std::move(depends));
  }

  /// The record's title overflow, once the description is known: it opens the description.
  void finish(json::Value& out, const std::string& overflow) {
    if (overflow.empty()) return;
    std::string rest = out["description"].string_or_empty();
    out.erase("description");
    description(out, rest.empty() ? overflow : overflow + "\n\n" + rest);
  }

  void summarise() {
    if (long_titles_ > 0)
      file_.warnings.push_back(std::to_string(long_titles_) +
                               " title(s) had several lines or more than 200 characters: the first line is the "
                               "title, the whole text opens the description");
    if (dropped_labels_ > 0)
      file_.warnings.push_back(std::to_string(dropped_labels_) + " label(s) over the 50 a task may carry were left out");
  }

  TimeMs now() const { return now_; }

 private:
  ForeignFile& file_;
  TaskLimits limits_;
  TimeMs now_;
  std::int64_t long_titles_ = 0;
  std::int64_t dropped_labels_ = 0;
};

std::optional<TimeMs> parse_time(const json::Value& value) {
  if (!value.is_string()) return std::nullopt;
  std::string text = value.as_string();
  // Taskwarrior writes ISO 8601 in its basic form: 20261101T120000Z.
  if (text.size() == 16 && text[8] == 'T' && text[15] == 'Z')
    text = text.substr(0, 4) + "-" + text.substr(4, 2) + "-" + text.substr(6, 2) + "T" + text.substr(9, 2) + ":" +
           text.substr(11, 2) + ":" + text.substr(13, 2) + "Z";
  return parse_iso8601(text);
}


// --- Taskwarrior ------------------------------------------------------------------------------

json::Value from_taskwarrior(Converter& c, const json::Value& item) {
  json::Value out = json::Value::object();
  std::string overflow;
  for (const auto& [key, value] : item.as_object()) {
    if (key == "uuid") {
      out.set("id", text_of(value));
      c.mapped(key, "id");
    } else if (key == "description") {
      c.title(out, text_of(value), overflow);
      c.mapped(key, "title");
    } else if (key == "status") {
      std::string status = text_of(value);
      if (status == "completed") {
        out.set("status", "done");
      } else if (status == "deleted") {
        out.set("status", "cancelled");
        out.set("cancellationReason", "deleted in Taskwarrior");
      } else {
        out.set("status", "pending");  // pending, waiting, recurring
      }
      c.mapped(key, "status");
    } else if (key == "priority") {
      std::string priority = text_of(value);
      if (priority == "H") out.set("priority", "high");
      else if (priority == "M") out.set("priority", "medium");
      else if (priority == "L") out.set("priority", "low");
      else c.lost("priority");
      c.mapped(key, "priority");
    } else if (key == "project") {
      c.label(out, "project:" + text_of(value));
      c.mapped(key, "labels");
    } else if (key == "tags") {
      c.labels(out, value);
      c.mapped(key, "labels");
    } else if (key == "depends") {
      // An array of uuids (Taskwarrior 2.6+) or one comma-separated string (before).
      std::vector<std::string> uuids;
      if (value.is_array()) {
        for (const auto& uuid : value.as_array()) uuids.push_back(text_of(uuid));
      } else {
        uuids = split_list(text_of(value));
      }
      for (const auto& uuid : uuids) c.depend(out, uuid);
      c.mapped(key, "depends");
    } else if (key == "annotations") {
      if (value.is_array())
        for (const auto& annotation : value.as_array())
          c.note(out, text_of(annotation["description"]), parse_time(annotation["entry"]));
      c.mapped(key, "notes");
    } else if (key == "id" || key == "urgency" || key == "modified" || key == "imask" || key == "mask") {
      // Derived by Taskwarrior from the rest (working-set number, score, bookkeeping).
    } else {
      c.lost(key);  // entry, end, start, due, wait, scheduled, until, recur, parent, UDAs
    }
  }
  c.finish(out, overflow);
  return out;
}

// --- beads ------------------------------------------------------------------------------------

std::string beads_priority(const json::Value& value) {
  std::int64_t level = value.is_int() ? value.as_int() : -1;
  if (value.is_string()) {
    std::string text = value.as_string();
    if (text.size() == 2 && (text[0] == 'P' || text[0] == 'p')) text = text.substr(1);
    if (text.size() == 1 && text[0] >= '0' && text[0] <= '4') level = text[0] - '0';
  }
  switch (level) {
    case 0: return "critical";
    case 1: return "high";
    case 2: return "medium";
    case 3:
    case 4: return "low";
    default: return "";
  }
}

/// A beads status in our words: closed is done, tombstone cancelled, blocked blocked (with a
/// reason), anything else pending (deferred also labelled).
void beads_status(Converter& c, json::Value& out, const std::string& status) {
  if (status == "closed") {
    out.set("status", "done");
  } else if (status == "tombstone") {
    out.set("status", "cancelled");
  } else if (status == "blocked") {
    out.set("status", "blocked");
    out.set("blockedBy", "blocked in beads");
  } else {
    out.set("status", "pending");  // open, in_progress (claims are made with tasks.start), deferred…
    if (status == "deferred") c.label(out, "deferred");
  }
}

/// The issue's own dependencies (those of issue `id`): blocks → depends, parent-child → parent,
/// related and discovered-from → links; other kinds are counted as lost.
void beads_dependencies(Converter& c, json::Value& out, const json::Value& dependencies, const std::string& id) {
  for (const auto& dep : dependencies.as_array()) {
    std::string type = text_of(dep["type"]);
    std::string target = text_of(dep["depends_on_id"]);
    if (dep["issue_id"].is_string() && dep["issue_id"].as_string() != id) continue;
    if (target.empty()) continue;
    if (type == "blocks" || type.empty()) {
      c.depend(out, target);
      c.mapped("dependencies.blocks", "depends");
    } else if (type == "parent-child") {
      out.set("parent", target);
      c.mapped("dependencies.parent-child", "parent");
    } else if (type == "related") {
      c.relate(out, target, "relates-to");
      c.mapped("dependencies.related", "relates");
    } else if (type == "discovered-from") {
      c.relate(out, target, "spawned-from");
      c.mapped("dependencies.discovered-from", "relates");
    } else {
      c.lost("dependencies." + type);
    }
  }
}

json::Value from_beads(Converter& c, const json::Value& item) {
  json::Value out = json::Value::object();
  std::string overflow;
  std::string id = text_of(item["id"]);
  std::string status = text_of(item["status"]);
  // Text first, so that notes keep the order: design, notes, comments, the reason it closed.
  for (std::string_view key : {"id", "title", "description", "design", "acceptance_criteria", "notes", "status",
                               "priority", "issue_type", "labels", "dependencies", "comments", "close_reason"}) {
    const json::Value& value = item[key];
    if (value.is_null()) continue;
    if (key == "id") {
      out.set("id", id);
      c.mapped(key, "id");
    } else if (key == "title") {
      c.title(out, text_of(value), overflow);
      c.mapped(key, "title");
    } else if (key == "description") {
      c.description(out, text_of(value));
      c.mapped(key, "description");
    } else if (key == "design") {
      c.note(out, "Design: " + text_of(value));
      c.mapped(key, "notes");
    } else if (key == "acceptance_criteria") {
      c.acceptance(out, text_of(value));
      c.mapped(key, "acceptance");
    } else if (key == "notes") {
      c.note(out, text_of(value));
      c.mapped(key, "notes");
    } else if (key == "status") {
      beads_status(c, out, status);
      c.mapped(key, "status");
    } else if (key == "priority") {
      std::string priority = beads_priority(value);
      if (!priority.empty()) out.set("priority", priority);
      else c.lost("priority");
      if (value == json::Value(4) || value == json::Value("P4")) c.label(out, "backlog");
      c.mapped(key, "priority");
    } else if (key == "issue_type") {
      std::string type = text_of(value);
      if (type == "epic") out.set("type", "epic");
      else if (type != "task") c.label(out, type);
      c.mapped(key, "type, labels");
    } else if (key == "labels") {
      c.labels(out, value);
      c.mapped(key, "labels");
    } else if (key == "dependencies") {
      if (value.is_array()) beads_dependencies(c, out, value, id);
    } else if (key == "comments") {
      if (value.is_array())
        for (const auto& comment : value.as_array()) {
          std::string author = text_of(comment["author"]);
          c.note(out, (author.empty() ? "" : author + ": ") + text_of(comment["text"]),
                 parse_time(comment["created_at"]));
        }
      c.mapped(key, "notes");
    } else if (key == "close_reason") {
      if (status == "tombstone") {
        out.set("cancellationReason", clip(text_of(value), 200));
      } else {
        c.note(out, "Closed: " + text_of(value));
      }
      c.mapped(key, "notes");
    }
  }
  for (const auto& [key, value] : item.as_object()) {
    static const std::set<std::string_view> kRead = {"id", "title", "description", "design", "acceptance_criteria",
                                                     "notes", "status", "priority", "issue_type", "labels",
                                                     "dependencies", "comments", "close_reason"};
    if (!kRead.contains(key) && !value.is_null()) c.lost(key);  // assignee, created_at, closed_at, due…
  }
  c.demote_epic(out);
  c.finish(out, overflow);
  return out;
}

/// beads' hierarchical ids (bd-a3f8.1 under bd-a3f8): the parent when no parent-child link says.
void parents_from_ids(Converter& c, json::Value& records) {
  std::set<std::string> ids;
  for (const auto& record : records.as_array())
    if (record["id"].is_string()) ids.insert(record["id"].as_string());
  for (auto& record : records.as_array()) {
    if (record.contains("parent") || !record["id"].is_string()) continue;
    const std::string& id = record["id"].as_string();
    auto dot = id.rfind('.');
    if (dot == std::string::npos || !ids.contains(id.substr(0, dot))) continue;
    record.set("parent", id.substr(0, dot));
    c.demote_epic(record);
    c.mapped("id (x.1 under x)", "parent");
  }
}

}  // namespace

std::string detect_format(const json::Value& records) {
  if (!records.is_array()) return "cleo";
  for (const auto& item : records.as_array()) {
    if (!item.is_object()) continue;
    if (item.contains("uuid") && item.contains("description") && !item.contains("title")) return "taskwarrior";
    if (item.contains("issue_type") || item.contains("dependencies") || item.contains("acceptance_criteria") ||
        item["status"] == json::Value("open") || item["status"] == json::Value("in_progress") ||
        item["status"] == json::Value("closed"))
      return "beads";
  }
  return "cleo";
}

Result<ForeignFile> read_foreign(const json::Value& input, std::string_view format, const OperationSpec& add_spec,
                                 TimeMs now) {
  const json::Value* list = &input;
  json::Value single = json::Value::array();
  if (input.is_object()) {
    list = input.find("tasks");
    // One record alone (a JSON Lines file of one line).
    if (!list && (input.contains("title") || input.contains("description"))) {
      single.push_back(input);
      list = &single;
    }
  }
  if (!list || !list->is_array())
    return fail(Error(ErrorCode::InvalidParams,
                      "tasks: expected the output of tasks.export, an array of tasks, Taskwarrior's `task export` "
                      "or beads' issues.jsonl lines")
                    .with_detail("field", "tasks"));
  ForeignFile file;
  file.format = format == "auto" ? detect_format(*list) : std::string(format);
  if (file.format == "cleo") {
    file.records = *list;
    return file;
  }
  Converter converter(file, add_spec, now);
  for (const auto& item : list->as_array()) {
    if (!item.is_object()) {
      file.records.push_back(item);  // refused by the record check, with its index
      continue;
    }
    file.records.push_back(file.format == "taskwarrior" ? from_taskwarrior(converter, item) : from_beads(converter, item));
  }
  if (file.format == "beads") parents_from_ids(converter, file.records);
  converter.summarise();
  return file;
}

json::Value foreign_json(ForeignFile file) {
  json::Value out = json::Value::object();
  out.set("format", std::move(file.format));
  out.set("records", std::move(file.records));
  out.set("mapped", std::move(file.mapped));
  out.set("unmapped", std::move(file.unmapped));
  out.set("warnings", json::Value::array_of(file.warnings));
  out.set("generation", std::move(file.generation));
  out.set("source", std::move(file.source));
  out.set("sessions", std::move(file.sessions));
  out.set("config", std::move(file.config));
  out.set("memory", std::move(file.memory));
  return out;
}

ForeignFile foreign_from_json(json::Value value) {
  // Each member is taken out of `value` (moved), which is dropped after.
  auto take = [&](std::string_view key, bool (json::Value::*is)() const, json::Value otherwise) {
    json::Value* found = value.find(key);
    return found && (found->*is)() ? std::move(*found) : std::move(otherwise);
  };
  ForeignFile file;
  file.format = value["format"].string_or_empty();
  file.records = take("records", &json::Value::is_array, json::Value::array());
  file.mapped = take("mapped", &json::Value::is_object, json::Value::object());
  file.unmapped = take("unmapped", &json::Value::is_object, json::Value::object());
  if (value["warnings"].is_array())
    for (const auto& warning : value["warnings"].as_array()) file.warnings.push_back(warning.string_or_empty());
  file.generation = value["generation"].string_or_empty();
  file.source = value["source"].string_or_empty();
  file.sessions = take("sessions", &json::Value::is_array, json::Value::array());
  file.config = take("config", &json::Value::is_object, json::Value::object());
  file.memory = take("memory", &json::Value::is_array, json::Value::array());
  return file;
}

}  // namespace ct::tasks
