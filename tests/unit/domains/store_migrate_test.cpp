// system.store.migrate: a store copied into another backend, proved table by table and by its audit
// chain, and refused where it would overwrite or leak. On SQLite the copy goes to another SQLite
// file; with CT_TEST_PG_URL the project moves from PostgreSQL to .cleo/tasks.db and back into a
// new schema, keeping every task and its audit trail.
#include <catch2/catch.hpp>

#include <filesystem>

#include "gateway/mcp_syntax.h"
#include "unit/test_support.h"

namespace ct {
namespace {

using test::code_of;
namespace fs = std::filesystem;

void seed(test::Project& p) {
  p.add(R"({"title":"Auth epic","type":"epic","labels":["auth"]})");
  p.add(R"({"title":"Login form","parent":"T001","description":"email and password"})");
  p.add(R"({"title":"Write docs","depends":["T002"]})");
  REQUIRE(p.mutate("session", "start", R"({"scope":"global","name":"copy"})").success);
  REQUIRE(p.mutate("tasks", "start", R"({"id":"T002"})").success);
  REQUIRE(p.mutate("tasks", "update", R"({"id":"T002","notes":"halfway"})").success);
}

std::int64_t task_count(test::Project& p) { return p.query("system", "dash").data["counts"]["total"].as_int(); }

}  // namespace

TEST_CASE("store.migrate copies the store and proves the copy", "[system][store]") {
  test::Project p;
  seed(p);
  const std::int64_t tasks = task_count(p);
  REQUIRE(tasks == 3);

  SECTION("into a SQLite file: every table compared, the audit chain verified") {
    auto copied = p.mutate("system", "store.migrate", R"({"to":"copies/tasks.db"})");
    INFO(to_json(copied, McpAdvice(registry())));
    REQUIRE(copied.success);
    CHECK(copied.data["verified"].as_bool());
    CHECK(copied.data["to"]["backend"].as_string() == "sqlite");
    CHECK(copied.data["audit"]["chainValid"].as_bool());
    CHECK(copied.data["audit"]["rows"].as_int() > 3);
    bool saw_tasks = false;
    for (const auto& table : copied.data["tables"].as_array()) {
      CHECK(table["sha256"].as_string().size() == 64);
      if (table["table"].as_string() == "tasks") saw_tasks = table["rows"].as_int() == 3;
    }
    CHECK(saw_tasks);
    // The copy is a store of its own, and the project still uses its own.
    auto copy = open_backup_file(p.dir() / "copies" / "tasks.db");
    REQUIRE(copy);
    REQUIRE((*copy)->begin(TxKind::Read));
    auto found = (*copy)->search("login", TaskFilter{}, -1);
    REQUIRE(found);
    CHECK(found->size() == 1);
    (*copy)->rollback();
    CHECK(p.add(R"({"title":"After the copy"})") == "T004");

    // Never over a store.
    auto again = p.mutate("system", "store.migrate", R"({"to":"copies/tasks.db"})");
    CHECK(code_of(again) == "E_ALREADY_EXISTS");
  }
  SECTION("refusals: a password in the URL, the project's own store") {
    auto secret = p.mutate("system", "store.migrate", R"({"to":"postgresql://ann:hunter2@db.example/team"})");
    CHECK(code_of(secret) == "E_INVALID_INPUT");
    CHECK(to_json(secret, McpAdvice(registry())).find("hunter2") == std::string::npos);
    if (!test::on_postgresql()) CHECK(code_of(p.mutate("system", "store.migrate", R"({"to":"sqlite"})")) == "E_INVALID_INPUT");
    auto dry = p.mutate("system", "store.migrate", R"({"to":"copies/dry.db","dryRun":true})");
    REQUIRE(dry.success);
    CHECK(!fs::exists(p.dir() / "copies" / "dry.db"));
  }
  SECTION("PostgreSQL to .cleo/tasks.db and back into a new schema") {
    if (!test::on_postgresql()) {
      // Without a server the URL cannot be reached: a clear, retryable error, and nothing changes.
      auto unreachable = p.mutate_as_person("system", "store.migrate",
                                  R"({"to":"postgresql:///none?host=/nonexistent-socket-dir&connect_timeout=1"})");
      CHECK(code_of(unreachable) == "E_STORE_UNAVAILABLE");
      CHECK(unreachable.error->retryable());
      CHECK(task_count(p) == 3);
      return;
    }
    auto down = p.mutate_as_person("system", "store.migrate", R"({"to":"sqlite","use":true})");
    INFO(to_json(down, McpAdvice(registry())));
    REQUIRE(down.success);
    CHECK(down.data["from"]["backend"].as_string() == "postgresql");
    REQUIRE(fs::exists(p.dir() / ".cleo" / "tasks.db"));
    // The project now runs on the SQLite file: the tasks, the claim and the trail came along.
    CHECK(task_count(p) == 3);
    CHECK(p.query("tasks", "show", R"({"id":"T002"})").data["status"].as_string() == "active");
    CHECK(test::as_report(p.query("validate", "audit")).data["valid"].as_bool());
    CHECK(p.add(R"({"title":"Written on SQLite"})") == "T004");

    const std::string schema = test::pg_schema(p.dir() / "second");
    auto up = p.mutate_as_person("system", "store.migrate",
                       R"({"to":")" + test::pg_url() + R"(","schema":")" + schema + R"(","use":true})");
    INFO(to_json(up, McpAdvice(registry())));
    REQUIRE(up.success);
    CHECK(up.data["to"]["backend"].as_string() == "postgresql");
    CHECK(task_count(p) == 4);
    CHECK(p.add(R"({"title":"Written on PostgreSQL again"})") == "T005");
    CHECK(test::as_report(p.query("validate", "audit")).data["valid"].as_bool());
    CHECK(test::as_report(p.query("validate", "schema")).data["valid"].as_bool());
  }
}

}  // namespace ct
