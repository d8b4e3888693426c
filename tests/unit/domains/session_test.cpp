// Sessions (docs/architecture.md §4–§5): scopes, binding, the atomic claim of tasks.start, the life cycle,
// enforcement and limits — through the router, as an agent would call them.
#include <catch2/catch.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <thread>

#include "gateway/mcp_syntax.h"
#include "unit/test_support.h"
#include "gateway/product.h"

using namespace ct;
using ct::test::code_of;

namespace {

/// A second caller on the same project (its own router: its own binding, its own connection).
std::unique_ptr<test::Client> other_router(const test::Project& p) {
  return std::make_unique<test::Client>(std::make_unique<Router>(
      registry(), Workspace::open(p.dir()), RouterOptions{},
      std::make_unique<FixedClock>(*parse_iso8601("2026-01-01T00:00:00Z"))));
}

Envelope call(test::Client& client, Gateway gateway, std::string domain, std::string operation,
              std::string_view params = "{}") {
  return client.dispatch({gateway, std::move(domain), std::move(operation), test::parse_json(params)});
}

/// T001 epic > T002, T003 (T003 > T004); T005 on its own.
void plant(test::Project& p) {
  p.add(R"({"title":"Epic one","type":"epic"})");
  p.add(R"({"title":"Child one","parent":"T001"})");
  p.add(R"({"title":"Child two","parent":"T001"})");
  p.add(R"({"title":"Grandchild","parent":"T003"})");
  p.add(R"({"title":"Loose task"})");
}

std::string start(test::Project& p, std::string_view params) {
  Envelope e = p.mutate("session", "start", params);
  if (!e.success) throw std::runtime_error("session.start failed: " + to_json(e, McpAdvice(registry())));
  return e.data["id"].as_string();
}

void write_config(test::Project& p, std::string_view json) { p.write_config(json); }

}  // namespace

TEST_CASE("session.start binds the caller; status, show and list see it", "[session]") {
  test::Project p;
  plant(p);
  CHECK(code_of(p.query("session", "status")) == "E_NO_DATA");
  auto started = p.mutate("session", "start", R"({"scope":"epic:T001","name":"auth work","agent":"claude"})");
  REQUIRE(started.success);
  std::string id = started.data["id"].as_string();
  CHECK(id.rfind("ses_", 0) == 0);
  CHECK(id.size() == 16);
  CHECK_FALSE(started.data.contains("scope"));  // the caller's own input is not echoed
  CHECK_FALSE(started.data.contains("name"));
  CHECK(p.session() == id);

  auto status = p.query("session", "status");
  REQUIRE(status.success);
  CHECK(status.data["id"].as_string() == id);
  CHECK(status.data["status"].as_string() == "active");
  CHECK(status.data["agent"].as_string() == "claude");

  auto show = p.query("session", "show", R"({"id":")" + id + R"("})");
  CHECK(show.data["name"].as_string() == "auth work");
  CHECK(code_of(p.query("session", "show", R"({"id":"ses_ffffffffffff"})")) == "E_SESSION_NOT_FOUND");

  start(p, R"({"scope":"global"})");
  auto list = p.query("session", "list");
  REQUIRE(list.success);
  CHECK(list.data.as_array().size() == 2);
  auto paged = p.query("session", "list", R"({"limit":1})");
  CHECK(paged.data.as_array().size() == 1);
  REQUIRE(paged.page);
  CHECK(paged.page->total == 2);
  CHECK(paged.page->has_more());
  CHECK(p.query("session", "list", R"({"status":"ended"})").note == ErrorCode::NoData);
}

TEST_CASE("every scope form is computed from live data", "[session][scope]") {
  test::Project p;
  plant(p);
  auto in_scope = [&](std::string_view scope, std::string_view task) {
    auto router = other_router(p);
    auto s = call(*router, Gateway::Mutate, "session", "start", R"({"scope":")" + std::string(scope) + R"("})");
    REQUIRE(s.success);
    auto claimed = call(*router, Gateway::Mutate, "tasks", "start", R"({"id":")" + std::string(task) + R"("})");
    bool inside = claimed.success;
    if (!inside) CHECK(code_of(claimed) == "E_TASK_NOT_IN_SCOPE");
    REQUIRE(call(*router, Gateway::Mutate, "session", "end").success);  // releases the claim
    return inside;
  };
  CHECK(in_scope("task:T003", "T003"));
  CHECK_FALSE(in_scope("task:T003", "T004"));
  CHECK(in_scope("taskGroup:T003", "T004"));
  CHECK_FALSE(in_scope("taskGroup:T001", "T004"));
  CHECK(in_scope("subtree:T001", "T004"));
  CHECK(in_scope("epic:T001", "T004"));
  CHECK_FALSE(in_scope("epic:T001", "T005"));
  CHECK(in_scope("custom:T002,T005", "T005"));
  CHECK_FALSE(in_scope("custom:T002,T005", "T003"));
  CHECK(in_scope("global", "T005"));
}

TEST_CASE("new children join a scope; bad scopes name the accepted forms", "[session][scope]") {
  test::Project p;
  plant(p);
  start(p, R"({"scope":"subtree:T003"})");
  std::string late = p.add(R"({"title":"Late child","parent":"T003"})");
  CHECK(p.mutate("tasks", "start", R"({"id":")" + late + R"("})").success);

  for (auto bad : {"bogus", "t:T1", "epic:", "epic:T1,T2", "task:nope", "custom:"}) {
    auto e = p.mutate("session", "start", R"({"scope":")" + std::string(bad) + R"("})");
    CHECK(code_of(e) == "E_SCOPE_INVALID");
    CHECK(e.exit_code() == 33);
    CHECK(e.error->details["valid"].as_array().size() == 6);
  }
  CHECK(code_of(p.mutate("session", "start", R"({"scope":"epic:T002"})")) == "E_SCOPE_INVALID");  // not an epic
  CHECK(code_of(p.mutate("session", "start", R"({"scope":"subtree:T999"})")) == "E_NOT_FOUND");
}

TEST_CASE("start with focus or autoFocus claims a task in scope", "[session][claim]") {
  test::Project p;
  plant(p);
  auto focused = p.mutate("session", "start", R"({"scope":"epic:T001","focus":"T002"})");
  REQUIRE(focused.success);
  CHECK_FALSE(focused.data.contains("focus"));  // as sent
  CHECK(p.query("tasks", "show", R"({"id":"T002"})").data["status"].as_string() == "active");
  CHECK(p.query("tasks", "current").data["id"].as_string() == "T002");

  auto router = other_router(p);
  auto automatic = call(*router, Gateway::Mutate, "session", "start", R"({"scope":"epic:T001","autoFocus":true})");
  REQUIRE(automatic.success);
  REQUIRE(automatic.data["focus"].is_string());
  CHECK(automatic.data["focus"].as_string() != "T002");  // the claimed task is skipped

  CHECK(code_of(p.mutate("session", "start", R"({"scope":"task:T002","focus":"T005"})")) == "E_TASK_NOT_IN_SCOPE");
  CHECK(code_of(p.mutate("session", "start", R"({"scope":"global","focus":"T002","autoFocus":true})")) ==
        "E_INVALID_PARAMS");
  // A failed start leaves nothing behind.
  CHECK(p.query("session", "list").data.as_array().size() == 2);
}

TEST_CASE("a task is claimed by one session only; overlapping scopes are fine", "[session][claim]") {
  test::Project p;
  plant(p);
  std::string first = start(p, R"({"scope":"epic:T001"})");
  REQUIRE(p.mutate("tasks", "start", R"({"id":"T002"})").success);

  auto router = other_router(p);
  REQUIRE(call(*router, Gateway::Mutate, "session", "start", R"({"scope":"subtree:T001"})").success);
  auto second = call(*router, Gateway::Mutate, "tasks", "start", R"({"id":"T002"})");
  CHECK(code_of(second) == "E_TASK_CLAIMED");
  CHECK(second.exit_code() == 35);
  CHECK(second.error->details["holder"].as_string() == first);
  CHECK(mcp_text(second.error->fix, registry()).find("session") != std::string::npos);
  CHECK(call(*router, Gateway::Mutate, "tasks", "start", R"({"id":"T003"})").success);

  // Completing the task releases the claim; reopened, it can be claimed elsewhere.
  REQUIRE(p.mutate("tasks", "complete", R"({"id":"T002"})").success);
  REQUIRE(p.mutate("tasks", "reopen", R"({"id":"T002"})").success);
  CHECK(call(*router, Gateway::Mutate, "tasks", "start", R"({"id":"T002"})").success);
}

TEST_CASE("two processes racing tasks.start on one task: exactly one wins", "[session][claim][race]") {
  test::Project p;
  plant(p);
  std::string a = start(p, R"({"scope":"global"})");
  std::string b = start(p, R"({"scope":"global"})");
  const auto go = p.dir() / "go";
  auto child = [&](const std::string& session) {
    pid_t pid = fork();
    if (pid != 0) return pid;
    Router router(registry(), Workspace::open(p.dir()), RouterOptions{}, std::make_unique<FixedClock>(0));
    while (!std::filesystem::exists(go)) std::this_thread::sleep_for(std::chrono::microseconds(200));
    Envelope e = router.dispatch({Gateway::Mutate, "tasks", "start", test::parse_json(R"({"id":"T002"})"),
                                  {.session = session}});
    _exit(e.success ? 0 : e.exit_code());
  };
  pid_t first = child(a);
  pid_t second = child(b);
  REQUIRE(first > 0);
  REQUIRE(second > 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  std::ofstream(go) << "go";
  int status_a = 0, status_b = 0;
  REQUIRE(waitpid(first, &status_a, 0) == first);
  REQUIRE(waitpid(second, &status_b, 0) == second);
  REQUIRE(WIFEXITED(status_a));
  REQUIRE(WIFEXITED(status_b));
  std::vector<int> codes{WEXITSTATUS(status_a), WEXITSTATUS(status_b)};
  std::sort(codes.begin(), codes.end());
  CHECK(codes == std::vector<int>{0, 35});
  auto holder = p.query("session", "show", R"({"id":")" + a + R"("})").data["focus"];
  auto other = p.query("session", "show", R"({"id":")" + b + R"("})").data["focus"];
  CHECK(holder.is_string() != other.is_string());  // exactly one session holds T002
}

TEST_CASE("end, suspend, resume, note, history", "[session][lifecycle]") {
  test::Project p;
  plant(p);
  std::string id = start(p, R"({"scope":"epic:T001","focus":"T002"})");
  REQUIRE(p.mutate("tasks", "update", R"({"id":"T003","priority":"high"})").success);

  auto noted = p.mutate("session", "note", R"({"notes":"API half done","nextAction":"finish T002"})");
  REQUIRE(noted.success);
  CHECK(noted.data.dump() == R"({"id":")" + id + R"("})");  // no echo of the caller's text
  CHECK(p.query("session", "show").data["nextAction"].as_string() == "finish T002");
  CHECK(code_of(p.mutate("session", "note")) == "E_INVALID_PARAMS");

  auto suspended = p.mutate("session", "suspend", R"({"note":"lunch"})");  // the earlier name of notes
  CHECK(p.query("session", "show", R"({"id":")" + id + R"("})").data["notes"].as_string() == "lunch");
  CHECK(suspended.data.dump() == R"({"id":")" + id + R"("})");
  CHECK(p.session().empty());
  // The claim survives a suspension.
  CHECK(p.query("session", "show", R"({"id":")" + id + R"("})").data["focus"].as_string() == "T002");
  // A suspended session cannot write.
  p.set_session(id);
  CHECK(code_of(p.mutate("tasks", "update", R"({"id":"T003","priority":"low"})")) == "E_SESSION_REQUIRED");
  p.set_session("");

  auto resumed = p.mutate("session", "resume", R"({"id":")" + id + R"("})");
  REQUIRE(resumed.success);
  CHECK(resumed.data["status"].as_string() == "active");
  CHECK(resumed.data["focus"].as_string() == "T002");
  CHECK(resumed.data["nextAction"].as_string() == "finish T002");
  CHECK(p.session() == id);

  auto history = p.query("session", "history");
  REQUIRE(history.success);
  std::vector<std::string> operations;
  for (const auto& row : history.data.as_array()) operations.push_back(row["operation"].as_string());
  CHECK(std::find(operations.begin(), operations.end(), "tasks.update") != operations.end());
  CHECK(std::find(operations.begin(), operations.end(), "session.start") != operations.end());

  auto ended = p.mutate("session", "end", R"({"notes":"handing over"})");
  CHECK(ended.data.dump() == R"({"id":")" + id + R"("})");
  CHECK(p.query("session", "show", R"({"id":")" + id + R"("})").data["notes"].as_string() == "handing over");
  CHECK(p.session().empty());
  CHECK(p.query("tasks", "show", R"({"id":"T002"})").data["status"].as_string() == "pending");  // released
  CHECK(p.mutate("session", "end", R"({"id":")" + id + R"("})").note == ErrorCode::NoChange);
  CHECK(code_of(p.mutate("session", "end")) == "E_SESSION_REQUIRED");
}

TEST_CASE("close only when every task in scope is done", "[session][lifecycle]") {
  test::Project p;
  plant(p);
  std::string id = start(p, R"({"scope":"taskGroup:T003"})");
  auto blocked = p.mutate("session", "close");
  CHECK(code_of(blocked) == "E_SESSION_CLOSE_BLOCKED");
  CHECK(blocked.exit_code() == 37);
  auto open = blocked.error->details["open"].as_array();
  REQUIRE(open.size() == 2);
  CHECK(open[0]["id"].as_string() == "T003");
  CHECK(open[1]["id"].as_string() == "T004");
  REQUIRE(p.mutate("tasks", "complete", R"({"id":"T004"})").success);
  REQUIRE(p.mutate("tasks", "complete", R"({"id":"T003"})").success);
  auto closed = p.mutate("session", "close");
  REQUIRE(closed.success);
  CHECK(closed.data.contains("id"));
  CHECK_FALSE(closed.data.contains("status"));
  CHECK(code_of(p.mutate("session", "resume", R"({"id":")" + id + R"("})")) == "E_VALIDATION");
}

TEST_CASE("gc ends idle sessions and archives old ones; dryRun changes nothing", "[session][gc]") {
  test::Project p;
  plant(p);
  std::string idle = start(p, R"({"scope":"global","focus":"T005"})");
  std::string old = start(p, R"({"scope":"global"})");
  REQUIRE(p.mutate("session", "end", R"({"id":")" + old + R"("})").success);
  // Much later: a router whose clock is 40 days on.
  test::Client later(std::make_unique<Router>(registry(), Workspace::open(p.dir()), RouterOptions{},
                                             std::make_unique<FixedClock>(*parse_iso8601("2026-02-10T00:00:00Z"))));
  auto preview = call(later, Gateway::Mutate, "session", "gc", R"({"dryRun":true})");
  REQUIRE(preview.success);
  CHECK(preview.data["dryRun"].as_bool());
  CHECK(preview.data["ended"].as_array().size() == 1);
  CHECK(preview.data["archived"].as_array().size() == 1);
  CHECK(p.query("session", "show", R"({"id":")" + idle + R"("})").data["status"].as_string() == "active");

  auto done = call(later, Gateway::Mutate, "session", "gc");
  REQUIRE(done.success);
  CHECK(done.data["ended"].as_array()[0].as_string() == idle);
  CHECK(done.data["archived"].as_array()[0].as_string() == old);
  CHECK(p.query("session", "show", R"({"id":")" + idle + R"("})").data["status"].as_string() == "ended");
  CHECK(p.query("tasks", "show", R"({"id":"T005"})").data["status"].as_string() == "pending");
  CHECK(p.query("session", "list").data.as_array().size() == 1);  // the archived one is hidden
  CHECK(p.query("session", "list", R"({"includeArchived":true})").data.as_array().size() == 2);
}

TEST_CASE("a heartbeat keeps a silent session from being ended as idle", "[session][gc][heartbeat]") {
  test::Project p;  // its clock: 2026-01-01T00:00:00Z; session.idleMinutes: 240
  plant(p);
  std::string id = start(p, R"({"scope":"global","focus":"T005"})");
  auto at = [&](std::string_view iso) {
    return test::Client(std::make_unique<Router>(registry(), Workspace::open(p.dir()), RouterOptions{},
                                                 std::make_unique<FixedClock>(*parse_iso8601(std::string(iso)))));
  };
  const std::string params = R"({"id":")" + id + R"("})";
  auto three_thirty = at("2026-01-01T03:30:00Z");
  auto beat = call(three_thirty, Gateway::Mutate, "session", "heartbeat", params);
  REQUIRE(beat.success);
  CHECK_FALSE(beat.data.contains("id"));  // the caller named it: not echoed back
  CHECK(beat.data["idleAt"].as_string() == "2026-01-01T07:30:00Z");

  // At 05:00 the session would be idle (silent since 00:00) but for the heartbeat.
  auto five = at("2026-01-01T05:00:00Z");
  auto kept = call(five, Gateway::Mutate, "session", "gc");
  REQUIRE(kept.success);
  CHECK(kept.data["ended"].as_array().empty());
  CHECK(p.query("tasks", "show", R"({"id":"T005"})").data["status"].as_string() == "active");
  // Past idleAt with no other sign of life, gc ends it and frees its task.
  auto eight = at("2026-01-01T08:00:00Z");
  auto ended = call(eight, Gateway::Mutate, "session", "gc");
  REQUIRE(ended.success);
  REQUIRE(ended.data["ended"].as_array().size() == 1);
  CHECK(ended.data["ended"].as_array()[0].as_string() == id);

  // Only an active session beats; the errors say how to get one.
  auto stopped = call(eight, Gateway::Mutate, "session", "heartbeat", params);
  CHECK(code_of(stopped) == "E_SESSION_REQUIRED");
  CHECK(stopped.error->details["status"].as_string() == "ended");
  CHECK(code_of(call(eight, Gateway::Mutate, "session", "heartbeat", R"({"id":"ses_000000000000"})")) ==
        "E_SESSION_NOT_FOUND");
  CHECK(code_of(call(eight, Gateway::Mutate, "session", "heartbeat")) == "E_SESSION_REQUIRED");  // none bound
}

TEST_CASE("enforcement: advisory warns while sessions are active, strict refuses, none is silent", "[session][enforcement]") {
  test::Project p;
  plant(p);
  // No sessions in the project: advisory stays quiet.
  CHECK(p.mutate("tasks", "update", R"({"id":"T005","priority":"high"})").warnings.empty());
  auto router = other_router(p);
  REQUIRE(call(*router, Gateway::Mutate, "session", "start", R"({"scope":"global"})").success);
  auto warned = p.mutate("tasks", "update", R"({"id":"T005","priority":"low"})");
  REQUIRE(warned.success);
  REQUIRE(warned.warnings.size() == 1);
  CHECK(test::warnings_of(warned)[0].find("advisory") != std::string::npos);
  CHECK(call(*router, Gateway::Mutate, "tasks", "update", R"({"id":"T005","priority":"high"})").warnings.empty());

  write_config(p, R"({"session":{"enforcement":"strict"}})");
  auto strict = other_router(p);
  auto refused = call(*strict, Gateway::Mutate, "tasks", "add", R"({"title":"Not without a session"})");
  CHECK(code_of(refused) == "E_SESSION_REQUIRED");
  CHECK(refused.exit_code() == 36);
  CHECK(call(*strict, Gateway::Query, "tasks", "list").success);  // reads are never enforced
  REQUIRE(call(*strict, Gateway::Mutate, "session", "start", R"({"scope":"global"})").success);
  CHECK(call(*strict, Gateway::Mutate, "tasks", "add", R"({"title":"Inside a session"})").success);

  write_config(p, R"({"session":{"enforcement":"none"}})");
  auto quiet = other_router(p);
  auto silent = call(*quiet, Gateway::Mutate, "tasks", "update", R"({"id":"T005","priority":"low"})");
  CHECK(silent.success);
  CHECK(silent.warnings.empty());
}

TEST_CASE("session.maxConcurrent caps active sessions; 0 is unlimited", "[session][limits]") {
  test::Project p;
  write_config(p, R"({"session":{"maxConcurrent":2}})");
  auto router = other_router(p);
  REQUIRE(call(*router, Gateway::Mutate, "session", "start", R"({"scope":"global"})").success);
  auto second = call(*router, Gateway::Mutate, "session", "start", R"({"scope":"global"})");
  REQUIRE(second.success);
  auto third = call(*router, Gateway::Mutate, "session", "start", R"({"scope":"global"})");
  CHECK(code_of(third) == "E_SESSION_EXISTS");
  CHECK(third.error->details["maxConcurrent"].as_int() == 2);
  // A suspended session does not count.
  REQUIRE(call(*router, Gateway::Mutate, "session", "suspend", R"({"id":")" + second.data["id"].as_string() + R"("})").success);
  CHECK(call(*router, Gateway::Mutate, "session", "start", R"({"scope":"global"})").success);

  write_config(p, R"({"session":{"maxConcurrent":0}})");
  auto swarm = other_router(p);
  for (int i = 0; i < 40; ++i)
    REQUIRE(call(*swarm, Gateway::Mutate, "session", "start", R"({"scope":"global"})").success);
  CHECK(call(*swarm, Gateway::Query, "session", "list", R"({"status":"active","limit":500})").data.as_array().size() == 42);
}

TEST_CASE("writes record their session and agent in the audit trail", "[session][audit]") {
  test::Project p;
  plant(p);
  std::string id = start(p, R"({"scope":"global"})");
  REQUIRE(p.mutate("tasks", "update", R"({"id":"T005","priority":"high"})").success);
  auto log = p.query("session", "history", R"({"id":")" + id + R"(","limit":1})");
  REQUIRE(log.success);
  CHECK(log.data.as_array()[0]["operation"].as_string() == "tasks.update");
  CHECK(log.data.as_array()[0]["taskId"].as_string() == "T005");
}

TEST_CASE("tasks.list restricts to the session scope with inScope; tasks.next by default", "[session][scope]") {
  test::Project p;
  plant(p);
  CHECK(code_of(p.query("tasks", "list", R"({"inScope":true})")) == "E_SESSION_REQUIRED");
  start(p, R"({"scope":"taskGroup:T003"})");
  auto listed = p.query("tasks", "list", R"({"inScope":true})");
  REQUIRE(listed.success);
  REQUIRE(listed.data.as_array().size() == 2);
  CHECK(listed.data.as_array()[0]["id"].as_string() == "T003");
  CHECK(listed.data.as_array()[1]["id"].as_string() == "T004");
  auto paged = p.query("tasks", "list", R"({"inScope":true,"limit":1,"offset":1})");
  CHECK(paged.data.as_array()[0]["id"].as_string() == "T004");
  CHECK(paged.page->total == 2);
  REQUIRE(p.mutate("tasks", "update", R"({"id":"T005","priority":"critical"})").success);
  auto next = p.query("tasks", "next", R"({"inScope":true,"count":5})");
  REQUIRE(next.success);
  for (const auto& pick : next.data.as_array()) CHECK((pick["id"].as_string() == "T003" || pick["id"].as_string() == "T004"));
  // In a bound session tasks.next keeps to the scope without being asked; inScope:false widens it.
  CHECK(p.query("tasks", "next").data.as_array()[0]["id"].as_string() != "T005");
  CHECK(p.query("tasks", "next", R"({"inScope":false})").data.as_array()[0]["id"].as_string() == "T005");
}

TEST_CASE("tasks.find restricts to the session scope with inScope", "[session][scope]") {
  test::Project p;
  plant(p);
  CHECK(code_of(p.query("tasks", "find", R"({"query":"child","inScope":true})")) == "E_SESSION_REQUIRED");
  start(p, R"({"scope":"taskGroup:T003"})");
  auto ids = [](const Envelope& e) {
    std::vector<std::string> out;
    for (const auto& row : e.data["rows"].as_array()) out.push_back(row.as_array()[0].as_string());
    return out;
  };
  auto everywhere = p.query("tasks", "find", R"({"query":"child"})");
  REQUIRE(everywhere.success);
  CHECK(ids(everywhere) == std::vector<std::string>{"T002", "T003"});
  auto scoped = p.query("tasks", "find", R"({"query":"child","inScope":true})");
  REQUIRE(scoped.success);
  CHECK(ids(scoped) == std::vector<std::string>{"T003"});
  CHECK(!scoped.page);
  // Pages count what is in scope only.
  for (const char* title : {"Child three", "Child four", "Child five"})
    p.add(R"({"title":")" + std::string(title) + R"(","parent":"T003"})");
  auto first = p.query("tasks", "find", R"({"query":"child","inScope":true,"limit":2})");
  REQUIRE(first.success);
  CHECK(ids(first).size() == 2);
  REQUIRE(first.page);
  CHECK(first.page->total == 4);
  auto last = ids(p.query("tasks", "find", R"({"query":"child","inScope":true,"limit":2,"offset":2})"));
  CHECK(last.size() == 2);
  for (const auto& id : ids(first)) CHECK(std::find(last.begin(), last.end(), id) == last.end());
}

TEST_CASE("sessionId runs one call in a named session, without binding the caller", "[session][router]") {
  test::Project p;
  plant(p);
  auto started = p.mutate("session", "start", R"({"scope":"epic:T001"})");
  REQUIRE(started.success);
  const std::string id = started.data["id"].as_string();
  REQUIRE(p.mutate("session", "suspend", R"({"notes":"later"})").success);  // unbinds this caller
  CHECK(code_of(p.query("session", "status")) == "E_NO_DATA");

  // Queries see the named session; writes need it active.
  CHECK(p.query("session", "status", R"({"sessionId":")" + id + R"("})").data["id"].as_string() == id);
  CHECK(code_of(p.mutate("tasks", "start", R"({"id":"T002","sessionId":")" + id + R"("})")) == "E_SESSION_REQUIRED");
  CHECK(code_of(p.query("session", "status")) == "E_NO_DATA");  // still bound to nothing

  CHECK(code_of(p.query("tasks", "next", R"({"sessionId":"ses_000000000000"})")) == "E_SESSION_NOT_FOUND");
  CHECK(code_of(p.query("tasks", "next", R"({"sessionId":""})")) == "E_VALIDATION");
  CHECK(code_of(p.query("tasks", "next", R"({"sessionId":7})")) == "E_INVALID_PARAMS");
}
