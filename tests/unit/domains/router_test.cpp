#include <catch2/catch.hpp>
#include <chrono>
#include <fstream>

#include "core/cancel.h"
#include "gateway/mcp_syntax.h"
#include "engines/store/sqlite/sqlite_store.h"
#include "unit/test_support.h"
#include "gateway/product.h"

using namespace ct;
using ct::test::code_of;

TEST_CASE("the gateway must match the operation", "[router]") {
  test::Project p;
  auto wrong = p.query("tasks", "add", R"({"title":"abc"})");
  CHECK_FALSE(wrong.success);
  CHECK(code_of(wrong) == "E_INVALID_GATEWAY");
  CHECK(mcp_text(wrong.error->fix, registry()).find("cleo_mutate") != std::string::npos);
  auto wrong2 = p.mutate("tasks", "show", R"({"id":"T001"})");
  CHECK(code_of(wrong2) == "E_INVALID_GATEWAY");
  CHECK(wrong2.exit_code() == 2);
}

TEST_CASE("unknown domains and operations get the valid list and a suggestion", "[router]") {
  test::Project p;
  auto domain = p.query("taks", "show");
  CHECK(code_of(domain) == "E_INVALID_DOMAIN");
  CHECK(domain.error->details["didYouMean"].as_string() == "tasks");
  auto op = p.query("tasks", "shwo", R"({"id":"T001"})");
  CHECK(code_of(op) == "E_INVALID_OPERATION");
  CHECK(op.error->details["didYouMean"].as_string() == "show");
  // The fix is a working call of the suggested operation, never an operation that does not exist.
  CHECK(mcp_text(op.error->fix, registry()) == "cleo_query {domain:'tasks', operation:'show', params:{\"id\":\"T001\"}}");
  auto far = p.query("tasks", "zzzzzzzz");
  CHECK(mcp_text(far.error->fix, registry()).find("details.valid") != std::string::npos);
  CHECK(mcp_text(domain.error->fix, registry()) == "use domain 'tasks'");
}

TEST_CASE("the envelope is lean: _meta only when it carries something", "[router][envelope]") {
  test::Project p;
  p.add(R"({"title":"First task"})");
  auto shown = p.query("tasks", "show", R"({"id":"T001"})");
  REQUIRE(shown.success);
  std::string wire = to_json(shown, McpAdvice(registry()));
  CHECK(wire.find("_meta") == std::string::npos);
  CHECK(wire.find(' ') == wire.find("First task") + 5);  // compact: the only space is in the title
  auto with_meta = p.query("tasks", "show", R"({"id":"T001","meta":true})");
  json::Value v = to_value(with_meta, McpAdvice(registry()));
  CHECK(v["_meta"]["gateway"].as_string() == "cleo_query");
  CHECK(v["_meta"]["domain"].as_string() == "tasks");
  CHECK(v["_meta"]["operation"].as_string() == "show");
  CHECK(v["_meta"].contains("durationMs"));
  CHECK(v["_meta"].contains("timestamp"));
}

TEST_CASE("errors carry code, exit code, message, fix and retryable", "[router][envelope]") {
  test::Project p;
  json::Value v = to_value(p.query("tasks", "show", R"({"id":"T999"})"), McpAdvice(registry()));
  CHECK(v["success"].as_bool() == false);
  CHECK(v["error"]["code"].as_string() == "E_NOT_FOUND");
  CHECK(v["error"]["exitCode"].as_int() == 4);
  CHECK(v["error"]["message"].as_string() == "Task T999 not found");
  CHECK(v["error"]["fix"].as_string().find("find") != std::string::npos);
  CHECK(v["error"]["retryable"].as_bool() == false);
  CHECK(v["error"]["alternatives"].size() == 2);
  CHECK_FALSE(v.contains("data"));
}

TEST_CASE("success notes: exit 100-102 with success true", "[router]") {
  test::Project p;
  auto again = p.mutate("system", "init");
  CHECK(again.success);
  CHECK(code_of(again) == "E_ALREADY_EXISTS");
  CHECK(again.exit_code() == 101);
  auto none = p.query("tasks", "next");
  CHECK(none.success);
  CHECK(none.exit_code() == 100);
  p.add(R"({"title":"Task one"})");
  CHECK(p.mutate("tasks", "complete", R"({"id":"T001"})").exit_code() == 0);
  auto twice = p.mutate("tasks", "complete", R"({"id":"T001"})");
  CHECK(twice.success);
  CHECK(twice.exit_code() == 102);
  CHECK(to_value(twice, McpAdvice(registry()))["_meta"]["code"].as_string() == "E_NO_CHANGE");
}

TEST_CASE("read-only mode refuses every mutation and allows queries", "[router]") {
  test::Project p;
  p.add(R"({"title":"Task one"})");
  RouterOptions options;
  options.read_only = true;
  Router ro(registry(), Workspace::open(p.dir()), options, std::make_unique<FixedClock>(0));
  auto refused = ro.dispatch({Gateway::Mutate, "tasks", "add", test::parse_json(R"({"title":"Nope nope"})")});
  CHECK(code_of(refused) == "E_MUTATION_DISABLED");
  auto allowed = ro.dispatch({Gateway::Query, "tasks", "show", test::parse_json(R"({"id":"T001"})")});
  CHECK(allowed.success);

  // A dry run (its spec's dry_run param set) writes nothing, so it runs; rolled back, unaudited.
  auto import = [&](std::string_view params) {
    return ro.dispatch({Gateway::Mutate, "tasks", "import", test::parse_json(params)});
  };
  auto dry = import(R"({"tasks":[{"id":"T1","title":"Imported task"}],"dryRun":true})");
  REQUIRE(dry.success);
  CHECK(dry.data["imported"].as_int() == 1);
  CHECK(code_of(import(R"({"tasks":[{"id":"T1","title":"Imported task"}]})")) == "E_MUTATION_DISABLED");
  CHECK(code_of(import(R"({"tasks":[{"id":"T1","title":"Imported task"}],"dryRun":false})")) == "E_MUTATION_DISABLED");
  CHECK(code_of(import(R"({"dryRun":"yes"})")) == "E_MUTATION_DISABLED");  // refused before validation
  CHECK(code_of(p.query("tasks", "exists", R"({"id":"T002"})")) == "E_NO_DATA");
  CHECK(p.query("system", "log", R"({"operation":"tasks.import"})").data.empty());
}

TEST_CASE("no project: a clear error that points at init, not a crash", "[router]") {
  test::TempDir dir;
  RouterOptions options;
  Router router(registry(), Workspace::open(dir.path()), options, std::make_unique<FixedClock>(0));
  auto e = router.dispatch({Gateway::Query, "tasks", "list", json::Value()});
  CHECK(code_of(e) == "E_NOT_INITIALIZED");
  CHECK(mcp_text(e.error->fix, registry()).find("init") != std::string::npos);
  // Operations that need no project still work.
  CHECK(router.dispatch({Gateway::Query, "system", "version", json::Value()}).success);
}

TEST_CASE("a corrupt database is E_FILE_ERROR with a fix", "[router]") {
  test::TempDir dir;
  std::filesystem::create_directories(dir.path() / ".cleo");
  std::ofstream(dir.path() / ".cleo" / "tasks.db") << "this is not a database, just some text that is long enough";
  RouterOptions options;
  Router router(registry(), Workspace::open(dir.path()), options, std::make_unique<FixedClock>(0));
  auto e = router.dispatch({Gateway::Query, "tasks", "list", json::Value()});
  CHECK(code_of(e) == "E_FILE_ERROR");
  CHECK(e.exit_code() == 3);
  CHECK_FALSE(e.error->fix.empty());
}

TEST_CASE("a locked store waits, then fails with the retryable E_LOCK_TIMEOUT", "[router][concurrency]") {
  test::Project p;
  p.write_config(R"({"storage":{"busyTimeoutMs":100}})");
  RouterOptions options;
  Router holder(registry(), Workspace::open(p.dir()), options, std::make_unique<FixedClock>(0));
  Router waiter(registry(), Workspace::open(p.dir()), options, std::make_unique<FixedClock>(0));
  // The holder's store is opened by a first call; then we hold its write lock by hand.
  REQUIRE(holder.dispatch({Gateway::Query, "tasks", "list", json::Value()}).success);
  auto store = test::backend_for(p.dir() / ".cleo" / "tasks.db")->open(StoreOptions{.busy_timeout_ms = 100});
  REQUIRE(store);
  REQUIRE((*store)->begin(TxKind::Write));
  REQUIRE((*store)->schema_version());  // PostgreSQL takes the lock with the first statement
  auto started = std::chrono::steady_clock::now();
  auto e = waiter.dispatch({Gateway::Mutate, "tasks", "add", test::parse_json(R"({"title":"Blocked add"})")});
  auto waited = std::chrono::steady_clock::now() - started;
  CHECK(code_of(e) == "E_LOCK_TIMEOUT");
  CHECK(e.error->retryable());
  CHECK(e.exit_code() == 7);
  CHECK(waited >= std::chrono::milliseconds(90));
  // storage.busyTimeoutMs is a person's to raise (issue 52): the fix says what a person runs, not a
  // config.set the agent would be refused.
  const std::string fix = mcp_text(e.error->fix, registry());
  CHECK(fix.find("a person runs `ct config set storage.busyTimeoutMs 15000` in a terminal") != std::string::npos);
  CHECK(fix.find("config.set") == std::string::npos);
  // Reads are not blocked by a writer (WAL; MVCC on PostgreSQL).
  CHECK(waiter.dispatch({Gateway::Query, "tasks", "list", json::Value()}).success);
  (*store)->rollback();
  CHECK(waiter.dispatch({Gateway::Mutate, "tasks", "add", test::parse_json(R"({"title":"Now it works"})")}).success);
}

TEST_CASE("bad input changes nothing", "[router]") {
  test::Project p;
  p.add(R"({"title":"Keep me as I am"})");
  auto count_audit = [&] { return p.query("tasks", "history", R"({"id":"T001"})").data.size(); };
  std::size_t before = count_audit();
  CHECK_FALSE(p.mutate("tasks", "update", R"({"id":"T001","priority":"urgent"})").success);
  CHECK_FALSE(p.mutate("tasks", "update", R"({"id":"T001","title":"x"})").success);
  CHECK_FALSE(p.mutate("tasks", "update", R"({"id":"T001","bogus":1})").success);
  CHECK_FALSE(p.mutate("tasks", "add", R"({"title":"bad\u0007bell"})").success);
  CHECK(count_audit() == before);  // invalid params never reach the store
  auto shown = p.query("tasks", "show", R"({"id":"T001"})");
  CHECK(shown.data["version"].as_int() == 1);
  CHECK(p.query("tasks", "list").data.size() == 1);
}

namespace {

std::unique_ptr<Router> second_router(const std::filesystem::path& dir) {
  RouterOptions options;
  return std::make_unique<Router>(registry(), Workspace::open(dir), options, std::make_unique<FixedClock>(*parse_iso8601("2026-01-01T00:00:00Z")));
}

/// A call by `who` (an in-process agent unless given; test::test_person() may set the keys only people set).
Envelope call(Router& router, Gateway gateway, std::string domain, std::string operation, std::string_view params,
              Principal who = {}) {
  return router.dispatch({gateway, std::move(domain), std::move(operation), test::parse_json(params), {.principal = who}});
}

}  // namespace

TEST_CASE("a store removed under a running router is refused, not written into the void", "[router][store][sqlite]") {
  test::Project p;
  p.add(R"({"title":"Before the removal"})");
  std::filesystem::remove_all(p.dir() / ".cleo");
  auto write = p.mutate("tasks", "add", R"({"title":"Lost forever?"})");
  REQUIRE(code_of(write) == "E_FILE_ERROR");
  CHECK(write.error->details["storeRemoved"] == json::Value(true));
  CHECK(write.error->message.find("was removed while this process had it open") != std::string::npos);
  CHECK(code_of(p.query("tasks", "show", R"({"id":"T001"})")) == "E_FILE_ERROR");  // nor read from it
}

TEST_CASE("a store replaced under a running router is opened again", "[router][store][sqlite]") {
  test::Project p;
  p.add(R"({"title":"In the backup"})");
  REQUIRE(p.mutate("system", "backup").success);
  p.add(R"({"title":"Not in the backup"})");
  auto other = second_router(p.dir());
  REQUIRE(call(*other, Gateway::Query, "tasks", "show", R"({"id":"T002"})").success);  // other's store is open
  // A recovery replaces the file (damaged: moved aside; the backup renamed into place).
  std::filesystem::resize_file(p.dir() / ".cleo" / "tasks.db", 0);
  auto recovered = p.mutate("system", "restore");
  REQUIRE(recovered.success);
  CHECK(recovered.data["recovered"] == json::Value(true));
  // The other router notices the new file and reads it.
  CHECK(code_of(call(*other, Gateway::Query, "tasks", "show", R"({"id":"T002"})")) == "E_NOT_FOUND");
  auto added = call(*other, Gateway::Mutate, "tasks", "add", R"({"title":"After the recovery"})");
  REQUIRE(added.success);
  CHECK(added.data["id"].as_string() == "T002");
  CHECK(test::as_report(p.query("validate", "audit")).data["valid"].as_bool());
}

TEST_CASE("config.json changed by another process takes effect on the next call", "[router][config]") {
  test::Project p;
  p.add(R"({"title":"Advisory is the default"})");
  auto other = second_router(p.dir());
  REQUIRE(call(*other, Gateway::Mutate, "system", "config.set", R"({"key":"session.enforcement","value":"strict"})",
               test::test_person())
              .success);
  // p's router loaded config.json before; it sees the change without a restart.
  CHECK(code_of(p.mutate("tasks", "add", R"({"title":"Needs a session now"})")) == "E_SESSION_REQUIRED");
  // A config.json that no longer parses keeps the last good settings.
  std::ofstream(p.dir() / ".cleo" / "config.json", std::ios::trunc) << "{broken";
  CHECK(code_of(p.mutate("tasks", "add", R"({"title":"Still strict"})")) == "E_SESSION_REQUIRED");
}

TEST_CASE("init inside another project refuses to nest one unless forced", "[router][init]") {
  test::Project outer;
  std::filesystem::create_directories(outer.dir() / "sub" / "deeper");
  RouterOptions options;
  Router router(registry(), Workspace::open(outer.dir() / "sub" / "deeper"), options, std::make_unique<FixedClock>(0));
  auto refused = router.dispatch({Gateway::Mutate, "system", "init", json::Value::object()});
  CHECK(code_of(refused) == "E_INVALID_INPUT");
  CHECK(refused.error->details["enclosing"].as_string() == std::filesystem::absolute(outer.dir()).lexically_normal().string());
  CHECK(mcp_text(refused.error->fix, registry()).find("force") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(outer.dir() / "sub" / "deeper" / ".cleo"));
  auto forced = router.dispatch({Gateway::Mutate, "system", "init", test::parse_json(R"({"force":true})")});
  CHECK(forced.success);
  CHECK(std::filesystem::exists(outer.dir() / "sub" / "deeper" / ".cleo" / "tasks.db"));
  // The project itself answers as before: it exists.
  CHECK(code_of(outer.mutate("system", "init")) == "E_ALREADY_EXISTS");
}

TEST_CASE("list and find answer an empty result the same way: an E_NO_DATA note", "[router][tasks]") {
  test::Project p;
  auto listed = p.query("tasks", "list");
  CHECK(listed.success);
  CHECK(code_of(listed) == "E_NO_DATA");
  CHECK(listed.exit_code() == 100);
  p.add(R"({"title":"Task one"})");
  CHECK(p.query("tasks", "list").exit_code() == 0);
  CHECK(p.query("tasks", "list", R"({"status":"done"})").exit_code() == 100);
  CHECK(p.query("tasks", "find", R"({"query":"nothing"})").exit_code() == 100);
}

TEST_CASE("router: a call cancelled before its write transaction changes nothing; past it, it runs to its end (issue 50)",
          "[router][cancel]") {
  test::Project p;
  // Cancelled first: the call stops at its commit point, and nothing is stored or audited.
  CancelFlag cancelled = make_cancel_flag();
  REQUIRE(cancelled->request_cancel());
  {
    CancelScope scope(cancelled);
    Envelope add = p.mutate("tasks", "add", R"({"title":"Never stored"})");
    REQUIRE_FALSE(add.success);
    CHECK(add.error->details["cancelled"] == json::Value(true));
    CHECK(add.error->message.find("before it changed anything") != std::string::npos);
    Envelope batch = p.mutate("tasks", "batch", R"({"ops":[{"operation":"tasks.add","params":{"title":"Nor this"}}]})");
    CHECK_FALSE(batch.success);
    CHECK_FALSE(p.query("tasks", "list").success);  // a read stops too: nobody waits for it
  }
  CHECK(p.query("tasks", "list").note == ErrorCode::NoData);
  CHECK(p.query("system", "log", R"({"operation":"tasks.add"})").data.empty());  // not even a failure
  CHECK(p.query("system", "log", R"({"operation":"tasks.batch"})").data.empty());

  // Not cancelled: the call marks its commit point, after which no cancel is taken.
  CancelFlag running = make_cancel_flag();
  {
    CancelScope scope(running);
    CHECK(p.query("tasks", "list").success);
    CHECK(p.mutate("tasks", "batch", R"({"ops":[{"operation":"tasks.add","params":{"title":"Dry"}}],"dryRun":true})").success);
    CHECK(running->state() == CancelToken::State::Running);  // what keeps nothing marks no commit point
    CHECK(p.mutate("tasks", "add", R"({"title":"Stored"})").success);
  }
  CHECK(running->state() == CancelToken::State::Committing);
  CHECK_FALSE(running->request_cancel());
  CHECK(p.query("tasks", "exists", R"({"id":"T001"})").data["exists"] == json::Value(true));
}
