// tasks domain — tasks.import: another file's task records, each validated as tasks.add validates,
// with new ids; or the original CLEO's store (domains/tasks/original_store.h), whose tasks keep
// theirs, with its sessions and config (import_original.cpp). Either way one transaction and one
// audit row, which tasks.undo takes back whole. The records and the checks of the file:
// import_records.h.
#include <cctype>
#include <filesystem>
#include <map>
#include <set>

#include "domains/tasks/import_formats.h"
#include "domains/tasks/import_records.h"
#include "domains/tasks/original_store.h"
#include "domains/tasks/tasks_common.h"
#include "engines/rules/file_hashes.h"
#include "engines/rules/memory_symbols.h"

namespace ct::tasks {
namespace {

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


/// What the call imports: the records sent as `tasks`, or what `from` names — a file of records,
/// or the original CLEO's store.
Result<ForeignFile> read_input(Context& context, const ImportArgs& args, const OperationSpec& add_spec) {
  const std::string& format = args.format;
  const std::optional<std::string>& from = args.from;
  if (from && !args.tasks.is_null())
    return fail(Error(ErrorCode::InvalidParams, "give the records as tasks, or a file or folder as from, not both")
                    .with_detail("field", "from"));
  if (!from) {
    if (args.tasks.is_null())
      return fail(Error(ErrorCode::InvalidParams, "give the records as tasks, or a file or folder to read as from")
                      .with_fix(call("tasks.import", {{"from", ".cleo-old"}, {"dryRun", true}}))
                      .with_detail("field", "tasks"));
    if (looks_like_original_file(args.tasks))
      return fail(Error(ErrorCode::InvalidParams,
                        "tasks: this is the original CLEO's todo.json (or its archive); import its whole store, whose "
                        "tasks keep their ids, by naming its folder")
                      .with_fix(call("tasks.import", {{"from", "<its .cleo folder>"}, {"dryRun", true}}))
                      .with_detail("field", "tasks"));
    return read_foreign(args.tasks, format, add_spec, context.now());
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
  if (args.parent)
    return fail(Error(ErrorCode::InvalidParams, "parent: the original CLEO's tasks keep their own hierarchy; leave "
                                                "parent out")
                    .with_detail("field", "parent"));
  const OperationSpec* observe_spec = context.registry->find("memory", "observe");
  if (!observe_spec) return fail(ErrorCode::Internal, "memory.observe is missing from the registry");
  return read_original(*source.original, add_spec, *observe_spec);
}

/// Every record of the file read as tasks.add reads it. The invalid ones are listed in
/// `problems`; unless skipInvalid, they refuse the import, naming the first.
Result<std::vector<ImportRecord>> read_records(Context& context, const ImportArgs& args, const RecordSpecs& specs,
                                               const json::Value& list, bool keep_ids, json::Value& problems) {
  std::vector<ImportRecord> records;
  ErrorCode first_code = ErrorCode::InvalidParams;  // the refusal carries the first invalid record's code
  for (std::size_t i = 0; i < list.size(); ++i) {
    const json::Value& item = list.as_array()[i];
    auto record = read_record(context, specs, i, item, context.now(), keep_ids);
    if (record) {
      records.push_back(std::move(*record));
    } else {
      if (problems.empty()) first_code = record.error().code;
      problems.push_back(record_problem(i, item, record.error()));
    }
  }
  if (problems.empty() || args.skip_invalid) return records;
  const json::Value& first = problems.as_array().front();
  std::string message = "tasks: " + std::to_string(problems.size()) + " of " + std::to_string(list.size()) +
                        " records are invalid; first: tasks[" + std::to_string(first["index"].as_int()) + "]" +
                        (first["id"].is_string() ? " (" + first["id"].as_string() + ")" : "") + " " +
                        first["message"].as_string();
  Error error(first_code, std::move(message));
  json::Value again = json::Value::object();
  if (args.from) {
    again.set("from", *args.from);
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

/// Another file's records placed with new ids: parents first, then their dependencies, links and
/// final statuses. References outside the file are dropped (top-level tasks go under `attach`),
/// each with a warning.
class NewIds {
 public:
  NewIds(TaskEngine& engine, std::vector<ImportRecord>& records, std::vector<std::string>& warnings)
      : engine_(engine), records_(records), warnings_(warnings), new_ids_(records.size()) {}

  /// Repeats passes until every record whose parent is in the file has been placed.
  Result<void> place(const std::string& attach) {
    CT_TRY(engine_.reserve_ids(records_.size()));  // one update of the id counter, not one per record
    std::set<std::string> in_file;
    for (const auto& record : records_)
      if (!record.id.empty()) in_file.insert(record.id);
    std::vector<bool> placed(records_.size(), false);
    std::size_t remaining = records_.size();
    while (remaining > 0) {
      std::size_t progress = 0;
      for (std::size_t i = 0; i < records_.size(); ++i) {
        if (placed[i]) continue;
        ImportRecord& record = records_[i];
        bool parent_in_file = !record.parent.empty() && in_file.contains(record.parent);
        if (parent_in_file && !id_map_.contains(record.parent)) continue;
        NewTask spec = record.task;
        if (parent_in_file) {
          spec.parent = id_map_.at(record.parent);
        } else {
          if (!record.parent.empty())
            warnings_.push_back(label(record) + ": parent " + record.parent + " is not in the file; attached " +
                                (attach.empty() ? "at the top level" : "under " + attach));
          spec.parent = attach;
          if (!attach.empty()) spec.type.reset();
        }
        if (spec.status == TaskStatus::Blocked && spec.blocked_by.empty()) spec.blocked_by = "imported as blocked";
        auto added = engine_.add(std::move(spec));
        if (!added) return refused(record, std::move(added.error()));
        if (!record.id.empty()) id_map_[record.id] = added->id;
        new_ids_[i] = added->id;
        placed[i] = true;
        --remaining;
        ++progress;
      }
      if (progress == 0)  // check_file_links() refused every parent loop
        return fail(ErrorCode::Internal, "tasks.import: records left unplaced without a parent loop");
    }
    return {};
  }

  /// The second pass, now that every id is known: dependencies, then links and final statuses.
  /// Dependencies are given dependents first (dependents_first()): when a task gets its
  /// dependencies, theirs are still empty, so the task engine's cycle search from them stops at
  /// once. In the file's order it would walk every task reachable through the dependencies set
  /// before — along a chain of steps, all the earlier ones, for each task: quadratic.
  /// (check_file_links() has already refused a cycle in the file's terms; the engine's own check
  /// still runs on every edge.) Links and statuses follow in the file's order, on tasks whose
  /// dependencies are all in place.
  Result<void> link() {
    std::vector<std::vector<std::string>> depends(records_.size());
    std::vector<std::vector<const Relation*>> relates(records_.size());
    for (std::size_t i = 0; i < records_.size(); ++i) {
      const ImportRecord& record = records_[i];
      for (const auto& dep : record.depends) {
        if (auto found = id_map_.find(dep); found != id_map_.end()) {
          depends[i].push_back(found->second);
        } else {
          warnings_.push_back(label(record) + ": dependency " + dep + " is not in the file; dropped");
        }
      }
      for (const auto& relation : record.relates) {
        if (auto found = id_map_.find(relation.task_id); found == id_map_.end()) {
          warnings_.push_back(label(record) + ": link to " + relation.task_id + " is not in the file; dropped");
        } else if (found->second != new_ids_[i]) {
          relates[i].push_back(&relation);
        }
      }
    }
    for (std::size_t i : dependents_first()) {
      if (depends[i].empty()) continue;
      TaskPatch patch;
      patch.depends = std::move(depends[i]);
      if (auto updated = engine_.update(new_ids_[i], patch, std::nullopt); !updated)
        return refused(records_[i], std::move(updated.error()));
    }
    for (std::size_t i = 0; i < records_.size(); ++i) {
      const ImportRecord& record = records_[i];
      for (const Relation* relation : relates[i])
        if (auto related = engine_.relate(new_ids_[i], id_map_.at(relation->task_id), relation->type, relation->reason);
            !related)
          return refused(record, std::move(related.error()));
      if (record.status == TaskStatus::Done) {
        if (auto completed = engine_.complete(new_ids_[i], "", std::nullopt); !completed)
          return refused(record, std::move(completed.error()));
      } else if (record.status == TaskStatus::Cancelled) {
        DeleteOptions options;
        options.reason = record.cancellation_reason;
        options.children = ChildStrategy::Orphan;
        if (auto removed = engine_.remove(new_ids_[i], options, std::nullopt); !removed)
          return refused(record, std::move(removed.error()));
      }
    }
    return {};
  }

  /// {file id: new id}. The map's keys are unique, so each member is appended: json::Value::set
  /// would look for the key among those before it, a scan per id.
  json::Value id_map() const {
    json::Value::Object mapping;
    mapping.reserve(id_map_.size());
    for (const auto& [old_id, new_id] : id_map_) mapping.emplace_back(old_id, new_id);
    return json::Value(std::move(mapping));
  }

 private:
  static std::string label(const ImportRecord& record) { return record_label(record.index, record.id); }

  /// The records ordered so that each comes before every record it depends on (Kahn's algorithm
  /// on the file's dependencies, in the file's order where the links leave a choice). The file
  /// has no cycle (check_file_links()); a record a cycle would leave out still comes last.
  std::vector<std::size_t> dependents_first() const {
    std::map<std::string, std::size_t> at;  // file id → record
    for (std::size_t i = 0; i < records_.size(); ++i)
      if (!records_[i].id.empty()) at.emplace(records_[i].id, i);
    std::vector<std::vector<std::size_t>> on(records_.size());  // record → the records it depends on
    std::vector<std::size_t> dependents(records_.size(), 0);
    for (std::size_t i = 0; i < records_.size(); ++i)
      for (const auto& dep : records_[i].depends)
        if (auto found = at.find(dep); found != at.end()) {
          on[i].push_back(found->second);
          ++dependents[found->second];
        }
    std::vector<std::size_t> order;
    order.reserve(records_.size());
    for (std::size_t i = 0; i < records_.size(); ++i)
      if (dependents[i] == 0) order.push_back(i);
    for (std::size_t next = 0; next < order.size(); ++next)
      for (std::size_t dep : on[order[next]])
        if (--dependents[dep] == 0) order.push_back(dep);
    std::vector<bool> listed(records_.size(), false);
    for (std::size_t i : order) listed[i] = true;
    for (std::size_t i = 0; i < records_.size(); ++i)
      if (!listed[i]) order.push_back(i);
    return order;
  }

  /// What the task engine refuses while writing is told in the file's terms: the ids this import
  /// gave are rolled back with it, so the record that was being written is named instead.
  std::unexpected<Error> refused(const ImportRecord& record, Error error) const {
    std::map<std::string, std::string> given;
    for (std::size_t j = 0; j < records_.size(); ++j)
      if (!new_ids_[j].empty()) given.emplace(new_ids_[j], label(records_[j]));
    return fail(in_file_terms(std::move(error), label(record), given));
  }

  TaskEngine& engine_;
  std::vector<ImportRecord>& records_;
  std::vector<std::string>& warnings_;
  std::map<std::string, std::string> id_map_;  // file id → new id
  std::vector<std::string> new_ids_;           // each record's
};

/// tasks.import: the export format (or a bare array of task records), another tracker's file, or
/// the original CLEO's store. Every record passes the validation of tasks.add. Other files' tasks
/// get new ids: parent and depends references inside the file are remapped, references outside
/// it are dropped with a warning. The original's keep theirs (import_kept). The whole import is
/// one transaction: it lands completely or not at all (with skipInvalid, the valid records land
/// and the others are listed).
Result<Reply> import_tasks(Context& context, const ImportArgs& args, NestedRuns& runs) {
  RecordSpecs specs;
  if (context.registry) {
    specs.add = context.registry->find("tasks", "add");
    specs.remove = context.registry->find("tasks", "delete");
    specs.relate = context.registry->find("tasks", "relate");
  }
  if (!specs.add || !specs.remove || !specs.relate)
    return fail(ErrorCode::Internal, "tasks.add, tasks.delete or tasks.relate is missing from the registry");
  json::Value* read = context.external ? context.external->data.find("file") : nullptr;
  if (!read || !read->is_object())
    return fail(ErrorCode::Internal, "tasks.import: its input was not read before the transaction");
  // Taken, not copied: the external step's reply is read by this handler alone, once.
  ForeignFile file = foreign_from_json(std::move(*read));
  const bool keep_ids = file.format == "original";
  CT_TRY(check_unique_ids(file.records));
  json::Value problems = json::Value::array();
  CT_TRY_ASSIGN(std::vector<ImportRecord> records, read_records(context, args, specs, file.records, keep_ids, problems));
  CT_TRY(check_file_links(records));
  if (keep_ids) return import_kept(context, runs, args, std::move(file), std::move(records), std::move(problems));
  file.records = json::Value();  // read into `records`: not held while the tasks are written

  auto engine_ = engine(context);
  std::vector<std::string> warnings = std::move(file.warnings);
  NewIds placing(engine_, records, warnings);
  CT_TRY(placing.place(args.parent.value_or("")));
  CT_TRY(placing.link());
  json::Value data = json::Value::object();
  data.set("imported", static_cast<std::int64_t>(records.size()));
  data.set("idMap", placing.id_map());
  if (!problems.empty()) data.set("skipped", std::move(problems));
  if (file.format != "cleo") {
    data.set("format", file.format);
    data.set("mapped", std::move(file.mapped));
    if (!file.unmapped.empty()) data.set("unmapped", std::move(file.unmapped));
  }
  if (args.dry_run) data.set("dryRun", true);
  return Reply::warned(std::move(data), std::move(warnings));
}

/// tasks.import's external step: what the call imports, read (files, the original's store and
/// memory) and the scope files its memory names hashed — before the write transaction, which
/// reads no file (core/file_read.h).
Result<Reply> read_for_import(Context& context, const ImportArgs& args) {
  const OperationSpec* add_spec = context.registry ? context.registry->find("tasks", "add") : nullptr;
  if (!add_spec) return fail(ErrorCode::Internal, "tasks.add is missing from the registry");
  CT_TRY_ASSIGN(ForeignFile file, read_input(context, args, *add_spec));
  std::vector<std::string> files;
  for (const auto& item : file.memory.as_array())
    if (item["params"]["files"].is_array())
      for (const auto& path : item["params"]["files"].as_array())
        if (auto here = scope_path_here(context.work_root(), path.string_or_empty())) files.push_back(*here);
  json::Value data = json::Value::object();
  data.set("file", foreign_json(std::move(file)));
  data.set("memoryFiles", memory::read_scopes(context.work_root(), files));
  return Reply::of(std::move(data));
}

}  // namespace

void register_tasks_import(Registry& registry) {
  const auto args = bind(
      field(&ImportArgs::tasks, {.name = "tasks", .type = ParamType::Object,
                                 .description = "Records: tasks.export's data, Taskwarrior's `task export`, beads' "
                                                "issues.jsonl lines as an array (ct: a file or folder, read as from)",
                                 .positional = true, .path_param = "from"}),
      field(&ImportArgs::from, {.name = "from", .type = ParamType::String, .max = 4096,
                                .description = "A file to read as tasks, or the original CLEO's store: its .cleo/ "
                                               "folder, todo.json or tasks.db (relative to the project root)",
                                .single_line = true}),
      field(&ImportArgs::format, {.name = "format", .type = ParamType::Enum, .default_json = R"("auto")",
                                  .choices = {"auto", "cleo", "taskwarrior", "beads"},
                                  .description = "What the records are (auto: told by their fields)"}),
      field(&ImportArgs::parent, {.name = "parent", .type = ParamType::TaskId,
                                  .description = "Attach imported top-level tasks here"}),
      field(&ImportArgs::skip_invalid, {.name = "skipInvalid", .type = ParamType::Bool,
                                        .description = "Import the valid records and list the others; drop references "
                                                       "to tasks not imported (default: refuse the whole import)"}),
      field(&ImportArgs::dry_run, {.name = "dryRun", .type = ParamType::Bool,
                                   .description = "Check and report without writing", .dry_run = true}));
  // A task write: checked against session.enforcement and the bound session's scope.
  registry.add({.domain = "tasks", .name = "import", .gateway = Gateway::Mutate,
                .summary = "Import tasks from a file (new ids) or the original CLEO (ids kept)",
                .params = args.specs(),
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
                .tier = 2, .shortcut = "import", .text_view = TextView::Imported,
                .external = args.handler(read_for_import), .external_checks_only = true,
                .handler = args.handler(import_tasks)});
}

}  // namespace ct::tasks
