// research domain, its changes: an entry added (research.add checks it as a manifest line is
// checked, its output file hashed in the external step), linked to tasks and unlinked (both
// directions), and old entries archived. The reads are research_query.cpp's; MANIFEST.jsonl's lines
// come in through research_sync.cpp.
#include <algorithm>
#include <charconv>

#include "domains/bind.h"
#include "domains/registry.h"
#include "domains/research/research_common.h"

namespace ct::research {
namespace {

Error conflict_error(const ResearchEntry& existing) {
  return Error(ErrorCode::Validation, "Research entry " + existing.id + " exists with different content")
      .with_fix("choose another id, or read the stored one: " + call("research.show", {{"id", existing.id}}))
      .with_detail("field", "id")
      .with_detail("id", existing.id);
}

/// research.add's params: the fields of a manifest line.
struct AddArgs {
  std::string id;
  std::string file;
  std::string title;
  std::string status;
  std::optional<std::string> date;
  std::optional<std::string> agent_type;
  std::optional<std::vector<std::string>> topics;
  std::optional<std::vector<std::string>> key_findings;
  std::optional<bool> actionable;
  std::optional<std::vector<std::string>> needs_followup;
  std::optional<std::vector<std::string>> linked_tasks;
  std::optional<std::string> confidence;  // a Scalar: its text
};

/// research.add's params as the entry object the engine checks (the same rules as a manifest line).
json::Value entry_object(const AddArgs& args) {
  json::Value object = json::Value::object();
  object.set("id", args.id);
  object.set("file", args.file);
  object.set("title", args.title);
  if (args.date) object.set("date", *args.date);
  object.set("status", args.status);
  if (args.agent_type) object.set("agentType", *args.agent_type);
  if (args.topics) object.set("topics", json::Value::array_of(*args.topics));
  if (args.key_findings) object.set("keyFindings", json::Value::array_of(*args.key_findings));
  if (args.needs_followup) object.set("needsFollowup", json::Value::array_of(*args.needs_followup));
  if (args.linked_tasks) object.set("linkedTasks", json::Value::array_of(*args.linked_tasks));
  if (args.actionable) object.set("actionable", *args.actionable);
  if (const auto& confidence = args.confidence) {
    // A number is passed on as one; any other text reaches the engine's rule as text.
    double number = 0;
    const char* begin = confidence->data();
    const char* end = begin + confidence->size();
    auto [at, ec] = std::from_chars(begin, end, number);
    if (ec == std::errc() && at == end) object.set("confidence", number);
    else object.set("confidence", *confidence);
  }
  return object;
}

/// research.add's external step: the output file hashed before the transaction.
Result<Reply> hash_output(Context& context, const AddArgs& args) {
  std::vector<std::string> files;
  std::vector<std::string> ignored;
  if (auto entry = parse_research_fields(entry_object(args), context.project->root, today(context), ignored))
    files.push_back(entry->file);
  json::Value data = json::Value::object();
  data.set("files", read_files(context.project->root, files, process_hasher()));
  return Reply::of(std::move(data));
}

Result<Reply> add(Context& context, const AddArgs& args) {
  std::vector<std::string> warnings;
  ReadFiles read(context.external ? context.external->data["files"] : json::Value());
  CT_TRY_ASSIGN(ResearchEntry entry,
                parse_research_entry(entry_object(args), context.project->root, today(context), warnings, read));
  CT_TRY_ASSIGN(std::optional<ResearchEntry> existing, context.db().get_research(entry.id));
  if (existing) {
    if (!same_research_content(*existing, entry)) return fail(conflict_error(*existing));
    return Reply::noted(compact_json(*existing), ErrorCode::AlreadyExists);
  }
  CT_TRY_ASSIGN(std::optional<std::string> missing, missing_task(context, entry.linked_tasks));
  if (missing) return fail(task_not_found(*missing));
  entry.created_at = entry.updated_at = context.now();
  CT_TRY(context.db().put_research(entry));
  record(context, std::nullopt, entry);
  json::Value data = compact_json(entry);
  if (!entry.linked_tasks.empty()) data.set("linkedTasks", json::Value::array_of(entry.linked_tasks));
  return Reply::warned(std::move(data), std::move(warnings));
}

json::Value link_json(const ResearchEntry& entry, const std::string& task) {
  json::Value data = json::Value::object();
  data.set("id", entry.id);
  data.set("taskId", task);
  data.set("linkedTasks", json::Value::array_of(entry.linked_tasks));
  return data;
}

/// link and unlink: the entry and the task.
struct LinkArgs {
  std::string id;
  std::string task_id;
};

Result<Reply> link(Context& context, const LinkArgs& args) {
  CT_TRY_ASSIGN(ResearchEntry entry, load(context, args.id));
  const std::string& task = args.task_id;
  CT_TRY_ASSIGN(std::optional<std::string> missing, missing_task(context, {task}));
  if (missing) return fail(task_not_found(*missing));
  if (std::find(entry.linked_tasks.begin(), entry.linked_tasks.end(), task) != entry.linked_tasks.end())
    return Reply::noted(link_json(entry, task), ErrorCode::NoChange);
  const ResearchEntry before = entry;
  entry.linked_tasks.push_back(task);
  entry.updated_at = context.now();
  CT_TRY(context.db().put_research(entry));
  record(context, before, entry);
  if (context.audit) context.audit->task_id = task;
  return Reply::of(link_json(entry, task));
}

Result<Reply> unlink(Context& context, const LinkArgs& args) {
  CT_TRY_ASSIGN(ResearchEntry entry, load(context, args.id));
  const std::string& task = args.task_id;
  auto found = std::find(entry.linked_tasks.begin(), entry.linked_tasks.end(), task);
  if (found == entry.linked_tasks.end()) return Reply::noted(link_json(entry, task), ErrorCode::NoChange);
  const ResearchEntry before = entry;
  entry.linked_tasks.erase(found);
  entry.updated_at = context.now();
  CT_TRY(context.db().put_research(entry));
  record(context, before, entry);
  if (context.audit) context.audit->task_id = task;
  return Reply::of(link_json(entry, task));
}

struct ArchiveArgs {
  std::string before;
  bool dry_run = false;
};

Result<Reply> archive(Context& context, const ArchiveArgs& args) {
  ResearchQuery query;
  query.date_before = args.before;
  CT_TRY_ASSIGN(std::vector<ResearchEntry> entries, context.db().list_research(query));
  json::Value ids = json::Value::array();
  for (auto& entry : entries) {
    const ResearchEntry before = entry;
    entry.archived = true;
    entry.archived_at = entry.updated_at = context.now();
    CT_TRY(context.db().put_research(entry));
    record(context, before, entry);
    if (ids.size() < kListedInReply) ids.push_back(entry.id);
  }
  json::Value data = json::Value::object();
  data.set("before", args.before);
  data.set("archived", static_cast<std::int64_t>(entries.size()));
  data.set("ids", std::move(ids));
  if (args.dry_run) data.set("dryRun", true);
  std::optional<ErrorCode> note;
  if (entries.empty()) note = ErrorCode::NoChange;
  return Reply::noted(std::move(data), note);
}

Binding<LinkArgs> link_args() {
  return bind(field(&LinkArgs::id, id_spec()),
              field(&LinkArgs::task_id, {.name = "taskId", .type = ParamType::TaskId, .required = true,
                                         .description = "The task", .positional = true}));
}

constexpr std::string_view kDatePattern = "^[0-9]{4}-[0-9]{2}-[0-9]{2}$";

}  // namespace

void register_research_mutations(Registry& registry) {
  const auto add_args = bind(
      field(&AddArgs::id, id_spec()),
      field(&AddArgs::file, {.name = "file", .type = ParamType::String, .required = true, .max = 500,
                             .description = "The output file, relative to the project root (its SHA-256 is stored)",
                             .single_line = true}),
      field(&AddArgs::title, {.name = "title", .type = ParamType::String, .required = true, .min = 3, .max = 200,
                              .description = "What the output is about", .single_line = true}),
      field(&AddArgs::status, {.name = "status", .type = ParamType::Enum, .required = true,
                               .choices = {"complete", "partial", "blocked"}, .description = "How far the work got"}),
      field(&AddArgs::date, {.name = "date", .type = ParamType::String, .max = 10, .pattern = kDatePattern,
                             .description = "YYYY-MM-DD (default today)"}),
      field(&AddArgs::agent_type, {.name = "agentType", .type = ParamType::String, .max = 40,
                                   .description = "Kind of agent (default research: then 3–7 keyFindings are required)"}),
      field(&AddArgs::topics, {.name = "topics", .type = ParamType::Array, .max = 20, .item_max = 60,
                               .description = "Topics, for list and find"}),
      field(&AddArgs::key_findings, {.name = "keyFindings", .type = ParamType::Array, .max = 20, .item_max = 500,
                                     .description = "The main findings, one sentence each (3–7)"}),
      field(&AddArgs::actionable,
            {.name = "actionable", .type = ParamType::Bool, .description = "The findings call for work"}),
      field(&AddArgs::needs_followup, {.name = "needsFollowup", .type = ParamType::Array, .max = 20, .item_max = 500,
                                       .description = "What is left open (research.pending lists these entries)"}),
      field(&AddArgs::linked_tasks, {.name = "linkedTasks", .type = ParamType::Array, .max = 50,
                                     .item_type = ParamType::TaskId, .description = "Tasks it belongs to"}),
      field(&AddArgs::confidence, {.name = "confidence", .type = ParamType::Scalar, .max = 20,
                                   .description = "How sure the agent is, 0 to 1"}));
  registry.add({.domain = "research", .name = "add", .gateway = Gateway::Mutate,
                .summary = "Record an agent output in the research manifest",
                .params = add_args.specs(),
                .returns = "{id, title, status, date, agentType, linkedTasks?}; warnings for a missing file or, "
                           "outside research, a findings count outside 3–7; E_ALREADY_EXISTS note when the same "
                           "entry is stored",
                .errors = {ErrorCode::Validation, ErrorCode::NotFound},
                .examples = {{R"({"id":"T001-auth-options","file":"docs/auth.md","title":"Auth options",)"
                              R"("status":"complete","keyFindings":["OAuth fits","Sessions are simpler","Tokens expire"],)"
                              R"("linkedTasks":["T001"],"confidence":0.8})", "record a finished research output"}},
                .idempotent = true, .tier = 2, .original_names = {"research.manifest.append"},
                .external = add_args.handler(hash_output), .external_checks_only = true, .handler = add_args.handler(add)});
  const auto linked = link_args();
  registry.add({.domain = "research", .name = "link", .gateway = Gateway::Mutate,
                .summary = "Link a research entry to a task (shown on the task)",
                .params = linked.specs(),
                .returns = "{id, taskId, linkedTasks}; E_NO_CHANGE note when already linked",
                .errors = {ErrorCode::NotFound},
                .examples = {{R"({"id":"T001-auth-options","taskId":"T002"})", "T002 builds on that research"}},
                .idempotent = true, .tier = 2, .handler = linked.handler(link)});
  registry.add({.domain = "research", .name = "unlink", .gateway = Gateway::Mutate,
                .summary = "Remove a research entry's link to a task",
                .params = linked.specs(),
                .returns = "{id, taskId, linkedTasks}; E_NO_CHANGE note when not linked",
                .errors = {ErrorCode::NotFound},
                .examples = {{R"({"id":"T001-auth-options","taskId":"T002"})", "undo that link"}},
                .idempotent = true, .tier = 2, .handler = linked.handler(unlink)});
  const auto archive_args =
      bind(field(&ArchiveArgs::before, {.name = "before", .type = ParamType::String, .required = true, .max = 10,
                                        .pattern = kDatePattern,
                                        .description = "YYYY-MM-DD: entries dated earlier are archived", .positional = true}),
           field(&ArchiveArgs::dry_run, {.name = "dryRun", .type = ParamType::Bool, .default_json = "false",
                                         .description = "Count what would be archived; change nothing", .dry_run = true}));
  registry.add({.domain = "research", .name = "archive", .gateway = Gateway::Mutate,
                .summary = "Archive research entries dated before a day",
                .params = archive_args.specs(),
                .returns = "{before, archived (count), ids[] (first 100), dryRun?}; E_NO_CHANGE note when none",
                .examples = {{R"({"before":"2026-01-01"})", "archive last year's research"}},
                .idempotent = true, .tier = 2, .original_names = {"research.manifest.archive"},
                .handler = archive_args.handler(archive)});
}

}  // namespace ct::research
