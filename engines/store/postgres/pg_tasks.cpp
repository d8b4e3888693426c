// The PostgreSQL store, part: the next-task walk (every group in one statement: a statement is a
// round trip here), and the writes that take one statement here and several on SQLite — a task
// with its dependency edges, the audit row with its changes. A data-modifying CTE never raises an
// error the caller is meant to handle: a failed statement would abort the whole transaction.
#include <array>

#include "engines/store/postgres/pg_store_impl.h"

namespace ct::pg {

Result<std::vector<ReadyCandidate>> PgStore::top_ready(const ReadyScoring& scoring) {
  std::vector<ReadyCandidate> out;
  if (scoring.limit <= 0) return out;
  if (scoring.within && scoring.within->empty()) return out;
  // As the SQLite backend does: the score takes few values (4 priorities × in phase or not × leaf
  // or not), so each group is walked in (position, created_at) order on tasks_status_priority and
  // cut at `limit`, and only those rows are merged by score — here every group in one statement
  // (a statement is a round trip), a branch of a UNION ALL each, its constants written in so that
  // each is planned for what it is. Cost follows the rows returned, not the store (a whole-table
  // ranking took 0.5 s at 100k tasks).
  //
  // Leaf or not: a task has an unfinished child when it is the parent of an open task. Tested row
  // by row (kOpenChildren), a group of non-leaves read every task of its priority to find the few
  // parents among them (7,166 probes, 20–50 ms per call at 10k tasks). So the open tasks' distinct
  // parents are found once instead, by skipping through tasks_status_tree (status, archived,
  // parent) from one parent to the next — a probe per parent, not per task — and then a leaf is a
  // task outside that set, and a non-leaf group reads only the parents' rows.
  const bool phase_matters = !scoring.phase.empty() && scoring.phase_bonus != 0;
  const bool leaf_matters = scoring.leaf_bonus != 0;
  static constexpr std::array<std::string_view, 4> kPriorities = {"critical", "high", "medium", "low"};
  sql::Args args;
  // Every value bound is used (PostgreSQL cannot type a parameter the statement never names).
  const std::string phase = phase_matters ? args(scoring.phase) + "::text" : "";
  // The limit is written in, not bound: with a bound LIMIT the plan cache kept re-planning this
  // statement at every call (its custom plans looked cheaper than a generic plan that cannot know
  // the limit), and planning its branches cost twice what running them does (server CPU per call
  // 2.2 ms re-planned, 0.75 ms on the kept plan, at 10k tasks). Few distinct limits are asked for.
  const std::string limit = std::to_string(scoring.limit);
  const std::string cutoff = args(scoring.lapsed_before) + "::bigint";
  std::string within;
  if (scoring.within)
    within = " AND t.id = ANY(" +
             args(text_array(std::vector<std::string>(scoring.within->begin(), scoring.within->end()))) + "::text[])";
  // What every candidate passes, leaf or not: its dependencies finished; no live claim on it
  // (tasks.start would refuse a task another caller holds; an active task is a candidate only once
  // its claim has lapsed).
  const std::string ready =
      " AND NOT EXISTS (SELECT 1 FROM task_deps d JOIN tasks u ON u.id = d.depends_on"
      "   WHERE d.task_id = t.id AND u.status NOT IN ('done', 'cancelled'))"
      " AND NOT " + sql::live_claim(cutoff) +
      " AND (t.status = 'pending' OR EXISTS (SELECT 1 FROM focus f WHERE f.task_id = t.id))" + within;
  std::string sql;
  if (leaf_matters)
    sql = "WITH RECURSIVE walk(status, parent) AS ("
          // The first parent of each open status, then from each parent to the next.
          " SELECT s.status, (SELECT c.parent FROM tasks c WHERE c.status = s.status AND c.archived = 0"
          "  AND c.parent IS NOT NULL ORDER BY c.parent NULLS FIRST LIMIT 1)"
          " FROM (VALUES ('pending'), ('active'), ('blocked')) AS s(status)"
          " UNION ALL"
          " SELECT w.status, (SELECT c.parent FROM tasks c WHERE c.status = w.status AND c.archived = 0"
          "  AND c.parent > w.parent ORDER BY c.parent NULLS FIRST LIMIT 1)"
          " FROM walk w WHERE w.parent IS NOT NULL),"
          " open_parents AS (SELECT DISTINCT parent AS id FROM walk WHERE parent IS NOT NULL),"
          // The candidates that are not leaves, read once for the groups that want them; an
          // epic's work is its children: it is next only once they are finished.
          " parents AS MATERIALIZED (SELECT t.id, t.status, t.priority, t.phase, t.position, t.created_at, t.num"
          "  FROM tasks t WHERE t.id IN (SELECT id FROM open_parents) AND t.archived = 0 AND t.type <> 'epic'" +
          ready + ") ";
  const std::string open_children(kOpenChildren);
  std::string branches;
  for (std::string_view status : scoring.lapsed_before ? std::vector<std::string_view>{"pending", "active"}
                                                       : std::vector<std::string_view>{"pending"})
    for (std::size_t p = 0; p < kPriorities.size(); ++p)
      for (int in_phase : phase_matters ? std::vector<int>{1, 0} : std::vector<int>{-1})
        for (int leaf : leaf_matters ? std::vector<int>{1, 0} : std::vector<int>{-1}) {
          const int score = scoring.priority_points[p] + (in_phase == 1 ? scoring.phase_bonus : 0) +
                            (leaf == 1 ? scoring.leaf_bonus : 0);
          const std::string head = "(SELECT t.id, " + std::to_string(score) + " AS score, " +
                                   (leaf == 1 ? "TRUE" : "FALSE") + " AS leaf, " + (in_phase == 1 ? "TRUE" : "FALSE") +
                                   " AS in_phase, t.position, t.created_at, t.num FROM ";
          std::string where = "t.status = '" + std::string(status) + "' AND t.priority = '" +
                              std::string(kPriorities[p]) + "'";
          if (in_phase >= 0) where += " AND t.phase " + std::string(in_phase == 1 ? "=" : "<>") + " " + phase;
          branches += branches.empty() ? "" : " UNION ALL ";
          if (leaf == 0) {
            branches += head + "parents t WHERE " + where;
          } else {
            branches += head + "tasks t WHERE " + where + " AND t.archived = 0" + ready;
            branches += leaf == 1 ? " AND t.id NOT IN (SELECT id FROM open_parents)"
                                  : " AND NOT (t.type = 'epic' AND " + open_children + ")";
          }
          branches += " ORDER BY t.position, t.created_at, t.num LIMIT " + limit + ")";
        }
  sql += "SELECT c.id, c.score, c.leaf, c.in_phase FROM (" + branches +
         ") AS c ORDER BY c.score DESC, c.position, c.created_at, c.num LIMIT " + limit;
  return runner_.all(sql, args, "cannot list ready tasks", [](const sql::Cursor& row) {
    return ReadyCandidate{std::string(row.text(0)), static_cast<int>(row.integer(1)), row.text(2) == "t",
                          row.text(3) == "t"};
  });
}

Result<std::vector<Task>> PgStore::get_tasks(const std::vector<std::string>& ids) {
  if (ids.empty()) return std::vector<Task>();
  // In the order asked (a missing id is skipped, a repeated one repeats). Each id is looked up by
  // the id index: as a plain join the planner guesses 100 ids from a JSON list and hashes the
  // whole table (a scan of every task for one id: ~1 ms at 10k, in tasks.next, completion, the
  // briefing); OFFSET 0 keeps the per-id lookup a subquery it cannot turn into that.
  static const std::string sql = "SELECT " + std::string(kTaskColumns) +
                                 " FROM jsonb_array_elements_text(?1::jsonb) WITH ORDINALITY AS wanted(id, ord)"
                                 " CROSS JOIN LATERAL (SELECT " + std::string(kTaskColumns) +
                                 " FROM tasks t WHERE t.id = wanted.id OFFSET 0) AS t"
                                 " ORDER BY wanted.ord";
  const sql::Value args[] = {sql::Value(encode_strings(ids))};
  return runner_.all(sql, args, "cannot read tasks", [](const sql::Cursor& row) { return read_task_row(row); });
}

Result<void> PgStore::insert_task(const Task& task) {
  auto number = parse_task_id(task.id);
  if (!number) return fail(ErrorCode::InvalidInput, "'" + task.id + "' is not a task id (T followed by digits)");
  // The row, its dependency edges, and the id counter kept ahead of every id ever stored (imports
  // bring their own ids), in one statement; a taken id inserts nothing.
  static const std::string sql =
      "WITH ins AS (" + task_insert_sql() + " ON CONFLICT DO NOTHING RETURNING id, depends),"
      " edges AS (INSERT INTO task_deps(task_id, depends_on)"
      "  SELECT DISTINCT ins.id, d.value FROM ins, jsonb_array_elements_text(ins.depends::jsonb) AS d(value)"
      "  ON CONFLICT DO NOTHING),"
      " counter AS (UPDATE meta SET value = (?1::bigint + 1)::text"
      "  WHERE key = 'next_task_num' AND value::bigint <= ?1::bigint AND EXISTS (SELECT 1 FROM ins))"
      " SELECT count(*) FROM ins";
  CT_TRY_ASSIGN(std::int64_t inserted, runner_.integer(sql, task_values(*number, task, true), "cannot insert task " + task.id));
  if (inserted == 0)
    return fail(Error(ErrorCode::IdCollision, "task " + task.id + " already exists").with_fix("allocate a new id and retry"));
  ++inserted_in_transaction_;
  ++inserted_;
  return {};
}

Result<void> PgStore::update_task(const Task& task) {
  // The row and its edges in one statement: edges no longer listed go, new ones come (the
  // generated search column follows the row by itself). Nobody reads its answer: it waits to go
  // with the transaction's next statement or its COMMIT (Connection::defer), a round trip fewer
  // under the writers' lock. A task that is not there makes it divide by zero, which that
  // statement or the commit then fails with as E_NOT_FOUND.
  static const std::string sql =
      "WITH upd AS (UPDATE tasks SET " + task_set_sql() + " WHERE id = ?1 RETURNING id),"
      " wanted AS (SELECT DISTINCT d.value FROM jsonb_array_elements_text(?9::jsonb) AS d(value)),"
      " gone AS (DELETE FROM task_deps WHERE task_id = ?1 AND EXISTS (SELECT 1 FROM upd)"
      "  AND depends_on NOT IN (SELECT value FROM wanted)),"
      " added AS (INSERT INTO task_deps(task_id, depends_on) SELECT upd.id, wanted.value FROM upd, wanted"
      "  ON CONFLICT DO NOTHING)"
      " SELECT 1 / count(*) FROM upd";
  return db_->defer(sql, task_values(task.id, task, false), "cannot update task " + task.id,
                    Error(ErrorCode::NotFound, "Task " + task.id + " not found")
                        .with_fix(call("tasks.find", {{"query", task.id}})));
}

Result<std::int64_t> PgStore::append_audit(const AuditEntry& entry) {
  // Writers are serialised by the write lock of begin(Write), so the last row is stable here;
  // begin(Write) read it with the lock (audit_tail_).
  std::int64_t seq = 0;
  std::string previous;
  if (tail_in_begun_) {
    tail_in_begun_ = false;
    CT_TRY_ASSIGN(Rows tail, db_->begun());
    if (!tail.empty()) audit_tail_ = std::make_pair(tail.integer(0, 0), std::string(tail.text(0, 1)));
  }
  if (audit_tail_) {
    seq = audit_tail_->first;
    previous = audit_tail_->second;
  } else {
    CT_TRY_ASSIGN(Rows rows, query("SELECT seq, hash FROM audit ORDER BY seq DESC LIMIT 1",
                                   "cannot read the audit trail"));
    if (!rows.empty()) {
      seq = rows.integer(0, 0);
      previous = rows.text(0, 1);
    }
  }
  CT_TRY_ASSIGN(AuditLink link, next_link(*this, entry, seq, std::move(previous)));
  seq = link.seq;
  const std::string& hash = link.hash;

  // The row and its changes in one statement; `ord` numbers the changes in the order given.
  std::vector<std::optional<std::string>> tasks, fields, befores, afters, versions;
  for (std::size_t i = 0; i < entry.changes.size(); ++i) {
    tasks.emplace_back(entry.changes[i].task_id);
    fields.emplace_back(entry.changes[i].field);
    befores.push_back(std::move(link.text.changes[i].first));
    afters.push_back(std::move(link.text.changes[i].second));
    versions.push_back(entry.changes[i].version > 0 ? std::optional<std::string>(std::to_string(entry.changes[i].version))
                                                    : std::nullopt);
  }
  // Sent with the next statement, or with COMMIT in one round trip (Connection::defer): what the
  // writers' lock covers is a round trip shorter. Nothing reads its answer; a failure fails the
  // transaction where it is sent.
  CT_TRY(db_->defer("WITH head AS (INSERT INTO audit(seq, at, session, agent, operation, task_id, params, outcome, "
                     "reason, hash, intent, principal) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?16)) "
                     "INSERT INTO audit_changes(seq, task_id, field, before, after, version) "
                     "SELECT ?1, u.task_id, u.field, u.before, u.after, u.version::bigint "
                     "FROM unnest(?12::text[], ?13::text[], ?14::text[], ?15::text[], ?17::text[]) WITH ORDINALITY "
                     "AS u(task_id, field, before, after, version, n) ORDER BY u.n",
                     sql::values(seq, entry.at, entry.session, entry.agent, entry.operation, entry.task_id,
                                 link.text.params, entry.outcome, entry.reason, hash,
                                 link.text.intent ? sql::Value(*link.text.intent) : sql::Value(), text_array(tasks),
                                 text_array(fields), text_array(befores), text_array(afters), entry.principal,
                                 text_array(versions)),
             "cannot append to the audit trail"));
  audit_tail_ = std::make_pair(seq, hash);
  return seq;
}

}  // namespace ct::pg
