// research domain — the manifest of agent outputs (docs/architecture.md §5, issue 11), its reads:
// an entry, lists, a search, what is pending and the counts. Each entry names the file a
// (sub)agent wrote, what it found and the tasks it belongs to, stored with the tasks (schema v6)
// and searchable. The changes are research_mutate.cpp's, the import of MANIFEST.jsonl
// research_sync.cpp's; the rules of an entry live in engines/rules/research.h; research.inject
// (the protocol text a subagent needs) is registered by disclosure/, since it is rendered from a
// template.
#include <cmath>
#include <filesystem>

#include "domains/bind.h"
#include "domains/registry.h"
#include "domains/research/research_common.h"

namespace ct::research {
namespace {

namespace fs = std::filesystem;

std::vector<std::string_view> row_fields() {
  std::vector<std::string_view> fields = research_field_names();
  for (auto extra : {"archived", "archivedAt", "createdAt", "updatedAt"}) fields.emplace_back(extra);
  return fields;
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

json::Value row_json(const ResearchEntry& entry, const Projection& rows) {
  return rows.full ? full_json(entry) : compact_json(entry);
}

struct IdArgs {
  std::string id;
};

Result<Reply> show(Context& context, const IdArgs& args) {
  CT_TRY_ASSIGN(ResearchEntry entry, load(context, args.id));
  return Reply::of(full_json(entry));
}

struct ListArgs {
  std::vector<std::string> status;
  std::optional<std::string> agent_type;
  std::optional<std::string> topic;
  std::optional<std::string> task_id;
  std::optional<bool> actionable;
  std::string archived;
  Paging page;
  Projection rows;
};

Result<Reply> list(Context& context, const ListArgs& args) {
  ResearchQuery query;
  for (const auto& status : args.status) query.statuses.push_back(*parse_research_status(status));
  if (args.agent_type) query.agent_type = to_lower_ascii(*args.agent_type);
  if (args.topic) query.topic = *args.topic;
  if (args.task_id) query.task_id = *args.task_id;
  query.actionable = args.actionable;
  query.archived = args.archived == "only"      ? ArchivedFilter::Only
                   : args.archived == "include" ? ArchivedFilter::Include
                                                : ArchivedFilter::Exclude;
  query.limit = args.page.limit;
  query.offset = args.page.offset;
  CT_TRY_ASSIGN(std::vector<ResearchEntry> entries, context.db().list_research(query));
  CT_TRY_ASSIGN(std::int64_t total, context.db().count_research(query));
  json::Value rows = json::Value::array();
  for (const auto& entry : entries) rows.push_back(row_json(entry, args.rows));
  Reply reply = Reply::paged(std::move(rows), Page{total, query.limit, query.offset});
  reply.note = no_data_if(total == 0);
  return reply;
}

struct FindArgs {
  std::string query;
  bool include_archived = false;
  std::int64_t limit = 0;
  std::int64_t offset = 0;
  Projection rows;
};

Result<Reply> find(Context& context, const FindArgs& args) {
  const ArchivedFilter archived = args.include_archived ? ArchivedFilter::Include : ArchivedFilter::Exclude;
  const std::int64_t offset = args.offset;
  const std::int64_t limit = args.limit;
  const std::string& text = args.query;
  CT_TRY_ASSIGN(std::vector<ResearchEntry> hits, context.db().search_research(text, archived, offset + limit + 1));
  const bool more = std::ssize(hits) > offset + limit;
  if (more) hits.pop_back();
  json::Value rows = json::Value::array();
  for (std::size_t i = static_cast<std::size_t>(std::min<std::int64_t>(offset, std::ssize(hits))); i < hits.size(); ++i)
    rows.push_back(row_json(hits[i], args.rows));
  Reply reply = Reply::of(std::move(rows));
  if (more || offset > 0) {
    CT_TRY_ASSIGN(std::int64_t total, context.db().count_research_matches(text, archived));
    reply.page = Page{total, static_cast<std::int64_t>(reply.data.size()), offset};
  }
  if (reply.data.empty()) reply.note = ErrorCode::NoData;
  return reply;
}

struct PendingArgs {
  Paging page;
  Projection rows;
};

Result<Reply> pending(Context& context, const PendingArgs& args) {
  ResearchQuery query;
  query.needs_followup = true;
  query.limit = args.page.limit;
  query.offset = args.page.offset;
  CT_TRY_ASSIGN(std::vector<ResearchEntry> entries, context.db().list_research(query));
  CT_TRY_ASSIGN(std::int64_t total, context.db().count_research(query));
  json::Value rows = json::Value::array();
  for (const auto& entry : entries) {
    json::Value row = row_json(entry, args.rows);
    if (!args.rows.full) {
      row.set("needsFollowup", json::Value::array_of(entry.needs_followup));
      if (!entry.linked_tasks.empty()) row.set("linkedTasks", json::Value::array_of(entry.linked_tasks));
    }
    rows.push_back(std::move(row));
  }
  Reply reply = Reply::paged(std::move(rows), Page{total, query.limit, query.offset});
  reply.note = no_data_if(total == 0);
  return reply;
}

Result<Reply> stats(Context& context, const NoArgs&) {
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
  return Reply::noted(std::move(data), note);
}

}  // namespace

void register_research_queries(Registry& registry) {
  const std::vector<std::string_view> fields = row_fields();
  const auto show_args = bind(field(&IdArgs::id, id_spec()));
  registry.add({.domain = "research", .name = "show", .gateway = Gateway::Query,
                .summary = "Show one research entry",
                .params = show_args.specs(),
                .returns = "{id, file, title, date, status, agentType, topics?, keyFindings?, actionable, "
                           "needsFollowup?, linkedTasks?, confidence?, fileChecksum?, archived?, createdAt, updatedAt}",
                .errors = {ErrorCode::NotFound},
                .examples = {{R"({"id":"T001-auth-options"})", "the entry T001-auth-options"}},
                .idempotent = true, .tier = 2, .handler = show_args.handler(show)});
  const auto list_args = bind(
      field(&ListArgs::status, {.name = "status", .type = ParamType::Array, .choices = {"complete", "partial", "blocked"},
                                .item_type = ParamType::Enum, .description = "Only entries with one of these statuses"}),
      field(&ListArgs::agent_type, {.name = "agentType", .type = ParamType::String, .max = 40,
                                    .description = "Only entries written by this kind of agent"}),
      field(&ListArgs::topic,
            {.name = "topic", .type = ParamType::String, .max = 60, .description = "Only entries with this topic"}),
      field(&ListArgs::task_id, {.name = "taskId", .type = ParamType::TaskId, .description = "Only entries linked to this task"}),
      field(&ListArgs::actionable, {.name = "actionable", .type = ParamType::Bool,
                                    .description = "Only actionable (true) or only not actionable (false) entries"}),
      field(&ListArgs::archived, {.name = "archived", .type = ParamType::Enum, .default_json = R"("exclude")",
                                  .choices = {"exclude", "only", "include"},
                                  .description = "Archived entries: leave out, only, or include"}),
      paging(&ListArgs::page, "50"), projection(&ListArgs::rows));
  registry.add({.domain = "research", .name = "list", .gateway = Gateway::Query,
                .summary = "List research entries with filters, newest first",
                .params = list_args.specs(),
                .returns = "[{id,title,status,date,agentType}] (full entries with detail:'full'); _meta.page when "
                           "there are more rows; E_NO_DATA note when none",
                .examples = {{R"({"status":["complete"],"limit":20})", "finished research"},
                             {R"({"taskId":"T001"})", "entries linked to T001"}},
                .idempotent = true, .tier = 2, .row_fields = fields, .aliases = {"tasks.manifest"},
                .original_names = {"research.manifest.read"}, .handler = list_args.handler(list)});
  const auto find_args = bind(
      field(&FindArgs::query, {.name = "query", .type = ParamType::String, .required = true, .min = 1, .max = 200,
                               .description = "Words to search for (prefix match), or an entry id", .positional = true}),
      field(&FindArgs::include_archived,
            {.name = "includeArchived", .type = ParamType::Bool, .description = "Also search archived entries"}),
      field(&FindArgs::limit, {.name = "limit", .type = ParamType::Int, .default_json = "10", .min = 1, .max = 100,
                               .description = "Most results"}),
      field(&FindArgs::offset, offset_param()), projection(&FindArgs::rows));
  registry.add({.domain = "research", .name = "find", .gateway = Gateway::Query,
                .summary = "Search research by title, topics and findings",
                .params = find_args.specs(),
                .returns = "[{id,title,status,date,agentType}] best first; _meta.page when more match; E_NO_DATA "
                           "note when nothing matches",
                .examples = {{R"({"query":"auth"})", "research about auth"}},
                .idempotent = true, .tier = 2, .row_fields = fields,
                .original_names = {"research.query", "research.search"}, .handler = find_args.handler(find)});
  const auto pending_args = bind(paging(&PendingArgs::page, "50"), projection(&PendingArgs::rows));
  registry.add({.domain = "research", .name = "pending", .gateway = Gateway::Query,
                .summary = "List entries that still need follow-up",
                .params = pending_args.specs(),
                .returns = "[{id,title,status,date,agentType,needsFollowup,linkedTasks?}] newest first; E_NO_DATA "
                           "note when none",
                .examples = {{R"({})", "what research left open"}},
                .idempotent = true, .tier = 2, .row_fields = fields, .handler = pending_args.handler(pending)});
  registry.add({.domain = "research", .name = "stats", .gateway = Gateway::Query,
                .summary = "Count research entries by status and agent type",
                .returns = "{total, archived, actionable, pending, linked, byStatus{complete,partial,blocked}, "
                           "byAgentType{}, averageConfidence?, manifest{file, lines?, syncedAt?, unsyncedBytes?}} "
                           "(archived entries only in total and archived); E_NO_DATA note when empty",
                .examples = {{R"({})", "the manifest in numbers"}},
                .idempotent = true, .tier = 2, .original_names = {"research.manifest.summary"},
                .handler = no_args(stats)});
}

}  // namespace ct::research
