// Attestation of memory's constraints (issue 54, seed 000; domains/memory/memory_constraints.h,
// memory_turn.cpp): find and show return each entry's constraint ids (also for an entry the caller
// already read), memory.applied attests one constraint with the host's session id that
// session.start bound, an unknown one is refused with the valid ones to retry with, and a turn is
// reported or rejected, in the trail and in memory.stats. Runs on both backends.
#include <catch2/catch.hpp>

#include "gateway/mcp_syntax.h"
#include "unit/test_support.h"

using namespace ct;

namespace {

constexpr std::string_view kWorkflow =
    R"({"kind":"pattern","title":"Commit workflow for the ledger",)"
    R"("body":"## Steps\n- Run the ledger tests\n- Write the commit message\n## Money\nAmounts are integer cents."})";

std::vector<std::string> strings(const json::Value& array) {
  std::vector<std::string> out;
  for (const auto& item : array.as_array()) out.push_back(item.is_string() ? item.as_string() : item["id"].as_string());
  return out;
}

}  // namespace

TEST_CASE("memory.find and show return constraint ids, unchanged entries too", "[memory][constraints]") {
  test::Project p;
  REQUIRE(p.mutate("memory", "observe", kWorkflow).success);
  REQUIRE(p.mutate("memory", "observe", R"({"kind":"pattern","title":"Ledger rounding is banker's"})").success);
  const std::vector<std::string> expected{"M001#Steps", "M001#Steps/1", "M001#Steps/2", "M001#Money"};
  Envelope found = p.query("memory", "find", R"({"query":"ledger"})");
  REQUIRE(found.success);
  const json::Value* workflow = nullptr;
  for (const auto& row : found.data.as_array()) {
    if (row["id"] == json::Value("M001")) workflow = &row;
    else CHECK(row.find("constraints") == nullptr);  // an entry without H2 sections has none
  }
  REQUIRE(workflow);
  CHECK(strings((*workflow)["constraints"]) == expected);
  // Delta-loaded: the content is left out, the ids are not.
  const std::string hash = (*workflow)["hash"].as_string();
  Envelope again = p.query("memory", "find", R"({"query":"ledger","knownHashes":[")" + hash + R"("]})");
  REQUIRE(again.success);
  bool unchanged_has_ids = false;
  for (const auto& row : again.data.as_array())
    if (row["id"] == json::Value("M001")) {
      CHECK(row["unchanged"] == json::Value(true));
      CHECK(row.find("body") == nullptr);
      unchanged_has_ids = strings(row["constraints"]) == expected;
    }
  CHECK(unchanged_has_ids);
  // show and detail:'full' give each constraint whole.
  Envelope shown = p.query("memory", "show", R"({"id":"M001"})");
  REQUIRE(shown.success);
  const json::Value& second = shown.data["constraints"].as_array()[2];
  CHECK(second["id"] == json::Value("M001#Steps/2"));
  CHECK(second["name"] == json::Value("Steps"));
  CHECK(second["text"] == json::Value("Write the commit message"));
  CHECK(second["textHash"].as_string().size() == 16);
  Envelope full = p.query("memory", "find", R"({"query":"commit","detail":"full"})");
  REQUIRE(full.success);
  CHECK(full.data.as_array()[0]["constraints"].as_array()[3]["text"] == json::Value("Amounts are integer cents."));
}

TEST_CASE("memory.applied attests a constraint with the host's session id; a wrong one is retryable",
          "[memory][constraints]") {
  test::Project p;
  p.add(R"({"title":"Refunds through the ledger"})");
  REQUIRE(p.mutate("memory", "observe", kWorkflow).success);
  REQUIRE(p.mutate("memory", "observe", R"({"kind":"pattern","title":"Plain entry without sections"})").success);
  Envelope started = p.mutate("session", "start", R"({"scope":"global","focus":"T001","hostSession":"thread-7f3a"})");
  REQUIRE(started.success);
  CHECK(started.data.find("hostSession") == nullptr);  // not echoed: the caller sent it

  Envelope declared = p.mutate("memory", "applied", R"({"ids":["M1#Steps/2","M001#Money","M002"]})");
  REQUIRE(declared.success);
  CHECK(strings(declared.data["applied"]) == std::vector<std::string>{"M001#Steps/2", "M001#Money", "M002"});
  CHECK(declared.data["taskId"] == json::Value("T001"));
  // The entry is counted once for the call; each constraint is kept, with the host's id.
  Envelope shown = p.query("memory", "show", R"({"id":"M001"})");
  CHECK(shown.data["usage"]["applied"] == json::Value(1));
  const auto& recent = shown.data["usage"]["recent"].as_array();
  REQUIRE(recent.size() == 2);
  CHECK(recent[0]["constraint"] == json::Value("Money"));
  CHECK(recent[1]["constraint"] == json::Value("Steps/2"));
  CHECK(recent[0]["hostSession"] == json::Value("thread-7f3a"));
  Envelope timeline = p.query("memory", "timeline", R"({"taskId":"T001"})");
  REQUIRE(timeline.success);
  std::vector<std::string> attested;
  for (const auto& row : timeline.data.as_array())
    if (row["constraint"].is_string()) attested.push_back(row["constraint"].as_string());
  CHECK(attested == std::vector<std::string>{"Money", "Steps/2"});  // newest first
  // The trail names the constraint and the host.
  Envelope log = p.query("system", "log", R"({"operation":"memory.applied","detail":"full"})");
  REQUIRE(log.success);
  CHECK(to_json(log, McpAdvice(registry())).find("thread-7f3a") != std::string::npos);

  // An unknown constraint: retryable, the valid ones in the details, the nearest in the fix.
  Envelope wrong = p.mutate("memory", "applied", R"({"ids":["M001#Step"]})");
  REQUIRE(wrong.error);
  CHECK(wrong.error->code == ErrorCode::ConstraintUnknown);
  CHECK(wrong.error->retryable());
  CHECK(wrong.exit_code() == 89);
  CHECK(strings(wrong.error->details["validConstraints"]) ==
        std::vector<std::string>{"M001#Steps", "M001#Steps/1", "M001#Steps/2", "M001#Money"});
  CHECK(wrong.error->details["validConstraints"].as_array()[1]["text"] == json::Value("Run the ledger tests"));
  CHECK(wrong.error->details["didYouMean"] == json::Value("M001#Steps"));
  const std::string wire = to_json(wrong, McpAdvice(registry()));
  CHECK(wire.find(R"("retryable":true)") != std::string::npos);
  CHECK(wire.find("ids:['M001#Steps']") != std::string::npos);
  // Nothing of the refused call was kept.
  CHECK(p.query("memory", "show", R"({"id":"M001"})").data["usage"]["recent"].as_array().size() == 2);
  // An entry without sections has no constraints: attest it whole.
  Envelope plain = p.mutate("memory", "applied", R"({"ids":["M002#Steps"]})");
  REQUIRE(plain.error);
  CHECK(plain.error->code == ErrorCode::ConstraintUnknown);
  CHECK(plain.error->details["validConstraints"].as_array().empty());
  CHECK(to_json(plain, McpAdvice(registry())).find("ids:['M002']") != std::string::npos);
  // Named twice is still refused; a missing entry is still E_NOT_FOUND; a bad form is E_VALIDATION.
  CHECK(p.mutate("memory", "applied", R"({"ids":["M001#Money","M1#Money"]})").error->code == ErrorCode::Validation);
  CHECK(p.mutate("memory", "applied", R"({"ids":["M009#Steps"]})").error->code == ErrorCode::NotFound);
  CHECK(p.mutate("memory", "applied", R"({"ids":["M001#"]})").error->code == ErrorCode::Validation);
  CHECK(p.mutate("session", "start", R"({"scope":"global","hostSession":""})").error->code == ErrorCode::Validation);
}

TEST_CASE("memory.turn reports or rejects a turn, kept in the trail and counted", "[memory][constraints]") {
  test::Project p;
  p.add(R"({"title":"Refunds through the ledger"})");
  REQUIRE(p.mutate("session", "start", R"({"scope":"global","focus":"T001","hostSession":"host-42"})").success);
  Envelope reported = p.mutate("memory", "turn", R"({"outcome":"reported","summary":"refunds written"})");
  REQUIRE(reported.success);
  CHECK(reported.data["turn"] == json::Value(1));
  CHECK(reported.data["taskId"] == json::Value("T001"));
  Envelope rejected = p.mutate("memory", "turn", R"({"outcome":"rejected"})");
  REQUIRE(rejected.success);
  CHECK(rejected.data["turn"] == json::Value(2));
  // A report needs its summary; an outcome outside the two is refused.
  Envelope empty = p.mutate("memory", "turn", R"({"outcome":"reported","summary":"   "})");
  REQUIRE(empty.error);
  CHECK(empty.error->code == ErrorCode::InvalidParams);
  CHECK(p.mutate("memory", "turn", R"({"outcome":"reported"})").error->code == ErrorCode::InvalidParams);
  CHECK_FALSE(p.mutate("memory", "turn", R"({"outcome":"done","summary":"x"})").success);
  CHECK(p.mutate("memory", "turn", R"({"outcome":"rejected","taskId":"T999"})").error->code == ErrorCode::NotFound);
  Envelope stats = p.query("memory", "stats");
  REQUIRE(stats.success);
  CHECK(stats.data["turns"]["reported"] == json::Value(1));
  CHECK(stats.data["turns"]["rejected"] == json::Value(1));
  CHECK(stats.data["constraintsApplied"] == json::Value(0));
  Envelope log = p.query("system", "log", R"({"operation":"memory.turn"})");
  REQUIRE(log.success);
  std::size_t kept = 0;  // refused calls are in the trail too, with their outcome
  for (const auto& row : log.data.as_array()) kept += row.find("outcome") == nullptr ? 1 : 0;
  CHECK(kept == 2);
}

TEST_CASE("a skill's constraints are shown and attested like an entry's", "[memory][constraints]") {
  test::Project p;
  Envelope shown = p.query("skills", "show", R"({"name":"task-executor"})");
  REQUIRE(shown.success);
  const auto& constraints = shown.data["constraints"].as_array();
  REQUIRE(constraints.size() == 8);  // the protocol's section and its seven steps
  CHECK(constraints[0]["id"] == json::Value("skill:task-executor#Protocol: execute one task"));
  CHECK(constraints[3]["id"] == json::Value("skill:task-executor#Protocol: execute one task/3"));
  CHECK(constraints[3]["text"].as_string().starts_with("Work in small steps"));
  Envelope applied = p.mutate("memory", "applied", R"({"ids":["skill:task-executor#Protocol: execute one task/3"]})");
  REQUIRE(applied.success);
  CHECK(p.query("memory", "stats").data["constraintsApplied"] == json::Value(1));
  Envelope wrong = p.mutate("memory", "applied", R"({"ids":["skill:task-executor#Protocol/3"]})");
  REQUIRE(wrong.error);
  CHECK(wrong.error->code == ErrorCode::ConstraintUnknown);
  CHECK(wrong.error->details["validConstraints"].as_array().size() == 8);
  Envelope unknown = p.mutate("memory", "applied", R"({"ids":["skill:task-executer#Steps"]})");
  REQUIRE(unknown.error);
  CHECK(unknown.error->code == ErrorCode::NotFound);
  CHECK(unknown.error->details["didYouMean"] == json::Value("task-executor"));
}
