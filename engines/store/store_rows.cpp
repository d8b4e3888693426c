#include "engines/store/store_rows.h"

#include "core/json_parse.h"

namespace ct {

namespace {

/// The columns of a task row from title on, in the order of task_values().
constexpr std::string_view kTaskFields[] = {
    "title",    "description",  "status",     "priority",     "type",       "parent",
    "position", "depends",      "labels",     "acceptance",   "files",      "notes",
    "relates",  "phase",        "size",       "blocked_by",   "created_at", "updated_at",
    "completed_at", "cancelled_at", "cancellation_reason", "archived", "archived_at", "archive_reason",
    "version"};

}  // namespace

const std::string& task_select() {
  static const std::string sql = "SELECT " + std::string(kTaskColumns) + " FROM tasks t";
  return sql;
}

std::string research_columns(const sql::Dialect& dialect) {
  return "r.id, r.file, r.title, r.date, r.status, r.agent_type, r.topics, r.key_findings, r.actionable, "
         "r.needs_followup, r.confidence, r.file_checksum, r.archived, r.archived_at, r.created_at, r.updated_at, " +
         std::string(dialect.linked_tasks);
}

const std::string& task_insert_sql() {
  static const std::string sql = [] {
    std::string columns = "num";
    std::string values = "?1";
    int n = 1;
    for (auto field : kTaskFields) {
      columns += ", " + std::string(field);
      values += ", ?" + std::to_string(++n);
    }
    return "INSERT INTO tasks(" + columns + ", id) VALUES(" + values + ", ?" + std::to_string(n + 1) + ")";
  }();
  return sql;
}

const std::string& task_set_sql() {
  static const std::string sql = [] {
    std::string set;
    int n = 1;
    for (auto field : kTaskFields) set += (set.empty() ? "" : ", ") + std::string(field) + " = ?" + std::to_string(++n);
    return set;
  }();
  return sql;
}

TaskValues task_values(sql::Value key, const Task& task, bool with_id) {
  using sql::Value;
  static_assert(std::size(kTaskFields) + 2 == std::tuple_size_v<decltype(TaskValues::values)>);
  TaskValues out;
  auto add = [&](Value value) { out.values[out.size++] = std::move(value); };
  add(std::move(key));
  add(task.title);
  add(task.description);
  add(to_string(task.status));
  add(to_string(task.priority));
  add(to_string(task.type));
  add(task.parent.empty() ? Value() : Value(task.parent));
  add(task.position);
  add(encode_strings(task.depends));
  add(encode_strings(task.labels));
  add(encode_strings(task.acceptance));
  add(encode_strings(task.files));
  add(encode_notes(task.notes));
  add(encode_relations(task.relates));
  add(task.phase);
  add(to_string(task.size));
  add(task.blocked_by);
  add(task.created_at);
  add(task.updated_at);
  add(task.completed_at);
  add(task.cancelled_at);
  add(task.cancellation_reason);
  add(std::int64_t{task.archived ? 1 : 0});
  add(task.archived_at);
  add(task.archive_reason);
  add(task.version);
  if (with_id) add(task.id);
  return out;
}

std::string encode_strings(const std::vector<std::string>& items) {
  if (items.empty()) return "[]";
  std::string out;
  json::Writer writer(out);
  writer.begin_array();
  for (const auto& item : items) writer.value(item);
  writer.end_array();
  return out;
}

std::string encode_notes(const std::vector<Note>& notes) {
  if (notes.empty()) return "[]";
  std::string out;
  json::Writer writer(out);
  writer.begin_array();
  for (const auto& note : notes) {
    writer.begin_object().key("at").value(static_cast<std::int64_t>(note.at));
    writer.key("text").value(note.text).end_object();
  }
  writer.end_array();
  return out;
}

std::string encode_relations(const std::vector<Relation>& relations) {
  if (relations.empty()) return "[]";
  std::string out;
  json::Writer writer(out);
  writer.begin_array();
  for (const auto& relation : relations) {
    writer.begin_object().key("id").value(relation.task_id);
    writer.key("type").value(relation.type);
    writer.key("reason").value(relation.reason).end_object();
  }
  writer.end_array();
  return out;
}

std::string join_labels(const std::vector<std::string>& labels) {
  std::string out;
  for (const auto& label : labels) {
    if (!out.empty()) out += ' ';
    out += label;
  }
  return out;
}

std::string join_notes(const std::vector<Note>& notes) {
  std::string out;
  for (const auto& note : notes) {
    if (!out.empty()) out += '\n';
    out += note.text;
  }
  return out;
}

Error corrupt_column(std::string_view task_id, std::string_view column) {
  return Error(ErrorCode::FileError, "task " + std::string(task_id) + " holds unreadable " +
                                         std::string(column) + " data in the database")
      .with_fix(corrupt_fix());
}

// Parses a JSON array column. "[]" (the common case) skips the parser.
Result<json::Value> parse_array(std::string_view text, std::string_view task_id, std::string_view column) {
  if (text.empty() || text == "[]") return json::Value::array();
  auto value = json::parse(text);
  if (!value || !value->is_array()) return fail(corrupt_column(task_id, column));
  return std::move(*value);
}

Result<std::vector<std::string>> decode_strings(std::string_view text, std::string_view task_id,
                                                std::string_view column) {
  std::vector<std::string> out;
  if (text.empty() || text == "[]") return out;
  CT_TRY_ASSIGN(json::Value array, parse_array(text, task_id, column));
  out.reserve(array.size());
  for (auto& item : array.as_array()) {
    if (!item.is_string()) return fail(corrupt_column(task_id, column));
    out.push_back(std::move(item.as_string()));
  }
  return out;
}

Result<std::vector<Note>> decode_notes(std::string_view text, std::string_view task_id) {
  std::vector<Note> out;
  if (text.empty() || text == "[]") return out;
  CT_TRY_ASSIGN(json::Value array, parse_array(text, task_id, "notes"));
  for (const auto& item : array.as_array()) {
    const json::Value& at = item["at"];
    const json::Value& body = item["text"];
    if (!at.is_int() || !body.is_string()) return fail(corrupt_column(task_id, "notes"));
    out.push_back(Note{at.as_int(), body.as_string()});
  }
  return out;
}

Result<std::vector<Relation>> decode_relations(std::string_view text, std::string_view task_id) {
  std::vector<Relation> out;
  if (text.empty() || text == "[]") return out;
  CT_TRY_ASSIGN(json::Value array, parse_array(text, task_id, "relates"));
  for (const auto& item : array.as_array()) {
    const json::Value& id = item["id"];
    const json::Value& type = item["type"];
    const json::Value& reason = item["reason"];
    if (!id.is_string() || !type.is_string()) return fail(corrupt_column(task_id, "relates"));
    out.push_back(Relation{id.as_string(), type.as_string(), reason.is_string() ? reason.as_string() : ""});
  }
  return out;
}

Error corrupt_research(std::string_view id, std::string_view column) {
  return Error(ErrorCode::FileError, "research entry " + std::string(id) + " holds unreadable " +
                                         std::string(column) + " data in the database")
      .with_fix(corrupt_fix());
}

json::Value stored_json(std::string_view text) {
  auto parsed = json::parse(text);
  if (parsed) return std::move(*parsed);
  return json::Value(text);
}

Result<AuditAnchor> parse_audit_anchor(std::string_view text) {
  auto value = json::parse(text);
  if (!value || !(*value)["seq"].is_int() || !(*value)["hash"].is_string())
    return fail(Error(ErrorCode::FileError, "the audit anchor in the meta table is unreadable")
                    .with_fix(corrupt_fix()));
  AuditAnchor anchor;
  anchor.seq = (*value)["seq"].as_int();
  anchor.hash = (*value)["hash"].as_string();
  if ((*value)["archive"].is_string()) anchor.archive = (*value)["archive"].as_string();
  return anchor;
}

}  // namespace ct
