// Resource subscriptions (gateway/resource_watch.h): a change made through another router — as
// another process would — reaches the subscribers of the task and of its epic once, and only
// them; limits, removal, a gone peer and the graceful end of listen streams.
#include <catch2/catch.hpp>

#include <chrono>
#include <mutex>
#include <thread>

#include "core/json_parse.h"
#include "domains/metrics.h"
#include "gateway/resource_watch.h"
#include "unit/test_support.h"

using namespace ct;
using namespace ct::mcp;
using namespace std::chrono_literals;
using ct::test::eventually;

namespace {

/// Collects what is sent to it; `alive` false makes it a peer that went away.
class Collector final : public Outbox {
 public:
  bool send(std::string_view message) override {
    std::lock_guard lock(mutex_);
    if (!alive) return false;
    messages_.emplace_back(message);
    return true;
  }
  bool open() const override { return alive; }
  bool reachable() const override { return alive && reachable_; }
  std::vector<std::string> messages() {
    std::lock_guard lock(mutex_);
    return messages_;
  }
  /// The URIs notified so far, in order.
  std::vector<std::string> updated() {
    std::vector<std::string> out;
    for (const auto& message : messages()) {
      auto parsed = json::parse(message);
      if (parsed && (*parsed)["method"] == json::Value("notifications/resources/updated"))
        out.push_back((*parsed)["params"]["uri"].as_string());
    }
    return out;
  }
  std::atomic<bool> alive{true};
  std::atomic<bool> reachable_{true};

 private:
  std::mutex mutex_;
  std::vector<std::string> messages_;
};

RouterFactory routers_of(test::Project& p) {
  return [workspace = p.workspace()] {
    return std::make_unique<Router>(registry(), workspace, RouterOptions{}, std::make_unique<SystemClock>());
  };
}

}  // namespace

TEST_CASE("resource watch: a task's and its epic's subscribers hear of a change once", "[mcp][subscriptions]") {
  test::Project p;
  p.add(R"({"title":"Billing","type":"epic"})");           // T001
  p.add(R"({"title":"Survey ledgers","parent":"T001"})");  // T002
  p.add(R"({"title":"Port invoices","parent":"T001"})");   // T003
  p.add(R"({"title":"Unrelated"})");                        // T004
  ResourceWatch watch(routers_of(p), {.interval = 20ms, .heartbeat = 10s});
  auto task_box = std::make_shared<Collector>();
  auto epic_box = std::make_shared<Collector>();
  auto task_sub = watch.add(task_box);
  auto epic_sub = watch.add(epic_box, "7");  // a listen stream: its id in _meta
  REQUIRE(task_sub);
  REQUIRE(epic_sub);
  REQUIRE(watch.subscribe(*task_sub, "cleo://task/T002"));
  REQUIRE(watch.subscribe(*epic_sub, "cleo://epic/T001"));
  REQUIRE(eventually([&] { return watch.reads() >= 2; }));  // it has read where the trail stands

  // One commit that changes two of the epic's tasks: one notification for the epic.
  REQUIRE(p.mutate("tasks", "update", R"({"ids":["T002","T003"],"notes":"one"})").success);
  REQUIRE(eventually([&] { return !task_box->updated().empty() && !epic_box->updated().empty(); }));
  std::this_thread::sleep_for(200ms);
  CHECK(task_box->updated() == std::vector<std::string>{"cleo://task/T002"});
  CHECK(epic_box->updated() == std::vector<std::string>{"cleo://epic/T001"});
  auto notification = json::parse(epic_box->messages().back());
  CHECK((*notification)["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"].as_int() == 7);
  CHECK_FALSE(json::parse(task_box->messages().back())->operator[]("params").contains("_meta"));

  // A task outside both: nobody hears of it. One of the epic's: only the epic's subscriber.
  REQUIRE(p.mutate("tasks", "update", R"({"id":"T004","notes":"elsewhere"})").success);
  REQUIRE(p.mutate("tasks", "update", R"({"id":"T003","notes":"in the epic"})").success);
  REQUIRE(eventually([&] { return epic_box->updated().size() == 2; }));
  std::this_thread::sleep_for(200ms);
  CHECK(task_box->updated().size() == 1);
  CHECK(epic_box->updated().size() == 2);

  // A task leaving the epic changes the epic; a task joining it too.
  REQUIRE(p.mutate("tasks", "promote", R"({"id":"T003"})").success);
  REQUIRE(eventually([&] { return epic_box->updated().size() == 3; }));
  REQUIRE(p.mutate("tasks", "add", R"({"title":"Reconcile","parent":"T001"})").success);
  REQUIRE(eventually([&] { return epic_box->updated().size() == 4; }));

  // Unsubscribed: no more.
  watch.unsubscribe(*task_sub, "cleo://task/T002");
  CHECK(watch.watched(*task_sub) == 0);
  REQUIRE(p.mutate("tasks", "update", R"({"id":"T002","notes":"two"})").success);
  REQUIRE(eventually([&] { return epic_box->updated().size() == 5; }));
  CHECK(task_box->updated().size() == 1);
}

TEST_CASE("resource watch: limits, a gone peer, and the end of listen streams", "[mcp][subscriptions]") {
  test::Project p;
  p.add(R"({"title":"Billing"})");
  ResourceWatch watch(routers_of(p), {.interval = 20ms, .heartbeat = 50ms, .max_per_client = 2, .max_subscribers = 2});
  auto first = std::make_shared<Collector>();
  auto second = std::make_shared<Collector>();
  auto a = watch.add(first, "\"listen-1\"");
  auto b = watch.add(second);
  REQUIRE(a);
  REQUIRE(b);
  CHECK(watch.subscribe(*a, "cleo://task/T001"));
  CHECK(watch.subscribe(*a, "cleo://task/T001"));  // the same again is not another
  CHECK(watch.subscribe(*a, "cleo://epic/T001"));
  auto full = watch.subscribe(*a, "cleo://task/T002");  // max_per_client
  CHECK(full.outcome == ResourceWatch::Outcome::ClientLimit);
  CHECK(full.limit == 2);
  CHECK(watch.watched(*a) == 2);
  CHECK(watch.subscribe(999, "cleo://task/T001").outcome == ResourceWatch::Outcome::NoSubscriber);

  // A peer that went away is forgotten at the next heartbeat.
  second->alive = false;
  REQUIRE(eventually([&] { return watch.subscribers() == 1; }));

  // Stopping ends a listen stream with a reply to the request that opened it.
  watch.stop();
  auto last = json::parse(first->messages().back());
  REQUIRE(last);
  CHECK((*last)["id"].as_string() == "listen-1");
  CHECK((*last)["result"]["resultType"].as_string() == "complete");
  CHECK((*last)["result"]["_meta"]["io.modelcontextprotocol/subscriptionId"].as_string() == "listen-1");
  CHECK_FALSE(watch.add(first));
}

TEST_CASE("resource watch: a slot is held only by a subscriber that watches something and can be told it (issue 50)",
          "[mcp][subscriptions]") {
  test::Project p;
  p.add(R"({"title":"Billing"})");
  ResourceWatch watch(routers_of(p), {.interval = 20ms, .heartbeat = 10s, .max_per_client = 3, .max_subscribers = 2,
                                      .unreachable_grace = 0ms});
  // Subscribers that watch nothing (a session's GET stream, a connection that unsubscribed all)
  // take no slot, however many there are.
  std::vector<std::shared_ptr<Collector>> boxes;
  std::vector<ResourceWatch::Id> ids;
  for (int i = 0; i < 4; ++i) {
    boxes.push_back(std::make_shared<Collector>());
    auto id = watch.add(boxes.back());
    REQUIRE(id);
    ids.push_back(*id);
  }
  CHECK(watch.subscribe(ids[0], "cleo://task/T001"));
  CHECK(watch.subscribe(ids[1], "cleo://task/T001"));
  auto full = watch.subscribe(ids[2], "cleo://task/T001");  // two slots, both taken
  CHECK(full.outcome == ResourceWatch::Outcome::ServerLimit);
  CHECK(full.limit == 2);
  CHECK(watch.subscribe(ids[0], "cleo://epic/T001"));  // a subscriber with a slot may watch more
  watch.unsubscribe(ids[1], "cleo://task/T001");        // watching nothing, it lets its slot go
  CHECK(watch.subscribe(ids[2], "cleo://task/T001"));
  // A subscriber that cannot be told anything (an HTTP session without its GET stream) gives its
  // slot up to one that can, once the grace has passed; it is gone (its client adds another).
  boxes[2]->reachable_ = false;
  CHECK(watch.subscribe(ids[3], "cleo://task/T001"));
  CHECK(watch.subscribe(ids[2], "cleo://epic/T001").outcome == ResourceWatch::Outcome::NoSubscriber);
  CHECK(watch.subscribers() == 3);
  // One client's subscribers share its limit: a stdio process's resources/subscribe and its
  // listen streams together.
  ResourceWatch shared(routers_of(p), {.interval = 20ms, .heartbeat = 10s, .max_per_client = 2});
  auto own = shared.add(std::make_shared<Collector>(), std::nullopt, "stdio");
  auto listen = shared.add(std::make_shared<Collector>(), "\"7\"", "stdio");
  auto other = shared.add(std::make_shared<Collector>(), "\"8\"");
  CHECK(shared.subscribe(*own, "cleo://task/T001"));
  CHECK(shared.subscribe(*listen, "cleo://epic/T001"));
  CHECK(shared.subscribe(*listen, "cleo://task/T002").outcome == ResourceWatch::Outcome::ClientLimit);
  CHECK(shared.subscribe(*other, "cleo://task/T002"));  // a client of its own
  shared.remove(*own);
  CHECK(shared.subscribe(*listen, "cleo://task/T002"));
}

TEST_CASE("resource watch: nothing is read while nobody watches", "[mcp][subscriptions]") {
  test::Project p;
  ResourceWatch watch(routers_of(p), {.interval = 10ms, .heartbeat = 10s});
  auto box = std::make_shared<Collector>();
  auto id = watch.add(box);  // a subscriber with nothing watched
  std::this_thread::sleep_for(150ms);
  CHECK(watch.reads() == 0);
  watch.remove(*id);
  CHECK(watch.subscribers() == 0);
}

namespace {

/// The calls routers of this process made, but the test's own writes: what the watcher read.
std::int64_t watcher_calls() {
  std::int64_t calls = 0;
  for (const auto& operation : CallMetrics::global().snapshot())
    if (operation.operation != "tasks.update") calls += operation.calls;
  return calls;
}

}  // namespace

TEST_CASE("resource watch: what a change costs does not grow with the URIs watched (issue 50)", "[mcp][subscriptions]") {
  test::Project p;
  p.add(R"({"title":"Billing","type":"epic"})");            // T001
  p.add(R"({"title":"Survey ledgers","parent":"T001"})");   // T002
  std::string ops = "[";
  for (int i = 0; i < 30; ++i)
    ops += std::string(i ? "," : "") + R"({"operation":"tasks.add","params":{"title":"Epic )" + std::to_string(i) + R"(","type":"epic"}})";
  REQUIRE(p.mutate("tasks", "batch", R"({"ops":)" + ops + "]}").success);  // T003…T032
  ResourceWatch watch(routers_of(p), {.interval = 20ms, .heartbeat = 10s});
  auto box = std::make_shared<Collector>();
  auto legit = watch.add(box);
  REQUIRE(legit);
  REQUIRE(watch.subscribe(*legit, "cleo://epic/T001"));
  REQUIRE(eventually([&] { return watch.reads() >= 2; }));
  int told = 0;
  auto cost_of_a_change = [&] {
    const std::int64_t before = watcher_calls();
    REQUIRE(p.mutate("tasks", "update", R"({"id":"T002","notes":"again"})").success);
    ++told;
    REQUIRE(eventually([&] { return std::ssize(box->updated()) == told; }));
    return watcher_calls() - before;
  };
  const std::int64_t alone = cost_of_a_change();
  CHECK(alone >= 1);
  CHECK(alone <= 2);
  // Three more subscribers watch 300 epics between them: 30 real ones, 270 that name no task (as
  // a client could watch them through ResourceWatch before the protocol refused such URIs).
  for (int s = 0; s < 3; ++s) {
    auto other = watch.add(std::make_shared<Collector>());
    REQUIRE(other);
    for (int i = 0; i < 100; ++i) {
      const int n = s * 100 + i;
      const std::string id = n < 30 ? "T" + std::string(n + 3 < 10 ? "00" : "0") + std::to_string(n + 3)
                                    : "T9" + std::to_string(100000 + n);
      REQUIRE(watch.subscribe(*other, "cleo://epic/" + id));
    }
  }
  const std::int64_t crowded = cost_of_a_change();
  CHECK(crowded == alone);
  CHECK(box->updated() == std::vector<std::string>(2, "cleo://epic/T001"));
}

TEST_CASE("resource watch: on a store that tells of commits, a change is heard when it is made (issue 56)",
          "[mcp][subscriptions]") {
  test::Project p;
  p.add(R"({"title":"Watched"})");  // T001
  // An interval far longer than the test: only the store's notification can wake the watcher.
  ResourceWatch watch(routers_of(p), {.interval = 60s, .heartbeat = 120s});
  auto box = std::make_shared<Collector>();
  auto id = watch.add(box);
  REQUIRE(id);
  REQUIRE(watch.subscribe(*id, "cleo://task/T001"));
  if (!test::on_postgresql()) return;  // SQLite is read on the interval (the test above)
  const auto reads = watch.reads();
  REQUIRE(p.mutate("tasks", "update", R"({"id":"T001","notes":"told"})").success);
  REQUIRE(eventually([&] { return !box->updated().empty(); }, 20s));
  CHECK(box->updated() == std::vector<std::string>{"cleo://task/T001"});
  CHECK(watch.reads() > reads);
  // Stopping does not wait for the interval either.
  const auto start = std::chrono::steady_clock::now();
  watch.stop();
  CHECK(std::chrono::steady_clock::now() - start < 30s);
}
