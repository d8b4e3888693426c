// The original CLEO's SQLite store (domains/tasks/original_reader.h): tasks.db's tables, or cleo.db's
// tasks_ tables on its main branch, read through a read-only reader bounded in rows and bytes
// (engines/store/sqlite/sqlite_foreign.h, reached through open_store.h). Each task row with what
// the dependency, relation, label and acceptance tables add to it, and each session row, is
// brought to the JSON files' shape and read as they are; the tables that have no place here are
// counted.
#include <algorithm>
#include <map>
#include <set>
#include <system_error>

#include "core/json_parse.h"
#include "core/text.h"
#include "domains/tasks/original_brain.h"
#include "domains/tasks/original_reader.h"
#include "engines/store/open/open_store.h"

namespace ct::tasks::original {
namespace {

namespace fs = std::filesystem;

/// The store's tables the tasks domain reads, by their names with the store's prefix.
struct Tables {
  explicit Tables(const std::string& p)
      : prefix(p), tasks(p + "tasks"), deps(p + "task_dependencies"), relations(p + "task_relations"),
        labels(p + "task_labels"), criteria(p + "task_acceptance_criteria"), sessions(p + "sessions") {}

  bool read(const std::string& name) const {
    return name == tasks || name == deps || name == relations || name == labels || name == criteria || name == sessions;
  }

  std::string prefix, tasks, deps, relations, labels, criteria, sessions;
};

/// What the other tables add to each task, by its id.
struct TaskExtras {
  std::map<std::string, json::Value> depends, relates, labels, criteria;
};

/// The database's relation types in the original's JSON words; the others are kept in the reason.
json::Value relation(const json::Value& row) {
  std::string type = row["relation_type"].string_or_empty();
  json::Value link = json::Value::object();
  link.set("taskId", row["related_to"]);
  std::string reason = row["reason"].string_or_empty();
  if (type == "related" || type.empty()) {
    link.set("type", "relates-to");
  } else if (type == "duplicates" || type == "supersedes") {
    link.set("type", type);
  } else {
    link.set("type", "relates-to");
    reason = type + (reason.empty() ? "" : ": " + reason);
  }
  if (!reason.empty()) link.set("reason", clip(reason, 200));
  return link;
}

/// A JSON column's value (labels_json …): parsed, or the text as it is (then refused with its task).
json::Value json_column(const json::Value& value) {
  if (!value.is_string()) return value;
  auto parsed = json::parse(value.as_string());
  return parsed ? std::move(*parsed) : value;
}

TaskExtras read_extras(const ForeignDatabase& db, const Tables& tables, Reader& reader) {
  TaskExtras extras;
  auto rows = [&](const std::string& name) -> const json::Value::Array& {
    static const json::Value::Array kNone;
    const ForeignTable* table = db.find(name);
    return table ? table->records.as_array() : kNone;
  };
  auto append = [](std::map<std::string, json::Value>& into, const json::Value& id, json::Value item) {
    json::Value& list = into[id.string_or_empty()];
    if (!list.is_array()) list = json::Value::array();
    list.push_back(std::move(item));
  };
  for (const auto& row : rows(tables.deps)) append(extras.depends, row["task_id"], row["depends_on"]);
  if (!rows(tables.deps).empty()) reader.mapped(tables.deps, "depends");
  for (const auto& row : rows(tables.relations)) append(extras.relates, row["task_id"], relation(row));
  if (!rows(tables.relations).empty()) reader.mapped(tables.relations, "relates");
  for (const auto& row : rows(tables.labels)) append(extras.labels, row["task_id"], row["label"]);
  if (!rows(tables.labels).empty()) reader.mapped(tables.labels, "labels");
  std::vector<const json::Value*> ordered;
  for (const auto& row : rows(tables.criteria)) ordered.push_back(&row);
  std::ranges::stable_sort(ordered, {}, [](const json::Value* row) {
    return (*row)["ordinal"].is_number() ? (*row)["ordinal"].as_double() : 0.0;
  });
  for (const json::Value* row : ordered) append(extras.criteria, (*row)["task_id"], (*row)["text"]);
  if (!ordered.empty()) reader.mapped(tables.criteria, "acceptance");
  return extras;
}

/// Each task row in the JSON files' words, with what the other tables add to it, read as a task.
void read_task_rows(const ForeignTable& rows, const TaskExtras& extras, const Tables& tables, Reader& reader,
                    ForeignFile& file) {
  // The table's columns in the JSON files' words, so that one reading serves both generations.
  static const std::map<std::string, std::string, std::less<>> kTaskColumns = {
      {"parent_id", "parentId"},           {"position_version", "positionVersion"}, {"labels_json", "labels"},
      {"notes_json", "notes"},             {"acceptance_json", "acceptance"},       {"files_json", "files"},
      {"blocked_by", "blockedBy"},         {"epic_lifecycle", "epicLifecycle"},     {"no_auto_complete", "noAutoComplete"},
      {"created_at", "createdAt"},         {"updated_at", "updatedAt"},             {"completed_at", "completedAt"},
      {"cancelled_at", "cancelledAt"},     {"cancellation_reason", "cancellationReason"},
      {"verification_json", "verification"}, {"created_by", "createdBy"},          {"modified_by", "modifiedBy"},
      {"session_id", "sessionId"},         {"pipeline_stage", "pipelineStage"},     {"ivtr_state", "ivtrState"}};
  static const std::set<std::string_view> kBookkeeping = {"cycle_time_days", "idempotency_key"};
  Naming names{tables.tasks + ".", {}};
  for (const auto& [column, field] : kTaskColumns) names.columns.emplace(field, tables.tasks + "." + column);
  names.columns.emplace("_archive.archivedAt", tables.tasks + ".archived_at");
  names.columns.emplace("_archive.reason", tables.tasks + ".archive_reason");
  names.columns.emplace("depends", tables.deps);
  names.columns.emplace("relates", tables.relations);
  for (const auto& row : rows.records.as_array()) {
    json::Value task = json::Value::object();
    json::Value archive = json::Value::object();
    for (const auto& [column, value] : row.as_object()) {
      if (value.is_null() || kBookkeeping.contains(column)) continue;
      if (column == "archived_at") {
        archive.set("archivedAt", value);
      } else if (column == "archive_reason") {
        archive.set("reason", value);
      } else if (column == "no_auto_complete") {
        task.set("noAutoComplete", value != json::Value(0));
      } else if (auto field = kTaskColumns.find(column); field != kTaskColumns.end()) {
        task.set(field->second, column.ends_with("_json") ? json_column(value) : value);
      } else {
        task.set(column, value);
      }
    }
    if (!archive.empty()) task.set("_archive", std::move(archive));
    const std::string id = row["id"].string_or_empty();
    if (auto found = extras.depends.find(id); found != extras.depends.end()) task.set("depends", found->second);
    if (auto found = extras.relates.find(id); found != extras.relates.end()) task.set("relates", found->second);
    for (const auto* extra : {&extras.labels, &extras.criteria}) {
      auto found = extra->find(id);
      if (found == extra->end()) continue;
      const char* field = extra == &extras.labels ? "labels" : "acceptance";
      if (!task[field].is_null() && !task[field].is_array()) continue;  // refused with its task
      json::Value merged = task[field].is_array() ? task[field] : json::Value::array();
      for (const auto& item : found->second.as_array())
        if (std::ranges::find(merged.as_array(), item) == merged.as_array().end()) merged.push_back(item);
      task.set(field, std::move(merged));
    }
    file.records.push_back(reader.task(task, false, names));
  }
}

/// Each session row in the JSON files' words, read as a session.
void read_session_rows(const ForeignTable& rows, const std::string& table, Reader& reader, ForeignFile& file) {
  Naming session_names{table + ".", {{"agentId", table + ".agent"},
                                     {"scope", table + ".scope_json"},
                                     {"notes", table + ".notes_json"},
                                     {"handoff", table + ".handoff_json"},
                                     {"debrief", table + ".debrief_json"},
                                     {"startedAt", table + ".started_at"},
                                     {"endedAt", table + ".ended_at"},
                                     {"lastActivity", table + ".last_activity"}}};
  static const std::map<std::string, std::string, std::less<>> kSessionColumns = {
      {"agent", "agentId"},       {"scope_json", "scope"},   {"notes_json", "notes"},
      {"handoff_json", "handoff"}, {"debrief_json", "debrief"},
      {"started_at", "startedAt"}, {"ended_at", "endedAt"},   {"last_activity", "lastActivity"}};
  for (const auto& row : rows.records.as_array()) {
    json::Value session = json::Value::object();
    for (const auto& [column, value] : row.as_object()) {
      if (value.is_null()) continue;
      if (column == "owner_auth_token") continue;  // a secret of the original's: never copied or reported by value
      auto field = kSessionColumns.find(column);
      session.set(field != kSessionColumns.end() ? field->second : column,
                  column.ends_with("_json") ? json_column(value) : value);
    }
    file.sessions.push_back(reader.session(session, false, session_names));
  }
}

/// The tables that have no place here, with their rows: the log (audit_log), focus and work
/// history, lifecycle pipelines, manifests, decisions … Bookkeeping and derived tables are left
/// out; in cleo.db only the tasks_ tables are the tasks domain's.
void count_other_tables(const ForeignDatabase& db, const Tables& tables, const OriginalSource& source, Reader& reader,
                        ForeignFile& file) {
  static const std::set<std::string_view> kSilentTables = {"schema_meta", "__drizzle_migrations", "acceptance_projection_state",
                                                           "acceptance_projection_dirty"};
  const std::string& p = tables.prefix;
  std::int64_t others = 0;
  for (const auto& table : db.tables) {
    if (tables.read(table.name)) continue;
    if (!p.empty() && !table.name.starts_with(p)) {
      if (table.rows > 0 && !is_brain_table(table.name)) ++others;  // the brain is read by read_brain
      continue;
    }
    if (kSilentTables.contains(std::string_view(table.name).substr(p.size()))) continue;
    reader.lost(table.name, table.rows);
  }
  if (others > 0)
    file.warnings.push_back(std::to_string(others) + " table(s) of " + source.database.filename().string() +
                            " outside the tasks domain and its memory (nexus, conduit …) were not read");
}

}  // namespace

Result<void> read_sqlite_store(const OriginalSource& source, Reader& reader, ForeignFile& file) {
  const Tables tables(source.prefix);
  CT_TRY_ASSIGN(ForeignDatabase db, read_foreign_sqlite(source.database, {tables.tasks, tables.deps, tables.relations,
                                                                          tables.labels, tables.criteria, tables.sessions}));
  const ForeignTable* tasks = db.find(tables.tasks);
  if (!tasks) return fail(Error(ErrorCode::Internal, "the tasks table went while it was read"));
  const TaskExtras extras = read_extras(db, tables, reader);
  read_task_rows(*tasks, extras, tables, reader, file);
  if (const ForeignTable* sessions = db.find(tables.sessions)) read_session_rows(*sessions, tables.sessions, reader, file);
  count_other_tables(db, tables, source, reader, file);

  std::error_code ec;
  std::vector<std::string> beside;
  for (std::string_view name : kJsonFiles)
    if (fs::exists(source.dir / name, ec)) beside.emplace_back(name);
  if (!beside.empty())
    file.warnings.push_back(join(beside, ", ") + " beside " + source.database.filename().string() +
                            " were not read: the original kept them as the copy it moved from");
  const fs::path config_file = source.dir / "config.json";
  CT_TRY_ASSIGN(std::optional<json::Value> config, read_json(config_file));
  if (config) read_config(reader, file, *config);
  file.source = source.database.string();
  return {};
}

}  // namespace ct::tasks::original
