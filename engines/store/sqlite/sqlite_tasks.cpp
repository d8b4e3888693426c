// The SQLite store, part: the next-task walk (tasks.next), group by group, each an index walk that
// stops at the page: in process, a statement per group costs less than one statement for all.
#include "engines/store/sqlite/sqlite_store_impl.h"

namespace ct::sqlite {

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
  const std::string sql("SELECT t.id, t.position, t.created_at, t.num FROM tasks t"
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
                        " ORDER BY t.position, t.created_at, t.num LIMIT ?5");
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
      // Within a scope the rows outside it are skipped here, so the group is read to its end
      // (ids only; the scope is a set of live ids, not expressible as an index range).
      const sql::Value args[] = {sql::Value(kPriorities[static_cast<std::size_t>(group.priority)]),
                                 sql::Value(std::int64_t{group.in_phase}), sql::Value(scoring.phase),
                                 sql::Value(std::int64_t{group.leaf}),
                                 sql::Value(scoring.within ? std::int64_t{-1} : wanted), sql::Value(group.status),
                                 sql::Value(scoring.lapsed_before)};
      std::int64_t kept = 0;
      CT_TRY(runner_.each(sql, args, "cannot list ready tasks", [&](const sql::Cursor& row) {
        if (kept >= wanted) return;
        std::string id(row.text(0));
        if (scoring.within && !scoring.within->contains(id)) return;
        ++kept;
        level.push_back({{std::move(id), group.score, group.leaf == 1, group.in_phase == 1},
                         row.integer(1), row.integer(2), row.integer(3)});
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

}  // namespace ct::sqlite
