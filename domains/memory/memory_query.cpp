// memory domain, reads (issue 34): find the entries for the work at hand, show one, what happened
// to entries over time, and counts; export writes memory as the Markdown a team reviews. The rules
// are engines/rules/memory.h; memory_common.h finds and shapes entries.
#include <algorithm>
#include <cmath>

#include "core/text.h"
#include "domains/bind.h"
#include "domains/memory/memory_catalogue.h"
#include "domains/memory/memory_common.h"
#include "domains/memory/memory_constraints.h"
#include "domains/registry.h"

namespace ct {
namespace {

using namespace memory;

Result<std::vector<std::string>> scope_files(const std::vector<std::string>& given) {
  std::vector<std::string> files;
  for (const auto& file : given) {
    CT_TRY_ASSIGN(std::string normal, normal_scope_path(file));
    files.push_back(std::move(normal));
  }
  return files;
}

struct FindArgs {
  std::string query;
  std::vector<std::string> files;
  std::optional<std::string> symbol;
  std::optional<std::string> task_id;
  std::vector<std::string> labels;
  std::optional<std::string> kind;
  bool include_stale = false;
  std::vector<std::string> known_hashes;
  std::int64_t limit = 0;
  std::int64_t offset = 0;
  Projection rows;
};

Result<Reply> find_entries(Context& context, const FindArgs& args) {
  Search search;
  search.query = args.query;
  CT_TRY_ASSIGN(search.files, scope_files(args.files));
  if (args.symbol) search.symbols.push_back(*args.symbol);
  search.labels = args.labels;
  search.task = args.task_id;
  search.kind = args.kind;
  search.include_stale = args.include_stale;
  const std::int64_t offset = args.offset;
  search.limit = args.limit + offset;
  const bool scoped = !search.files.empty() || !search.symbols.empty() || !search.labels.empty() || search.task;
  if (words(search.query).empty() && !scoped)
    return fail(Error(ErrorCode::InvalidParams,
                      search.query.empty() ? "memory.find needs words or a scope: every entry is too much to read"
                                           : "the query has no word to search for (words of 2+ letters, not the commonest)")
                    .with_fix(Advice("name the task at hand: ") + call("memory.find", {{"taskId", "T001"}}) +
                              Advice(", words: ") + call("memory.find", {{"query", "retry backoff"}}) +
                              Advice(", or files: ") +
                              call("memory.find", {{"files", json::Value::array_of(std::vector<std::string>{"src/store/"})}}))
                    .with_detail("field", "query"));
  std::int64_t matched = 0;
  CT_TRY_ASSIGN(std::vector<Found> found, find(context, search, &matched));
  const std::vector<std::string>& known = args.known_hashes;
  const bool full = args.rows.full;
  json::Value rows = json::Value::array();
  for (std::size_t i = static_cast<std::size_t>(std::min<std::int64_t>(offset, std::ssize(found))); i < found.size(); ++i) {
    const Found& item = found[i];
    if (std::find(known.begin(), known.end(), item.entry.hash) != known.end()) {
      json::Value row = json::Value::object();
      row.set("id", item.entry.id);
      row.set("unchanged", true);
      set_constraint_ids(row, item.entry);  // still returned: memory.applied takes them (seed 000)
      rows.push_back(std::move(row));
      continue;
    }
    json::Value row = entry_json(item.entry, full, item.stale);
    if (full) row.set("score", std::round(item.ranked.score * 100) / 100);
    if (full) {
      if (json::Value constraints = constraints_json(item.entry.id, item.entry.body); !constraints.as_array().empty())
        row.set("constraints", std::move(constraints));
    } else {
      set_constraint_ids(row, item.entry);
    }
    rows.push_back(std::move(row));
  }
  const bool none = rows.empty();
  // A scoped find gives the few to read first and says how many more there are (_meta.page).
  const std::int64_t shown = std::ssize(rows.as_array());
  Reply reply = Reply::noted(std::move(rows), no_data_if(none));
  if (scoped && matched > offset + shown) reply.page = Page{matched, shown, offset};
  return reply;
}

struct IdArgs {
  std::string id;
};

Result<Reply> show(Context& context, const IdArgs& args) {
  CT_TRY_ASSIGN(MemoryEntry entry, load(context, args.id));
  CT_TRY_ASSIGN(auto stale, staleness_of(context, {entry}));
  json::Value data = entry_json(entry, true, stale.front());
  if (json::Value constraints = constraints_json(entry.id, entry.body); !constraints.as_array().empty())
    data.set("constraints", std::move(constraints));
  CT_TRY_ASSIGN(std::vector<MemoryUsage> uses, context.db().memory_usage(entry.id, std::nullopt, std::nullopt, 5));
  if (!uses.empty()) {
    json::Value recent = json::Value::array();
    for (const auto& use : uses) {
      json::Value row = json::Value::object();
      row.set("at", format_iso8601(use.at));
      row.set("applied", use.applied);
      if (!use.agent.empty()) row.set("agent", use.agent);
      if (!use.task_id.empty()) row.set("taskId", use.task_id);
      if (!use.constraint_id.empty()) row.set("constraint", use.constraint_id);
      if (!use.host_session.empty()) row.set("hostSession", use.host_session);
      recent.push_back(std::move(row));
    }
    if (json::Value* usage = data.find("usage")) usage->set("recent", std::move(recent));
  }
  CT_TRY_ASSIGN(json::Value governance, governance_json(context, entry));
  data.set("governance", std::move(governance));
  return Reply::of(std::move(data));
}

/// What happened to entries: recorded, verified, changed, applied or ignored; newest first.
struct TimelineArgs {
  std::optional<std::string> task_id;
  Moment since;
  std::int64_t limit = 0;
};

Result<Reply> timeline(Context& context, const TimelineArgs& args) {
  const std::optional<std::string>& task = args.task_id;
  const std::optional<TimeMs>& since = args.since.at;
  const std::int64_t limit = args.limit;
  if (!task && !since)
    return fail(Error(ErrorCode::InvalidParams, "memory.timeline needs a task or a time to start from")
                    .with_fix(call("memory.timeline", {{"since", "7d"}}) + Advice(", or one task's: ") +
                              call("memory.timeline", {{"taskId", "T001"}}))
                    .with_detail("field", "since"));
  MemoryQuery query;
  if (task) query.key = "t:" + *task;
  query.since = since;
  query.limit = limit;
  CT_TRY_ASSIGN(std::vector<MemoryEntry> entries, context.db().list_memory(query));
  CT_TRY_ASSIGN(std::vector<MemoryUsage> uses, context.db().memory_usage(std::nullopt, task, since, limit));
  struct Event {
    TimeMs at;
    json::Value row;
  };
  std::vector<Event> events;
  auto event = [&](TimeMs at, const MemoryEntry* entry, const std::string& id, std::string_view what, const std::string& who) {
    if (since && at < *since) return;
    json::Value row = json::Value::object();
    row.set("at", format_iso8601(at));
    row.set("id", id);
    row.set("event", what);
    if (!who.empty()) row.set("by", who);
    if (entry) row.set("title", entry->title);
    events.push_back({at, std::move(row)});
  };
  for (const auto& entry : entries) {
    event(entry.created_at, &entry, entry.id, "recorded", entry.source_agent);
    if (entry.verified_at) event(*entry.verified_at, &entry, entry.id, "verified", entry.verified_by);
    if (entry.updated_at != entry.created_at && entry.updated_at != entry.verified_at.value_or(-1))
      event(entry.updated_at, &entry, entry.id, entry.status == "active" || entry.status == "proposed" ? "changed" : entry.status, "");
  }
  for (const auto& use : uses) {
    event(use.at, nullptr, use.memory_id, use.applied ? "applied" : "ignored", use.agent);
    if (!use.task_id.empty()) events.back().row.set("taskId", use.task_id);
    if (!use.constraint_id.empty()) events.back().row.set("constraint", use.constraint_id);
  }
  std::stable_sort(events.begin(), events.end(), [](const Event& a, const Event& b) { return a.at > b.at; });
  json::Value rows = json::Value::array();
  for (auto& item : events) {
    if (std::ssize(rows.as_array()) >= limit) break;
    rows.push_back(std::move(item.row));
  }
  const bool none = rows.empty();
  return Reply::noted(std::move(rows), no_data_if(none));
}

/// Entries by status and kind, newest change first, each with its staleness (the dashboard's view).
struct ListArgs {
  std::vector<std::string> status;
  std::optional<std::string> kind;
  bool due = false;
  Paging page;
  Projection rows;
};

Result<Reply> list(Context& context, const ListArgs& args) {
  MemoryQuery query;
  query.statuses = args.status;
  if (args.kind) query.kind = *args.kind;
  query.limit = args.page.limit;
  query.offset = args.page.offset;
  std::vector<MemoryEntry> entries;
  std::int64_t total = 0;
  if (args.due) {
    // Due for review (engines/rules/catalogue.h): soonest due first, the page cut from them.
    CT_TRY_ASSIGN(std::vector<MemoryEntry> due, due_for_review(context, query));
    total = std::ssize(due);
    for (std::int64_t i = query.offset; i < total && i < query.offset + query.limit; ++i)
      entries.push_back(std::move(due[static_cast<std::size_t>(i)]));
  } else {
    CT_TRY_ASSIGN(entries, context.db().list_memory(query));
    CT_TRY_ASSIGN(total, context.db().count_memory(query));
  }
  CT_TRY_ASSIGN(auto stale, staleness_of(context, entries));
  json::Value rows = json::Value::array();
  const bool full = args.rows.full;
  for (std::size_t i = 0; i < entries.size(); ++i) {
    json::Value row = entry_json(entries[i], full, stale[i]);
    if (!full) {
      if (!entries[i].files.empty()) row.set("files", json::Value::array_of(entries[i].files));
      row.set("applied", entries[i].applied_count);
    }
    rows.push_back(std::move(row));
  }
  Reply reply = Reply::paged(std::move(rows), Page{total, query.limit, query.offset});
  reply.note = no_data_if(total == 0);
  return reply;
}

Result<Reply> stats(Context& context, const NoArgs&) {
  CT_TRY_ASSIGN(MemoryCounts counts, context.db().memory_counts());
  json::Value data = json::Value::object();
  data.set("total", counts.total);
  json::Value by_status = json::Value::object();
  for (auto status : kStatuses) {
    auto found = counts.by_status.find(std::string(status));
    by_status.set(status, found == counts.by_status.end() ? std::int64_t{0} : found->second);
  }
  data.set("byStatus", std::move(by_status));
  json::Value by_kind = json::Value::object();
  for (const auto& [kind, count] : counts.by_kind) by_kind.set(kind, count);
  data.set("byKind", std::move(by_kind));
  // The active and proposed entries, read once: what is stale, proposed, most and never used.
  MemoryQuery query;
  query.statuses = {"active", "proposed"};
  query.limit = -1;
  CT_TRY_ASSIGN(std::vector<MemoryEntry> entries, context.db().list_memory(query));
  CT_TRY_ASSIGN(auto stale, staleness_of(context, entries));
  json::Value stale_rows = json::Value::array();
  json::Value proposed = json::Value::array();
  std::int64_t stale_count = 0;
  std::int64_t never = 0;
  std::vector<const MemoryEntry*> used;
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const MemoryEntry& entry = entries[i];
    if (entry.status == "proposed") {
      if (proposed.size() < 20) {
        json::Value row = json::Value::object();
        row.set("id", entry.id);
        row.set("kind", entry.kind);
        row.set("title", entry.title);
        if (!entry.source_agent.empty()) row.set("by", entry.source_agent);
        proposed.push_back(std::move(row));
      }
      continue;
    }
    if (stale[i]) {
      ++stale_count;
      if (stale_rows.size() < 20) {
        json::Value row = json::Value::object();
        row.set("id", entry.id);
        row.set("title", entry.title);
        row.set("stale", stale_json(*stale[i]));
        stale_rows.push_back(std::move(row));
      }
    }
    if (entry.applied_count == 0) ++never;
    else used.push_back(&entry);
  }
  std::sort(used.begin(), used.end(), [](const MemoryEntry* a, const MemoryEntry* b) {
    return a->applied_count != b->applied_count ? a->applied_count > b->applied_count : a->id < b->id;
  });
  json::Value most = json::Value::array();
  for (std::size_t i = 0; i < std::min<std::size_t>(used.size(), 5); ++i) {
    json::Value row = json::Value::object();
    row.set("id", used[i]->id);
    row.set("title", used[i]->title);
    row.set("applied", used[i]->applied_count);
    most.push_back(std::move(row));
  }
  data.set("stale", stale_count);
  data.set("neverApplied", never);
  data.set("mostApplied", std::move(most));
  data.set("staleEntries", std::move(stale_rows));
  data.set("proposedEntries", std::move(proposed));
  // Attestation (seed 000): constraints declared applied, and turns closed each way.
  CT_TRY_ASSIGN(MemoryStore::AttestationCounts attested, context.db().attestation_counts());
  data.set("constraintsApplied", attested.constraints);
  json::Value turns = json::Value::object();
  turns.set("reported", attested.reported);
  turns.set("rejected", attested.rejected);
  data.set("turns", std::move(turns));
  std::optional<ErrorCode> note;
  if (counts.total == 0 && attested.reported + attested.rejected == 0) note = ErrorCode::NoData;
  return Reply::noted(std::move(data), note);
}

struct ExportArgs {
  std::optional<std::string> kind;
  bool include_retracted = false;
};

Result<Reply> export_markdown(Context& context, const ExportArgs& args) {
  MemoryQuery query;
  query.limit = -1;
  if (args.kind) query.kind = *args.kind;
  if (!args.include_retracted) query.statuses = {"active", "proposed", "superseded"};
  CT_TRY_ASSIGN(std::vector<MemoryEntry> entries, context.db().list_memory(query));
  json::Value data = json::Value::object();
  data.set("entries", static_cast<std::int64_t>(entries.size()));
  data.set("markdown", to_markdown(entries));
  std::optional<ErrorCode> note;
  if (entries.empty()) note = ErrorCode::NoData;
  return Reply::noted(std::move(data), note);
}

}  // namespace

ParamSpec memory_id_param() {
  return {.name = "id", .type = ParamType::String, .required = true, .max = 12, .pattern = kIdPattern,
          .description = "Entry id (M001)", .positional = true, .single_line = true};
}

namespace {

void register_find(Registry& registry) {
  const auto find_args = bind(
      field(&FindArgs::query, {.name = "query", .type = ParamType::String, .max = 200,
                               .description = "Words to search for (prefix match)", .positional = true}),
      field(&FindArgs::files, {.name = "files", .type = ParamType::Array, .max = 50, .item_max = 300,
                               .description = "Files or folders at hand, relative to the project root"}),
      field(&FindArgs::symbol, {.name = "symbol", .type = ParamType::String, .max = 200,
                                .description = "A symbol at hand (RetryPolicy::backoff): entries scoped to it, file#symbol",
                                .single_line = true}),
      field(&FindArgs::task_id, {.name = "taskId", .type = ParamType::TaskId,
                                 .description = "The task at hand: its files, labels and epics join the scope"}),
      field(&FindArgs::labels,
            {.name = "labels", .type = ParamType::Array, .max = 20, .item_max = 60, .description = "Labels of the work"}),
      field(&FindArgs::kind, {.name = "kind", .type = ParamType::Enum, .choices = kind_choices(), .description = "Only this kind"}),
      field(&FindArgs::include_stale, {.name = "includeStale", .type = ParamType::Bool,
                                       .description = "Also entries whose files or tasks changed since (ranked lower)"}),
      field(&FindArgs::known_hashes, {.name = "knownHashes", .type = ParamType::Array, .max = 100, .item_max = 16,
                                      .description = "Hashes already read: those entries come back as {id, unchanged:true}"}),
      field(&FindArgs::limit, {.name = "limit", .type = ParamType::Int, .default_json = "10", .min = 1, .max = 50,
                               .description = "Most entries"}),
      field(&FindArgs::offset, offset_param()), projection(&FindArgs::rows));
  registry.add({.domain = "memory", .name = "find", .gateway = Gateway::Query,
                .summary = "What is known for your work",
                .params = find_args.specs(),
                .returns = "[{id,kind,title,body (240 chars),hash,status?,unreviewed? (no person verified it),stale?{file|task,what,since},"
                           "constraints?[ids to attest: M001#Steps, M001#Steps/1]} | {id,unchanged,constraints?}] "
                           "best first (detail:'full': every field, usage, score); a scoped find's _meta.page counts the "
                           "rest; E_NO_DATA note when none",
                .errors = {ErrorCode::InvalidParams, ErrorCode::NotFound, ErrorCode::Validation},
                .examples = {{R"({"taskId":"T001"})", "what is known about the work on T001"},
                             {R"({"query":"retry backoff","files":["src/net/"]})", "by words and folder"},
                             {R"({"symbol":"RetryPolicy::backoff"})", "what is known about one function"}},
                .idempotent = true, .tier = 1,
                .row_fields = {"id", "kind", "title", "body", "hash", "status", "unreviewed", "stale", "unchanged", "files", "labels",
                               "tasks", "epic", "confidence", "source", "verifiedBy", "verifiedAt", "supersedes",
                               "supersededBy", "reason", "usage", "createdAt", "updatedAt", "score", "constraints"},
                .aliases = {"search", "recall"}, .handler = find_args.handler(find_entries)});
}

void register_show(Registry& registry) {
  const auto show_args = bind(field(&IdArgs::id, memory_id_param()));
  registry.add({.domain = "memory", .name = "show", .gateway = Gateway::Query,
                .summary = "Show one memory entry, its staleness and recent use",
                .params = show_args.specs(),
                .returns = "{id, kind, title, body?, status, unreviewed?, stale?, hash, files?, labels?, tasks?, epic?, confidence?, "
                           "source?{agent,session,task}, verifiedBy?, verifiedAt?, supersedes?, supersededBy?, reason?, "
                           "usage{applied, ignored, lastAt?, lastBy?, recent?[{at,applied,agent?,taskId?,constraint?,hostSession?}]}, "
                           "constraints?[{id (M001#Steps/1), name, text, textHash}], createdAt, updatedAt, governance{version, "
                           "owner?, status draft|review|approved|deprecated, tier P1-P4, nextReviewDue?, changes?[{version, at, by?, "
                           "summary}]}}",
                .errors = {ErrorCode::NotFound},
                .examples = {{R"({"id":"M001"})", "the entry M001"}},
                .idempotent = true, .tier = 2, .aliases = {"get"}, .handler = show_args.handler(show)});
}

void register_list(Registry& registry) {
  const auto list_args =
      bind(field(&ListArgs::status, {.name = "status", .type = ParamType::Array, .choices = {kStatuses.begin(), kStatuses.end()},
                                     .item_type = ParamType::Enum, .description = "Only these statuses (default all)"}),
           field(&ListArgs::kind, {.name = "kind", .type = ParamType::Enum, .choices = kind_choices(), .description = "Only this kind"}),
           field(&ListArgs::due, {.name = "due", .type = ParamType::Bool,
                                  .description = "Only entries due for review, soonest first"}),
           paging(&ListArgs::page, "50"), projection(&ListArgs::rows));
  registry.add({.domain = "memory", .name = "list", .gateway = Gateway::Query,
                .summary = "List entries by status and kind, newest change first",
                .params = list_args.specs(),
                .returns = "[{id,kind,title,body (240 chars),hash,status?,unreviewed?,stale?,files?,applied}] (every field with "
                           "detail:'full'); _meta.page when there are more; E_NO_DATA note when none",
                .examples = {{R"({"status":["proposed"]})", "what waits for a person's review"},
                             {R"({"due":true})", "what is due for review"}},
                .idempotent = true, .tier = 2,
                .row_fields = {"id", "kind", "title", "body", "hash", "status", "unreviewed", "stale", "files", "applied", "labels",
                               "tasks", "epic", "confidence", "source", "verifiedBy", "verifiedAt", "supersedes",
                               "supersededBy", "reason", "usage", "createdAt", "updatedAt"},
                .handler = list_args.handler(list)});
}

void register_timeline(Registry& registry) {
  const auto timeline_args =
      bind(field(&TimelineArgs::task_id, {.name = "taskId", .type = ParamType::TaskId,
                                          .description = "Entries from or scoped to this task, and uses in its work"}),
           field(&TimelineArgs::since, {.name = "since", .type = ParamType::String, .max = 40,
                                        .description = "From this time: ISO 8601 or a span back from now (30m, 2h, 7d)"}),
           field(&TimelineArgs::limit, limit_param("50")));
  registry.add({.domain = "memory", .name = "timeline", .gateway = Gateway::Query,
                .summary = "What happened to entries: of a task, or since a time",
                .params = timeline_args.specs(),
                .returns = "[{at, id, event (recorded|verified|changed|superseded|retracted|applied|ignored), by?, "
                           "title?, taskId?, constraint?}] newest first; E_NO_DATA note when none",
                .errors = {ErrorCode::InvalidParams},
                .examples = {{R"({"taskId":"T001"})", "memory made and used in T001"},
                             {R"({"since":"7d"})", "the last week"}},
                .idempotent = true, .tier = 2, .handler = timeline_args.handler(timeline)});
}

void register_stats(Registry& registry) {
  registry.add({.domain = "memory", .name = "stats", .gateway = Gateway::Query,
                .summary = "Count entries; list the stale, proposed, most and never applied",
                .returns = "{total, byStatus{active,proposed,superseded,retracted}, byKind{}, stale, neverApplied, "
                           "mostApplied[{id,title,applied}], staleEntries[{id,title,stale}] (20), "
                           "proposedEntries[{id,kind,title,by?}] (20), constraintsApplied, turns{reported,rejected}}; "
                           "E_NO_DATA note when empty",
                .examples = {{R"({})", "memory in numbers"}},
                .idempotent = true, .tier = 2, .handler = no_args(stats)});
}

void register_export(Registry& registry) {
  const auto export_args = bind(
      field(&ExportArgs::kind, {.name = "kind", .type = ParamType::Enum, .choices = kind_choices(), .description = "Only this kind"}),
      field(&ExportArgs::include_retracted,
            {.name = "includeRetracted", .type = ParamType::Bool, .description = "Also retracted entries"}));
  registry.add({.domain = "memory", .name = "export", .gateway = Gateway::Query,
                .summary = "Memory as Markdown to review and commit (memory.import reads it)",
                .params = export_args.specs(),
                .returns = "{entries (count), markdown}; at the command line, the Markdown alone (redirect it to a file)",
                .examples = {{R"({})", "every entry, grouped by kind"}},
                .idempotent = true, .tier = 2, .text_view = TextView::Markdown, .handler = export_args.handler(export_markdown)});
}

}  // namespace

void register_memory_queries(Registry& registry) {
  register_find(registry);
  memory::register_coverage(registry);
  register_show(registry);
  register_list(registry);
  register_timeline(registry);
  register_stats(registry);
  register_export(registry);
}

}  // namespace ct
