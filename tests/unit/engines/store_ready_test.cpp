// Store::top_ready (tasks.next's ranking) against its definition, on random trees: each backend
// walks the score groups its own way (SQLite a statement per group, PostgreSQL one statement whose
// non-leaf groups start from the open tasks' parents), and both must give exactly the ranking the
// definition in engines/store/task_store.h gives — the same ids, scores and flags, in order.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdio>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "unit/temp_dir.h"
#include "unit/test_support.h"

namespace ct {
namespace {

struct Tree {
  std::vector<Task> tasks;
  std::map<std::string, std::string> focus;  // task → the session focusing it ("" = sessionless)
};

std::string task_id(int n) {
  char id[16];
  std::snprintf(id, sizeof id, "T%03d", n);
  return id;
}

/// `n` tasks in a few trees: epics and tasks at the roots, children under earlier tasks, every
/// status, some archived, dependencies on earlier tasks, phases, positions and times that tie.
Tree random_tree(std::mt19937& rng, int n) {
  auto below = [&](int bound) { return static_cast<int>(rng() % static_cast<unsigned>(bound)); };
  Tree tree;
  for (int i = 1; i <= n; ++i) {
    Task task;
    task.id = task_id(i);
    task.title = "Task " + std::to_string(i);
    task.type = below(6) == 0 ? TaskType::Epic : TaskType::Task;
    if (i > 1 && below(3) != 0) task.parent = task_id(1 + below(i - 1));
    static constexpr TaskStatus kStatuses[] = {TaskStatus::Pending, TaskStatus::Pending, TaskStatus::Pending,
                                               TaskStatus::Active,  TaskStatus::Blocked, TaskStatus::Done,
                                               TaskStatus::Cancelled};
    task.status = kStatuses[below(7)];
    task.priority = static_cast<Priority>(below(4));
    task.phase = below(3) == 0 ? "build" : below(2) == 0 ? "ship" : "";
    task.archived = below(12) == 0;
    task.position = 1 + below(4);
    task.created_at = task.updated_at = 1'700'000'000'000 + below(3);
    if (i > 2 && below(5) == 0) task.depends = {task_id(1 + below(i - 1))};
    tree.tasks.push_back(task);
    // Claims: the sessionless one (always live; one task at a time, the last set), or a session's
    // that is gone (lapsed at any cutoff).
    if (task.status == TaskStatus::Active || below(8) == 0) {
      const bool sessionless = below(2) == 0;
      if (sessionless) std::erase_if(tree.focus, [](const auto& claim) { return claim.second.empty(); });
      tree.focus[task.id] = sessionless ? "" : "S-gone-" + std::to_string(i);
    }
  }
  return tree;
}

/// The ranking by its definition (engines/store/task_store.h, top_ready).
std::vector<ReadyCandidate> expected_ranking(const Tree& tree, const ReadyScoring& scoring) {
  auto is_open = [](const Task& t) {
    return !t.archived && (t.status == TaskStatus::Pending || t.status == TaskStatus::Active ||
                           t.status == TaskStatus::Blocked);
  };
  std::map<std::string, const Task*> by_id;
  for (const auto& t : tree.tasks) by_id[t.id] = &t;
  std::set<std::string> open_parents;
  for (const auto& t : tree.tasks)
    if (!t.parent.empty() && is_open(t)) open_parents.insert(t.parent);
  const bool phase_matters = !scoring.phase.empty() && scoring.phase_bonus != 0;
  const bool leaf_matters = scoring.leaf_bonus != 0;
  struct Ranked {
    ReadyCandidate candidate;
    const Task* task;
  };
  std::vector<Ranked> ranked;
  for (const auto& t : tree.tasks) {
    if (t.archived) continue;
    const auto focus = tree.focus.find(t.id);
    const bool focused = focus != tree.focus.end();
    if (t.status != TaskStatus::Pending && !(scoring.lapsed_before && t.status == TaskStatus::Active && focused))
      continue;
    const bool live_claim = focused && (focus->second.empty() || !scoring.lapsed_before);
    if (live_claim) continue;
    bool waits = false;
    for (const auto& dep : t.depends) {
      auto found = by_id.find(dep);
      if (found != by_id.end() && found->second->status != TaskStatus::Done &&
          found->second->status != TaskStatus::Cancelled)
        waits = true;
    }
    if (waits) continue;
    const bool has_open_child = open_parents.contains(t.id);
    if (t.type == TaskType::Epic && has_open_child) continue;
    if (scoring.within && !scoring.within->contains(t.id)) continue;
    const bool in_phase = phase_matters && t.phase == scoring.phase;
    const bool leaf = leaf_matters && !has_open_child;
    const int score = scoring.priority_points[static_cast<std::size_t>(t.priority)] +
                      (in_phase ? scoring.phase_bonus : 0) + (leaf ? scoring.leaf_bonus : 0);
    ranked.push_back({{t.id, score, leaf, in_phase}, &t});
  }
  std::sort(ranked.begin(), ranked.end(), [](const Ranked& a, const Ranked& b) {
    if (a.candidate.score != b.candidate.score) return a.candidate.score > b.candidate.score;
    if (a.task->position != b.task->position) return a.task->position < b.task->position;
    if (a.task->created_at != b.task->created_at) return a.task->created_at < b.task->created_at;
    return a.task->id.size() != b.task->id.size() ? a.task->id.size() < b.task->id.size() : a.task->id < b.task->id;
  });
  std::vector<ReadyCandidate> out;
  for (const auto& r : ranked)
    if (static_cast<std::int64_t>(out.size()) < scoring.limit) out.push_back(r.candidate);
  return out;
}

std::string describe(const std::vector<ReadyCandidate>& candidates) {
  std::string out;
  for (const auto& c : candidates)
    out += c.id + ":" + std::to_string(c.score) + (c.leaf ? "L" : "") + (c.in_phase ? "P" : "") + " ";
  return out;
}

}  // namespace

TEST_CASE("store: top_ready ranks random trees as its definition does", "[store][next]") {
  test::TempDir dir;
  const auto file = dir.path() / "tasks.db";
  auto store = test::create_store(file);
  std::mt19937 rng(20261129);
  for (int round = 0; round < 4; ++round) {
    if (round > 0) test::run_sql(file, "DELETE FROM focus; DELETE FROM task_deps; DELETE FROM tasks");
    const Tree tree = random_tree(rng, 120);
    REQUIRE(store->begin(TxKind::Write));
    for (const auto& task : tree.tasks) REQUIRE(store->insert_task(task));
    for (const auto& [task, session] : tree.focus) REQUIRE(store->set_focus(session, task));
    REQUIRE(store->claims()->size() == tree.focus.size());
    REQUIRE(store->commit());

    std::set<std::string> some;
    for (const auto& task : tree.tasks)
      if (rng() % 2 == 0) some.insert(task.id);
    std::vector<ReadyScoring> scorings;
    ReadyScoring base;
    base.priority_points = {100, 75, 50, 25};
    base.limit = 1000;
    scorings.push_back(base);                 // neither leaf nor phase in play
    ReadyScoring leafy = base;
    leafy.leaf_bonus = 10;
    scorings.push_back(leafy);                // tasks.next without a current phase
    ReadyScoring phased = leafy;
    phased.phase = "build";
    phased.phase_bonus = 30;
    scorings.push_back(phased);               // and with one
    ReadyScoring lapsed = phased;
    lapsed.lapsed_before = 1'800'000'000'000;
    scorings.push_back(lapsed);               // claims that lapsed are offered again
    ReadyScoring within = lapsed;
    within.within = &some;
    scorings.push_back(within);               // a session's scope
    ReadyScoring tied = leafy;
    tied.priority_points = {20, 10, 10, 0};   // groups of equal scores merged by position
    scorings.push_back(tied);
    // Short pages of each (ties at the page's last score among them: "tied" gives a medium leaf
    // the score of a critical non-leaf).
    for (std::size_t s = 0, whole = scorings.size(); s < whole; ++s)
      for (std::int64_t limit : {1, 3, 10}) {
        ReadyScoring short_page = scorings[s];
        short_page.limit = limit;
        scorings.push_back(short_page);
      }
    for (std::size_t s = 0; s < scorings.size(); ++s) {
      INFO("round " << round << ", scoring " << s);
      auto got = store->top_ready(scorings[s]);
      INFO((got ? std::string() : got.error().message));
      REQUIRE(got);
      const auto want = expected_ranking(tree, scorings[s]);
      CHECK(!want.empty());
      CHECK(describe(*got) == describe(want));
    }
  }
}

TEST_CASE("store: a page of leaves is the answer only when no non-leaf could reach it", "[store][next]") {
  // As a fleet's store is: epics whose children are the work, every task medium; a non-leaf that
  // scores above the leaves (a critical task with an open child), or as much (its tie broken by
  // position), must come first.
  test::TempDir dir;
  const auto file = dir.path() / "tasks.db";
  auto store = test::create_store(file);
  Tree tree;
  auto add = [&](int n, TaskType type, const std::string& parent, Priority priority, std::int64_t position) {
    Task task;
    task.id = task_id(n);
    task.title = "Task " + std::to_string(n);
    task.type = type;
    task.parent = parent;
    task.priority = priority;
    task.position = position;
    task.created_at = task.updated_at = 1'700'000'000'000 + n;
    tree.tasks.push_back(task);
    REQUIRE(store->insert_task(task));
  };
  for (int epic = 0; epic < 3; ++epic) {
    const int first = 1 + epic * 10;
    add(first, TaskType::Epic, "", Priority::Medium, epic + 1);
    for (int n = first + 1; n < first + 10; ++n) add(n, TaskType::Task, task_id(first), Priority::Medium, n - first);
  }
  ReadyScoring scoring;
  scoring.priority_points = {100, 75, 50, 25};
  scoring.leaf_bonus = 10;
  auto check = [&](const ReadyScoring& asked) {
    for (std::int64_t limit : {1, 2, 5, 40}) {
      ReadyScoring page = asked;
      page.limit = limit;
      INFO("limit " << limit);
      auto got = store->top_ready(page);
      REQUIRE(got);
      const auto want = expected_ranking(tree, page);
      CHECK(!want.empty());
      CHECK(describe(*got) == describe(want));
    }
  };
  check(scoring);
  REQUIRE(describe(*store->top_ready(scoring)) == "T002:60L ");  // an epic's work is its children
  // A critical task with an open child: a non-leaf, and the best.
  add(40, TaskType::Task, "", Priority::Critical, 9);
  add(41, TaskType::Task, task_id(40), Priority::Low, 1);
  check(scoring);
  CHECK(describe(*store->top_ready(scoring)) == "T040:100 ");
  // Equal scores: a medium leaf (10 + 10) and the critical non-leaf (20), first by position.
  ReadyScoring tied = scoring;
  tied.priority_points = {20, 10, 10, 0};
  check(tied);
  tied.limit = 3;
  CHECK(describe(*store->top_ready(tied)) == "T002:20L T012:20L T022:20L ");
  test::run_sql(file, "UPDATE tasks SET position = 0 WHERE id = 'T040'");
  tree.tasks[30].position = 0;
  check(tied);
  CHECK(describe(*store->top_ready(tied)) == "T040:20 T002:20L T012:20L ");
}

}  // namespace ct
