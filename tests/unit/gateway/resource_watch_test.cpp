// Resource subscriptions (gateway/resource_watch.h): a change made through another router — as
// another process would — reaches the subscribers of the task and of its epic once, and only
// them; limits, removal, a gone peer and the graceful end of listen streams.
#include <catch2/catch.hpp>

#include <chrono>
#include <mutex>
#include <thread>

#include "core/json_parse.h"
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
  ResourceWatch watch(routers_of(p), {.interval = 20ms, .heartbeat = 50ms, .max_per_subscriber = 2, .max_subscribers = 2});
  auto first = std::make_shared<Collector>();
  auto second = std::make_shared<Collector>();
  auto a = watch.add(first, "\"listen-1\"");
  auto b = watch.add(second);
  REQUIRE(a);
  REQUIRE(b);
  CHECK_FALSE(watch.add(std::make_shared<Collector>()));  // max_subscribers
  CHECK(watch.subscribe(*a, "cleo://task/T001"));
  CHECK(watch.subscribe(*a, "cleo://task/T001"));  // the same again is not another
  CHECK(watch.subscribe(*a, "cleo://epic/T001"));
  CHECK_FALSE(watch.subscribe(*a, "cleo://task/T002"));  // max_per_subscriber
  CHECK(watch.watched(*a) == 2);
  CHECK_FALSE(watch.subscribe(999, "cleo://task/T001"));

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
