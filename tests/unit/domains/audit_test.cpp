// Safe retries (idempotency keys) and the tamper-evident audit trail.
#include <catch2/catch.hpp>
#include <sqlite3.h>

#include "unit/test_support.h"

using namespace ct;
using ct::test::code_of;

namespace {

/// Runs one SQL statement on the project's database behind the store's back (a tamperer).
void tamper(const std::filesystem::path& dir, const char* sql) {
  INFO(sql);
  REQUIRE_NOTHROW(test::run_sql(dir / ".cleo" / "tasks.db", sql));
}

}  // namespace

TEST_CASE("a repeated idempotencyKey returns the first result without running again", "[idempotency]") {
  test::Project p;
  auto first = p.mutate("tasks", "add", R"({"title":"Only once","idempotencyKey":"agent-7:add-1"})");
  REQUIRE(first.success);
  auto again = p.mutate("tasks", "add", R"({"title":"Only once","idempotencyKey":"agent-7:add-1"})");
  REQUIRE(again.success);
  CHECK(again.data == first.data);
  REQUIRE(again.warnings.size() == 1);
  CHECK(test::warnings_of(again)[0].find("replayed") == 0);
  CHECK(p.query("tasks", "list").data.size() == 1);
  // The same key for a different call is refused, and nothing runs.
  auto other = p.mutate("tasks", "add", R"({"title":"Something else","idempotencyKey":"agent-7:add-1"})");
  CHECK(code_of(other) == "E_INVALID_PARAMS");
  CHECK(other.error->details["field"].as_string() == "idempotencyKey");
  CHECK(p.query("tasks", "list").data.size() == 1);
  // Another key is another call.
  CHECK(p.mutate("tasks", "add", R"({"title":"Only once","idempotencyKey":"agent-7:add-2"})").data["id"].as_string() ==
        "T002");
}

TEST_CASE("a failed keyed call is not remembered; notes replay with their code", "[idempotency]") {
  test::Project p;
  CHECK(code_of(p.mutate("tasks", "complete", R"({"id":"T001","idempotencyKey":"k1"})")) == "E_NOT_FOUND");
  p.add(R"({"title":"Now it exists"})");
  CHECK(p.mutate("tasks", "complete", R"({"id":"T001","idempotencyKey":"k1"})").exit_code() == 0);
  auto replay = p.mutate("tasks", "complete", R"({"id":"T001","idempotencyKey":"k1"})");
  CHECK(replay.exit_code() == 0);  // the first outcome, not E_NO_CHANGE from running again
  auto noted = p.mutate("tasks", "complete", R"({"id":"T001","idempotencyKey":"k2"})");
  CHECK(code_of(noted) == "E_NO_CHANGE");
  CHECK(code_of(p.mutate("tasks", "complete", R"({"id":"T001","idempotencyKey":"k2"})")) == "E_NO_CHANGE");
}

TEST_CASE("idempotencyKey and reason are validated", "[idempotency]") {
  test::Project p;
  CHECK(code_of(p.mutate("tasks", "add", R"({"title":"Task","idempotencyKey":""})")) == "E_VALIDATION");
  CHECK(code_of(p.mutate("tasks", "add", R"({"title":"Task","idempotencyKey":5})")) == "E_INVALID_PARAMS");
  json::Value long_key = json::Value::object();
  long_key.set("title", "Task");
  long_key.set("idempotencyKey", std::string(129, 'k'));
  CHECK(code_of(p.router().dispatch({Gateway::Mutate, "tasks", "add", long_key})) == "E_VALIDATION");
  json::Value long_reason = json::Value::object();
  long_reason.set("title", "Task");
  long_reason.set("reason", std::string(501, 'r'));
  CHECK(code_of(p.router().dispatch({Gateway::Mutate, "tasks", "add", long_reason})) == "E_VALIDATION");
  json::Value bad_utf8 = json::Value::object();
  bad_utf8.set("title", "Task");
  bad_utf8.set("reason", std::string("\xff\xfe"));
  CHECK(code_of(p.router().dispatch({Gateway::Mutate, "tasks", "add", bad_utf8})) == "E_VALIDATION");
  // 500 characters of a multi-byte script are fine.
  std::string wide;
  for (int i = 0; i < 500; ++i) wide += "é";
  json::Value ok = json::Value::object();
  ok.set("title", "Task");
  ok.set("reason", wide);
  CHECK(p.router().dispatch({Gateway::Mutate, "tasks", "add", ok}).success);
  // Queries take no idempotency key.
  CHECK(code_of(p.query("tasks", "list", R"({"idempotencyKey":"x"})")) == "E_INVALID_PARAMS");
}

TEST_CASE("the audit chain verifies, and shows edits, deletions and forged hashes", "[audit]") {
  test::Project p;
  p.add(R"({"title":"Task A"})");
  p.add(R"({"title":"Task B","depends":["T001"]})");
  p.mutate("tasks", "update", R"({"id":"T001","priority":"high","reason":"customer"})");
  p.mutate("tasks", "complete", R"({"id":"T001"})");
  auto valid = test::as_report(p.query("validate", "audit"));
  REQUIRE(valid.success);
  CHECK(valid.data["valid"].as_bool());
  CHECK(valid.data["rows"].as_int() == 4);  // one row per mutation (init runs before the store exists)
  SECTION("an edited row") {
    tamper(p.dir(), "UPDATE audit SET reason = 'nobody asked' WHERE seq = 3");
    auto broken = test::as_report(p.query("validate", "audit"));
    CHECK_FALSE(broken.data["valid"].as_bool());
    CHECK(broken.data["firstBroken"]["seq"].as_int() == 3);
    CHECK_FALSE(broken.warnings.empty());
  }
  SECTION("an edited change") {
    tamper(p.dir(), "UPDATE audit_changes SET after = '\"low\"' WHERE field = 'priority'");
    CHECK(test::as_report(p.query("validate", "audit")).data["firstBroken"]["seq"].as_int() == 3);
  }
  SECTION("a deleted row") {
    tamper(p.dir(), "DELETE FROM audit_changes WHERE seq = 2; DELETE FROM audit WHERE seq = 2");
    CHECK(test::as_report(p.query("validate", "audit")).data["firstBroken"]["seq"].as_int() == 3);
  }
  SECTION("a forged hash breaks the next row") {
    tamper(p.dir(), "UPDATE audit SET reason = 'x', hash = 'f00d' WHERE seq = 2");
    CHECK(test::as_report(p.query("validate", "audit")).data["firstBroken"]["seq"].as_int() == 2);
  }
}

TEST_CASE("system.log reads the trail with filters", "[audit]") {
  test::Project p;
  p.add(R"({"title":"Task A"})");
  p.add(R"({"title":"Task B"})");
  p.mutate("tasks", "update", R"({"id":"T002","notes":"hello","reason":"why not"})");
  p.mutate("tasks", "complete", R"({"id":"T404"})");  // a failure leaves a row too
  auto all = p.query("system", "log").data.as_array();
  REQUIRE(all.size() == 4);
  CHECK(all[0]["operation"].as_string() == "tasks.complete");
  CHECK(all[0]["outcome"].as_string() == "E_NOT_FOUND");
  CHECK(all[1]["reason"].as_string() == "why not");
  CHECK(all[1]["changed"].as_array()[0].as_string() == "T002.notes");
  CHECK(all[2]["operation"].as_string() == "tasks.add");
  CHECK(all[2]["id"].as_string() == "T002");  // the task it created
  CHECK(p.query("system", "log", R"({"operation":"tasks.add"})").data.size() == 2);
  CHECK(p.query("system", "log", R"({"id":"T002"})").data.size() == 2);
  CHECK(p.query("system", "log", R"({"limit":1,"offset":1})").data.as_array()[0]["seq"].as_int() == 3);
  CHECK(p.query("system", "log", R"({"since":"2030-01-01"})").data.size() == 0);
  CHECK(code_of(p.query("system", "log", R"({"since":"last tuesday"})")) == "E_VALIDATION");
}

TEST_CASE("system.log names the first 20 changes of a large command, and counts the rest", "[audit]") {
  test::Project p;
  std::string records = "[";
  for (int i = 0; i < 25; ++i) records += std::string(i ? "," : "") + "{\"title\":\"Imported " + std::to_string(i) + "\"}";
  REQUIRE(p.mutate("tasks", "import", "{\"tasks\":" + records + "]}").success);
  auto row = p.query("system", "log", R"({"limit":1})").data.as_array().at(0);
  auto changed = row["changed"].as_array();
  REQUIRE(changed.size() == 21);
  CHECK(changed[0].as_string() == "T001.created");
  CHECK(changed[19].as_string() == "T020.created");
  CHECK(changed[20].as_string() == "+5 more");
  auto full = p.query("system", "log", R"({"limit":1,"detail":"full"})").data.as_array().at(0);
  CHECK(full["changes"].as_array().size() == 25);
}

TEST_CASE("writes in a session record the session's agent", "[audit][session]") {
  test::Project p;
  REQUIRE(p.mutate("session", "start", R"({"scope":"global","agent":"claude-1"})").success);
  p.add(R"({"title":"Agent work"})");
  auto log = p.query("system", "log", R"({"operation":"tasks.add"})").data.as_array();
  REQUIRE(log.size() == 1);
  CHECK(log[0]["agent"].as_string() == "claude-1");
  CHECK_FALSE(log[0]["session"].as_string().empty());
}

TEST_CASE("a valid call never makes the chain look tampered with: the values it hashes read back the same", "[audit][hardening]") {
  test::Project p;
  p.add(R"({"title":"Numbers through the chain"})");
  // intent.confidence -0.0 was hashed as "-0", read back as the integer 0: the chain broke at
  // that row for good, and no epoch could be sealed after it.
  REQUIRE(p.mutate("tasks", "update", R"({"id":"T001","priority":"high","intent":{"category":"fix","confidence":-0.0}})").success);
  REQUIRE(p.mutate("tasks", "update",
                   R"({"id":"T001","notes":"odd text \"quoted\" \\ \u2028 \ud83d\ude00","intent":{"category":"fix","confidence":1.0,"tags":["1e300"]}})")
              .success);
  REQUIRE(p.mutate("validate", "compliance.record",
                   R"({"check":"numbers","passed":true,"details":{"big":18446744073709551615,"tiny":5e-324,"zero":-0.0,"one":1.0}})")
              .success);
  auto audit = test::as_report(p.query("validate", "audit"));
  REQUIRE(audit.success);
  CHECK(audit.data["valid"] == json::Value(true));
  CHECK(p.mutate("system", "epoch.seal", R"({"name":"after-numbers"})").success);
}
