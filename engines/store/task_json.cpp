#include "engines/store/task_json.h"

namespace ct {
namespace {

json::Value strings(const std::vector<std::string>& items) { return json::Value::array_of(items); }

json::Value notes_json(const std::vector<Note>& notes) {
  json::Value out = json::Value::array();
  for (const auto& note : notes) {
    json::Value item = json::Value::object();
    item.set("at", format_iso8601(note.at));
    item.set("text", note.text);
    out.push_back(std::move(item));
  }
  return out;
}

json::Value relates_json(const std::vector<Relation>& relates) {
  json::Value out = json::Value::array();
  for (const auto& rel : relates) {
    json::Value item = json::Value::object();
    item.set("id", rel.task_id);
    item.set("type", rel.type);
    if (!rel.reason.empty()) item.set("reason", rel.reason);
    out.push_back(std::move(item));
  }
  return out;
}

}  // namespace

std::vector<std::string_view> task_field_names() {
  return {"id",          "title",       "description", "status",      "priority",           "type",
          "parent",      "position",    "depends",     "labels",      "acceptance",         "files",
          "notes",       "relates",     "phase",       "size",        "blockedBy",          "createdAt",
          "updatedAt",   "completedAt", "cancelledAt", "cancellationReason", "archived",    "archivedAt",
          "archiveReason", "version"};
}

json::Value task_field(const Task& t, std::string_view field) {
  auto time = [](const std::optional<TimeMs>& at) -> json::Value {
    return at ? json::Value(format_iso8601(*at)) : json::Value();
  };
  auto text = [](const std::string& s) -> json::Value { return s.empty() ? json::Value() : json::Value(s); };
  if (field == "id") return t.id;
  if (field == "title") return t.title;
  if (field == "description") return text(t.description);
  if (field == "status") return to_string(t.status);
  if (field == "priority") return to_string(t.priority);
  if (field == "type") return to_string(t.type);
  if (field == "parent") return text(t.parent);
  if (field == "position") return t.position;
  if (field == "depends") return strings(t.depends);
  if (field == "labels") return strings(t.labels);
  if (field == "acceptance") return strings(t.acceptance);
  if (field == "files") return strings(t.files);
  if (field == "notes") return notes_json(t.notes);
  if (field == "relates") return relates_json(t.relates);
  if (field == "phase") return text(t.phase);
  if (field == "size") return t.size == TaskSize::Unset ? json::Value() : json::Value(to_string(t.size));
  if (field == "blockedBy") return text(t.blocked_by);
  if (field == "createdAt") return format_iso8601(t.created_at);
  if (field == "updatedAt") return format_iso8601(t.updated_at);
  if (field == "completedAt") return time(t.completed_at);
  if (field == "cancelledAt") return time(t.cancelled_at);
  if (field == "cancellationReason") return text(t.cancellation_reason);
  if (field == "archived") return t.archived;
  if (field == "archivedAt") return time(t.archived_at);
  if (field == "archiveReason") return text(t.archive_reason);
  if (field == "version") return t.version;
  return json::Value();
}

namespace {

/// task_full()'s members, or task_created()'s (`with_times` false: no createdAt, updatedAt and
/// version), gathered in a kept buffer and then copied into a block of their exact number: built
/// member by member, the object grew by doubling into a block over 1 KB, the allocator's large
/// sizes, for every task read or created — and an import's audit row holds one per task, on a
/// heap where each large block costs a search of sorted free lists (docs/performance.md,
/// "Imports: the allocator"). The keys are distinct, so members are appended, not looked up.
json::Value task_object(const Task& t, bool with_times) {
  thread_local json::Value::Object members;
  members.clear();
  auto put = [&](const char* key, json::Value value) { members.emplace_back(key, std::move(value)); };
  put("id", t.id);
  put("title", t.title);
  if (!t.description.empty()) put("description", t.description);
  put("status", to_string(t.status));
  put("priority", to_string(t.priority));
  put("type", to_string(t.type));
  if (!t.parent.empty()) put("parent", t.parent);
  put("position", t.position);
  if (!t.depends.empty()) put("depends", strings(t.depends));
  if (!t.labels.empty()) put("labels", strings(t.labels));
  if (!t.acceptance.empty()) put("acceptance", strings(t.acceptance));
  if (!t.files.empty()) put("files", strings(t.files));
  if (!t.notes.empty()) put("notes", notes_json(t.notes));
  if (!t.relates.empty()) put("relates", relates_json(t.relates));
  if (!t.phase.empty()) put("phase", t.phase);
  if (t.size != TaskSize::Unset) put("size", to_string(t.size));
  if (!t.blocked_by.empty()) put("blockedBy", t.blocked_by);
  if (with_times) {
    put("createdAt", format_iso8601(t.created_at));
    if (t.updated_at != t.created_at) put("updatedAt", format_iso8601(t.updated_at));
  }
  if (t.completed_at) put("completedAt", format_iso8601(*t.completed_at));
  if (t.cancelled_at) put("cancelledAt", format_iso8601(*t.cancelled_at));
  if (!t.cancellation_reason.empty()) put("cancellationReason", t.cancellation_reason);
  if (t.archived) {
    put("archived", true);
    if (t.archived_at) put("archivedAt", format_iso8601(*t.archived_at));
    if (!t.archive_reason.empty()) put("archiveReason", t.archive_reason);
  }
  if (with_times) put("version", t.version);
  json::Value::Object exact(std::make_move_iterator(members.begin()), std::make_move_iterator(members.end()));
  members.clear();
  return json::Value(std::move(exact));
}

}  // namespace

json::Value task_full(const Task& t) { return task_object(t, true); }

json::Value task_created(const Task& t) { return task_object(t, false); }

json::Value task_compact(const Task& t) {
  json::Value out = json::Value::object();
  out.set("id", t.id);
  out.set("title", t.title);
  out.set("status", to_string(t.status));
  out.set("priority", to_string(t.priority));
  if (!t.parent.empty()) out.set("parent", t.parent);
  if (t.archived) out.set("archived", true);
  return out;
}

json::Value task_suggestion(const Task& t) {
  json::Value out = json::Value::object();
  out.set("id", t.id);
  out.set("title", t.title);
  out.set("priority", to_string(t.priority));
  return out;
}

Result<void> set_task_field(Task& t, std::string_view field, const json::Value& value) {
  auto wrong = [&](std::string_view expected) {
    return fail(Error(ErrorCode::Validation, "cannot set " + std::string(field) + " of " + t.id + ": expected " +
                                                 std::string(expected) + ", got " + value.dump())
                    .with_detail("field", std::string(field)));
  };
  auto text = [&](std::string& out) -> Result<void> {
    if (value.is_null()) { out.clear(); return {}; }
    if (!value.is_string()) return wrong("text");
    out = value.as_string();
    return {};
  };
  auto list = [&](std::vector<std::string>& out) -> Result<void> {
    out.clear();
    if (value.is_null()) return {};
    if (!value.is_array()) return wrong("a list of text");
    for (const auto& item : value.as_array()) {
      if (!item.is_string()) return wrong("a list of text");
      out.push_back(item.as_string());
    }
    return {};
  };
  auto time = [&](std::optional<TimeMs>& out) -> Result<void> {
    if (value.is_null()) { out.reset(); return {}; }
    auto parsed = value.is_string() ? parse_iso8601(value.as_string()) : std::nullopt;
    if (!parsed) return wrong("an ISO-8601 time");
    out = *parsed;
    return {};
  };
  auto choice = [&]<typename E>(E& out, auto parse, std::string_view what) -> Result<void> {
    auto parsed = value.is_string() ? parse(value.as_string()) : std::nullopt;
    if (!parsed) return wrong(what);
    out = *parsed;
    return {};
  };
  if (field == "title") {
    if (!value.is_string() || value.as_string().empty()) return wrong("a title");
    t.title = value.as_string();
    return {};
  }
  if (field == "description") return text(t.description);
  if (field == "status") return choice(t.status, parse_status, "a status");
  if (field == "priority") return choice(t.priority, parse_priority, "a priority");
  if (field == "type") return choice(t.type, parse_type, "a type");
  if (field == "parent") return text(t.parent);
  if (field == "position") {
    if (!value.is_int()) return wrong("a position");
    t.position = value.as_int();
    return {};
  }
  if (field == "depends") return list(t.depends);
  if (field == "labels") return list(t.labels);
  if (field == "acceptance") return list(t.acceptance);
  if (field == "files") return list(t.files);
  if (field == "notes") {
    t.notes.clear();
    if (value.is_null()) return {};
    if (!value.is_array()) return wrong("a list of notes");
    for (const auto& item : value.as_array()) {
      auto at = item["at"].is_string() ? parse_iso8601(item["at"].as_string()) : std::nullopt;
      if (!at || !item["text"].is_string()) return wrong("notes of {at, text}");
      t.notes.push_back({*at, item["text"].as_string()});
    }
    return {};
  }
  if (field == "relates") {
    t.relates.clear();
    if (value.is_null()) return {};
    if (!value.is_array()) return wrong("a list of links");
    for (const auto& item : value.as_array()) {
      if (!item["id"].is_string() || !item["type"].is_string()) return wrong("links of {id, type, reason?}");
      t.relates.push_back({item["id"].as_string(), item["type"].as_string(),
                           item["reason"].string_or_empty()});
    }
    return {};
  }
  if (field == "phase") return text(t.phase);
  if (field == "size") {
    if (value.is_null()) { t.size = TaskSize::Unset; return {}; }
    return choice(t.size, parse_size, "a size");
  }
  if (field == "blockedBy") return text(t.blocked_by);
  if (field == "completedAt") return time(t.completed_at);
  if (field == "cancelledAt") return time(t.cancelled_at);
  if (field == "cancellationReason") return text(t.cancellation_reason);
  if (field == "archived") {
    if (!value.is_null() && !value.is_bool()) return wrong("true or false");
    t.archived = value.is_bool() && value.as_bool();
    return {};
  }
  if (field == "archivedAt") return time(t.archived_at);
  if (field == "archiveReason") return text(t.archive_reason);
  return fail(Error(ErrorCode::Validation, "'" + std::string(field) + "' is not a field a change can set")
                  .with_detail("field", std::string(field)));
}

Result<Task> task_from_full(const json::Value& full) {
  if (!full.is_object() || !full["id"].is_string())
    return fail(ErrorCode::Validation, "the recorded task is not a task record: " + full.dump());
  Task t;
  t.id = full["id"].as_string();
  for (const auto& [key, value] : full.as_object()) {
    if (key == "id") continue;
    if (key == "version") {
      t.version = value.is_int() ? value.as_int() : 1;
    } else if (key == "createdAt" || key == "updatedAt") {
      auto at = value.is_string() ? parse_iso8601(value.as_string()) : std::nullopt;
      if (!at) return fail(ErrorCode::Validation, "the recorded task " + t.id + " has no valid " + key);
      (key == "createdAt" ? t.created_at : t.updated_at) = *at;
    } else {
      CT_TRY(set_task_field(t, key, value));
    }
  }
  if (!full.contains("updatedAt")) t.updated_at = t.created_at;
  return t;
}

json::Value changes_json(const std::vector<FieldChange>& changes) {
  json::Value out = json::Value::array();
  for (const auto& change : changes) {
    json::Value item = json::Value::object();
    if (!change.task_id.empty()) item.set("id", change.task_id);
    item.set("field", change.field);
    if (!change.before.is_null()) item.set("before", change.before);
    if (!change.after.is_null()) item.set("after", change.after);
    out.push_back(std::move(item));
  }
  return out;
}

json::Value audit_row_json(const AuditEntry& row, bool with_task) {
  json::Value item = json::Value::object();
  item.set("seq", row.seq);
  item.set("at", format_iso8601(row.at));
  item.set("operation", row.operation);
  if (with_task && !row.task_id.empty()) item.set("id", row.task_id);
  if (row.outcome != "ok") item.set("outcome", row.outcome);
  if (!row.session.empty()) item.set("session", row.session);
  if (!row.agent.empty()) item.set("agent", row.agent);
  if (!row.principal.empty()) item.set("by", row.principal);  // who really: domains/principal.h
  if (!row.reason.empty()) item.set("reason", row.reason);
  if (!row.intent.is_null()) item.set("intent", row.intent);
  return item;
}

}  // namespace ct
