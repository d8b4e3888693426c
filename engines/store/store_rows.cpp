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

std::vector<sql::Value> task_values(sql::Value key, const Task& task, bool with_id) {
  using sql::Value;
  std::vector<Value> values;
  values.reserve(std::size(kTaskFields) + 2);
  values.push_back(std::move(key));
  values.emplace_back(task.title);
  values.emplace_back(task.description);
  values.emplace_back(to_string(task.status));
  values.emplace_back(to_string(task.priority));
  values.emplace_back(to_string(task.type));
  if (task.parent.empty()) values.emplace_back(); else values.emplace_back(task.parent);
  values.emplace_back(task.position);
  values.emplace_back(encode_strings(task.depends));
  values.emplace_back(encode_strings(task.labels));
  values.emplace_back(encode_strings(task.acceptance));
  values.emplace_back(encode_strings(task.files));
  values.emplace_back(encode_notes(task.notes));
  values.emplace_back(encode_relations(task.relates));
  values.emplace_back(task.phase);
  values.emplace_back(to_string(task.size));
  values.emplace_back(task.blocked_by);
  values.emplace_back(task.created_at);
  values.emplace_back(task.updated_at);
  values.emplace_back(task.completed_at);
  values.emplace_back(task.cancelled_at);
  values.emplace_back(task.cancellation_reason);
  values.emplace_back(std::int64_t{task.archived ? 1 : 0});
  values.emplace_back(task.archived_at);
  values.emplace_back(task.archive_reason);
  values.emplace_back(task.version);
  if (with_id) values.emplace_back(task.id);
  return values;
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
