// tasks domain — read operations (the query gateway).
#include <algorithm>
#include <map>
#include <set>

#include "core/text.h"
#include "domains/analysis.h"
#include "domains/claims.h"
#include "domains/evidence.h"
#include "domains/messages.h"
#include "domains/tasks/tasks_common.h"
#include "engines/rules/lifecycle.h"
#include "engines/rules/session_engine.h"

namespace ct::tasks {

namespace {

constexpr std::string_view kStatuses = R"(["pending","active","blocked","done","cancelled"])";

ParamSpec status_filter_param() {
  return ParamSpec{.name = "status", .type = ParamType::Array, .choices = {"pending", "active", "blocked", "done", "cancelled"},
                   .item_type = ParamType::Enum, .description = "Only tasks with one of these statuses"};
}

json::Value project(const Task& task, bool full) { return full ? task_full(task) : task_compact(task); }

bool is_open(TaskStatus status) { return status != TaskStatus::Done && status != TaskStatus::Cancelled; }

/// The dependencies of `tasks` that are still open (not done or cancelled), read in one call: a
/// page of 50 costs one query on a server store, not one per dependency.
Result<std::set<std::string>> open_upstream(Context& context, const std::vector<Task>& tasks) {
  std::vector<std::string> ids;
  for (const auto& task : tasks)
    if (is_open(task.status)) ids.insert(ids.end(), task.depends.begin(), task.depends.end());
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  std::set<std::string> out;
  if (ids.empty()) return out;
  CT_TRY_ASSIGN(std::vector<Task> upstream, context.db().get_tasks(ids));
  for (const auto& task : upstream)
    if (is_open(task.status)) out.insert(task.id);
  return out;
}

/// The unfinished tasks an open task waits on, of the open ones open_upstream() found.
std::vector<std::string> waiting_on(const Task& task, const std::set<std::string>& open_upstream) {
  std::vector<std::string> out;
  if (!is_open(task.status)) return out;
  for (const auto& dep : task.depends)
    if (open_upstream.contains(dep)) out.push_back(dep);
  return out;
}

/// A list row: the projection, plus what keeps an open task from starting — the dependencies it
/// waits on and, when blocked by hand, why. Readers see "pending" and "can start" apart.
json::Value list_row(const Task& task, bool full, const std::set<std::string>& open_upstream) {
  json::Value row = project(task, full);
  std::vector<std::string> waiting = waiting_on(task, open_upstream);
  if (!waiting.empty()) row.set("waitingOn", json::Value::array_of(waiting));
  if (task.status == TaskStatus::Blocked && !task.blocked_by.empty()) row.set("blockedBy", task.blocked_by);
  return row;
}
}  // namespace

Result<TaskFilter> read_filter(const FilterArgs& args) {
  TaskFilter filter;
  for (const auto& s : args.status) filter.statuses.push_back(*parse_status(s));
  if (args.parent) filter.parent = *args.parent;
  if (args.root) filter.parent = std::string();
  if (args.type) filter.type = parse_type(*args.type);
  for (const auto& label : args.label) filter.labels.push_back(to_lower_ascii(label));
  if (args.under) filter.under = *args.under;
  if (args.readiness) filter.readiness = *args.readiness == "ready" ? Readiness::Ready : Readiness::Blocked;
  if (args.phase) filter.phase = *args.phase;
  if (args.priority) filter.priority = parse_priority(*args.priority);
  if (const auto& prefix = args.id_prefix; prefix && !prefix->empty()) {
    filter.id_prefix = *prefix;
    filter.id_prefix.front() = 'T';  // t12 is T12
  }
  filter.archived = args.archived == "only" ? ArchivedFilter::Only
                    : args.archived == "include" ? ArchivedFilter::Include : ArchivedFilter::Exclude;
  return filter;
}
namespace {

struct ShowArgs {
  std::string id;
  std::string detail;
};

Result<Reply> show(Context& context, const ShowArgs& args) {
  const TimeMs now = context.now();
  const bool full = args.detail == "full";
  auto engine_ = engine(context, now);
  // Its reads that need no other's answer, in the order made below (a server store sends them in
  // one round trip): the task, who works on it (read only for an active task), with the full record
  // its research, gates, stages and evidence, then its thread's size and its tracker links.
  if (full)
    context.db().expect({{ExpectedRead::Task, args.id}, {ExpectedRead::Claim, args.id},
                         {ExpectedRead::Research, args.id}, {ExpectedRead::Gates, args.id},
                         {ExpectedRead::Stages, args.id}, {ExpectedRead::Evidence, args.id},
                         {ExpectedRead::TaskThreadSize, args.id}, {ExpectedRead::TaskLinks, args.id}});
  else
    context.db().expect({{ExpectedRead::Task, args.id}, {ExpectedRead::Claim, args.id},
                         {ExpectedRead::TaskThreadSize, args.id}, {ExpectedRead::TaskLinks, args.id}});
  CT_TRY_ASSIGN(Task task, engine_.get(args.id));
  json::Value data = project(task, full);
  // Who works on it, and until when (only an active task is anyone's claim).
  if (task.status == TaskStatus::Active) {
    CT_TRY_ASSIGN(std::optional<Claim> claim, context.db().claim_on(task.id));
    if (claim) data.set("claim", claim_json(*claim, *context.config, now, context.root()));
  }
  if (full) {
    // The research entries linked to it (research.link): only in the full record.
    CT_TRY_ASSIGN(std::vector<std::string> research, context.db().research_for_task(task.id));
    if (!research.empty()) data.set("research", json::Value::array_of(research));
    // Its verification gates and, for an epic, its lifecycle stages: those recorded, in order.
    LifecycleEngine lifecycle(context.db(), *context.config, 0, Actor{}, nullptr);  // reads only
    for (const auto& [key, kind] : {std::pair{"gates", LifecycleKind::Gate}, std::pair{"stages", LifecycleKind::Stage}}) {
      // Only the recorded ones: most tasks have none, and the full ordered list (every stage or
      // gate, pending) is not built for them (13 % of a full tasks.show).
      CT_TRY_ASSIGN(std::vector<LifecycleState> states, lifecycle.recorded(task.id, kind));
      json::Value map = json::Value::object();
      for (const auto& state : states)
        if (state.at != 0) map.set(state.name, state.status);
      if (map.size() > 0) data.set(key, std::move(map));
    }
    // Its evidence and, with acceptance criteria, what covers or waives each (issue 35).
    CT_TRY_ASSIGN(json::Value evidence, evidence::task_evidence_json(context, task));
    if (!evidence.is_null()) data.set("evidence", std::move(evidence));
  }
  // Its thread (session.send to the task): how many, and with the full record the newest few.
  CT_TRY_ASSIGN(std::optional<json::Value> thread, task_thread(context, task.id, full));
  if (thread) data.set("thread", std::move(*thread));
  // The tracker items it is kept in step with (issues.sync): only for a linked task.
  CT_TRY_ASSIGN(std::vector<TrackerLink> links, context.db().task_links(task.id));
  if (!links.empty()) {
    json::Value synced = json::Value::array();
    for (const auto& link : links) {
      json::Value row = json::Value::object();
      row.set("key", link.key);
      if (full) row.set("url", link.url);
      row.set("state", link.state);
      if (link.conflict.is_object()) row.set("conflict", link.conflict);
      synced.push_back(std::move(row));
    }
    data.set("sync", std::move(synced));
  }
  return Reply::of(std::move(data));
}

}  // namespace

/// With inScope (or, when `by_default`, without inScope:false while a session is bound): the ids
/// of the caller's session scope (nullopt for a global scope or no limit).
/// E_SESSION_REQUIRED when inScope:true is asked without a bound session.
Result<std::optional<std::set<std::string>>> scope_filter(Context& context, std::optional<bool> in_scope,
                                                          bool by_default) {
  if (!in_scope.value_or(by_default && !context.session.empty()))
    return std::optional<std::set<std::string>>();
  if (context.session.empty()) {
    Error error(ErrorCode::SessionRequired, "inScope needs a session, and none is bound to this caller");
    error.fix = call("session.start", {{"scope", "epic:T001"}});
    return fail(std::move(error).with_detail("field", "inScope"));
  }
  SessionEngine sessions(context.db(), *context.config, 0, nullptr);
  CT_TRY_ASSIGN(Session session, sessions.get(context.session));
  CT_TRY_ASSIGN(Scope scope, parse_scope(session.scope));
  if (scope.kind == ScopeKind::Global) return std::optional<std::set<std::string>>();
  CT_TRY_ASSIGN(std::set<std::string> ids, sessions.tasks_of(scope));
  return std::optional<std::set<std::string>>(std::move(ids));
}

namespace {

ParamSpec in_scope_param() {
  return ParamSpec{.name = "inScope", .type = ParamType::Bool,
                   .description = "Only tasks in the current session's scope"};
}

struct ListArgs {
  FilterArgs filter;
  std::string sort;
  std::optional<std::string> order;
  Paging page;
  std::optional<bool> in_scope;
  Projection rows;
};

/// The query tasks.list params ask for: the filter, the sort and the page.
Result<TaskQuery> task_query_from(const ListArgs& args) {
  TaskQuery query;
  CT_TRY_ASSIGN(query.filter, read_filter(args.filter));
  static const std::map<std::string, SortKey, std::less<>> kSort = {
      {"position", SortKey::Position}, {"priority", SortKey::Priority}, {"created", SortKey::Created},
      {"updated", SortKey::Updated}, {"title", SortKey::Title}, {"status", SortKey::Status}, {"id", SortKey::Id}};
  query.sort = kSort.at(args.sort);
  // Without an order, priority lists the most important first; every other key ascends.
  query.descending = args.order.value_or(query.sort == SortKey::Priority ? "desc" : "asc") == "desc";
  query.limit = args.page.limit;
  query.offset = args.page.offset;
  return query;
}

Result<Reply> list(Context& context, const ListArgs& args) {
  CT_TRY_ASSIGN(TaskQuery query, task_query_from(args));
  const TaskFilter& filter = query.filter;
  CT_TRY_ASSIGN(std::optional<std::set<std::string>> scoped, scope_filter(context, args.in_scope));
  std::vector<Task> tasks;
  std::int64_t total = 0;
  if (scoped) {
    // A scope is a set of ids computed live: filter the whole ordered list, then page it.
    TaskQuery everything = query;
    everything.limit = -1;
    everything.offset = 0;
    CT_TRY_ASSIGN(std::vector<Task> all, context.db().list_tasks(everything));
    std::erase_if(all, [&](const Task& task) { return !scoped->contains(task.id); });
    total = std::ssize(all);
    for (std::int64_t i = query.offset; i < total && i < query.offset + query.limit; ++i)
      tasks.push_back(std::move(all[static_cast<std::size_t>(i)]));
  } else {
    CT_TRY_ASSIGN(tasks, context.db().list_tasks(query));
    CT_TRY_ASSIGN(total, context.db().count_tasks(filter));
  }
  CT_TRY_ASSIGN(std::set<std::string> upstream, open_upstream(context, tasks));
  // Who works on the active ones, and until when.
  std::map<std::string, Claim, std::less<>> claims;
  if (std::ranges::any_of(tasks, [](const Task& task) { return task.status == TaskStatus::Active; })) {
    CT_TRY_ASSIGN(claims, claims_by_task(context));
  }
  const TimeMs now = claims.empty() ? 0 : context.now();
  json::Value rows = json::Value::array();
  for (const auto& task : tasks) {
    json::Value row = list_row(task, args.rows.full, upstream);
    if (auto claim = claims.find(task.id); claim != claims.end() && task.status == TaskStatus::Active)
      row.set("claim", claim_json(claim->second, *context.config, now, context.root()));
    rows.push_back(std::move(row));
  }
  Reply reply = Reply::paged(std::move(rows), Page{total, query.limit, query.offset});
  reply.note = no_data_if(reply.data.empty());  // as tasks.find: nothing matched
  return reply;
}

struct FindArgs {
  std::string query;
  FilterArgs filter;
  std::optional<bool> in_scope;
  bool include_archived = false;
  std::int64_t limit = 0;
  std::int64_t offset = 0;
  Projection rows;
};

Result<Reply> find(Context& context, const FindArgs& args) {
  CT_TRY_ASSIGN(TaskFilter filter, read_filter(args.filter));
  if (args.include_archived) filter.archived = ArchivedFilter::Include;
  CT_TRY_ASSIGN(std::optional<std::set<std::string>> scoped, scope_filter(context, args.in_scope));
  const std::int64_t offset = args.offset;
  const std::int64_t limit = args.limit;
  // One more than the page: whether there is more is known without counting every match. A scope
  // is a set of ids computed live: every match is ranked, those outside it dropped, then paged.
  // The total is what the search counted on its way: the ranking window's (issue 56).
  SearchCount counted;
  CT_TRY_ASSIGN(std::vector<SearchHit> hits,
                context.db().search(args.query, filter, scoped ? -1 : offset + limit + 1, &counted));
  if (scoped) std::erase_if(hits, [&](const SearchHit& hit) { return !scoped->contains(hit.task.id); });
  const std::int64_t in_scope = std::ssize(hits);
  if (scoped && in_scope > offset + limit + 1) hits.resize(static_cast<std::size_t>(offset + limit + 1));
  const bool more = std::ssize(hits) > offset + limit;
  if (more) hits.pop_back();
  json::Value rows = json::Value::array();
  for (std::size_t i = static_cast<std::size_t>(std::min<std::int64_t>(offset, std::ssize(hits))); i < hits.size(); ++i)
    rows.push_back(project(hits[i].task, args.rows.full));
  Reply reply = Reply::of(std::move(rows));
  if (more || offset > 0) {
    // A cut page says so, with the total: never silently ten of five hundred. Past the ranking
    // window the matches are not counted, and the total says it is a lower bound (totalAtLeast).
    reply.page = Page{scoped ? in_scope : counted.matched, static_cast<std::int64_t>(reply.data.size()), offset,
                      !scoped && counted.at_least};
  }
  reply.note = no_data_if(reply.data.empty());
  return reply;
}

Result<Reply> exists(Context& context, const IdArgs& args) {
  CT_TRY_ASSIGN(std::optional<Task> task, context.db().get_task(args.id));
  json::Value data = json::Value::object();
  data.set("id", args.id);
  data.set("exists", task.has_value());
  if (task && task->archived) data.set("archived", true);
  return Reply::noted(std::move(data), no_data_if(!task));
}

Result<json::Value> tree_node(Context& context, const Task& task, int depth_left, bool include_done, bool full) {
  json::Value node = full ? task_full(task) : json::Value::object();
  if (!full) {
    node.set("id", task.id);
    node.set("title", task.title);
    node.set("status", to_string(task.status));
    if (task.priority != Priority::Medium) node.set("priority", to_string(task.priority));
    if (task.type == TaskType::Epic) node.set("type", "epic");
  }
  CT_TRY_ASSIGN(std::set<std::string> upstream, open_upstream(context, {task}));
  std::vector<std::string> waiting = waiting_on(task, upstream);
  if (!waiting.empty()) node.set("waitingOn", json::Value::array_of(waiting));
  if (depth_left <= 0) return node;
  TaskQuery query;
  query.filter.parent = task.id;
  if (!include_done) query.filter.statuses = {TaskStatus::Pending, TaskStatus::Active, TaskStatus::Blocked};
  CT_TRY_ASSIGN(std::vector<Task> children, context.db().list_tasks(query));
  if (children.empty()) return node;
  json::Value list = json::Value::array();
  for (const auto& child : children) {
    CT_TRY_ASSIGN(json::Value child_node, tree_node(context, child, depth_left - 1, include_done, full));
    list.push_back(std::move(child_node));
  }
  node.set("children", std::move(list));
  return node;
}

struct TreeArgs {
  std::optional<std::string> id;
  std::int64_t depth = 0;
  bool include_done = false;
  std::int64_t limit = 0;
  std::int64_t offset = 0;
  Projection rows;
};

Result<Reply> tree(Context& context, const TreeArgs& args) {
  int depth = static_cast<int>(args.depth);
  bool include_done = args.include_done;
  std::vector<Task> roots;
  std::optional<Page> page;
  if (args.id) {
    auto engine_ = engine(context);
    CT_TRY_ASSIGN(Task root, engine_.get(*args.id));
    roots.push_back(std::move(root));
  } else {
    TaskQuery query;
    query.filter.parent = std::string();
    if (!include_done) query.filter.statuses = {TaskStatus::Pending, TaskStatus::Active, TaskStatus::Blocked};
    query.limit = args.limit;
    query.offset = args.offset;
    CT_TRY_ASSIGN(roots, context.db().list_tasks(query));
    CT_TRY_ASSIGN(std::int64_t total, context.db().count_tasks(query.filter));
    page = Page{total, query.limit, query.offset};
  }
  json::Value forest = json::Value::array();
  for (const auto& root : roots) {
    CT_TRY_ASSIGN(json::Value node, tree_node(context, root, depth - 1, include_done, args.rows.full));
    forest.push_back(std::move(node));
  }
  return Reply::paged(std::move(forest), page);
}


/// A list row's fields: a task's, and the dependencies an open one waits on.
std::vector<std::string_view> list_fields() {
  std::vector<std::string_view> fields = task_field_names();
  fields.push_back("waitingOn");
  fields.push_back("claim");
  return fields;
}

}  // namespace

std::vector<Field<FilterArgs>> filter_fields() {
  return {
      field(&FilterArgs::status, status_filter_param()),
      field(&FilterArgs::parent, {.name = "parent", .type = ParamType::TaskId, .description = "Only direct children of this task"}),
      field(&FilterArgs::root, {.name = "root", .type = ParamType::Bool, .description = "Only top-level tasks"}),
      field(&FilterArgs::type, {.name = "type", .type = ParamType::Enum, .choices = {"epic", "task", "subtask"},
                                .description = "Only this type"}),
      field(&FilterArgs::under, {.name = "under", .type = ParamType::TaskId,
                                 .description = "Only descendants of this task, at any depth"}),
      field(&FilterArgs::label, {.name = "label", .type = ParamType::Array, .max = 10, .item_max = 50,
                                 .description = "Only tasks with this label (several: all of them)"}),
      field(&FilterArgs::readiness,
            {.name = "readiness", .type = ParamType::Enum, .choices = {"ready", "blocked"},
             .description = "ready: can start now (every dependency done); blocked: status blocked or waiting on a dependency"}),
      field(&FilterArgs::phase, {.name = "phase", .type = ParamType::String, .max = 40, .description = "Only tasks in this phase"}),
      field(&FilterArgs::priority, {.name = "priority", .type = ParamType::Enum, .choices = {"critical", "high", "medium", "low"},
                                    .description = "Only this priority"}),
      field(&FilterArgs::id_prefix, {.name = "idPrefix", .type = ParamType::String, .max = 20, .pattern = "[Tt][0-9]*",
                                     .description = "Only ids starting with this (T12: T12, T120…)"}),
      field(&FilterArgs::archived, {.name = "archived", .type = ParamType::Enum, .default_json = R"("exclude")",
                                    .choices = {"exclude", "only", "include"},
                                    .description = "Archived tasks: leave out, only, or include"}),
  };
}

std::vector<Field<FilterArgs>> filter_fields(std::initializer_list<std::string_view> names) {
  std::vector<Field<FilterArgs>> out;
  for (auto& one : filter_fields())
    if (std::find(names.begin(), names.end(), one.specs.front().name) != names.end()) out.push_back(std::move(one));
  return out;
}

namespace {

void register_show(Registry& registry) {
  const auto show_args = bind(field(&ShowArgs::id, id_param()), field(&ShowArgs::detail, detail_param(R"("full")")));
  registry.add({.domain = "tasks", .name = "show", .gateway = Gateway::Query,
                .summary = "One task, every field",
                .params = show_args.specs(),
                .returns = "the task: id, title, description, status, priority, type, parent, position, depends, "
                           "labels, acceptance, files, notes[{at,text}], relates, phase, size, blockedBy, "
                           "createdAt, updatedAt (when not createdAt), completedAt, archived, version, research (linked research entry ids), "
                           "claim{session,agent?,leaseEnds?,lapsed?} (who works on it), evidence{atoms, coverage?}, "
                           "thread{count,last?[{id,at,from,body}]} (messages to it, newest first), "
                           "sync[{key,url?,state,conflict?}] (issues.sync links) (empty fields omitted)",
                .errors = {ErrorCode::NotFound},
                .examples = {{R"({"id":"T001"})", "show T001"}},
                .idempotent = true, .tier = 0, .shortcut = "show",
                .text_view = TextView::TaskCard, .known_hash = true,
                .aliases = {"view", "read", "display", "info", "describe"}, .original_names = {"tasks.get"},
                .handler = show_args.handler(show)});
}

void register_list(Registry& registry) {
  const auto list_args = bind_parts<ListArgs>(
      part_of(&ListArgs::filter, filter_fields()),
      field(&ListArgs::sort, {.name = "sort", .type = ParamType::Enum, .default_json = R"("position")",
                              .choices = {"position", "priority", "created", "updated", "title", "status", "id"},
                              .description = "Sort key (position = tree order)"}),
      field(&ListArgs::order, {.name = "order", .type = ParamType::Enum, .choices = {"asc", "desc"},
                               .description = "Sort direction (default asc; priority: desc, critical first)"}),
      paging(&ListArgs::page, "50"), field(&ListArgs::in_scope, in_scope_param()), projection(&ListArgs::rows));
  registry.add({.domain = "tasks", .name = "list", .gateway = Gateway::Query,
                .summary = "List tasks",
                .params = list_args.specs(),
                .returns = "[{id,title,status,priority,parent?,waitingOn?[unfinished dependencies],blockedBy?,claim?}] (full records with detail:'full'); "
                           "_meta.page {total,hasMore,nextOffset} when there are more rows; E_NO_DATA note when none matches",
                .errors = {ErrorCode::SessionRequired, ErrorCode::SessionNotFound},
                .examples = {{R"({"status":["pending","active"],"limit":20})", "open tasks"},
                             {R"({"parent":"T001"})", "children of T001"},
                             {R"({"under":"T001","label":["api","ui"],"readiness":"ready"})", "what can start in epic T001, labelled api and ui"}},
                .idempotent = true, .tier = 1, .shortcut = "list", .shortcut_aliases = {"ls"},
                .views = {{"ready", R"({"readiness":"ready","sort":"priority"})", "What can start now, most important first"},
                          {"blocked", R"({"readiness":"blocked"})", "What waits, and on what"}},
                .text_view = TextView::TaskTable, .row_fields = list_fields(), .known_hash = true,
                .aliases = {"ls", "all", "index", "system.labels"}, .handler = list_args.handler(list)});
}

void register_find(Registry& registry) {
  const auto find_args = bind_parts<FindArgs>(
      field(&FindArgs::query,
            {.name = "query", .type = ParamType::String, .required = true, .min = 1, .max = 200,
             .description = "Words to search for in title, description, labels and notes (prefix match), or a task id",
             .positional = true}),
      part_of(&FindArgs::filter, filter_fields({"status", "under", "label"})),
      field(&FindArgs::in_scope, in_scope_param()),
      field(&FindArgs::include_archived, {.name = "includeArchived", .type = ParamType::Bool,
                                          .description = "Also search archived tasks"}),
      field(&FindArgs::limit, {.name = "limit", .type = ParamType::Int, .default_json = "5", .min = 1, .max = 100,
                               .description = "Most results"}),
      field(&FindArgs::offset, {.name = "offset", .type = ParamType::Int, .default_json = "0", .min = 0,
                                .description = "Results to skip (from _meta.page.nextOffset)"}),
      projection(&FindArgs::rows));
  registry.add({.domain = "tasks", .name = "find", .gateway = Gateway::Query,
                .summary = "Search tasks by text or id",
                .params = find_args.specs(),
                .returns = "{columns:[id,title,status,priority,parent], rows:[[…]] best first of the newest 1000 "
                           "matches, every?:{column: value shared by all rows}} (full records with detail:'full'); "
                           "_meta.page {total|totalAtLeast,hasMore,nextOffset} when more match; E_NO_DATA note when "
                           "nothing matches",
                .errors = {ErrorCode::SessionRequired, ErrorCode::SessionNotFound},
                .examples = {{R"({"query":"auth"})", "tasks about auth"}},
                .idempotent = true, .tier = 0, .shortcut = "find",
                .text_view = TextView::FoundTasks, .row_fields = task_field_names(), .table_rows = true,
                .aliases = {"search", "query", "grep", "lookup"}, .handler = find_args.handler(find)});
}

void register_exists(Registry& registry) {
  const auto exists_args = bind(field(&IdArgs::id, id_param()));
  registry.add({.domain = "tasks", .name = "exists", .gateway = Gateway::Query,
                .summary = "Check whether a task id exists",
                .params = exists_args.specs(),
                .returns = "{id, exists, archived?}; E_NO_DATA note when it does not exist",
                .examples = {{R"({"id":"T001"})", "does T001 exist"}},
                .idempotent = true, .tier = 2, .shortcut = "exists", .text_view = TextView::Exists,
                .handler = exists_args.handler(exists)});
}

void register_tree(Registry& registry) {
  const auto tree_args = bind(
      field(&TreeArgs::id, {.name = "id", .type = ParamType::TaskId,
                            .description = "Root of the subtree (default: all top-level tasks)", .positional = true}),
      field(&TreeArgs::depth, {.name = "depth", .type = ParamType::Int, .default_json = "3", .min = 1, .max = 3,
                               .description = "Levels to show"}),
      field(&TreeArgs::include_done, {.name = "includeDone", .type = ParamType::Bool, .default_json = "true",
                                      .description = "Include done and cancelled tasks"}),
      field(&TreeArgs::limit, {.name = "limit", .type = ParamType::Int, .default_json = "50", .min = 1, .max = 500,
                               .description = "Top-level tasks per page"}),
      field(&TreeArgs::offset, {.name = "offset", .type = ParamType::Int, .default_json = "0", .min = 0,
                                .description = "Top-level tasks to skip"}),
      projection(&TreeArgs::rows));
  registry.add({.domain = "tasks", .name = "tree", .gateway = Gateway::Query,
                .summary = "The task hierarchy",
                .params = tree_args.specs(),
                .returns = "[{id,title,status,priority? (when not medium),type?,waitingOn?,children?[…]}] (full records with detail:'full'); "
                           "_meta.page when there are more top-level tasks",
                .errors = {ErrorCode::NotFound},
                .examples = {{R"({"id":"T001"})", "subtree of T001"}},
                .idempotent = true, .tier = 1, .shortcut = "tree",
                .text_view = TextView::TaskTree, .row_fields = task_field_names(),
                .handler = tree_args.handler(tree)});
}

}  // namespace

void register_tasks_queries(Registry& registry) {
  (void)kStatuses;
  register_show(registry);
  register_list(registry);
  register_find(registry);
  register_exists(registry);
  register_tree(registry);
}

}  // namespace ct::tasks
