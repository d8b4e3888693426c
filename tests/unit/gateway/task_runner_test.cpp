// MCP tasks (gateway/task_runner.h): a call runs on its own thread and router; the task is polled,
// waited for and cancelled (its program stopped), seen only by its owner, bounded and expired.
#include <catch2/catch.hpp>

#include <chrono>
#include <thread>

#include "core/cancel.h"
#include "core/progress.h"
#include "engines/adapters/subprocess.h"
#include "gateway/task_runner.h"
#include "unit/test_support.h"

using namespace ct;
using namespace ct::mcp;
using namespace std::chrono_literals;
using ct::test::eventually;

namespace {

RouterFactory routers_of(test::Project& p) {
  return [workspace = p.workspace()] {
    return std::make_unique<Router>(registry(), workspace, RouterOptions{}, std::make_unique<SystemClock>());
  };
}

/// Work that waits for `release` (or for its cancellation), then answers `result`.
TaskRunner::Work waiting(std::shared_ptr<std::atomic<bool>> release, std::string result = R"({"ok":1})") {
  return [release, result](Router&) {
    while (!release->load() && !cancel_requested()) std::this_thread::sleep_for(5ms);
    return std::pair{result, false};
  };
}

}  // namespace

TEST_CASE("tasks: a call runs on its own, is polled and waited for, and only its owner sees it", "[mcp][tasks]") {
  test::Project p;
  TaskRunner runner(routers_of(p));
  auto release = std::make_shared<std::atomic<bool>>(false);
  auto started = runner.start("stdio", "Running validate.test.run", std::nullopt, waiting(release));
  REQUIRE(started);
  CHECK(started->id.size() == 32);  // 128 random bits
  CHECK(started->status == TaskRunner::Status::Working);
  CHECK(started->ttl_ms == 30 * 60 * 1000);
  CHECK(runner.get("stdio", started->id)->status == TaskRunner::Status::Working);
  CHECK_FALSE(runner.get("another", started->id));  // another connection's task is not there

  std::optional<TaskRunner::Snapshot> seen;
  std::mutex mutex;
  REQUIRE(runner.when_finished("stdio", started->id, [&](const TaskRunner::Snapshot& done) {
    std::lock_guard lock(mutex);
    seen = done;
  }));
  CHECK_FALSE(runner.when_finished("another", started->id, [](const TaskRunner::Snapshot&) {}));
  release->store(true);
  REQUIRE(eventually([&] {
    std::lock_guard lock(mutex);
    return seen.has_value();
  }));
  CHECK(seen->status == TaskRunner::Status::Done);
  CHECK(seen->result == R"({"ok":1})");
  CHECK_FALSE(seen->call_failed);
  // Finished: a waiter is called at once; cancelling is refused.
  bool now = false;
  runner.when_finished("stdio", started->id, [&](const TaskRunner::Snapshot&) { now = true; });
  CHECK(now);
  auto refused = runner.cancel("stdio", started->id);
  REQUIRE_FALSE(refused);
  CHECK(refused.error().code == ErrorCode::Validation);
  CHECK(runner.cancel("stdio", "nope").error().code == ErrorCode::NotFound);
}

TEST_CASE("tasks: cancelling stops the call's program and the task stays cancelled", "[mcp][tasks]") {
  test::Project p;
  TaskRunner runner(routers_of(p));
  std::atomic<bool> program_cancelled{false};
  auto started = runner.start("s", "Running a test suite", 60'000, [&](Router&) {
    ProcessSpec spec;
    spec.argv = {"sleep", "30"};
    spec.env = minimal_environment();
    spec.grace = std::chrono::milliseconds(200);
    auto ran = run_process(spec);
    program_cancelled = ran && ran->cancelled;
    return std::pair{std::string(R"({"late":true})"), false};
  });
  REQUIRE(started);
  CHECK(started->ttl_ms == 60'000);
  std::this_thread::sleep_for(100ms);
  const auto asked = std::chrono::steady_clock::now();
  auto cancelled = runner.cancel("s", started->id);
  REQUIRE(cancelled);
  CHECK(cancelled->status == TaskRunner::Status::Cancelled);
  REQUIRE(eventually([&] { return program_cancelled.load(); }));
  CHECK(std::chrono::steady_clock::now() - asked < 5s);
  std::this_thread::sleep_for(50ms);
  auto after = runner.get("s", started->id);
  CHECK(after->status == TaskRunner::Status::Cancelled);  // its late result does not undo that
  CHECK(after->result.empty());
}

TEST_CASE("tasks: what the call reports of its work is the task's status while it runs", "[mcp][tasks][progress]") {
  test::Project p;
  TaskRunner runner(routers_of(p));
  auto release = std::make_shared<std::atomic<bool>>(false);
  auto told = std::make_shared<std::atomic<bool>>(false);
  auto started = runner.start("stdio", "Running issues.sync", std::nullopt, [release, told](Router&) {
    report_progress("pulled 300 items (3 pages)");
    told->store(true);
    while (!release->load()) std::this_thread::sleep_for(5ms);
    return std::pair{std::string(R"({"ok":1})"), false};
  });
  REQUIRE(started);
  REQUIRE(eventually([&] { return told->load(); }));
  CHECK(runner.get("stdio", started->id)->message == "Running issues.sync: pulled 300 items (3 pages)");
  release->store(true);
  REQUIRE(eventually([&] { return runner.get("stdio", started->id)->status == TaskRunner::Status::Done; }));
  CHECK(runner.get("stdio", started->id)->message == "The call finished");
}

TEST_CASE("tasks: limits per owner, a list newest first, expiry after the time to live", "[mcp][tasks]") {
  test::Project p;
  auto clock = std::make_unique<FixedClock>(1'000'000, 10);
  TaskRunner runner(routers_of(p), {.default_ttl_ms = 1000, .max_running_per_owner = 2, .max_running = 3},
                    std::move(clock));
  auto release = std::make_shared<std::atomic<bool>>(false);
  auto a = runner.start("one", "a", std::nullopt, waiting(release));
  auto b = runner.start("one", "b", std::nullopt, waiting(release));
  auto c = runner.start("one", "c", std::nullopt, waiting(release));
  REQUIRE(a);
  REQUIRE(b);
  REQUIRE_FALSE(c);  // two running for "one" already
  CHECK(c.error().message.find("too many calls running as tasks (2)") != std::string::npos);
  REQUIRE(runner.start("two", "d", std::nullopt, waiting(release)));
  CHECK_FALSE(runner.start("three", "e", std::nullopt, waiting(release)));  // three in the process
  bool more = false;
  auto listed = runner.list("one", 0, 1, more);
  REQUIRE(listed.size() == 1);
  CHECK(listed[0].id == b->id);  // newest first
  CHECK(more);
  CHECK(runner.list("one", 1, 5, more).front().id == a->id);
  CHECK_FALSE(more);
  release->store(true);
  REQUIRE(eventually([&] { return runner.get("one", a->id) && runner.get("one", a->id)->status == TaskRunner::Status::Done; }));
  // Each read of the clock moves it 10 ms: a finished task is gone once its second has passed.
  REQUIRE(eventually([&] { return !runner.get("one", a->id); }));
  CHECK(runner.list("one", 0, 10, more).size() <= 1);
}

TEST_CASE("tasks: a cancel stops only what has not begun to write; past that point the call runs to its end (issue 50)",
          "[mcp][tasks]") {
  test::Project p;
  auto release = std::make_shared<std::atomic<bool>>(false);
  auto refused_commit = std::make_shared<std::atomic<bool>>(false);
  auto passed_commit = std::make_shared<std::atomic<bool>>(false);
  TaskRunner runner(routers_of(p));

  // Cancelled before its commit point: answered cancelled, and the work, reaching that point,
  // finds it may not go on (the router then stops before its write transaction).
  auto early = runner.start("s", "Running tasks.batch", std::nullopt, [release, refused_commit](Router&) {
    while (!release->load()) std::this_thread::sleep_for(5ms);
    refused_commit->store(!begin_commit());
    return std::pair{std::string(R"({"wrote":true})"), false};
  });
  REQUIRE(early);
  auto cancelled = runner.cancel("s", early->id);
  REQUIRE(cancelled);
  CHECK(cancelled->status == TaskRunner::Status::Cancelled);
  CHECK(cancelled->message.find("before it committed any change") != std::string::npos);
  release->store(true);
  REQUIRE(eventually([&] { return refused_commit->load(); }));

  // Past its commit point: the cancel is answered with the task as it stands (working, committing:
  // it can no longer be stopped), and the task ends with what the call did.
  auto hold = std::make_shared<std::atomic<bool>>(false);
  auto late = runner.start("s", "Running release.ship", std::nullopt, [hold, passed_commit](Router&) {
    passed_commit->store(begin_commit());
    while (!hold->load()) std::this_thread::sleep_for(5ms);
    return std::pair{std::string(R"({"shipped":true})"), false};
  });
  REQUIRE(late);
  REQUIRE(eventually([&] { return passed_commit->load(); }));
  auto refused = runner.cancel("s", late->id);
  REQUIRE(refused);
  CHECK(refused->status == TaskRunner::Status::Working);
  CHECK(refused->committing);
  CHECK(refused->message.find("can no longer be cancelled") != std::string::npos);
  CHECK(runner.get("s", late->id)->committing);
  hold->store(true);
  REQUIRE(eventually([&] { return runner.get("s", late->id)->status == TaskRunner::Status::Done; }));
  CHECK(runner.get("s", late->id)->result == R"({"shipped":true})");
  CHECK(runner.cancel("s", late->id).error().code == ErrorCode::Validation);
  CHECK(runner.get("s", early->id)->status == TaskRunner::Status::Cancelled);
  CHECK(runner.get("s", early->id)->result.empty());

  // A call that ran before its reply is kept as a task already finished, with its result.
  auto done = runner.finished("s", "Running tasks.add", 60'000, R"({"id":"T001"})", false);
  CHECK(done.status == TaskRunner::Status::Done);
  CHECK(done.ttl_ms == 60'000);
  CHECK(runner.get("s", done.id)->result == R"({"id":"T001"})");
  CHECK_FALSE(runner.get("other", done.id));
  CHECK(runner.cancel("s", done.id).error().code == ErrorCode::Validation);
}
