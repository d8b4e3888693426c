// Plans as named branches of the graph (issue 54, seed 002): a plan named at plan.begin is found by
// its name from any session, rests on the tasks it names anywhere in the graph (no epic), and its
// rebase's conflicts — {path, base, ours, theirs} per field — are settled one by one with
// plan.resolve (ours, theirs or a value) before it is rebased and committed. Runs on both backends.
#include <catch2/catch.hpp>

#include "gateway/mcp_syntax.h"
#include "unit/test_support.h"

using namespace ct;

namespace {

ErrorCode code_of(const Envelope& e) { return e.error ? e.error->code : ErrorCode::Internal; }

Envelope must(Envelope e) {
  INFO(to_json(e, McpAdvice(registry())));
  REQUIRE(e.success);
  return e;
}

json::Value task(test::Project& p, const std::string& id) { return must(p.query("tasks", "show", R"({"id":")" + id + "\"}")).data; }

}  // namespace

TEST_CASE("plan branches: named, across the graph, conflicts settled field by field", "[planbranch]") {
  test::Project p;
  p.add(R"({"title":"Cache layer","priority":"low"})");
  p.add(R"({"title":"Metrics","priority":"low"})");
  p.add(R"({"title":"Docs","priority":"low","labels":["docs"]})");
  Envelope begun = must(p.mutate("plan", "begin", R"({"label":"tune","name":"agents/planner/tune"})"));
  CHECK(begun.data["plan"] == json::Value("PL001"));
  CHECK(begun.data["name"] == json::Value("agents/planner/tune"));
  // One open plan a name; the name is the plan's id for every call.
  Envelope taken = p.mutate("plan", "begin", R"({"label":"again","name":"agents/planner/tune"})");
  CHECK(code_of(taken) == ErrorCode::Validation);
  CHECK(taken.error->details["plan"] == json::Value("PL001"));
  CHECK(code_of(p.mutate("plan", "begin", R"({"label":"bad","name":"Agents planner"})")) == ErrorCode::InvalidParams);
  must(p.mutate("plan", "apply", R"({"plan":"agents/planner/tune","ops":[
      {"operation":"tasks.update","params":{"id":"T001","title":"Cache layer (LRU)","priority":"high"}},
      {"operation":"tasks.update","params":{"id":"T002","title":"Metrics v2"}},
      {"operation":"tasks.update","params":{"id":"T003","priority":"medium"}}]})"));
  Envelope listed = must(p.query("plan", "list"));
  CHECK(listed.data.as_array().front()["name"] == json::Value("agents/planner/tune"));
  CHECK(code_of(p.query("plan", "diff", R"({"plans":["agents/nobody"]})")) == ErrorCode::NotFound);

  // Another agent changes three of the fields the plan changes, and one it does not.
  must(p.mutate("tasks", "update", R"({"id":"T001","title":"Cache layer (ARC)"})"));
  must(p.mutate("tasks", "update", R"({"id":"T002","title":"Metrics (OpenTelemetry)"})"));
  must(p.mutate("tasks", "update", R"({"id":"T003","priority":"critical","labels":["user"]})"));
  Envelope conflict = p.mutate("plan", "rebase", R"({"plan":"agents/planner/tune"})");
  REQUIRE(code_of(conflict) == ErrorCode::ConcurrentModification);
  const json::Value& conflicts = conflict.error->details["conflicts"];
  REQUIRE(conflicts.size() == 3);
  std::map<std::string, json::Value> by_path;
  for (const auto& row : conflicts.as_array()) by_path[row["path"].as_string()] = row;
  REQUIRE(by_path.contains("T001.title"));
  CHECK(by_path["T001.title"]["base"] == json::Value("Cache layer"));
  CHECK(by_path["T001.title"]["ours"] == json::Value("Cache layer (LRU)"));
  CHECK(by_path["T001.title"]["theirs"] == json::Value("Cache layer (ARC)"));
  CHECK(by_path.contains("T002.title"));
  CHECK(by_path.contains("T003.priority"));
  CHECK(conflict.error->fix.find("resolve") != std::string::npos);

  // Field by field: ours, theirs, a value of the agent's own.
  Envelope ours = must(p.mutate("plan", "resolve", R"({"plan":"agents/planner/tune","path":"T001.title","take":"ours"})"));
  CHECK(ours.data["conflicts"].size() == 2);
  CHECK(code_of(p.mutate("plan", "resolve", R"({"plan":"PL001","path":"T001.title","take":"ours"})")) == ErrorCode::NotFound);
  CHECK(code_of(p.mutate("plan", "resolve", R"({"plan":"PL001","path":"T002.title","take":"value"})")) ==
        ErrorCode::InvalidParams);
  CHECK(code_of(p.mutate("plan", "resolve", R"({"plan":"PL001","path":"T002.title","take":"theirs","value":"x"})")) ==
        ErrorCode::InvalidParams);
  Envelope theirs = must(p.mutate("plan", "resolve", R"({"plan":"PL001","path":"T002.title","take":"theirs"})"));
  CHECK(theirs.data["conflicts"] == json::Value::array_of(std::vector<std::string>{"T003.priority"}));
  Envelope value = must(p.mutate("plan", "resolve", R"({"plan":"PL001","path":"T003.priority","take":"value","value":"high"})"));
  CHECK(value.data["conflicts"].empty());
  // Settled: the rebase takes the rest in, the commit makes it.
  Envelope rebased = must(p.mutate("plan", "rebase", R"({"plan":"agents/planner/tune"})"));
  CHECK_FALSE(rebased.data.contains("overwrites"));
  must(p.mutate("plan", "commit", R"({"plan":"agents/planner/tune"})"));
  CHECK(task(p, "T001")["title"] == json::Value("Cache layer (LRU)"));
  CHECK(task(p, "T001")["priority"] == json::Value("high"));
  CHECK(task(p, "T002")["title"] == json::Value("Metrics (OpenTelemetry)"));
  CHECK(task(p, "T003")["priority"] == json::Value("high"));
  CHECK(task(p, "T003")["labels"] == json::Value::array_of(std::vector<std::string>{"docs", "user"}));

  // The name is free again once its plan is committed; the committed one is still found by it
  // until then.
  Envelope shown = must(p.query("plan", "diff", R"({"plans":["agents/planner/tune"]})"));
  CHECK(shown.data.as_array().front()["status"] == json::Value("committed"));
  Envelope again = must(p.mutate("plan", "begin", R"({"label":"next round","name":"agents/planner/tune"})"));
  CHECK(again.data["plan"] == json::Value("PL002"));
  CHECK(must(p.query("plan", "diff", R"({"plans":["agents/planner/tune"]})")).data.as_array().front()["id"] ==
        json::Value("PL002"));
}

TEST_CASE("plan branches: a resolved field changed again conflicts again; a committed plan resolves nothing",
          "[planbranch]") {
  test::Project p;
  p.add(R"({"title":"One"})");
  must(p.mutate("plan", "begin", R"({"label":"retitle","name":"retitle"})"));
  must(p.mutate("plan", "apply", R"({"plan":"retitle","ops":[{"operation":"tasks.update","params":{"id":"T001","title":"Plan"}}]})"));
  must(p.mutate("tasks", "update", R"({"id":"T001","title":"Theirs"})"));
  must(p.mutate("plan", "resolve", R"({"plan":"retitle","path":"T001.title","take":"ours"})"));
  // Their second change after the resolution is a conflict of its own.
  must(p.mutate("tasks", "update", R"({"id":"T001","title":"Theirs again"})"));
  Envelope conflict = p.mutate("plan", "rebase", R"({"plan":"retitle"})");
  REQUIRE(code_of(conflict) == ErrorCode::ConcurrentModification);
  CHECK(conflict.error->details["conflicts"].as_array().front()["base"] == json::Value("Theirs"));
  must(p.mutate("plan", "resolve", R"({"plan":"retitle","path":"T001.title","take":"theirs"})"));
  must(p.mutate("plan", "rebase", R"({"plan":"retitle"})"));
  must(p.mutate("plan", "commit", R"({"plan":"retitle"})"));
  CHECK(task(p, "T001")["title"] == json::Value("Theirs again"));
  CHECK(code_of(p.mutate("plan", "resolve", R"({"plan":"retitle","path":"T001.title","take":"ours"})")) == ErrorCode::Validation);
}
