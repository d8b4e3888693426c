// The PostgreSQL store, part: task rows and their dependency edges, lists and counts, the next-task
// candidates, graph loads, focus and sessions. A write that SQLite makes in several statements is
// one statement here (data-modifying CTEs), and never raises an error the caller is meant to
// handle: a failed statement would abort the whole transaction.
#include <array>

#include "engines/store/postgres/pg_store_impl.h"

namespace ct::pg {
namespace {

/// $1…$11 in the column order of kSessionSelect.
Params session_params(const Session& session) {
  Params params;
  params.add(session.id).add(session.name).add(session.scope).add(session.agent);
  params.add(to_string(session.status)).add(session.note).add(session.next_action);
  params.add(std::int64_t{session.created_at}).add(std::int64_t{session.updated_at});
  params.add(session.ended_at).add(session.archived_at);
  return params;
}

using sql::session_where;

/// The task's fields from title onwards (24 values, as the INSERT and UPDATE below list them).
void add_task_fields(Params& params, const Task& task) {
  params.add(task.title).add(task.description);
  params.add(to_string(task.status)).add(to_string(task.priority)).add(to_string(task.type));
  if (task.parent.empty()) params.add_null(); else params.add(task.parent);
  params.add(task.position);
  params.add(encode_strings(task.depends)).add(encode_strings(task.labels));
  params.add(encode_strings(task.acceptance)).add(encode_strings(task.files));
  params.add(encode_notes(task.notes)).add(encode_relations(task.relates));
  params.add(task.phase).add(to_string(task.size)).add(task.blocked_by);
  params.add(std::int64_t{task.created_at}).add(std::int64_t{task.updated_at});
  params.add(task.completed_at).add(task.cancelled_at).add(task.cancellation_reason);
  params.add(std::int64_t{task.archived ? 1 : 0}).add(task.archived_at).add(task.archive_reason);
}

Error task_not_found(const std::string& id) {
  return Error(ErrorCode::NotFound, "Task " + id + " not found")
      .with_fix(call("tasks.find", {{"query", id}}));
}

}  // namespace

Result<std::optional<Task>> PgStore::get_task(std::string_view id) {
  static const std::string sql = select_tasks() + " WHERE t.id = $1";
  CT_TRY_ASSIGN(std::vector<Task> found, collect_tasks(sql, Params().add(id), "cannot read a task"));
  if (found.empty()) return std::optional<Task>();
  return std::optional<Task>(std::move(found.front()));
}

Result<std::vector<Task>> PgStore::get_tasks(const std::vector<std::string>& ids) {
  if (ids.empty()) return std::vector<Task>();
  // One statement, in the order asked (a missing id is skipped, a repeated one repeats).
  static const std::string sql = "SELECT " + std::string(kTaskColumns) +
                                 " FROM jsonb_array_elements_text($1::jsonb) WITH ORDINALITY AS wanted(id, ord)"
                                 " JOIN tasks t ON t.id = wanted.id ORDER BY wanted.ord";
  return collect_tasks(sql, Params().add(encode_strings(ids)), "cannot read tasks");
}

Result<std::vector<Task>> PgStore::list_tasks(const TaskQuery& query) {
  Params params;
  std::string where;
  append_filter(query.filter, true, where, params);
  std::string order = order_by(query.sort, query.descending);
  if (query.limit < 0 && query.offset <= 0) return collect_tasks(select_tasks() + where + order, params, "cannot list tasks");
  // A page: sort and cut on row numbers alone, then read the full rows of the page only.
  const std::int64_t offset = std::max<std::int64_t>(0, query.offset);
  std::string page;
  const bool indexed = query.sort == SortKey::Position || query.sort == SortKey::Priority ||
                       query.sort == SortKey::Created || query.sort == SortKey::Updated;
  if (query.limit >= 0 && indexed && query.filter.statuses.size() != 1) {
    // Several statuses: each status's index walks its tasks in this order, so the page is the best
    // offset + limit of each status, merged (as the SQLite backend does).
    params = Params();
    std::string arms;
    TaskFilter one = query.filter;
    for (auto status : kTaskStatuses) {
      const auto& wanted = query.filter.statuses;
      if (!wanted.empty() && std::find(wanted.begin(), wanted.end(), status) == wanted.end()) continue;
      one.statuses = {status};
      std::string arm_where;
      append_filter(one, true, arm_where, params);
      arms += arms.empty() ? "" : " UNION ALL ";
      arms += "(SELECT t.num, t.parent, t.position, t.priority, t.created_at, t.updated_at FROM tasks t" + arm_where +
              order + " LIMIT " + params.next() + "::bigint)";
      params.add(offset + query.limit);
    }
    page = "SELECT t.num AS page_num FROM (" + arms + ") AS t" + order;
  } else {
    page = "SELECT t.num AS page_num FROM tasks t" + where + order;
  }
  page += " LIMIT " + params.next() + "::bigint";
  if (query.limit >= 0) params.add(query.limit); else params.add_null();
  page += " OFFSET " + params.next() + "::bigint";
  params.add(offset);
  std::string sql = "SELECT " + std::string(kTaskColumns) + " FROM (" + page +
                    ") AS page JOIN tasks t ON t.num = page.page_num" + order;
  return collect_tasks(sql, params, "cannot list tasks");
}

Result<std::int64_t> PgStore::count_tasks(const TaskFilter& filter) {
  Params params;
  std::string where;
  append_filter(filter, true, where, params);
  CT_TRY_ASSIGN(Rows rows, query("SELECT count(*) FROM tasks t" + where, params, "cannot count tasks"));
  return rows.integer(0, 0);
}

Result<std::map<TaskStatus, std::int64_t>> PgStore::count_by_status(const TaskFilter& filter) {
  Params params;
  std::string where;
  append_filter(filter, false, where, params);
  CT_TRY_ASSIGN(Rows rows,
                query("SELECT t.status, count(*) FROM tasks t" + where + " GROUP BY t.status", params, "cannot count tasks"));
  std::map<TaskStatus, std::int64_t> counts;
  for (auto status : kTaskStatuses)
    counts[status] = 0;
  for (int i = 0; i < rows.size(); ++i)
    if (auto status = parse_status(rows.text(i, 0))) counts[*status] = rows.integer(i, 1);
  return counts;
}

Result<std::string> PgStore::allocate_task_id() {
  CT_TRY_ASSIGN(Rows rows, query("UPDATE meta SET value = (value::bigint + 1)::text "
                                 "WHERE key = 'next_task_num' RETURNING value::bigint - 1",
                                 "cannot allocate a task id"));
  if (rows.empty()) return fail(ErrorCode::Internal, "the task id counter is missing from the database");
  return format_task_id(rows.integer(0, 0));
}

Result<void> PgStore::insert_task(const Task& task) {
  auto number = parse_task_id(task.id);
  if (!number) return fail(ErrorCode::InvalidInput, "'" + task.id + "' is not a task id (T followed by digits)");
  // The row, its dependency edges, and the id counter kept ahead of every id ever stored (imports
  // bring their own ids), in one statement; a taken id inserts nothing.
  static const std::string sql =
      "WITH ins AS (INSERT INTO tasks(num, id, title, description, status, priority, type, parent, position, "
      "depends, labels, acceptance, files, notes, relates, phase, size, blocked_by, created_at, "
      "updated_at, completed_at, cancelled_at, cancellation_reason, archived, archived_at, "
      "archive_reason, version) VALUES($1::bigint, $2, $3, $4, $5, $6, $7, $8, $9::bigint, $10, $11, $12, $13, "
      "$14, $15, $16, $17, $18, $19::bigint, $20::bigint, $21::bigint, $22::bigint, $23, $24::bigint, $25::bigint, "
      "$26, $27::bigint) ON CONFLICT DO NOTHING RETURNING id, depends),"
      " edges AS (INSERT INTO task_deps(task_id, depends_on)"
      "  SELECT DISTINCT ins.id, d.value FROM ins, jsonb_array_elements_text(ins.depends::jsonb) AS d(value)"
      "  ON CONFLICT DO NOTHING),"
      " counter AS (UPDATE meta SET value = ($1::bigint + 1)::text"
      "  WHERE key = 'next_task_num' AND value::bigint <= $1::bigint AND EXISTS (SELECT 1 FROM ins))"
      " SELECT count(*) FROM ins";
  Params params;
  params.add(*number).add(task.id);
  add_task_fields(params, task);
  params.add(task.version);
  CT_TRY_ASSIGN(Rows rows, query(sql, params, "cannot insert task " + task.id));
  if (rows.integer(0, 0) == 0)
    return fail(Error(ErrorCode::IdCollision, "task " + task.id + " already exists").with_fix("allocate a new id and retry"));
  return {};
}

Result<void> PgStore::update_task(const Task& task) {
  // The row and its edges in one statement: edges no longer listed go, new ones come (the
  // generated search column follows the row by itself).
  static const std::string sql =
      "WITH upd AS (UPDATE tasks SET title = $2, description = $3, status = $4, priority = $5, type = $6, "
      "parent = $7, position = $8::bigint, depends = $9, labels = $10, acceptance = $11, files = $12, "
      "notes = $13, relates = $14, phase = $15, size = $16, blocked_by = $17, created_at = $18::bigint, "
      "updated_at = $19::bigint, completed_at = $20::bigint, cancelled_at = $21::bigint, cancellation_reason = $22, "
      "archived = $23::bigint, archived_at = $24::bigint, archive_reason = $25, version = $26::bigint "
      "WHERE id = $1 RETURNING id),"
      " wanted AS (SELECT DISTINCT d.value FROM jsonb_array_elements_text($9::jsonb) AS d(value)),"
      " gone AS (DELETE FROM task_deps WHERE task_id = $1 AND EXISTS (SELECT 1 FROM upd)"
      "  AND depends_on NOT IN (SELECT value FROM wanted)),"
      " added AS (INSERT INTO task_deps(task_id, depends_on) SELECT upd.id, wanted.value FROM upd, wanted"
      "  ON CONFLICT DO NOTHING)"
      " SELECT count(*) FROM upd";
  Params params;
  params.add(task.id);
  add_task_fields(params, task);
  params.add(task.version);
  CT_TRY_ASSIGN(Rows rows, query(sql, params, "cannot update task " + task.id));
  if (rows.integer(0, 0) == 0) return fail(task_not_found(task.id));
  return {};
}

Result<void> PgStore::delete_task(std::string_view id) {
  // The row, its edges in both directions, its research links and lifecycle records.
  static const std::string sql =
      "WITH del AS (DELETE FROM tasks WHERE id = $1 RETURNING num),"
      " edges AS (DELETE FROM task_deps WHERE (task_id = $1 OR depends_on = $1) AND EXISTS (SELECT 1 FROM del)),"
      " links AS (DELETE FROM research_links WHERE task_id = $1 AND EXISTS (SELECT 1 FROM del)),"
      " states AS (DELETE FROM lifecycle WHERE subject = $1 AND EXISTS (SELECT 1 FROM del)),"
      " events AS (DELETE FROM lifecycle_events WHERE subject = $1 AND EXISTS (SELECT 1 FROM del))"
      " SELECT count(*) FROM del";
  CT_TRY_ASSIGN(Rows rows, query(sql, Params().add(id), "cannot delete task " + std::string(id)));
  if (rows.integer(0, 0) == 0) return fail(ErrorCode::NotFound, "Task " + std::string(id) + " not found");
  return {};
}

Result<std::vector<std::string>> PgStore::children_of(std::string_view id, bool include_archived) {
  CT_TRY_ASSIGN(Rows rows,
                query(include_archived ? "SELECT id FROM tasks WHERE parent = $1 ORDER BY position, num"
                                       : "SELECT id FROM tasks WHERE parent = $1 AND archived = 0 ORDER BY position, num",
                      Params().add(id), "cannot list children"));
  std::vector<std::string> out;
  out.reserve(static_cast<std::size_t>(rows.size()));
  for (int i = 0; i < rows.size(); ++i)
    out.emplace_back(rows.text(i, 0));
  return out;
}

Result<std::vector<std::string>> PgStore::dependents_of(std::string_view id) {
  CT_TRY_ASSIGN(Rows rows, query("SELECT d.task_id FROM task_deps d LEFT JOIN tasks t ON t.id = d.task_id "
                                 "WHERE d.depends_on = $1 ORDER BY t.num, d.task_id",
                                 Params().add(id), "cannot list dependents"));
  std::vector<std::string> out;
  out.reserve(static_cast<std::size_t>(rows.size()));
  for (int i = 0; i < rows.size(); ++i)
    out.emplace_back(rows.text(i, 0));
  return out;
}

Result<std::int64_t> PgStore::max_position(std::string_view parent) {
  if (parent.empty()) {
    CT_TRY_ASSIGN(Rows rows, query("SELECT coalesce(max(position), 0) FROM tasks WHERE parent IS NULL",
                                   "cannot read positions"));
    return rows.integer(0, 0);
  }
  CT_TRY_ASSIGN(Rows rows, query("SELECT coalesce(max(position), 0) FROM tasks WHERE parent = $1", Params().add(parent),
                                 "cannot read positions"));
  return rows.integer(0, 0);
}

Result<std::vector<ReadyCandidate>> PgStore::top_ready(const ReadyScoring& scoring) {
  std::vector<ReadyCandidate> out;
  if (scoring.limit <= 0) return out;
  if (scoring.within && scoring.within->empty()) return out;
  // As the SQLite backend does: the score takes few values (4 priorities × in phase or not × leaf
  // or not), so each group is walked in (position, created_at) order on tasks_status_priority and
  // cut at `limit` (a LATERAL join per group), and only those rows are merged by score. Cost
  // follows the rows returned, not the store (a whole-table ranking took 0.5 s at 100k tasks).
  const bool phase_matters = !scoring.phase.empty() && scoring.phase_bonus != 0;
  const bool leaf_matters = scoring.leaf_bonus != 0;
  static constexpr std::array<std::string_view, 4> kPriorities = {"critical", "high", "medium", "low"};
  Params params;
  params.add(scoring.phase).add(scoring.limit);
  // Active tasks (whose claim may have lapsed) are groups of their own, read only when asked.
  std::string groups;
  for (std::string_view status : scoring.lapsed_before ? std::vector<std::string_view>{"pending", "active"}
                                                       : std::vector<std::string_view>{"pending"})
    for (std::size_t p = 0; p < kPriorities.size(); ++p)
      for (int in_phase : phase_matters ? std::vector<int>{1, 0} : std::vector<int>{-1})
        for (int leaf : leaf_matters ? std::vector<int>{1, 0} : std::vector<int>{-1}) {
          const int score = scoring.priority_points[p] + (in_phase == 1 ? scoring.phase_bonus : 0) +
                            (leaf == 1 ? scoring.leaf_bonus : 0);
          groups += groups.empty() ? "" : ", ";
          groups += "('" + std::string(kPriorities[p]) + "', " + std::to_string(in_phase) + ", " +
                    std::to_string(leaf) + ", " + std::to_string(score) + ", '" + std::string(status) + "')";
        }
  const std::string cutoff = params.next() + "::bigint";
  params.add(scoring.lapsed_before);
  std::string within = "TRUE";
  if (scoring.within) {
    within = "t.id = ANY(" + params.next() + "::text[])";
    params.add(text_array(std::vector<std::string>(scoring.within->begin(), scoring.within->end())));
  }
  const std::string open_children(kOpenChildren);
  const std::string sql =
      "SELECT c.id, g.score, g.leaf = 1, g.in_phase = 1 FROM (VALUES " + groups +
      ") AS g(priority, in_phase, leaf, score, status) CROSS JOIN LATERAL ("
      "SELECT t.id, t.position, t.created_at, t.num FROM tasks t"
      " WHERE t.status = g.status AND t.archived = 0 AND t.priority = g.priority"
      " AND (g.in_phase < 0 OR (t.phase = $1::text) = (g.in_phase = 1))"
      " AND (g.leaf < 0 OR (NOT " + open_children + ") = (g.leaf = 1))"
      " AND NOT EXISTS (SELECT 1 FROM task_deps d JOIN tasks u ON u.id = d.depends_on"
      "   WHERE d.task_id = t.id AND u.status NOT IN ('done', 'cancelled'))"
      // tasks.start would refuse a task another caller holds; an active task is a candidate only
      // once its claim has lapsed.
      " AND NOT " + sql::live_claim(cutoff) +
      " AND (t.status = 'pending' OR EXISTS (SELECT 1 FROM focus f WHERE f.task_id = t.id))"
      // An epic's work is its children: it is next only once they are finished.
      " AND NOT (t.type = 'epic' AND " + open_children + ") AND " + within +
      " ORDER BY t.position, t.created_at, t.num LIMIT $2::bigint) AS c"
      " ORDER BY g.score DESC, c.position, c.created_at, c.num LIMIT $2::bigint";
  CT_TRY_ASSIGN(Rows rows, query(sql, params, "cannot list ready tasks"));
  out.reserve(static_cast<std::size_t>(rows.size()));
  for (int i = 0; i < rows.size(); ++i)
    out.push_back(ReadyCandidate{std::string(rows.text(i, 0)), static_cast<int>(rows.integer(i, 1)),
                                 rows.text(i, 2) == "t", rows.text(i, 3) == "t"});
  return out;
}

Result<std::vector<GraphTask>> PgStore::graph_tasks(std::string_view root) {
  // The subtree through the parent index (a recursive walk), or every unarchived task.
  constexpr std::string_view kColumns =
      "SELECT t.id, t.title, t.parent, t.status, t.priority, t.type, t.position, t.created_at,"
      " t.updated_at, t.depends, t.labels, t.files, t.version";
  constexpr std::string_view kOrder = " ORDER BY t.parent NULLS FIRST, t.position, t.num";
  Result<Rows> result = root.empty()
                            ? query(std::string(kColumns) + " FROM tasks t WHERE t.archived = 0" + std::string(kOrder),
                                    "cannot read the task graph")
                            : query("WITH RECURSIVE sub(id) AS (SELECT id FROM tasks WHERE parent = $1 AND archived = 0"
                                    "  UNION ALL SELECT c.id FROM tasks c JOIN sub ON c.parent = sub.id WHERE c.archived = 0) " +
                                        std::string(kColumns) + " FROM sub JOIN tasks t ON t.id = sub.id" + std::string(kOrder),
                                    Params().add(root), "cannot read the task graph");
  CT_TRY_ASSIGN(Rows rows, std::move(result));
  std::vector<GraphTask> out;
  out.reserve(static_cast<std::size_t>(rows.size()));
  for (int i = 0; i < rows.size(); ++i) {
    GraphTask task;
    task.id = std::string(rows.text(i, 0));
    task.title = std::string(rows.text(i, 1));
    task.parent = std::string(rows.text(i, 2));
    auto status = parse_status(rows.text(i, 3));
    auto priority = parse_priority(rows.text(i, 4));
    auto type = parse_type(rows.text(i, 5));
    if (!status || !priority || !type)
      return fail(corrupt_column(task.id, !status ? "status" : !priority ? "priority" : "type"));
    task.status = *status;
    task.priority = *priority;
    task.type = *type;
    task.position = rows.integer(i, 6);
    task.created_at = rows.integer(i, 7);
    task.updated_at = rows.integer(i, 8);
    task.version = rows.integer(i, 12);
    for (auto [column, target, field] : {std::tuple{9, &task.depends, "depends"}, std::tuple{10, &task.labels, "labels"},
                                          std::tuple{11, &task.files, "files"}}) {
      std::string_view text = rows.text(i, column);
      if (text == "[]") continue;
      CT_TRY_ASSIGN(*target, decode_strings(text, task.id, field));
    }
    out.push_back(std::move(task));
  }
  return out;
}

Result<std::optional<std::string>> PgStore::get_focus(std::string_view session) {
  CT_TRY_ASSIGN(Rows rows, query("SELECT task_id FROM focus WHERE session = $1", Params().add(session), "cannot read focus"));
  if (rows.empty()) return std::optional<std::string>();
  return std::optional<std::string>(std::string(rows.text(0, 0)));
}

Result<void> PgStore::set_focus(std::string_view session, std::optional<std::string> task_id) {
  if (!task_id) {
    CT_TRY(query("DELETE FROM focus WHERE session = $1", Params().add(session), "cannot clear focus"));
    return {};
  }
  CT_TRY(query("INSERT INTO focus(session, task_id) VALUES($1, $2) "
               "ON CONFLICT(session) DO UPDATE SET task_id = excluded.task_id",
               Params().add(session).add(*task_id), "cannot set focus"));
  return {};
}

namespace {
Claim read_claim(const Rows& rows, int i) {
  return Claim{std::string(rows.text(i, 0)), std::string(rows.text(i, 1)), std::string(rows.text(i, 2)),
               rows.optional_int(i, 3)};
}
}  // namespace

Result<std::optional<Claim>> PgStore::claim_on(std::string_view task_id) {
  CT_TRY_ASSIGN(Rows rows, query(std::string(sql::kClaimSelect) + " WHERE f.task_id = $1", Params().add(task_id),
                                 "cannot read focus"));
  if (rows.empty()) return std::optional<Claim>();
  return std::optional<Claim>(read_claim(rows, 0));
}

Result<std::vector<Claim>> PgStore::claims() {
  CT_TRY_ASSIGN(Rows rows, query(std::string(sql::kClaimSelect), "cannot read focus"));
  std::vector<Claim> out;
  for (int i = 0; i < rows.size(); ++i) out.push_back(read_claim(rows, i));
  return out;
}

Result<void> PgStore::insert_session(const Session& session) {
  CT_TRY(query("INSERT INTO sessions(id, name, scope, agent, status, note, next_action, created_at, updated_at, "
               "ended_at, archived_at) VALUES($1, $2, $3, $4, $5, $6, $7, $8::bigint, $9::bigint, $10::bigint, $11::bigint)",
               session_params(session), "cannot save the session"));
  return {};
}

Result<void> PgStore::update_session(const Session& session) {
  CT_TRY(query("UPDATE sessions SET name = $2, scope = $3, agent = $4, status = $5, note = $6, next_action = $7, "
               "created_at = $8::bigint, updated_at = $9::bigint, ended_at = $10::bigint, archived_at = $11::bigint "
               "WHERE id = $1",
               session_params(session), "cannot save the session"));
  return {};
}

Result<void> PgStore::delete_session(std::string_view id) {
  CT_TRY(query("DELETE FROM sessions WHERE id = $1", Params().add(id), "cannot remove the session"));
  return {};
}

Result<std::optional<Session>> PgStore::get_session(std::string_view id) {
  CT_TRY_ASSIGN(Rows rows, query(std::string(kSessionSelect) + " WHERE id = $1", Params().add(id), "cannot read the session"));
  if (rows.empty()) return std::optional<Session>();
  return std::optional<Session>(read_session_row(rows.row(0)));
}

Result<std::vector<Session>> PgStore::list_sessions(const SessionQuery& wanted) {
  Params params;
  const std::string where = session_where(wanted, params);
  std::string sql =
      std::string(kSessionSelect) + where + " ORDER BY updated_at DESC, created_at DESC, id LIMIT " + params.next() + "::bigint";
  if (wanted.limit >= 0) params.add(wanted.limit); else params.add_null();
  sql += " OFFSET " + params.next() + "::bigint";
  params.add(std::max<std::int64_t>(0, wanted.offset));
  CT_TRY_ASSIGN(Rows rows, query(sql, params, "cannot list sessions"));
  std::vector<Session> out;
  out.reserve(static_cast<std::size_t>(rows.size()));
  for (int i = 0; i < rows.size(); ++i)
    out.push_back(read_session_row(rows.row(i)));
  return out;
}

Result<std::int64_t> PgStore::count_sessions(const SessionQuery& wanted) {
  Params params;
  std::string where = session_where(wanted, params);
  CT_TRY_ASSIGN(Rows rows, query("SELECT count(*) FROM sessions" + where, params, "cannot count sessions"));
  return rows.integer(0, 0);
}

}  // namespace ct::pg
