// tasks domain — the reports over tasks (cleo_query): stats, a task's history, the current focus,
// its links, and the export of tasks in the format tasks.import reads.
#include "domains/tasks/tasks_common.h"

namespace ct::tasks {
namespace {

struct StatsArgs {
  std::optional<std::string> parent;
};

Result<Reply> stats(Context& context, const StatsArgs& args) {
  TaskFilter filter;
  if (const auto& parent = args.parent) {
    auto engine_ = engine(context);
    CT_TRY(engine_.get(*parent));
    filter.parent = *parent;
  }
  CT_TRY_ASSIGN(auto live, context.db().count_by_status(filter));
  filter.archived = ArchivedFilter::Only;
  CT_TRY_ASSIGN(std::int64_t archived, context.db().count_tasks(filter));
  json::Value data = json::Value::object();
  std::int64_t total = 0;
  for (auto status : kTaskStatuses) {
    std::int64_t n = live.contains(status) ? live.at(status) : 0;
    total += n;
    data.set(to_string(status), n);
  }
  data.set("total", total);
  data.set("archived", archived);
  std::int64_t done = live.contains(TaskStatus::Done) ? live.at(TaskStatus::Done) : 0;
  data.set("percentDone", total == 0 ? 0 : (done * 100) / total);
  return Reply::of(std::move(data));
}

struct HistoryArgs {
  std::string id;
  std::optional<std::string> field;
  Paging page;
};

Result<Reply> history(Context& context, const HistoryArgs& args) {
  auto engine_ = engine(context);
  // The task may have been hard-deleted: its history is still readable.
  AuditQuery query;
  query.task_id = args.id;
  if (args.field) query.field = *args.field;
  query.limit = args.page.limit;
  query.offset = args.page.offset;
  CT_TRY_ASSIGN(std::vector<AuditEntry> rows, context.db().read_audit(query));
  if (rows.empty() && query.offset == 0) CT_TRY(engine_.get(args.id));
  json::Value list = json::Value::array();
  for (const auto& row : rows) {
    json::Value item = audit_row_json(row, /*with_task=*/false);
    json::Value changes = json::Value::array();
    for (const auto& change : row.changes) {
      if (change.task_id != *query.task_id) continue;
      json::Value c = json::Value::object();
      c.set("field", change.field);
      if (!change.before.is_null()) c.set("before", change.before);
      if (!change.after.is_null()) c.set("after", change.after);
      changes.push_back(std::move(c));
    }
    if (!changes.empty()) item.set("changes", std::move(changes));
    list.push_back(std::move(item));
  }
  return Reply::of(std::move(list));
}

Result<Reply> current(Context& context, const NoArgs&) {
  auto engine_ = engine(context);
  CT_TRY_ASSIGN(std::optional<Task> task, engine_.current());
  if (!task) return Reply::noted(json::Value(), ErrorCode::NoData);
  json::Value data = json::Value::object();
  data.set("id", task->id);
  data.set("title", task->title);
  data.set("status", to_string(task->status));
  return Reply::of(std::move(data));
}

Result<Reply> relates(Context& context, const IdArgs& args) {
  auto engine_ = engine(context);
  CT_TRY_ASSIGN(Task task, engine_.get(args.id));
  json::Value data = json::Value::object();
  data.set("id", task.id);
  data.set("relates", task_field(task, "relates"));
  return Reply::of(std::move(data));
}

struct ExportArgs {
  std::optional<std::string> id;
  FilterArgs filter;
  bool include_archived = false;
};

Result<Reply> export_tasks(Context& context, const ExportArgs& args) {
  std::vector<Task> tasks;
  if (const auto& root = args.id) {
    // A subtree: the root and every descendant, parents before children.
    auto engine_ = engine(context);
    CT_TRY_ASSIGN(Task task, engine_.get(*root));
    std::vector<Task> queue{std::move(task)};
    for (std::size_t i = 0; i < queue.size(); ++i) {
      TaskQuery query;
      query.filter.parent = queue[i].id;
      query.filter.archived = args.include_archived ? ArchivedFilter::Include : ArchivedFilter::Exclude;
      CT_TRY_ASSIGN(std::vector<Task> children, context.db().list_tasks(query));
      for (auto& child : children) queue.push_back(std::move(child));
    }
    tasks = std::move(queue);
  } else {
    TaskQuery query;
    CT_TRY_ASSIGN(query.filter, read_filter(args.filter));
    if (args.include_archived) query.filter.archived = ArchivedFilter::Include;
    query.sort = SortKey::Id;
    CT_TRY_ASSIGN(tasks, context.db().list_tasks(query));
  }
  json::Value list = json::Value::array();
  for (const auto& task : tasks) list.push_back(task_full(task));
  json::Value data = json::Value::object();
  data.set("format", "cleo-tasks");
  data.set("version", 1);
  data.set("exportedAt", format_iso8601(context.now()));
  data.set("count", static_cast<std::int64_t>(tasks.size()));
  data.set("tasks", std::move(list));
  return Reply::of(std::move(data));
}

}  // namespace

void register_tasks_report(Registry& registry) {
  const auto stats_args = bind(field(&StatsArgs::parent, {.name = "parent", .type = ParamType::TaskId,
                                                         .description = "Only direct children of this task"}));
  registry.add({.domain = "tasks", .name = "stats", .gateway = Gateway::Query,
                .summary = "Count tasks by status",
                .params = stats_args.specs(),
                .returns = "{pending,active,blocked,done,cancelled,total,archived,percentDone}",
                .examples = {{R"({})", "whole project"}},
                .idempotent = true, .tier = 2, .handler = stats_args.handler(stats)});
  const auto history_args =
      bind(field(&HistoryArgs::id, id_param()),
           field(&HistoryArgs::field, {.name = "field", .type = ParamType::String, .max = 40,
                                       .description = "Only changes of this field (who last changed it, and why)"}),
           paging(&HistoryArgs::page, "20"));
  registry.add({.domain = "tasks", .name = "history", .gateway = Gateway::Query,
                .summary = "Show the audited changes of a task, newest first",
                .params = history_args.specs(),
                .returns = "[{seq,at,operation,outcome?,session?,agent?,by?,reason?,changes[{field,before?,after?}]}]",
                .errors = {ErrorCode::NotFound},
                .examples = {{R"({"id":"T001"})", "history of T001"}},
                .idempotent = true, .tier = 2, .shortcut = "history",
                .text_view = TextView::TaskHistory, .aliases = {"blame", "audit", "changes"},
                .handler = history_args.handler(history)});
  registry.add({.domain = "tasks", .name = "current", .gateway = Gateway::Query,
                .summary = "Show the task in focus",
                .returns = "{id,title,status}, or null with an E_NO_DATA note when nothing is in focus",
                .examples = {{R"({})", "what am I working on"}},
                .idempotent = true, .tier = 2, .shortcut = "current",
                .text_view = TextView::CurrentTask, .aliases = {"focus", "active", "working"},
                .original_names = {"session.focus.get", "session.focus-show"}, .handler = no_args(current)});
  const auto relates_args = bind(field(&IdArgs::id, id_param()));
  registry.add({.domain = "tasks", .name = "relates", .gateway = Gateway::Query,
                .summary = "List a task's non-blocking links to other tasks",
                .params = relates_args.specs(),
                .returns = "{id, relates[{id,type,reason?}]}",
                .errors = {ErrorCode::NotFound},
                .examples = {{R"({"id":"T001"})", "links of T001"}},
                .idempotent = true, .tier = 2, .handler = relates_args.handler(relates)});
  const auto export_args = bind_parts<ExportArgs>(
      field(&ExportArgs::id, {.name = "id", .type = ParamType::TaskId, .description = "Export this task and its subtree",
                              .positional = true}),
      part_of(&ExportArgs::filter, filter_fields()),
      field(&ExportArgs::include_archived, {.name = "includeArchived", .type = ParamType::Bool,
                                            .description = "Include archived tasks"}));
  registry.add({.domain = "tasks", .name = "export", .gateway = Gateway::Query,
                .summary = "Export tasks as JSON for tasks.import",
                .params = export_args.specs(),
                .returns = "{format:'cleo-tasks', version:1, exportedAt, count, tasks[full records]}",
                .errors = {ErrorCode::NotFound},
                .examples = {{R"({"id":"T001"})", "T001 and its subtree"}},
                .idempotent = true, .tier = 2, .text_view = TextView::Json,
                .handler = export_args.handler(export_tasks)});
}

}  // namespace ct::tasks
