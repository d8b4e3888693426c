// tasks domain — tasks.import: another file's task records, each validated as tasks.add validates.
#include <algorithm>
#include <cctype>
#include <map>
#include <set>

#include "core/text.h"
#include "domains/tasks/import_formats.h"
#include "domains/tasks/tasks_common.h"

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

/// Reads a record through the tasks.add spec: every text is trimmed, bounded and free of control
/// characters, every enum value one of its choices — nothing the agent API refuses is stored.
Result<ImportRecord> read_record(const OperationSpec& add_spec, const OperationSpec& delete_spec,
                                 const OperationSpec& relate_spec, std::size_t index, const json::Value& item, TimeMs now) {
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

/// tasks.import: the export format (or a bare array of task records). Every record passes the
/// validation of tasks.add; every task gets a new id; parent and depends references inside the
/// file are remapped, references outside it are dropped with a warning. The whole import is one
/// transaction: it lands completely or not at all (with skipInvalid, the valid records land and
/// the others are listed).
Result<Reply> import_tasks(Context& context, const Params& params) {
  const OperationSpec* add_spec = context.registry ? context.registry->find("tasks", "add") : nullptr;
  const OperationSpec* delete_spec = context.registry ? context.registry->find("tasks", "delete") : nullptr;
  const OperationSpec* relate_spec = context.registry ? context.registry->find("tasks", "relate") : nullptr;
  if (!add_spec || !delete_spec || !relate_spec)
    return fail(ErrorCode::Internal, "tasks.add, tasks.delete or tasks.relate is missing from the registry");
  CT_TRY_ASSIGN(ForeignFile file, read_foreign(params.value("tasks"), params.str("format"), *add_spec, context.now()));
  const json::Value* list = &file.records;
  const bool skip_invalid = params.flag("skipInvalid");
  CT_TRY(check_unique_ids(*list));
  std::vector<ImportRecord> records;
  json::Value problems = json::Value::array();
  ErrorCode first_code = ErrorCode::InvalidParams;  // the refusal carries the first invalid record's code
  for (std::size_t i = 0; i < list->size(); ++i) {
    const json::Value& item = list->as_array()[i];
    auto record = read_record(*add_spec, *delete_spec, *relate_spec, i, item, context.now());
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
    error.fix = "correct the records in error.details.records, or pass skipInvalid:true to import the others: " +
                call("tasks.import", {{"tasks", json::Value::Array{"..."}}, {"skipInvalid", true}, {"dryRun", true}});
    constexpr std::size_t kListed = 50;
    json::Value listed = json::Value::array();
    for (std::size_t i = 0; i < problems.size() && i < kListed; ++i) listed.push_back(problems.as_array()[i]);
    return fail(std::move(error).with_detail("field", "tasks").with_detail("records", std::move(listed))
                    .with_detail("invalid", static_cast<std::int64_t>(problems.size())));
  }
  CT_TRY(check_file_links(records));

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

}  // namespace

void register_tasks_import(Registry& registry) {
  // A task write: checked against session.enforcement and the bound session's scope.
  registry.add({.domain = "tasks", .name = "import", .gateway = Gateway::Mutate,
                .summary = "Import tasks (tasks.export, Taskwarrior, beads) with new ids",
                .params = {{.name = "tasks", .type = ParamType::Object, .required = true,
                            .description = "Records: tasks.export's data, Taskwarrior's `task export`, beads' "
                                           "issues.jsonl lines as an array (ct: a file)",
                            .positional = true},
                           {.name = "format", .type = ParamType::Enum, .default_json = R"("auto")",
                            .choices = {"auto", "cleo", "taskwarrior", "beads"},
                            .description = "What the records are (auto: told by their fields)"},
                           {.name = "parent", .type = ParamType::TaskId, .description = "Attach imported top-level tasks here"},
                           {.name = "skipInvalid", .type = ParamType::Bool,
                            .description = "Import the valid records and list the others (default: refuse the whole file)"},
                           {.name = "dryRun", .type = ParamType::Bool, .description = "Check and report without writing",
                            .dry_run = true}},
                .returns = "{imported, idMap{oldId:newId}, skipped?[{index,id?,field?,message}], dryRun?, and for "
                           "another tracker's file format, mapped{field:where it went}, unmapped?{field:records}}; every "
                           "record passes tasks.add's validation; invalid ones are listed in error.details.records",
                .errors = {ErrorCode::Validation, ErrorCode::ParentNotFound, ErrorCode::DepthExceeded,
                           ErrorCode::SiblingLimit, ErrorCode::InvalidParentType, ErrorCode::CircularReference,
                           ErrorCode::NotFound},
                .examples = {{R"({"tasks":[{"id":"T1","title":"Imported task"}],"dryRun":true})", "preview an import"},
                             {R"({"tasks":[{"uuid":"9a1c","description":"Buy milk","status":"pending","tags":["home"]}]})",
                              "import Taskwarrior's task export"}},
                .needs_session = true,
                .tier = 2, .shortcut = "import", .text_view = TextView::Imported, .handler = import_tasks});
}

}  // namespace ct::tasks
