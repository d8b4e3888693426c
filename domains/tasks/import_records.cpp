// A file's records as tasks.import reads them (domains/tasks/import_records.h): each read through
// tasks.add's spec, so nothing the agent API refuses is stored, with the id, times and archive
// state of a record that keeps its id; and the file as a whole: ids given once, no record that
// depends on itself, no cycle of dependencies, no loop of parents.
#include <algorithm>
#include <map>

#include "core/text.h"
#include "domains/tasks/import_records.h"
#include "domains/tasks/tasks_common.h"

namespace ct::tasks {
namespace {

/// The id, times and archive state of a record that keeps its id. A time must lie in the past;
/// an archived task must be done or cancelled.
Result<void> read_kept_fields(ImportRecord& record, const json::Value& item, TimeMs now) {
  auto refuse = [&](std::string_view field, std::string message, ErrorCode code = ErrorCode::Validation) {
    return fail(Error(code, std::move(message)).with_detail("field", std::string(field)));
  };
  if (record.id.empty()) return refuse("id", "id: missing; the tasks of this store keep their ids");
  auto number = parse_task_id(record.id);
  if (!number || format_task_id(*number) != record.id)
    return refuse("id", "id: expected a task id (T and at least 3 digits), got " + echo(record.id));
  auto time = [&](std::string_view field) -> Result<std::optional<TimeMs>> {
    const json::Value& value = item[field];
    if (value.is_null()) return std::optional<TimeMs>();
    auto parsed = value.is_string() ? parse_iso8601(trim(value.as_string())) : std::nullopt;
    if (!parsed)
      return refuse(field, std::string(field) + ": expected an ISO-8601 time, got " + echo(value.dump()),
                    value.is_string() ? ErrorCode::Validation : ErrorCode::InvalidParams);
    if (*parsed > now) return refuse(field, std::string(field) + ": " + value.as_string() + " lies in the future");
    return parsed;
  };
  CT_TRY_ASSIGN(std::optional<TimeMs> created, time("createdAt"));
  if (!created) return refuse("createdAt", "createdAt: missing; every task of the store has one");
  record.created_at = *created;
  CT_TRY_ASSIGN(record.updated_at, time("updatedAt"));
  CT_TRY_ASSIGN(record.completed_at, time("completedAt"));
  CT_TRY_ASSIGN(record.cancelled_at, time("cancelledAt"));
  CT_TRY_ASSIGN(record.archived_at, time("archivedAt"));
  if (const json::Value& archived = item["archived"]; !archived.is_null()) {
    if (!archived.is_bool()) return refuse("archived", "archived: expected true or false", ErrorCode::InvalidParams);
    record.archived = archived.as_bool();
  }
  if (const json::Value& reason = item["archiveReason"]; !reason.is_null()) {
    if (!reason.is_string() || utf8_length(reason.as_string()) > 200 || has_control_characters(reason.as_string(), false))
      return refuse("archiveReason", "archiveReason: expected one line of at most 200 characters");
    record.archive_reason = std::string(trim(reason.as_string()));
  }
  if (record.archived && record.status != TaskStatus::Done && record.status != TaskStatus::Cancelled)
    return refuse("archived", "archived while " + std::string(to_string(record.status)) +
                                  ": only done or cancelled tasks are archived");
  return {};
}

/// Reads a record through the tasks.add spec: every text is trimmed, bounded and free of control
/// characters, every enum value one of its choices — nothing the agent API refuses is stored.

// As domains/params.h: the wrong type is E_INVALID_PARAMS, a value that breaks a rule E_VALIDATION.
std::unexpected<Error> refuse(std::string field, std::string message, ErrorCode code = ErrorCode::InvalidParams) {
  return fail(Error(code, std::move(message)).with_detail("field", std::move(field)));
}

/// A reference inside the file: short single-line text (it is only matched, never stored).
Result<std::string> reference(const json::Value& value, std::string_view field) {
  if (value.is_null()) return std::string();
  if (!value.is_string() || value.as_string().size() > 40 ||
      has_control_characters(value.as_string(), false))
    return fail(Error(value.is_string() ? ErrorCode::Validation : ErrorCode::InvalidParams,
                      std::string(field) + ": expected an id of at most 40 characters")
                    .with_detail("field", std::string(field)));
  return std::string(trim(value.as_string()));
}

/// The record's place in the file: its id, parent, dependencies and links (their types and
/// reasons as tasks.relate checks them).
Result<void> read_references(ImportRecord& record, const json::Value& item, const OperationSpec& relate_spec) {
  CT_TRY_ASSIGN(record.id, reference(item["id"], "id"));
  CT_TRY_ASSIGN(record.parent, reference(item["parent"], "parent"));
  if (const json::Value& depends = item["depends"]; !depends.is_null()) {
    if (!depends.is_array()) return refuse("depends", "depends: expected an array of ids");
    for (const auto& dep : depends.as_array()) {
      CT_TRY_ASSIGN(std::string ref, reference(dep, "depends"));
      if (!ref.empty()) record.depends.push_back(std::move(ref));
    }
  }
  if (const json::Value& relates = item["relates"]; !relates.is_null()) {
    if (!relates.is_array()) return refuse("relates", "relates: expected an array of {id, type, reason?}");
    for (const auto& link : relates.as_array()) {
      CT_TRY_ASSIGN(std::string target, reference(link["id"], "relates"));
      auto type = Params::check(relate_spec, "type", link["type"].is_null() ? json::Value("relates-to") : link["type"]);
      if (!type)
        return refuse("relates", "relates" + type.error().message.substr(std::string_view("type").size()), type.error().code);
      auto reason = Params::check(relate_spec, "notes", link["reason"].is_null() ? json::Value("") : link["reason"]);
      if (!reason)
        return refuse("relates", "relates.reason" + reason.error().message.substr(std::string_view("notes").size()),
                      reason.error().code);
      if (!target.empty()) record.relates.push_back({target, type->as_string(), reason->as_string()});
    }
  }
  return {};
}

/// The record's notes, each checked as tasks.add's notes, with a past time when it gives one.
Result<void> read_notes(ImportRecord& record, const json::Value& notes, const OperationSpec& add_spec, TimeMs now) {
  if (notes.is_null()) return {};
  if (!notes.is_array()) return refuse("notes", "notes: expected an array of notes");
  for (std::size_t n = 0; n < notes.size(); ++n) {
    const json::Value& note = notes.as_array()[n];
    std::string field = "notes[" + std::to_string(n) + "]";
    auto text = Params::check(add_spec, "notes", note.is_string() ? note : note["text"]);
    if (!text) return refuse(field, field + text.error().message.substr(std::string_view("notes").size()), text.error().code);
    TimeMs at = 0;
    if (note["at"].is_string()) {
      auto parsed = parse_iso8601(note["at"].as_string());
      if (!parsed || *parsed > now)
        return refuse(field, field + ".at: expected a past ISO-8601 time", ErrorCode::Validation);
      at = *parsed;
    }
    record.task.notes.push_back({at, text->as_string()});
  }
  return {};
}

}  // namespace

Result<ImportRecord> read_record(Context& context, const RecordSpecs& specs, std::size_t index, const json::Value& item,
                                 TimeMs now, bool keep_ids) {
  if (!item.is_object()) return refuse("tasks", "a record must be an object, got " + std::string(json::to_string(item.type())));
  ImportRecord record;
  record.index = index;
  CT_TRY(read_references(record, item, *specs.relate));
  if (const json::Value& status = item["status"]; !status.is_null()) {
    auto parsed = status.is_string() ? parse_status(status.as_string()) : std::nullopt;
    if (!parsed)
      return refuse("status", "status: expected one of pending|active|blocked|done|cancelled, got " + echo(status.dump()),
                    status.is_string() ? ErrorCode::Validation : ErrorCode::InvalidParams);
    record.status = *parsed;
  }
  // The content goes through tasks.add's own validation.
  json::Value add = json::Value::object();
  for (std::string_view key : {"title", "description", "priority", "type", "labels", "acceptance", "files", "phase",
                               "size", "blockedBy"})
    if (const json::Value* value = item.find(key); value && !value->is_null()) add.set(key, *value);
  if (record.status == TaskStatus::Blocked) add.set("status", "blocked");
  CT_TRY_ASSIGN(Params checked, Params::validate(*specs.add, add));
  CT_TRY_ASSIGN(AddArgs args, add_args().decode(checked, context));
  record.task = new_task_from(args.content);
  record.given_type = record.task.type;
  // Only an epic keeps its type: other types follow from where the record lands.
  if (record.task.type != TaskType::Epic) record.task.type.reset();
  CT_TRY(read_notes(record, item["notes"], *specs.add, now));
  if (const json::Value& reason = item["cancellationReason"]; !reason.is_null()) {
    auto checked_reason = Params::check(*specs.remove, "reason", reason);
    if (!checked_reason)
      return refuse("cancellationReason",
                    "cancellationReason" + checked_reason.error().message.substr(std::string_view("reason").size()),
                    checked_reason.error().code);
    record.cancellation_reason = checked_reason->as_string();
  }
  if (keep_ids) CT_TRY(read_kept_fields(record, item, now));
  return record;
}

/// Why one record cannot be imported: {index, id?, field?, message}.
json::Value record_problem(std::size_t index, const json::Value& item, const Error& error) {
  json::Value out = json::Value::object();
  out.set("index", static_cast<std::int64_t>(index));
  if (item["id"].is_string()) out.set("id", item["id"]);
  if (error.details["field"].is_string()) out.set("field", error.details["field"]);
  out.set("message", error.message);
  return out;
}

std::string record_label(std::size_t index, const std::string& id) {
  return "tasks[" + std::to_string(index) + "]" + (id.empty() ? "" : " (" + id + ")");
}

/// Two records with one id: every reference to it would be ambiguous (parent, depends and relates
/// would all bind to one of them, silently). Refused, naming both; checked on every record of the
/// file, valid or not, so that skipInvalid cannot make the choice either.
Result<void> check_unique_ids(const json::Value& list) {
  std::map<std::string, std::size_t> first;
  for (std::size_t i = 0; i < list.size(); ++i) {
    const json::Value& id = list.as_array()[i]["id"];
    if (!id.is_string() || trim(id.as_string()).empty()) continue;
    std::string key(trim(id.as_string()));
    auto [at, inserted] = first.emplace(key, i);
    if (inserted) continue;
    json::Value both = json::Value::array();
    for (std::size_t index : {at->second, i}) {
      json::Value record = json::Value::object();
      record.set("index", static_cast<std::int64_t>(index));
      record.set("id", key);
      both.push_back(std::move(record));
    }
    return fail(Error(ErrorCode::InvalidParams, "tasks: " + record_label(at->second, key) + " and " +
                                                    record_label(i, key) + " have the same id; references to " + key +
                                                    " would be ambiguous")
                    .with_fix("give each record of the file its own id, then import again")
                    .with_detail("field", "tasks")
                    .with_detail("records", std::move(both)));
  }
  return {};
}

/// The links inside the file, checked in the file's terms before anything is written: no record
/// depends on itself, and neither the dependencies nor the parent links form a loop. (Left to the
/// task engine, these are found only while writing, and named by the ids the import was about to

namespace {

/// Where each file id is among the records.
using FileIndex = std::map<std::string, std::size_t>;

/// The refusal of a cycle or loop through the records `path` (its first record repeated last).
Error circular(const std::vector<ImportRecord>& records, const std::vector<std::size_t>& path, std::string_view what,
               std::string fix) {
  std::string text;
  json::Value ids = json::Value::array();
  json::Value indexes = json::Value::array();
  for (std::size_t i : path) {
    text += (text.empty() ? "" : " → ") + record_label(records[i].index, records[i].id);
    ids.push_back(records[i].id);
    indexes.push_back(static_cast<std::int64_t>(records[i].index));
  }
  return Error(ErrorCode::CircularReference, "tasks: " + std::string(what) + ": " + text)
      .with_fix(std::move(fix))
      .with_detail("field", "tasks")
      .with_detail("cycle", std::move(ids))
      .with_detail("records", std::move(indexes));
}

/// Dependencies: a depth-first walk (iterative: a file may hold a long chain); a record met again
/// on the current path closes a cycle.
Result<void> check_dependency_cycles(const std::vector<ImportRecord>& records, const FileIndex& at) {
  enum class Mark { New, OnPath, Done };
  std::vector<Mark> mark(records.size(), Mark::New);
  for (std::size_t root = 0; root < records.size(); ++root) {
    if (mark[root] != Mark::New) continue;
    std::vector<std::pair<std::size_t, std::size_t>> path{{root, 0}};  // record, next dependency to look at
    mark[root] = Mark::OnPath;
    while (!path.empty()) {
      auto& [i, next_dep] = path.back();
      if (next_dep == records[i].depends.size()) {
        mark[i] = Mark::Done;
        path.pop_back();
        continue;
      }
      auto found = at.find(records[i].depends[next_dep++]);
      if (found == at.end()) continue;  // outside the file: dropped with a warning
      const std::size_t next = found->second;
      if (mark[next] == Mark::New) {
        mark[next] = Mark::OnPath;
        path.push_back({next, 0});
      } else if (mark[next] == Mark::OnPath) {
        std::vector<std::size_t> cycle;
        bool on = false;
        for (const auto& step : path) {
          on = on || step.first == next;
          if (on) cycle.push_back(step.first);
        }
        cycle.push_back(next);
        return fail(circular(records, cycle, "the dependencies in the file form a cycle",
                             "leave one of these dependencies out of the file, then import again"));
      }
    }
  }
  return {};
}

/// Parents: each record has one, so following the links from any record either leaves the file
/// or comes back to a record already on the way.
Result<void> check_parent_loops(const std::vector<ImportRecord>& records, const FileIndex& at) {
  std::vector<bool> cleared(records.size(), false);
  for (std::size_t start = 0; start < records.size(); ++start) {
    std::vector<std::size_t> way;
    std::size_t i = start;
    while (!cleared[i]) {
      if (auto seen = std::find(way.begin(), way.end(), i); seen != way.end()) {
        std::vector<std::size_t> loop(seen, way.end());
        loop.push_back(i);
        return fail(circular(records, loop, "the parent links in the file form a loop",
                             "give one task of the loop no parent (or a parent outside the file), then import again"));
      }
      way.push_back(i);
      auto parent = records[i].parent.empty() ? at.end() : at.find(records[i].parent);
      if (parent == at.end()) break;
      i = parent->second;
    }
    for (std::size_t j : way) cleared[j] = true;
  }
  return {};
}

}  // namespace

Result<void> check_file_links(const std::vector<ImportRecord>& records) {
  FileIndex at;
  for (std::size_t i = 0; i < records.size(); ++i)
    if (!records[i].id.empty()) at.emplace(records[i].id, i);
  for (const auto& record : records)
    if (!record.id.empty() && std::find(record.depends.begin(), record.depends.end(), record.id) != record.depends.end())
      return fail(Error(ErrorCode::CircularReference, "tasks: " + record_label(record.index, record.id) +
                                                          " depends on itself")
                      .with_fix("leave " + record.id + " out of the depends of " + record_label(record.index, record.id) +
                                ", then import again")
                      .with_detail("field", "tasks")
                      .with_detail("records", json::Value::array_of(std::vector<std::int64_t>{
                                                  static_cast<std::int64_t>(record.index)})));
  CT_TRY(check_dependency_cycles(records, at));
  return check_parent_loops(records, at);
}

}  // namespace ct::tasks
