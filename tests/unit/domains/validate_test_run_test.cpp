// validate.test.run: the configured test command runs through the subprocess adapter (a fake
// runner, tests/fixtures/programs/test_summary.sh, printing each runner's real summary lines), its
// outcome is recorded in the compliance table, and failing tests are a recorded success with
// passed:false, not an error.
#include <catch2/catch.hpp>

#include "gateway/mcp_syntax.h"
#include "unit/test_support.h"

using namespace ct;
using ct::test::code_of;

namespace {

const std::string kRunner = (std::filesystem::path(CT_FIXTURES_DIR) / "programs" / "test_summary.sh").string();

void configure(test::Project& p, const std::string& command) {
  json::Value params = json::Value::object();
  params.set("key", "validate.testCommand");
  params.set("value", command);
  Envelope set = p.mutate_as_person("system", "config.set", params.dump());  // only people set the command
  INFO(to_json(set, McpAdvice(registry())));
  REQUIRE(set.success);
}

}  // namespace

TEST_CASE("validate.test.run needs validate.testCommand", "[validate][test.run]") {
  test::Project p;
  Envelope e = p.mutate("validate", "test.run");
  REQUIRE_FALSE(e.success);
  CHECK(code_of(e) == "E_CAPABILITY_UNAVAILABLE");
  CHECK(mcp_text(e.error->fix, registry()).find("validate.testCommand") != std::string::npos);
  // Even with a command given: configuring one is the project's consent to running programs.
  CHECK(code_of(p.mutate("validate", "test.run", R"({"command":"true"})")) == "E_CAPABILITY_UNAVAILABLE");
  CHECK(p.query("validate", "compliance").note == ErrorCode::NoData);
}

TEST_CASE("validate.test.run records a passing run with the runner's counts", "[validate][test.run]") {
  test::Project p;
  configure(p, kRunner + " ctest 0");
  Envelope e = p.mutate("validate", "test.run");
  INFO(to_json(e, McpAdvice(registry())));
  REQUIRE(e.success);
  CHECK(e.data["passed"].as_bool());
  CHECK(e.data["exitCode"].as_int() == 0);
  CHECK(e.data["recorded"].as_int() == 1);
  CHECK(e.data["summary"]["format"].as_string() == "ctest");
  CHECK(e.data["summary"]["passed"].as_int() == 116);
  CHECK(e.data["summary"]["total"].as_int() == 116);
  CHECK(e.data["command"].as_array().size() == 3);
  CHECK(e.data["outputTail"].as_string().find("100% tests passed") != std::string::npos);
  CHECK(e.warnings.empty());

  Envelope compliance = p.query("validate", "compliance", R"({"check":"test.run"})");
  REQUIRE(compliance.success);
  CHECK(compliance.data["runs"].as_int() == 1);
  CHECK(compliance.data["passed"].as_int() == 1);
}

TEST_CASE("validate.test.run: failing tests are a recorded success with passed:false", "[validate][test.run]") {
  test::Project p;
  struct Case {
    std::string format;
    std::int64_t passed, failed, skipped;
  };
  for (const Case& c : {Case{"pytest", 10, 3, 1}, Case{"cargo", 14, 1, 1}, Case{"go", 2, 1, 0},
                        Case{"jest", 5, 1, 0}, Case{"vitest", 8, 2, 0}, Case{"node", 5, 1, 0}}) {
    configure(p, kRunner + " " + c.format + " 1");
    Envelope e = p.mutate("validate", "test.run");
    INFO(c.format << ": " << to_json(e, McpAdvice(registry())));
    REQUIRE(e.success);
    CHECK_FALSE(e.data["passed"].as_bool());
    CHECK(e.data["exitCode"].as_int() == 1);
    CHECK(e.data["summary"]["format"].as_string() == c.format);
    CHECK(e.data["summary"]["passed"].as_int() == c.passed);
    CHECK(e.data["summary"]["failed"].as_int() == c.failed);
    CHECK(e.data["summary"]["skipped"].as_int() == c.skipped);
    REQUIRE(e.warnings.size() == 1);
    CHECK(test::warnings_of(e)[0].find("exit status 1") != std::string::npos);
  }
  Envelope compliance = p.query("validate", "compliance", R"({"check":"test.run","failures":1})");
  CHECK(compliance.data["runs"].as_int() == 6);
  CHECK(compliance.data["failed"].as_int() == 6);
  // The recorded details carry the outcome, without the output.
  const json::Value& details = compliance.data["recentFailures"].as_array()[0]["details"];
  CHECK(details["exitCode"].as_int() == 1);
  CHECK(details["summary"]["format"].is_string());
  CHECK_FALSE(details.contains("outputTail"));
  // Audited as a change.
  CHECK(p.query("system", "log", R"({"operation":"validate.test.run"})").data.as_array().size() == 6);
}

TEST_CASE("validate.test.run: output with no summary line, a timeout, a command given", "[validate][test.run]") {
  test::Project p;
  configure(p, kRunner + " none 0");
  Envelope plain = p.mutate("validate", "test.run");
  REQUIRE(plain.success);
  CHECK(plain.data["passed"].as_bool());
  CHECK_FALSE(plain.data.contains("summary"));

  // A run stopped at its limit is recorded as failed.
  configure(p, kRunner + " hang 0");
  Envelope slow = p.mutate("validate", "test.run", R"({"timeoutSeconds":1})");
  INFO(to_json(slow, McpAdvice(registry())));
  REQUIRE(slow.success);
  CHECK_FALSE(slow.data["passed"].as_bool());
  CHECK(slow.data["timedOut"].as_bool());
  REQUIRE(slow.warnings.size() == 1);
  CHECK(test::warnings_of(slow)[0].find("did not finish within 1 s") != std::string::npos);

  // `command` replaces the configured one for one run.
  Envelope once = p.mutate("validate", "test.run", ("{\"command\":\"" + kRunner + " jest 0\"}").c_str());
  REQUIRE(once.success);
  CHECK(once.data["summary"]["format"].as_string() == "jest");
  CHECK(p.query("validate", "compliance", R"({"check":"test.run"})").data["runs"].as_int() == 3);
}

TEST_CASE("validate.test.run: a command that cannot start, or needs a shell", "[validate][test.run]") {
  test::Project p;
  configure(p, "no-such-test-runner-xyz --all");
  Envelope e = p.mutate("validate", "test.run");
  REQUIRE_FALSE(e.success);
  CHECK(code_of(e) == "E_ENGINE_FAILED");
  CHECK(e.error->message.find("no-such-test-runner-xyz") != std::string::npos);
  CHECK(mcp_text(e.error->fix, registry()).find("validate.testCommand") != std::string::npos);
  // Nothing was recorded (the failure itself is audited as a failed call).
  CHECK(p.query("validate", "compliance").note == ErrorCode::NoData);

  CHECK(code_of(p.mutate("validate", "test.run", R"({"command":"make && ctest"})")) == "E_VALIDATION");
  // The config key refuses what only a shell could run.
  Envelope bad = p.mutate_as_person("system", "config.set", R"({"key":"validate.testCommand","value":"make test | tee log"})");
  CHECK(code_of(bad) == "E_INVALID_INPUT");
  CHECK(bad.error->message.find("shell") != std::string::npos);
}
