// ct_bench_subscriptions — what many watched resources cost one legitimate subscriber (issue 50,
// item 3). One subscriber watches a task and its epic; a commit by another router changes the task;
// timed: from the commit to that subscriber's notification (notifications/resources/updated of the
// task), median, p95 and min over --runs commits, with:
//   nothing else watched;
//   --watched distinct epic URIs that name no task (cleo://epic/T9000000…), 100 per subscriber
//     (what 400 MCP sessions × 100 resources/subscribe could watch before subscribing to a
//     resource that does not exist was refused);
//   --watched distinct epic URIs of real epics (as many empty epics added to the store first).
// The watch is the server's (gateway/resource_watch.h) with its default options: it reads the
// store's change signal every 250 ms, so a notification waits up to that long even when the rest
// costs nothing. The URIs are watched through ResourceWatch directly, as the protocol would once
// it accepted them. Markdown on stdout, for docs/performance.md; progress on stderr.
//   ct_bench_subscriptions [--tasks 1000] [--watched 40000] [--runs 5] [--postgresql URL] [--keep DIR]
#include <condition_variable>
#include <cstdio>
#include <iostream>
#include <mutex>
#include <string>
#include <vector>

#include "bench/report.h"
#include "bench/pg_schema.h"
#include "bench/router_calls.h"
#include "core/clock.h"
#include "core/json_parse.h"
#include "core/version.h"
#include "gateway/product.h"
#include "domains/projection.h"
#include "gateway/outbox.h"
#include "gateway/resource_watch.h"

namespace ct::bench {
namespace {

void progress(const std::string& text) { std::cerr << text << std::endl; }

struct Options {
  std::int64_t tasks = 1000;
  std::int64_t watched = 40000;
  int runs = 5;
  std::optional<std::string> postgresql;
  std::optional<fs::path> keep;
};

std::optional<Options> parse(int argc, char** argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    const char* value = i + 1 < argc ? argv[i + 1] : nullptr;
    try {
      if (arg == "--tasks" && value) options.tasks = parse_number<std::int64_t>(arg, value);
      else if (arg == "--watched" && value) options.watched = parse_number<std::int64_t>(arg, value);
      else if (arg == "--runs" && value) options.runs = parse_number<int>(arg, value);
      else if (arg == "--postgresql" && value) options.postgresql = value;
      else if (arg == "--keep" && value) options.keep = fs::path(value);
      else throw std::invalid_argument(std::string(arg));
      ++i;
    } catch (const std::exception&) {
      std::fprintf(stderr,
                   "usage: ct_bench_subscriptions [--tasks 1000] [--watched 40000] [--runs 5] [--postgresql URL] "
                   "[--keep DIR]\n");
      return std::nullopt;
    }
  }
  if (options.tasks < 100 || options.watched < 100 || options.runs < 1) {
    std::fprintf(stderr, "ct_bench_subscriptions: --tasks and --watched must be at least 100, --runs at least 1\n");
    return std::nullopt;
  }
  return options;
}

/// What the legitimate subscriber is sent: each notification of `uri`, with when it came.
class Clocked final : public mcp::Outbox {
 public:
  explicit Clocked(std::string uri) : uri_(std::move(uri)) {}
  bool send(std::string_view message) override {
    if (message.find("\"uri\":\"" + uri_ + "\"") == std::string_view::npos) return true;
    std::lock_guard lock(mutex_);
    arrived_ = Steady::now();
    ++count_;
    cv_.notify_all();
    return true;
  }
  bool open() const override { return true; }
  int count() {
    std::lock_guard lock(mutex_);
    return count_;
  }
  /// Waits for notification number `n` (counted from 1); its arrival.
  Steady::time_point wait(int n) {
    std::unique_lock lock(mutex_);
    if (!cv_.wait_for(lock, std::chrono::seconds(600), [&] { return count_ >= n; }))
      throw std::runtime_error("no notification within 600 s");
    return arrived_;
  }

 private:
  std::string uri_;
  std::mutex mutex_;
  std::condition_variable cv_;
  Steady::time_point arrived_;
  int count_ = 0;
};

/// The others: what they are sent is dropped.
class Sink final : public mcp::Outbox {
 public:
  bool send(std::string_view) override { return true; }
  bool open() const override { return true; }
};

std::string added_id(Router& router, json::Value params) {
  auto reply = json::parse(call(router, mutate("tasks", "add", std::move(params))));
  return (*reply)["data"]["id"].as_string();
}

/// `count` empty epics, added 500 to a tasks.batch: their ids.
std::vector<std::string> add_epics(Router& router, std::int64_t count) {
  std::vector<std::string> ids;
  while (std::ssize(ids) < count) {
    json::Value ops = json::Value::array();
    const std::int64_t batch = std::min<std::int64_t>(500, count - std::ssize(ids));
    for (std::int64_t i = 0; i < batch; ++i) {
      json::Value params = json::Value::object();
      params.set("title", "Watched epic " + std::to_string(ids.size() + i));
      params.set("type", "epic");
      json::Value op = json::Value::object();
      op.set("operation", "tasks.add");
      op.set("params", std::move(params));
      ops.push_back(std::move(op));
    }
    json::Value params = json::Value::object();
    params.set("ops", std::move(ops));
    auto reply = json::parse(call(router, mutate("tasks", "batch", std::move(params))));
    for (const auto& result : (*reply)["data"]["results"].as_array())
      ids.push_back(result["id"].as_string());
    progress("  " + std::to_string(ids.size()) + " epics");
  }
  return ids;
}

TimedRow told(Router& writer, Clocked& legit, const std::string& task, int runs, std::string label) {
  TimedRow row{std::move(label), {}, 0, 0};
  const int before = legit.count();
  for (int i = 1; i <= runs; ++i) {
    json::Value update = json::Value::object();
    update.set("id", task);
    update.set("notes", "note " + std::to_string(before + i));
    const auto committed = Steady::now();
    call(writer, mutate("tasks", "update", std::move(update)));
    const auto arrived = legit.wait(before + i);
    row.ms.push_back(std::chrono::duration<double, std::milli>(arrived - committed).count());
    progress("  " + row.call + ": " + format_fixed(row.ms.back(), 1) + " ms");
  }
  std::sort(row.ms.begin(), row.ms.end());
  return row;
}

int run(const Options& options) {
  WorkDir work(options.keep, "ct-bench-subscriptions");
  const fs::path& dir = work.path();
  const PgSchemaDrop schema(options.postgresql, write_bench_config(dir, options.postgresql, "bench_subscriptions"),
                            options.keep.has_value());
  auto workspace = Workspace::open(dir);
  mcp::RouterFactory make_router = [workspace] {
    return std::make_unique<Router>(registry(), workspace, RouterOptions{}, std::make_unique<SystemClock>());
  };
  auto router = make_router();
  call(*router, mutate("system", "init", json::Value::object()));
  progress("adding " + std::to_string(options.tasks) + " workload tasks");
  Workload workload(20261128);
  fill_store(*router, workload, options.tasks, [](std::int64_t, const std::string&, double) {});
  json::Value epic_params = json::Value::object();
  epic_params.set("title", "The legitimate subscriber's epic");
  epic_params.set("type", "epic");
  const std::string epic = added_id(*router, std::move(epic_params));
  json::Value task_params = json::Value::object();
  task_params.set("title", "The task that changes");
  task_params.set("parent", epic);
  const std::string task = added_id(*router, std::move(task_params));

  mcp::ResourceWatch watch(make_router);
  auto legit = std::make_shared<Clocked>("cleo://task/" + task);
  auto subscriber = watch.add(legit);
  (void)watch.subscribe(*subscriber, "cleo://task/" + task);
  (void)watch.subscribe(*subscriber, "cleo://epic/" + epic);
  auto writer = make_router();
  const std::int64_t per = 100;
  const std::int64_t subscribers = (options.watched + per - 1) / per;
  std::vector<TimedRow> rows;
  rows.push_back(told(*writer, *legit, task, options.runs, "nothing else watched"));

  // Epics that do not exist: ids far beyond the store's.
  progress("watching " + std::to_string(options.watched) + " epics that do not exist");
  auto started = Steady::now();
  std::vector<mcp::ResourceWatch::Id> others;
  for (std::int64_t s = 0, n = 0; s < subscribers; ++s) {
    auto id = watch.add(std::make_shared<Sink>());
    if (!id) throw std::runtime_error("the watch took no more subscribers after " + std::to_string(s));
    others.push_back(*id);
    for (std::int64_t i = 0; i < per && n < options.watched; ++i, ++n)
      (void)watch.subscribe(*id, "cleo://epic/T" + std::to_string(9'000'000 + n));
  }
  progress("  subscribed in " + format_fixed(micros_since(started) / 1e6, 1) + " s");
  rows.push_back(told(*writer, *legit, task, options.runs,
                      "+ " + std::to_string(options.watched) + " watched epics that do not exist (" +
                          std::to_string(subscribers) + " subscribers × " + std::to_string(per) + ")"));
  for (auto id : others) watch.remove(id);
  others.clear();

  // Real epics, each watched once.
  progress("adding " + std::to_string(options.watched) + " epics");
  std::vector<std::string> epics = add_epics(*router, options.watched);
  progress("watching them");
  started = Steady::now();
  for (std::int64_t s = 0, n = 0; s < subscribers; ++s) {
    auto id = watch.add(std::make_shared<Sink>());
    if (!id) throw std::runtime_error("the watch took no more subscribers after " + std::to_string(s));
    others.push_back(*id);
    for (std::int64_t i = 0; i < per && n < options.watched; ++i, ++n)
      (void)watch.subscribe(*id, "cleo://epic/" + epics[static_cast<std::size_t>(n)]);
  }
  progress("  subscribed in " + format_fixed(micros_since(started) / 1e6, 1) + " s");
  rows.push_back(told(*writer, *legit, task, options.runs,
                      "+ " + std::to_string(options.watched) + " watched real epics (" + std::to_string(subscribers) +
                          " subscribers × " + std::to_string(per) + ")"));

  std::printf("ct_bench_subscriptions (%s build, %s store of %lld workload tasks, ct %s), %d commits each, load "
              "average %s\n\n",
              CT_BENCH_BUILD_TYPE, options.postgresql ? "PostgreSQL" : "SQLite", static_cast<long long>(options.tasks),
              std::string(product_version()).c_str(), options.runs, load_average().c_str());
  print_timed_rows("a commit told to the subscriber of a task and its epic, with", rows, options.postgresql.has_value());
  return 0;
}

}  // namespace
}  // namespace ct::bench

int main(int argc, char** argv) {
  using namespace ct::bench;
  auto options = parse(argc, argv);
  if (!options) return 2;
  try {
    return run(*options);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ct_bench_subscriptions: %s\n", e.what());
    return 1;
  }
}
