// The tasks role, written once over the backend's sql::Runner: task rows and their dependency
// edges, lists and counts, graph loads, focus and claims. The next-task walk and search are each
// backend's own (their indexes differ), and so are the writes PostgreSQL makes in one statement.
#include "engines/store/task_store.h"

#include <algorithm>

#include "engines/store/sql_query.h"
#include "engines/store/store_rows.h"

namespace ct {
namespace {

using sql::Value;

Result<Task> read_task(const sql::Cursor& row) { return read_task_row(row); }

Error task_not_found(const std::string& id) {
  return Error(ErrorCode::NotFound, "Task " + id + " not found").with_fix(call("tasks.find", {{"query", id}}));
}

/// The dependency edges of `task` (its depends list), after those it had when `replace`.
Result<void> write_edges(sql::Runner& db, const Task& task, bool replace) {
  const Value id[] = {Value(task.id)};
  if (replace) CT_TRY(db.run("DELETE FROM task_deps WHERE task_id = ?1", id, "cannot write dependency edges"));
  for (const auto& dependency : task.depends) {
    const Value edge[] = {Value(task.id), Value(dependency)};
    CT_TRY(db.run("INSERT INTO task_deps(task_id, depends_on) VALUES(?1, ?2) ON CONFLICT DO NOTHING", edge,
                  "cannot write dependency edges"));
  }
  return {};
}

}  // namespace

const std::string& TaskStore::get_task_sql() {
  static const std::string sql = task_select() + " WHERE t.id = ?1";
  return sql;
}

Result<std::optional<Task>> TaskStore::get_task(std::string_view id) {
  const Value args[] = {Value(id)};
  return sql_runner().first(get_task_sql(), args, "cannot read a task", read_task);
}

Result<std::vector<Task>> TaskStore::get_tasks(const std::vector<std::string>& ids) {
  std::vector<Task> out;
  out.reserve(ids.size());
  for (const auto& id : ids) {
    CT_TRY_ASSIGN(std::optional<Task> task, get_task(id));
    if (task) out.push_back(std::move(*task));
  }
  return out;
}

Result<std::vector<Task>> TaskStore::list_tasks(const TaskQuery& query) {
  auto& db = sql_runner();
  const sql::Dialect& dialect = db.dialect();
  sql::Args args;
  std::string where = sql::task_where(dialect, query.filter, true, args);
  const std::string order = sql::task_order_by(dialect, query.sort, query.descending);
  if (query.limit < 0 && query.offset <= 0) return db.all(task_select() + where + order, args, "cannot list tasks", read_task);
  // A page: sort and cut on row numbers alone, then read the full rows of the page only (sorting
  // whole rows of a large table costs far more than sorting keys).
  const std::int64_t offset = std::max<std::int64_t>(0, query.offset);
  std::string page = "SELECT t.num AS page_num FROM tasks t" + where + order;
  const bool indexed = query.sort == SortKey::Position || query.sort == SortKey::Priority ||
                       query.sort == SortKey::Created || query.sort == SortKey::Updated;
  if (query.limit >= 0 && indexed && query.filter.statuses.size() != 1) {
    // Several statuses: each status's index (schema 8) walks its tasks in this order, so the page
    // is the best offset + limit of each status, merged — instead of sorting every matching task
    // (by update over every status of 100k: 9.3 ms, now 2.9 ms with the count; docs/performance.md).
    args = sql::Args();
    std::string arms;
    TaskFilter one = query.filter;
    for (auto status : kTaskStatuses) {
      const auto& wanted = query.filter.statuses;
      if (!wanted.empty() && std::find(wanted.begin(), wanted.end(), status) == wanted.end()) continue;
      one.statuses = {status};
      const std::string arm_where = sql::task_where(dialect, one, true, args);
      arms += arms.empty() ? "" : " UNION ALL ";
      arms += "SELECT * FROM (SELECT t.num, t.parent, t.position, t.priority, t.created_at, t.updated_at FROM tasks t" +
              arm_where + order + " LIMIT " + args(offset + query.limit) + ") AS a";
    }
    page = "SELECT t.num AS page_num FROM (" + arms + ") AS t" + order;
  }
  page += " LIMIT " + args(sql::limit_of(query.limit));
  page += " OFFSET " + args(offset);
  const std::string sql = "SELECT " + std::string(kTaskColumns) + " FROM (" + page + ") AS page " +
                          std::string(dialect.ordered_join) + " tasks t ON t.num = page.page_num" + order;
  return db.all(sql, args, "cannot list tasks", read_task);
}

std::string TaskStore::count_tasks_sql(const TaskFilter& filter, sql::Args& args) {
  return "SELECT count(*) FROM tasks t" + sql::task_where(sql_runner().dialect(), filter, true, args);
}

Result<std::int64_t> TaskStore::count_tasks(const TaskFilter& filter) {
  sql::Args args;
  const std::string sql = count_tasks_sql(filter, args);
  return sql_runner().integer(sql, args, "cannot count tasks");
}

TaskFilter TaskStore::open_children_filter(std::string_view parent) {
  TaskFilter filter;
  filter.parent = std::string(parent);
  filter.statuses = {TaskStatus::Pending, TaskStatus::Active, TaskStatus::Blocked};
  return filter;
}

Result<std::map<TaskStatus, std::int64_t>> TaskStore::count_by_status(const TaskFilter& filter) {
  auto& db = sql_runner();
  sql::Args args;
  const std::string where = sql::task_where(db.dialect(), filter, false, args);
  std::map<TaskStatus, std::int64_t> counts;
  for (auto status : kTaskStatuses) counts[status] = 0;
  CT_TRY(db.each("SELECT t.status, count(*) FROM tasks t" + where + " GROUP BY t.status", args, "cannot count tasks",
                 [&](const sql::Cursor& row) {
                   if (auto status = parse_status(row.text(0))) counts[*status] = row.integer(1);
                 }));
  return counts;
}

Result<std::string> TaskStore::allocate_task_id() {
  CT_TRY_ASSIGN(std::optional<std::int64_t> number,
                sql_runner().first("UPDATE meta SET value = CAST(CAST(value AS BIGINT) + 1 AS TEXT) "
                                   "WHERE key = 'next_task_num' RETURNING CAST(value AS BIGINT) - 1",
                                   {}, "cannot allocate a task id", [](const sql::Cursor& row) { return row.integer(0); }));
  if (!number) return fail(ErrorCode::Internal, "the task id counter is missing from the database");
  return format_task_id(*number);
}

Result<std::vector<std::string>> TaskStore::allocate_task_ids(std::size_t count) {
  std::vector<std::string> ids;
  if (count == 0) return ids;
  const Value args[] = {Value(static_cast<std::int64_t>(count))};
  CT_TRY_ASSIGN(std::optional<std::int64_t> first,
                sql_runner().first("UPDATE meta SET value = CAST(CAST(value AS BIGINT) + ?1 AS TEXT) "
                                   "WHERE key = 'next_task_num' RETURNING CAST(value AS BIGINT) - ?1",
                                   args, "cannot allocate task ids", [](const sql::Cursor& row) { return row.integer(0); }));
  if (!first) return fail(ErrorCode::Internal, "the task id counter is missing from the database");
  ids.reserve(count);
  for (std::size_t i = 0; i < count; ++i) ids.push_back(format_task_id(*first + static_cast<std::int64_t>(i)));
  return ids;
}

Result<void> TaskStore::insert_task(const Task& task) {
  auto number = parse_task_id(task.id);
  if (!number) return fail(ErrorCode::InvalidInput, "'" + task.id + "' is not a task id (T followed by digits)");
  auto& db = sql_runner();
  return db.atomically([&]() -> Result<void> {
    static const std::string sql = task_insert_sql() + " ON CONFLICT DO NOTHING";
    CT_TRY(db.run(sql, task_values(*number, task, true), "cannot insert task " + task.id));
    if (db.changes() == 0)
      return fail(Error(ErrorCode::IdCollision, "task " + task.id + " already exists").with_fix("allocate a new id and retry"));
    CT_TRY(write_edges(db, task, false));
    CT_TRY(index_task(*number));
    // Keep the counter ahead of every id ever stored (imports bring their own ids).
    const Value counter[] = {Value(*number)};
    return db.run("UPDATE meta SET value = CAST(?1 + 1 AS TEXT) "
                  "WHERE key = 'next_task_num' AND CAST(value AS BIGINT) <= ?1",
                  counter, "cannot update the task id counter");
  });
}

Result<void> TaskStore::update_task(const Task& task) {
  auto& db = sql_runner();
  return db.atomically([&]() -> Result<void> {
    struct Current {
      std::int64_t number;
      bool same_text;
      bool same_edges;
    };
    const Value id[] = {Value(task.id)};
    CT_TRY_ASSIGN(std::optional<Current> current,
                  db.first("SELECT num, title, description, labels, notes, depends FROM tasks WHERE id = ?1", id,
                           "cannot read task " + task.id, [&](const sql::Cursor& row) {
                             return Current{row.integer(0),
                                            row.text(1) == task.title && row.text(2) == task.description &&
                                                row.text(3) == encode_strings(task.labels) &&
                                                row.text(4) == encode_notes(task.notes),
                                            row.text(5) == encode_strings(task.depends)};
                           }));
    if (!current) return fail(task_not_found(task.id));
    static const std::string sql = "UPDATE tasks SET " + task_set_sql() + " WHERE num = ?1";
    CT_TRY(db.run(sql, task_values(current->number, task, false), "cannot update task " + task.id));
    if (!current->same_edges) CT_TRY(write_edges(db, task, true));
    if (!current->same_text) CT_TRY(index_task(current->number));
    return {};
  });
}

Result<void> TaskStore::delete_task(std::string_view id) {
  auto& db = sql_runner();
  return db.atomically([&]() -> Result<void> {
    const Value args[] = {Value(id)};
    CT_TRY_ASSIGN(std::optional<std::int64_t> number,
                  db.first("DELETE FROM tasks WHERE id = ?1 RETURNING num", args, "cannot delete task " + std::string(id),
                           [](const sql::Cursor& row) { return row.integer(0); }));
    if (!number) return fail(ErrorCode::NotFound, "Task " + std::string(id) + " not found");
    CT_TRY(db.run("DELETE FROM task_deps WHERE task_id = ?1 OR depends_on = ?1", args, "cannot delete dependency edges"));
    CT_TRY(unindex_task(*number));
    for (const char* sql : {"DELETE FROM research_links WHERE task_id = ?1", "DELETE FROM lifecycle WHERE subject = ?1",
                            "DELETE FROM lifecycle_events WHERE subject = ?1"})
      CT_TRY(db.run(sql, args, "cannot delete the records of task " + std::string(id)));
    return {};
  });
}

Result<void> TaskStore::index_task(std::int64_t) { return {}; }

Result<void> TaskStore::unindex_task(std::int64_t) { return {}; }

Result<std::vector<std::string>> TaskStore::children_of(std::string_view id, bool include_archived) {
  const Value args[] = {Value(id)};
  return sql_runner().strings(include_archived
                                  ? "SELECT id FROM tasks WHERE parent = ?1 ORDER BY position, num"
                                  : "SELECT id FROM tasks WHERE parent = ?1 AND archived = 0 ORDER BY position, num",
                              args, "cannot list children");
}

Result<std::vector<std::string>> TaskStore::dependents_of(std::string_view id) {
  const Value args[] = {Value(id)};
  return sql_runner().strings("SELECT d.task_id FROM task_deps d LEFT JOIN tasks t ON t.id = d.task_id "
                              "WHERE d.depends_on = ?1 ORDER BY t.num, d.task_id",
                              args, "cannot list dependents");
}

std::string_view TaskStore::max_position_sql(bool root) {
  return root ? "SELECT coalesce(max(position), 0) FROM tasks WHERE parent IS NULL"
              : "SELECT coalesce(max(position), 0) FROM tasks WHERE parent = ?1";
}

Result<std::int64_t> TaskStore::max_position(std::string_view parent) {
  const Value args[] = {Value(parent)};
  return sql_runner().integer(max_position_sql(parent.empty()), std::span(args).first(parent.empty() ? 0 : 1),
                              "cannot read positions");
}

Result<std::vector<TaskVersion>> TaskStore::subtree_versions(std::string_view root) {
  const Value args[] = {Value(root)};
  return sql_runner().all(
      "WITH RECURSIVE sub(id, parent, version) AS (SELECT id, parent, version FROM tasks WHERE parent = ?1 AND "
      "archived = 0 UNION ALL SELECT c.id, c.parent, c.version FROM tasks c JOIN sub ON c.parent = sub.id WHERE "
      "c.archived = 0) SELECT id, parent, version FROM sub",
      args, "cannot read the task graph", [](const sql::Cursor& row) -> Result<TaskVersion> {
        return TaskVersion{std::string(row.text(0)), std::string(row.text(1)), row.integer(2)};
      });
}

Result<std::vector<TaskVersion>> TaskStore::task_versions(const std::vector<std::string>& ids) {
  if (ids.empty()) return std::vector<TaskVersion>{};
  auto& db = sql_runner();
  const std::string sql = "SELECT id, parent, version, archived FROM tasks WHERE id IN (SELECT value FROM " +
                          sql::fill(db.dialect().list_items, "?1") + " AS s)";
  const Value args[] = {Value(encode_strings(ids))};
  return db.all(sql, args, "cannot read tasks", [](const sql::Cursor& row) -> Result<TaskVersion> {
    return TaskVersion{std::string(row.text(0)), std::string(row.text(1)), row.integer(2), row.integer(3) != 0};
  });
}

Result<std::vector<GraphTask>> TaskStore::graph_tasks(std::string_view root) {
  auto& db = sql_runner();
  // The subtree through the parent index (a recursive walk), or every unarchived task.
  const std::string columns =
      "SELECT t.id, t.title, t.parent, t.status, t.priority, t.type, t.position, t.created_at, t.updated_at, "
      "t.depends, t.labels, t.files, t.version";
  const std::string order = " ORDER BY t.parent" + std::string(db.dialect().roots_first) + ", t.position, t.num";
  const Value args[] = {Value(root)};
  const std::string sql =
      root.empty() ? columns + " FROM tasks t WHERE t.archived = 0" + order
                   // Each row found again by its number (the primary key), not by its id's index.
                   : "WITH RECURSIVE sub(num, id) AS (SELECT num, id FROM tasks WHERE parent = ?1 AND archived = 0"
                     " UNION ALL SELECT c.num, c.id FROM tasks c JOIN sub ON c.parent = sub.id WHERE c.archived = 0) " +
                         columns + " FROM sub JOIN tasks t ON t.num = sub.num" + order;
  return db.all(sql, root.empty() ? std::span<const Value>() : std::span<const Value>(args), "cannot read the task graph",
                [](const sql::Cursor& row) -> Result<GraphTask> {
                  GraphTask task;
                  task.id = row.text(0);
                  task.title = row.text(1);
                  task.parent = row.text(2);
                  auto status = parse_status(row.text(3));
                  auto priority = parse_priority(row.text(4));
                  auto type = parse_type(row.text(5));
                  if (!status || !priority || !type)
                    return fail(corrupt_column(task.id, !status ? "status" : !priority ? "priority" : "type"));
                  task.status = *status;
                  task.priority = *priority;
                  task.type = *type;
                  task.position = row.integer(6);
                  task.created_at = row.integer(7);
                  task.updated_at = row.integer(8);
                  task.version = row.integer(12);
                  for (auto [column, target, field] :
                       {std::tuple{9, &task.depends, "depends"}, std::tuple{10, &task.labels, "labels"},
                        std::tuple{11, &task.files, "files"}}) {
                    if (row.text(column) == "[]") continue;
                    CT_TRY_ASSIGN(*target, decode_strings(row.text(column), task.id, field));
                  }
                  return task;
                });
}

Result<std::optional<std::string>> TaskStore::get_focus(std::string_view session) {
  const Value args[] = {Value(session)};
  return sql_runner().first("SELECT task_id FROM focus WHERE session = ?1", args, "cannot read focus",
                            [](const sql::Cursor& row) { return std::string(row.text(0)); });
}

Result<void> TaskStore::set_focus(std::string_view session, std::optional<std::string> task_id) {
  if (!task_id) {
    const Value args[] = {Value(session)};
    return sql_runner().run("DELETE FROM focus WHERE session = ?1", args, "cannot clear focus");
  }
  const Value args[] = {Value(session), Value(*task_id)};
  return sql_runner().run("INSERT INTO focus(session, task_id) VALUES(?1, ?2) "
                          "ON CONFLICT(session) DO UPDATE SET task_id = excluded.task_id",
                          args, "cannot set focus");
}

namespace {
Claim read_claim(const sql::Cursor& row) {
  return Claim{std::string(row.text(0)), std::string(row.text(1)), std::string(row.text(2)), row.optional_int(3),
               std::string(row.text(4)), std::string(row.text(5))};
}
}  // namespace

const std::string& TaskStore::claim_on_sql() {
  static const std::string sql = std::string(sql::kClaimSelect) + " WHERE f.task_id = ?1";
  return sql;
}

Result<std::optional<Claim>> TaskStore::claim_on(std::string_view task_id) {
  const Value args[] = {Value(task_id)};
  return sql_runner().first(claim_on_sql(), args, "cannot read focus", read_claim);
}

Result<std::vector<Claim>> TaskStore::claims() { return sql_runner().all(sql::kClaimSelect, {}, "cannot read focus", read_claim); }

}  // namespace ct
