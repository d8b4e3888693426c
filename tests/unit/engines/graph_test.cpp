#include "engines/rules/graph.h"

#include <catch2/catch.hpp>

namespace ct {
namespace {

GraphTask node(std::string id, std::vector<std::string> depends = {}, TaskStatus status = TaskStatus::Pending,
               Priority priority = Priority::Medium) {
  GraphTask task;
  task.id = std::move(id);
  task.title = "Task " + task.id;
  task.depends = std::move(depends);
  task.status = status;
  task.priority = priority;
  return task;
}

std::vector<std::string> ids(const Graph& graph, const std::vector<std::size_t>& indices) {
  std::vector<std::string> out;
  for (auto index : indices) out.push_back(graph.tasks[index].id);
  return out;
}

Graph build(std::vector<GraphTask> tasks, std::map<std::string, TaskStatus, std::less<>> outside = {}) {
  GraphOptions options;
  options.now = 100LL * 86'400'000;
  return Graph::build(std::move(tasks), outside, options);
}

TEST_CASE("waves: 0 without a dependency inside the set, else 1 + the highest wave of the dependencies", "[graph]") {
  // A ← B ← D, A ← C ← D, E alone; X is outside the set.
  Graph g = build({node("A"), node("B", {"A"}), node("C", {"A", "X"}), node("D", {"B", "C"}), node("E")},
                  {{"X", TaskStatus::Done}});
  CHECK(g.wave == std::vector<int>{0, 1, 1, 2, 0});
  REQUIRE(g.waves.size() == 3);
  CHECK(ids(g, g.waves[0]) == std::vector<std::string>{"A", "E"});
  CHECK(ids(g, g.waves[1]) == std::vector<std::string>{"B", "C"});
  CHECK(g.current_wave() == 0);
  CHECK(g.max_parallelism() == 2);
  CHECK(g.cycles.empty());
}

TEST_CASE("finished tasks keep their wave; the current wave is the first with unfinished work", "[graph]") {
  Graph g = build({node("A", {}, TaskStatus::Done), node("B", {"A"}, TaskStatus::Cancelled), node("C", {"B"})});
  CHECK(g.wave == std::vector<int>{0, 1, 2});
  CHECK(g.current_wave() == 2);
  CHECK(g.ready[2]);
  Graph done = build({node("A", {}, TaskStatus::Done)});
  CHECK_FALSE(done.current_wave());
}

TEST_CASE("ready: pending, every dependency finished (inside or outside), no open children", "[graph]") {
  GraphTask parent = node("P");
  GraphTask child = node("K");
  child.parent = "P";
  Graph g = build({node("A"), node("B", {"A"}), node("C", {"X"}), node("D", {"Y"}), node("E", {}, TaskStatus::Blocked),
                   node("F", {}, TaskStatus::Active), parent, child},
                  {{"X", TaskStatus::Active}, {"Y", TaskStatus::Done}});
  CHECK(g.ready == std::vector<bool>{true, false, false, true, false, false, false, true});
  CHECK(g.waiting_on(1) == std::vector<std::string>{"A"});
  CHECK(g.waiting_on(2) == std::vector<std::string>{"X"});
  // A dependency nobody knows (deleted) holds nothing up.
  CHECK(build({node("A", {"GONE"})}).ready[0]);
}

TEST_CASE("critical path: the longest chain of unfinished tasks", "[graph]") {
  Graph g = build({node("A", {}, TaskStatus::Done), node("B", {"A"}), node("C", {"B"}), node("D", {"C"}), node("E"),
                   node("F", {"E"})});
  CHECK(ids(g, g.critical_path) == std::vector<std::string>{"B", "C", "D"});
  CHECK(g.on_critical_path[1]);
  CHECK_FALSE(g.on_critical_path[4]);
  // Nothing chained: no task is "critical" for being alone.
  Graph flat = build({node("A"), node("B")});
  CHECK(flat.critical_path.size() == 1);
  CHECK_FALSE(flat.on_critical_path[0]);
}

TEST_CASE("leverage counts unfinished tasks held up, transitively and once each", "[graph]") {
  // A → B → D, A → C → D (diamond), D → E; F done depends on A (holds nothing).
  Graph g = build({node("A"), node("B", {"A"}), node("C", {"A"}), node("D", {"B", "C"}), node("E", {"D"}),
                   node("F", {"A"}, TaskStatus::Done)});
  CHECK(g.leverage == std::vector<std::int64_t>{4, 2, 2, 1, 0, 0});
  CHECK(g.dependents[0] == 3);
  CHECK(ids(g, g.bottlenecks(5)) == std::vector<std::string>{"A", "B", "C"});
  CHECK(g.tier(0) == Tier::Unblock);
  CHECK(g.tier(3) == Tier::Critical);  // on the critical path A → B → D → E
}

TEST_CASE("leverage stays exact across blocks of 1,024 tasks", "[graph]") {
  // One root with a chain of 2,500 behind it: every task holds up all that follow.
  std::vector<GraphTask> tasks{node("T0")};
  for (int i = 1; i < 2500; ++i) tasks.push_back(node("T" + std::to_string(i), {"T" + std::to_string(i - 1)}));
  Graph g = build(std::move(tasks));
  CHECK(g.leverage[0] == 2499);
  CHECK(g.leverage[1000] == 1499);
  CHECK(g.leverage[2499] == 0);
  CHECK(g.critical_path.size() == 2500);
  CHECK(g.waves.size() == 2500);
}

TEST_CASE("tiers order the ready tasks", "[graph]") {
  Graph g = build({node("A", {}, TaskStatus::Pending, Priority::Low), node("B", {"A"}), node("C", {"A"}),
                   node("H", {}, TaskStatus::Pending, Priority::High), node("M"), node("L", {}, TaskStatus::Pending, Priority::Low)});
  CHECK(g.tier(0) == Tier::Unblock);
  CHECK(g.tier(3) == Tier::Critical);
  CHECK(g.tier(4) == Tier::Progress);
  CHECK(g.tier(5) == Tier::Routine);
  CHECK(ids(g, g.ready_order()) == std::vector<std::string>{"A", "H", "M", "L"});
  // The first of them without ordering the rest (plan.diff's next); none ready, none first.
  REQUIRE(g.first_ready());
  CHECK(g.tasks[*g.first_ready()].id == "A");
  Graph later = build({node("M", {}, TaskStatus::Pending, Priority::Low), node("H", {}, TaskStatus::Pending, Priority::High)});
  REQUIRE(later.first_ready());
  CHECK(later.tasks[*later.first_ready()].id == "H");
  CHECK_FALSE(build({node("A", {}, TaskStatus::Done), node("B", {}, TaskStatus::Blocked)}).first_ready());
}

TEST_CASE("cycles are reported, their tasks get no wave, and the rest is analysed", "[graph]") {
  Graph g = build({node("A", {"C"}), node("B", {"A"}), node("C", {"B"}), node("D", {"A"}), node("S", {"S"}), node("F")});
  REQUIRE(g.cycles.size() == 2);
  CHECK(g.cycles[0] == std::vector<std::string>{"A", "B", "C"});
  CHECK(g.cycles[1] == std::vector<std::string>{"S"});
  CHECK(g.wave == std::vector<int>{-1, -1, -1, -1, -1, 0});
  CHECK(g.ready == std::vector<bool>{false, false, false, false, false, true});
  CHECK(g.waves.size() == 1);
}

TEST_CASE("stale: pending and blocked tasks not updated within their limits", "[graph]") {
  GraphTask old_pending = node("A");
  old_pending.updated_at = 50LL * 86'400'000;   // 50 days before "now" (day 100)
  GraphTask fresh = node("B");
  fresh.updated_at = 90LL * 86'400'000;
  GraphTask old_blocked = node("C", {}, TaskStatus::Blocked);
  old_blocked.updated_at = 90LL * 86'400'000;   // 10 days: over the 7-day limit
  GraphTask old_done = node("D", {}, TaskStatus::Done);
  Graph g = build({old_pending, fresh, old_blocked, old_done});
  REQUIRE(g.stale.size() == 2);
  CHECK(g.tasks[g.stale[0].task].id == "A");
  CHECK(g.stale[0].days == 50);
  CHECK(g.tasks[g.stale[1].task].id == "C");
}

TEST_CASE("outside dependencies are named once", "[graph]") {
  CHECK(Graph::outside_dependencies({node("A", {"X", "B"}), node("B", {"X", "Y"})}) ==
        std::vector<std::string>{"X", "Y"});
}

}  // namespace
}  // namespace ct
