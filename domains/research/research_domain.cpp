// research domain — the manifest of agent outputs (docs/architecture.md §5, issue 11): each entry names the
// file a (sub)agent wrote, what it found and the tasks it belongs to, stored with the tasks
// (schema v6) and searchable. Subagents append their entries as lines to the project's
// MANIFEST.jsonl (research.manifestFile); research.sync (research_sync.cpp) imports the new
// complete lines in one write transaction, idempotently. The rules of an entry and the reading of
// lines live in engines/rules/research.h; research.inject (the protocol text a subagent needs) is
// registered by disclosure/, since it is rendered from a template.
#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <fstream>

#include "core/text.h"
#include "domains/context.h"
#include "domains/params.h"
#include "domains/projection.h"
#include "domains/registry.h"
#include "domains/research/research_common.h"
#include "engines/rules/research.h"

namespace ct {
namespace {

using namespace research;

namespace fs = std::filesystem;

Error entry_not_found(const std::string& id) {
  return Error(ErrorCode::NotFound, "Research entry " + id + " not found")
      .with_fix(call("research.find", {{"query", id}}))
      .with_alternative("List research entries", "research.list")
      .with_detail("id", id);
}

Result<ResearchEntry> load(Context& context, const std::string& id) {
  CT_TRY_ASSIGN(std::optional<ResearchEntry> entry, context.db().get_research(id));
  if (!entry) return fail(entry_not_found(id));
  return std::move(*entry);
}

std::vector<std::string_view> row_fields() {
  std::vector<std::string_view> fields = research_field_names();
  for (auto extra : {"archived", "archivedAt", "createdAt", "updatedAt"}) fields.emplace_back(extra);
  return fields;
}

json::Value compact_json(const ResearchEntry& entry) {
  json::Value out = json::Value::object();
  out.set("id", entry.id);
  out.set("title", entry.title);
  out.set("status", to_string(entry.status));
  out.set("date", entry.date);
  out.set("agentType", entry.agent_type);
  if (entry.archived) out.set("archived", true);
  return out;
}

json::Value full_json(const ResearchEntry& entry) {
  json::Value out = research_manifest_json(entry);
  if (entry.archived) {
    out.set("archived", true);
    if (entry.archived_at) out.set("archivedAt", format_iso8601(*entry.archived_at));
  }
  out.set("createdAt", format_iso8601(entry.created_at));
  out.set("updatedAt", format_iso8601(entry.updated_at));
  return out;
}

json::Value row_json(const ResearchEntry& entry, const Params& params) {
  return wants_full(params) ? full_json(entry) : compact_json(entry);
}

Error conflict_error(const ResearchEntry& existing) {
  return Error(ErrorCode::Validation, "Research entry " + existing.id + " exists with different content")
      .with_fix("choose another id, or read the stored one: " + call("research.show", {{"id", existing.id}}))
      .with_detail("field", "id")
      .with_detail("id", existing.id);
}

// -- queries ----------------------------------------------------------------------------------

Result<Reply> show(Context& context, const Params& params) {
  CT_TRY_ASSIGN(ResearchEntry entry, load(context, params.str("id")));
  return Reply{full_json(entry), {}, {}, {}};
}

Result<Reply> list(Context& context, const Params& params) {
  ResearchQuery query;
  for (const auto& status : params.strings("status")) query.statuses.push_back(*parse_research_status(status));
  if (auto agent = params.opt_str("agentType")) query.agent_type = to_lower_ascii(*agent);
  if (auto topic = params.opt_str("topic")) query.topic = *topic;
  if (auto task = params.opt_str("taskId")) query.task_id = *task;
  query.actionable = params.opt_flag("actionable");
  if (auto archived = params.opt_str("archived"))
    query.archived = *archived == "only" ? ArchivedFilter::Only
                     : *archived == "include" ? ArchivedFilter::Include : ArchivedFilter::Exclude;
  query.limit = params.integer("limit");
  query.offset = params.integer("offset");
  CT_TRY_ASSIGN(std::vector<ResearchEntry> entries, context.db().list_research(query));
  CT_TRY_ASSIGN(std::int64_t total, context.db().count_research(query));
  json::Value rows = json::Value::array();
  for (const auto& entry : entries) rows.push_back(row_json(entry, params));
  Reply reply{std::move(rows), {}, Page{total, query.limit, query.offset}, {}};
  if (total == 0) reply.note = ErrorCode::NoData;
  return reply;
}

Result<Reply> find(Context& context, const Params& params) {
  const ArchivedFilter archived = params.flag("includeArchived") ? ArchivedFilter::Include : ArchivedFilter::Exclude;
  const std::int64_t offset = params.integer("offset");
  const std::int64_t limit = params.integer("limit");
  const std::string& text = params.str("query");
  CT_TRY_ASSIGN(std::vector<ResearchEntry> hits, context.db().search_research(text, archived, offset + limit + 1));
  const bool more = std::ssize(hits) > offset + limit;
  if (more) hits.pop_back();
  json::Value rows = json::Value::array();
  for (std::size_t i = static_cast<std::size_t>(std::min<std::int64_t>(offset, std::ssize(hits))); i < hits.size(); ++i)
    rows.push_back(row_json(hits[i], params));
  Reply reply{std::move(rows), {}, {}, {}};
  if (more || offset > 0) {
    CT_TRY_ASSIGN(std::int64_t total, context.db().count_research_matches(text, archived));
    reply.page = Page{total, static_cast<std::int64_t>(reply.data.size()), offset};
  }
  if (reply.data.empty()) reply.note = ErrorCode::NoData;
  return reply;
}

Result<Reply> pending(Context& context, const Params& params) {
  ResearchQuery query;
  query.needs_followup = true;
  query.limit = params.integer("limit");
  query.offset = params.integer("offset");
  CT_TRY_ASSIGN(std::vector<ResearchEntry> entries, context.db().list_research(query));
  CT_TRY_ASSIGN(std::int64_t total, context.db().count_research(query));
  json::Value rows = json::Value::array();
  for (const auto& entry : entries) {
    json::Value row = row_json(entry, params);
    if (!wants_full(params)) {
      row.set("needsFollowup", json::Value::array_of(entry.needs_followup));
      if (!entry.linked_tasks.empty()) row.set("linkedTasks", json::Value::array_of(entry.linked_tasks));
    }
    rows.push_back(std::move(row));
  }
  Reply reply{std::move(rows), {}, Page{total, query.limit, query.offset}, {}};
  if (total == 0) reply.note = ErrorCode::NoData;
  return reply;
}

Result<Reply> stats(Context& context, const Params&) {
  CT_TRY_ASSIGN(ResearchStats counts, context.db().research_stats());
  json::Value data = json::Value::object();
  data.set("total", counts.total);
  data.set("archived", counts.archived);
  data.set("actionable", counts.actionable);
  data.set("pending", counts.pending);
  data.set("linked", counts.linked);
  json::Value by_status = json::Value::object();
  for (auto status : {ResearchStatus::Complete, ResearchStatus::Partial, ResearchStatus::Blocked}) {
    auto found = counts.by_status.find(std::string(to_string(status)));
    by_status.set(to_string(status), found == counts.by_status.end() ? std::int64_t{0} : found->second);
  }
  data.set("byStatus", std::move(by_status));
  json::Value by_agent = json::Value::object();
  for (const auto& [agent, count] : counts.by_agent_type) by_agent.set(agent, count);
  data.set("byAgentType", std::move(by_agent));
  if (counts.average_confidence)
    data.set("averageConfidence", std::round(*counts.average_confidence * 100) / 100);
  const std::string file = context.config->get_string("research.manifestFile");
  json::Value manifest = json::Value::object();
  manifest.set("file", file);
  CT_TRY_ASSIGN(std::optional<ManifestCursor> cursor, context.db().get_manifest_cursor(file));
  if (cursor) {
    manifest.set("lines", cursor->lines);
    manifest.set("syncedAt", format_iso8601(cursor->synced_at));
    std::error_code ec;
    const auto size = fs::file_size(context.project->root / file, ec);
    if (!ec && static_cast<std::int64_t>(size) > cursor->offset)
      manifest.set("unsyncedBytes", static_cast<std::int64_t>(size) - cursor->offset);
  }
  data.set("manifest", std::move(manifest));
  std::optional<ErrorCode> note;
  if (counts.total == 0) note = ErrorCode::NoData;
  return Reply{std::move(data), {}, {}, note};
}

// -- mutations --------------------------------------------------------------------------------

/// research.add's params as the entry object the engine checks (the same rules as a manifest line).
json::Value entry_object(const Params& params) {
  json::Value object = json::Value::object();
  for (auto name : {"id", "file", "title", "date", "status", "agentType"})
    if (auto text = params.opt_str(name)) object.set(name, *text);
  for (auto name : {"topics", "keyFindings", "needsFollowup", "linkedTasks"})
    if (params.has(name)) object.set(name, json::Value::array_of(params.strings(name)));
  if (auto actionable = params.opt_flag("actionable")) object.set("actionable", *actionable);
  if (auto confidence = params.opt_str("confidence")) {
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
Result<Reply> hash_output(Context& context, const Params& params) {
  std::vector<std::string> files;
  std::vector<std::string> ignored;
  if (auto entry = parse_research_fields(entry_object(params), context.project->root, today(context), ignored))
    files.push_back(entry->file);
  json::Value data = json::Value::object();
  data.set("files", read_files(context.project->root, files, process_hasher()));
  return Reply{std::move(data), {}, {}, {}};
}

Result<Reply> add(Context& context, const Params& params) {
  std::vector<std::string> warnings;
  ReadFiles read(context.external ? context.external->data["files"] : json::Value());
  CT_TRY_ASSIGN(ResearchEntry entry,
                parse_research_entry(entry_object(params), context.project->root, today(context), warnings, read));
  CT_TRY_ASSIGN(std::optional<ResearchEntry> existing, context.db().get_research(entry.id));
  if (existing) {
    if (!same_research_content(*existing, entry)) return fail(conflict_error(*existing));
    return Reply{compact_json(*existing), {}, {}, ErrorCode::AlreadyExists};
  }
  CT_TRY_ASSIGN(std::optional<std::string> missing, missing_task(context, entry.linked_tasks));
  if (missing) return fail(task_not_found(*missing));
  entry.created_at = entry.updated_at = context.now();
  CT_TRY(context.db().put_research(entry));
  record(context, std::nullopt, entry);
  json::Value data = compact_json(entry);
  if (!entry.linked_tasks.empty()) data.set("linkedTasks", json::Value::array_of(entry.linked_tasks));
  return Reply{std::move(data), std::move(warnings), {}, {}};
}

json::Value link_json(const ResearchEntry& entry, const std::string& task) {
  json::Value data = json::Value::object();
  data.set("id", entry.id);
  data.set("taskId", task);
  data.set("linkedTasks", json::Value::array_of(entry.linked_tasks));
  return data;
}

Result<Reply> link(Context& context, const Params& params) {
  CT_TRY_ASSIGN(ResearchEntry entry, load(context, params.str("id")));
  const std::string& task = params.str("taskId");
  CT_TRY_ASSIGN(std::optional<std::string> missing, missing_task(context, {task}));
  if (missing) return fail(task_not_found(*missing));
  if (std::find(entry.linked_tasks.begin(), entry.linked_tasks.end(), task) != entry.linked_tasks.end())
    return Reply{link_json(entry, task), {}, {}, ErrorCode::NoChange};
  const ResearchEntry before = entry;
  entry.linked_tasks.push_back(task);
  entry.updated_at = context.now();
  CT_TRY(context.db().put_research(entry));
  record(context, before, entry);
  if (context.audit) context.audit->task_id = task;
  return Reply{link_json(entry, task), {}, {}, {}};
}

Result<Reply> unlink(Context& context, const Params& params) {
  CT_TRY_ASSIGN(ResearchEntry entry, load(context, params.str("id")));
  const std::string& task = params.str("taskId");
  auto found = std::find(entry.linked_tasks.begin(), entry.linked_tasks.end(), task);
  if (found == entry.linked_tasks.end()) return Reply{link_json(entry, task), {}, {}, ErrorCode::NoChange};
  const ResearchEntry before = entry;
  entry.linked_tasks.erase(found);
  entry.updated_at = context.now();
  CT_TRY(context.db().put_research(entry));
  record(context, before, entry);
  if (context.audit) context.audit->task_id = task;
  return Reply{link_json(entry, task), {}, {}, {}};
}

Result<Reply> archive(Context& context, const Params& params) {
  ResearchQuery query;
  query.date_before = params.str("before");
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
  data.set("before", params.str("before"));
  data.set("archived", static_cast<std::int64_t>(entries.size()));
  data.set("ids", std::move(ids));
  if (params.flag("dryRun")) data.set("dryRun", true);
  std::optional<ErrorCode> note;
  if (entries.empty()) note = ErrorCode::NoChange;
  return Reply{std::move(data), {}, {}, note};
}

// -- specs ------------------------------------------------------------------------------------

ParamSpec id_spec() {
  return {.name = "id", .type = ParamType::String, .required = true, .max = 120, .pattern = kResearchIdPattern,
          .description = "Entry id: task id, dash, slug (T001-auth-options)", .positional = true, .single_line = true};
}

ParamSpec task_spec() {
  return {.name = "taskId", .type = ParamType::TaskId, .required = true, .description = "The task", .positional = true};
}


constexpr std::string_view kDatePattern = "^[0-9]{4}-[0-9]{2}-[0-9]{2}$";

}  // namespace

void register_research_domain(Registry& registry) {
  const std::vector<std::string_view> fields = row_fields();
  registry.add({.domain = "research", .name = "show", .gateway = Gateway::Query,
                .summary = "Show one research entry",
                .params = {id_spec()},
                .returns = "{id, file, title, date, status, agentType, topics?, keyFindings?, actionable, "
                           "needsFollowup?, linkedTasks?, confidence?, fileChecksum?, archived?, createdAt, updatedAt}",
                .errors = {ErrorCode::NotFound},
                .examples = {{R"({"id":"T001-auth-options"})", "the entry T001-auth-options"}},
                .idempotent = true, .tier = 2, .handler = show});
  registry.add({.domain = "research", .name = "list", .gateway = Gateway::Query,
                .summary = "List research entries with filters, newest first",
                .params = {{.name = "status", .type = ParamType::Array, .choices = {"complete", "partial", "blocked"},
                            .item_type = ParamType::Enum, .description = "Only entries with one of these statuses"},
                           {.name = "agentType", .type = ParamType::String, .max = 40,
                            .description = "Only entries written by this kind of agent"},
                           {.name = "topic", .type = ParamType::String, .max = 60,
                            .description = "Only entries with this topic"},
                           {.name = "taskId", .type = ParamType::TaskId, .description = "Only entries linked to this task"},
                           {.name = "actionable", .type = ParamType::Bool,
                            .description = "Only actionable (true) or only not actionable (false) entries"},
                           {.name = "archived", .type = ParamType::Enum, .default_json = R"("exclude")",
                            .choices = {"exclude", "only", "include"},
                            .description = "Archived entries: leave out, only, or include"},
                           limit_param("50"), offset_param()},
                .returns = "[{id,title,status,date,agentType}] (full entries with detail:'full'); _meta.page when "
                           "there are more rows; E_NO_DATA note when none",
                .examples = {{R"({"status":["complete"],"limit":20})", "finished research"},
                             {R"({"taskId":"T001"})", "entries linked to T001"}},
                .idempotent = true, .tier = 2, .row_fields = fields, .aliases = {"tasks.manifest"},
                .original_names = {"research.manifest.read"}, .handler = list});
  registry.add({.domain = "research", .name = "find", .gateway = Gateway::Query,
                .summary = "Search research by title, topics and findings",
                .params = {{.name = "query", .type = ParamType::String, .required = true, .min = 1, .max = 200,
                            .description = "Words to search for (prefix match), or an entry id", .positional = true},
                           {.name = "includeArchived", .type = ParamType::Bool, .description = "Also search archived entries"},
                           {.name = "limit", .type = ParamType::Int, .default_json = "10", .min = 1, .max = 100,
                            .description = "Most results"},
                           offset_param()},
                .returns = "[{id,title,status,date,agentType}] best first; _meta.page when more match; E_NO_DATA "
                           "note when nothing matches",
                .examples = {{R"({"query":"auth"})", "research about auth"}},
                .idempotent = true, .tier = 2, .row_fields = fields,
                .original_names = {"research.query", "research.search"}, .handler = find});
  registry.add({.domain = "research", .name = "pending", .gateway = Gateway::Query,
                .summary = "List entries that still need follow-up",
                .params = {limit_param("50"), offset_param()},
                .returns = "[{id,title,status,date,agentType,needsFollowup,linkedTasks?}] newest first; E_NO_DATA "
                           "note when none",
                .examples = {{R"({})", "what research left open"}},
                .idempotent = true, .tier = 2, .row_fields = fields, .handler = pending});
  registry.add({.domain = "research", .name = "stats", .gateway = Gateway::Query,
                .summary = "Count research entries by status and agent type",
                .returns = "{total, archived, actionable, pending, linked, byStatus{complete,partial,blocked}, "
                           "byAgentType{}, averageConfidence?, manifest{file, lines?, syncedAt?, unsyncedBytes?}} "
                           "(archived entries only in total and archived); E_NO_DATA note when empty",
                .examples = {{R"({})", "the manifest in numbers"}},
                .idempotent = true, .tier = 2, .original_names = {"research.manifest.summary"}, .handler = stats});
  registry.add({.domain = "research", .name = "add", .gateway = Gateway::Mutate,
                .summary = "Record an agent output in the research manifest",
                .params = {id_spec(),
                           {.name = "file", .type = ParamType::String, .required = true, .max = 500,
                            .description = "The output file, relative to the project root (its SHA-256 is stored)",
                            .single_line = true},
                           {.name = "title", .type = ParamType::String, .required = true, .min = 3, .max = 200,
                            .description = "What the output is about", .single_line = true},
                           {.name = "status", .type = ParamType::Enum, .required = true,
                            .choices = {"complete", "partial", "blocked"}, .description = "How far the work got"},
                           {.name = "date", .type = ParamType::String, .max = 10, .pattern = kDatePattern,
                            .description = "YYYY-MM-DD (default today)"},
                           {.name = "agentType", .type = ParamType::String, .max = 40,
                            .description = "Kind of agent (default research: then 3–7 keyFindings are required)"},
                           {.name = "topics", .type = ParamType::Array, .max = 20, .item_max = 60,
                            .description = "Topics, for list and find"},
                           {.name = "keyFindings", .type = ParamType::Array, .max = 20, .item_max = 500,
                            .description = "The main findings, one sentence each (3–7)"},
                           {.name = "actionable", .type = ParamType::Bool,
                            .description = "The findings call for work"},
                           {.name = "needsFollowup", .type = ParamType::Array, .max = 20, .item_max = 500,
                            .description = "What is left open (research.pending lists these entries)"},
                           {.name = "linkedTasks", .type = ParamType::Array, .max = 50, .item_type = ParamType::TaskId,
                            .description = "Tasks it belongs to"},
                           {.name = "confidence", .type = ParamType::Scalar, .max = 20,
                            .description = "How sure the agent is, 0 to 1"}},
                .returns = "{id, title, status, date, agentType, linkedTasks?}; warnings for a missing file or, "
                           "outside research, a findings count outside 3–7; E_ALREADY_EXISTS note when the same "
                           "entry is stored",
                .errors = {ErrorCode::Validation, ErrorCode::NotFound},
                .examples = {{R"({"id":"T001-auth-options","file":"docs/auth.md","title":"Auth options",)"
                              R"("status":"complete","keyFindings":["OAuth fits","Sessions are simpler","Tokens expire"],)"
                              R"("linkedTasks":["T001"],"confidence":0.8})", "record a finished research output"}},
                .idempotent = true, .tier = 2, .original_names = {"research.manifest.append"},
                .external = hash_output, .external_checks_only = true, .handler = add});
  registry.add({.domain = "research", .name = "link", .gateway = Gateway::Mutate,
                .summary = "Link a research entry to a task (shown on the task)",
                .params = {id_spec(), task_spec()},
                .returns = "{id, taskId, linkedTasks}; E_NO_CHANGE note when already linked",
                .errors = {ErrorCode::NotFound},
                .examples = {{R"({"id":"T001-auth-options","taskId":"T002"})", "T002 builds on that research"}},
                .idempotent = true, .tier = 2, .handler = link});
  registry.add({.domain = "research", .name = "unlink", .gateway = Gateway::Mutate,
                .summary = "Remove a research entry's link to a task",
                .params = {id_spec(), task_spec()},
                .returns = "{id, taskId, linkedTasks}; E_NO_CHANGE note when not linked",
                .errors = {ErrorCode::NotFound},
                .examples = {{R"({"id":"T001-auth-options","taskId":"T002"})", "undo that link"}},
                .idempotent = true, .tier = 2, .handler = unlink});
  registry.add({.domain = "research", .name = "archive", .gateway = Gateway::Mutate,
                .summary = "Archive research entries dated before a day",
                .params = {{.name = "before", .type = ParamType::String, .required = true, .max = 10, .pattern = kDatePattern,
                            .description = "YYYY-MM-DD: entries dated earlier are archived", .positional = true},
                           {.name = "dryRun", .type = ParamType::Bool, .default_json = "false",
                            .description = "Count what would be archived; change nothing", .dry_run = true}},
                .returns = "{before, archived (count), ids[] (first 100), dryRun?}; E_NO_CHANGE note when none",
                .examples = {{R"({"before":"2026-01-01"})", "archive last year's research"}},
                .idempotent = true, .tier = 2, .original_names = {"research.manifest.archive"}, .handler = archive});
}

}  // namespace ct
