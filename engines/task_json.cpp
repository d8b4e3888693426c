#include "engines/task_json.h"

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

json::Value task_full(const Task& t) {
  json::Value out = json::Value::object();
  out.set("id", t.id);
  out.set("title", t.title);
  if (!t.description.empty()) out.set("description", t.description);
  out.set("status", to_string(t.status));
  out.set("priority", to_string(t.priority));
  out.set("type", to_string(t.type));
  if (!t.parent.empty()) out.set("parent", t.parent);
  out.set("position", t.position);
  if (!t.depends.empty()) out.set("depends", strings(t.depends));
  if (!t.labels.empty()) out.set("labels", strings(t.labels));
  if (!t.acceptance.empty()) out.set("acceptance", strings(t.acceptance));
  if (!t.files.empty()) out.set("files", strings(t.files));
  if (!t.notes.empty()) out.set("notes", notes_json(t.notes));
  if (!t.relates.empty()) out.set("relates", relates_json(t.relates));
  if (!t.phase.empty()) out.set("phase", t.phase);
  if (t.size != TaskSize::Unset) out.set("size", to_string(t.size));
  if (!t.blocked_by.empty()) out.set("blockedBy", t.blocked_by);
  out.set("createdAt", format_iso8601(t.created_at));
  if (t.updated_at != t.created_at) out.set("updatedAt", format_iso8601(t.updated_at));
  if (t.completed_at) out.set("completedAt", format_iso8601(*t.completed_at));
  if (t.cancelled_at) out.set("cancelledAt", format_iso8601(*t.cancelled_at));
  if (!t.cancellation_reason.empty()) out.set("cancellationReason", t.cancellation_reason);
  if (t.archived) {
    out.set("archived", true);
    if (t.archived_at) out.set("archivedAt", format_iso8601(*t.archived_at));
    if (!t.archive_reason.empty()) out.set("archiveReason", t.archive_reason);
  }
  out.set("version", t.version);
  return out;
}

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

json::Value audit_row_json(const AuditEntry& row, bool with_task) {
  json::Value item = json::Value::object();
  item.set("seq", row.seq);
  item.set("at", format_iso8601(row.at));
  item.set("operation", row.operation);
  if (with_task && !row.task_id.empty()) item.set("id", row.task_id);
  if (row.outcome != "ok") item.set("outcome", row.outcome);
  if (!row.session.empty()) item.set("session", row.session);
  if (!row.agent.empty()) item.set("agent", row.agent);
  if (!row.reason.empty()) item.set("reason", row.reason);
  return item;
}

}  // namespace ct
