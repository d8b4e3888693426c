// The original CLEO's tasks and sessions as tasks.import records (domains/tasks/original_reader.h):
// each field where it goes here, the values changed on the way in (said once, with how many), and
// what has no place (counted). Both generations of the store are brought to the JSON files' shape
// first, so one reading serves them.
#include <algorithm>
#include <cctype>
#include <set>
#include <tuple>

#include "core/text.h"
#include "domains/tasks/original_reader.h"
#include "engines/store/task.h"

namespace ct::tasks::original {

json::Value Reader::task(const json::Value& task, bool in_archive, const Naming& name) {
  if (!task.is_object()) return task;  // refused by the record check, with its place
  json::Value out = json::Value::object();
  static const std::set<std::string_view> kSilent = {"positionVersion"};  // derived bookkeeping
  static const std::set<std::string_view> kRead = {
      "id", "title", "description", "status", "priority", "type", "parentId", "position", "size", "phase", "files",
      "acceptance", "depends", "labels", "notes", "blockedBy", "relates", "createdAt", "updatedAt", "completedAt",
      "cancelledAt", "cancellationReason", "origin", "_archive"};
  for (const auto& [key, value] : task.as_object())
    if (!kRead.contains(key) && !kSilent.contains(key) && meaningful(value)) lost(name(key));
  task_fields(task, out, name);
  task_status(task, in_archive, out, name);
  task_type(task, out, name);
  notes(out, task["notes"], task["createdAt"]);
  if (!task["notes"].is_null()) mapped(name("notes"), "notes (with their times)");
  acceptance(out, task["acceptance"]);
  if (!task["acceptance"].is_null()) mapped(name("acceptance"), "acceptance");
  task_links(task, out, name);
  return out;
}

/// The fields that come as they are (the description unless it repeats the title), the parent,
/// the dependencies and the labels (the origin one of them).
void Reader::task_fields(const json::Value& task, json::Value& out, const Naming& name) {
  auto copy = [&](std::string_view from, std::string_view to) {
    const json::Value& value = task[from];
    if (value.is_null()) return;
    out.set(to, value);
    mapped(name(from), to);
  };
  const json::Value& id = task["id"];
  out.set("id", id.is_string() ? normalize_task_id(trim(id.as_string())).value_or(id.as_string()) : id);
  mapped(name("id"), "id (kept)");
  copy("title", "title");
  // The original did not always keep a description apart from its title; here it must say more.
  if (const json::Value& description = task["description"]; !description.is_null()) {
    if (description.is_string() && task["title"].is_string() &&
        to_lower_ascii(trim(description.as_string())) == to_lower_ascii(trim(task["title"].as_string()))) {
      note_change("description that repeated its title: left out");
    } else if (!description.is_string() || !trim(description.as_string()).empty()) {
      out.set("description", description);
    }
    mapped(name("description"), "description");
  }
  copy("priority", "priority");
  copy("size", "size");
  copy("phase", "phase");
  copy("files", "files");
  copy("blockedBy", "blockedBy");
  copy("createdAt", "createdAt");
  copy("updatedAt", "updatedAt");
  copy("completedAt", "completedAt");
  copy("cancelledAt", "cancelledAt");
  copy("cancellationReason", "cancellationReason");
  if (const json::Value& position = task["position"]; position.is_number()) {
    out.set("position", position);  // orders siblings; read_original sorts by it, then drops it
    mapped(name("position"), "position (order among siblings)");
  }

  const json::Value& parent = task["parentId"];
  if (parent.is_string() && !trim(parent.as_string()).empty()) {
    out.set("parent", normalize_task_id(trim(parent.as_string())).value_or(parent.as_string()));
  } else if (!parent.is_null() && !parent.is_string()) {
    out.set("parent", parent);  // refused: not an id
  }
  if (!parent.is_null()) mapped(name("parentId"), "parent");

  if (const json::Value& depends = task["depends"]; !depends.is_null()) {
    mapped(name("depends"), "depends");
    out.set("depends", ids(depends));
  }

  labels(out, task["labels"]);
  if (!task["labels"].is_null()) mapped(name("labels"), "labels");
  if (const json::Value& origin = task["origin"]; origin.is_string() && !origin.as_string().empty()) {
    add_label(out, "origin:" + origin.as_string());
    mapped(name("origin"), "labels (origin:<value>)");
  }
}

void Reader::task_status(const json::Value& task, bool in_archive, json::Value& out, const Naming& name) {
  // Status: the archive keeps done and cancelled tasks; the database marks them 'archived'.
  const std::string status = task["status"].string_or_empty();
  const json::Value& archive = task["_archive"];
  bool archived = in_archive || status == "archived";
  if (status == "archived") {
    bool cancelled = task["cancelledAt"].is_string() || task["cancellationReason"].is_string() ||
                     archive["reason"] == json::Value("cancelled");
    out.set("status", cancelled ? "cancelled" : "done");
    note_change(std::string("status archived → ") + (cancelled ? "cancelled" : "done") + ", archived");
  } else if (status == "active") {
    out.set("status", "pending");
    note_change("status active → pending (claims are made with tasks.start here)");
  } else if (status == "proposed") {
    out.set("status", "pending");
    add_label(out, "proposed");
    note_change("status proposed → pending with the label proposed");
  } else if (!task["status"].is_null()) {
    out.set("status", task["status"]);  // pending, blocked, done, cancelled; anything else is refused
  }
  if (!task["status"].is_null()) mapped(name("status"), "status");
  if (out["status"] == json::Value("blocked") && !meaningful(task["blockedBy"])) {
    out.set("blockedBy", "blocked in the original CLEO");
    note_change("blocked task without a reason: blockedBy 'blocked in the original CLEO'");
  }
  if (out["status"] == json::Value("cancelled") && !meaningful(task["cancellationReason"])) {
    std::string reason = archive["cancellationDetails"]["cancellationReason"].string_or_empty();
    out.set("cancellationReason", reason.empty() ? std::string("cancelled in the original CLEO") : reason);
  }
  if (!out.contains("cancelledAt") && archive["cancellationDetails"]["cancelledAt"].is_string())
    out.set("cancelledAt", archive["cancellationDetails"]["cancelledAt"]);
  out.set("archived", archived);
  if (archive.is_object()) {
    static const std::set<std::string_view> kDerived = {"cycleTimeDays", "relationshipState", "restoreInfo",
                                                        "cancellationDetails"};
    for (const auto& [key, value] : archive.as_object()) {
      if (key == "archivedAt") {
        out.set("archivedAt", value);
        mapped(name("_archive.archivedAt"), "archivedAt");
      } else if (key == "reason") {
        out.set("archiveReason", value);
        mapped(name("_archive.reason"), "archiveReason");
      } else if (!kDerived.contains(key) && meaningful(value)) {
        lost(name("_archive." + key));
      }
    }
  }
}

void Reader::task_type(const json::Value& task, json::Value& out, const Naming& name) {
  // Type: only epic, task and subtask are known here; an epic stands at the top.
  if (const json::Value& type = task["type"]; !type.is_null()) {
    mapped(name("type"), "type");
    std::string kind = type.string_or_empty();
    if (kind == "saga") {
      kind = "epic";
      note_change("type saga → epic");
    }
    if (kind == "epic" && out.contains("parent")) {
      add_label(out, "epic");
      note_change("epic under a parent → task with the label epic");
    } else if (!kind.empty() || !type.is_string()) {
      out.set("type", kind.empty() ? type : json::Value(kind));
    }
  }
}

void Reader::task_links(const json::Value& task, json::Value& out, const Naming& name) {
  if (const json::Value& relates = task["relates"]; !relates.is_null()) {
    mapped(name("relates"), "relates");
    if (!relates.is_array()) {
      out.set("relates", relates);
    } else {
      json::Value links = json::Value::array();
      for (const auto& link : relates.as_array()) {
        json::Value item = json::Value::object();
        const json::Value& target = link["taskId"];
        item.set("id", target.is_string() ? normalize_task_id(trim(target.as_string())).value_or(target.as_string()) : target);
        item.set("type", link["type"]);
        if (!link["reason"].is_null()) item.set("reason", link["reason"]);
        links.push_back(std::move(item));
      }
      out.set("relates", std::move(links));
    }
  }
}

json::Value Reader::session(const json::Value& session, bool history, const Naming& name) {
  if (!session.is_object()) return session;
  json::Value out = json::Value::object();
  static const std::set<std::string_view> kRead = {"id",        "name",   "status",     "agentId",    "scope",
                                                   "focus",     "startedAt", "lastActivity", "endedAt", "archivedAt",
                                                   "endNote",   "notes",  "handoff",    "debrief"};
  static const std::set<std::string_view> kDerived = {"computedTaskIds", "computedAt", "includeDescendants"};
  for (const auto& [key, value] : session.as_object())
    if (!kRead.contains(key) && meaningful(value)) lost(name(key));
  const std::string was = session["id"].string_or_empty();
  out.set("id", was.empty() ? json::Value() : json::Value(session_id_for(was)));
  out.set("was", session["id"]);
  mapped(name("id"), "id (ses_ and its letters and digits)");
  const json::Value& given_name = session["name"];
  out.set("name", meaningful(given_name) ? given_name : json::Value(was));
  if (!given_name.is_null()) mapped(name("name"), "name");

  // Status: a session nobody works in here is suspended; what ended stays ended.
  std::string status = history ? "ended" : session["status"].string_or_empty();
  if (status == "active") {
    status = "suspended";
    note_change("session active → suspended (nobody works in it here; session.resume picks it up)");
  } else if (status == "archived" || status == "orphaned") {
    note_change("session " + status + " → ended");
    status = "ended";
  }
  out.set("status", status.empty() && !history ? session["status"] : json::Value(status));
  if (!history) mapped(name("status"), "status");

  if (const json::Value& agent = session["agentId"]; meaningful(agent)) {
    out.set("agent", agent);
    mapped(name("agentId"), "agent");
  }
  const json::Value& scope = session["scope"];
  out.set("scope", scope_text(scope, name));
  mapped(name("scope"), "scope");
  for (const auto& [key, value] : scope.is_object() ? scope.as_object() : json::Value::Object{})
    if (key != "type" && key != "rootTaskId" && key != "epicId" && key != "explicitTaskIds" &&
        !kDerived.contains(key) && meaningful(value))
      lost(name("scope." + key));
  session_note(session, out, name);
  session_times(session, out, name);
  return out;
}

/// The session's note (its focus's, its end note, its notes, its handoff's) and next action.
void Reader::session_note(const json::Value& session, json::Value& out, const Naming& name) {
  const json::Value& focus = session["focus"];
  std::string note;
  if (meaningful(focus["sessionNote"])) {
    note = focus["sessionNote"].string_or_empty();
    mapped(name("focus.sessionNote"), "note");
  }
  if (meaningful(session["endNote"])) {
    note = session["endNote"].string_or_empty();
    mapped(name("endNote"), "note");
  }
  if (const json::Value& notes = session["notes"]; notes.is_array() && !notes.empty()) {
    for (const auto& line : notes.as_array())
      if (meaningful(line)) note += (note.empty() ? "" : "\n") + (line.is_string() ? line.as_string() : line.dump());
    mapped(name("notes"), "note");
  }
  // The handoff a session left for the next (tasks.db's handoff_json, or the one inside its
  // debrief_json): its note and next action come along; what it computed from the tasks
  // (lastTask, nextSuggested, openBlockers …) is counted. The debrief's own additions too.
  const json::Value& debrief = session["debrief"];
  const bool own_handoff = session["handoff"].is_object();
  const json::Value& handoff = own_handoff ? session["handoff"] : debrief["handoff"];
  const std::string handoff_name = own_handoff ? name("handoff") : name("debrief") + ".handoff";
  if (meaningful(handoff["note"])) {
    note += (note.empty() ? "" : "\n") + handoff["note"].string_or_empty();
    mapped(handoff_name + ".note", "note");
  }
  for (const auto& [key, value] : handoff.is_object() ? handoff.as_object() : json::Value::Object{})
    if (key != "note" && key != "nextAction" && meaningful(value)) lost(handoff_name + "." + key);
  static const std::set<std::string_view> kDebriefSame = {"handoff", "sessionId", "agentIdentifier", "startedAt",
                                                          "endedAt", "durationMinutes"};  // the session's own
  for (const auto& [key, value] : debrief.is_object() ? debrief.as_object() : json::Value::Object{})
    if (!kDebriefSame.contains(key) && meaningful(value)) lost(name("debrief") + "." + key);
  if (!debrief.is_null() && !debrief.is_object()) lost(name("debrief"));
  if (!session["handoff"].is_null() && !own_handoff) lost(name("handoff"));

  if (!note.empty()) out.set("note", note);
  // The next action the session handed off, else the one its focus held.
  if (meaningful(handoff["nextAction"])) {
    out.set("nextAction", handoff["nextAction"]);
    mapped(handoff_name + ".nextAction", "nextAction");
  } else if (meaningful(focus["nextAction"])) {
    out.set("nextAction", focus["nextAction"]);
    mapped(name("focus.nextAction"), "nextAction");
  }
  for (const auto& [key, value] : focus.is_object() ? focus.as_object() : json::Value::Object{})
    if (key != "sessionNote" && key != "nextAction" && meaningful(value)) lost(name("focus." + key));
}

void Reader::session_times(const json::Value& session, json::Value& out, const Naming& name) {
  out.set("createdAt", session["startedAt"]);
  mapped(name("startedAt"), "createdAt");
  json::Value updated = session["lastActivity"];
  if (updated.is_null()) updated = session["endedAt"];
  if (updated.is_null()) updated = session["startedAt"];
  out.set("updatedAt", updated);
  if (!session["lastActivity"].is_null()) mapped(name("lastActivity"), "updatedAt");
  if (!session["endedAt"].is_null()) {
    out.set("endedAt", session["endedAt"]);
    mapped(name("endedAt"), "endedAt");
  }
  if (!session["archivedAt"].is_null() || session["status"].string_or_empty() == "archived") {
    json::Value at = session["archivedAt"];
    out.set("archivedAt", at.is_null() ? updated : at);
    mapped(name("archivedAt"), "archivedAt");
  }
}

void Reader::summarise() {
  for (const auto& [what, count] : changes_) file_.warnings.push_back(std::to_string(count) + " × " + what);
  changes_.clear();
}

json::Value Reader::ids(const json::Value& list) {
  if (!list.is_array()) return list;  // refused by the record check
  json::Value out = json::Value::array();
  for (const auto& item : list.as_array())
    out.push_back(item.is_string() ? json::Value(normalize_task_id(trim(item.as_string())).value_or(item.as_string())) : item);
  return out;
}

void Reader::add_label(json::Value& out, std::string label) {
  json::Value labels = out["labels"].is_array() ? out["labels"] : json::Value::array();
  for (const auto& existing : labels.as_array())
    if (existing == json::Value(label)) return;
  labels.push_back(std::move(label));
  out.set("labels", std::move(labels));
}

void Reader::labels(json::Value& out, const json::Value& given) {
  if (given.is_null()) return;
  if (!given.is_array()) {
    out.set("labels", given);  // refused by the record check
    return;
  }
  for (const auto& label : given.as_array()) {
    if (!label.is_string()) {
      out.set("labels", given);
      return;
    }
    add_label(out, label.as_string());
  }
}

void Reader::notes(json::Value& out, const json::Value& given, const json::Value& created) {
  if (given.is_null()) return;
  if (!given.is_array()) {
    out.set("notes", given);  // refused by the record check
    return;
  }
  std::optional<TimeMs> last = created.is_string() ? parse_iso8601(created.as_string()) : std::nullopt;
  json::Value notes = out["notes"].is_array() ? out["notes"] : json::Value::array();
  for (const auto& note : given.as_array()) {
    std::string text;
    std::optional<TimeMs> at;
    if (note.is_string()) {
      std::tie(at, text) = split_note(note.as_string());
    } else if (note.is_object()) {
      text = (note["text"].is_null() ? note["note"] : note["text"]).string_or_empty();
      const json::Value& when = note["at"].is_null() ? note["timestamp"] : note["at"];
      if (when.is_string()) at = parse_iso8601(when.as_string());
    } else {
      out.set("notes", given);  // refused by the record check
      return;
    }
    if (trim(text).empty()) continue;
    if (!at) at = last;
    if (!at) note_change("note without a time: given the task's createdAt");
    json::Value item = json::Value::object();
    if (at) item.set("at", format_iso8601(*at));
    item.set("text", std::string(trim(text)));
    notes.push_back(std::move(item));
    last = at;
  }
  if (!notes.empty()) out.set("notes", std::move(notes));
}

std::pair<std::optional<TimeMs>, std::string> Reader::split_note(const std::string& note) {
  std::string_view text = trim(note);
  if (text.starts_with("[")) {
    auto close = text.find(']');
    if (close != std::string_view::npos && close < 40)
      if (auto at = parse_iso8601(trim(text.substr(1, close - 1))))
        return {at, std::string(trim(text.substr(close + 1)))};
  }
  if (text.size() > 19 && std::isdigit(static_cast<unsigned char>(text[0]))) {
    auto colon = text.find(": ", 19);
    if (colon != std::string_view::npos && colon < 40) {
      std::string_view stamp = trim(text.substr(0, colon));
      if (stamp.ends_with(" UTC")) stamp = trim(stamp.substr(0, stamp.size() - 4));
      if (auto at = parse_iso8601(stamp)) return {at, std::string(trim(text.substr(colon + 2)))};
    }
  }
  return {std::nullopt, std::string(text)};
}

void Reader::acceptance(json::Value& out, const json::Value& given) {
  if (given.is_null()) return;
  if (!given.is_array()) {
    out.set("acceptance", given);  // refused by the record check
    return;
  }
  json::Value items = json::Value::array();
  json::Value notes = out["notes"].is_array() ? out["notes"] : json::Value::array();
  for (const auto& item : given.as_array()) {
    if (!item.is_string()) {
      out.set("acceptance", given);
      return;
    }
    std::string text(trim(item.as_string()));
    if (text.empty()) continue;
    if (utf8_length(text) > limits_.acceptance_item || items.size() >= limits_.acceptance_items) {
      json::Value note = json::Value::object();
      note.set("text", clip("Acceptance: " + text, limits_.note));
      notes.push_back(std::move(note));
      note_change("acceptance criterion past the 50 of 200 characters a task holds: kept as a note");
      continue;
    }
    items.push_back(std::move(text));
  }
  if (!items.empty()) out.set("acceptance", std::move(items));
  if (!notes.empty()) out.set("notes", std::move(notes));
}

std::string Reader::scope_text(const json::Value& scope, const Naming& name) {
  if (scope.is_string()) return scope.as_string();
  if (!scope.is_object() || scope.empty() || scope["type"] == json::Value("global")) return "global";
  std::string type = scope["type"].string_or_empty();
  std::string root = (scope["rootTaskId"].is_null() ? scope["epicId"] : scope["rootTaskId"]).string_or_empty();
  if (type == "custom") {
    std::vector<std::string> listed;
    for (const auto& id : scope["explicitTaskIds"].is_array() ? scope["explicitTaskIds"].as_array() : json::Value::Array{})
      listed.push_back(id.string_or_empty());
    return "custom:" + join(listed, ",");
  }
  if (type == "epicPhase") {
    lost(name("scope.phaseFilter (epicPhase)"));
    type = "epic";
  }
  return type + ":" + root;  // parse_scope refuses a kind it does not know
}

}  // namespace ct::tasks::original
