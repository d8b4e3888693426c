// validate.protocol, validate.manifest and compliance.record {protocol}: the subject resolved from
// a task or a manifest entry, the evidence collected from the store and the project's files, the
// protocol's code on a failed MUST, and the outcome recorded per check and agent.
#include <catch2/catch.hpp>

#include <algorithm>
#include <fstream>

#include "core/sha256.h"
#include "gateway/mcp_syntax.h"
#include "unit/test_support.h"

using namespace ct;
using ct::test::as_report;
using ct::test::code_of;

namespace {

namespace fs = std::filesystem;

void write(test::Project& p, const std::string& path, const std::string& content) {
  fs::create_directories((p.dir() / path).parent_path());
  std::ofstream(p.dir() / path, std::ios::binary) << content;
}

const std::string kResearch = "# Auth options\n\n## Summary\nOAuth fits.\n\n## References\n- https://oauth.net/2/\n";

/// T001 a task with a finished research output, recorded and linked.
void research_output(test::Project& p) {
  p.add(R"({"title":"Choose an auth scheme"})");
  write(p, "docs/auth.md", kResearch);
  Envelope added = p.mutate("research", "add",
                            R"({"id":"T001-auth","file":"docs/auth.md","title":"Auth options","status":"complete",)"
                            R"("keyFindings":["OAuth fits","Sessions are simpler","Tokens expire"],"linkedTasks":["T001"]})");
  INFO(to_json(added, McpAdvice(registry())));
  REQUIRE(added.success);
}

std::vector<std::string> rule_ids(const json::Value& rules) {
  std::vector<std::string> out;
  for (const auto& rule : rules.as_array()) out.push_back(rule["id"].as_string() + ":" + rule["status"].as_string());
  return out;
}

void configure(test::Project& p, const std::string& key, const std::string& value) {
  json::Value params = json::Value::object();
  params.set("key", key);
  params.set("value", value);
  Envelope set = p.mutate_as_person("system", "config.set", params.dump());
  INFO(to_json(set, McpAdvice(registry())));
  REQUIRE(set.success);
}

const std::string kRunner = (fs::path(CT_FIXTURES_DIR) / "programs" / "test_summary.sh").string();

}  // namespace

TEST_CASE("validate.protocol: a task with its research output, found either way", "[validate][protocol]") {
  test::Project p;
  research_output(p);
  // From the task: its entry is found through the link.
  Envelope by_task = p.query("validate", "protocol", R"({"id":"T001","protocol":"research"})");
  INFO(to_json(by_task, McpAdvice(registry())));
  REQUIRE(by_task.success);
  CHECK(by_task.data["valid"].as_bool());
  CHECK(by_task.data["score"].as_int() == 100);
  CHECK(by_task.data["subject"]["id"].as_string() == "T001");
  CHECK(by_task.data["subject"]["entryId"].as_string() == "T001-auth");
  CHECK(by_task.data["passed"].as_int() == 7);
  CHECK(by_task.data["rules"].as_array().empty());  // compact: only failed and skipped rules
  CHECK(by_task.warnings.empty());
  // From the entry: the protocol its agentType implies (said in a warning), the task it links.
  Envelope by_entry = p.query("validate", "protocol", R"({"entryId":"T001-auth","detail":"full"})");
  REQUIRE(by_entry.success);
  CHECK(by_entry.data["protocol"].as_string() == "research");
  CHECK(by_entry.data["subject"]["id"].as_string() == "T001");
  CHECK(by_entry.data["rules"].size() == 7);
  CHECK(by_entry.data["rules"].as_array()[0]["text"].is_string());
  REQUIRE(by_entry.warnings.size() == 1);
  CHECK(test::warnings_of(by_entry)[0].find("agentType research implies") != std::string::npos);
  // Queries never write.
  CHECK(p.query("validate", "compliance").note == ErrorCode::NoData);
}

TEST_CASE("validate.protocol: a failed MUST is the protocol's error, the report in details", "[validate][protocol]") {
  test::Project p;
  research_output(p);
  write(p, "docs/auth.md", "edited afterwards\n");
  Envelope e = p.query("validate", "protocol", R"({"id":"T001","protocol":"research"})");
  INFO(to_json(e, McpAdvice(registry())));
  REQUIRE_FALSE(e.success);
  CHECK(code_of(e) == "E_PROTOCOL_RESEARCH");
  CHECK(e.error->exit_code() == 60);
  CHECK(e.error->message.starts_with("T001 breaks the research protocol: RSCH-005 docs/auth.md changed after"));
  CHECK(mcp_text(e.error->fix, registry()).find("References") != std::string::npos);
  auto report = as_report(e);
  CHECK_FALSE(report.data["valid"].as_bool());
  CHECK(rule_ids(report.data["rules"]) == std::vector<std::string>{"RSCH-002:fail", "RSCH-005:fail"});
  CHECK(report.data["score"].as_int() == 75);
  // The failed SHOULD is a warning; strict makes it count.
  REQUIRE(report.warnings.size() == 1);
  CHECK(test::warnings_of(report)[0].starts_with("RSCH-002 (SHOULD): "));

  write(p, "docs/other.md", "# Notes\n\nNo sources.\n");
  REQUIRE(p.mutate("research", "add",
                   R"({"id":"T001-notes","file":"docs/other.md","title":"Notes","status":"complete",)"
                   R"("keyFindings":["a","b","c"],"linkedTasks":["T001"]})").success);
  Envelope lenient = p.query("validate", "protocol", R"({"entryId":"T001-notes","protocol":"research"})");
  REQUIRE(lenient.success);
  CHECK(lenient.data["score"].as_int() == 95);
  Envelope strict = p.query("validate", "protocol", R"({"entryId":"T001-notes","protocol":"research","strict":true})");
  CHECK(code_of(strict) == "E_PROTOCOL_RESEARCH");
  // T001 now has two research entries: the newest is checked, and the warning says so.
  Envelope two = p.query("validate", "protocol", R"({"id":"T001","protocol":"research"})");
  auto warnings = test::warnings_of(as_report(two));
  CHECK(std::any_of(warnings.begin(), warnings.end(), [](const std::string& warning) {
    return warning.starts_with("T001 has 2 entries of agentType research; checked the newest");
  }));
}

TEST_CASE("validate.protocol: subjects and protocols that cannot be checked", "[validate][protocol]") {
  test::Project p;
  research_output(p);
  CHECK(code_of(p.query("validate", "protocol", R"({"id":"T404","protocol":"research"})")) == "E_NOT_FOUND");
  CHECK(code_of(p.query("validate", "protocol", R"({"entryId":"T001-none"})")) == "E_NOT_FOUND");
  Envelope bad_enum = p.query("validate", "protocol", R"({"id":"T001","protocol":"reserch"})");
  CHECK(code_of(bad_enum) == "E_VALIDATION");
  CHECK(bad_enum.error->details["didYouMean"].as_string() == "research");
  Envelope nothing = p.query("validate", "protocol", R"({})");
  CHECK(code_of(nothing) == "E_INVALID_PARAMS");
  CHECK(nothing.error->details["field"].as_string() == "id");
  // A task alone implies no protocol; nor does an agentType no protocol owns.
  Envelope no_protocol = p.query("validate", "protocol", R"({"id":"T001"})");
  CHECK(code_of(no_protocol) == "E_INVALID_PARAMS");
  CHECK(no_protocol.error->details["field"].as_string() == "protocol");
  CHECK(no_protocol.error->details["valid"].size() == 9);
  write(p, "docs/poem.md", "# Ode\n");
  REQUIRE(p.mutate("research", "add", R"({"id":"T001-ode","file":"docs/poem.md","title":"An ode","status":"complete",)"
                                      R"("agentType":"poet"})").success);
  CHECK(code_of(p.query("validate", "protocol", R"({"entryId":"T001-ode"})")) == "E_INVALID_PARAMS");
  // Without a subject, a protocol alone lists its rules.
  Envelope rules = p.query("validate", "protocol", R"({"protocol":"testing"})");
  REQUIRE(rules.success);
  CHECK(rules.data["code"].as_string() == "E_TESTS_SKIPPED");
  CHECK(rules.data["rules"].size() == 8);
  CHECK(rules.data["rules"].as_array()[7]["code"].as_string() == "E_COVERAGE_INSUFFICIENT");
}

TEST_CASE("validate.protocol decomposition reads the epic's subtree", "[validate][protocol]") {
  test::Project p;
  p.add(R"({"title":"Auth epic","type":"epic"})");
  CHECK(code_of(p.query("validate", "protocol", R"({"id":"T001","protocol":"decomposition"})")) ==
        "E_PROTOCOL_DECOMPOSITION");
  p.add(R"({"title":"Login form","parent":"T001","acceptance":["a user logs in"]})");
  p.add(R"({"title":"Session store","parent":"T001","size":"small"})");
  p.add(R"({"title":"Cookie flags","parent":"T003","acceptance":["secure"]})");
  Envelope good = p.query("validate", "protocol", R"({"id":"T001","protocol":"decomposition"})");
  INFO(to_json(good, McpAdvice(registry())));
  REQUIRE(good.success);
  CHECK(rule_ids(good.data["rules"]) == std::vector<std::string>{"DCMP-007:skipped"});
  // Research linked to the epic is another protocol's output: not this one's to judge.
  write(p, "docs/auth.md", kResearch);
  REQUIRE(p.mutate("research", "add", R"({"id":"T001-auth","file":"docs/auth.md","title":"Auth options",)"
                                      R"("status":"complete","keyFindings":["a","b","c"],"linkedTasks":["T001"]})").success);
  Envelope with_research = p.query("validate", "protocol", R"({"id":"T001","protocol":"decomposition"})");
  REQUIRE(with_research.success);
  CHECK_FALSE(with_research.data["subject"]["entryId"].is_string());
  REQUIRE(p.mutate("tasks", "update", R"json({"id":"T004","title":"Cookie flags (2h)"})json").success);
  Envelope estimate = p.query("validate", "protocol", R"({"id":"T001","protocol":"decomposition"})");
  CHECK(code_of(estimate) == "E_PROTOCOL_DECOMPOSITION");
  CHECK(estimate.error->exit_code() == 63);
  CHECK(estimate.error->message.find("DCMP-005 T004's title holds a time estimate: '2h'") != std::string::npos);
}

TEST_CASE("validate.protocol implementation reads the task's files and its test runs", "[validate][protocol]") {
  test::Project p;
  p.add(R"({"title":"Parse config","files":["src/config.cpp","src/config.h"]})");
  write(p, "src/config.cpp", "// @task T001\nint parse();\n");
  write(p, "src/config.h", "int parse();\n");
  Envelope e = p.query("validate", "protocol", R"({"id":"T001","protocol":"implementation"})");
  INFO(to_json(e, McpAdvice(registry())));
  CHECK(code_of(e) == "E_PROTOCOL_IMPLEMENTATION");
  CHECK(e.error->exit_code() == 64);
  CHECK(e.error->message.find("src/config.h has no @task T001 tag") != std::string::npos);
  write(p, "src/config.h", "// @task T001\nint parse();\n");
  Envelope tagged = p.query("validate", "protocol", R"({"id":"T001","protocol":"implementation"})");
  REQUIRE(tagged.success);
  // No test run yet: the SHOULD rule warns.
  REQUIRE(tagged.warnings.size() == 1);
  CHECK(test::warnings_of(tagged)[0].starts_with("IMPL-004 (SHOULD): no validate.test.run is recorded for T001"));
  configure(p, "validate.testCommand", kRunner + " ctest 0");
  Envelope run = p.mutate("validate", "test.run", R"({"id":"T001"})");
  REQUIRE(run.success);
  CHECK_FALSE(run.data.contains("id"));  // as sent
  Envelope tested = p.query("validate", "protocol", R"({"id":"T001","protocol":"implementation"})");
  REQUIRE(tested.success);
  CHECK(tested.warnings.empty());
  CHECK(tested.data["score"].as_int() == 100);
  // A task without files has nothing to check: every MUST skipped is no pass.
  p.add(R"({"title":"Refactor nothing in particular"})");
  Envelope empty = p.query("validate", "protocol", R"({"id":"T002","protocol":"implementation"})");
  CHECK(code_of(empty) == "E_PROTOCOL_IMPLEMENTATION");
  CHECK(empty.error->message.starts_with("none of the implementation protocol's MUST rules could be checked for T002"));
  CHECK(mcp_text(empty.error->fix, registry()).find("files:") != std::string::npos);
  // test.run for a task that does not exist stops before anything runs.
  CHECK(code_of(p.mutate("validate", "test.run", R"({"id":"T404"})")) == "E_NOT_FOUND");
}

TEST_CASE("validate.protocol testing: tests not run (69), coverage below the threshold (70)", "[validate][protocol]") {
  test::Project p;
  p.add(R"({"title":"Test the auth module"})");
  write(p, "docs/tests.md", "# Auth tests\n\n10 passed, 0 failed\n");
  REQUIRE(p.mutate("research", "add", R"({"id":"T001-tests","file":"docs/tests.md","title":"Auth tests",)"
                                      R"("status":"complete","agentType":"testing","keyFindings":["10 passed"],)"
                                      R"("linkedTasks":["T001"]})").success);
  Envelope skipped = p.query("validate", "protocol", R"({"id":"T001","protocol":"testing"})");
  CHECK(code_of(skipped) == "E_TESTS_SKIPPED");
  CHECK(skipped.error->exit_code() == 69);
  CHECK(skipped.error->message.find("TEST-001") != std::string::npos);

  configure(p, "validate.testCommand", kRunner + " pytest-cov 0");
  configure(p, "validate.coverageThreshold", "80");
  Envelope run = p.mutate("validate", "test.run");
  REQUIRE(run.success);
  CHECK(run.data["summary"]["coverage"].as_double() == Approx(65.0));
  Envelope low = p.query("validate", "protocol", R"({"entryId":"T001-tests"})");
  INFO(to_json(low, McpAdvice(registry())));
  CHECK(code_of(low) == "E_COVERAGE_INSUFFICIENT");
  CHECK(low.error->exit_code() == 70);
  CHECK(low.error->message.find("coverage 65% is below validate.coverageThreshold 80%") != std::string::npos);
  configure(p, "validate.coverageThreshold", "60");
  CHECK(p.query("validate", "protocol", R"({"entryId":"T001-tests"})").success);
  // A failing run is E_TESTS_SKIPPED again (TEST-004 comes first).
  configure(p, "validate.testCommand", kRunner + " pytest 1");
  REQUIRE(p.mutate("validate", "test.run").success);
  Envelope failing = p.query("validate", "protocol", R"({"entryId":"T001-tests"})");
  CHECK(code_of(failing) == "E_TESTS_SKIPPED");
  CHECK(failing.error->message.find("TEST-004 the latest test run") != std::string::npos);
}

TEST_CASE("validate.protocol release reads the release, CHANGELOG.md and the version files", "[validate][protocol]") {
  test::Project p;
  p.add(R"({"title":"Ship login"})");
  Envelope none = p.query("validate", "protocol", R"({"id":"T001","protocol":"release"})");
  CHECK(code_of(none) == "E_PROTOCOL_RELEASE");
  CHECK(none.error->exit_code() == 66);
  CHECK(none.error->message.find("RLSE-001 T001 is in no release") != std::string::npos);
  REQUIRE(p.mutate("release", "create", R"({"version":"1.0.0","notes":"rollback: release.rollback"})").success);
  REQUIRE(p.mutate("release", "plan", R"({"version":"1.0.0","add":["T001"]})").success);
  Envelope no_changelog = p.query("validate", "protocol", R"({"id":"T001","protocol":"release"})");
  CHECK(no_changelog.error->message.find("RLSE-002 CHANGELOG.md does not exist") != std::string::npos);
  write(p, "CHANGELOG.md", "# Changelog\n\n## [1.0.0] - 2026-01-01\n\n- Ship login\n");
  Envelope good = p.query("validate", "protocol", R"({"id":"T001","protocol":"release"})");
  INFO(to_json(good, McpAdvice(registry())));
  REQUIRE(good.success);
  CHECK(good.data["score"].as_int() == 95);  // RLSE-003: no test run
}

TEST_CASE("validate.protocol contribution and validation read the checks recorded for the task",
          "[validate][protocol]") {
  test::Project p;
  p.add(R"({"title":"Login form","files":["src/login.ts"],"acceptance":["Users can log in"]})");
  p.add(R"({"title":"Signup form","files":["src/login.ts"]})");
  write(p, "src/login.ts", "// @task T001\n");
  REQUIRE(p.mutate("tasks", "start", R"({"id":"T002"})").success);
  Envelope e = p.query("validate", "protocol", R"({"id":"T001","protocol":"contribution"})");
  INFO(to_json(e, McpAdvice(registry())));
  REQUIRE(e.success);
  REQUIRE(e.warnings.size() == 1);
  CHECK(test::warnings_of(e)[0] == "CONT-005 (SHOULD): active T002 (src/login.ts) also work on its files; no note of T001 "
                         "names them");
  // The verification gates the project requires are gates before merging.
  configure(p, "verification.required", "implemented");
  Envelope gated = p.query("validate", "protocol", R"({"id":"T001","protocol":"contribution"})");
  CHECK(code_of(gated) == "E_PROTOCOL_CONTRIBUTION");
  CHECK(gated.error->message.find("CONT-003 T001 has not passed the verification gate implemented") !=
        std::string::npos);
  REQUIRE(p.mutate("lifecycle", "gate.pass", R"({"id":"T001","gate":"implemented"})").success);
  CHECK(p.query("validate", "protocol", R"({"id":"T001","protocol":"contribution"})").success);
  REQUIRE(p.mutate("validate", "compliance.record", R"({"check":"lint","passed":false,"id":"T001"})").success);
  Envelope failing = p.query("validate", "protocol", R"({"id":"T001","protocol":"contribution"})");
  CHECK(code_of(failing) == "E_PROTOCOL_CONTRIBUTION");
  CHECK(failing.error->exit_code() == 65);
  CHECK(failing.error->message.find("CONT-003 the latest result of lint failed") != std::string::npos);

  write(p, "docs/validation.md", "# Validation\n\n- Users can log in: pass (minor: slow)\n");
  REQUIRE(p.mutate("research", "add", R"({"id":"T001-validation","file":"docs/validation.md","title":"Validation",)"
                                      R"("status":"complete","agentType":"validation","keyFindings":["login works"],)"
                                      R"("linkedTasks":["T001"]})").success);
  Envelope validation = p.query("validate", "protocol", R"({"entryId":"T001-validation"})");
  CHECK(code_of(validation) == "E_PROTOCOL_VALIDATION");
  CHECK(validation.error->exit_code() == 68);
  CHECK(validation.error->message.find("VALID-002 no validate.test.run") != std::string::npos);
}

TEST_CASE("compliance.record {protocol}: checked by the server, recorded even when it fails", "[validate][protocol]") {
  test::Project p;
  REQUIRE(p.mutate("session", "start", R"({"scope":"global","agent":"claude"})").success);
  research_output(p);
  write(p, "docs/auth.md", "changed\n");
  Envelope failed = p.mutate("validate", "compliance.record", R"({"protocol":"research","id":"T001"})");
  INFO(to_json(failed, McpAdvice(registry())));
  REQUIRE(failed.success);  // a result, not an error: the record stays
  CHECK_FALSE(failed.data["passed"].as_bool());
  CHECK(failed.data["check"].as_string() == "protocol.research");
  CHECK_FALSE(failed.data.contains("id"));  // as sent
  CHECK(failed.data["score"].as_int() == 75);
  CHECK(failed.data["report"]["valid"] == json::Value(false));
  CHECK(test::warnings_of(failed).front().starts_with("T001 breaks the research protocol: RSCH-005"));

  write(p, "docs/auth.md", kResearch);
  Envelope passed = p.mutate("validate", "compliance.record", R"({"entryId":"T001-auth"})");
  REQUIRE(passed.success);
  CHECK(passed.data["passed"].as_bool());
  CHECK(passed.data["check"].as_string() == "protocol.research");

  Envelope summary = p.query("validate", "compliance", R"({"check":"protocol.research"})");
  CHECK(summary.data["runs"].as_int() == 2);
  CHECK(summary.data["checks"].as_array()[0]["averageScore"].as_double() == Approx(87.5));
  auto failure = summary.data["recentFailures"].as_array()[0];
  CHECK(failure["agent"].as_string() == "claude");
  CHECK(failure["details"]["entryId"].as_string() == "T001-auth");
  CHECK(failure["details"]["failed"].as_array()[0]["id"].as_string() == "RSCH-002");

  // A protocol check is graded by the server: no self-reported result with it.
  CHECK(code_of(p.mutate("validate", "compliance.record", R"({"protocol":"research","id":"T001","passed":true})")) ==
        "E_INVALID_PARAMS");
  CHECK(code_of(p.mutate("validate", "compliance.record", R"({"protocol":"research","id":"T001","score":90})")) ==
        "E_INVALID_PARAMS");
  CHECK(code_of(p.mutate("validate", "compliance.record",
                         R"({"check":"protocol.testing","protocol":"research","id":"T001"})")) == "E_INVALID_PARAMS");
  CHECK(p.mutate("validate", "compliance.record", R"({"check":"protocol.research","protocol":"research","id":"T001"})")
            .success);
  CHECK(code_of(p.mutate("validate", "compliance.record", R"({"check":"x","passed":true,"strict":true})")) ==
        "E_INVALID_PARAMS");
  CHECK(code_of(p.mutate("validate", "compliance.record", R"({"passed":true})")) == "E_INVALID_PARAMS");
  CHECK(code_of(p.mutate("validate", "compliance.record", R"({"protocol":"research","id":"T404"})")) == "E_NOT_FOUND");
  // The record is audited against its task.
  auto history = p.query("tasks", "history", R"({"id":"T001"})").data.as_array();
  CHECK(history[0]["operation"].as_string() == "validate.compliance.record");
}

TEST_CASE("validate.compliance per check, per agent, or both", "[validate][compliance]") {
  test::Project p;
  p.add(R"({"title":"Something"})");
  REQUIRE(p.mutate("session", "start", R"({"scope":"global","agent":"claude","name":"a"})").success);
  REQUIRE(p.mutate("validate", "compliance.record", R"({"check":"protocol.research","passed":true,"score":100})").success);
  REQUIRE(p.mutate("validate", "compliance.record", R"({"check":"protocol.testing","passed":false,"score":60})").success);
  REQUIRE(p.mutate("session", "end").success);
  REQUIRE(p.mutate("session", "start", R"({"scope":"global","agent":"codex","name":"b"})").success);
  REQUIRE(p.mutate("validate", "compliance.record", R"({"check":"protocol.research","passed":false,"score":40})").success);

  Envelope checks = p.query("validate", "compliance");
  REQUIRE(checks.data["checks"].size() == 2);
  CHECK(checks.data["checks"].as_array()[0]["agent"].is_null());

  Envelope agents = p.query("validate", "compliance", R"({"by":"agent"})");
  INFO(to_json(agents, McpAdvice(registry())));
  REQUIRE(agents.data["agents"].size() == 2);
  CHECK(agents.data["checks"].is_null());
  CHECK(agents.data["agents"].as_array()[0]["agent"].as_string() == "claude");
  CHECK(agents.data["agents"].as_array()[0]["runs"].as_int() == 2);
  CHECK(agents.data["agents"].as_array()[0]["passRate"].as_double() == Approx(0.5));
  CHECK(agents.data["agents"].as_array()[1]["agent"].as_string() == "codex");
  CHECK(agents.data["agents"].as_array()[1]["check"].is_null());

  Envelope both = p.query("validate", "compliance", R"({"by":"both","check":"protocol.research"})");
  REQUIRE(both.data["checks"].size() == 2);
  CHECK(both.data["checks"].as_array()[0]["agent"].as_string() == "claude");
  CHECK(both.data["checks"].as_array()[0]["lastPassed"].as_bool());
  CHECK(both.data["checks"].as_array()[1]["agent"].as_string() == "codex");
  CHECK(both.data["checks"].as_array()[1]["averageScore"].as_double() == Approx(40.0));

  Envelope one = p.query("validate", "compliance", R"({"agent":"codex"})");
  CHECK(one.data["runs"].as_int() == 1);
  CHECK(one.data["recentFailures"].as_array()[0]["agent"].as_string() == "codex");
  CHECK(code_of(p.query("validate", "compliance", R"({"by":"session"})")) == "E_VALIDATION");
}

TEST_CASE("validate.manifest: entry rules, linked tasks and file checksums", "[validate][manifest]") {
  test::Project p;
  Envelope empty = p.query("validate", "manifest");
  REQUIRE(empty.success);
  CHECK(empty.note == ErrorCode::NoData);
  CHECK(empty.data["valid"].as_bool());

  research_output(p);
  p.add(R"({"title":"Second task"})");
  Envelope good = p.query("validate", "manifest");
  REQUIRE(good.success);
  CHECK(good.data["entries"].as_int() == 1);
  CHECK(good.data["total"].as_int() == 0);

  // A changed file, a missing one, one recorded before it existed, a link to a task that is gone
  // (the store drops links with the task; an older store or a hand edit may keep one).
  write(p, "docs/auth.md", "changed\n");
  REQUIRE(p.mutate("research", "add", R"({"id":"T002-gone","file":"docs/gone.md","title":"Gone","status":"complete",)"
                                      R"("keyFindings":["a","b","c"],"linkedTasks":["T002"]})").success);
  REQUIRE(p.mutate("research", "add", R"({"id":"T002-late","file":"docs/late.md","title":"Late","status":"partial",)"
                                      R"("keyFindings":["a","b","c"]})").success);
  write(p, "docs/late.md", "# Late\n");
  test::run_sql(p.dir() / ".cleo" / "tasks.db",
                "INSERT INTO research_links(research_id, task_id, position) VALUES('T002-gone', 'T009', 2)");

  Envelope bad = p.query("validate", "manifest");
  INFO(to_json(bad, McpAdvice(registry())));
  CHECK(code_of(bad) == "E_VALIDATION");
  auto report = as_report(bad);
  CHECK(report.data["entries"].as_int() == 3);
  CHECK(report.data["errors"].as_int() == 3);
  CHECK(report.data["total"].as_int() == 4);
  CHECK(report.data["byCheck"]["checksumMismatch"].as_int() == 1);
  CHECK(report.data["byCheck"]["fileMissing"].as_int() == 1);
  CHECK(report.data["byCheck"]["linkedTask"].as_int() == 1);
  CHECK(report.data["byCheck"]["checksumUnknown"].as_int() == 1);
  auto problems = report.data["problems"].as_array();
  CHECK(problems.back()["severity"].as_string() == "warning");  // errors first
  CHECK(problems.back()["check"].as_string() == "checksumUnknown");

  Envelope limited = as_report(p.query("validate", "manifest", R"({"limit":1})"));
  CHECK(limited.data["problems"].size() == 1);
  CHECK(limited.warnings.size() == 1);
  CHECK(as_report(p.query("validate", "manifest", R"({"entryId":"T002-late"})")).data["valid"].as_bool());
  CHECK(code_of(p.query("validate", "manifest", R"({"entryId":"T009-none"})")) == "E_NOT_FOUND");
  CHECK(code_of(p.query("validate", "manifest", R"({"entryId":"nonsense"})")) == "E_VALIDATION");
}

TEST_CASE("a test run that closes its output and outlives its limit is recorded as failed", "[validate][protocol]") {
  // Issue 30 item 2: `exec >/dev/null 2>&1; sleep 20` under a 1 s limit ran to its end and was
  // recorded as passed.
  test::Project p;
  p.add(R"({"title":"Test the auth module"})");
  configure(p, "validate.testCommand", (fs::path(CT_FIXTURES_DIR) / "programs" / "closed_pipes_hang.sh").string());
  auto started = std::chrono::steady_clock::now();
  Envelope run = p.mutate("validate", "test.run", R"({"id":"T001","timeoutSeconds":1})");
  const auto took = std::chrono::steady_clock::now() - started;
  INFO(to_json(run, McpAdvice(registry())));
  REQUIRE(run.success);
  CHECK_FALSE(run.data["passed"].as_bool());
  CHECK(run.data["timedOut"].as_bool());
  CHECK(took < std::chrono::seconds(5));
  REQUIRE_FALSE(run.warnings.empty());
  CHECK(test::warnings_of(run)[0].find("did not finish within 1 s") != std::string::npos);
  // The compliance row says so too.
  Envelope recorded = p.query("validate", "compliance", R"({"id":"T001"})");
  INFO(to_json(recorded, McpAdvice(registry())));
  REQUIRE(recorded.success);
  CHECK(recorded.data["runs"].as_int() == 1);
  CHECK(recorded.data["failed"].as_int() == 1);
}
