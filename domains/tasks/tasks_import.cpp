// tasks domain — tasks.import: another file's task records, each validated as tasks.add validates,
// with new ids; or the original CLEO's store (domains/tasks/original_store.h), whose tasks keep
// theirs, with its sessions and config. Either way one transaction and one audit row, which
// tasks.undo takes back whole.
#include <algorithm>
#include <cctype>
#include <filesystem>
#include <functional>
#include <map>
#include <set>

#include "core/json_parse.h"
#include "core/text.h"
#include "domains/tasks/import_formats.h"
#include "domains/tasks/original_store.h"
#include "domains/tasks/tasks_common.h"
#include "engines/rules/memory.h"
#include "engines/rules/session_engine.h"

namespace ct::tasks {
namespace {

/// One record of a tasks.import file, validated exactly as tasks.add validates its params.
struct ImportRecord {
  std::size_t index = 0;
  std::string id;                        // the id in the file ("" when it has none)
  std::string parent;                    // the parent's id in the file
  std::vector<std::string> depends;      // ids in the file
  std::vector<Relation> relates;         // links to ids in the file
  TaskStatus status = TaskStatus::Pending;
  std::string cancellation_reason;
  NewTask task;                          // parent and depends are filled in when placed
  std::optional<TaskType> given_type;    // as the record gave it
  // Records that keep their ids (the original CLEO's store): when and how they stand there.
  TimeMs created_at = 0;
  std::optional<TimeMs> updated_at, completed_at, cancelled_at, archived_at;
  bool archived = false;
  std::string archive_reason;
};

/// Why one record cannot be imported: {index, id?, field?, message}.
json::Value record_problem(std::size_t index, const json::Value& item, const Error& error) {
  json::Value out = json::Value::object();
  out.set("index", static_cast<std::int64_t>(index));
  if (item["id"].is_string()) out.set("id", item["id"]);
  if (error.details["field"].is_string()) out.set("field", error.details["field"]);
  out.set("message", error.message);
  return out;
}

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
/// With `keep_ids` (the original CLEO's store) the record must carry its id and createdAt, and its
/// times and archive state are read too.
Result<ImportRecord> read_record(const OperationSpec& add_spec, const OperationSpec& delete_spec,
                                 const OperationSpec& relate_spec, std::size_t index, const json::Value& item, TimeMs now,
                                 bool keep_ids) {
  // As domains/params.h: the wrong type is E_INVALID_PARAMS, a value that breaks a rule E_VALIDATION.
  auto refuse = [&](std::string field, std::string message, ErrorCode code = ErrorCode::InvalidParams) {
    return fail(Error(code, std::move(message)).with_detail("field", std::move(field)));
  };
  if (!item.is_object()) return refuse("tasks", "a record must be an object, got " + std::string(json::to_string(item.type())));
  ImportRecord record;
  record.index = index;
  // References inside the file: short single-line text (they are only matched, never stored).
  auto reference = [&](const json::Value& value, std::string_view field) -> Result<std::string> {
    if (value.is_null()) return std::string();
    if (!value.is_string() || value.as_string().size() > 40 ||
        has_control_characters(value.as_string(), false))
      return fail(Error(value.is_string() ? ErrorCode::Validation : ErrorCode::InvalidParams,
                        std::string(field) + ": expected an id of at most 40 characters")
                      .with_detail("field", std::string(field)));
    return std::string(trim(value.as_string()));
  };
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
  CT_TRY_ASSIGN(Params checked, Params::validate(add_spec, add));
  record.task = new_task_from(checked);
  record.given_type = record.task.type;
  // Only an epic keeps its type: other types follow from where the record lands.
  if (record.task.type != TaskType::Epic) record.task.type.reset();
  if (const json::Value& notes = item["notes"]; !notes.is_null()) {
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
  }
  if (const json::Value& reason = item["cancellationReason"]; !reason.is_null()) {
    auto checked_reason = Params::check(delete_spec, "reason", reason);
    if (!checked_reason)
      return refuse("cancellationReason",
                    "cancellationReason" + checked_reason.error().message.substr(std::string_view("reason").size()),
                    checked_reason.error().code);
    record.cancellation_reason = checked_reason->as_string();
  }
  if (keep_ids) CT_TRY(read_kept_fields(record, item, now));
  return record;
}

/// An error of the task engine met while importing, in the file's terms: every id the import gave
/// (`given`: new id → its record) is replaced by its record in the message and in the string
/// details, the message starts with the record being written, and a fix that names such an id (a
/// call on a task that will not exist) becomes one about the file.
Error in_file_terms(Error error, const std::string& record, const std::map<std::string, std::string>& given) {
  // Whole words only: T12 is not a part of T123.
  auto translate = [&](const std::string& text, bool& named) {
    std::string out;
    std::size_t i = 0;
    while (i < text.size()) {
      std::size_t end = i;
      while (end < text.size() && std::isalnum(static_cast<unsigned char>(text[end]))) ++end;
      if (end == i) {
        out += text[i++];
        continue;
      }
      auto found = given.find(text.substr(i, end - i));
      named = named || found != given.end();
      out += found != given.end() ? found->second : text.substr(i, end - i);
      i = end;
    }
    return out;
  };
  bool named = false;
  error.message = record + ": " + translate(error.message, named);
  for (auto& [key, value] : error.details.as_object()) {
    if (value.is_string()) {
      value = translate(value.as_string(), named);
    } else if (value.is_array()) {
      for (auto& item : value.as_array())
        if (item.is_string()) item = translate(item.as_string(), named);
    }
  }
  bool fix_names_one = false;
  // The fix's calls with their params, where a record's id would show.
  (void)translate(error.fix.render([](const Call& call) { return call.operation + " " + call.params.dump(); }),
                  fix_names_one);
  if (fix_names_one) error.fix = "correct " + record + " in the file, then import again";
  return error;
}

/// "tasks[3] (B7)": a record of the file, by its place and its id there.
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
/// give — ids that never exist, since the refused import is rolled back.)
Result<void> check_file_links(const std::vector<ImportRecord>& records) {
  std::map<std::string, std::size_t> at;  // file id → position in records
  for (std::size_t i = 0; i < records.size(); ++i)
    if (!records[i].id.empty()) at.emplace(records[i].id, i);
  // The refusal of a cycle or loop through the records `path` (its first record repeated last).
  auto circular = [&](const std::vector<std::size_t>& path, std::string_view what, std::string fix) {
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
  };
  for (const auto& record : records)
    if (!record.id.empty() && std::find(record.depends.begin(), record.depends.end(), record.id) != record.depends.end())
      return fail(Error(ErrorCode::CircularReference, "tasks: " + record_label(record.index, record.id) +
                                                          " depends on itself")
                      .with_fix("leave " + record.id + " out of the depends of " + record_label(record.index, record.id) +
                                ", then import again")
                      .with_detail("field", "tasks")
                      .with_detail("records", json::Value::array_of(std::vector<std::int64_t>{
                                                  static_cast<std::int64_t>(record.index)})));
  // Dependencies: a depth-first walk (iterative: a file may hold a long chain); a record met again
  // on the current path closes a cycle.
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
        return fail(circular(cycle, "the dependencies in the file form a cycle",
                             "leave one of these dependencies out of the file, then import again"));
      }
    }
  }
  // Parents: each record has one, so following the links from any record either leaves the file
  // or comes back to a record already on the way.
  std::vector<bool> cleared(records.size(), false);
  for (std::size_t start = 0; start < records.size(); ++start) {
    std::vector<std::size_t> way;
    std::size_t i = start;
    while (!cleared[i]) {
      if (auto seen = std::find(way.begin(), way.end(), i); seen != way.end()) {
        std::vector<std::size_t> loop(seen, way.end());
        loop.push_back(i);
        return fail(circular(loop, "the parent links in the file form a loop",
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

/// What the call imports: the records sent as `tasks`, or what `from` names — a file of records,
/// or the original CLEO's store.
Result<ForeignFile> read_input(Context& context, const Params& params, const OperationSpec& add_spec) {
  const std::string& format = params.str("format");
  const std::optional<std::string> from = params.opt_str("from");
  if (from && params.has("tasks"))
    return fail(Error(ErrorCode::InvalidParams, "give the records as tasks, or a file or folder as from, not both")
                    .with_detail("field", "from"));
  if (!from) {
    if (!params.has("tasks"))
      return fail(Error(ErrorCode::InvalidParams, "give the records as tasks, or a file or folder to read as from")
                      .with_fix(call("tasks.import", {{"from", ".cleo-old"}, {"dryRun", true}}))
                      .with_detail("field", "tasks"));
    if (looks_like_original_file(params.value("tasks")))
      return fail(Error(ErrorCode::InvalidParams,
                        "tasks: this is the original CLEO's todo.json (or its archive); import its whole store, whose "
                        "tasks keep their ids, by naming its folder")
                      .with_fix(call("tasks.import", {{"from", "<its .cleo folder>"}, {"dryRun", true}}))
                      .with_detail("field", "tasks"));
    return read_foreign(params.value("tasks"), format, add_spec, context.now());
  }
  const std::filesystem::path given(*from);
  const std::filesystem::path path = given.is_absolute() ? given : context.project->root / given;
  if (!context.may_leave_project() && !lies_within(path, context.project->root))
    return fail(Error(ErrorCode::Validation, *from + " is outside the project")
                    .with_fix(Context::let_agents_leave_project())
                    .with_detail("field", "from"));
  CT_TRY_ASSIGN(ImportSource source, read_import_source(path));
  if (!source.original) return read_foreign(source.records, format, add_spec, context.now());
  if (format != "auto")
    return fail(Error(ErrorCode::InvalidParams, "format: " + *from + " is the original CLEO's store, told by its files; "
                                                "leave format out")
                    .with_detail("field", "format"));
  if (params.has("parent"))
    return fail(Error(ErrorCode::InvalidParams, "parent: the original CLEO's tasks keep their own hierarchy; leave "
                                                "parent out")
                    .with_detail("field", "parent"));
  const OperationSpec* observe_spec = context.registry->find("memory", "observe");
  if (!observe_spec) return fail(ErrorCode::Internal, "memory.observe is missing from the registry");
  return read_original(*source.original, add_spec, *observe_spec);
}

Result<Reply> import_kept(Context& context, const Params& params, ForeignFile file, std::vector<ImportRecord> records,
                          json::Value problems);

/// tasks.import: the export format (or a bare array of task records), another tracker's file, or
/// the original CLEO's store. Every record passes the validation of tasks.add. Other files' tasks
/// get new ids: parent and depends references inside the file are remapped, references outside
/// it are dropped with a warning. The original's keep theirs (import_kept). The whole import is
/// one transaction: it lands completely or not at all (with skipInvalid, the valid records land
/// and the others are listed).
Result<Reply> import_tasks(Context& context, const Params& params) {
  const OperationSpec* add_spec = context.registry ? context.registry->find("tasks", "add") : nullptr;
  const OperationSpec* delete_spec = context.registry ? context.registry->find("tasks", "delete") : nullptr;
  const OperationSpec* relate_spec = context.registry ? context.registry->find("tasks", "relate") : nullptr;
  if (!add_spec || !delete_spec || !relate_spec)
    return fail(ErrorCode::Internal, "tasks.add, tasks.delete or tasks.relate is missing from the registry");
  if (!context.external || !context.external->data["file"].is_object())
    return fail(ErrorCode::Internal, "tasks.import: its input was not read before the transaction");
  ForeignFile file = foreign_from_json(context.external->data["file"]);
  const bool keep_ids = file.format == "original";
  const json::Value* list = &file.records;
  const bool skip_invalid = params.flag("skipInvalid");
  CT_TRY(check_unique_ids(*list));
  std::vector<ImportRecord> records;
  json::Value problems = json::Value::array();
  ErrorCode first_code = ErrorCode::InvalidParams;  // the refusal carries the first invalid record's code
  for (std::size_t i = 0; i < list->size(); ++i) {
    const json::Value& item = list->as_array()[i];
    auto record = read_record(*add_spec, *delete_spec, *relate_spec, i, item, context.now(), keep_ids);
    if (record) {
      records.push_back(std::move(*record));
    } else {
      if (problems.empty()) first_code = record.error().code;
      problems.push_back(record_problem(i, item, record.error()));
    }
  }
  if (!problems.empty() && !skip_invalid) {
    const json::Value& first = problems.as_array().front();
    std::string message = "tasks: " + std::to_string(problems.size()) + " of " + std::to_string(list->size()) +
                          " records are invalid; first: tasks[" + std::to_string(first["index"].as_int()) + "]" +
                          (first["id"].is_string() ? " (" + first["id"].as_string() + ")" : "") + " " +
                          first["message"].as_string();
    Error error(first_code, std::move(message));
    json::Value again = json::Value::object();
    if (auto from = params.opt_str("from")) {
      again.set("from", *from);
    } else {
      again.set("tasks", json::Value::Array{"..."});
    }
    again.set("skipInvalid", true);
    again.set("dryRun", true);
    error.fix = "correct the records in error.details.records, or pass skipInvalid:true to import the others: " +
                call("tasks.import", std::move(again.as_object()));
    constexpr std::size_t kListed = 50;
    json::Value listed = json::Value::array();
    for (std::size_t i = 0; i < problems.size() && i < kListed; ++i) listed.push_back(problems.as_array()[i]);
    return fail(std::move(error).with_detail("field", "tasks").with_detail("records", std::move(listed))
                    .with_detail("invalid", static_cast<std::int64_t>(problems.size())));
  }
  CT_TRY(check_file_links(records));
  if (keep_ids) return import_kept(context, params, std::move(file), std::move(records), std::move(problems));

  auto engine_ = engine(context);
  std::string attach = params.opt_str("parent").value_or("");
  std::set<std::string> in_file;
  for (const auto& record : records)
    if (!record.id.empty()) in_file.insert(record.id);
  // Parents first: repeat passes until every record whose parent is in the file has been placed.
  std::map<std::string, std::string> id_map;
  std::vector<std::string> warnings = std::move(file.warnings);
  std::vector<std::string> new_ids(records.size());
  std::vector<bool> placed(records.size(), false);
  std::size_t remaining = records.size();
  auto label = [](const ImportRecord& record) { return record_label(record.index, record.id); };
  // What the task engine refuses while writing is told in the file's terms: the ids this import
  // gave are rolled back with it, so the record that was being written is named instead.
  auto refused = [&](const ImportRecord& record, Error error) {
    std::map<std::string, std::string> given;
    for (std::size_t j = 0; j < records.size(); ++j)
      if (!new_ids[j].empty()) given.emplace(new_ids[j], label(records[j]));
    return fail(in_file_terms(std::move(error), label(record), given));
  };
  while (remaining > 0) {
    std::size_t progress = 0;
    for (std::size_t i = 0; i < records.size(); ++i) {
      if (placed[i]) continue;
      ImportRecord& record = records[i];
      bool parent_in_file = !record.parent.empty() && in_file.contains(record.parent);
      if (parent_in_file && !id_map.contains(record.parent)) continue;
      NewTask spec = record.task;
      if (parent_in_file) {
        spec.parent = id_map.at(record.parent);
      } else {
        if (!record.parent.empty())
          warnings.push_back(label(record) + ": parent " + record.parent + " is not in the file; attached " +
                             (attach.empty() ? "at the top level" : "under " + attach));
        spec.parent = attach;
        if (!attach.empty()) spec.type.reset();
      }
      if (spec.status == TaskStatus::Blocked && spec.blocked_by.empty()) spec.blocked_by = "imported as blocked";
      auto added = engine_.add(std::move(spec));
      if (!added) return refused(record, std::move(added.error()));
      if (!record.id.empty()) id_map[record.id] = added->id;
      new_ids[i] = added->id;
      placed[i] = true;
      --remaining;
      ++progress;
    }
    if (progress == 0)  // check_file_links() refused every parent loop
      return fail(ErrorCode::Internal, "tasks.import: records left unplaced without a parent loop");
  }
  // Second pass: dependencies and final statuses, now that every id is known.
  for (std::size_t i = 0; i < records.size(); ++i) {
    const ImportRecord& record = records[i];
    std::vector<std::string> depends;
    for (const auto& dep : record.depends) {
      if (id_map.contains(dep)) {
        depends.push_back(id_map.at(dep));
      } else {
        warnings.push_back(label(record) + ": dependency " + dep + " is not in the file; dropped");
      }
    }
    if (!depends.empty()) {
      TaskPatch patch;
      patch.depends = depends;
      if (auto updated = engine_.update(new_ids[i], patch, std::nullopt); !updated)
        return refused(record, std::move(updated.error()));
    }
    for (const auto& link : record.relates) {
      if (!id_map.contains(link.task_id)) {
        warnings.push_back(label(record) + ": link to " + link.task_id + " is not in the file; dropped");
        continue;
      }
      if (id_map.at(link.task_id) == new_ids[i]) continue;
      if (auto related = engine_.relate(new_ids[i], id_map.at(link.task_id), link.type, link.reason); !related)
        return refused(record, std::move(related.error()));
    }
    if (record.status == TaskStatus::Done) {
      if (auto completed = engine_.complete(new_ids[i], "", std::nullopt); !completed)
        return refused(record, std::move(completed.error()));
    } else if (record.status == TaskStatus::Cancelled) {
      DeleteOptions options;
      options.reason = record.cancellation_reason;
      options.children = ChildStrategy::Orphan;
      if (auto removed = engine_.remove(new_ids[i], options, std::nullopt); !removed)
        return refused(record, std::move(removed.error()));
    }
  }
  json::Value mapping = json::Value::object();
  for (const auto& [old_id, new_id] : id_map) mapping.set(old_id, new_id);
  json::Value data = json::Value::object();
  data.set("imported", static_cast<std::int64_t>(records.size()));
  data.set("idMap", std::move(mapping));
  if (!problems.empty()) data.set("skipped", std::move(problems));
  if (file.format != "cleo") {
    data.set("format", file.format);
    data.set("mapped", std::move(file.mapped));
    if (!file.unmapped.empty()) data.set("unmapped", std::move(file.unmapped));
  }
  if (params.flag("dryRun")) {
    data.set("dryRun", true);
  }
  return Reply{std::move(data), std::move(warnings), {}, {}};
}

// --- the original CLEO's store: ids kept -------------------------------------------------------

/// A record that keeps its id as the task it becomes: its type (`type`, already resolved), its
/// status (active is pending: a claim is made with tasks.start here), and its times made
/// consistent — a done task has its completion time, a cancelled one its cancellation, an
/// archived one the time it was archived, none earlier than its creation and the archive time
/// no earlier than the last change (each adjustment counted in `adjusted`).
Task kept_task(const ImportRecord& record, TaskType type, std::int64_t& adjusted) {
  Task task;
  task.id = record.id;
  task.title = record.task.title;
  task.description = record.task.description;
  task.priority = record.task.priority;
  task.type = type;
  task.parent = record.parent;
  task.depends = record.depends;
  task.relates = record.relates;
  task.labels = record.task.labels;
  task.acceptance = record.task.acceptance;
  task.files = record.task.files;
  task.phase = record.task.phase;
  task.size = record.task.size;
  task.status = record.status == TaskStatus::Active ? TaskStatus::Pending : record.status;
  if (task.status == TaskStatus::Blocked)
    task.blocked_by = record.task.blocked_by.empty() ? "blocked in the original CLEO" : record.task.blocked_by;
  task.created_at = record.created_at;
  auto raise = [&](TimeMs& time) {
    if (time < task.created_at) {
      time = task.created_at;
      ++adjusted;
    }
  };
  task.updated_at = record.updated_at.value_or(task.created_at);
  raise(task.updated_at);
  for (const auto& note : record.task.notes) task.notes.push_back({note.at ? note.at : task.created_at, note.text});
  if (task.status == TaskStatus::Done) {
    if (!record.completed_at) ++adjusted;
    TimeMs completed = record.completed_at.value_or(task.updated_at);
    raise(completed);
    task.completed_at = completed;
  }
  if (task.status == TaskStatus::Cancelled) {
    if (!record.cancelled_at) ++adjusted;
    TimeMs cancelled = record.cancelled_at.value_or(task.updated_at);
    raise(cancelled);
    task.cancelled_at = cancelled;
    task.cancellation_reason =
        record.cancellation_reason.empty() ? std::string("cancelled in the original CLEO") : record.cancellation_reason;
  }
  for (const auto& closed : {task.completed_at, task.cancelled_at})
    if (closed && *closed > task.updated_at) task.updated_at = *closed;
  if (record.archived) {
    task.archived = true;
    TimeMs archived = record.archived_at.value_or(task.updated_at);
    if (archived < task.updated_at) {
      archived = task.updated_at;
      ++adjusted;
    }
    task.archived_at = archived;
    task.archive_reason = record.archive_reason;
  }
  return task;
}

/// The type each record keeps: the one it gave (a subtask without a parent is a task), else what
/// its parent makes it — a task under an epic, a subtask under anything else, a task at the top.
std::vector<TaskType> kept_types(const std::vector<ImportRecord>& records) {
  std::map<std::string, std::size_t> at;
  for (std::size_t i = 0; i < records.size(); ++i) at.emplace(records[i].id, i);
  std::vector<std::optional<TaskType>> types(records.size());
  // Parent chains are loop-free (check_file_links) and short (hierarchy.maxDepth); the depth
  // bound only keeps a bug from recursing for ever.
  std::function<TaskType(std::size_t, int)> type_of = [&](std::size_t i, int depth) -> TaskType {
    if (types[i]) return *types[i];
    const ImportRecord& record = records[i];
    auto parent = record.parent.empty() ? at.end() : at.find(record.parent);
    TaskType type = TaskType::Task;
    if (record.given_type && !(record.given_type == TaskType::Subtask && record.parent.empty())) {
      type = *record.given_type;
    } else if (parent != at.end() && depth < 16) {
      type = type_of(parent->second, depth + 1) == TaskType::Epic ? TaskType::Task : TaskType::Subtask;
    }
    types[i] = type;
    return type;
  };
  std::vector<TaskType> out;
  for (std::size_t i = 0; i < records.size(); ++i) out.push_back(type_of(i, 0));
  return out;
}

/// The specs whose params a session record must pass: session.start's name and agent,
/// session.note's notes and nextAction.
struct SessionSpecs {
  const OperationSpec* start = nullptr;
  const OperationSpec* note = nullptr;
};

/// One of the original's sessions (original_store.h's session record) as a session of this store.
Result<Session> read_session(const json::Value& item, const SessionSpecs& specs, TimeMs now, Scope& scope) {
  auto refuse = [&](std::string_view field, std::string message, ErrorCode code = ErrorCode::Validation) {
    return fail(Error(code, std::move(message)).with_detail("field", std::string(field)));
  };
  if (!item.is_object()) return refuse("sessions", "a session must be an object", ErrorCode::InvalidParams);
  Session session;
  if (!item["id"].is_string()) return refuse("id", "id: missing; a session of the store has one");
  session.id = item["id"].as_string();
  const std::string status = item["status"].string_or_empty();
  auto parsed = parse_session_status(status);
  if (!parsed)
    return refuse("status", "status: expected one of active|suspended|ended|archived|orphaned, got " +
                                echo(item["status"].dump()));
  session.status = *parsed;
  auto checked_scope = parse_scope(item["scope"].string_or_empty());
  if (!checked_scope) return refuse("scope", "scope: " + checked_scope.error().message, checked_scope.error().code);
  scope = *checked_scope;
  session.scope = scope.text;
  auto text = [&](const OperationSpec& spec, std::string_view param, std::string_view field) -> Result<std::string> {
    const json::Value& value = item[field];
    if (value.is_null()) return std::string();
    auto checked = Params::check(spec, param, value);
    if (!checked)
      return refuse(field, std::string(field) + checked.error().message.substr(param.size()), checked.error().code);
    return checked->as_string();
  };
  CT_TRY_ASSIGN(session.name, text(*specs.start, "name", "name"));
  CT_TRY_ASSIGN(session.agent, text(*specs.start, "agent", "agent"));
  CT_TRY_ASSIGN(session.note, text(*specs.note, "notes", "note"));
  CT_TRY_ASSIGN(session.next_action, text(*specs.note, "nextAction", "nextAction"));
  auto time = [&](std::string_view field) -> Result<std::optional<TimeMs>> {
    const json::Value& value = item[field];
    if (value.is_null()) return std::optional<TimeMs>();
    auto at = value.is_string() ? parse_iso8601(trim(value.as_string())) : std::nullopt;
    if (!at || *at > now)
      return refuse(field, std::string(field) + ": expected a past ISO-8601 time, got " + echo(value.dump()));
    return at;
  };
  CT_TRY_ASSIGN(std::optional<TimeMs> created, time("createdAt"));
  if (!created) return refuse("createdAt", "createdAt: missing; every session of the store started once");
  session.created_at = *created;
  CT_TRY_ASSIGN(std::optional<TimeMs> updated, time("updatedAt"));
  session.updated_at = std::max(updated.value_or(*created), *created);
  CT_TRY_ASSIGN(session.ended_at, time("endedAt"));
  CT_TRY_ASSIGN(session.archived_at, time("archivedAt"));
  const bool over = session.status == SessionStatus::Ended || session.status == SessionStatus::Closed;
  if (over && !session.ended_at) session.ended_at = session.updated_at;
  if (!over) session.ended_at.reset();
  if (session.ended_at && *session.ended_at < session.created_at) session.ended_at = session.created_at;
  if (session.ended_at && *session.ended_at > session.updated_at) session.updated_at = *session.ended_at;
  if (session.archived_at && !over) session.archived_at.reset();
  return session;
}

/// The original's config keys with an equivalent here, applied where this project still has the
/// default (a value set here is kept, and said); keys only people set are not applied for agents.
/// Written to config.json after everything else, and not at all in a dry run; each applied key is
/// a `config.<key>` change of the call's audit row, which undo puts back.
Result<json::Value> apply_config(Context& context, const json::Value& mapped, std::vector<std::string>& warnings) {
  json::Value applied = json::Value::object();
  if (!mapped.is_object() || mapped.empty()) return applied;
  Config updated = *context.config;
  std::vector<FieldChange> changes;
  for (const auto& [key, value] : mapped.as_object()) {
    const ConfigKey* spec = find_config_key(key);
    if (!spec) continue;
    const json::Value current = updated.get(key);
    if (current == value) continue;
    auto default_value = json::parse(spec->default_json);
    if (default_value && current != *default_value) {
      warnings.push_back("config " + key + ": kept this project's " + current.dump() + " (the original had " +
                         value.dump() + ")");
      continue;
    }
    if (auto allowed = context.may_set_config(*spec, value); !allowed) {
      warnings.push_back("config " + key + " " + value.dump() + " not applied: " + allowed.error().message);
      continue;
    }
    if (auto set = updated.set(key, value); !set) {
      warnings.push_back("config " + key + " " + value.dump() + " not applied: " + set.error().message);
      continue;
    }
    applied.set(key, value);
    changes.push_back(FieldChange{"", "config." + key, current, value});
  }
  if (changes.empty()) return applied;
  if (!context.keeps_nothing) {
    CT_TRY(updated.save(context.project->config_path()));
    context.config_changed = true;
  }
  for (auto& change : changes) context.record(std::move(change));
  return applied;
}

/// "tasks[3] (T004)" or "sessions[1] (session_…)": where a problem of the store is.
std::string store_label(std::string_view of, std::size_t index, const std::string& id) {
  return std::string(of) + "[" + std::to_string(index) + "]" + (id.empty() ? "" : " (" + id + ")");
}

/// One entry of the original's memory (original_brain.h) on its way in: memory.observe's params.
struct MemoryRecord {
  std::size_t index = 0;
  std::string from;  // "brain_decisions D001"
  json::Value params;
};

/// A scope path of the original's memory as this project names it: a relative path as it is, an
/// absolute one inside the project made relative; nullopt for a path outside the project (or one
/// memory's rules refuse), which has no place here.
std::optional<std::string> scope_path_here(const std::filesystem::path& root, const std::string& path) {
  std::filesystem::path given(path);
  if (given.is_absolute()) {
    if (!lies_within(given, root)) return std::nullopt;
    auto resolved = resolve_links(given);
    auto base = resolve_links(root);
    if (!resolved || !base) return std::nullopt;
    given = resolved->lexically_relative(*base);
  }
  auto normal = memory::normal_scope_path(given.generic_string());
  return normal ? std::optional<std::string>(*normal) : std::nullopt;
}

/// The original's memory, each entry a memory.observe run as this caller inside this call
/// (Context::run_inside): the same checks, the same status (an agent's entry of a kind people
/// govern is proposed — never verified), a new id (no entry here is ever overwritten); its changes
/// join this call's audit row, so tasks.undo takes them back with the rest. An entry this store
/// holds already (the same content) is not added twice; one that nearly repeats an entry here is
/// left out, as memory.observe leaves it without force — each listed.
Result<json::Value> import_memory(Context& context, const OperationSpec& observe, const std::vector<MemoryRecord>& records,
                                  std::vector<std::string>& warnings) {
  if (records.empty()) return json::Value();
  if (!context.run_inside) return fail(ErrorCode::Internal, "tasks.import brings memory only under the router");
  std::int64_t added = 0;
  json::Value kinds = json::Value::object();
  std::vector<std::string> proposed;
  json::Value held = json::Value::array();
  json::Value similar = json::Value::array();
  std::vector<std::string> said;
  // memory.observe's external step, which read its scope files: done for every entry by this
  // call's own (read_for_import).
  json::Value read = json::Value::object();
  read.set("files", context.external ? context.external->data["memoryFiles"] : json::Value::object());
  const Reply observed_files{std::move(read), {}, {}, {}};
  for (const auto& record : records) {
    AuditEntry inner;
    auto reply = context.run_inside(context, observe, record.params, inner, &observed_files);
    if (!reply && reply.error().code == ErrorCode::AlreadyExists) {
      json::Value row = json::Value::object();
      row.set("from", record.from);
      std::vector<std::string> ids;
      if (reply.error().details["similar"].is_array())
        for (const auto& other : reply.error().details["similar"].as_array()) ids.push_back(other["id"].string_or_empty());
      row.set("ids", json::Value::array_of(ids));
      similar.push_back(std::move(row));
      continue;
    }
    if (!reply) {
      Error error = std::move(reply.error());
      error.message = store_label("memory", record.index, record.from) + ": " + error.message;
      return fail(std::move(error));
    }
    const std::string id = reply->data["id"].string_or_empty();
    if (reply->note == ErrorCode::AlreadyExists) {
      json::Value row = json::Value::object();
      row.set("from", record.from);
      row.set("id", id);
      held.push_back(std::move(row));
      continue;
    }
    ++added;
    const std::string kind = record.params["kind"].string_or_empty();
    kinds.set(kind, (kinds[kind].is_int() ? kinds[kind].as_int() : 0) + 1);
    if (reply->data["status"] == json::Value("proposed")) proposed.push_back(id);
    for (auto& warning : reply->warnings)
      if (!warning.starts_with(id + " is proposed")) said.push_back(id + " (" + record.from + "): " + warning);
    for (auto& change : inner.changes) context.record(std::move(change));
  }
  json::Value out = json::Value::object();
  out.set("added", added);
  if (!kinds.empty()) out.set("kinds", std::move(kinds));
  if (!proposed.empty()) {
    warnings.push_back(std::to_string(proposed.size()) + " memory entr" + (proposed.size() == 1 ? "y is" : "ies are") +
                       " proposed: their kind is served once a person verifies it (ct memory verify " + proposed.front() +
                       ")");
    out.set("proposed", json::Value::array_of(proposed));
  }
  if (!held.empty()) out.set("held", std::move(held));
  if (!similar.empty()) {
    warnings.push_back(std::to_string(similar.size()) + " memory entr" + (similar.size() == 1 ? "y" : "ies") +
                       " of the original nearly repeat entries here and were left out (data.memory.similar); "
                       "memory.observe with force:true records one anyway");
    out.set("similar", std::move(similar));
  }
  constexpr std::size_t kSaid = 20;
  for (std::size_t i = 0; i < said.size() && i < kSaid; ++i) warnings.push_back(std::move(said[i]));
  if (said.size() > kSaid) warnings.push_back("… and " + std::to_string(said.size() - kSaid) + " more about memory entries");
  return out;
}


/// The original CLEO's store, ids kept. References to tasks the store does not hold (a parent,
/// a dependency, a link, a session's scope) are refused, naming each; with skipInvalid they are
/// dropped (a session whose scope names one is left out), each said. The tasks are placed by
/// TaskEngine::import_kept (E_VALIDATION naming them when this store holds one of their ids: the
/// same import fails again, so not the retryable E_ID_COLLISION), the sessions inserted (likewise), the config applied last: all in the call's transaction
/// and its one audit row.
Result<Reply> import_kept(Context& context, const Params& params, ForeignFile file, std::vector<ImportRecord> records,
                          json::Value problems) {
  const bool skip_invalid = params.flag("skipInvalid");
  std::vector<std::string> warnings = std::move(file.warnings);
  std::set<std::string> in_store;
  for (const auto& record : records) in_store.insert(record.id);

  // References to tasks the store does not hold.
  json::Value dangling = json::Value::array();
  auto dangle = [&](const std::string& where, std::string_view field, const std::string& missing) {
    json::Value item = json::Value::object();
    item.set("record", where);
    item.set("field", std::string(field));
    item.set("missing", missing);
    dangling.push_back(std::move(item));
  };
  for (auto& record : records) {
    const std::string where = store_label("tasks", record.index, record.id);
    if (!record.parent.empty() && !in_store.contains(record.parent)) {
      dangle(where, "parent", record.parent);
      record.parent.clear();
    }
    std::erase_if(record.depends, [&](const std::string& dep) {
      if (in_store.contains(dep)) return false;
      dangle(where, "depends", dep);
      return true;
    });
    std::erase_if(record.relates, [&](const Relation& link) {
      if (in_store.contains(link.task_id)) return false;
      dangle(where, "relates", link.task_id);
      return true;
    });
  }

  // Sessions, checked as their records are.
  SessionSpecs specs{context.registry->find("session", "start"), context.registry->find("session", "note")};
  if (!specs.start || !specs.note) return fail(ErrorCode::Internal, "session.start or session.note is missing from the registry");
  std::vector<Session> sessions;
  json::Value session_problems = json::Value::array();
  std::map<std::string, std::string> given;  // this store's session id → the original's it was given for
  for (std::size_t i = 0; i < file.sessions.size(); ++i) {
    const json::Value& item = file.sessions.as_array()[i];
    Scope scope;
    auto session = read_session(item, specs, context.now(), scope);
    const std::string was = item["was"].string_or_empty();
    if (session) {
      auto [other, inserted] = given.emplace(session->id, was);
      if (!inserted)
        session = fail(Error(ErrorCode::Validation, "id: " + was + " and " + other->second + " both become " + session->id +
                                                        " here")
                           .with_detail("field", "id"));
    }
    if (!session) {
      json::Value problem = record_problem(i, json::Value(), session.error());
      problem.set("of", "sessions");
      if (!was.empty()) problem.set("id", was);
      session_problems.push_back(std::move(problem));
      continue;
    }
    bool complete = true;
    for (const auto& root : scope.ids)
      if (!in_store.contains(root)) {
        dangle(store_label("sessions", i, was), "scope", root);
        complete = false;
      }
    if (complete) sessions.push_back(std::move(*session));
  }
  if (!session_problems.empty() && !skip_invalid) {
    const json::Value& first = session_problems.as_array().front();
    return fail(Error(ErrorCode::Validation, "sessions: " + std::to_string(session_problems.size()) + " of " +
                                                 std::to_string(file.sessions.size()) + " sessions are invalid; first: " +
                                                 store_label("sessions", static_cast<std::size_t>(first["index"].as_int()),
                                                             first["id"].is_string() ? first["id"].as_string() : "") +
                                                 " " + first["message"].as_string())
                    .with_fix("correct them in the store, or pass skipInvalid:true to import without them: " +
                              call("tasks.import", {{"from", params.str("from")}, {"skipInvalid", true}, {"dryRun", true}}))
                    .with_detail("field", "sessions")
                    .with_detail("records", std::move(session_problems)));
  }
  for (auto& problem : session_problems.as_array()) problems.push_back(std::move(problem));

  // Memory (the original's brain), each entry memory.observe's params: checked as that call checks
  // them before anything is written; its references to tasks and files are references like the
  // others — a task the store does not hold, or a file outside this project, has no place here.
  const OperationSpec* observe = context.registry->find("memory", "observe");
  if (!observe) return fail(ErrorCode::Internal, "memory.observe is missing from the registry");
  std::vector<MemoryRecord> memory;
  json::Value memory_problems = json::Value::array();
  for (std::size_t i = 0; i < file.memory.size(); ++i) {
    const json::Value& item = file.memory.as_array()[i];
    MemoryRecord record{i, item["from"].string_or_empty(), item["params"]};
    const std::string where = store_label("memory", i, record.from);
    json::Value& observed = record.params;
    for (std::string_view field : {"taskId", "epic"})
      if (const json::Value& id = observed[field]; id.is_string() && !in_store.contains(id.as_string())) {
        dangle(where, field, id.as_string());
        observed.erase(field);
      }
    for (std::string_view field : {"tasks", "files"}) {
      if (!observed[field].is_array()) continue;
      json::Value kept = json::Value::array();
      for (const auto& value : observed[field].as_array()) {
        const std::string text = value.string_or_empty();
        std::optional<std::string> here = field == "tasks" ? (in_store.contains(text) ? std::optional(text) : std::nullopt)
                                                           : scope_path_here(context.project->root, text);
        if (!here) {
          dangle(where, field, text);
          continue;
        }
        if (std::find(kept.as_array().begin(), kept.as_array().end(), json::Value(*here)) == kept.as_array().end())
          kept.push_back(*here);
      }
      if (kept.empty()) observed.erase(field);
      else observed.set(field, std::move(kept));
    }
    if (auto checked = Params::validate(*observe, observed); !checked) {
      json::Value problem = record_problem(i, json::Value(), checked.error());
      problem.set("of", "memory");
      problem.set("id", record.from);
      memory_problems.push_back(std::move(problem));
      continue;
    }
    memory.push_back(std::move(record));
  }
  if (!memory_problems.empty() && !skip_invalid) {
    const json::Value& first = memory_problems.as_array().front();
    return fail(Error(ErrorCode::Validation, "memory: " + std::to_string(memory_problems.size()) + " of " +
                                                 std::to_string(file.memory.size()) + " entries are invalid; first: " +
                                                 store_label("memory", static_cast<std::size_t>(first["index"].as_int()),
                                                             first["id"].string_or_empty()) +
                                                 " " + first["message"].as_string())
                    .with_fix("correct them in the original, or pass skipInvalid:true to import without them: " +
                              call("tasks.import", {{"from", params.str("from")}, {"skipInvalid", true}, {"dryRun", true}}))
                    .with_detail("field", "memory")
                    .with_detail("records", std::move(memory_problems)));
  }
  for (auto& problem : memory_problems.as_array()) problems.push_back(std::move(problem));
  if (!dangling.empty()) {
    const json::Value& first = dangling.as_array().front();
    if (!skip_invalid) {
      constexpr std::size_t kListed = 50;
      json::Value listed = json::Value::array();
      for (std::size_t i = 0; i < dangling.size() && i < kListed; ++i) listed.push_back(dangling.as_array()[i]);
      const bool files = std::ranges::any_of(dangling.as_array(), [](const json::Value& item) {
        return item["field"] == json::Value("files");
      });
      return fail(Error(ErrorCode::Validation,
                        std::to_string(dangling.size()) + " reference(s) name tasks the store does not hold" +
                            (files ? " or files outside the project" : "") + "; first: " +
                            first["record"].as_string() + " " + first["field"].as_string() + " " +
                            first["missing"].as_string())
                      .with_fix("put those tasks back in the original first, or pass skipInvalid:true to import without "
                                "these references (each said): " +
                                call("tasks.import", {{"from", params.str("from")}, {"skipInvalid", true}, {"dryRun", true}}))
                      .with_detail("field", "tasks")
                      .with_detail("references", std::move(listed))
                      .with_detail("count", static_cast<std::int64_t>(dangling.size())));
    }
    constexpr std::size_t kSaid = 20;
    for (std::size_t i = 0; i < dangling.size() && i < kSaid; ++i) {
      const json::Value& item = dangling.as_array()[i];
      const std::string& field = item["field"].as_string();
      warnings.push_back(item["record"].as_string() + ": " + field + " " + item["missing"].as_string() +
                         (field == "files" ? " is outside the project; " : " is not in the store; ") +
                         (field == "parent" ? "placed at the top level"
                          : field == "scope" ? "the session is left out"
                                             : "dropped"));
    }
    if (dangling.size() > kSaid)
      warnings.push_back("… and " + std::to_string(dangling.size() - kSaid) + " more reference(s) to missing tasks");
  }

  // The tasks, then the sessions, then the config.
  std::vector<TaskType> types = kept_types(records);
  std::vector<Task> tasks;
  std::int64_t adjusted = 0, archived = 0;
  std::string last_id;
  for (std::size_t i = 0; i < records.size(); ++i) {
    tasks.push_back(kept_task(records[i], types[i], adjusted));
    if (tasks.back().archived) ++archived;
    if (last_id.empty() || *parse_task_id(tasks.back().id) > *parse_task_id(last_id)) last_id = tasks.back().id;
  }
  if (adjusted > 0)
    warnings.push_back(std::to_string(adjusted) + " time(s) made consistent: a completion, cancellation or archive "
                                                  "time missing or earlier than the task's creation or last change");
  auto engine_ = engine(context);
  CT_TRY(engine_.import_kept(std::move(tasks)));

  std::vector<std::string> taken;
  for (const auto& session : sessions) {
    CT_TRY_ASSIGN(std::optional<Session> existing, context.db().get_session(session.id));
    if (existing) taken.push_back(session.id);
  }
  if (!taken.empty())
    return fail(Error(ErrorCode::Validation, std::to_string(taken.size()) + " session(s) of the store are here already: " +
                                                  join(taken, ", ") + " (imported once before?)")
                    .with_fix("import into a store that holds none of them (a new project)")
                    .with_detail("taken", json::Value::array_of(taken)));
  for (const auto& session : sessions) {
    CT_TRY(context.db().insert_session(session));
    context.record(FieldChange{"", "session." + session.id, json::Value(), session_record(session)});
  }
  CT_TRY_ASSIGN(json::Value memory_report, import_memory(context, *observe, memory, warnings));
  CT_TRY_ASSIGN(json::Value config, apply_config(context, file.config, warnings));

  json::Value data = json::Value::object();
  data.set("imported", static_cast<std::int64_t>(records.size()));
  data.set("format", "original");
  data.set("generation", file.generation);
  data.set("store", file.source);
  if (archived > 0) data.set("archived", archived);
  if (!last_id.empty()) data.set("lastId", last_id);
  if (!sessions.empty()) data.set("sessions", static_cast<std::int64_t>(sessions.size()));
  if (!memory_report.is_null()) data.set("memory", std::move(memory_report));
  if (!config.empty()) data.set("config", std::move(config));
  data.set("mapped", std::move(file.mapped));
  if (!file.unmapped.empty()) data.set("unmapped", std::move(file.unmapped));
  if (!problems.empty()) data.set("skipped", std::move(problems));
  if (params.flag("dryRun")) data.set("dryRun", true);
  return Reply{std::move(data), std::move(warnings), {}, {}};
}

/// tasks.import's external step: what the call imports, read (files, the original's store and
/// memory) and the scope files its memory names hashed — before the write transaction, which
/// reads no file (core/file_read.h).
Result<Reply> read_for_import(Context& context, const Params& params) {
  const OperationSpec* add_spec = context.registry ? context.registry->find("tasks", "add") : nullptr;
  if (!add_spec) return fail(ErrorCode::Internal, "tasks.add is missing from the registry");
  CT_TRY_ASSIGN(ForeignFile file, read_input(context, params, *add_spec));
  std::vector<std::string> files;
  for (const auto& item : file.memory.as_array())
    if (item["params"]["files"].is_array())
      for (const auto& path : item["params"]["files"].as_array())
        if (auto here = scope_path_here(context.project->root, path.string_or_empty())) files.push_back(*here);
  json::Value data = json::Value::object();
  data.set("file", foreign_json(file));
  data.set("memoryFiles", read_files(context.project->root, files, process_hasher()));
  return Reply{std::move(data), {}, {}, {}};
}

}  // namespace

json::Value session_record(const Session& session) {
  json::Value out = json::Value::object();
  out.set("name", session.name);
  out.set("scope", session.scope);
  if (!session.agent.empty()) out.set("agent", session.agent);
  out.set("status", std::string(to_string(session.status)));
  if (!session.note.empty()) out.set("note", session.note);
  if (!session.next_action.empty()) out.set("nextAction", session.next_action);
  out.set("createdAt", format_iso8601(session.created_at));
  out.set("updatedAt", format_iso8601(session.updated_at));
  if (session.ended_at) out.set("endedAt", format_iso8601(*session.ended_at));
  if (session.archived_at) out.set("archivedAt", format_iso8601(*session.archived_at));
  return out;
}

Result<Session> session_from_record(const std::string& id, const json::Value& record) {
  auto time = [&](std::string_view field) -> std::optional<TimeMs> {
    return record[field].is_string() ? parse_iso8601(record[field].as_string()) : std::nullopt;
  };
  auto status = record["status"].is_string() ? parse_session_status(record["status"].as_string()) : std::nullopt;
  auto created = time("createdAt");
  auto updated = time("updatedAt");
  if (!status || !created || !updated || !record["scope"].is_string())
    return fail(ErrorCode::Internal, "the audit row's record of session " + id + " is incomplete");
  Session session;
  session.id = id;
  session.name = record["name"].string_or_empty();
  session.scope = record["scope"].as_string();
  session.agent = record["agent"].string_or_empty();
  session.status = *status;
  session.note = record["note"].string_or_empty();
  session.next_action = record["nextAction"].string_or_empty();
  session.created_at = *created;
  session.updated_at = *updated;
  session.ended_at = time("endedAt");
  session.archived_at = time("archivedAt");
  return session;
}

void register_tasks_import(Registry& registry) {
  // A task write: checked against session.enforcement and the bound session's scope.
  registry.add({.domain = "tasks", .name = "import", .gateway = Gateway::Mutate,
                .summary = "Import tasks from a file (new ids) or the original CLEO (ids kept)",
                .params = {{.name = "tasks", .type = ParamType::Object,
                            .description = "Records: tasks.export's data, Taskwarrior's `task export`, beads' "
                                           "issues.jsonl lines as an array (ct: a file or folder, read as from)",
                            .positional = true, .path_param = "from"},
                           {.name = "from", .type = ParamType::String, .max = 4096,
                            .description = "A file to read as tasks, or the original CLEO's store: its .cleo/ folder, "
                                           "todo.json or tasks.db (relative to the project root)",
                            .single_line = true},
                           {.name = "format", .type = ParamType::Enum, .default_json = R"("auto")",
                            .choices = {"auto", "cleo", "taskwarrior", "beads"},
                            .description = "What the records are (auto: told by their fields)"},
                           {.name = "parent", .type = ParamType::TaskId, .description = "Attach imported top-level tasks here"},
                           {.name = "skipInvalid", .type = ParamType::Bool,
                            .description = "Import the valid records and list the others; drop references to tasks "
                                           "not imported (default: refuse the whole import)"},
                           {.name = "dryRun", .type = ParamType::Bool, .description = "Check and report without writing",
                            .dry_run = true}},
                .returns = "{imported, idMap{oldId:newId}, skipped?[{index,id?,field?,message}], dryRun?, and for "
                           "another tracker's file format, mapped{field:where it went}, unmapped?{field:records}}; every "
                           "record passes tasks.add's validation; invalid ones are listed in error.details.records. "
                           "The original CLEO's store: {imported, format:'original', generation:json|sqlite, store, "
                           "archived?, lastId, sessions?, memory?{added, kinds, proposed?, held?, similar?}, "
                           "config?{key:value applied}, mapped, unmapped?, skipped?} — ids kept (E_VALIDATION names "
                           "those this store holds), sessions, config and its brain's entries (each a memory.observe) "
                           "come along, its log is counted in unmapped",
                .errors = {ErrorCode::Validation, ErrorCode::ParentNotFound, ErrorCode::DepthExceeded,
                           ErrorCode::SiblingLimit, ErrorCode::InvalidParentType, ErrorCode::CircularReference,
                           ErrorCode::NotFound, ErrorCode::FileError, ErrorCode::InvalidInput},
                .examples = {{R"({"tasks":[{"id":"T1","title":"Imported task"}],"dryRun":true})", "preview an import"},
                             {R"({"tasks":[{"uuid":"9a1c","description":"Buy milk","status":"pending","tags":["home"]}]})",
                              "import Taskwarrior's task export"},
                             {R"({"from":"old/.cleo","dryRun":true})", "what the original CLEO's store would bring"}},
                .needs_session = true,
                .tier = 2, .shortcut = "import", .text_view = TextView::Imported, .external = read_for_import,
                .external_checks_only = true, .handler = import_tasks});
}

}  // namespace ct::tasks
