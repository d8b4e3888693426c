// Moving from the original CLEO (issue 38): tasks.import reads its stores — the v0.x JSON files
// and the later SQLite tasks.db — keeping the tasks' ids, hierarchy, dependencies, labels, notes
// with their times, acceptance criteria, statuses, archive state and times; sessions and config
// come along where they have a place, the log is counted. One transaction, one audit row that
// undo takes back whole; odd and broken stores are refused plainly with nothing half-imported.
// The fixtures are written here from the original's schemas (schemas/*.schema.json at v0.91.0,
// the Drizzle schema of tasks.db at v2026.2.4 and on its main branch, brain.db's first migration
// and its memory-schema.ts on the main branch). Runs on both backends.
#include <catch2/catch.hpp>

#include <algorithm>
#include <fstream>
#include <map>
#include <sstream>

#include "core/sha256.h"
#include "core/text.h"
#include "gateway/mcp_syntax.h"
#include "domains/tasks/original_store.h"
#include "unit/test_support.h"

using namespace ct;

namespace {

namespace fs = std::filesystem;

Envelope must(Envelope e) {
  INFO(to_json(e, McpAdvice(registry())));
  REQUIRE(e.success);
  return e;
}

std::string code_of(const Envelope& e) { return test::code_of(e); }

void write(const fs::path& file, std::string_view text) {
  fs::create_directories(file.parent_path());
  std::ofstream(file, std::ios::binary | std::ios::trunc) << text;
}

/// `text` with its first `from` replaced by `to` (a fixture made odd).
std::string replaced(std::string_view text, std::string_view from, std::string_view to) {
  std::string out(text);
  const auto at = out.find(from);
  REQUIRE(at != std::string::npos);
  return out.replace(at, from.size(), to);
}

std::string bytes_of(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

/// A SQLite file written with the sqlite3 library (not through any store of ours).
void write_db(const fs::path& file, const std::string& sql) {
  fs::create_directories(file.parent_path());
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open(file.c_str(), &db) == SQLITE_OK);
  char* error = nullptr;
  const int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &error);
  INFO((error ? error : ""));
  sqlite3_free(error);
  sqlite3_close(db);
  REQUIRE(rc == SQLITE_OK);
}

// --- the v0.x JSON store (schemas/todo.schema.json 2.10.0, archive 2.4.0, sessions 1.0.0, log 2.4.0,
// config 2.10.0) ----------------------------------------------------------------------------------

constexpr std::string_view kTodo = R"({
  "version": "2.10.0",
  "project": {"name": "demo", "currentPhase": "core",
              "phases": {"setup": {"order": 1, "name": "Setup", "status": "completed", "startedAt": "2025-10-01T00:00:00Z",
                                   "completedAt": "2025-10-31T00:00:00Z"},
                         "core": {"order": 2, "name": "Core", "status": "active", "startedAt": "2025-11-01T00:00:00Z"}}},
  "lastUpdated": "2025-11-21T12:00:00Z",
  "_meta": {"schemaVersion": "2.10.0", "checksum": "0123456789abcdef", "configVersion": "2.10.0",
            "multiSessionEnabled": true, "generation": 42},
  "focus": {"currentTask": "T003", "sessionNote": "working on the login API"},
  "tasks": [
    {"id": "T001", "title": "Build the auth system", "description": "Login, logout and sessions", "status": "pending",
     "priority": "high", "type": "epic", "position": 1, "positionVersion": 3, "phase": "core", "labels": ["auth", "security"],
     "createdAt": "2025-11-01T09:00:00Z", "updatedAt": "2025-11-20T09:00:00Z", "epicLifecycle": "active"},
    {"id": "T003", "title": "Wire the login API", "status": "active", "priority": "critical", "type": "task",
     "parentId": "T001", "position": 2, "depends": ["T002"], "origin": "feature-request",
     "relates": [{"taskId": "T005", "type": "spawned-from", "reason": "came out of the spike"}],
     "createdAt": "2025-11-06T09:00:00Z", "updatedAt": "2025-11-21T12:00:00Z"},
    {"id": "T002", "title": "Design the login form", "description": "Design the login form", "status": "done",
     "priority": "medium", "type": "task", "parentId": "T001", "position": 1, "size": "small",
     "files": ["src/login.tsx"], "acceptance": ["Shows errors inline", "Remembers the email"],
     "notes": ["2025-11-03 10:15:00 UTC: sketched three layouts", "[2025-11-05T16:00:00Z] picked the second", "no time here"],
     "createdAt": "2025-11-02T09:00:00Z", "updatedAt": "2025-11-05T17:00:00Z", "completedAt": "2025-11-05T17:00:00Z",
     "verification": {"passed": true, "round": 1, "gates": {"implemented": true}}},
    {"id": "T004", "title": "Check the token expiry", "status": "blocked", "blockedBy": "waiting for the API keys",
     "priority": "low", "type": "subtask", "parentId": "T003", "createdAt": "2025-11-07T09:00:00Z"},
    {"id": "T007", "title": "Try a magic link", "status": "cancelled", "priority": "low",
     "createdAt": "2025-11-08T09:00:00Z", "cancelledAt": "2025-11-09T09:00:00Z",
     "cancellationReason": "not needed after all"}
  ],
  "labels": {"auth": ["T001"], "security": ["T001"]}
})";

constexpr std::string_view kArchive = R"({
  "version": "2.4.0", "project": "demo",
  "_meta": {"schemaVersion": "2.4.0", "totalArchived": 1, "lastArchived": "2025-11-10T09:00:00Z"},
  "archivedTasks": [
    {"id": "T005", "title": "Spike the auth library", "status": "done", "priority": "medium",
     "createdAt": "2025-10-01T09:00:00Z", "completedAt": "2025-10-03T09:00:00Z",
     "notes": ["2025-10-02 08:00:00 UTC: tried two libraries"],
     "_archive": {"archivedAt": "2025-11-10T09:00:00Z", "reason": "auto", "archiveSource": "auto",
                  "sessionId": "session_20251110_090000_abcdef", "cycleTimeDays": 2,
                  "relationshipState": {"hadChildren": false, "parentId": null},
                  "restoreInfo": {"originalStatus": "active", "canRestore": true}}}
  ],
  "statistics": {"cancelled": 0}
})";

constexpr std::string_view kSessions = R"({
  "version": "1.0.0", "project": "demo",
  "_meta": {"schemaVersion": "1.0.0", "checksum": "0123456789abcdef", "lastModified": "2025-11-21T12:00:00Z"},
  "config": {"maxConcurrentSessions": 5},
  "sessions": [
    {"id": "session_20251120_090000_a1b2c3", "status": "active", "name": "auth work", "agentId": "opus-1",
     "scope": {"type": "epic", "rootTaskId": "T001", "computedTaskIds": ["T001", "T002", "T003"]},
     "focus": {"currentTask": "T003", "sessionNote": "login API half done", "nextAction": "add the refresh call"},
     "startedAt": "2025-11-20T09:00:00Z", "lastActivity": "2025-11-21T12:00:00Z", "resumeCount": 1,
     "stats": {"tasksCompleted": 1}}
  ],
  "sessionHistory": [
    {"id": "session_20251101_080000_ffffff", "name": "planning", "scope": {"type": "task", "rootTaskId": "T001"},
     "startedAt": "2025-11-01T08:00:00Z", "endedAt": "2025-11-01T10:00:00Z", "endReason": "completed",
     "endNote": "epic planned"}
  ]
})";

constexpr std::string_view kLog = R"({
  "version": "2.4.0", "project": "demo",
  "_meta": {"schemaVersion": "2.4.0", "totalEntries": 3, "firstEntry": "2025-11-01T09:00:00Z",
            "lastEntry": "2025-11-06T09:00:00Z"},
  "entries": [
    {"id": "log_000000000001", "timestamp": "2025-11-01T09:00:00Z", "action": "task_created", "actor": "claude",
     "taskId": "T001"},
    {"id": "log_000000000002", "timestamp": "2025-11-05T17:00:00Z", "action": "status_changed", "actor": "claude",
     "taskId": "T002", "before": {"status": "active"}, "after": {"status": "done"}},
    {"id": "log_000000000003", "timestamp": "2025-11-06T09:00:00Z", "action": "task_created", "actor": "human",
     "taskId": "T003"}
  ]
})";

constexpr std::string_view kConfig = R"({
  "version": "2.10.0", "_meta": {"schemaVersion": "2.10.0"},
  "session": {"enforcement": "off", "maxConcurrent": 7, "sessionTimeoutHours": 2, "requireSessionNote": true},
  "hierarchy": {"maxDepth": 3, "maxSiblings": 0},
  "archive": {"daysUntilArchive": 7},
  "agentOutputs": {"directory": "claudedocs/agent-outputs", "manifestFile": "MANIFEST.jsonl"},
  "validation": {"testing": {"command": "npm test"}},
  "project": {"status": {"health": "unknown"}}
})";

/// The original's .cleo/ folder, inside the project (an agent may read it there).
fs::path write_json_store(const fs::path& root, bool whole = true) {
  const fs::path dir = root / "old" / ".cleo";
  write(dir / "todo.json", kTodo);
  if (whole) {
    write(dir / "todo-archive.json", kArchive);
    write(dir / "sessions.json", kSessions);
    write(dir / "todo-log.json", kLog);
    write(dir / "config.json", kConfig);
  }
  return dir;
}

json::Value from(std::string_view path, bool dry_run = false) {
  json::Value params = json::Value::object();
  params.set("from", std::string(path));
  if (dry_run) params.set("dryRun", true);
  return params;
}

Envelope import(test::Project& p, json::Value params) {
  return p.router().dispatch({Gateway::Mutate, "tasks", "import", std::move(params)});
}

/// A person's import (`ct import` in a terminal): the only one that applies the original's config.
Envelope import_as_person(test::Project& p, const json::Value& params) {
  return p.mutate_as_person("tasks", "import", params.dump());
}

json::Value show(test::Project& p, std::string_view id) {
  return must(p.query("tasks", "show", R"({"id":")" + std::string(id) + R"("})")).data;
}

std::size_t task_count(test::Project& p) {
  Envelope listed = p.query("tasks", "list", R"({"archived":"include"})");
  return listed.data.is_array() ? listed.data.size() : 0;
}

std::size_t session_count(test::Project& p) {
  Envelope listed = p.query("session", "list", R"({"includeArchived":true})");
  return listed.data.is_array() ? listed.data.size() : 0;
}

/// Nothing of a refused import is left: no task, no session, the config as it was.
void nothing_imported(test::Project& p, const std::string& config_before) {
  CHECK(task_count(p) == 0);
  CHECK(session_count(p) == 0);
  CHECK(bytes_of(p.dir() / ".cleo" / "config.json") == config_before);
}

}  // namespace

TEST_CASE("the original's JSON store comes with its ids, hierarchy, states, times, notes, sessions and config",
          "[import][original]") {
  test::Project p;
  write_json_store(p.dir());
  Envelope imported = must(import_as_person(p, from("old/.cleo")));
  const json::Value& data = imported.data;
  CHECK(data["imported"] == json::Value(6));
  CHECK(data["format"] == json::Value("original"));
  CHECK(data["generation"] == json::Value("json"));
  CHECK(data["archived"] == json::Value(1));
  CHECK(data["lastId"] == json::Value("T007"));
  CHECK(data["sessions"] == json::Value(2));
  CHECK_FALSE(data.contains("idMap"));

  json::Value epic = show(p, "T001");
  CHECK(epic["type"] == json::Value("epic"));
  CHECK(epic["status"] == json::Value("pending"));
  CHECK(epic["priority"] == json::Value("high"));
  CHECK(epic["labels"] == test::parse_json(R"(["auth","security"])"));
  CHECK(epic["phase"] == json::Value("core"));
  CHECK(epic["createdAt"] == json::Value("2025-11-01T09:00:00Z"));
  CHECK(epic["updatedAt"] == json::Value("2025-11-20T09:00:00Z"));

  json::Value form = show(p, "T002");
  CHECK(form["parent"] == json::Value("T001"));
  CHECK(form["status"] == json::Value("done"));
  CHECK(form["completedAt"] == json::Value("2025-11-05T17:00:00Z"));
  CHECK_FALSE(form.contains("description"));  // it only repeated the title
  CHECK(form["acceptance"] == test::parse_json(R"(["Shows errors inline","Remembers the email"])"));
  CHECK(form["files"] == test::parse_json(R"(["src/login.tsx"])"));
  CHECK(form["size"] == json::Value("small"));
  CHECK(form["notes"] == test::parse_json(R"([{"at":"2025-11-03T10:15:00Z","text":"sketched three layouts"},
                                             {"at":"2025-11-05T16:00:00Z","text":"picked the second"},
                                             {"at":"2025-11-05T16:00:00Z","text":"no time here"}])"));

  json::Value api = show(p, "T003");
  CHECK(api["status"] == json::Value("pending"));  // active there: a claim is made with tasks.start here
  CHECK(api["priority"] == json::Value("critical"));
  CHECK(api["depends"] == test::parse_json(R"(["T002"])"));
  CHECK(api["labels"] == test::parse_json(R"(["origin:feature-request"])"));
  CHECK(api["relates"] == test::parse_json(R"([{"id":"T005","type":"spawned-from","reason":"came out of the spike"}])"));
  // Siblings keep the original's order (position), whatever the file's.
  CHECK(form["position"] == json::Value(1));
  CHECK(api["position"] == json::Value(2));

  json::Value expiry = show(p, "T004");
  CHECK(expiry["type"] == json::Value("subtask"));
  CHECK(expiry["parent"] == json::Value("T003"));
  CHECK(expiry["status"] == json::Value("blocked"));
  CHECK(expiry["blockedBy"] == json::Value("waiting for the API keys"));

  json::Value spike = show(p, "T005");
  CHECK(spike["archived"] == json::Value(true));
  CHECK(spike["status"] == json::Value("done"));
  CHECK(spike["archivedAt"] == json::Value("2025-11-10T09:00:00Z"));
  CHECK(spike["archiveReason"] == json::Value("auto"));
  CHECK(spike["completedAt"] == json::Value("2025-10-03T09:00:00Z"));

  json::Value magic = show(p, "T007");
  CHECK(magic["status"] == json::Value("cancelled"));
  CHECK(magic["cancellationReason"] == json::Value("not needed after all"));
  CHECK(magic["cancelledAt"] == json::Value("2025-11-09T09:00:00Z"));

  // The id counter goes on after the highest id imported.
  CHECK(p.add(R"({"title":"A new task after the import"})") == "T008");

  // Sessions: ids of this store's form, scope and notes kept; the active one suspended.
  json::Value work = must(p.query("session", "show", R"({"id":"ses_20251120090000a1b2c3"})")).data;
  CHECK(work["status"] == json::Value("suspended"));
  CHECK(work["scope"] == json::Value("epic:T001"));
  CHECK(work["agent"] == json::Value("opus-1"));
  CHECK(work["name"] == json::Value("auth work"));
  CHECK(work["nextAction"] == json::Value("add the refresh call"));
  json::Value planning = must(p.query("session", "show", R"({"id":"ses_20251101080000ffffff"})")).data;
  CHECK(planning["status"] == json::Value("ended"));
  CHECK(planning["scope"] == json::Value("task:T001"));
  CHECK(planning["endedAt"] == json::Value("2025-11-01T10:00:00Z"));

  // Config: the keys with an equivalent here, where this project still had the default.
  CHECK(data["config"]["session.enforcement"] == json::Value("none"));  // off there
  CHECK(data["config"]["session.maxConcurrent"] == json::Value(7));
  CHECK(data["config"]["session.idleMinutes"] == json::Value(120));
  CHECK(data["config"]["research.manifestFile"] == json::Value("claudedocs/agent-outputs/MANIFEST.jsonl"));
  CHECK(data["config"]["project.currentPhase"] == json::Value("core"));
  CHECK_FALSE(data["config"].contains("hierarchy.maxDepth"));  // already 3 here
  auto config = Config::load(p.dir() / ".cleo" / "config.json");
  REQUIRE(config);
  CHECK(config->get_string("session.enforcement") == "none");
  CHECK(config->get_int("session.maxConcurrent") == 7);

  // One audit row for all of it.
  Envelope log = must(p.query("system", "log", R"({"limit":5})"));
  std::size_t imports = 0;
  for (const auto& row : log.data.as_array())
    if (row["operation"] == json::Value("tasks.import")) ++imports;
  CHECK(imports == 1);
  CHECK(test::as_report(p.query("validate", "schema")).data["valid"] == json::Value(true));
}

TEST_CASE("the dry run says what maps where and what has no place, with counts, and writes nothing",
          "[import][original]") {
  test::Project p;
  write_json_store(p.dir());
  const std::string config_before = bytes_of(p.dir() / ".cleo" / "config.json");
  Envelope dry = must(import(p, from("old/.cleo", true)));
  const json::Value& data = dry.data;
  CHECK(data["dryRun"] == json::Value(true));
  CHECK(data["imported"] == json::Value(6));
  CHECK(data["mapped"]["task.parentId"] == json::Value("parent"));
  CHECK(data["mapped"]["task.notes"] == json::Value("notes (with their times)"));
  CHECK(data["mapped"]["task._archive.archivedAt"] == json::Value("archivedAt"));
  CHECK(data["mapped"]["session.scope"] == json::Value("scope"));
  CHECK(data["mapped"]["config.session.enforcement"] == json::Value("session.enforcement"));
  CHECK(data["mapped"]["config.session.sessionTimeoutHours"] == json::Value("session.idleMinutes"));
  const json::Value& unmapped = data["unmapped"];
  CHECK(unmapped["task.epicLifecycle"] == json::Value(1));
  CHECK(unmapped["task.verification"] == json::Value(1));
  CHECK(unmapped["task._archive.archiveSource"] == json::Value(1));
  CHECK(unmapped["session.stats"] == json::Value(1));
  CHECK(unmapped["session.focus.currentTask"] == json::Value(1));
  CHECK(unmapped["sessionHistory.endReason"] == json::Value(1));
  CHECK(unmapped["todo.json project.phases"] == json::Value(2));
  CHECK(unmapped["todo-log.json task_created"] == json::Value(2));
  CHECK(unmapped["todo-log.json status_changed"] == json::Value(1));
  CHECK(unmapped["config.archive.daysUntilArchive"] == json::Value(1));
  CHECK(unmapped["config.validation.testing.command"] == json::Value(1));  // runs a program: a person sets it
  CHECK_FALSE(unmapped.contains("task.positionVersion"));                  // derived, not a loss
  bool said_active = false;
  for (const auto& warning : test::warnings_of(dry)) said_active = said_active || warning.find("active → pending") != std::string::npos;
  CHECK(said_active);
  nothing_imported(p, config_before);
}

TEST_CASE("undo takes a whole import back: tasks, sessions and config; undoing the undo brings it again",
          "[import][original]") {
  test::Project p;
  write_json_store(p.dir());
  const std::string config_before = bytes_of(p.dir() / ".cleo" / "config.json");
  must(import_as_person(p, from("old/.cleo")));
  REQUIRE(task_count(p) == 6);
  // An agent does not take back what a person's import set among the keys only people set.
  Envelope refused = p.mutate("tasks", "undo");
  CHECK(test::code_of(refused) == "E_MUTATION_DISABLED");
  CHECK(mcp_text(refused.error->fix, registry()).find("`ct undo ") != std::string::npos);
  REQUIRE(task_count(p) == 6);
  Envelope undone = must(p.mutate_as_person("tasks", "undo"));
  CHECK(undone.data["operation"] == json::Value("tasks.import"));
  nothing_imported(p, config_before);

  // Undoing the undo (by its seq) redoes the import.
  Envelope log = must(p.query("system", "log", R"({"limit":1})"));
  const std::int64_t undo_seq = log.data.as_array().front()["seq"].as_int();
  must(p.mutate_as_person("tasks", "undo", R"({"seq":)" + std::to_string(undo_seq) + "}"));
  CHECK(task_count(p) == 6);
  CHECK(session_count(p) == 2);
  auto config = Config::load(p.dir() / ".cleo" / "config.json");
  REQUIRE(config);
  CHECK(config->get_int("session.maxConcurrent") == 7);
}

TEST_CASE("a round trip: what tasks.export writes after an import is the original's tasks, mapped as documented",
          "[import][original]") {
  test::Project p;
  write_json_store(p.dir());
  must(import(p, from("old/.cleo")));
  Envelope exported = must(p.query("tasks", "export", R"({"includeArchived":true})"));
  std::map<std::string, json::Value> out;
  for (const auto& task : exported.data["tasks"].as_array()) out[task["id"].as_string()] = task;

  const json::Value todo = test::parse_json(kTodo);
  const json::Value archive = test::parse_json(kArchive);
  std::vector<json::Value> originals;
  for (const auto& task : todo["tasks"].as_array()) originals.push_back(task);
  for (const auto& task : archive["archivedTasks"].as_array()) originals.push_back(task);
  REQUIRE(out.size() == originals.size());
  for (const auto& original : originals) {
    const std::string id = original["id"].as_string();
    INFO(id);
    REQUIRE(out.contains(id));
    const json::Value& task = out[id];
    CHECK(task["title"] == original["title"]);
    const std::string status = original["status"].as_string();
    CHECK(task["status"] == json::Value(status == "active" ? "pending" : status));
    CHECK(task["priority"] == original["priority"]);
    CHECK(task["parent"] == original["parentId"]);
    CHECK(task["depends"] == original["depends"]);
    CHECK(task["acceptance"] == original["acceptance"]);
    CHECK(task["files"] == original["files"]);
    CHECK(task["phase"] == original["phase"]);
    CHECK(task["size"] == original["size"]);
    CHECK(task["blockedBy"] == original["blockedBy"]);
    CHECK(task["createdAt"] == original["createdAt"]);
    CHECK(task["completedAt"] == original["completedAt"]);
    CHECK(task["cancelledAt"] == original["cancelledAt"]);
    CHECK(task["cancellationReason"] == original["cancellationReason"]);
    if (original["type"] == json::Value("epic")) CHECK(task["type"] == json::Value("epic"));
    if (original["updatedAt"].is_string()) CHECK(task["updatedAt"] == original["updatedAt"]);
    // Labels, and the origin as a label.
    json::Value labels = original["labels"].is_array() ? original["labels"] : json::Value::array();
    if (original["origin"].is_string()) labels.push_back("origin:" + original["origin"].as_string());
    CHECK(task["labels"] == (labels.empty() ? json::Value() : labels));
    // Notes: their text without the time it started with, at that time.
    const json::Value& notes = original["notes"];
    CHECK(task["notes"].size() == notes.size());
    for (std::size_t i = 0; i < notes.size() && i < task["notes"].size(); ++i) {
      const std::string& text = task["notes"].as_array()[i]["text"].as_string();
      CHECK(notes.as_array()[i].as_string().ends_with(text));
    }
    // Links, in this store's words.
    json::Value relates = json::Value();
    if (original["relates"].is_array()) {
      relates = json::Value::array();
      for (const auto& link : original["relates"].as_array()) {
        json::Value item = json::Value::object();
        item.set("id", link["taskId"]);
        item.set("type", link["type"]);
        item.set("reason", link["reason"]);
        relates.push_back(std::move(item));
      }
    }
    CHECK(task["relates"] == relates);
    // The archive.
    const bool archived = original.contains("_archive");
    CHECK(task["archived"] == (archived ? json::Value(true) : json::Value()));
    if (archived) {
      CHECK(task["archivedAt"] == original["_archive"]["archivedAt"]);
      CHECK(task["archiveReason"] == original["_archive"]["reason"]);
    }
  }
}

TEST_CASE("ids this store holds already are refused by name, and nothing is imported", "[import][original]") {
  test::Project p;
  write_json_store(p.dir());
  p.add(R"({"title":"Already here one"})");
  p.add(R"({"title":"Already here two"})");
  const std::string config_before = bytes_of(p.dir() / ".cleo" / "config.json");
  Envelope refused = import(p, from("old/.cleo"));
  REQUIRE_FALSE(refused.success);
  // Not E_ID_COLLISION: that code is retryable, and the same import would fail again.
  CHECK(code_of(refused) == "E_VALIDATION");
  CHECK_FALSE(refused.error->retryable());
  CHECK(refused.error->details["taken"] == test::parse_json(R"(["T001","T002"])"));
  CHECK(refused.error->message.find("T001, T002") != std::string::npos);
  CHECK(refused.error->message.find("never renumbered") != std::string::npos);
  CHECK(task_count(p) == 2);
  CHECK(session_count(p) == 0);
  CHECK(bytes_of(p.dir() / ".cleo" / "config.json") == config_before);
}

TEST_CASE("the later SQLite tasks.db comes the same way, read without a change to the file", "[import][original]") {
  test::Project p;
  // The tables of the original's Drizzle schema (src/store/schema.ts at v2026.2.4), written in SQL.
  const fs::path db = p.dir() / "old" / ".cleo" / "tasks.db";
  write_db(db, R"(
    CREATE TABLE tasks (id TEXT PRIMARY KEY, title TEXT NOT NULL, description TEXT,
      status TEXT NOT NULL DEFAULT 'pending', priority TEXT NOT NULL DEFAULT 'medium', type TEXT, parent_id TEXT,
      phase TEXT, size TEXT, position INTEGER, position_version INTEGER DEFAULT 0, labels_json TEXT DEFAULT '[]',
      notes_json TEXT DEFAULT '[]', acceptance_json TEXT DEFAULT '[]', files_json TEXT DEFAULT '[]', origin TEXT,
      blocked_by TEXT, epic_lifecycle TEXT, no_auto_complete INTEGER, created_at TEXT NOT NULL DEFAULT (datetime('now')),
      updated_at TEXT, completed_at TEXT, cancelled_at TEXT, cancellation_reason TEXT, archived_at TEXT,
      archive_reason TEXT, cycle_time_days INTEGER, verification_json TEXT, created_by TEXT, modified_by TEXT,
      session_id TEXT);
    CREATE INDEX idx_tasks_status ON tasks(status);
    CREATE TABLE task_dependencies (task_id TEXT NOT NULL REFERENCES tasks(id) ON DELETE CASCADE,
      depends_on TEXT NOT NULL REFERENCES tasks(id) ON DELETE CASCADE, PRIMARY KEY (task_id, depends_on));
    CREATE TABLE task_relations (task_id TEXT NOT NULL REFERENCES tasks(id) ON DELETE CASCADE,
      related_to TEXT NOT NULL REFERENCES tasks(id) ON DELETE CASCADE, relation_type TEXT NOT NULL DEFAULT 'related',
      PRIMARY KEY (task_id, related_to));
    CREATE TABLE sessions (id TEXT PRIMARY KEY, name TEXT NOT NULL, status TEXT NOT NULL DEFAULT 'active',
      scope_json TEXT NOT NULL DEFAULT '{}', current_focus TEXT, focus_set_at TEXT, agent TEXT,
      notes_json TEXT DEFAULT '[]', tasks_completed_json TEXT DEFAULT '[]', tasks_created_json TEXT DEFAULT '[]',
      started_at TEXT NOT NULL DEFAULT (datetime('now')), ended_at TEXT);
    CREATE TABLE session_focus_history (id INTEGER PRIMARY KEY AUTOINCREMENT,
      session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE, task_id TEXT NOT NULL,
      set_at TEXT NOT NULL DEFAULT (datetime('now')), cleared_at TEXT);
    CREATE TABLE schema_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
    INSERT INTO schema_meta VALUES ('schemaVersion', '2.0.0');
    INSERT INTO tasks (id, title, status, priority, type, position, labels_json, created_at, updated_at, epic_lifecycle)
      VALUES ('T001', 'Build the auth system', 'pending', 'high', 'epic', 1, '["auth"]', '2025-11-01 09:00:00',
              '2025-11-20 09:00:00', 'active');
    INSERT INTO tasks (id, title, status, priority, type, parent_id, position, notes_json, acceptance_json, created_at,
                       completed_at, verification_json)
      VALUES ('T002', 'Design the login form', 'done', 'medium', 'task', 'T001', 1,
              '["2025-11-03 10:15:00 UTC: sketched three layouts"]', '["Shows errors inline"]', '2025-11-02 09:00:00',
              '2025-11-05 17:00:00', '{"passed":true}');
    INSERT INTO tasks (id, title, status, priority, type, parent_id, position, created_at, origin)
      VALUES ('T003', 'Wire the login API', 'active', 'critical', 'task', 'T001', 2, '2025-11-06 09:00:00', 'bug-report');
    INSERT INTO tasks (id, title, status, priority, created_at, completed_at, archived_at, archive_reason, cycle_time_days)
      VALUES ('T004', 'Spike the auth library', 'archived', 'medium', '2025-10-01 09:00:00', '2025-10-03 09:00:00',
              '2025-11-10 09:00:00', 'completed', 2);
    INSERT INTO tasks (id, title, status, priority, created_at, cancelled_at, cancellation_reason, archived_at)
      VALUES ('T005', 'Try a magic link', 'archived', 'low', '2025-10-05 09:00:00', '2025-10-06 09:00:00',
              'not needed after all', '2025-11-10 09:00:00');
    INSERT INTO tasks (id, title, status, priority, created_at) VALUES ('T006', 'Maybe add passkeys', 'proposed', 'low',
      '2025-11-15 09:00:00');
    INSERT INTO task_dependencies VALUES ('T003', 'T002');
    INSERT INTO task_relations VALUES ('T003', 'T004', 'blocks');
    INSERT INTO sessions (id, name, status, scope_json, current_focus, agent, notes_json, started_at)
      VALUES ('session-1763629200000-a1b2c3', 'auth work', 'active', '{"type":"epic","epicId":"T001"}', 'T003', 'claude',
              '["half way there"]', '2025-11-20 09:00:00');
    INSERT INTO sessions (id, name, status, scope_json, started_at, ended_at)
      VALUES ('ses_20251101080000_ffffff', 'old run', 'orphaned', '{"type":"global"}', '2025-11-01 08:00:00',
              '2025-11-01 10:00:00');
    INSERT INTO session_focus_history (session_id, task_id, set_at) VALUES ('session-1763629200000-a1b2c3', 'T003',
      '2025-11-20 09:05:00'), ('session-1763629200000-a1b2c3', 'T002', '2025-11-20 09:01:00');
  )");
  // JSON files the original kept beside it when it moved to SQLite: left unread.
  write(db.parent_path() / "todo.json", R"({"tasks":[{"id":"T999","title":"Stale copy"}],"_meta":{}})");
  const std::string before = sha256_hex(bytes_of(db));

  Envelope dry = must(import(p, from("old/.cleo", true)));
  CHECK(dry.data["generation"] == json::Value("sqlite"));
  CHECK(dry.data["mapped"]["tasks.parent_id"] == json::Value("parent"));
  CHECK(dry.data["mapped"]["tasks.notes_json"] == json::Value("notes (with their times)"));
  CHECK(dry.data["mapped"]["task_dependencies"] == json::Value("depends"));
  CHECK(dry.data["mapped"]["sessions.scope_json"] == json::Value("scope"));
  CHECK(dry.data["unmapped"]["session_focus_history"] == json::Value(2));
  CHECK(dry.data["unmapped"]["tasks.epic_lifecycle"] == json::Value(1));
  CHECK(dry.data["unmapped"]["tasks.verification_json"] == json::Value(1));
  CHECK(dry.data["unmapped"]["sessions.current_focus"] == json::Value(1));
  CHECK_FALSE(dry.data["unmapped"].contains("schema_meta"));
  CHECK(task_count(p) == 0);

  Envelope imported = must(import(p, from("old/.cleo/tasks.db")));
  CHECK(imported.data["imported"] == json::Value(6));
  CHECK(imported.data["archived"] == json::Value(2));
  CHECK(show(p, "T001")["createdAt"] == json::Value("2025-11-01T09:00:00Z"));
  CHECK(show(p, "T002")["notes"] == test::parse_json(R"([{"at":"2025-11-03T10:15:00Z","text":"sketched three layouts"}])"));
  CHECK(show(p, "T002")["acceptance"] == test::parse_json(R"(["Shows errors inline"])"));
  json::Value api = show(p, "T003");
  CHECK(api["status"] == json::Value("pending"));
  CHECK(api["depends"] == test::parse_json(R"(["T002"])"));
  CHECK(api["labels"] == test::parse_json(R"(["origin:bug-report"])"));
  CHECK(api["relates"] == test::parse_json(R"([{"id":"T004","type":"relates-to","reason":"blocks"}])"));
  json::Value spike = show(p, "T004");
  CHECK(spike["status"] == json::Value("done"));
  CHECK(spike["archived"] == json::Value(true));
  CHECK(spike["archiveReason"] == json::Value("completed"));
  json::Value magic = show(p, "T005");
  CHECK(magic["status"] == json::Value("cancelled"));
  CHECK(magic["archived"] == json::Value(true));
  CHECK(magic["cancellationReason"] == json::Value("not needed after all"));
  json::Value passkeys = show(p, "T006");
  CHECK(passkeys["status"] == json::Value("pending"));
  CHECK(passkeys["labels"] == test::parse_json(R"(["proposed"])"));
  CHECK(task_count(p) == 6);  // not T999 of the stale todo.json

  json::Value work = must(p.query("session", "show", R"({"id":"ses_1763629200000a1b2c3"})")).data;
  CHECK(work["status"] == json::Value("suspended"));
  CHECK(work["scope"] == json::Value("epic:T001"));
  CHECK(work["notes"] == json::Value("half way there"));
  json::Value old_run = must(p.query("session", "show", R"({"id":"ses_20251101080000ffffff"})")).data;
  CHECK(old_run["status"] == json::Value("ended"));
  CHECK(old_run["scope"] == json::Value("global"));

  CHECK(sha256_hex(bytes_of(db)) == before);  // the user's file, as it was
  CHECK(test::as_report(p.query("validate", "schema")).data["valid"] == json::Value(true));
}

TEST_CASE("cleo.db of the original's main branch: its tasks_ tables", "[import][original]") {
  test::Project p;
  const fs::path db = p.dir() / "old" / ".cleo" / "cleo.db";
  write_db(db, R"(
    CREATE TABLE tasks_tasks (id TEXT PRIMARY KEY, title TEXT NOT NULL, status TEXT NOT NULL, priority TEXT NOT NULL,
      type TEXT, role TEXT NOT NULL DEFAULT 'work', parent_id TEXT, labels_json TEXT DEFAULT '[]',
      created_at TEXT NOT NULL, idempotency_key TEXT);
    CREATE TABLE tasks_task_labels (task_id TEXT NOT NULL, label TEXT NOT NULL, PRIMARY KEY (task_id, label));
    CREATE TABLE tasks_task_acceptance_criteria (id TEXT PRIMARY KEY, task_id TEXT NOT NULL, ordinal INTEGER NOT NULL,
      kind TEXT NOT NULL DEFAULT 'text', text TEXT NOT NULL);
    CREATE TABLE tasks_sessions (id TEXT PRIMARY KEY, name TEXT NOT NULL, status TEXT NOT NULL, scope_json TEXT NOT NULL,
      started_at TEXT NOT NULL, owner_auth_token TEXT);
    CREATE TABLE nexus_nodes (id TEXT PRIMARY KEY, label TEXT);
    INSERT INTO tasks_tasks (id, title, status, priority, type, created_at) VALUES
      ('T010', 'A saga of work', 'pending', 'high', 'saga', '2025-04-01T09:00:00Z'),
      ('T011', 'An epic below it', 'pending', 'medium', 'epic', '2025-04-01T10:00:00Z');
    UPDATE tasks_tasks SET parent_id = 'T010' WHERE id = 'T011';
    INSERT INTO tasks_task_labels VALUES ('T010', 'roadmap');
    INSERT INTO tasks_task_acceptance_criteria VALUES ('ac2', 'T010', 2, 'text', 'second'), ('ac1', 'T010', 1, 'text', 'first');
    INSERT INTO tasks_sessions VALUES ('ses_20250401090000_a1b2c3', 'saga run', 'suspended', '{"type":"epic","epicId":"T010"}',
      '2025-04-01T09:00:00Z', 'secret-token');
    INSERT INTO nexus_nodes VALUES ('n1', 'a symbol');
  )");
  Envelope imported = must(import(p, from("old")));  // the project around .cleo/ names it too
  CHECK(imported.data["store"].as_string().ends_with("cleo.db"));
  json::Value saga = show(p, "T010");
  CHECK(saga["type"] == json::Value("epic"));
  CHECK(saga["labels"] == test::parse_json(R"(["roadmap"])"));
  CHECK(saga["acceptance"] == test::parse_json(R"(["first","second"])"));
  json::Value epic = show(p, "T011");
  CHECK(epic["type"] == json::Value("task"));  // an epic stands at the top here
  CHECK(epic["labels"] == test::parse_json(R"(["epic"])"));
  CHECK(imported.data["unmapped"]["tasks_tasks.role"] == json::Value(2));
  CHECK(must(p.query("session", "show", R"({"id":"ses_20250401090000a1b2c3"})")).data["scope"] == json::Value("epic:T010"));
  CHECK(imported.data.dump().find("secret-token") == std::string::npos);
  bool said_other_tables = false;
  for (const auto& warning : test::warnings_of(imported)) said_other_tables = said_other_tables || warning.find("outside the tasks domain") != std::string::npos;
  CHECK(said_other_tables);
}

TEST_CASE("odd and broken stores are refused plainly, and nothing is half-imported", "[import][original]") {
  test::Project p;
  const std::string config_before = bytes_of(p.dir() / ".cleo" / "config.json");
  const fs::path dir = p.dir() / "old" / ".cleo";
  auto refused = [&](std::string_view path = "old/.cleo") {
    Envelope e = import(p, from(path));
    INFO(to_json(e, McpAdvice(registry())));
    REQUIRE_FALSE(e.success);
    nothing_imported(p, config_before);
    return e;
  };

  SECTION("an empty store folder") {
    fs::create_directories(dir);
    Envelope e = refused();
    CHECK(code_of(e) == "E_NOT_FOUND");
    CHECK(e.error->message.find("neither todo.json nor tasks.db") != std::string::npos);
  }
  SECTION("nothing at the path") {
    CHECK(code_of(refused("no/such/place")) == "E_NOT_FOUND");
  }
  SECTION("todo.json cut short") {
    write(dir / "todo.json", kTodo.substr(0, kTodo.size() / 2));
    Envelope e = refused();
    CHECK(code_of(e) == "E_INVALID_INPUT");
    CHECK(e.error->message.find("todo.json is not valid JSON") != std::string::npos);
    CHECK(e.error->message.find("cut short") != std::string::npos);
  }
  SECTION("the archive cut short: the store is refused whole, not imported without it") {
    write_json_store(p.dir());
    write(dir / "todo-archive.json", kArchive.substr(0, 100));
    CHECK(refused().error->message.find("todo-archive.json is not valid JSON") != std::string::npos);
  }
  SECTION("an unknown status") {
    write_json_store(p.dir());
    write(dir / "todo.json", replaced(kTodo, R"("status": "blocked")", R"("status": "frozen")"));
    Envelope e = refused();
    CHECK(code_of(e) == "E_VALIDATION");
    CHECK(e.error->message.find("(T004) status: expected one of pending|active|blocked|done|cancelled") != std::string::npos);
  }
  SECTION("wrong types") {
    write(dir / "todo.json", replaced(kTodo, R"("depends": ["T002"])", R"("depends": "T002")"));
    Envelope e = refused();
    CHECK(code_of(e) == "E_INVALID_PARAMS");
    REQUIRE(e.error->details["records"].is_array());
    CHECK(e.error->details["records"].as_array().front()["id"] == json::Value("T003"));
    CHECK(e.error->message.find("depends: expected an array of ids") != std::string::npos);
  }
  SECTION("a task without its creation time") {
    write(dir / "todo.json", replaced(kTodo, R"("createdAt": "2025-11-07T09:00:00Z")", R"("createdAt": 5)"));
    CHECK(refused().error->message.find("createdAt: expected an ISO-8601 time") != std::string::npos);
  }
  SECTION("one id twice (the list and the archive)") {
    write_json_store(p.dir());
    write(dir / "todo-archive.json", replaced(kArchive, R"("id": "T005")", R"("id": "T003")"));
    Envelope e = refused();
    CHECK(code_of(e) == "E_INVALID_PARAMS");
    CHECK(e.error->message.find("have the same id") != std::string::npos);
  }
  SECTION("a parent and a dependency the store does not hold") {
    // Without the archive, T003's link to T005 dangles; a dependency on a task long deleted too.
    write(dir / "todo.json", replaced(kTodo, R"("depends": ["T002"])", R"("depends": ["T002", "T099"])"));
    Envelope e = refused();
    CHECK(code_of(e) == "E_VALIDATION");
    CHECK(e.error->details["count"] == json::Value(2));
    CHECK(e.error->details["references"].dump().find("T099") != std::string::npos);
    CHECK(e.error->fix.plain_text().find("skipInvalid") != std::string::npos);
    // With skipInvalid the references are dropped, each said, and the rest comes.
    json::Value params = from("old/.cleo");
    params.set("skipInvalid", true);
    Envelope skipped = must(import(p, params));
    CHECK(skipped.data["imported"] == json::Value(5));
    CHECK(show(p, "T003")["depends"] == test::parse_json(R"(["T002"])"));
    CHECK_FALSE(show(p, "T003").contains("relates"));
    bool said = false;
    for (const auto& warning : test::warnings_of(skipped)) said = said || warning.find("depends T099 is not in the store") != std::string::npos;
    CHECK(said);
  }
  SECTION("a session whose scope names a task the store does not hold") {
    write_json_store(p.dir());
    write(dir / "sessions.json", replaced(kSessions, R"("rootTaskId": "T001", "computed)", R"("rootTaskId": "T404", "computed)"));
    Envelope e = refused();
    CHECK(e.error->details["references"].dump().find("T404") != std::string::npos);
  }
  SECTION("two sessions whose ids become one here") {
    write_json_store(p.dir());
    write(dir / "sessions.json", replaced(kSessions, R"("id": "session_20251101_080000_ffffff")",
                                          R"("id": "session-20251120090000-a1b2c3")"));
    Envelope e = refused();
    CHECK(code_of(e) == "E_VALIDATION");
    CHECK(e.error->message.find("both become ses_20251120090000a1b2c3 here") != std::string::npos);
  }
  SECTION("a database of another schema") {
    write_db(dir / "tasks.db", "CREATE TABLE notes(id TEXT, body TEXT); CREATE TABLE tags(name TEXT);");
    Envelope e = refused();
    CHECK(code_of(e) == "E_INVALID_INPUT");
    CHECK(e.error->message.find("without the original CLEO's tables") != std::string::npos);
    CHECK(e.error->message.find("notes, tags") != std::string::npos);
  }
  SECTION("this program's own store is not the original's") {
    fs::create_directories(dir);
    REQUIRE(open_sqlite_store(dir / "tasks.db", StoreOptions{.create = true}));
    CHECK(refused().error->message.find("a store of this program") != std::string::npos);
  }
  SECTION("a file that is not a database where tasks.db belongs") {
    write(dir / "tasks.db", "not a database, just words");
    Envelope e = refused();
    CHECK(code_of(e) == "E_FILE_ERROR");
    CHECK(e.error->message.find("is not a SQLite database") != std::string::npos);
  }
  SECTION("a file past the size one import reads") {
    fs::create_directories(dir);
    { std::ofstream(dir / "todo.json") << "{}"; }
    fs::resize_file(dir / "todo.json", (std::uintmax_t{33} << 20));
    Envelope e = refused();
    CHECK(code_of(e) == "E_VALIDATION");
    CHECK(e.error->message.find("MiB, more than the 32 MiB") != std::string::npos);
  }
  SECTION("todo.json sent as records: the whole store is asked for") {
    json::Value params = json::Value::object();
    params.set("tasks", test::parse_json(kTodo));
    Envelope e = import(p, params);
    REQUIRE_FALSE(e.success);
    CHECK(code_of(e) == "E_INVALID_PARAMS");
    CHECK(e.error->message.find("original CLEO's todo.json") != std::string::npos);
  }
}

TEST_CASE("optional files may be missing: todo.json alone is a store", "[import][original]") {
  test::Project p;
  // Without the archive, T003's link to the archived T005 has nothing to name: drop it first.
  write(p.dir() / "old" / ".cleo" / "todo.json",
        replaced(kTodo, R"("relates": [{"taskId": "T005", "type": "spawned-from", "reason": "came out of the spike"}],)", ""));
  Envelope imported = must(import(p, from("old/.cleo/todo.json")));
  CHECK(imported.data["imported"] == json::Value(5));
  CHECK_FALSE(imported.data.contains("sessions"));
  bool said = false;
  for (const auto& warning : test::warnings_of(imported)) said = said || warning.find("todo-archive.json is not in") != std::string::npos;
  CHECK(said);
}

TEST_CASE("an agent reads a store outside the project only where a person allowed it", "[import][original]") {
  test::Project p;
  test::TempDir elsewhere;
  write_json_store(elsewhere.path());
  const std::string path = (elsewhere.path() / "old" / ".cleo").string();
  Envelope refused = import(p, from(path));
  REQUIRE_FALSE(refused.success);
  CHECK(code_of(refused) == "E_VALIDATION");
  CHECK(refused.error->message.find("outside the project") != std::string::npos);
  Envelope person = p.mutate_as_person("tasks", "import", from(path, true).dump());
  CHECK(person.success);
}

TEST_CASE("a value set here is kept over the original's, and said", "[import][original]") {
  test::Project p;
  must(p.mutate_as_person("system", "config.set", R"({"key":"session.maxConcurrent","value":"5"})"));
  write_json_store(p.dir());
  Envelope imported = must(import_as_person(p, from("old/.cleo")));
  CHECK_FALSE(imported.data["config"].contains("session.maxConcurrent"));
  bool said = false;
  for (const auto& warning : test::warnings_of(imported)) said = said || warning.find("kept this project's 5") != std::string::npos;
  CHECK(said);
  auto config = Config::load(p.dir() / ".cleo" / "config.json");
  REQUIRE(config);
  CHECK(config->get_int("session.maxConcurrent") == 5);
}

TEST_CASE("issue 52: an agent's import applies none of the original's config; each key is a warning naming "
          "how to set it", "[import][original]") {
  test::Project p;
  write_json_store(p.dir());
  const std::string config_before = bytes_of(p.dir() / ".cleo" / "config.json");
  Envelope imported = must(import(p, from("old/.cleo")));
  CHECK(imported.data["imported"] == json::Value(6));  // the tasks come
  CHECK_FALSE(imported.data.contains("config"));
  CHECK(bytes_of(p.dir() / ".cleo" / "config.json") == config_before);
  std::vector<std::string> said;
  for (const auto& warning : imported.warnings) {
    const std::string text = mcp_text(warning, registry());
    if (text.find(" not applied: another project's configuration is applied only when a person imports it") !=
        std::string::npos)
      said.push_back(text);
  }
  auto says = [&](std::string_view part) {
    return std::ranges::any_of(said, [&](const std::string& text) { return text.find(part) != std::string::npos; });
  };
  // A key only people set: what a person runs. A key anyone sets: the call that sets it.
  CHECK(says("config session.enforcement \"none\" not applied"));
  CHECK(says("a person runs `ct config set session.enforcement none` in a terminal"));
  CHECK(says("cleo_mutate {domain:'system', operation:'config.set', params:{key:'project.currentPhase', value:\"core\"}}"));
}

TEST_CASE("session ids of this store's form from the original's", "[import][original]") {
  CHECK(tasks::session_id_for("session_20260211_143000_a1b2c3") == "ses_20260211143000a1b2c3");
  CHECK(tasks::session_id_for("session-1762000000000-a1b2c3") == "ses_1762000000000a1b2c3");
  CHECK(tasks::session_id_for("ses_20260211143000_A1B2C3") == "ses_20260211143000a1b2c3");
  CHECK(tasks::session_id_for("???").starts_with("ses_"));
  CHECK(tasks::session_id_for("???").size() == 20);
}

// --- issue 50 #17: the original's memory (its brain) and its sessions' handoffs -----------------

namespace {

/// tasks.db at v2026.3.x (src/store/schema.ts: the tasks table as at v2026.2.4, sessions with the
/// handoff and debrief columns of v2026.3.4), three tasks and a session that handed off.
constexpr std::string_view kTasksDb2026_3 = R"(
  CREATE TABLE tasks (id TEXT PRIMARY KEY, title TEXT NOT NULL, description TEXT, status TEXT NOT NULL DEFAULT 'pending',
    priority TEXT NOT NULL DEFAULT 'medium', type TEXT, parent_id TEXT, phase TEXT, size TEXT, position INTEGER,
    position_version INTEGER DEFAULT 0, labels_json TEXT DEFAULT '[]', notes_json TEXT DEFAULT '[]',
    acceptance_json TEXT DEFAULT '[]', files_json TEXT DEFAULT '[]', origin TEXT, blocked_by TEXT, epic_lifecycle TEXT,
    no_auto_complete INTEGER, created_at TEXT NOT NULL DEFAULT (datetime('now')), updated_at TEXT, completed_at TEXT,
    cancelled_at TEXT, cancellation_reason TEXT, archived_at TEXT, archive_reason TEXT, cycle_time_days INTEGER,
    verification_json TEXT, created_by TEXT, modified_by TEXT, session_id TEXT);
  CREATE TABLE sessions (id TEXT PRIMARY KEY, name TEXT NOT NULL, status TEXT NOT NULL DEFAULT 'active',
    scope_json TEXT NOT NULL DEFAULT '{}', current_task TEXT, task_started_at TEXT, agent TEXT,
    notes_json TEXT DEFAULT '[]', tasks_completed_json TEXT DEFAULT '[]', tasks_created_json TEXT DEFAULT '[]',
    handoff_json TEXT, started_at TEXT NOT NULL DEFAULT (datetime('now')), ended_at TEXT, previous_session_id TEXT,
    next_session_id TEXT, agent_identifier TEXT, handoff_consumed_at TEXT, handoff_consumed_by TEXT, debrief_json TEXT,
    stats_json TEXT, resume_count INTEGER, grade_mode INTEGER);
  CREATE TABLE schema_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
  INSERT INTO tasks (id, title, status, priority, type, position, created_at)
    VALUES ('T001', 'Build the auth system', 'pending', 'high', 'epic', 1, '2025-03-01 09:00:00');
  INSERT INTO tasks (id, title, status, priority, type, parent_id, position, created_at, completed_at)
    VALUES ('T002', 'Design the login form', 'done', 'medium', 'task', 'T001', 1, '2025-03-02 09:00:00', '2025-03-04 17:00:00');
  INSERT INTO tasks (id, title, status, priority, type, parent_id, position, created_at)
    VALUES ('T003', 'Wire the token refresh', 'pending', 'high', 'task', 'T001', 2, '2025-03-03 09:00:00');
  INSERT INTO sessions (id, name, status, scope_json, agent, started_at, ended_at, handoff_json)
    VALUES ('session-1772701200000-a1b2c3', 'login form', 'ended', '{"type":"epic","epicId":"T001"}', 'opus-1',
            '2025-03-04 09:00:00', '2025-03-04 17:30:00',
            '{"lastTask":"T002","tasksCompleted":["T002"],"tasksCreated":[],"decisionsRecorded":1,"nextSuggested":["T003"],"openBlockers":[],"openBugs":[],"note":"login form shipped","nextAction":"wire the token refresh next"}');
  INSERT INTO sessions (id, name, status, scope_json, started_at, ended_at, debrief_json)
    VALUES ('session-1772787600000-d4e5f6', 'refresh spike', 'ended', '{"type":"task","rootTaskId":"T003"}',
            '2025-03-05 09:00:00', '2025-03-05 12:00:00',
            '{"handoff":{"lastTask":"T003","tasksCompleted":[],"tasksCreated":[],"decisionsRecorded":0,"nextSuggested":[],"openBlockers":[],"openBugs":[],"nextAction":"measure the clock skew"},"sessionId":"session-1772787600000-d4e5f6","agentIdentifier":null,"startedAt":"2025-03-05T09:00:00Z","endedAt":"2025-03-05T12:00:00Z","durationMinutes":180,"decisions":[{"id":"D9","decision":"spike first"}],"gitState":null,"chainPosition":1,"chainLength":1}');
)";

/// brain.db beside it: the tables of the original's first drizzle-brain migration
/// (packages/core/migrations/drizzle-brain/20260318205549_initial/migration.sql), written as it
/// writes them, and rows as its memory operations leave them.
constexpr std::string_view kBrainDb2026_3 = R"(
  CREATE TABLE IF NOT EXISTS `brain_decisions` (`id` text PRIMARY KEY, `type` text NOT NULL, `decision` text NOT NULL,
    `rationale` text NOT NULL, `confidence` text NOT NULL, `outcome` text, `alternatives_json` text,
    `context_epic_id` text, `context_task_id` text, `context_phase` text,
    `created_at` text DEFAULT (datetime('now')) NOT NULL, `updated_at` text);
  CREATE TABLE IF NOT EXISTS `brain_learnings` (`id` text PRIMARY KEY, `insight` text NOT NULL, `source` text NOT NULL,
    `confidence` real NOT NULL, `actionable` integer DEFAULT false NOT NULL, `application` text,
    `applicable_types_json` text, `created_at` text DEFAULT (datetime('now')) NOT NULL, `updated_at` text);
  CREATE TABLE IF NOT EXISTS `brain_memory_links` (`memory_type` text NOT NULL, `memory_id` text NOT NULL,
    `task_id` text NOT NULL, `link_type` text NOT NULL, `created_at` text DEFAULT (datetime('now')) NOT NULL,
    CONSTRAINT `brain_memory_links_pk` PRIMARY KEY(`memory_type`, `memory_id`, `task_id`, `link_type`));
  CREATE TABLE IF NOT EXISTS `brain_observations` (`id` text PRIMARY KEY, `type` text NOT NULL, `title` text NOT NULL,
    `subtitle` text, `narrative` text, `facts_json` text, `concepts_json` text, `project` text, `files_read_json` text,
    `files_modified_json` text, `source_session_id` text, `source_type` text DEFAULT 'agent' NOT NULL,
    `content_hash` text, `discovery_tokens` integer, `created_at` text DEFAULT (datetime('now')) NOT NULL,
    `updated_at` text);
  CREATE TABLE IF NOT EXISTS `brain_page_edges` (`from_id` text NOT NULL, `to_id` text NOT NULL, `edge_type` text NOT NULL,
    `weight` real DEFAULT 1, `created_at` text DEFAULT (datetime('now')) NOT NULL,
    CONSTRAINT `brain_page_edges_pk` PRIMARY KEY(`from_id`, `to_id`, `edge_type`));
  CREATE TABLE IF NOT EXISTS `brain_page_nodes` (`id` text PRIMARY KEY, `node_type` text NOT NULL, `label` text NOT NULL,
    `metadata_json` text, `created_at` text DEFAULT (datetime('now')) NOT NULL);
  CREATE TABLE IF NOT EXISTS `brain_patterns` (`id` text PRIMARY KEY, `type` text NOT NULL, `pattern` text NOT NULL,
    `context` text NOT NULL, `frequency` integer DEFAULT 1 NOT NULL, `success_rate` real, `impact` text,
    `anti_pattern` text, `mitigation` text, `examples_json` text DEFAULT '[]',
    `extracted_at` text DEFAULT (datetime('now')) NOT NULL, `updated_at` text);
  CREATE TABLE IF NOT EXISTS `brain_schema_meta` (`key` text PRIMARY KEY, `value` text NOT NULL);
  CREATE TABLE IF NOT EXISTS `brain_sticky_notes` (`id` text PRIMARY KEY, `content` text NOT NULL,
    `created_at` text DEFAULT (datetime('now')) NOT NULL, `updated_at` text, `tags_json` text,
    `status` text DEFAULT 'active' NOT NULL, `converted_to_json` text, `color` text, `priority` text,
    `source_type` text DEFAULT 'sticky-note');
  CREATE INDEX IF NOT EXISTS `idx_brain_decisions_type` ON `brain_decisions` (`type`);
  INSERT INTO brain_schema_meta VALUES ('schemaVersion', '1.0.0');
  INSERT INTO brain_decisions (id, type, decision, rationale, confidence, outcome, alternatives_json, context_epic_id,
                               context_task_id, context_phase, created_at)
    VALUES ('D001', 'architecture', 'Keep sessions in SQLite', 'One file to back up and no server to run', 'high',
            'success', '["PostgreSQL","JSON files"]', 'T001', 'T002', 'core', '2025-03-04 10:00:00');
  INSERT INTO brain_decisions (id, type, decision, rationale, confidence, created_at)
    VALUES ('D002', 'technical', 'Refresh tokens rotate on every use, and a refresh token that is presented a second time revokes the whole family of tokens it belongs to, because a second use means it was stolen and replayed by someone other than the client that first received it',
            'The usual advice for public clients', 'medium', '2025-03-05 11:00:00');
  INSERT INTO brain_learnings (id, insight, source, confidence, actionable, application, applicable_types_json, created_at)
    VALUES ('L001', 'Token refresh needs a clock skew margin', 'debugging the refresh spike', 0.8, 1,
            'Allow thirty seconds of skew', '["task"]', '2025-03-05 12:00:00');
  INSERT INTO brain_patterns (id, type, pattern, context, frequency, success_rate, impact, anti_pattern, mitigation,
                              examples_json, extracted_at)
    VALUES ('P001', 'workflow', 'Write the migration before the handler', 'Schema changes of the store', 3, 0.9, 'high',
            'Handlers that assume columns not there yet', 'Run the migration test first', '["T002"]',
            '2025-03-06 09:00:00');
  INSERT INTO brain_observations (id, type, title, subtitle, narrative, facts_json, concepts_json, files_read_json,
                                  files_modified_json, source_session_id, source_type, content_hash, created_at)
    VALUES ('O001', 'discovery', 'The login form validates on blur', 'Twice, in fact',
            'The blur handler is bound on the input and on its wrapper', '["blur fires twice","only in Firefox"]',
            '["forms"]', '["src/login.tsx","src/form.tsx"]', '["src/login.tsx"]', 'session-1772701200000-a1b2c3',
            'agent', 'abc123', '2025-03-04 15:00:00');
  INSERT INTO brain_memory_links VALUES ('decision', 'D001', 'T003', 'applies_to', '2025-03-04 10:00:00'),
                                        ('observation', 'O001', 'T002', 'produced_by', '2025-03-04 15:00:00');
  INSERT INTO brain_sticky_notes (id, content) VALUES ('S1', 'ask about passkeys'), ('S2', 'buy coffee');
  INSERT INTO brain_page_nodes (id, node_type, label) VALUES ('n1', 'task', 'T001');
)";

/// The original's .cleo/ of 2026.3: tasks.db and brain.db (`brain` with `replace` applied).
fs::path write_brain_store(const fs::path& root, std::string_view brain = kBrainDb2026_3) {
  const fs::path dir = root / "old" / ".cleo";
  write_db(dir / "tasks.db", std::string(kTasksDb2026_3));
  write_db(dir / "brain.db", std::string(brain));
  return dir;
}

json::Value memory_entry(test::Project& p, std::string_view id) {
  return must(p.query("memory", "show", R"({"id":")" + std::string(id) + R"("})")).data;
}

std::size_t memory_count(test::Project& p) {
  Envelope listed = p.query("memory", "list", R"({"limit":200})");
  return listed.data.is_array() ? listed.data.size() : 0;
}

bool said(const Envelope& e, std::string_view text) {
  return std::ranges::any_of(test::warnings_of(e), [&](const std::string& warning) { return warning.find(text) != std::string::npos; });
}

}  // namespace

TEST_CASE("issue 50: the original's brain.db comes as memory, with its provenance; handoffs bring their next action",
          "[import][original][memory][issue50]") {
  test::Project p;
  const fs::path dir = write_brain_store(p.dir());
  const std::string before = sha256_hex(bytes_of(dir / "brain.db"));
  Envelope imported = must(import(p, from("old/.cleo")));
  const json::Value& data = imported.data;
  CHECK(data["imported"] == json::Value(3));
  CHECK(data["memory"]["added"] == json::Value(5));
  CHECK(data["memory"]["kinds"] == test::parse_json(R"({"decision":2,"learning":1,"pattern":1,"observation":1})"));
  CHECK(memory_count(p) == 5);

  // A decision: its text the title, rationale, alternatives and outcome the body, where it came from last;
  // its task the source, its epic and linked tasks the scope.
  json::Value decision = memory_entry(p, "M001");
  CHECK(decision["kind"] == json::Value("decision"));
  CHECK(decision["title"] == json::Value("Keep sessions in SQLite"));
  CHECK(decision["body"] == json::Value("One file to back up and no server to run\n\nAlternatives: PostgreSQL; JSON "
                                        "files\n\nOutcome: success\n\nFrom the original CLEO: brain_decisions D001 "
                                        "(architecture; confidence high), 2025-03-04 10:00:00."));
  CHECK(decision["status"] == json::Value("active"));
  CHECK(decision["source"]["task"] == json::Value("T002"));
  CHECK(decision["epic"] == json::Value("T001"));
  CHECK(decision["tasks"] == test::parse_json(R"(["T003"])"));
  // A decision longer than a title: cut there, whole in the body.
  json::Value long_one = memory_entry(p, "M002");
  CHECK(utf8_length(long_one["title"].as_string()) == 200);
  CHECK(long_one["title"].as_string().ends_with("…"));
  CHECK(long_one["body"].as_string().starts_with("Refresh tokens rotate on every use, and a refresh token"));
  CHECK(long_one["body"].as_string().find("by someone other than the client that first received it\n\n") != std::string::npos);
  json::Value learning = memory_entry(p, "M003");
  CHECK(learning["kind"] == json::Value("learning"));
  CHECK(learning["confidence"] == json::Value(0.8));
  CHECK(learning["body"].as_string().find("Apply: Allow thirty seconds of skew") == 0);
  json::Value pattern = memory_entry(p, "M004");
  CHECK(pattern["kind"] == json::Value("pattern"));
  CHECK(pattern["body"].as_string().find("Seen: 3 times, success rate 0.9") != std::string::npos);
  CHECK(pattern["body"].as_string().find("Mitigation: Run the migration test first") != std::string::npos);
  json::Value observation = memory_entry(p, "M005");
  CHECK(observation["kind"] == json::Value("observation"));
  CHECK(observation["files"] == test::parse_json(R"(["src/login.tsx"])"));
  CHECK(observation["tasks"] == test::parse_json(R"(["T002"])"));
  CHECK(observation["body"].as_string().find("- blur fires twice\n- only in Firefox") != std::string::npos);
  CHECK(observation["body"].as_string().ends_with("(discovery), 2025-03-04 15:00:00; session ses_1772701200000a1b2c3."));

  // Where each column went, and what has no place here — with counts, as for the other stores.
  CHECK(data["mapped"]["brain_decisions.context_task_id"] == json::Value("memory decision: source task (taskId)"));
  CHECK(data["mapped"]["brain_memory_links"] == json::Value("memory scope: tasks"));
  CHECK(data["unmapped"]["brain_sticky_notes"] == json::Value(2));
  CHECK(data["unmapped"]["brain_page_nodes"] == json::Value(1));
  CHECK(data["unmapped"]["brain_decisions.context_phase"] == json::Value(1));
  CHECK(data["unmapped"]["brain_learnings.applicable_types_json"] == json::Value(1));
  CHECK(data["unmapped"]["brain_observations.files_read_json"] == json::Value(1));
  CHECK_FALSE(data["unmapped"].contains("brain_schema_meta"));
  CHECK_FALSE(data["unmapped"].contains("brain_observations.content_hash"));  // derived

  // Sessions: the handoff's next action and note (also inside a debrief); what it computed, counted.
  json::Value shipped = must(p.query("session", "show", R"({"id":"ses_1772701200000a1b2c3"})")).data;
  CHECK(shipped["nextAction"] == json::Value("wire the token refresh next"));
  CHECK(shipped["notes"] == json::Value("login form shipped"));
  json::Value spike = must(p.query("session", "show", R"({"id":"ses_1772787600000d4e5f6"})")).data;
  CHECK(spike["nextAction"] == json::Value("measure the clock skew"));
  CHECK(data["mapped"]["sessions.handoff_json.nextAction"] == json::Value("nextAction"));
  CHECK(data["unmapped"]["sessions.handoff_json.nextSuggested"] == json::Value(1));
  CHECK(data["unmapped"]["sessions.debrief_json.decisions"] == json::Value(1));
  CHECK_FALSE(data["unmapped"].contains("sessions.debrief_json.handoff"));

  // One audit row, the user's file as it was, and undo takes the memory back with the rest.
  CHECK(sha256_hex(bytes_of(dir / "brain.db")) == before);
  CHECK(test::as_report(p.query("validate", "schema")).data["valid"] == json::Value(true));
  Envelope undone = must(p.mutate("tasks", "undo"));
  CHECK(undone.data["operation"] == json::Value("tasks.import"));
  CHECK(task_count(p) == 0);
  Envelope active = p.query("memory", "list", R"({"status":["active","proposed"]})");
  CHECK((active.data.is_array() ? active.data.size() : 0) == 0);
  CHECK(memory_entry(p, "M001")["status"] == json::Value("retracted"));
  CHECK(said(undone, "M001, the decision seq"));
}

TEST_CASE("issue 50: imported memory passes memory.observe's checks for the same caller; nothing is overwritten",
          "[import][original][memory][issue50]") {
  test::Project p;
  const std::string config_before = bytes_of(p.dir() / ".cleo" / "config.json");
  auto nothing_in = [&] {
    nothing_imported(p, config_before);
    CHECK(memory_count(p) == 0);
  };

  SECTION("text rules: a control character refuses the import, naming the entry; skipInvalid leaves it out") {
    write_brain_store(p.dir(), replaced(kBrainDb2026_3, "Token refresh needs", "Token \xE2\x80\xAE refresh needs"));
    Envelope refused = import(p, from("old/.cleo"));
    REQUIRE_FALSE(refused.success);
    CHECK(code_of(refused) == "E_VALIDATION");
    CHECK(refused.error->message.find("memory: 1 of 5 entries are invalid; first: memory[2] (brain_learnings L001) title") == 0);
    CHECK(refused.error->message.find("U+202E") != std::string::npos);
    nothing_in();
    json::Value params = from("old/.cleo");
    params.set("skipInvalid", true);
    Envelope skipped = must(import(p, params));
    CHECK(skipped.data["memory"]["added"] == json::Value(4));
    CHECK(skipped.data["skipped"].dump().find("brain_learnings L001") != std::string::npos);
  }
  SECTION("lengths: a body over memory.observe's limit is refused") {
    write_brain_store(p.dir(), replaced(kBrainDb2026_3, "'The usual advice for public clients'", "'" + std::string(4100, 'x') + "'"));
    Envelope refused = import(p, from("old/.cleo"));
    REQUIRE_FALSE(refused.success);
    CHECK(refused.error->message.find("(brain_decisions D002) body: must be at most 4000 characters") != std::string::npos);
    nothing_in();
  }
  SECTION("scope paths: one outside the project is refused; skipInvalid drops it, saying so") {
    write_brain_store(p.dir(), replaced(kBrainDb2026_3, R"('["src/login.tsx"]', 'session-)", R"('["/etc/passwd","src/login.tsx"]', 'session-)"));
    Envelope refused = import(p, from("old/.cleo"));
    REQUIRE_FALSE(refused.success);
    CHECK(refused.error->message.find("or files outside the project") != std::string::npos);
    CHECK(refused.error->details["references"].dump().find("/etc/passwd") != std::string::npos);
    nothing_in();
    json::Value params = from("old/.cleo");
    params.set("skipInvalid", true);
    Envelope skipped = must(import(p, params));
    CHECK(memory_entry(p, "M005")["files"] == test::parse_json(R"(["src/login.tsx"])"));
    CHECK(said(skipped, "files /etc/passwd is outside the project; dropped"));
  }
  SECTION("an absolute path inside the project is made relative") {
    write_brain_store(p.dir(), replaced(kBrainDb2026_3, R"('["src/login.tsx"]', 'session-)",
                                         "'[\"" + (p.dir() / "src" / "login.tsx").string() + "\"]', 'session-"));
    must(import(p, from("old/.cleo")));
    CHECK(memory_entry(p, "M005")["files"] == test::parse_json(R"(["src/login.tsx"])"));
  }
  SECTION("an agent never verifies: a kind people govern is proposed, the original's verification is not carried") {
    must(p.mutate_as_person("system", "config.set", R"({"key":"memory.verifyKinds","value":"[\"decision\"]"})"));
    write_brain_store(p.dir());
    Envelope imported = must(import(p, from("old/.cleo")));
    CHECK(imported.data["memory"]["proposed"] == test::parse_json(R"(["M001","M002"])"));
    CHECK(memory_entry(p, "M001")["status"] == json::Value("proposed"));
    CHECK_FALSE(memory_entry(p, "M001").contains("verifiedBy"));
    CHECK(memory_entry(p, "M003")["status"] == json::Value("active"));
    CHECK(said(imported, "2 memory entries are proposed"));
  }
  SECTION("entries here are never overwritten: their ids stay, the same entry is not added twice") {
    // The learning exactly as the import makes it, recorded here first; and an entry of this project's own.
    must(p.mutate("memory", "observe", R"({"kind":"learning","title":"Token refresh needs a clock skew margin",
        "body":"Apply: Allow thirty seconds of skew\n\nSource: debugging the refresh spike\n\nFrom the original CLEO: brain_learnings L001 (actionable), 2025-03-05 12:00:00."})"));
    must(p.mutate("memory", "observe", R"({"kind":"convention","title":"Tests run in a temp HOME"})"));
    // The pattern nearly as the import makes it (another day): a near repeat, which memory.observe
    // leaves out unless forced.
    must(p.mutate("memory", "observe", R"({"kind":"pattern","title":"Write the migration before the handler",
        "body":"Schema changes of the store\n\nAnti-pattern: Handlers that assume columns not there yet\n\nMitigation: Run the migration test first\n\nExamples: T002\n\nSeen: 3 times, success rate 0.9\n\nFrom the original CLEO: brain_patterns P001 (workflow; impact high), 2025-03-07 09:00:00."})"));
    const json::Value own = memory_entry(p, "M002");
    write_brain_store(p.dir());
    Envelope imported = must(import(p, from("old/.cleo")));
    CHECK(imported.data["memory"]["added"] == json::Value(3));
    CHECK(imported.data["memory"]["held"] == test::parse_json(R"([{"from":"brain_learnings L001","id":"M001"}])"));
    CHECK(imported.data["memory"]["similar"] == test::parse_json(R"([{"from":"brain_patterns P001","ids":["M003"]}])"));
    CHECK(said(imported, "1 memory entry of the original nearly repeat"));
    CHECK(memory_count(p) == 6);
    CHECK(memory_entry(p, "M002") == own);
    CHECK(memory_entry(p, "M004")["title"] == json::Value("Keep sessions in SQLite"));
  }
}

TEST_CASE("issue 50: cleo.db's brain_ tables on the original's main branch; what it invalidated stays behind",
          "[import][original][memory][issue50]") {
  test::Project p;
  const fs::path dir = p.dir() / "old" / ".cleo";
  // The brain's tables as cleo.db holds them (packages/core/src/store/schema/memory-schema.ts at
  // v2026.6: the first columns, then the governance and bitemporal ones).
  write_db(dir / "cleo.db", R"(
    CREATE TABLE tasks_tasks (id TEXT PRIMARY KEY, title TEXT NOT NULL, status TEXT NOT NULL, priority TEXT NOT NULL,
      type TEXT, parent_id TEXT, created_at TEXT NOT NULL);
    CREATE TABLE brain_decisions (id text PRIMARY KEY, type text NOT NULL, decision text NOT NULL, rationale text NOT NULL,
      confidence text NOT NULL, outcome text, alternatives_json text, context_epic_id text, context_task_id text,
      context_phase text, quality_score real, created_at text DEFAULT (datetime('now')) NOT NULL, updated_at text,
      memory_tier text DEFAULT 'medium', memory_type text DEFAULT 'semantic', verified integer DEFAULT false NOT NULL,
      valid_at text DEFAULT (datetime('now')) NOT NULL, invalid_at text, expired_at text, network text DEFAULT 'bank',
      source_confidence text DEFAULT 'agent', citation_count integer DEFAULT 0 NOT NULL, tier_promoted_at text,
      tier_promotion_reason text, content_hash text, provenance_class text DEFAULT 'swept-clean',
      peer_id text DEFAULT 'global' NOT NULL, peer_scope text DEFAULT 'project' NOT NULL, adr_number integer UNIQUE,
      adr_path text, supersedes text, superseded_by text, confirmation_state text DEFAULT 'proposed' NOT NULL,
      decided_by text DEFAULT 'agent' NOT NULL, validator_run_at integer,
      decision_category text DEFAULT 'architectural' NOT NULL);
    CREATE TABLE brain_observations (id text PRIMARY KEY, type text NOT NULL, title text NOT NULL, subtitle text,
      narrative text, facts_json text, concepts_json text, project text, files_read_json text, files_modified_json text,
      source_session_id text, source_type text DEFAULT 'agent' NOT NULL, agent text, content_hash text,
      discovery_tokens integer, quality_score real, created_at text DEFAULT (datetime('now')) NOT NULL, updated_at text,
      memory_tier text DEFAULT 'short', memory_type text DEFAULT 'episodic', verified integer DEFAULT false NOT NULL,
      valid_at text DEFAULT (datetime('now')) NOT NULL, invalid_at text, expired_at text, network text DEFAULT 'observation',
      peer_id text DEFAULT 'global' NOT NULL, peer_scope text DEFAULT 'project' NOT NULL);
    CREATE TABLE brain_attention (id text PRIMARY KEY, scope_kind text NOT NULL, content text NOT NULL);
    CREATE TABLE nexus_nodes (id TEXT PRIMARY KEY, label TEXT);
    INSERT INTO tasks_tasks VALUES ('T010', 'A saga of work', 'pending', 'high', 'epic', NULL, '2025-06-01T09:00:00Z');
    INSERT INTO brain_decisions (id, type, decision, rationale, confidence, context_epic_id, created_at, verified,
                                 confirmation_state, decided_by, adr_number, superseded_by)
      VALUES ('D-1', 'architecture', 'One store per project', 'Agents share it', 'high', 'T010', '2025-06-01 10:00:00', 1,
              'accepted', 'owner', 12, NULL),
             ('D-0', 'architecture', 'A store per agent', 'Isolation', 'low', NULL, '2025-05-01 10:00:00', 0, 'superseded',
              'agent', NULL, 'D-1');
    INSERT INTO brain_observations (id, type, title, narrative, agent, created_at, invalid_at)
      VALUES ('O-1', 'bugfix', 'The saga view lost its filter', 'Fixed by keeping it in the URL', 'sonnet-2',
              '2025-06-02 10:00:00', NULL),
             ('O-2', 'change', 'The cache is warm at start', 'No longer true', 'sonnet-2', '2025-06-02 11:00:00',
              '2025-06-10 00:00:00');
    INSERT INTO brain_attention VALUES ('a1', 'task', 'looking at T010');
    INSERT INTO nexus_nodes VALUES ('n1', 'symbol');
  )");
  // The brain.db the original moved into cleo.db: its copy, not read.
  write_db(dir / "brain.db", std::string(kBrainDb2026_3));
  Envelope imported = must(import(p, from("old/.cleo")));
  const json::Value& data = imported.data;
  CHECK(data["memory"]["added"] == json::Value(2));
  json::Value decision = memory_entry(p, "M001");
  CHECK(decision["title"] == json::Value("One store per project"));
  CHECK(decision["epic"] == json::Value("T010"));
  CHECK_FALSE(decision.contains("verifiedBy"));  // the original's verification is not carried
  CHECK(memory_entry(p, "M002")["body"].as_string().ends_with("(bugfix), 2025-06-02 10:00:00; agent sonnet-2."));
  CHECK(memory_count(p) == 2);
  CHECK(data["unmapped"]["brain_decisions (invalidated or superseded there)"] == json::Value(1));
  CHECK(data["unmapped"]["brain_observations (invalidated or superseded there)"] == json::Value(1));
  CHECK(data["unmapped"]["brain_decisions.verified"] == json::Value(1));
  CHECK(data["unmapped"]["brain_decisions.confirmation_state"] == json::Value(1));
  CHECK(data["unmapped"]["brain_decisions.decided_by"] == json::Value(1));
  CHECK(data["unmapped"]["brain_decisions.adr_number"] == json::Value(1));
  CHECK(data["unmapped"]["brain_attention"] == json::Value(1));
  CHECK_FALSE(data["unmapped"].contains("nexus_nodes"));
  CHECK(said(imported, "brain.db beside cleo.db was not read"));
  CHECK(said(imported, "1 table(s) of cleo.db outside the tasks domain"));
}
