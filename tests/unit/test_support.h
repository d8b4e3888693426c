// Shared helpers for unit tests: a temporary directory and a router on a fresh project.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>

#include <libpq-fe.h>
#include <sqlite3.h>

#include "core/clock.h"
#include "gateway/mcp_syntax.h"
#include "unit/temp_dir.h"
#include "core/json_parse.h"
#include "domains/projection.h"
#include "domains/router.h"
#include "engines/store/open/open_store.h"
#include "engines/store/sqlite/sqlite_store.h"
#include "gateway/product.h"

namespace ct::test {

/// The PostgreSQL server the store tests run against instead of SQLite (CT_TEST_PG_URL, set by
/// the `postgresql` CTest label's run); "" = SQLite.
inline std::string pg_url() {
  const char* url = std::getenv("CT_TEST_PG_URL");
  return url != nullptr ? url : "";
}
inline bool on_postgresql() { return !pg_url().empty(); }

/// The PostgreSQL schema standing for the store file `file` in that mode: every temp dir its own
/// store, and two stores opened on one file share it.
inline std::string pg_schema(const std::filesystem::path& file) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::size_t hash = std::hash<std::string>{}(std::filesystem::absolute(file).string());
  std::string name = "t_";
  for (int i = 0; i < 16; ++i, hash >>= 4) name += kHex[hash & 0xF];
  return name;
}

/// A caller over a router, as a transport is one: its session travels with each call and follows
/// the replies that bind or unbind one.
/// A person, as `ct` at a terminal establishes one (domains/principal.h).
inline Principal test_person() { return Principal::person("tester", "terminal"); }

class Client {
 public:
  explicit Client(std::unique_ptr<Router> router) : router_(std::move(router)) {}
  Envelope dispatch(Request request) {
    request.caller = caller_;
    Envelope envelope = router_->dispatch(request);
    if (envelope.rebind) caller_.session = *envelope.rebind;
    return envelope;
  }
  const std::string& session() const { return caller_.session; }
  void set_session(std::string session) { caller_.session = std::move(session); }
  /// Where query and mutate say they work (a transport's git worktree and branch).
  void set_place(Place place) { caller_.place = std::move(place); }
  /// Who calls (a connection's agent, a person), as a transport would set it.
  void set_principal(Principal principal) { caller_.principal = std::move(principal); }
  void set_agent_label(std::string label) { caller_.agent = std::move(label); }
  Router& router() { return *router_; }

 private:
  std::unique_ptr<Router> router_;
  Caller caller_;
};

/// A clock a test moves by hand; it stands still between moves.
class HandClock final : public Clock {
 public:
  explicit HandClock(std::shared_ptr<TimeMs> time) : time_(std::move(time)) {}
  TimeMs now() override { return *time_; }

 private:
  std::shared_ptr<TimeMs> time_;
};

/// A router on an initialised project in a temp dir, with a fixed clock and a home directory of
/// its own (another temp dir).
class Project {
 public:
  Project() {
    use_own_pg_schema();
    router_ = make_router();
    Envelope init = mutate("system", "init");
    if (!init.success) throw std::runtime_error("init failed: " + to_json(init, McpAdvice(registry())));
  }
  /// A copy of another project's .cleo/ (its store, WAL included, and config): far cheaper than
  /// initialising and seeding a fresh one for every case. `seed`'s router must be idle. On
  /// PostgreSQL the copy gets a schema of its own, filled from the seed's store.
  explicit Project(const Project& seed) {
    std::filesystem::copy(seed.dir() / ".cleo", dir_.path() / ".cleo", std::filesystem::copy_options::recursive);
    if (use_own_pg_schema()) {
      std::filesystem::path copy = dir_.path() / ".cleo" / "seed-copy.db";
      auto copied = project_store(ct::Project{seed.dir()})->copy_to(copy);
      if (!copied) throw std::runtime_error("seed copy: " + copied.error().message);
      auto store = project_store(ct::Project{dir_.path()})->open(StoreOptions{.create = true});
      if (!store || !(*store)->begin(TxKind::Write) || !(*store)->replace_contents_from(copy) || !(*store)->commit())
        throw std::runtime_error("seed copy: cannot fill the copy's store");
      std::filesystem::remove(copy);
    }
    router_ = make_router();
  }

  Envelope query(std::string domain, std::string operation, std::string_view params = "{}") {
    return dispatch({Gateway::Query, std::move(domain), std::move(operation), parse_json(params)});
  }
  Envelope mutate(std::string domain, std::string operation, std::string_view params = "{}") {
    return dispatch({Gateway::Mutate, std::move(domain), std::move(operation), parse_json(params)});
  }
  /// The session query and mutate run in ("" = none): bound and unbound by session operations.
  const std::string& session() const { return caller_.session; }
  void set_session(std::string session) { caller_.session = std::move(session); }
  /// Where query and mutate say they work (a transport's git worktree and branch).
  void set_place(Place place) { caller_.place = std::move(place); }
  /// A mutation by a person at the command line (`ct`), who may also change the config keys only
  /// people set (SetBy::People); `mutate` calls as an agent does.
  Envelope mutate_as_person(std::string domain, std::string operation, std::string_view params = "{}") {
    return router_->dispatch({Gateway::Mutate, std::move(domain), std::move(operation), parse_json(params),
                              {.principal = test_person()}});
  }
  /// tasks.add returning the new id (fails the test run on error).
  std::string add(std::string_view params) {
    Envelope e = mutate("tasks", "add", params);
    if (!e.success) throw std::runtime_error("add failed: " + to_json(e, McpAdvice(registry())));
    return e.data["id"].as_string();
  }
  const std::filesystem::path& dir() const { return dir_.path(); }
  /// The project as its routers see it (a router of a test's own shares it).
  const std::shared_ptr<Workspace>& workspace() const { return workspace_; }
  /// Replaces .cleo/config.json with `json` (on PostgreSQL, keeping the keys that name the store).
  void write_config(std::string_view json) {
    { std::ofstream(dir_.path() / ".cleo" / "config.json", std::ios::trunc) << json; }
    use_own_pg_schema();
  }
  Router& router() { return *router_; }

 private:
  /// On PostgreSQL (CT_TEST_PG_URL), the project's config names the server and a schema of this
  /// project's own, as a team's project would; false on SQLite.
  bool use_own_pg_schema() {
    if (pg_url().empty()) return false;
    const std::filesystem::path config_file = dir_.path() / ".cleo" / "config.json";
    std::filesystem::create_directories(config_file.parent_path());
    auto config = std::filesystem::exists(config_file) ? Config::load(config_file) : Result<Config>(Config{});
    if (!config || !config->set("storage.url", json::Value(pg_url())) ||
        !config->set("storage.schema", json::Value(pg_schema(dir_.path() / ".cleo" / "tasks.db"))) || !config->save(config_file))
      throw std::runtime_error("cannot point the test project at PostgreSQL");
    return true;
  }

  Envelope dispatch(Request request) {
    request.caller = caller_;
    Envelope envelope = router_->dispatch(request);
    if (envelope.rebind) caller_.session = *envelope.rebind;
    return envelope;
  }

  std::unique_ptr<Router> make_router() const {
    RouterOptions options;
    options.home = home_.path();  // user-scope files (skills, agent hosts) never touch the real $HOME
    return std::make_unique<Router>(registry(), workspace_, options,
                                    std::make_unique<FixedClock>(*parse_iso8601("2026-01-01T00:00:00Z")));
  }

  TempDir dir_;
  TempDir home_;
  std::shared_ptr<Workspace> workspace_ = Workspace::open(dir_.path());
  Caller caller_;
  std::unique_ptr<Router> router_;
};

/// A caller on a router of its own whose clock reads `*time` (moved by hand), as another process
/// is — an agent's MCP connection with its principal and label.
struct ClockedClient {
  std::shared_ptr<TimeMs> time;
  std::unique_ptr<Client> client;

  ClockedClient(const Project& p, std::shared_ptr<TimeMs> clock, Principal who = {}, std::string label = "")
      : time(std::move(clock)),
        client(std::make_unique<Client>(std::make_unique<Router>(registry(), Workspace::open(p.dir()), RouterOptions{},
                                                                 std::make_unique<HandClock>(time)))) {
    client->set_principal(std::move(who));
    client->set_agent_label(std::move(label));
  }
  Envelope mutate(std::string domain, std::string operation, std::string_view params = "{}") {
    return client->dispatch({Gateway::Mutate, std::move(domain), std::move(operation), parse_json(params)});
  }
  Envelope query(std::string domain, std::string operation, std::string_view params = "{}") {
    return client->dispatch({Gateway::Query, std::move(domain), std::move(operation), parse_json(params)});
  }
};

/// An agent (ClockedClient) whose clock starts at the tests' fixed time, 2026-01-01T00:00:00Z, and
/// that a test moves by hand: at(ms) is that long after the start.
struct LeaseAgent : ClockedClient {
  static TimeMs start_time() { return *parse_iso8601("2026-01-01T00:00:00Z"); }
  explicit LeaseAgent(const Project& p, std::string label = "")
      : ClockedClient(p, std::make_shared<TimeMs>(start_time()), {}, std::move(label)) {}
  void at(TimeMs after_start) { *time = start_time() + after_start; }
  /// A global session of this name, bound to the agent: its id (throws when refused).
  std::string start_session(std::string_view name) {
    Envelope started = mutate("session", "start", R"({"scope":"global","name":")" + std::string(name) + "\"}");
    if (!started.success) throw std::runtime_error("session.start failed: " + to_json(started, McpAdvice(registry())));
    return client->session();
  }
};

/// Two agents on connections of their own (labels claude and codex) and a person, on one clock
/// that starts at `start` (principals_test.cpp, messages_test.cpp).
struct Fleet {
  explicit Fleet(TimeMs at = *parse_iso8601("2026-01-01T00:00:00Z")) : start(at) {}
  TimeMs start;
  Project p;
  std::shared_ptr<TimeMs> time = std::make_shared<TimeMs>(start);
  ClockedClient a{p, time, Principal::agent("stdio:aaaa", "connection"), "claude"};
  ClockedClient b{p, time, Principal::agent("stdio:bbbb", "connection"), "codex"};
  ClockedClient person{p, time, test_person()};
  void at(TimeMs ms_after_start) { *time = start + ms_after_start; }
  void later(TimeMs ms) { *time += ms; }
};

/// A validate.* reply as its report: a failed check (E_VALIDATION, or a protocol's code from
/// validate.protocol) carries the report, with `valid`, in error.details; this turns it back into
/// {success, data} so tests read passes and failures alike.
inline Envelope as_report(Envelope e) {
  if (e.success || !e.error || !e.error->details["valid"].is_bool()) return e;
  Envelope report;
  report.data = e.error->details;
  if (report.data["warnings"].is_array())
    for (const auto& warning : report.data["warnings"].as_array()) report.warnings.push_back(warning.as_string());
  report.data.erase("warnings");
  return report;
}

/// A reply's warnings as agents read them (their calls in the MCP tools' syntax).
inline std::vector<std::string> warnings_of(const Envelope& e) {
  std::vector<std::string> out;
  for (const auto& warning : e.warnings) out.push_back(mcp_text(warning, registry()));
  return out;
}

/// A reply's data (or any part of it) as agents read it: advice in it (Advice::to_value) written
/// in the MCP tools' syntax, as the envelope's encoder writes it.
inline json::Value as_agents_read(const json::Value& value) { return written(value, McpAdvice(registry())); }

inline std::string code_of(const Envelope& e) {
  if (e.error) return std::string(to_string(e.error->code));
  if (e.note) return std::string(to_string(*e.note));
  return "";
}

/// The backend a store test uses for `file`: SQLite there, or (CT_TEST_PG_URL) its PostgreSQL schema.
inline std::unique_ptr<StoreBackend> backend_for(const std::filesystem::path& file) {
  if (on_postgresql()) return postgresql_store_backend(pg_url(), pg_schema(file));
  return sqlite_store_backend(file);
}

/// A new, empty store in `file` (the store tests' starting point); throws when it cannot be made.
inline std::unique_ptr<Store> create_store(const std::filesystem::path& file, int busy_timeout_ms = 5000) {
  StoreOptions options;
  options.create = true;
  options.busy_timeout_ms = busy_timeout_ms;
  auto store = backend_for(file)->open(options);
  if (!store) throw std::runtime_error("create_store: " + store.error().message);
  return std::move(*store);
}

/// Runs SQL on a store behind the store's back (tests that need data the store itself would never
/// write): on the SQLite file, or in its PostgreSQL schema; throws with the database's message.
inline void run_sql(const std::filesystem::path& db, const std::string& sql) {
  if (on_postgresql()) {
    PGconn* conn = PQconnectdb(pg_url().c_str());
    std::string script = "SET search_path = \"" + pg_schema(db) + "\"; " + sql;
    PGresult* result = PQexec(conn, script.c_str());
    const bool ok = PQresultStatus(result) == PGRES_COMMAND_OK || PQresultStatus(result) == PGRES_TUPLES_OK;
    std::string message = ok ? "" : PQerrorMessage(conn);
    PQclear(result);
    PQfinish(conn);
    if (!ok) throw std::runtime_error("run_sql: " + message);
    return;
  }
  sqlite3* raw = nullptr;
  if (sqlite3_open(db.c_str(), &raw) != SQLITE_OK || sqlite3_exec(raw, sql.c_str(), nullptr, nullptr, nullptr) != SQLITE_OK) {
    std::string message = raw ? sqlite3_errmsg(raw) : "cannot open";
    sqlite3_close(raw);
    throw std::runtime_error("run_sql: " + message);
  }
  sqlite3_close(raw);
}

/// The single integer `sql` answers on an SQLite store (a count).
inline std::int64_t sqlite_number(const std::filesystem::path& db, const std::string& sql) {
  sqlite3* raw = nullptr;
  sqlite3_stmt* stmt = nullptr;
  const bool ok = sqlite3_open_v2(db.c_str(), &raw, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK &&
                  sqlite3_prepare_v2(raw, sql.c_str(), -1, &stmt, nullptr) == SQLITE_OK && sqlite3_step(stmt) == SQLITE_ROW;
  const std::int64_t value = ok ? sqlite3_column_int64(stmt, 0) : 0;
  std::string message = ok ? "" : (raw ? sqlite3_errmsg(raw) : "cannot open");
  sqlite3_finalize(stmt);
  sqlite3_close(raw);
  if (!ok) throw std::runtime_error("sqlite_number: " + message);
  return value;
}

/// SQL that folds the tasks noted in tasks_fts_tail into the search index, as a store does once
/// enough are waiting (engines/store/sqlite/sqlite_store.cpp, fold_index_tail).
inline constexpr const char* kFoldSearchIndex =
    "DELETE FROM tasks_fts WHERE rowid IN (SELECT num FROM tasks_fts_tail); "
    "INSERT INTO tasks_fts(rowid, title, description, labels, notes) SELECT t.num, t.title, t.description, "
    "coalesce((SELECT group_concat(l.value, ' ') FROM json_each(t.labels) l), ''), "
    "coalesce((SELECT group_concat(json_extract(n.value, '$.text'), char(10)) FROM json_each(t.notes) n), '') "
    "FROM tasks t WHERE t.num IN (SELECT num FROM tasks_fts_tail); DELETE FROM tasks_fts_tail; ";

/// What schema v11 (trust, issue 35) adds, taken away: a store as version 10 left it.
inline constexpr const char* kDropTrustV11 =
    "DROP TABLE evidence; DROP TABLE proposals; ALTER TABLE audit DROP COLUMN intent; ";

/// What schema v13 (principals, issue 52) adds, taken away: a store as version 12 left it.
inline constexpr const char* kDropPrincipalsV13 =
    "DROP INDEX sessions_owner; ALTER TABLE audit DROP COLUMN principal; ALTER TABLE sessions DROP COLUMN owner; "
    "ALTER TABLE sessions DROP COLUMN notice; ";

/// What schema v14 (the fleet in worktrees, issue 53) adds, taken away: a store as version 13 left it.
inline constexpr const char* kDropFleetV14 =
    "DROP TABLE task_worktrees; DROP TABLE reservations; ALTER TABLE sessions DROP COLUMN worktree; "
    "ALTER TABLE sessions DROP COLUMN branch; "
    "DROP TABLE messages; DROP TABLE message_recipients; DROP TABLE message_reads; DROP TABLE inbox_marks; ";

/// What schema v15 adds, taken away: the governed catalogue (issue 54, seed 004), the session tree
/// and named plans (seed 002), attestation (seed 000) and tracker sync (issue 55): a store as
/// version 14 left it.
inline constexpr const char* kDropV15 =
    "DROP TABLE catalogue; DROP TABLE catalogue_changes; DROP TABLE tracker_links; DROP TABLE tracker_cursors; "
    "DROP TABLE session_children; DROP INDEX plans_name; ALTER TABLE plans DROP COLUMN name; "
    "ALTER TABLE memory_usage DROP COLUMN constraint_id; ALTER TABLE memory_usage DROP COLUMN host_session; "
    "DROP TABLE host_sessions; DROP TABLE memory_turns; ";

/// What schema v16 adds, taken away: the search index's terms (issue 56): a store as version 15
/// left it.
inline constexpr const char* kDropV16 = "DROP TABLE tasks_fts_terms; ";

/// What schema v17 adds, taken away: plans on a watermark, changes with their task's version
/// (issue 56): a store as version 16 left it.
inline constexpr const char* kDropV17 =
    "DROP INDEX plans_since; ALTER TABLE plans DROP COLUMN since; ALTER TABLE audit_changes DROP COLUMN version; ";

/// Makes a store look as an older ct left it: drops the tables and indexes of every later schema
/// step and sets PRAGMA user_version (the migration tests open it again and expect the steps to run).
inline void downgrade_store(const std::filesystem::path& db, int version) {
  // What each schema step from v4 on creates (engines/store/sqlite/sqlite_schema.cpp); "index:"
  // marks an index.
  static const char* const kCreatedBy[][5] = {
      {"compliance"}, {"releases"}, {"research", "research_fts", "research_links", "research_sync"},
      {"lifecycle", "lifecycle_events"},
      {"index:tasks_status_tree", "index:tasks_status_updated", "index:tasks_status_rank",
       "index:tasks_status_created"}};
  std::string sql;
  if (version < 18) sql += "DELETE FROM memory_terms WHERE key = ''; ";  // v18: memory's kept total (a row)
  if (version < 17) sql += kDropV17;
  if (version < 16) sql += kDropV16;
  if (version < 15) sql += kDropV15;
  if (version < 14) sql += kDropFleetV14;
  if (version < 13) sql += kDropPrincipalsV13;
  if (version < 12) sql += "DROP TABLE plans; ";  // v12: plans
  if (version < 11) sql += std::string(kDropTrustV11);  // v11: intent, evidence, proposals
  if (version < 10) sql += "DROP TABLE memory; DROP TABLE memory_keys; DROP TABLE memory_terms; DROP TABLE memory_usage; ";  // v10: project memory
  if (version < 9) {
    // v9 writes the search index behind the tasks: an older ct indexed every task as it wrote it.
    sql += std::string(kFoldSearchIndex) + "DROP TABLE tasks_fts_tail; ";
  }
  for (int step = std::max(version + 1, 4); step <= 8; ++step)
    for (const char* name : kCreatedBy[step - 4]) {
      if (!name) continue;
      std::string_view object(name);
      sql += object.starts_with("index:") ? "DROP INDEX IF EXISTS " + std::string(object.substr(6)) + "; "
                                          : "DROP TABLE IF EXISTS " + std::string(object) + "; ";
    }
  sql += "PRAGMA user_version = " + std::to_string(version);
  run_sql(db, sql);
}

/// Polls `ready` every 10 ms until it holds or `limit` passes; its last answer. For what another
/// thread does in its own time (a notification sent, a task finished).
template <typename Predicate>
bool eventually(Predicate ready, std::chrono::milliseconds limit = std::chrono::seconds(10)) {
  const auto until = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < until) {
    if (ready()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return ready();
}

}  // namespace ct::test
