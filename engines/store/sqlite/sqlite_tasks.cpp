// The SQLite store, part: task rows and their dependency edges, lists and counts, the next-task
// candidates, graph loads, focus and sessions.
#include "engines/store/sqlite/sqlite_store_impl.h"

namespace ct::sqlite {

Result<std::optional<Task>> SqliteStore::get_task(std::string_view id) {
  static const std::string sql = select_tasks() + " WHERE t.id = ?1";
  CT_TRY_ASSIGN(sqlite3_stmt* raw, prepare(sql));
  Statement stmt(raw);
  stmt.bind(1, id);
  CT_TRY_ASSIGN(bool row, step(stmt, "cannot read a task"));
  if (!row) return std::optional<Task>();
  CT_TRY_ASSIGN(Task task, read_task(raw));
  return std::optional<Task>(std::move(task));
}

Result<std::vector<Task>> SqliteStore::get_tasks(const std::vector<std::string>& ids) {
  std::vector<Task> out;
  out.reserve(ids.size());
  for (const auto& id : ids) {
    CT_TRY_ASSIGN(std::optional<Task> task, get_task(id));
    if (task) out.push_back(std::move(*task));
  }
  return out;
}

Result<std::vector<Task>> SqliteStore::list_tasks(const TaskQuery& query) {
  std::vector<SqlValue> params;
  std::string where;
  append_filter(query.filter, true, where, params);
  std::string order = order_by(query.sort, query.descending);
  if (query.limit < 0 && query.offset <= 0) return collect_tasks(select_tasks() + where + order, params, "cannot list tasks");
  // A page: sort and cut on row numbers alone, then read the full rows of the page only
  // (sorting whole rows of a large table costs far more than sorting keys).
  std::string page = "SELECT t.num AS page_num FROM tasks t" + where + order + " LIMIT ? OFFSET ?";
  const std::int64_t offset = std::max<std::int64_t>(0, query.offset);
  const bool indexed = query.sort == SortKey::Position || query.sort == SortKey::Priority ||
                       query.sort == SortKey::Created || query.sort == SortKey::Updated;
  if (query.limit >= 0 && indexed && query.filter.statuses.size() != 1) {
    // Several statuses: each status's index (schema 8) walks its tasks in this order, so the page
    // is the best offset + limit of each status, merged — instead of sorting every matching task
    // (by update over every status of 100k: 9.3 ms, now 2.9 ms with the count; docs/performance.md).
    params.clear();
    std::string arms;
    TaskFilter one = query.filter;
    for (auto status : kTaskStatuses) {
      const auto& wanted = query.filter.statuses;
      if (!wanted.empty() && std::find(wanted.begin(), wanted.end(), status) == wanted.end()) continue;
      one.statuses = {status};
      std::string arm_where;
      append_filter(one, true, arm_where, params);
      arms += arms.empty() ? "" : " UNION ALL ";
      arms += "SELECT * FROM (SELECT t.num, t.parent, t.position, t.priority, t.created_at, t.updated_at FROM tasks t" +
              arm_where + order + " LIMIT ?)";
      params.emplace_back(offset + query.limit);
    }
    page = "SELECT t.num AS page_num FROM (" + arms + ") AS t" + order + " LIMIT ? OFFSET ?";
  }
  std::string sql = "SELECT " + std::string(kTaskColumns) + " FROM (" + page +
                    ") AS page CROSS JOIN tasks t ON t.num = page.page_num" + order;
  params.emplace_back(query.limit >= 0 ? query.limit : std::int64_t{-1});
  params.emplace_back(offset);
  return collect_tasks(sql, params, "cannot list tasks");
}

Result<std::int64_t> SqliteStore::count_tasks(const TaskFilter& filter) {
  std::vector<SqlValue> params;
  std::string where;
  append_filter(filter, true, where, params);
  CT_TRY_ASSIGN(sqlite3_stmt* raw, prepare("SELECT count(*) FROM tasks t" + where));
  Statement stmt(raw);
  stmt.bind_all(params);
  CT_TRY(step(stmt, "cannot count tasks"));
  return stmt.integer(0);
}

Result<std::map<TaskStatus, std::int64_t>> SqliteStore::count_by_status(const TaskFilter& filter) {
  std::vector<SqlValue> params;
  std::string where;
  append_filter(filter, false, where, params);
  CT_TRY_ASSIGN(sqlite3_stmt* raw, prepare("SELECT t.status, count(*) FROM tasks t" + where + " GROUP BY t.status"));
  Statement stmt(raw);
  stmt.bind_all(params);
  std::map<TaskStatus, std::int64_t> counts;
  for (auto status : kTaskStatuses)
    counts[status] = 0;
  CT_TRY(for_each_row(stmt, "cannot count tasks", [&] {
    if (auto status = parse_status(stmt.text(0))) counts[*status] = stmt.integer(1);
  }));
  return counts;
}

Result<std::string> SqliteStore::allocate_task_id() {
  CT_TRY_ASSIGN(sqlite3_stmt* raw,
                prepare("UPDATE meta SET value = CAST(CAST(value AS INTEGER) + 1 AS TEXT) "
                        "WHERE key = 'next_task_num' RETURNING CAST(value AS INTEGER) - 1"));
  Statement stmt(raw);
  CT_TRY_ASSIGN(bool row, step(stmt, "cannot allocate a task id"));
  if (!row) return fail(ErrorCode::Internal, "the task id counter is missing from the database");
  std::int64_t number = stmt.integer(0);
  CT_TRY(finish(stmt, "cannot allocate a task id"));
  return format_task_id(number);
}

Result<void> SqliteStore::insert_task(const Task& task) {
  auto number = parse_task_id(task.id);
  if (!number) return fail(ErrorCode::InvalidInput, "'" + task.id + "' is not a task id (T followed by digits)");
  return atomically([&]() -> Result<void> {
    static const std::string sql =
        "INSERT INTO tasks(num, id, title, description, status, priority, type, parent, position, "
        "depends, labels, acceptance, files, notes, relates, phase, size, blocked_by, created_at, "
        "updated_at, completed_at, cancelled_at, cancellation_reason, archived, archived_at, "
        "archive_reason, version) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, "
        "?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21, ?22, ?23, ?24, ?25, ?26, ?27)";
    CT_TRY_ASSIGN(sqlite3_stmt* raw, prepare(sql));
    {
      Statement stmt(raw);
      stmt.bind(1, *number).bind(2, task.id);
      bind_task_fields(stmt, task, 3);
      stmt.bind(27, task.version);
      int rc = sqlite3_step(raw);
      if ((rc & 0xff) == SQLITE_CONSTRAINT) {
        return fail(Error(ErrorCode::IdCollision, "task " + task.id + " already exists")
                        .with_fix("allocate a new id and retry"));
      }
      if (rc != SQLITE_DONE) return fail(error(rc, "cannot insert task " + task.id));
    }
    CT_TRY(write_edges(task, false));
    CT_TRY(index_later(*number));
    // Keep the counter ahead of every id ever stored (imports bring their own ids).
    CT_TRY_ASSIGN(sqlite3_stmt* bump,
                  prepare("UPDATE meta SET value = CAST(?1 + 1 AS TEXT) "
                          "WHERE key = 'next_task_num' AND CAST(value AS INTEGER) <= ?1"));
    Statement counter(bump);
    counter.bind(1, *number);
    return finish(counter, "cannot update the task id counter");
  });
}

Result<void> SqliteStore::update_task(const Task& task) {
  return atomically([&]() -> Result<void> {
    CT_TRY_ASSIGN(sqlite3_stmt* current_raw,
                  prepare("SELECT num, title, description, labels, notes, depends FROM tasks WHERE id = ?1"));
    std::int64_t number = 0;
    bool same_text = false;
    bool same_edges = false;
    {
      Statement current(current_raw);
      current.bind(1, task.id);
      CT_TRY_ASSIGN(bool row, step(current, "cannot read task " + task.id));
      if (!row) {
        return fail(Error(ErrorCode::NotFound, "Task " + task.id + " not found")
                        .with_fix(call("tasks.find", {{"query", task.id}})));
      }
      number = current.integer(0);
      same_text = current.text(1) == task.title && current.text(2) == task.description &&
                  current.text(3) == encode_strings(task.labels) && current.text(4) == encode_notes(task.notes);
      same_edges = current.text(5) == encode_strings(task.depends);
    }
    static const std::string sql =
        "UPDATE tasks SET title = ?3, description = ?4, status = ?5, priority = ?6, type = ?7, "
        "parent = ?8, position = ?9, depends = ?10, labels = ?11, acceptance = ?12, files = ?13, "
        "notes = ?14, relates = ?15, phase = ?16, size = ?17, blocked_by = ?18, created_at = ?19, "
        "updated_at = ?20, completed_at = ?21, cancelled_at = ?22, cancellation_reason = ?23, "
        "archived = ?24, archived_at = ?25, archive_reason = ?26, "
        "version = ?27 WHERE num = ?1";
    CT_TRY_ASSIGN(sqlite3_stmt* raw, prepare(sql));
    {
      Statement stmt(raw);
      stmt.bind(1, number);
      bind_task_fields(stmt, task, 3);
      stmt.bind(27, task.version);
      CT_TRY(finish(stmt, "cannot update task " + task.id));
    }
    if (!same_edges) CT_TRY(write_edges(task, true));
    if (!same_text) CT_TRY(index_later(number));
    return {};
  });
}

Result<void> SqliteStore::delete_task(std::string_view id) {
  return atomically([&]() -> Result<void> {
    CT_TRY_ASSIGN(sqlite3_stmt* raw, prepare("DELETE FROM tasks WHERE id = ?1 RETURNING num"));
    std::int64_t number = 0;
    {
      Statement stmt(raw);
      stmt.bind(1, id);
      CT_TRY_ASSIGN(bool row, step(stmt, "cannot delete task " + std::string(id)));
      if (!row) return fail(ErrorCode::NotFound, "Task " + std::string(id) + " not found");
      number = stmt.integer(0);
      CT_TRY(finish(stmt, "cannot delete task " + std::string(id)));
    }
    CT_TRY_ASSIGN(sqlite3_stmt* edges_raw,
                  prepare("DELETE FROM task_deps WHERE task_id = ?1 OR depends_on = ?1"));
    {
      Statement edges(edges_raw);
      edges.bind(1, id);
      CT_TRY(finish(edges, "cannot delete dependency edges"));
    }
    for (const char* sql : {"DELETE FROM tasks_fts WHERE rowid = ?1", "DELETE FROM tasks_fts_tail WHERE num = ?1"}) {
      CT_TRY_ASSIGN(sqlite3_stmt* index_raw, prepare(sql));
      Statement index(index_raw);
      index.bind(1, number);
      CT_TRY(finish(index, "cannot update the search index"));
    }
    for (const char* sql : {"DELETE FROM research_links WHERE task_id = ?1", "DELETE FROM lifecycle WHERE subject = ?1",
                            "DELETE FROM lifecycle_events WHERE subject = ?1"}) {
      CT_TRY_ASSIGN(sqlite3_stmt* raw_rows, prepare(sql));
      Statement rows(raw_rows);
      rows.bind(1, id);
      CT_TRY(finish(rows, "cannot delete the records of task " + std::string(id)));
    }
    return {};
  });
}

Result<std::vector<std::string>> SqliteStore::children_of(std::string_view id, bool include_archived) {
  CT_TRY_ASSIGN(sqlite3_stmt* raw,
                prepare(include_archived
                            ? "SELECT id FROM tasks WHERE parent = ?1 ORDER BY position, num"
                            : "SELECT id FROM tasks WHERE parent = ?1 AND archived = 0 ORDER BY position, num"));
  Statement stmt(raw);
  stmt.bind(1, id);
  return collect_strings(stmt, "cannot list children");
}

Result<std::vector<std::string>> SqliteStore::dependents_of(std::string_view id) {
  CT_TRY_ASSIGN(sqlite3_stmt* raw,
                prepare("SELECT d.task_id FROM task_deps d LEFT JOIN tasks t ON t.id = d.task_id "
                        "WHERE d.depends_on = ?1 ORDER BY t.num"));
  Statement stmt(raw);
  stmt.bind(1, id);
  return collect_strings(stmt, "cannot list dependents");
}

Result<std::int64_t> SqliteStore::max_position(std::string_view parent) {
  CT_TRY_ASSIGN(sqlite3_stmt* raw,
                prepare(parent.empty() ? "SELECT coalesce(max(position), 0) FROM tasks WHERE parent IS NULL"
                                       : "SELECT coalesce(max(position), 0) FROM tasks WHERE parent = ?1"));
  Statement stmt(raw);
  if (!parent.empty()) stmt.bind(1, parent);
  CT_TRY(step(stmt, "cannot read positions"));
  return stmt.integer(0);
}

Result<std::vector<ReadyCandidate>> SqliteStore::top_ready(const ReadyScoring& scoring) {
  // The score takes few values (4 priorities × in phase or not × leaf or not), so walk the
  // groups from the best score down; each group is read in (position, created_at) order from
  // tasks_status_priority and stops after `limit` rows. Cost follows the rows returned (plus
  // the candidates a group skips because their dependencies are unfinished), not the store.
  // Active tasks (whose claim may have lapsed) are groups of their own, read only when asked.
  struct Group {
    int score;
    int priority;
    int in_phase;             // 1, 0, or -1 = either (no phase bonus in play)
    int leaf;                 // 1, 0, or -1 = either (no leaf bonus in play)
    std::string_view status;  // pending, or active
  };
  static constexpr std::array<std::string_view, 4> kPriorities = {"critical", "high", "medium", "low"};
  bool phase_matters = !scoring.phase.empty() && scoring.phase_bonus != 0;
  bool leaf_matters = scoring.leaf_bonus != 0;
  std::vector<Group> groups;
  for (std::string_view status : scoring.lapsed_before ? std::vector<std::string_view>{"pending", "active"}
                                                       : std::vector<std::string_view>{"pending"})
    for (int p = 0; p < 4; ++p)
      for (int in_phase : phase_matters ? std::vector<int>{1, 0} : std::vector<int>{-1})
        for (int leaf : leaf_matters ? std::vector<int>{1, 0} : std::vector<int>{-1})
          groups.push_back({scoring.priority_points[static_cast<std::size_t>(p)] +
                                (in_phase == 1 ? scoring.phase_bonus : 0) + (leaf == 1 ? scoring.leaf_bonus : 0),
                            p, in_phase, leaf, status});
  std::stable_sort(groups.begin(), groups.end(), [](const Group& a, const Group& b) { return a.score > b.score; });

  const std::string open_children(kOpenChildren);
  CT_TRY_ASSIGN(sqlite3_stmt* raw,
                prepare("SELECT t.id, t.position, t.created_at, t.num FROM tasks t"
                        " WHERE t.status = ?6 AND t.archived = 0 AND t.priority = ?1"
                        " AND (?2 < 0 OR (t.phase = ?3) = ?2)"
                        " AND (?4 < 0 OR NOT " + open_children + " = ?4)"
                        " AND NOT EXISTS (SELECT 1 FROM task_deps d JOIN tasks u ON u.id = d.depends_on"
                        "   WHERE d.task_id = t.id AND u.status NOT IN ('done', 'cancelled'))"
                        // tasks.start would refuse a task another caller holds; an active task is
                        // a candidate only once its claim has lapsed.
                        " AND NOT " + sql::live_claim("?7") +
                        " AND (t.status = 'pending' OR EXISTS (SELECT 1 FROM focus f WHERE f.task_id = t.id))"
                        // An epic's work is its children: it is next only once they are finished.
                        " AND NOT (t.type = 'epic' AND " + open_children + ")"
                        " ORDER BY t.position, t.created_at, t.num LIMIT ?5"));
  struct Row {
    ReadyCandidate candidate;
    std::int64_t position, created_at, num;
  };
  std::vector<ReadyCandidate> out;
  for (std::size_t g = 0; g < groups.size() && static_cast<std::int64_t>(out.size()) < scoring.limit;) {
    // Groups with equal scores are merged by position, then age.
    std::vector<Row> level;
    std::size_t next = g;
    std::int64_t wanted = scoring.limit - static_cast<std::int64_t>(out.size());
    for (; next < groups.size() && groups[next].score == groups[g].score; ++next) {
      const Group& group = groups[next];
      Statement stmt(raw);
      stmt.bind(6, group.status);
      stmt.bind(7, scoring.lapsed_before);
      stmt.bind(1, kPriorities[static_cast<std::size_t>(group.priority)]);
      stmt.bind(2, static_cast<std::int64_t>(group.in_phase));
      stmt.bind(3, scoring.phase);
      stmt.bind(4, static_cast<std::int64_t>(group.leaf));
      // Within a scope the rows outside it are skipped here, so the group is read to its end
      // (ids only; the scope is a set of live ids, not expressible as an index range).
      stmt.bind(5, scoring.within ? std::int64_t{-1} : wanted);
      std::int64_t kept = 0;
      CT_TRY(for_each_row(stmt, "cannot list ready tasks", [&] {
        if (kept >= wanted) return;
        std::string id(stmt.text(0));
        if (scoring.within && !scoring.within->contains(id)) return;
        ++kept;
        level.push_back({{std::move(id), group.score, group.leaf == 1, group.in_phase == 1},
                         stmt.integer(1), stmt.integer(2), stmt.integer(3)});
      }));
    }
    std::sort(level.begin(), level.end(), [](const Row& a, const Row& b) {
      if (a.position != b.position) return a.position < b.position;
      if (a.created_at != b.created_at) return a.created_at < b.created_at;
      return a.num < b.num;
    });
    for (auto& row : level) {
      if (static_cast<std::int64_t>(out.size()) >= scoring.limit) break;
      out.push_back(std::move(row.candidate));
    }
    g = next;
  }
  return out;
}

Result<std::vector<GraphTask>> SqliteStore::graph_tasks(std::string_view root) {
  // The subtree through the parent index (a recursive walk), or every unarchived task.
  CT_TRY_ASSIGN(sqlite3_stmt* raw,
                prepare(root.empty()
                            ? "SELECT t.id, t.title, t.parent, t.status, t.priority, t.type, t.position, t.created_at,"
                              " t.updated_at, t.depends, t.labels, t.files, t.version FROM tasks t WHERE t.archived = 0"
                              " ORDER BY t.parent, t.position, t.num"
                            : "WITH RECURSIVE sub(id) AS (SELECT id FROM tasks WHERE parent = ?1 AND archived = 0"
                              "  UNION ALL SELECT c.id FROM tasks c JOIN sub ON c.parent = sub.id WHERE c.archived = 0)"
                              " SELECT t.id, t.title, t.parent, t.status, t.priority, t.type, t.position, t.created_at,"
                              " t.updated_at, t.depends, t.labels, t.files, t.version FROM sub JOIN tasks t ON t.id = sub.id"
                              " ORDER BY t.parent, t.position, t.num"));
  Statement stmt(raw);
  if (!root.empty()) stmt.bind(1, root);
  std::vector<GraphTask> out;
  Result<void> decoded;
  CT_TRY(for_each_row(stmt, "cannot read the task graph", [&] {
    if (!decoded) return;
    GraphTask task;
    task.id = stmt.text(0);
    task.title = stmt.text(1);
    task.parent = stmt.text(2);
    auto status = parse_status(stmt.text(3));
    auto priority = parse_priority(stmt.text(4));
    auto type = parse_type(stmt.text(5));
    if (!status || !priority || !type) {
      decoded = fail(corrupt_column(task.id, !status ? "status" : !priority ? "priority" : "type"));
      return;
    }
    task.status = *status;
    task.priority = *priority;
    task.type = *type;
    task.position = stmt.integer(6);
    task.created_at = stmt.integer(7);
    task.updated_at = stmt.integer(8);
    task.version = stmt.integer(12);
    for (auto [column, target, field] : {std::tuple{9, &task.depends, "depends"}, std::tuple{10, &task.labels, "labels"},
                                          std::tuple{11, &task.files, "files"}}) {
      std::string_view text = stmt.text(column);
      if (text == "[]") continue;
      auto values = decode_strings(text, task.id, field);
      if (!values) {
        decoded = fail(std::move(values).error());
        return;
      }
      *target = std::move(*values);
    }
    out.push_back(std::move(task));
  }));
  CT_TRY(decoded);
  return out;
}

Result<std::optional<std::string>> SqliteStore::get_focus(std::string_view session) {
  CT_TRY_ASSIGN(sqlite3_stmt* raw, prepare("SELECT task_id FROM focus WHERE session = ?1"));
  Statement stmt(raw);
  stmt.bind(1, session);
  CT_TRY_ASSIGN(bool row, step(stmt, "cannot read focus"));
  if (!row) return std::optional<std::string>();
  return std::optional<std::string>(std::string(stmt.text(0)));
}

Result<void> SqliteStore::set_focus(std::string_view session, std::optional<std::string> task_id) {
  if (!task_id) {
    CT_TRY_ASSIGN(sqlite3_stmt* raw, prepare("DELETE FROM focus WHERE session = ?1"));
    Statement stmt(raw);
    stmt.bind(1, session);
    return finish(stmt, "cannot clear focus");
  }
  CT_TRY_ASSIGN(sqlite3_stmt* raw,
                prepare("INSERT INTO focus(session, task_id) VALUES(?1, ?2) "
                        "ON CONFLICT(session) DO UPDATE SET task_id = excluded.task_id"));
  Statement stmt(raw);
  stmt.bind(1, session).bind(2, *task_id);
  return finish(stmt, "cannot set focus");
}

namespace {
Claim read_claim(Statement& stmt) {
  Claim claim{std::string(stmt.text(0)), std::string(stmt.text(1)), std::string(stmt.text(2)), std::nullopt};
  if (!stmt.is_null(3)) claim.renewed_at = stmt.integer(3);
  return claim;
}
}  // namespace

Result<std::optional<Claim>> SqliteStore::claim_on(std::string_view task_id) {
  CT_TRY_ASSIGN(sqlite3_stmt* raw, prepare(std::string(sql::kClaimSelect) + " WHERE f.task_id = ?1"));
  Statement stmt(raw);
  stmt.bind(1, task_id);
  CT_TRY_ASSIGN(bool row, step(stmt, "cannot read focus"));
  if (!row) return std::optional<Claim>();
  return std::optional<Claim>(read_claim(stmt));
}

Result<std::vector<Claim>> SqliteStore::claims() {
  CT_TRY_ASSIGN(sqlite3_stmt* raw, prepare(std::string(sql::kClaimSelect)));
  Statement stmt(raw);
  std::vector<Claim> out;
  CT_TRY(for_each_row(stmt, "cannot read focus", [&] { out.push_back(read_claim(stmt)); }));
  return out;
}

Result<void> SqliteStore::insert_session(const Session& session) {
  CT_TRY_ASSIGN(sqlite3_stmt* raw,
                prepare("INSERT INTO sessions(id, name, scope, agent, status, note, next_action, created_at, "
                        "updated_at, ended_at, archived_at) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)"));
  Statement stmt(raw);
  bind_session(stmt, session);
  return finish(stmt, "cannot save the session");
}

Result<void> SqliteStore::update_session(const Session& session) {
  CT_TRY_ASSIGN(sqlite3_stmt* raw,
                prepare("UPDATE sessions SET name = ?2, scope = ?3, agent = ?4, status = ?5, note = ?6, "
                        "next_action = ?7, created_at = ?8, updated_at = ?9, ended_at = ?10, archived_at = ?11 "
                        "WHERE id = ?1"));
  Statement stmt(raw);
  bind_session(stmt, session);
  return finish(stmt, "cannot save the session");
}

Result<void> SqliteStore::delete_session(std::string_view id) {
  CT_TRY_ASSIGN(sqlite3_stmt* raw, prepare("DELETE FROM sessions WHERE id = ?1"));
  Statement stmt(raw);
  stmt.bind(1, id);
  return finish(stmt, "cannot remove the session");
}

Result<std::optional<Session>> SqliteStore::get_session(std::string_view id) {
  CT_TRY_ASSIGN(sqlite3_stmt* raw, prepare(std::string(kSessionSelect) + " WHERE id = ?1"));
  Statement stmt(raw);
  stmt.bind(1, id);
  CT_TRY_ASSIGN(bool row, step(stmt, "cannot read the session"));
  if (!row) return std::optional<Session>();
  return std::optional<Session>(read_session_row(stmt));
}

Result<std::vector<Session>> SqliteStore::list_sessions(const SessionQuery& query) {
  std::vector<SqlValue> params;
  std::string sql = std::string(kSessionSelect) + session_where(query, params) +
                    " ORDER BY updated_at DESC, created_at DESC, id LIMIT ? OFFSET ?";
  params.emplace_back(query.limit);
  params.emplace_back(query.offset);
  CT_TRY_ASSIGN(sqlite3_stmt* raw, prepare(sql));
  Statement stmt(raw);
  stmt.bind_all(params);
  std::vector<Session> out;
  CT_TRY(for_each_row(stmt, "cannot list sessions", [&] { out.push_back(read_session_row(stmt)); }));
  return out;
}

Result<std::int64_t> SqliteStore::count_sessions(const SessionQuery& query) {
  std::vector<SqlValue> params;
  CT_TRY_ASSIGN(sqlite3_stmt* raw, prepare("SELECT count(*) FROM sessions" + session_where(query, params)));
  Statement stmt(raw);
  stmt.bind_all(params);
  CT_TRY_ASSIGN(bool row, step(stmt, "cannot count sessions"));
  return row ? stmt.integer(0) : 0;
}

}  // namespace ct::sqlite
