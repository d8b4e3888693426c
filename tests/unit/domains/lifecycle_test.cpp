// The lifecycle domain: an epic walked through all eight RCSD-IVTR stages in strict, advisory and
// off mode; the transitions only reset undoes; verification gates in order, a failure resetting
// the later ones, separate agents; and tasks.complete refusing or warning per enforcement.
#include <catch2/catch.hpp>

#include "gateway/mcp_syntax.h"
#include "unit/test_support.h"

using namespace ct;
using ct::test::code_of;

namespace {

/// An epic T001 with one task per stage (labelled with it), T009 unlabelled (implementation).
void seed_epic(test::Project& p) {
  p.add(R"({"title":"Ship version one","type":"epic"})");
  for (std::string_view stage : {"research", "consensus", "specification", "decomposition", "implementation",
                                 "validation", "testing", "release"})
    p.add(R"({"title":"Work of )" + std::string(stage) + R"(","parent":"T001","labels":[")" + std::string(stage) +
          R"("]})");
  p.add(R"({"title":"Build the feature","parent":"T001"})");
}

Envelope record(test::Project& p, std::string_view stage, std::string_view status = "completed") {
  return p.mutate("lifecycle", "record",
                  R"({"id":"T001","stage":")" + std::string(stage) + R"(","status":")" + std::string(status) + R"("})");
}

Envelope complete(test::Project& p, std::string_view id) {
  return p.mutate("tasks", "complete", R"({"id":")" + std::string(id) + R"("})");
}

void set_config(test::Project& p, std::string_view key, std::string_view value) {
  auto set = p.mutate_as_person("system", "config.set", R"({"key":")" + std::string(key) + R"(","value":")" + std::string(value) +
                                                   R"("})");
  REQUIRE(set.success);
}

}  // namespace

TEST_CASE("an epic walks all eight stages with gates, in strict and advisory mode", "[lifecycle]") {
  test::Project p;
  seed_epic(p);
  const bool strict = GENERATE(true, false);
  INFO((strict ? "strict" : "advisory"));
  if (!strict) set_config(p, "lifecycle.enforcement", "advisory");
  set_config(p, "verification.required", "implemented,testsPassed");
  // Untracked: nothing is gated yet, status says so.
  auto status = p.query("lifecycle", "status", R"({"id":"T003"})");
  REQUIRE(status.success);
  CHECK(status.data["epic"].as_string() == "T001");
  CHECK_FALSE(status.data["tracked"].as_bool());
  CHECK(status.data["nextStage"].as_string() == "research");

  // Recording the first stage makes the epic tracked: from here on its work is gated.
  REQUIRE(record(p, "research", "active").success);
  // Spawn readiness knows: implementation work waits for the stages before it (advisory: it may
  // run, and the recommendation says what it waits for).
  auto readiness = p.mutate("orchestrate", "validate", R"({"id":"T010"})");
  REQUIRE(readiness.success);
  CHECK(readiness.data["ready"].as_bool() == !strict);
  if (strict) {
    CHECK(readiness.data["blockers"].as_array()[0]["kind"].as_string() == "lifecycle");
    CHECK(readiness.data["blockers"].as_array()[0]["missing"].size() == 4);
  } else {
    CHECK(to_json(readiness, McpAdvice(registry())).find("waits for stages research, consensus") != std::string::npos);
  }
  const std::vector<std::string> stages = {"research", "consensus", "specification", "decomposition",
                                           "implementation", "validation", "testing", "release"};
  for (std::size_t i = 0; i < stages.size(); ++i) {
    INFO(stages[i]);
    const std::string task = "T00" + std::to_string(i + 2);
    if (i + 1 < stages.size()) {
      // Entering the next stage early: refused in strict mode, a warning in advisory mode (and then
      // undone, so that the walk goes on in order).
      auto early = record(p, stages[i + 1], "active");
      if (strict) {
        CHECK(code_of(early) == "E_LIFECYCLE_GATE_FAILED");
        CHECK(early.error->details["missing"].as_array().back().as_string() == stages[i]);
      } else {
        REQUIRE(early.success);
        REQUIRE(early.warnings.size() == 1);
        CHECK(test::warnings_of(early)[0].find(stages[i]) != std::string::npos);
        REQUIRE(p.mutate("lifecycle", "reset", R"({"id":"T001","stage":")" + stages[i + 1] +
                                                   R"(","reason":"entered too early in this walk"})")
                    .success);
      }
    }
    auto check = p.query("lifecycle", "check", R"({"id":"T001","stage":")" + stages[i] + R"("})");
    REQUIRE(check.success);
    CHECK(check.data["canEnter"].as_bool());
    REQUIRE(record(p, stages[i], "active").success);
    // The stage's own work passes its gates, then may finish while the stage is active.
    CHECK(code_of(complete(p, task)) == (strict ? "E_GATE_DEPENDENCY" : ""));
    for (std::string_view gate : {"implemented", "testsPassed"})
      REQUIRE(p.mutate("lifecycle", "gate.pass", R"({"id":")" + task + R"(","gate":")" + std::string(gate) + R"("})")
                  .success);
    if (strict) REQUIRE(complete(p, task).success);
    auto done = record(p, stages[i]);
    REQUIRE(done.success);
    CHECK(done.data["from"].as_string() == "active");
    CHECK(code_of(record(p, stages[i])) == "E_NO_CHANGE");
    if (stages[i] == "decomposition") {  // implementation work may now be spawned and finish
      CHECK(p.mutate("orchestrate", "validate", R"({"id":"T010"})").data["ready"].as_bool());
      REQUIRE(p.mutate("lifecycle", "gate.pass", R"({"id":"T010","gate":"implemented"})").success);
      REQUIRE(p.mutate("lifecycle", "gate.pass", R"({"id":"T010","gate":"testsPassed"})").success);
      auto finished = complete(p, "T010");
      REQUIRE(finished.success);
      CHECK(finished.warnings.empty());
    }
    if (stages[i] != "release") {
      auto epic = complete(p, "T001");
      if (strict) {
        CHECK(code_of(epic) == "E_LIFECYCLE_GATE_FAILED");
      } else {
        REQUIRE(epic.success);
        REQUIRE(p.mutate("tasks", "reopen", R"({"id":"T001"})").success);
      }
    }
  }
  status = p.query("lifecycle", "status", R"({"id":"T001"})");
  CHECK(status.data["finished"].as_int() == 8);
  CHECK_FALSE(status.data.contains("nextStage"));
  auto epic = complete(p, "T001");
  REQUIRE(epic.success);
  for (const auto& warning : test::warnings_of(epic)) CHECK(warning.find("stage") == std::string::npos);

  auto history = p.query("lifecycle", "history", R"({"id":"T001","limit":3})");
  REQUIRE(history.success);
  REQUIRE(history.page);
  CHECK(history.page->total == (strict ? 16 : 16 + 2 * 7));  // advisory: each early entry and its reset
  CHECK(history.data.as_array()[0]["name"].as_string() == "release");
  CHECK(history.data.as_array()[0]["to"].as_string() == "completed");
  auto shown = p.query("tasks", "show", R"({"id":"T001","detail":"full"})");
  CHECK(shown.data["stages"]["release"].as_string() == "completed");
  CHECK(p.query("tasks", "show", R"({"id":"T005","detail":"full"})").data["gates"]["testsPassed"].as_string() ==
        "passed");
}

TEST_CASE("advisory mode warns where strict refuses; off says nothing", "[lifecycle]") {
  test::Project p;
  seed_epic(p);
  set_config(p, "lifecycle.enforcement", "advisory");
  REQUIRE(record(p, "research").success);
  auto jumped = record(p, "testing", "active");
  REQUIRE(jumped.success);
  REQUIRE(jumped.warnings.size() == 1);
  CHECK(test::warnings_of(jumped)[0].find("consensus, specification, decomposition, implementation, validation") !=
        std::string::npos);
  auto early = complete(p, "T010");
  REQUIRE(early.success);
  CHECK(test::warnings_of(early).front().find("cannot be completed") != std::string::npos);

  set_config(p, "lifecycle.enforcement", "off");
  auto quiet = record(p, "release", "active");
  REQUIRE(quiet.success);
  CHECK(test::warnings_of(quiet).empty());
  for (const auto& warning : test::warnings_of(complete(p, "T001"))) CHECK(warning.find("stage") == std::string::npos);
}

TEST_CASE("only reset undoes a finished stage, and only allowSkip stages are skipped", "[lifecycle]") {
  test::Project p;
  seed_epic(p);
  REQUIRE(record(p, "research").success);
  auto again = record(p, "research", "active");
  CHECK(code_of(again) == "E_LIFECYCLE_TRANSITION_INVALID");
  CHECK(mcp_text(again.error->fix, registry()).find("reset") != std::string::npos);

  auto skip = p.mutate("lifecycle", "skip", R"({"id":"T001","stage":"specification","reason":"we already have one"})");
  CHECK(code_of(skip) == "E_LIFECYCLE_TRANSITION_INVALID");
  CHECK(code_of(p.mutate("lifecycle", "skip", R"({"id":"T001","stage":"consensus","reason":"short"})")) ==
        "E_VALIDATION");
  REQUIRE(p.mutate("lifecycle", "skip", R"({"id":"T001","stage":"consensus","reason":"a single viable option"})")
              .success);
  CHECK(code_of(p.mutate("lifecycle", "skip", R"({"id":"T001","stage":"research","reason":"a single viable option"})")) ==
        "E_LIFECYCLE_TRANSITION_INVALID");
  set_config(p, "lifecycle.allowSkip", "consensus,research");
  CHECK(code_of(p.mutate("lifecycle", "skip", R"({"id":"T001","stage":"research","reason":"a single viable option"})")) ==
        "E_LIFECYCLE_TRANSITION_INVALID");  // completed: reset first

  REQUIRE(record(p, "specification").success);
  REQUIRE(record(p, "decomposition", "active").success);
  CHECK(code_of(p.mutate("lifecycle", "reset", R"({"id":"T001","stage":"research","reason":"too short"})")) ==
        "E_VALIDATION");
  auto reset = p.mutate("lifecycle", "reset",
                        R"({"id":"T001","stage":"specification","reason":"the API changed under the spec"})");
  REQUIRE(reset.success);
  CHECK(reset.data["status"].as_string() == "pending");
  CHECK(reset.data["from"].as_string() == "completed");
  REQUIRE(reset.warnings.size() == 1);
  CHECK(test::warnings_of(reset)[0].find("decomposition (active)") != std::string::npos);
  CHECK(code_of(p.mutate("lifecycle", "reset",
                         R"({"id":"T001","stage":"specification","reason":"the API changed under the spec"})")) ==
        "E_NO_CHANGE");

  // Stages belong to epics: a task's id names its epic in the error.
  auto task = p.mutate("lifecycle", "record", R"({"id":"T002","stage":"research","status":"active"})");
  CHECK(code_of(task) == "E_VALIDATION");
  CHECK(task.error->details["epic"].as_string() == "T001");
  CHECK(code_of(p.query("lifecycle", "status", R"({"id":"T404"})")) == "E_NOT_FOUND");
  auto stages = p.query("lifecycle", "stages");
  REQUIRE(stages.success);
  CHECK(stages.data["stages"].as_array()[2]["prerequisites"].size() == 2);
  CHECK(stages.data["stages"].as_array()[0]["skippable"].as_bool());
  CHECK(stages.data["gatedOperations"].size() == 2);
}

TEST_CASE("verification gates pass in order, a failure resets the later ones", "[lifecycle][gates]") {
  test::Project p;
  p.add(R"({"title":"Add login form"})");
  auto early = p.mutate("lifecycle", "gate.pass", R"({"id":"T001","gate":"testsPassed"})");
  CHECK(code_of(early) == "E_GATE_DEPENDENCY");
  CHECK(mcp_text(early.error->fix, registry()).find("implemented") != std::string::npos);
  for (std::string_view gate : {"implemented", "testsPassed", "qaPassed"})
    REQUIRE(p.mutate("lifecycle", "gate.pass", R"({"id":"T001","gate":")" + std::string(gate) + R"("})").success);
  CHECK(code_of(p.mutate("lifecycle", "gate.pass", R"({"id":"T001","gate":"qaPassed"})")) == "E_NO_CHANGE");

  auto failed = p.mutate("lifecycle", "gate.fail",
                         R"({"id":"T001","gate":"testsPassed","notes":"login test fails","evidence":"ci run 42"})");
  REQUIRE(failed.success);
  CHECK(failed.data["reset"].as_array().size() == 1);
  CHECK(failed.data["reset"].as_array()[0].as_string() == "qaPassed");
  auto gates = p.query("lifecycle", "gates", R"({"id":"T001"})");
  REQUIRE(gates.success);
  CHECK(gates.data["passed"].as_int() == 1);
  CHECK(gates.data["next"].as_string() == "testsPassed");
  CHECK(gates.data["gates"].as_array()[1]["status"].as_string() == "failed");
  CHECK(gates.data["gates"].as_array()[1]["evidence"].as_string() == "ci run 42");
  CHECK(gates.data["gates"].as_array()[2]["status"].as_string() == "pending");

  // The task record and its history show the gates; the task itself never changed status.
  auto shown = p.query("tasks", "show", R"({"id":"T001","detail":"full"})");
  CHECK(shown.data["status"].as_string() == "pending");
  CHECK(shown.data["gates"]["implemented"].as_string() == "passed");
  CHECK(shown.data["gates"]["testsPassed"].as_string() == "failed");
  auto history = p.query("tasks", "history", R"({"id":"T001"})");
  CHECK(to_json(history, McpAdvice(registry())).find("gate.testsPassed") != std::string::npos);
  auto lifecycle_history = p.query("lifecycle", "history", R"({"id":"T001","kind":"gate"})");
  CHECK(lifecycle_history.data.size() == 5);  // 3 passes, the failure, the reset (a repeat is no event)
}

TEST_CASE("verification.required gates tasks.complete; separate agents may not verify their own work",
          "[lifecycle][gates]") {
  test::Project p;
  p.add(R"({"title":"Add login form"})");
  p.add(R"({"title":"Fix the auth bug"})");
  set_config(p, "verification.required", "implemented,testsPassed");
  auto refused = complete(p, "T001");
  CHECK(code_of(refused) == "E_GATE_DEPENDENCY");
  CHECK(refused.error->details["missingGates"].size() == 2);
  REQUIRE(p.mutate("lifecycle", "gate.pass", R"({"id":"T001","gate":"implemented"})").success);
  auto last = p.mutate("lifecycle", "gate.pass", R"({"id":"T001","gate":"testsPassed"})");
  REQUIRE(last.success);
  CHECK(last.data["readyToComplete"].as_bool());
  CHECK(complete(p, "T001").success);
  set_config(p, "lifecycle.enforcement", "advisory");
  auto warned = complete(p, "T002");
  REQUIRE(warned.success);
  CHECK(test::warnings_of(warned).front().find("verification.required") != std::string::npos);

  set_config(p, "verification.separateAgents", "true");
  p.add(R"({"title":"Polish the docs"})");
  // No agent name: who verifies cannot be told apart from who worked.
  CHECK(code_of(p.mutate("lifecycle", "gate.pass", R"({"id":"T003","gate":"testsPassed"})")) == "E_INVALID_AGENT");
  REQUIRE(p.mutate("session", "start", R"({"scope":"task:T003","agent":"coder"})").success);
  REQUIRE(p.mutate("tasks", "start", R"({"id":"T003"})").success);
  REQUIRE(p.mutate("lifecycle", "gate.pass", R"({"id":"T003","gate":"implemented"})").success);
  auto circular = p.mutate("lifecycle", "gate.pass", R"({"id":"T003","gate":"testsPassed"})");
  CHECK(code_of(circular) == "E_CIRCULAR_VALIDATION");
  CHECK(circular.error->details["authors"].as_array()[0].as_string() == "coder");
  REQUIRE(p.mutate("session", "end").success);
  REQUIRE(p.mutate("session", "start", R"({"scope":"task:T003","agent":"reviewer"})").success);
  auto verified = p.mutate("lifecycle", "gate.pass", R"({"id":"T003","gate":"testsPassed"})");
  REQUIRE(verified.success);
  CHECK(verified.data["agent"].as_string() == "reviewer");
}
