// Trust (issue 35): typed evidence checked when recorded and again at completion, acceptance
// criteria covered or waived, the intent of every write kept and queried, sealed epochs of the
// audit trail, and people approving what agents propose. Runs on both backends (the checks of
// commits need git: tests/e2e/trust.cpp walks them in a real repository).
#include <catch2/catch.hpp>

#include <fstream>

#include "gateway/mcp_syntax.h"
#include "unit/project_edits.h"
#include "unit/test_support.h"
#include "engines/rules/evidence.h"

using namespace ct;

namespace {

ErrorCode code_of(const Envelope& e) { return e.error ? e.error->code : ErrorCode::Internal; }
template <typename T>
ErrorCode code_of(const Result<T>& r) {
  return r ? ErrorCode::Internal : r.error().code;
}

using test::write_file;
using test::set_config;

/// A test run recorded for `task` by validate.test.run with a command that passes (or fails).
std::string test_run(test::Project& p, const std::string& task, bool passes) {
  Envelope ran = p.mutate("validate", "test.run",
                          R"({"id":")" + task + R"(","command":")" + std::string(passes ? "true" : "false") + R"("})");
  INFO(to_json(ran, McpAdvice(registry())));
  REQUIRE(ran.success);
  return std::to_string(ran.data["recorded"].as_int());
}

}  // namespace

TEST_CASE("evidence rules: atoms as callers write them, waivers, coverage, what replaces what", "[trust][evidence]") {
  using namespace evidence;
  auto atoms = parse_atoms(test::parse_json(R"("checked by hand")"));
  REQUIRE(atoms);
  CHECK(atoms->front().kind == "note");
  atoms = parse_atoms(test::parse_json(R"([{"commit":"abc1234","covers":[2,1,2]},{"files":["./src//a.c"]},{"test":12}])"));
  REQUIRE(atoms);
  CHECK((*atoms)[0].covers == std::vector<std::int64_t>{1, 2});
  CHECK((*atoms)[1].files == std::vector<std::string>{"src/a.c"});
  CHECK((*atoms)[2].ref == "12");
  CHECK(code_of(parse_atoms(test::parse_json(R"({"commit":"a","note":"b"})"))) == ErrorCode::InvalidParams);
  CHECK(code_of(parse_atoms(test::parse_json(R"({"proof":"x"})"))) == ErrorCode::InvalidParams);
  CHECK(code_of(parse_atoms(test::parse_json(R"({"covers":[1]})"))) == ErrorCode::InvalidParams);
  CHECK(code_of(parse_atoms(test::parse_json(R"({"files":["../etc/passwd"]})"))) == ErrorCode::Validation);
  CHECK(code_of(parse_atoms(test::parse_json(R"({"files":["src/"]})"))) == ErrorCode::Validation);
  CHECK(code_of(parse_atoms(test::parse_json(R"({"commit":"--exec=rm"})"))) == ErrorCode::Validation);
  CHECK(code_of(parse_atoms(test::parse_json(R"({"test":"R1"})"))) == ErrorCode::Validation);
  CHECK(code_of(parse_atoms(test::parse_json(R"({"commit":"a","covers":[0]})"))) == ErrorCode::InvalidParams);
  CHECK(code_of(parse_waivers(test::parse_json(R"([{"criterion":1,"reason":"short"}])"))) == ErrorCode::Validation);
  CHECK(code_of(parse_waivers(test::parse_json(R"([{"criterion":1}])"))) == ErrorCode::InvalidParams);
  CHECK(parse_waivers(test::parse_json(R"({"criterion":[2,3],"reason":"covered by the e2e suite"})"))->front().criteria ==
        std::vector<std::int64_t>{2, 3});
  CHECK(code_of(check_criteria({3}, 2, "T001", "covers")) == ErrorCode::Validation);

  EvidenceAtom commit{.id = "E001", .kind = "commit", .ref = "a", .covers = {1}, .verified = true};
  EvidenceAtom note{.id = "E002", .kind = "note", .ref = "trust me", .covers = {2}};
  EvidenceAtom waiver{.id = "E003", .kind = "waiver", .ref = "not needed here", .covers = {3}};
  const std::vector<EvidenceAtom> all = {commit, note, waiver};
  Coverage strict = coverage(4, all, {}, /*verified_only=*/true);
  CHECK(strict.covered == std::vector<std::int64_t>{1});
  CHECK(strict.waived == std::vector<std::int64_t>{3});
  CHECK(strict.uncovered == std::vector<std::int64_t>{2, 4});
  CHECK(coverage(4, all, {}, false).covered == std::vector<std::int64_t>{1, 2});
  CHECK(coverage(4, all, {"E001"}, true).uncovered == std::vector<std::int64_t>{1, 2, 4});  // stale covers nothing

  EvidenceAtom files{.kind = "files", .files = {{"a.c", "1"}, {"b.c", "2"}}};
  EvidenceAtom fewer{.kind = "files", .files = {{"a.c", "3"}}};
  EvidenceAtom more{.kind = "files", .files = {{"a.c", "3"}, {"b.c", "4"}, {"c.c", "5"}}};
  CHECK_FALSE(replaces(fewer, files));
  CHECK(replaces(more, files));
  CHECK(replaces(EvidenceAtom{.kind = "commit"}, commit));
  // Another change's work (issue 53) takes the place of nothing but another unrelated atom.
  EvidenceAtom unrelated{.kind = "commit", .detail = test::parse_json(R"({"unrelated":"not T001's work"})")};
  CHECK_FALSE(replaces(unrelated, commit));
  CHECK(replaces(unrelated, unrelated));
  CHECK(replaces(EvidenceAtom{.kind = "commit"}, unrelated));
  CHECK_FALSE(replaces(EvidenceAtom{.kind = "note"}, note));
  CHECK_FALSE(replaces(EvidenceAtom{.gate = "qaPassed", .kind = "commit"}, EvidenceAtom{.gate = "implemented", .kind = "commit"}));
}

TEST_CASE("the intent of a write is kept in its audit row and system.log filters by it", "[trust][intent]") {
  test::Project p;
  const std::string id = p.add(R"({"title":"Tune retries"})");
  // Wrong shapes and values are refused before anything runs.
  CHECK(code_of(p.mutate("tasks", "update", R"({"id":"T001","priority":"high","intent":"fix"})")) == ErrorCode::InvalidParams);
  Envelope bad = p.mutate("tasks", "update", R"({"id":"T001","priority":"high","intent":{"category":"fxi"}})");
  CHECK(code_of(bad) == ErrorCode::Validation);
  CHECK(bad.error->details["didYouMean"] == json::Value("fix"));
  CHECK(code_of(p.mutate("tasks", "update", R"({"id":"T001","priority":"high","intent":{"category":"fix","why":"x"}})")) ==
        ErrorCode::InvalidParams);
  CHECK(code_of(p.mutate("tasks", "update", R"({"id":"T001","priority":"high","intent":{"category":"fix","confidence":1.5}})")) ==
        ErrorCode::Validation);
  CHECK(code_of(p.mutate("tasks", "update", R"({"id":"T001","priority":"high","intent":{"category":"fix","tags":["Bad Tag"]}})")) ==
        ErrorCode::Validation);

  REQUIRE(p.mutate("tasks", "update",
                   R"({"id":"T001","priority":"high","reason":"Users hit timeouts","intent":{"category":"fix","reasoning":"timeouts in the logs","confidence":0.9,"tags":["net","net","retry"]}})")
              .success);
  REQUIRE(p.mutate("tasks", "update", R"({"id":"T001","priority":"low","intent":{"category":"plan","confidence":0.4}})").success);
  Envelope fixes = p.query("system", "log", R"({"category":"fix"})");
  REQUIRE(fixes.data.size() == 1);
  CHECK(fixes.data.as_array()[0]["intent"] == test::parse_json(
                                                   R"({"category":"fix","reasoning":"timeouts in the logs","confidence":0.9,"tags":["net","retry"]})"));
  CHECK(p.query("system", "log", R"({"tag":"retry"})").data.size() == 1);
  CHECK(p.query("system", "log", R"({"tag":"nope"})").data.size() == 0);
  CHECK(p.query("system", "log", R"({"minConfidence":0.5})").data.size() == 1);
  CHECK(p.query("system", "log", R"({"maxConfidence":"0.5"})").data.size() == 1);
  CHECK(code_of(p.query("system", "log", R"({"minConfidence":"high"})")) == ErrorCode::Validation);
  CHECK(p.query("system", "log", R"({"text":"users HIT"})").data.size() == 1);
  // tasks.history shows it; the chain still verifies with intents hashed into it.
  Envelope history = p.query("tasks", "history", R"({"id":"T001"})");
  CHECK(history.data.as_array()[0]["intent"]["category"] == json::Value("plan"));
  CHECK(p.query("validate", "audit").data["valid"] == json::Value(true));
}

TEST_CASE("evidence: checked when recorded, again at completion; criteria covered or waived", "[trust][evidence]") {
  test::Project p;
  set_config(p, "verification.evidence", R"("strict")");
  set_config(p, "validate.testCommand", R"("true")");
  const std::string id = p.add(R"({"title":"Login","acceptance":["works with a password","errors are shown"]})");
  write_file(p.dir() / "src" / "login.c", "int login(void) { return 0; }\n");

  // Atoms that fail their check are refused, and nothing is recorded.
  CHECK(code_of(p.mutate("tasks", "evidence", R"({"id":"T001","evidence":{"files":["src/missing.c"]}})")) ==
        ErrorCode::EvidenceInvalid);
  CHECK(code_of(p.mutate("tasks", "evidence", R"({"id":"T001","evidence":{"test":999}})")) == ErrorCode::EvidenceInvalid);
  const std::string failed = test_run(p, id, /*passes=*/false);
  CHECK(code_of(p.mutate("tasks", "evidence", R"({"id":"T001","evidence":{"test":)" + failed + "}}")) ==
        ErrorCode::EvidenceInvalid);
  CHECK(code_of(p.mutate("tasks", "evidence", R"({"id":"T001","evidence":{"commit":"abc1234"}})")) ==
        ErrorCode::EvidenceInvalid);  // not a git repository here
  CHECK(code_of(p.mutate("tasks", "evidence", R"({"id":"T001","evidence":{"note":"x","covers":[3]}})")) ==
        ErrorCode::Validation);  // there is no criterion 3
  CHECK(code_of(p.mutate("tasks", "evidence", R"({"id":"T001"})")) == ErrorCode::InvalidParams);

  // Recorded: the file with its checksum, a passing run covering criterion 1.
  const std::string passed = test_run(p, id, /*passes=*/true);
  Envelope recorded = p.mutate("tasks", "evidence",
                               R"({"id":"T001","evidence":[{"files":["src/login.c"]},{"test":)" + passed +
                                   R"(,"covers":[1]},"checked the error texts by hand"]})");
  INFO(to_json(recorded, McpAdvice(registry())));
  REQUIRE(recorded.success);
  CHECK(recorded.data["coverage"]["covered"] == test::parse_json("[1]"));
  CHECK(recorded.data["coverage"]["uncovered"] == test::parse_json("[2]"));

  // A note covers nothing in strict mode: criterion 2 is neither covered nor waived.
  Envelope uncovered = p.mutate("tasks", "complete", R"({"id":"T001"})");
  CHECK(code_of(uncovered) == ErrorCode::AcCoverageIncomplete);
  CHECK(uncovered.error->details["uncovered"].as_array()[0]["criterion"] == json::Value(std::int64_t{2}));
  CHECK(p.query("tasks", "show", R"({"id":"T001"})").data["status"] == json::Value("pending"));

  // The file changed since: stale, refused with the call that refreshes it.
  write_file(p.dir() / "src" / "login.c", "int login(void) { return 1; }\n");
  Envelope stale = p.mutate_as_person("tasks", "complete", R"({"id":"T001","waive":[{"criterion":2,"reason":"error texts ship with i18n"}]})");
  CHECK(code_of(stale) == ErrorCode::EvidenceStale);
  CHECK(stale.error->details["stale"].as_array()[0]["what"] == json::Value("src/login.c changed"));
  CHECK(mcp_text(stale.error->fix, registry()).find("src/login.c") != std::string::npos);

  // Waiving a criterion in strict mode is a person's act (issue 52): an agent is told what a person runs.
  Envelope waived = p.mutate("tasks", "complete",
                             R"({"id":"T001","evidence":{"files":["src/login.c"]},"waive":[{"criterion":2,"reason":"error texts ship with i18n"}]})");
  CHECK(code_of(waived) == ErrorCode::MutationDisabled);
  CHECK(mcp_text(waived.error->fix, registry()).find("`ct tasks evidence T001 --waive ") != std::string::npos);
  CHECK(p.query("tasks", "show", R"({"id":"T001"})").data["evidence"]["atoms"].size() == 3);  // nothing recorded

  // Fresh files evidence replaces the stale atom; a person's waiver covers criterion 2.
  Envelope done = p.mutate_as_person("tasks", "complete",
                           R"({"id":"T001","evidence":{"files":["src/login.c"]},"waive":[{"criterion":2,"reason":"error texts ship with i18n"}]})");
  INFO(to_json(done, McpAdvice(registry())));
  REQUIRE(done.success);
  CHECK(done.data["evidence"].size() == 2);
  Envelope shown = p.query("tasks", "show", R"({"id":"T001"})");
  CHECK(shown.data["evidence"]["coverage"]["waived"] == test::parse_json("[2]"));
  CHECK(shown.data["evidence"]["atoms"].size() == 4);  // the test run, the note, the fresh files, the waiver

  // Undo takes the completion back with the evidence it recorded; the replaced atom is current again.
  Envelope undone = p.mutate_as_person("tasks", "undo", "{}");
  INFO(to_json(undone, McpAdvice(registry())));
  REQUIRE(undone.success);
  CHECK(p.query("tasks", "show", R"({"id":"T001"})").data["evidence"]["atoms"].size() == 3);
  CHECK(p.query("validate", "audit").data["valid"] == json::Value(true));
}

TEST_CASE("evidence: a required gate needs checked atoms in strict mode, a warning in advisory", "[trust][evidence]") {
  test::Project p;
  set_config(p, "verification.required", R"("[\"implemented\"]")");
  p.add(R"({"title":"Parser"})");
  write_file(p.dir() / "parser.c", "int parse(void);\n");
  Envelope advisory = p.mutate("lifecycle", "gate.pass", R"({"id":"T001","gate":"implemented","evidence":"looks fine"})");
  REQUIRE(advisory.success);
  CHECK(!advisory.warnings.empty());
  REQUIRE(p.mutate("lifecycle", "gate.fail", R"({"id":"T001","gate":"implemented","notes":"reopened for the strict check"})").success);
  set_config(p, "verification.evidence", R"("strict")");
  CHECK(code_of(p.mutate("lifecycle", "gate.pass", R"({"id":"T001","gate":"implemented","evidence":"looks fine"})")) ==
        ErrorCode::EvidenceUnverified);
  CHECK(code_of(p.mutate("lifecycle", "gate.pass", R"({"id":"T001","gate":"implemented"})")) == ErrorCode::EvidenceUnverified);
  // Files with no change to judge them against (no git here) are not checked (issue 53).
  CHECK(code_of(p.mutate("lifecycle", "gate.pass", R"({"id":"T001","gate":"implemented","evidence":[{"files":["parser.c"]}]})")) ==
        ErrorCode::EvidenceUnverified);
  set_config(p, "validate.testCommand", R"("true")");
  const std::string run = test_run(p, "T001", /*passes=*/true);
  Envelope passed = p.mutate("lifecycle", "gate.pass", R"({"id":"T001","gate":"implemented","evidence":[{"test":)" + run + "}]}");
  INFO(to_json(passed, McpAdvice(registry())));
  REQUIRE(passed.success);
  CHECK(passed.data["atoms"].as_array()[0]["verified"] == json::Value(true));
  // A gate no rule requires takes a note as it is.
  CHECK(p.mutate("lifecycle", "gate.pass", R"({"id":"T001","gate":"testsPassed","evidence":"ran them"})").success);
  // Off: nothing is checked.
  set_config(p, "verification.evidence", R"("off")");
  CHECK(p.mutate("tasks", "evidence", R"({"id":"T001","evidence":{"files":["nowhere.c"]}})").success);
}

TEST_CASE("epochs seal the audit trail; validate.audit verifies one", "[trust][epoch]") {
  test::Project p;
  p.add(R"({"title":"One"})");
  p.add(R"({"title":"Two"})");
  Envelope sealed = p.mutate("system", "epoch.seal", R"({"name":"sprint-1","summary":"the first two tasks"})");
  INFO(to_json(sealed, McpAdvice(registry())));
  REQUIRE(sealed.success);
  const std::int64_t seq = sealed.data["seq"].as_int();
  Envelope again = p.mutate("system", "epoch.seal", R"({"name":"sprint-1"})");
  CHECK(again.note == ErrorCode::AlreadyExists);
  CHECK(again.data["seq"] == json::Value(seq));
  CHECK(code_of(p.mutate("system", "epoch.seal", R"({"name":"Bad Name"})")) == ErrorCode::Validation);
  p.add(R"({"title":"Three"})");
  Envelope verified = p.query("validate", "audit", R"({"epoch":"sprint-1"})");
  CHECK(verified.data["epoch"]["valid"] == json::Value(true));
  CHECK(verified.data["epoch"]["seq"] == json::Value(seq));
  CHECK(code_of(p.query("validate", "audit", R"({"epoch":"sprint-9"})")) == ErrorCode::NotFound);
  // A second epoch checks only the rows since the first.
  Envelope second = p.mutate("system", "epoch.seal", R"({"name":"sprint-2"})");
  REQUIRE(second.success);
  CHECK(second.data["checked"].as_int() < second.data["seq"].as_int());
  if (!test::on_postgresql()) {
    // An edited row before the epoch: it no longer verifies.
    test::run_sql(p.dir() / ".cleo" / "tasks.db", "UPDATE audit SET reason = 'rewritten' WHERE seq = 2");
    Envelope broken = p.query("validate", "audit", R"({"epoch":"sprint-1"})");
    CHECK(code_of(broken) == ErrorCode::Validation);
    // Sealing checks the rows since the last epoch: an edited one among them is refused.
    p.add(R"({"title":"Four"})");
    test::run_sql(p.dir() / ".cleo" / "tasks.db", "UPDATE audit SET reason = 'rewritten' WHERE seq = (SELECT max(seq) FROM audit)");
    CHECK(code_of(p.mutate("system", "epoch.seal", R"({"name":"sprint-3"})")) == ErrorCode::Validation);
  }
}

TEST_CASE("approval: an agent proposes, a person approves or rejects", "[trust][approval]") {
  test::Project p;
  CHECK(code_of(p.mutate_as_person("system", "config.set",
                                   R"({"key":"approval.required","value":"[\"tasks.delete:hard\"]"})")) ==
        ErrorCode::InvalidInput);
  CHECK(code_of(p.mutate("system", "config.set", R"({"key":"approval.required","value":"[]"})")) ==
        ErrorCode::MutationDisabled);
  Envelope misspelt = p.mutate_as_person("system", "config.set", R"({"key":"approval.required","value":"[\"tasks.delet\"]"})");
  CHECK(code_of(misspelt) == ErrorCode::InvalidInput);
  CHECK(misspelt.error->details["didYouMean"] == json::Value("tasks.delete"));
  CHECK(code_of(p.mutate_as_person("system", "config.set", R"({"key":"approval.required","value":"[\"release.ship:epic\"]"})")) ==
        ErrorCode::InvalidInput);
  set_config(p, "approval.required", R"("[\"tasks.delete\",\"tasks.complete:epic\"]")");
  p.add(R"({"title":"Release train","type":"epic"})");
  p.add(R"({"title":"Small fix"})");
  p.add(R"({"title":"Stale idea"})");

  // Completing a plain task is no epic: it runs. Completing the epic is proposed.
  CHECK(p.mutate("tasks", "complete", R"({"id":"T002"})").note != ErrorCode::Proposed);
  Envelope proposed = p.mutate("tasks", "complete", R"({"id":"T001","intent":{"category":"checkpoint"}})");
  INFO(to_json(proposed, McpAdvice(registry())));
  REQUIRE(proposed.success);
  CHECK(proposed.note == ErrorCode::Proposed);
  CHECK(proposed.data["id"] == json::Value("P001"));
  CHECK(proposed.data["preview"]["changes"].as_array()[0]["field"] == json::Value("status"));
  CHECK(p.query("tasks", "show", R"({"id":"T001"})").data["status"] == json::Value("pending"));
  // An agent may not approve.
  CHECK(code_of(p.mutate("system", "proposal.approve", R"({"id":"P001"})")) == ErrorCode::MutationDisabled);
  // A person approves: the call runs now.
  Envelope approved = p.mutate_as_person("system", "proposal.approve", R"({"id":"P001","note":"release is out"})");
  INFO(to_json(approved, McpAdvice(registry())));
  REQUIRE(approved.success);
  CHECK(p.query("tasks", "show", R"({"id":"T001"})").data["status"] == json::Value("done"));
  CHECK(code_of(p.mutate_as_person("system", "proposal.approve", R"({"id":"P001"})")) == ErrorCode::Validation);
  Envelope executed = p.query("system", "log", R"({"operation":"tasks.complete","limit":1,"detail":"full"})");
  CHECK(executed.data.as_array()[0]["params"]["proposal"] == json::Value("P001"));

  // The state moved under a proposal: approving is refused; rejecting keeps the task.
  Envelope deletion = p.mutate("tasks", "delete", R"({"id":"T003"})");
  REQUIRE(deletion.note == ErrorCode::Proposed);
  REQUIRE(p.mutate("tasks", "start", R"({"id":"T003"})").success);
  CHECK(code_of(p.mutate_as_person("system", "proposal.approve", R"({"id":"P002"})")) ==
        ErrorCode::ConcurrentModification);
  CHECK(code_of(p.mutate("system", "proposal.reject", R"({"id":"P002","note":"still wanted"})")) ==
        ErrorCode::MutationDisabled);
  Envelope rejected = p.mutate_as_person("system", "proposal.reject", R"({"id":"P002","note":"still wanted"})");
  REQUIRE(rejected.success);
  CHECK(rejected.data["status"] == json::Value("rejected"));
  CHECK(code_of(p.mutate_as_person("system", "proposal.approve", R"({"id":"P009"})")) == ErrorCode::NotFound);
  // A bulk call is proposed whole and approved whole.
  p.add(R"({"title":"Old one"})");
  p.add(R"({"title":"Old two"})");
  Envelope bulk = p.mutate("tasks", "delete", R"({"ids":["T004","T005"]})");
  REQUIRE(bulk.note == ErrorCode::Proposed);
  Envelope both = p.mutate_as_person("system", "proposal.approve", R"({"id":"P003"})");
  INFO(to_json(both, McpAdvice(registry())));
  REQUIRE(both.success);
  CHECK(p.query("tasks", "show", R"({"id":"T005"})").data["status"] == json::Value("cancelled"));
  Envelope all = p.query("system", "proposal.list", R"({"status":"all"})");
  CHECK(all.data.size() == 3);
  CHECK(p.query("system", "proposal.list").note == ErrorCode::NoData);  // none pending
  CHECK(p.query("validate", "audit").data["valid"] == json::Value(true));
}
