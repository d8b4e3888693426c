// The validate domain: every data rule of docs/architecture.md §4 broken on purpose behind the store's back
// (raw SQL on the project's database, as a crash, a bad import or a careless hand would), then
// detected by validate.schema / validate.task and, where safe, repaired by validate.fix.
#include <catch2/catch.hpp>
#include <sqlite3.h>

#include <algorithm>
#include <fstream>
#include <set>

#include "gateway/mcp_syntax.h"
#include "unit/test_support.h"
#include "gateway/product.h"

using namespace ct;
using ct::test::code_of;

namespace {

void tamper(const std::filesystem::path& dir, const std::string& sql) {
  INFO(sql);
  REQUIRE_NOTHROW(test::run_sql(dir / ".cleo" / "tasks.db", sql));
}

/// T001 epic > T002 task > T003 subtask; T004 depends on T002; T005 done; T006 deleted (cancelled
/// and archived); a global session focusing T002.
std::string plant(test::Project& p) {
  p.add(R"({"title":"Auth epic","type":"epic"})");
  p.add(R"({"title":"Login form","parent":"T001"})");
  p.add(R"({"title":"Validate email","parent":"T002"})");
  p.add(R"({"title":"Unrelated chore","depends":["T002"]})");
  p.add(R"({"title":"Finished thing"})");
  p.add(R"({"title":"Dropped thing"})");
  REQUIRE(p.mutate("tasks", "complete", R"({"id":"T005"})").success);
  REQUIRE(p.mutate("tasks", "delete", R"({"id":"T006"})").success);
  Envelope session = p.mutate("session", "start", R"({"scope":"global","focus":"T002","agent":"claude"})");
  REQUIRE(session.success);
  return session.data["id"].as_string();
}

/// "check:taskId" of every problem in a schema or task report (or the remaining of a fix), but the
/// trail check's: the tampering these tests plant shows there too, which its own test checks.
std::set<std::string> found(const json::Value& problems) {
  std::set<std::string> out;
  for (const auto& problem : problems.as_array()) {
    if (problem["check"] == json::Value("trail")) continue;
    std::string item = problem["check"].as_string();
    if (problem["taskId"].is_string()) item += ":" + problem["taskId"].as_string();
    out.insert(item);
  }
  return out;
}

std::set<std::string> schema(test::Project& p) {
  Envelope e = test::as_report(p.query("validate", "schema", R"({"limit":10000})"));
  REQUIRE(e.success);
  CHECK(e.data["valid"].as_bool() == e.data["problems"].as_array().empty());
  return found(e.data["problems"]);
}

/// How many of a fix's repairs (or a report's problems) are not the trail check's.
std::int64_t without_trail(const json::Value& items) {
  std::int64_t count = 0;
  for (const auto& item : items.as_array()) count += item["check"] == json::Value("trail") ? 0 : 1;
  return count;
}

/// validate.schema's problems through a fresh router, which reads the config written since `p`'s
/// router opened the store.
std::set<std::string> schema_with_new_config(const test::Project& p) {
  RouterOptions options;
  Router router(registry(), Workspace::open(p.dir()), options, std::make_unique<FixedClock>(*parse_iso8601("2026-01-01T00:00:00Z")));
  return found(test::as_report(router.dispatch({Gateway::Query, "validate", "schema", json::Value::object()})).data["problems"]);
}

const json::Value* problem(const json::Value& problems, std::string_view check) {
  for (const auto& item : problems.as_array())
    if (item["check"].as_string() == check) return &item;
  return nullptr;
}

/// Runs validate.fix and checks that the store is clean afterwards, the repairs were audited and
/// the audit chain still verifies. Returns the fix's data.
json::Value fix_cleanly(test::Project& p) {
  Envelope fixed = p.mutate("validate", "fix");
  REQUIRE(fixed.success);
  INFO(to_json(fixed, McpAdvice(registry())));
  CHECK(fixed.data["valid"].as_bool());
  CHECK(fixed.data["repaired"].as_int() > 0);
  CHECK(schema(p).empty());
  auto log = p.query("system", "log", R"({"operation":"validate.fix","limit":1})");
  REQUIRE(log.data.size() == 1);
  CHECK(log.data.as_array()[0]["changed"].size() > 0);
  CHECK(test::as_report(p.query("validate", "audit")).data["valid"].as_bool());
  return fixed.data;
}

void write_config(test::Project& p, std::string_view json) { p.write_config(json); }

}  // namespace

TEST_CASE("a store written only through the operations passes every check", "[validate]") {
  test::Project p;
  CHECK(schema(p).empty());
  plant(p);
  REQUIRE(p.mutate("tasks", "restore", R"({"id":"T006"})").success);
  REQUIRE(p.mutate("tasks", "archive", R"({"id":"T005"})").success);
  REQUIRE(p.mutate("session", "suspend").success);
  auto report = test::as_report(p.query("validate", "schema"));
  REQUIRE(report.success);
  CHECK(report.data["valid"].as_bool());
  CHECK(report.data["tasks"].as_int() == 6);
  CHECK(report.data["total"].as_int() == 0);
  CHECK(report.warnings.empty());
  for (const char* id : {"T001", "T002", "T003", "T004", "T005", "T006"}) {
    auto one = test::as_report(p.query("validate", "task", std::string(R"({"id":")") + id + "\"}"));
    INFO(to_json(one, McpAdvice(registry())));
    CHECK(one.data["valid"].as_bool());
  }
  // One row that creates tasks and then changes them (an import completes what it added, and
  // links what it placed) is read in the order it was written.
  REQUIRE(p.mutate("tasks", "import",
                   R"({"tasks":[{"id":"a","title":"Drawn up","status":"done"},)"
                   R"({"id":"b","title":"Built on it","depends":["a"]}]})").success);
  auto after_import = test::as_report(p.query("validate", "audit"));
  INFO(to_json(after_import, McpAdvice(registry())));
  CHECK(after_import.data["valid"].as_bool());
  // Nothing to repair is a successful E_NO_CHANGE.
  CHECK(code_of(p.mutate("validate", "fix")) == "E_NO_CHANGE");
}

TEST_CASE("status timestamps: done ⇒ completedAt, cancelled ⇒ cancelledAt, archived ⇒ archivedAt", "[validate]") {
  test::Project p;
  plant(p);
  tamper(p.dir(), "UPDATE tasks SET completed_at = NULL WHERE id = 'T005';"
                  "UPDATE tasks SET completed_at = created_at WHERE id = 'T004';"
                  "UPDATE tasks SET cancelled_at = NULL, archived_at = NULL WHERE id = 'T006';"
                  "UPDATE tasks SET archived_at = created_at WHERE id = 'T003'");
  auto problems = schema(p);
  CHECK(problems == std::set<std::string>{"completed-at:T005", "completed-at:T004", "cancelled-at:T006",
                                          "archived-at:T006", "archived-at:T003"});
  auto report = test::as_report(p.query("validate", "schema"));
  CHECK(report.data["repairable"].as_int() == 5 + report.data["byCheck"]["trail"].as_int());
  CHECK(report.data["byCheck"]["trail"].as_int() == 5);  // each field set by hand
  CHECK(report.data["byCheck"]["completed-at"].as_int() == 2);
  const json::Value* done = problem(report.data["problems"], "completed-at");
  REQUIRE(done);
  CHECK((*done)["repairable"].as_bool());
  CHECK(test::as_agents_read((*done)["fix"]).as_string().find("operation:'fix'") != std::string::npos);
  auto failed = p.query("validate", "schema");  // an invalid store fails the check, exit 6
  REQUIRE(failed.error);
  CHECK(failed.exit_code() == 6);
  CHECK(mcp_text(failed.error->fix, registry()).find("operation:'fix'") != std::string::npos);

  // The task check sees the same, for one task.
  auto one = test::as_report(p.query("validate", "task", R"({"id":"T005"})"));
  CHECK_FALSE(one.data["valid"].as_bool());
  CHECK(found(one.data["problems"]) == std::set<std::string>{"completed-at:T005"});

  // A dry run lists the repairs and changes nothing (no audit row either).
  auto rows_before = p.query("system", "log", R"({"limit":500})").data.size();
  auto dry = p.mutate("validate", "fix", R"({"dryRun":true})");
  REQUIRE(dry.success);
  CHECK(dry.data["dryRun"].as_bool());
  CHECK(without_trail(dry.data["repairs"]) == 5);
  CHECK(dry.data["remaining"].as_array().empty());
  CHECK(schema(p).size() == 5);
  CHECK(p.query("system", "log", R"({"limit":500})").data.size() == rows_before);

  auto show = p.query("tasks", "show", R"({"id":"T005"})").data;
  json::Value fixed = fix_cleanly(p);
  CHECK(without_trail(fixed["repairs"]) == 5);
  auto after = p.query("tasks", "show", R"({"id":"T005"})").data;
  CHECK(after["completedAt"].as_string() == after["updatedAt"].as_string());
  CHECK(after["version"].as_int() == show["version"].as_int() + 1);
  // The change is in the task's history, as every change is.
  auto history = p.query("tasks", "history", R"({"id":"T005","field":"completedAt"})");
  REQUIRE(history.success);
  CHECK(history.data.as_array()[0]["operation"].as_string() == "validate.fix");
  // Repairing an archived task does not make it look modified after archiving.
  CHECK(p.query("tasks", "show", R"({"id":"T006"})").data["archivedAt"].is_string());
}

TEST_CASE("dependencies: missing targets and a stale dependency index are repaired; cycles are reported", "[validate]") {
  test::Project p;
  plant(p);
  SECTION("a dependency on a task that does not exist") {
    tamper(p.dir(), "UPDATE tasks SET depends = '[\"T002\",\"T999\"]' WHERE id = 'T004';"
                    "INSERT INTO task_deps VALUES('T004', 'T999')");
    CHECK(schema(p) == std::set<std::string>{"missing-dependency:T004"});
    CHECK(found(test::as_report(p.query("validate", "task", R"({"id":"T004"})")).data["problems"]) ==
          std::set<std::string>{"missing-dependency:T004"});
    json::Value fixed = fix_cleanly(p);
    CHECK(fixed["repairs"].as_array()[0]["action"].as_string() == "removed T999 from depends");
    CHECK(p.query("tasks", "show", R"({"id":"T004"})").data["depends"].size() == 1);
  }
  SECTION("the dependency index out of step with the depends lists") {
    tamper(p.dir(), "DELETE FROM task_deps WHERE task_id = 'T004'; INSERT INTO task_deps VALUES('T005', 'T001')");
    CHECK(schema(p) == std::set<std::string>{"dependency-edges:T004", "dependency-edges:T005"});
    CHECK(p.query("tasks", "deps", R"({"id":"T002","direction":"downstream"})").data["downstream"].size() == 0);
    fix_cleanly(p);
    // Dependents are read from the index: T004 waits on T002 again.
    CHECK(p.query("tasks", "deps", R"({"id":"T002","direction":"downstream"})").data["downstream"].size() == 1);
  }
  SECTION("a cycle is found but left to a person") {
    tamper(p.dir(), "UPDATE tasks SET depends = '[\"T004\"]' WHERE id = 'T002';"
                    "INSERT INTO task_deps VALUES('T002', 'T004')");
    auto report = test::as_report(p.query("validate", "schema"));
    CHECK(found(report.data["problems"]) == std::set<std::string>{"dependency-cycle:T002"});
    const json::Value* cycle = problem(report.data["problems"], "dependency-cycle");
    REQUIRE(cycle);
    CHECK((*cycle)["message"].as_string() == "dependency cycle: T002 → T004 → T002");
    CHECK_FALSE((*cycle)["repairable"].as_bool());
    CHECK(found(test::as_report(p.query("validate", "task", R"({"id":"T004"})")).data["problems"]) ==
          std::set<std::string>{"dependency-cycle:T004"});
    auto fixed = p.mutate("validate", "fix");
    CHECK(without_trail(fixed.data["repairs"]) == 0);  // the hand edit is written into the trail, no more
    CHECK(found(fixed.data["remaining"]) == std::set<std::string>{"dependency-cycle:T002"});
    CHECK_FALSE(fixed.data["valid"].as_bool());
    CHECK_FALSE(fixed.warnings.empty());
  }
  SECTION("a task depending on itself") {
    tamper(p.dir(), "UPDATE tasks SET depends = '[\"T005\"]' WHERE id = 'T005'; INSERT INTO task_deps VALUES('T005', 'T005')");
    CHECK(schema(p) == std::set<std::string>{"dependency-cycle:T005"});
  }
}

TEST_CASE("hierarchy: parent exists, no loops, depth, type rules, sibling limit", "[validate]") {
  test::Project p;
  plant(p);
  SECTION("a missing parent") {
    tamper(p.dir(), "UPDATE tasks SET parent = 'T999' WHERE id = 'T003'");
    CHECK(schema(p) == std::set<std::string>{"missing-parent:T003"});
    auto one = test::as_report(p.query("validate", "task", R"({"id":"T003"})"));
    CHECK(found(one.data["problems"]) == std::set<std::string>{"missing-parent:T003"});
    CHECK(test::as_agents_read(one.data["problems"].as_array()[0]["fix"]).as_string().find("promote") != std::string::npos);
  }
  SECTION("a parent loop") {
    tamper(p.dir(), "UPDATE tasks SET parent = 'T003', type = 'task' WHERE id = 'T001'");
    auto problems = schema(p);
    CHECK(problems.contains("parent-cycle:T001"));
    CHECK(std::count_if(problems.begin(), problems.end(), [](const auto& s) { return s.starts_with("parent-cycle"); }) == 1);
    CHECK(found(test::as_report(p.query("validate", "task", R"({"id":"T002"})")).data["problems"]).contains("parent-cycle:T001"));
  }
  SECTION("depth beyond hierarchy.maxDepth") {
    write_config(p, R"({"hierarchy":{"maxDepth":2}})");
    CHECK(schema_with_new_config(p) == std::set<std::string>{"depth:T003"});
  }
  SECTION("type rules: epics have no parent, subtasks have one and no children") {
    tamper(p.dir(), "UPDATE tasks SET type = 'epic' WHERE id = 'T002'; UPDATE tasks SET type = 'subtask' WHERE id = 'T004';"
                    "UPDATE tasks SET type = 'subtask' WHERE id = 'T001'");
    CHECK(schema(p) == std::set<std::string>{"epic-parent:T002", "subtask-root:T004", "subtask-root:T001",
                                             "subtask-children:T001"});
    auto fixed = p.mutate("validate", "fix");
    REQUIRE(fixed.success);
    CHECK(without_trail(fixed.data["repairs"]) == 2);  // the parentless subtasks become tasks
    CHECK(found(fixed.data["remaining"]) == std::set<std::string>{"epic-parent:T002"});
    CHECK(p.query("tasks", "show", R"({"id":"T004"})").data["type"].as_string() == "task");
  }
  SECTION("more open children than hierarchy.maxSiblings") {
    p.add(R"({"title":"Signup form","parent":"T001"})");
    write_config(p, R"({"hierarchy":{"maxSiblings":1}})");
    CHECK(schema_with_new_config(p) == std::set<std::string>{"sibling-limit:T001"});
  }
}

TEST_CASE("task fields: the anti-hallucination checks", "[validate]") {
  test::Project p;
  plant(p);
  SECTION("title and description") {
    tamper(p.dir(), "UPDATE tasks SET description = 'login FORM ' WHERE id = 'T002';"
                    "UPDATE tasks SET title = 'ab' WHERE id = 'T004';"
                    "UPDATE tasks SET description = " +
                        std::string(test::on_postgresql() ? "repeat('x', 2001)" : "replace(hex(zeroblob(2001)), '00', 'x')") +
                        " WHERE id = 'T005'");
    CHECK(schema(p) == std::set<std::string>{"title-equals-description:T002", "title:T004", "description:T005"});
    auto one = test::as_report(p.query("validate", "task", R"({"id":"T002"})"));
    CHECK_FALSE(one.data["valid"].as_bool());
    CHECK(test::as_agents_read(one.data["problems"].as_array()[0]["fix"]).as_string().find("description") != std::string::npos);
    // Nothing of these is repaired: the fix only writes into the trail what was set by hand.
    Envelope fixed = p.mutate("validate", "fix");
    CHECK(without_trail(fixed.data["repairs"]) == 0);
    CHECK(found(fixed.data["remaining"]) == std::set<std::string>{"title-equals-description:T002", "title:T004", "description:T005"});
  }
  SECTION("values the task record cannot hold") {
    tamper(p.dir(), "UPDATE tasks SET status = 'finished', completed_at = NULL WHERE id = 'T004';"
                    // PostgreSQL's search column reads labels as JSON: there, JSON that is no list.
                    "UPDATE tasks SET labels = " + std::string(test::on_postgresql() ? "'\"not json\"'" : "'not json'") +
                    " WHERE id = 'T003';"
                    "UPDATE tasks SET depends = '[1]' WHERE id = 'T001'");
    CHECK(schema(p) == std::set<std::string>{"invalid-value:T004", "malformed-list:T003", "malformed-list:T001"});
    CHECK(found(test::as_report(p.query("validate", "task", R"({"id":"T004"})")).data["problems"]) ==
          std::set<std::string>{"invalid-value:T004"});
  }
  SECTION("timestamps in the future or out of order") {
    tamper(p.dir(), "UPDATE tasks SET created_at = created_at + 31536000000 WHERE id = 'T004';"
                    "UPDATE tasks SET updated_at = created_at - 1 WHERE id = 'T003'");
    CHECK(schema(p) == std::set<std::string>{"future-timestamp:T004", "timestamp-order:T004", "timestamp-order:T003"});
  }
  SECTION("ids") {
    tamper(p.dir(), "UPDATE tasks SET id = 'T5' WHERE id = 'T005'; UPDATE meta SET value = '3' WHERE key = 'next_task_num'");
    CHECK(schema(p) == std::set<std::string>{"task-id:T5", "id-counter"});
    auto fixed = p.mutate("validate", "fix");
    CHECK(found(fixed.data["remaining"]) == std::set<std::string>{"task-id:T5"});
    CHECK(p.add(R"({"title":"After the repair"})") == "T007");
  }
  SECTION("unknown task") {
    auto missing = test::as_report(p.query("validate", "task", R"({"id":"T404"})"));
    CHECK(code_of(missing) == "E_NOT_FOUND");
    CHECK(mcp_text(missing.error->fix, registry()).find("find") != std::string::npos);
    CHECK(code_of(test::as_report(p.query("validate", "task"))) == "E_INVALID_PARAMS");
  }
}

TEST_CASE("archived tasks stay archived and unchanged", "[validate]") {
  test::Project p;
  plant(p);
  tamper(p.dir(), "UPDATE tasks SET status = 'pending' WHERE id = 'T006';"
                  "UPDATE tasks SET archived = 1, archived_at = updated_at, updated_at = updated_at + 1 WHERE id = 'T005'");
  CHECK(schema(p) == std::set<std::string>{"archived-open:T006", "cancelled-at:T006", "archived-modified:T005"});
}

TEST_CASE("focus: claims point at live tasks and sessions, one per task and per session", "[validate][session]") {
  test::Project p;
  std::string session = plant(p);
  SECTION("a focus on a task that is gone") {
    tamper(p.dir(), "INSERT INTO focus(session, task_id) VALUES('', 'T999')");
    CHECK(schema(p) == std::set<std::string>{"focus-missing-task:T999"});
    fix_cleanly(p);
  }
  SECTION("a claim held by a session that does not exist is released") {
    tamper(p.dir(), "DELETE FROM sessions WHERE id = '" + session + "'");
    CHECK(schema(p) == std::set<std::string>{"focus-missing-session:T002"});
    json::Value fixed = fix_cleanly(p);
    CHECK(fixed["repairs"].as_array()[0]["session"].as_string() == session);
    CHECK(p.query("tasks", "show", R"({"id":"T002"})").data["status"].as_string() == "pending");
  }
  SECTION("a claim kept by an ended session") {
    tamper(p.dir(), "UPDATE sessions SET status = 'ended', ended_at = updated_at WHERE id = '" + session + "'");
    CHECK(schema(p) == std::set<std::string>{"focus-ended-session:T002"});
    fix_cleanly(p);
  }
  SECTION("a focus on a task that is no longer active") {
    tamper(p.dir(), "UPDATE tasks SET status = 'pending' WHERE id = 'T002'");
    CHECK(schema(p) == std::set<std::string>{"focus-not-active:T002"});
    CHECK(found(test::as_report(p.query("validate", "task", R"({"id":"T002"})")).data["problems"]) ==
          std::set<std::string>{"focus-not-active:T002"});
    fix_cleanly(p);
    CHECK(p.query("session", "show", std::string(R"({"id":")") + session + "\"}").data["focus"].is_null());
  }
  SECTION("one task claimed twice, one session with two tasks") {
    tamper(p.dir(), "DROP INDEX focus_task; ALTER TABLE focus RENAME TO focus_old;"
                    "CREATE TABLE focus(session TEXT, task_id TEXT NOT NULL);"
                    "INSERT INTO focus SELECT session, task_id FROM focus_old; DROP TABLE focus_old;"
                    "INSERT INTO focus VALUES('" + session + "', 'T004'); UPDATE tasks SET status = 'active' WHERE id = 'T004';"
                    "INSERT INTO focus VALUES('', 'T004')");
    auto problems = schema(p);
    CHECK(problems == std::set<std::string>{"one-claim-per-task:T004", "one-active-task-per-session"});
  }
  SECTION("session rows") {
    tamper(p.dir(), "UPDATE sessions SET status = 'ended' WHERE id = '" + session + "'; DELETE FROM focus;"
                    "INSERT INTO sessions(id, scope, status, created_at, updated_at) VALUES('ses_zombie', 'global', 'zombie', 1, 1)");
    CHECK(schema(p) == std::set<std::string>{"session-ended-at", "session-status"});
    auto fixed = p.mutate("validate", "fix");
    CHECK(found(fixed.data["remaining"]) == std::set<std::string>{"session-status"});
    CHECK(p.query("session", "show", std::string(R"({"id":")") + session + "\"}").data["endedAt"].is_string());
  }
}

TEST_CASE("derived data: the search index and foreign keys", "[validate]") {
  test::Project p;
  plant(p);
  SECTION("a task missing from the search index is found again after the repair") {
    if (test::on_postgresql()) {
      // A generated column there: no index row to lose, and every task is found.
      CHECK(schema(p).empty());
      CHECK(table_as_rows(p.query("tasks", "find", R"({"query":"chore"})").data).size() == 1);
      return;
    }
    // T004 neither in the index nor noted for it (tasks_fts_tail).
    tamper(p.dir(), "DELETE FROM tasks_fts WHERE rowid = 4; DELETE FROM tasks_fts_tail WHERE num = 4; "
                    "INSERT INTO tasks_fts(rowid, title) VALUES(77, 'ghost')");
    CHECK(schema(p) == std::set<std::string>{"search-index:T004", "search-index"});
    CHECK(table_as_rows(p.query("tasks", "find", R"({"query":"chore"})").data).size() == 0);
    fix_cleanly(p);
    CHECK(table_as_rows(p.query("tasks", "find", R"({"query":"chore"})").data).size() == 1);
    CHECK(table_as_rows(p.query("tasks", "find", R"({"query":"ghost"})").data).size() == 0);
  }
  SECTION("words of the index missing from its list of words are found, and listed again by the repair") {
    if (test::on_postgresql()) return;  // a search there reads the tsvector: no list of words
    // The noted tasks folded into the index behind the store's back: their words are in the index
    // but not in tasks_fts_terms, which a search expands its words into.
    tamper(p.dir(), "INSERT INTO tasks_fts(rowid, title) SELECT t.num, t.title FROM tasks t "
                    "WHERE t.num IN (SELECT num FROM tasks_fts_tail); DELETE FROM tasks_fts_tail");
    Envelope report = test::as_report(p.query("validate", "schema"));
    CHECK(found(report.data["problems"]) == std::set<std::string>{"search-index"});
    CHECK(report.data["problems"].as_array()[0]["message"].as_string().find("words of the search index") !=
          std::string::npos);
    CHECK(table_as_rows(p.query("tasks", "find", R"({"query":"chore"})").data).size() == 0);
    json::Value fixed = fix_cleanly(p);
    std::string actions;
    for (const auto& repair : fixed["repairs"].as_array()) actions += repair["action"].as_string() + "\n";
    CHECK(actions.find("missing words listed") != std::string::npos);
    CHECK(table_as_rows(p.query("tasks", "find", R"({"query":"chore"})").data).size() == 1);
  }
  SECTION("an audit change without its row") {
    if (test::on_postgresql()) {
      // The server enforces the reference: such a row cannot be written.
      CHECK_THROWS(test::run_sql(p.dir() / ".cleo" / "tasks.db",
                                 "INSERT INTO audit_changes(seq, task_id, field) VALUES(999, 'T001', 'title')"));
      return;
    }
    tamper(p.dir(), "INSERT INTO audit_changes(seq, task_id, field) VALUES(999, 'T001', 'title')");
    auto report = test::as_report(p.query("validate", "schema"));
    CHECK(found(report.data["problems"]) == std::set<std::string>{"foreign-key"});
    CHECK(report.data["problems"].as_array()[0]["message"].as_string().find("audit_changes") != std::string::npos);
  }
  SECTION("quick mode and the problem limit") {
    tamper(p.dir(), "UPDATE tasks SET completed_at = NULL WHERE status = 'done'; UPDATE tasks SET title = 'x' WHERE id IN ('T001','T002')");
    auto report = test::as_report(p.query("validate", "schema", R"({"quick":true,"limit":1})"));
    CHECK(report.data["total"].as_int() == 3 + report.data["byCheck"]["trail"].as_int());
    CHECK(report.data["byCheck"]["trail"].as_int() == 3);  // T005's completedAt, T001's and T002's titles
    CHECK(report.data["problems"].size() == 1);
    CHECK(report.warnings.size() == 1);  // truncated (the repair is the error's fix)
  }
}

TEST_CASE("compliance results are recorded with who ran them and summarised", "[validate][compliance]") {
  test::Project p;
  plant(p);  // binds the session of agent "claude"
  CHECK(code_of(test::as_report(p.query("validate", "compliance"))) == "E_NO_DATA");
  auto first = p.mutate("validate", "compliance.record",
                        R"({"check":"protocol.implementation","passed":true,"id":"T002","score":90})");
  REQUIRE(first.success);
  CHECK(first.data["recorded"].as_int() == 1);
  REQUIRE(p.mutate("validate", "compliance.record",
                   R"({"check":"protocol.implementation","passed":false,"id":"T004","score":40,"details":{"missing":["tests"]}})")
              .success);
  REQUIRE(p.mutate("validate", "compliance.record", R"({"check":"protocol.research","passed":true})").success);

  auto all = test::as_report(p.query("validate", "compliance"));
  REQUIRE(all.success);
  CHECK(all.data["runs"].as_int() == 3);
  CHECK(all.data["passed"].as_int() == 2);
  CHECK(all.data["failed"].as_int() == 1);
  CHECK(all.data["passRate"].as_double() == Approx(0.667));
  auto checks = all.data["checks"].as_array();
  REQUIRE(checks.size() == 2);
  CHECK(checks[0]["check"].as_string() == "protocol.implementation");
  CHECK(checks[0]["runs"].as_int() == 2);
  CHECK(checks[0]["passRate"].as_double() == Approx(0.5));
  CHECK(checks[0]["averageScore"].as_double() == Approx(65.0));
  CHECK_FALSE(checks[0]["lastPassed"].as_bool());
  CHECK(checks[1]["averageScore"].is_null());
  auto failures = all.data["recentFailures"].as_array();
  REQUIRE(failures.size() == 1);
  CHECK(failures[0]["id"].as_string() == "T004");
  CHECK(failures[0]["details"]["missing"].as_array()[0].as_string() == "tests");
  CHECK(failures[0]["agent"].as_string() == "claude");
  CHECK(failures[0]["session"].is_string());

  CHECK(test::as_report(p.query("validate", "compliance", R"({"id":"T002"})")).data["passRate"].as_double() == Approx(1.0));
  CHECK(test::as_report(p.query("validate", "compliance", R"({"check":"protocol.research"})")).data["runs"].as_int() == 1);
  CHECK(code_of(test::as_report(p.query("validate", "compliance", R"({"since":"2030-01-01"})"))) == "E_NO_DATA");
  CHECK(code_of(test::as_report(p.query("validate", "compliance", R"({"since":"last week"})"))) == "E_VALIDATION");
  // The record is audited against the task it checked.
  auto history = p.query("tasks", "history", R"({"id":"T004"})").data.as_array();
  CHECK(history[0]["operation"].as_string() == "validate.compliance.record");

  CHECK(code_of(p.mutate("validate", "compliance.record", R"({"check":"x","passed":true,"id":"T404"})")) == "E_NOT_FOUND");
  CHECK(code_of(p.mutate("validate", "compliance.record", R"({"check":"Bad Name","passed":true})")) == "E_VALIDATION");
  CHECK(code_of(p.mutate("validate", "compliance.record", R"({"check":"x"})")) == "E_INVALID_PARAMS");
  CHECK(code_of(p.mutate("validate", "compliance.record", R"({"check":"x","passed":true,"score":101})")) ==
        "E_VALIDATION");
  CHECK(test::as_report(p.query("validate", "compliance")).data["runs"].as_int() == 3);
}

TEST_CASE("a task changed behind the audit trail's back is found: by validate, by validate audit, and fixed only by recording it", "[validate][audit][hardening]") {
  test::Project p;
  plant(p);
  REQUIRE(test::as_report(p.query("validate", "audit")).data["valid"] == json::Value(true));
  // Hand edits of the tasks table: a field, a row inserted, a row deleted. The chain still holds.
  tamper(p.dir(), "UPDATE tasks SET title = 'Login form (edited by hand)', priority = 'critical' WHERE id = 'T002'");
  auto audit = test::as_report(p.query("validate", "audit"));
  CHECK(audit.data["valid"] == json::Value(false));
  CHECK_FALSE(audit.data.contains("firstBroken"));  // the chain itself holds
  REQUIRE(audit.data["state"]["differences"].is_array());
  std::set<std::string> fields;
  for (const auto& d : audit.data["state"]["differences"].as_array()) fields.insert(d["id"].as_string() + "." + d["field"].as_string());
  CHECK(fields == std::set<std::string>{"T002.title", "T002.priority"});
  CHECK_FALSE(audit.warnings.empty());
  Envelope schema_report = test::as_report(p.query("validate", "schema"));
  CHECK(schema_report.data["byCheck"]["trail"] == json::Value(2));

  SECTION("a task deleted by hand, one inserted by hand") {
    tamper(p.dir(), "DELETE FROM task_deps WHERE task_id = 'T004' OR depends_on = 'T004'; DELETE FROM tasks WHERE id = 'T004'");
    auto again = test::as_report(p.query("validate", "audit"));
    bool gone = false;
    for (const auto& d : again.data["state"]["differences"].as_array())
      gone = gone || (d["id"] == json::Value("T004") && d["field"] == json::Value("task") && d["stored"].is_null());
    CHECK(gone);
  }
  SECTION("validate.fix writes the stored values into the trail, audited, and the store verifies again") {
    Envelope fixed = p.mutate("validate", "fix");
    REQUIRE(fixed.success);
    CHECK(fixed.data["valid"] == json::Value(true));
    auto after = test::as_report(p.query("validate", "audit"));
    CHECK(after.data["valid"] == json::Value(true));
    auto history = p.query("tasks", "history", R"({"id":"T002","field":"title"})");
    REQUIRE(history.success);
    CHECK(history.data.as_array()[0]["operation"] == json::Value("validate.fix"));
  }
}

TEST_CASE("a seal leaves a record outside the store: a trail cut short below it is caught", "[validate][audit][hardening]") {
  test::Project p;
  plant(p);
  Envelope sealed = p.mutate("system", "epoch.seal", R"({"name":"before-cut"})");
  REQUIRE(sealed.success);
  CHECK(sealed.data["record"] == json::Value(".cleo/audit-seals.jsonl"));
  CHECK(sealed.data["trailer"].as_string().starts_with("CLEO-Audit-Seal: before-cut "));
  CHECK(std::filesystem::exists(p.dir() / ".cleo" / "audit-seals.jsonl"));
  REQUIRE(test::as_report(p.query("validate", "audit")).data["valid"] == json::Value(true));
  p.add(R"({"title":"After the seal"})");
  // The tail of the trail removed, the seal's own row with it: the chain that is left still
  // verifies, and nothing in the store remembers the seal — the record outside it does.
  const std::string sealed_seq = std::to_string(sealed.data["seq"].as_int());
  tamper(p.dir(), "DELETE FROM audit_changes WHERE seq > " + sealed_seq + "; DELETE FROM audit WHERE seq > " + sealed_seq +
                      "; DELETE FROM tasks WHERE id = 'T007'");
  auto audit = test::as_report(p.query("validate", "audit"));
  CHECK_FALSE(audit.data.contains("firstBroken"));
  CHECK(audit.data["valid"] == json::Value(false));
  REQUIRE(audit.data["seals"]["broken"].is_array());
  CHECK(audit.data["seals"]["broken"].as_array()[0]["name"] == json::Value("before-cut"));
  // Cut below the sealed row itself.
  tamper(p.dir(), "DELETE FROM audit_changes WHERE seq >= " + sealed_seq + "; DELETE FROM audit WHERE seq >= " + sealed_seq);
  auto cut = test::as_report(p.query("validate", "audit"));
  CHECK(cut.data["valid"] == json::Value(false));
  CHECK(cut.data["seals"]["broken"].as_array()[0]["why"].as_string().find("removed") != std::string::npos);
}
