// system domain operations: dash, stats, metrics, restore, migrate, gc.
#include <catch2/catch.hpp>

#include <sqlite3.h>

#include <fstream>
#include <sstream>
#include <thread>

#include "gateway/mcp_syntax.h"
#include "domains/metrics.h"
#include "engines/store/audit_chain.h"
#include "engines/store/sqlite/sqlite_store.h"
#include "unit/test_support.h"
#include "gateway/product.h"

using namespace ct;
using ct::test::code_of;

namespace {

namespace fs = std::filesystem;

/// Another router on the same project whose clock starts at `iso` (a later call, a later day).
std::unique_ptr<Router> router_at(const fs::path& dir, std::string_view iso) {
  RouterOptions options;
  return std::make_unique<Router>(registry(), Workspace::open(dir), options, std::make_unique<FixedClock>(*parse_iso8601(iso)));
}

Envelope call(Router& router, Gateway gateway, std::string domain, std::string operation,
              std::string_view params = "{}") {
  return router.dispatch({gateway, std::move(domain), std::move(operation), test::parse_json(params)});
}

/// Runs SQL directly on the project's store (to tamper): its file, or its PostgreSQL schema.
void raw_sql(const fs::path& db, const std::string& sql) {
  INFO(sql);
  REQUIRE_NOTHROW(test::run_sql(db, sql));
}

/// Runs SQL on a backup file, which is a SQLite file whatever the live store is.
void backup_sql(const fs::path& file, const std::string& sql) {
  sqlite3* handle = nullptr;
  REQUIRE(sqlite3_open(file.c_str(), &handle) == SQLITE_OK);
  char* message = nullptr;
  int rc = sqlite3_exec(handle, sql.c_str(), nullptr, nullptr, &message);
  std::string text = message ? message : "";
  sqlite3_free(message);
  sqlite3_close(handle);
  INFO(sql << ": " << text);
  REQUIRE(rc == SQLITE_OK);
}

/// Backup names as restore takes them: "<name>" in .cleo/backups/, "safety/<name>" for the copies
/// taken before a restore or an upgrade.
std::vector<std::string> backups(const fs::path& project) {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(project / ".cleo" / "backups", ec))
    if (entry.path().extension() == ".db") names.push_back(entry.path().filename().string());  // not -wal/-shm
  for (const auto& entry : fs::directory_iterator(project / ".cleo" / "backups" / "safety", ec))
    if (entry.path().extension() == ".db") names.push_back("safety/" + entry.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace

TEST_CASE("dash: counts, sessions, focus, next and recent activity, compact", "[system][dash]") {
  test::Project p;
  auto empty = p.query("system", "dash");
  REQUIRE(empty.success);
  CHECK(empty.data["counts"]["total"].as_int() == 0);
  CHECK(!empty.data.contains("sessions"));
  CHECK(!empty.data.contains("next"));
  CHECK(!empty.data.contains("recent"));  // init is not a change of the store's contents

  p.add(R"({"title":"Auth epic","type":"epic"})");
  p.add(R"({"title":"Login form","parent":"T001","priority":"high"})");
  p.add(R"({"title":"Unrelated chore"})");
  p.add(R"({"title":"Finished chore"})");
  REQUIRE(p.mutate("tasks", "complete", R"({"id":"T004"})").success);
  REQUIRE(p.mutate("session", "start", R"({"scope":"epic:T001","name":"auth","focus":"T002"})").success);

  auto dash = p.query("system", "dash", R"({"next":2,"recent":3})");
  REQUIRE(dash.success);
  const auto& data = dash.data;
  CHECK(data["counts"]["pending"].as_int() == 2);
  CHECK(data["counts"]["active"].as_int() == 1);
  CHECK(data["counts"]["done"].as_int() == 1);
  CHECK(!data["counts"].contains("blocked"));  // zero counts are left out
  CHECK(data["counts"]["total"].as_int() == 4);
  REQUIRE(data["sessions"].size() == 1);
  CHECK(data["sessions"].as_array()[0]["name"].as_string() == "auth");
  CHECK(data["sessions"].as_array()[0]["scope"].as_string() == "epic:T001");
  CHECK(data["sessions"].as_array()[0]["focus"].as_string() == "T002");
  REQUIRE(data["focus"].size() == 1);
  CHECK(data["focus"].as_array()[0]["id"].as_string() == "T002");
  CHECK(data["focus"].as_array()[0]["session"].as_string() == "auth");
  // The epic still has an open child (T002, in focus): only the chore is ready.
  REQUIRE(data["next"].size() == 1);
  CHECK(data["next"].as_array()[0]["id"].is_string());
  REQUIRE(data["recent"].size() == 3);
  CHECK(data["recent"].as_array()[0].as_string().find("session.start") != std::string::npos);
  CHECK(data["recent"].as_array()[0].as_string().starts_with("#"));
  // No nulls anywhere: every value present carries something.
  CHECK(dash.data.dump().find("null") == std::string::npos);
}

TEST_CASE("stats: throughput and cycle time per calendar period, from SQL", "[system][stats]") {
  test::Project p;  // clock at 2026-01-01T00:00:00Z (a Thursday)
  p.add(R"({"title":"First task"})");
  p.add(R"({"title":"Second task"})");
  p.add(R"({"title":"Third task"})");
  // Started at noon, completed the next day at midnight: cycle 24 h, work 12 h.
  auto noon = router_at(p.dir(), "2026-01-01T12:00:00Z");
  REQUIRE(call(*noon, Gateway::Mutate, "tasks", "start", R"({"id":"T001"})").success);
  auto next_day = router_at(p.dir(), "2026-01-02T00:00:00Z");
  REQUIRE(call(*next_day, Gateway::Mutate, "tasks", "complete", R"({"id":"T001"})").success);
  REQUIRE(call(*next_day, Gateway::Mutate, "tasks", "complete", R"({"id":"T002"})").success);

  auto later = router_at(p.dir(), "2026-01-03T08:00:00Z");
  auto days = call(*later, Gateway::Query, "system", "stats", R"({"period":"day","count":3})");
  REQUIRE(days.success);
  CHECK(days.data["period"].as_string() == "day");
  CHECK(days.data["from"].as_string() == "2026-01-01T00:00:00Z");
  const auto& rows = days.data["periods"];
  REQUIRE(rows.size() == 3);
  CHECK(rows.as_array()[0]["period"].as_string() == "2026-01-01");
  CHECK(rows.as_array()[0]["created"].as_int() == 3);
  CHECK(rows.as_array()[0]["completed"].as_int() == 0);
  CHECK(!rows.as_array()[0].contains("cycleP50H"));
  CHECK(rows.as_array()[1]["period"].as_string() == "2026-01-02");
  CHECK(rows.as_array()[1]["created"].as_int() == 0);
  CHECK(rows.as_array()[1]["completed"].as_int() == 2);
  // T002: created at 00:00:01, completed at 00:00:01 the next day (the fixed clock steps 1 s).
  CHECK(rows.as_array()[1]["cycleP50H"].as_double() == Approx(24.0).margin(0.01));
  CHECK(rows.as_array()[1]["cycleP90H"].as_double() == Approx(24.0).margin(0.01));
  CHECK(rows.as_array()[1]["started"].as_int() == 1);  // only T001 was started
  CHECK(rows.as_array()[1]["workP50H"].as_double() == Approx(12.0).margin(0.01));
  CHECK(rows.as_array()[2]["period"].as_string() == "2026-01-03");
  CHECK(days.data["total"]["created"].as_int() == 3);
  CHECK(days.data["total"]["completed"].as_int() == 2);

  auto weeks = call(*later, Gateway::Query, "system", "stats", R"({"period":"week","count":2})");
  REQUIRE(weeks.success);
  CHECK(weeks.data["periods"].as_array()[0]["period"].as_string() == "2025-W52");
  CHECK(weeks.data["periods"].as_array()[1]["period"].as_string() == "2026-W01");  // Mon 2025-12-29 … Sun 2026-01-04
  CHECK(weeks.data["periods"].as_array()[1]["created"].as_int() == 3);
  CHECK(weeks.data["from"].as_string() == "2025-12-22T00:00:00Z");

  auto months = call(*later, Gateway::Query, "system", "stats", R"({"period":"month","count":13})");
  REQUIRE(months.success);
  CHECK(months.data["periods"].as_array()[0]["period"].as_string() == "2025-01");
  CHECK(months.data["periods"].as_array()[12]["period"].as_string() == "2026-01");
  CHECK(months.data["periods"].as_array()[12]["completed"].as_int() == 2);

  // ISO week years: 2027-01-01 is a Friday in 2026's week 53.
  auto new_year = router_at(p.dir(), "2027-01-01T10:00:00Z");
  auto iso = call(*new_year, Gateway::Query, "system", "stats", R"({"period":"week","count":1})");
  REQUIRE(iso.success);
  CHECK(iso.data["periods"].as_array()[0]["period"].as_string() == "2026-W53");
  CHECK(iso.data["periods"].as_array()[0]["created"].as_int() == 0);

  CHECK(code_of(p.query("system", "stats", R"({"period":"year"})")) == "E_VALIDATION");
  CHECK(code_of(p.query("system", "stats", R"({"count":0})")) == "E_VALIDATION");
}

TEST_CASE("metrics: a bounded, thread-safe histogram per operation", "[system][metrics]") {
  DurationHistogram histogram;
  CHECK(histogram.percentile(0.5) == 0);
  for (int i = 1; i <= 100; ++i) histogram.add(static_cast<double>(i));
  CHECK(histogram.count() == 100);
  // Within the histogram's 5% resolution of the exact nearest-rank values (50 and 95).
  CHECK(histogram.percentile(0.5) == Approx(50).epsilon(0.05));
  CHECK(histogram.percentile(0.95) == Approx(95).epsilon(0.05));
  CHECK(histogram.percentile(1.0) == Approx(100).epsilon(0.05));
  CHECK(histogram.max_ms() == 100);
  DurationHistogram tiny;
  tiny.add(0.0001);
  tiny.add(1e9);  // beyond the last bucket: still counted
  CHECK(tiny.count() == 2);
  CHECK(tiny.percentile(1.0) <= 1e9);

  CallMetrics metrics;
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&metrics, t] {
      for (int i = 0; i < 1000; ++i) metrics.record(t % 2 ? "tasks.add" : "tasks.show", 1.0 + i % 10, i % 100 == 0);
    });
  for (auto& thread : threads) thread.join();
  auto rows = metrics.snapshot();
  REQUIRE(rows.size() == 2);
  CHECK(rows[0].operation == "tasks.add");
  CHECK(rows[0].calls == 4000);
  CHECK(rows[0].errors == 40);
  CHECK(rows[0].p50_ms <= rows[0].p95_ms);
  metrics.reset();
  CHECK(metrics.snapshot().empty());
}

TEST_CASE("metrics: the router records every routed call", "[system][metrics]") {
  test::Project p;
  auto before = p.query("system", "metrics", R"({"operation":"tasks.exists"})");
  std::int64_t calls = 0;
  std::int64_t errors = 0;
  if (before.data["operations"].size() == 1) {
    calls = before.data["operations"].as_array()[0]["calls"].as_int();
    errors = before.data["operations"].as_array()[0]["errors"].as_int();
  }
  p.add(R"({"title":"Some task"})");
  REQUIRE(p.query("tasks", "exists", R"({"id":"T001"})").success);
  REQUIRE(p.query("tasks", "exists", R"({"id":"T001"})").success);
  CHECK(!p.query("tasks", "exists", R"({"id":"bad id"})").success);
  auto after = p.query("system", "metrics", R"({"operation":"tasks.exists"})");
  REQUIRE(after.success);
  REQUIRE(after.data["operations"].size() == 1);
  const auto& row = after.data["operations"].as_array()[0];
  CHECK(row["op"].as_string() == "tasks.exists");
  CHECK(row["calls"].as_int() == calls + 3);
  CHECK(row["errors"].as_int() == errors + 1);
  CHECK(row["p50Ms"].as_double() >= 0);
  CHECK(row["p95Ms"].as_double() >= row["p50Ms"].as_double());
  auto none = p.query("system", "metrics", R"({"operation":"nothing.like.this"})");
  CHECK(code_of(none) == "E_NO_DATA");
}

TEST_CASE("restore: checks the backup first, takes a safety backup, replaces the store", "[system][restore]") {
  test::Project p;
  CHECK(code_of(p.mutate("system", "restore")) == "E_NOT_FOUND");

  p.add(R"({"title":"Kept task"})");
  p.add(R"({"title":"Another kept task"})");
  auto saved = p.mutate("system", "backup", R"({"note":"good"})");
  REQUIRE(saved.success);
  std::string name = fs::path(saved.data["file"].as_string()).filename().string();
  p.add(R"({"title":"Added after the backup"})");
  REQUIRE(p.mutate("tasks", "delete", R"({"id":"T001","hard":true})").success);
  auto live_log = p.query("system", "log", R"({"limit":500})");

  SECTION("a dry run reports and changes nothing") {
    auto dry = p.mutate("system", "restore", R"({"dryRun":true})");
    REQUIRE(dry.success);
    CHECK(dry.data["dryRun"].as_bool());
    CHECK(dry.data["file"].as_string() == name);
    CHECK(dry.data["tasks"].as_int() == 2);
    CHECK(dry.data["schemaVersion"].as_int() == sqlite_schema_version());
    CHECK(dry.data["current"]["tasks"].as_int() == 2);  // T002, T003
    CHECK(!dry.data.contains("safetyBackup"));
    CHECK(backups(p.dir()).size() == 1);
    CHECK(p.query("tasks", "exists", R"({"id":"T003"})").success);
    CHECK(p.query("system", "log", R"({"limit":500})").data.size() == live_log.data.size());
  }

  SECTION("a real restore") {
    auto done = p.mutate("system", "restore", "{\"file\":\"" + name + "\"}");
    REQUIRE(done.success);
    std::string safety = done.data["safetyBackup"].as_string();
    CHECK(safety.find("pre-restore") != std::string::npos);
    CHECK(backups(p.dir()).size() == 2);
    CHECK(p.query("tasks", "show", R"({"id":"T001"})").success);
    CHECK(code_of(p.query("tasks", "show", R"({"id":"T003"})")) == "E_NOT_FOUND");
    // The restored trail is the backup's, with the restore appended, and it verifies.
    auto audit = test::as_report(p.query("validate", "audit"));
    CHECK(audit.data["valid"].as_bool());
    auto log = p.query("system", "log", R"({"limit":2})").data;
    CHECK(log.as_array()[0]["operation"].as_string() == "system.restore");
    // The backup was copied before its own audit row was written.
    CHECK(log.as_array()[1]["operation"].as_string() == "tasks.add");
    // Ids allocated after the backup are never handed out again.
    CHECK(p.add(R"({"title":"After the restore"})") == "T004");
    // The search index came back with the rows.
    auto found = table_as_rows(p.query("tasks", "find", R"({"query":"another"})").data);
    REQUIRE(found.size() == 1);
    CHECK(found.as_array()[0]["id"].as_string() == "T002");
    // The safety backup holds the state just before: restoring it brings T003 back.
    REQUIRE(p.mutate("system", "restore", "{\"file\":\"" + safety + "\"}").success);
    CHECK(p.query("tasks", "exists", R"({"id":"T003"})").success);
    CHECK(test::as_report(p.query("validate", "audit")).data["valid"].as_bool());
  }

  SECTION("bad names, paths outside .cleo/backups and broken files are refused") {
    auto wrong = p.mutate("system", "restore", R"({"file":"tasks-nope.db"})");
    CHECK(code_of(wrong) == "E_NOT_FOUND");
    REQUIRE(wrong.error->details["valid"].is_array());
    CHECK(wrong.error->details["valid"].as_array()[0].as_string() == name);
    CHECK(mcp_text(wrong.error->fix, registry()).find(name) != std::string::npos);
    CHECK(code_of(p.mutate("system", "restore", R"({"file":"../tasks.db"})")) == "E_INVALID_INPUT");
    std::string live = (p.dir() / ".cleo" / "tasks.db").string();
    if (!test::on_postgresql())  // the live store is that file only on SQLite
      CHECK(code_of(p.mutate("system", "restore", "{\"file\":\"" + live + "\"}")) == "E_INVALID_INPUT");
    // An MCP caller may not reach outside the project; a person on the command line may.
    CHECK(code_of(p.mutate("system", "restore", R"({"file":"/nonexistent/x.db"})")) == "E_INVALID_INPUT");
    CHECK(code_of(p.mutate_as_person("system", "restore", R"({"file":"/nonexistent/x.db"})")) == "E_NOT_FOUND");

    std::ofstream(p.dir() / ".cleo" / "backups" / "garbage.db") << "this is not a database, not at all";
    auto garbage = p.mutate("system", "restore", R"({"file":"garbage.db"})");
    CHECK(code_of(garbage) == "E_FILE_ERROR");
    CHECK(garbage.error->message.find("garbage.db") != std::string::npos);

    // A backup from a newer ct.
    fs::path newer = p.dir() / ".cleo" / "backups" / "newer.db";
    fs::copy_file(p.dir() / ".cleo" / "backups" / name, newer);
    backup_sql(newer, "PRAGMA user_version = " + std::to_string(sqlite_schema_version() + 1));
    auto future = p.mutate("system", "restore", R"({"file":"newer.db"})");
    CHECK(code_of(future) == "E_FILE_ERROR");
    CHECK(future.error->message.find("newer ct") != std::string::npos);

    // A damaged page: the integrity check finds it before anything is touched.
    fs::path damaged = p.dir() / ".cleo" / "backups" / "damaged.db";
    fs::copy_file(p.dir() / ".cleo" / "backups" / name, damaged);
    {
      std::fstream file(damaged, std::ios::in | std::ios::out | std::ios::binary);
      // Every page after the first (the schema): the tables' b-trees are garbage.
      auto size = static_cast<std::size_t>(fs::file_size(damaged));
      REQUIRE(size > 8192);
      file.seekp(4096);
      std::string junk(size - 4096, '\x5a');
      file.write(junk.data(), static_cast<std::streamsize>(junk.size()));
    }
    auto broken = p.mutate("system", "restore", R"({"file":"damaged.db"})");
    CHECK(code_of(broken) == "E_FILE_ERROR");

    // Nothing changed, and no safety backup was taken.
    CHECK(p.query("tasks", "exists", R"({"id":"T003"})").success);
    for (const auto& file : backups(p.dir())) CHECK(file.find("pre-restore") == std::string::npos);
    CHECK(!fs::exists(p.dir() / ".cleo" / "backups" / "garbage.db-wal"));
  }
}

TEST_CASE("restore: the replaced trail's audit archives are set aside, not mixed in", "[system][restore][gc]") {
  test::Project p;
  p.add(R"({"title":"First task"})");
  auto saved = p.mutate("system", "backup", R"({"note":"early"})");
  REQUIRE(saved.success);
  const std::string file = fs::path(saved.data["file"].as_string()).filename().string();
  REQUIRE(p.mutate_as_person("system", "config.set", R"({"key":"audit.retentionDays","value":7})").success);
  auto later = router_at(p.dir(), "2026-02-01T00:00:00Z");
  auto gc = call(*later, Gateway::Mutate, "system", "gc");
  REQUIRE(gc.success);
  const std::string archive = gc.data["audit"]["archive"].as_string();
  REQUIRE(fs::exists(p.dir() / archive));

  // The early backup predates the compaction: its trail starts at row 1 again.
  auto dry = call(*later, Gateway::Mutate, "system", "restore", R"({"file":")" + file + R"(","dryRun":true})");
  REQUIRE(dry.success);
  REQUIRE(dry.data["archivesSetAside"].size() == 1);
  CHECK(fs::exists(p.dir() / archive));
  auto restored = call(*later, Gateway::Mutate, "system", "restore", R"({"file":")" + file + R"("})");
  REQUIRE(restored.success);
  REQUIRE(restored.data["archivesSetAside"].size() == 1);
  const std::string aside = restored.data["archivesSetAside"].as_array()[0].as_string();
  CHECK(aside.starts_with(".cleo/audit-archive/replaced-"));
  CHECK(fs::exists(p.dir() / aside));  // kept, never deleted
  CHECK(!fs::exists(p.dir() / archive));

  auto audit = test::as_report(call(*later, Gateway::Query, "validate", "audit", R"({"archives":true})"));
  CHECK(audit.data["valid"].as_bool());
  // The restored trail compacts again from row 1, without touching the set-aside file.
  auto again = call(*later, Gateway::Mutate, "system", "gc");
  REQUIRE(again.success);
  CHECK(again.data["audit"]["from"].as_int() == 1);
  CHECK(test::as_report(call(*later, Gateway::Query, "validate", "audit", R"({"archives":true})")).data["valid"].as_bool());
  CHECK(fs::exists(p.dir() / aside));
}

TEST_CASE("gc never overwrites an existing archive file", "[system][gc]") {
  test::Project p;
  p.add(R"({"title":"First task"})");
  REQUIRE(p.mutate_as_person("system", "config.set", R"({"key":"audit.retentionDays","value":7})").success);
  auto later = router_at(p.dir(), "2026-02-01T00:00:00Z");
  auto dry = call(*later, Gateway::Mutate, "system", "gc", R"({"dryRun":true})");
  REQUIRE(dry.success);
  const fs::path archive = p.dir() / dry.data["audit"]["archive"].as_string();
  fs::create_directories(archive.parent_path());
  std::ofstream(archive) << "rows of another trail\n";
  const std::int64_t rows = test::as_report(call(*later, Gateway::Query, "validate", "audit")).data["rows"].as_int();
  auto gc = call(*later, Gateway::Mutate, "system", "gc");
  CHECK(code_of(gc) == "E_FILE_ERROR");
  CHECK(test::as_report(call(*later, Gateway::Query, "validate", "audit")).data["rows"].as_int() >= rows);  // nothing removed
  std::ifstream in(archive);
  std::string line;
  std::getline(in, line);
  CHECK(line == "rows of another trail");
}

TEST_CASE("restore: a backup of an older schema is migrated on the copy", "[system][restore][migrate][sqlite]") {
  test::Project p;
  p.add(R"({"title":"Old task"})");
  auto saved = p.mutate("system", "backup");
  REQUIRE(saved.success);
  fs::path file = saved.data["file"].as_string();
  // Make the backup look like schema 3 (before protocol-check results).
  test::downgrade_store(file, 3);
  auto dry = p.mutate("system", "restore", R"({"dryRun":true})");
  REQUIRE(dry.success);
  CHECK(dry.data["schemaVersion"].as_int() == 3);
  CHECK(dry.data["migratedTo"].as_int() == sqlite_schema_version());
  REQUIRE(p.mutate("system", "restore").success);
  CHECK(p.query("tasks", "exists", R"({"id":"T001"})").success);
  // The backup file itself was only read.
  auto info = inspect_sqlite_file(file, false);
  REQUIRE(info);
  CHECK(info->schema_version == 3);
}

TEST_CASE("any command that upgrades an old store backs it up first", "[system][migrate][sqlite]") {
  test::Project p;
  fs::path db = p.dir() / ".cleo" / "tasks.db";
  p.add(R"({"title":"Survives the upgrade"})");
  test::downgrade_store(db, 3);
  auto fresh = router_at(p.dir(), "2026-01-02T00:00:00Z");
  auto shown = call(*fresh, Gateway::Query, "tasks", "show", R"({"id":"T001"})");
  REQUIRE(shown.success);
  CHECK(inspect_sqlite_file(db, false)->schema_version == sqlite_schema_version());
  auto saved = backups(p.dir());
  REQUIRE(saved.size() == 1);
  CHECK(saved.front().find("pre-migrate-v3") != std::string::npos);
  CHECK(inspect_sqlite_file(p.dir() / ".cleo" / "backups" / saved.front(), false)->schema_version == 3);
  // Current stores are opened without a copy.
  auto again = router_at(p.dir(), "2026-01-03T00:00:00Z");
  REQUIRE(call(*again, Gateway::Query, "tasks", "show", R"({"id":"T001"})").success);
  CHECK(backups(p.dir()).size() == 1);
}

TEST_CASE("migrate: pending steps, a backup first, and a clear error for newer stores", "[system][migrate][sqlite]") {
  test::Project p;
  auto current = p.mutate("system", "migrate");
  CHECK(code_of(current) == "E_NO_CHANGE");
  CHECK(current.data["from"].as_int() == sqlite_schema_version());
  CHECK(current.data["applied"].empty());

  fs::path db = p.dir() / ".cleo" / "tasks.db";
  p.add(R"({"title":"Survives the upgrade"})");
  test::downgrade_store(db, 3);
  // A fresh router: the store is not open yet (the router would migrate it on open).
  auto fresh = router_at(p.dir(), "2026-01-02T00:00:00Z");
  auto dry = call(*fresh, Gateway::Mutate, "system", "migrate", R"({"dryRun":true})");
  REQUIRE(dry.success);
  CHECK(dry.data["from"].as_int() == 3);
  CHECK(dry.data["to"].as_int() == sqlite_schema_version());
  // Every step after version 3 (the numbers of the steps may leave a gap).
  const std::vector<MigrationStep> steps = sqlite_migrations();
  const auto later_steps =
      std::count_if(steps.begin(), steps.end(), [](const MigrationStep& step) { return step.version > 3; });
  REQUIRE(dry.data["pending"].size() == static_cast<std::size_t>(later_steps));
  CHECK(dry.data["pending"].as_array()[0]["version"].as_int() == 4);
  CHECK(!dry.data["pending"].as_array()[0]["description"].as_string().empty());
  CHECK(inspect_sqlite_file(db, false)->schema_version == 3);  // a dry run changes nothing
  CHECK(backups(p.dir()).empty());

  auto done = call(*fresh, Gateway::Mutate, "system", "migrate");
  REQUIRE(done.success);
  CHECK(done.data["applied"].size() == dry.data["pending"].size());
  CHECK(done.data["safetyBackup"].as_string().find("pre-migrate-v3") != std::string::npos);
  CHECK(inspect_sqlite_file(db, false)->schema_version == sqlite_schema_version());
  CHECK(inspect_sqlite_file(p.dir() / ".cleo" / "backups" / done.data["safetyBackup"].as_string(), false)
            ->schema_version == 3);
  auto log = call(*fresh, Gateway::Query, "system", "log", R"({"operation":"system.migrate"})");
  REQUIRE(log.data.size() == 1);
  CHECK(test::as_report(call(*fresh, Gateway::Query, "validate", "audit")).data["valid"].as_bool());
  CHECK(call(*fresh, Gateway::Query, "tasks", "exists", R"({"id":"T001"})").success);

  raw_sql(db, "PRAGMA user_version = " + std::to_string(sqlite_schema_version() + 1));
  auto newer = router_at(p.dir(), "2026-01-03T00:00:00Z");
  auto refused = call(*newer, Gateway::Mutate, "system", "migrate");
  CHECK(code_of(refused) == "E_FILE_ERROR");
  CHECK(refused.error->message.find("newer") != std::string::npos);
  CHECK(!refused.error->fix.empty());
  CHECK(refused.error->details["supported"].as_int() == sqlite_schema_version());
}

TEST_CASE("gc: idempotency keys expire; old audit rows are archived, never lost", "[system][gc]") {
  test::Project p;
  auto empty = p.mutate("system", "gc");
  REQUIRE(empty.success);
  CHECK(code_of(empty) == "E_NO_CHANGE");
  CHECK(empty.data["idempotencyKeys"].as_int() == 0);
  CHECK(empty.data["audit"]["rows"].as_int() == 0);
  CHECK(empty.data["audit"]["retentionDays"].as_int() == 0);

  p.add(R"({"title":"First task"})");
  REQUIRE(p.mutate("tasks", "add", R"({"title":"Keyed task","idempotencyKey":"k-1"})").success);
  REQUIRE(p.mutate_as_person("system", "config.set", R"({"key":"audit.retentionDays","value":"7"})").success);
  const std::int64_t old_rows = test::as_report(p.query("validate", "audit")).data["rows"].as_int();

  auto later = router_at(p.dir(), "2026-01-20T00:00:00Z");
  REQUIRE(call(*later, Gateway::Mutate, "tasks", "add", R"({"title":"Recent task"})").success);
  auto dry = call(*later, Gateway::Mutate, "system", "gc", R"({"dryRun":true})");
  REQUIRE(dry.success);
  CHECK(dry.data["dryRun"].as_bool());
  CHECK(dry.data["idempotencyKeys"].as_int() == 1);
  CHECK(dry.data["audit"]["rows"].as_int() == old_rows);
  CHECK(dry.data["audit"]["from"].as_int() == 1);
  CHECK(dry.data["audit"]["to"].as_int() == old_rows);
  CHECK(dry.data["audit"]["before"].as_string().starts_with("2026-01-13T00:00:0"));  // 7 days before now
  std::string archive = dry.data["audit"]["archive"].as_string();
  std::string last = std::to_string(old_rows);
  CHECK(archive == ".cleo/audit-archive/audit-000001-" + std::string(6 - last.size(), '0') + last + ".jsonl");
  CHECK(!fs::exists(p.dir() / archive));
  CHECK(test::as_report(call(*later, Gateway::Query, "validate", "audit")).data["rows"].as_int() == old_rows + 1);

  auto done = call(*later, Gateway::Mutate, "system", "gc");
  REQUIRE(done.success);
  CHECK(done.data["idempotencyKeys"].as_int() == 1);
  CHECK(done.data["audit"]["rows"].as_int() == old_rows);
  REQUIRE(fs::exists(p.dir() / archive));
  auto archived = verify_audit_archive(p.dir() / archive);
  REQUIRE(archived);
  CHECK(archived->rows == old_rows);
  CHECK(archived->previous.empty());
  CHECK(!archived->first_broken);

  // The rest of the chain still verifies from the anchor; the gc row itself follows.
  auto audit = test::as_report(call(*later, Gateway::Query, "validate", "audit"));
  CHECK(audit.data["valid"].as_bool());
  CHECK(audit.data["rows"].as_int() == 2);  // the recent add and the gc
  auto log = call(*later, Gateway::Query, "system", "log").data;
  REQUIRE(log.size() == 2);
  CHECK(log.as_array()[0]["operation"].as_string() == "system.gc");
  CHECK(log.as_array()[0]["seq"].as_int() == old_rows + 2);
  REQUIRE(call(*later, Gateway::Mutate, "tasks", "add", R"({"title":"After gc"})").success);
  CHECK(test::as_report(call(*later, Gateway::Query, "validate", "audit")).data["valid"].as_bool());
  // Nothing more is due.
  CHECK(code_of(call(*later, Gateway::Mutate, "system", "gc")) == "E_NO_CHANGE");

  SECTION("a second compaction chains to the first archive") {
    auto much_later = router_at(p.dir(), "2026-03-01T00:00:00Z");
    auto again = call(*much_later, Gateway::Mutate, "system", "gc");
    REQUIRE(again.success);
    CHECK(again.data["audit"]["anchor"].as_int() == old_rows);
    CHECK(again.data["audit"]["from"].as_int() == old_rows + 1);
    auto second = verify_audit_archive(p.dir() / again.data["audit"]["archive"].as_string());
    REQUIRE(second);
    CHECK(second->previous == archived->last_hash);
    CHECK(!second->first_broken);
    CHECK(test::as_report(call(*much_later, Gateway::Query, "validate", "audit")).data["valid"].as_bool());
  }

  SECTION("tampering with the remaining rows is still detected") {
    raw_sql(p.dir() / ".cleo" / "tasks.db",
            "UPDATE audit SET reason = 'rewritten' WHERE seq = " + std::to_string(old_rows + 1));
    auto tampered = test::as_report(call(*later, Gateway::Query, "validate", "audit"));
    CHECK(!tampered.data["valid"].as_bool());
    CHECK(tampered.data["firstBroken"]["seq"].as_int() == old_rows + 1);
  }

  SECTION("deleting the first row after the anchor is detected") {
    raw_sql(p.dir() / ".cleo" / "tasks.db",
            "DELETE FROM audit_changes WHERE seq = " + std::to_string(old_rows + 1) +
                "; DELETE FROM audit WHERE seq = " + std::to_string(old_rows + 1));
    CHECK(!test::as_report(call(*later, Gateway::Query, "validate", "audit")).data["valid"].as_bool());
  }

  SECTION("an edited archive does not verify") {
    std::ifstream in(p.dir() / archive);
    std::stringstream text;
    text << in.rdbuf();
    std::string content = text.str();
    auto at = content.find("First task");
    REQUIRE(at != std::string::npos);
    content.replace(at, 5, "Fifth");
    std::ofstream(p.dir() / archive, std::ios::trunc) << content;
    auto edited = verify_audit_archive(p.dir() / archive);
    REQUIRE(edited);
    CHECK(edited->first_broken);
    // validate.audit reports it when asked to check the archives too.
    auto report = test::as_report(call(*later, Gateway::Query, "validate", "audit", R"({"archives":true})"));
    REQUIRE(report.success);
    CHECK(!report.data["valid"].as_bool());
    CHECK(!report.data["archives"]["files"].as_array()[0]["valid"].as_bool());
    CHECK(!report.warnings.empty());
  }

  SECTION("validate.audit verifies the archives and their link to the live trail") {
    auto report = test::as_report(call(*later, Gateway::Query, "validate", "audit", R"({"archives":true})"));
    REQUIRE(report.success);
    CHECK(report.data["valid"].as_bool());
    CHECK(report.data["anchor"].as_int() == old_rows);
    CHECK(report.data["archives"]["files"].size() == 1);
    fs::remove(p.dir() / archive);
    auto missing = test::as_report(call(*later, Gateway::Query, "validate", "audit", R"({"archives":true})"));
    CHECK(!missing.data["valid"].as_bool());
    CHECK(missing.warnings.size() == 1);
  }
}
