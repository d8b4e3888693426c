// ct_bench_mcp_features — MCP beyond the two tools (issue 37) on a store of --tasks tasks (the seeded
// workload of ct_bench_store, built through the router). Each timed call is one JSON-RPC message
// through mcp::Protocol, as `ct mcp` and `ct serve` answer it (parse, the disclosure/ call that
// reads the store through the router, the reply written), median, p95 and min over --runs calls:
//   completion/complete of a task id, nothing typed (the open tasks, newest change first)
//   completion/complete of a task id, an id prefix (T12)                  target < 2 ms at 10k
//   completion/complete of a task id, a word of titles (tasks.find's rank) target < 2 ms at 10k
//   completion/complete of an epic id, a word                             target < 2 ms at 10k
//   prompts/get take, next, decompose; resources/read of a task and an epic; resources/list's first
//   page (no targets; reported)
// and, with a subscription of cleo://task/{id}, the time from a commit by another router to the
// notification (the watcher reads the change signal every 250 ms: it is that interval's wait).
// The report is Markdown on stdout, for docs/performance.md; progress goes to stderr.
//   ct_bench_mcp_features [--tasks 10000] [--runs 200] [--postgresql URL] [--keep DIR]
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
#include "gateway/mcp_protocol.h"
#include "gateway/outbox.h"
#include "gateway/resource_watch.h"

namespace ct::bench {
namespace {

void progress(const std::string& text) { std::cerr << text << std::endl; }

/// One message through the protocol, `runs` times after one that warms the caches; a reply that is
/// an error aborts the run.
TimedRow timed_messages(mcp::Protocol& protocol, Router& router, std::string call, const std::string& message, int runs,
                   double target_ms = 0) {
  TimedRow row{std::move(call), {}, 0, target_ms};
  mcp::Connection connection;
  for (int i = -1; i < runs; ++i) {
    const auto started = Steady::now();
    mcp::Outcome outcome = protocol.handle(message, connection, router);
    const double ms = micros_since(started) / 1000;
    if (!outcome.reply || outcome.reply->find("\"error\":{\"code\":-32") != std::string::npos)
      throw std::runtime_error(row.call + ": " + outcome.reply.value_or("no reply"));
    if (i < 0) continue;
    row.ms.push_back(ms);
    row.bytes = outcome.reply->size();
  }
  std::sort(row.ms.begin(), row.ms.end());
  return row;
}

std::string request(std::string_view method, std::string_view params) {
  return R"({"jsonrpc":"2.0","id":1,"method":")" + std::string(method) + R"(","params":)" + std::string(params) + "}";
}

std::string complete(std::string_view ref, std::string_view argument, std::string_view value) {
  return request("completion/complete", R"({"ref":)" + std::string(ref) + R"(,"argument":{"name":")" + std::string(argument) +
                                             R"(","value":")" + std::string(value) + R"("}})");
}

/// What a subscriber is sent: each message, with when it came.
class Clocked final : public mcp::Outbox {
 public:
  bool send(std::string_view) override {
    std::lock_guard lock(mutex_);
    arrived_ = Steady::now();
    ++count_;
    cv_.notify_all();
    return true;
  }
  bool open() const override { return true; }
  /// Waits for message number `n` (counted from 1); its arrival.
  Steady::time_point wait(int n) {
    std::unique_lock lock(mutex_);
    if (!cv_.wait_for(lock, std::chrono::seconds(10), [&] { return count_ >= n; }))
      throw std::runtime_error("no notification within 10 s");
    return arrived_;
  }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  Steady::time_point arrived_;
  int count_ = 0;
};

int run(const StoreOptions& options) {
  WorkDir work(options.keep, "ct-bench-mcp-features");
  const fs::path& dir = work.path();
  const PgSchemaDrop schema(options.postgresql, write_bench_config(dir, options.postgresql, "bench_features"),
                            options.keep.has_value());
  auto workspace = Workspace::open(dir);
  mcp::RouterFactory make_router = [workspace] {
    return std::make_unique<Router>(registry(), workspace, RouterOptions{}, std::make_unique<SystemClock>());
  };
  auto router = make_router();
  call(*router, mutate("system", "init", json::Value::object()));
  progress("adding " + std::to_string(options.tasks) + " workload tasks");
  const auto started = Steady::now();
  Workload workload(20261128);
  fill_store(*router, workload, options.tasks, [](std::int64_t, const std::string&, double) {});
  progress("built in " + format_fixed(micros_since(started) / 1e6, 1) + " s");

  // Subjects: an epic, an open task, a word of titles (a common one: many matches to rank).
  json::Value epics = json::Value::object();
  epics.set("type", "epic");
  epics.set("limit", 1);
  epics.set("fields", json::Value::array_of(std::vector<std::string>{"id", "title"}));
  const json::Value epic = reply_rows(router->dispatch(query("tasks", "list", epics)).data).at(0);
  json::Value open = json::Value::object();
  open.set("status", json::Value::array_of(std::vector<std::string>{"pending"}));
  open.set("type", "task");
  open.set("limit", 1);
  open.set("fields", json::Value::array_of(std::vector<std::string>{"id", "title"}));
  const json::Value task = reply_rows(router->dispatch(query("tasks", "list", open)).data).at(0);
  const std::string word = task["title"].as_string().substr(0, task["title"].as_string().find(' ')).substr(0, 4);
  const std::string epic_word = epic["title"].as_string().substr(0, epic["title"].as_string().find(' ')).substr(0, 4);
  progress("subjects: epic " + epic["id"].as_string() + ", task " + task["id"].as_string() + ", words '" + word + "', '" +
           epic_word + "'");

  mcp::Protocol protocol(registry(), mcp::ServerInfo{"cleo", std::string(product_version()), ""});
  const std::string take = R"({"type":"ref/prompt","name":"take"})";
  const std::string decompose = R"({"type":"ref/prompt","name":"decompose"})";
  std::vector<TimedRow> rows;
  const int runs = options.runs;
  rows.push_back(timed_messages(protocol, *router, "completion/complete: a task id, nothing typed", complete(take, "id", ""), runs));
  rows.push_back(timed_messages(protocol, *router, "completion/complete: a task id, the prefix T12", complete(take, "id", "T12"), runs, 2));
  rows.push_back(timed_messages(protocol, *router, "completion/complete: a task id, the word '" + word + "'",
                                complete(take, "id", word), runs, 2));
  rows.push_back(timed_messages(protocol, *router, "completion/complete: an epic id, the word '" + epic_word + "'",
                                complete(decompose, "epic", epic_word), runs, 2));
  rows.push_back(timed_messages(protocol, *router, "prompts/get take (the task, its memory)",
                                request("prompts/get", R"({"name":"take","arguments":{"id":")" + task["id"].as_string() + "\"}}"), runs));
  rows.push_back(timed_messages(protocol, *router, "prompts/get next (tasks.next, 3 with why)", request("prompts/get", R"({"name":"next"})"), runs));
  rows.push_back(timed_messages(protocol, *router, "prompts/get decompose (the epic, its tree and waves, the skill)",
                                request("prompts/get", R"({"name":"decompose","arguments":{"epic":")" + epic["id"].as_string() + "\"}}"), runs));
  rows.push_back(timed_messages(protocol, *router, "resources/read cleo://task/{id}",
                                request("resources/read", R"({"uri":"cleo://task/)" + task["id"].as_string() + "\"}"), runs));
  rows.push_back(timed_messages(protocol, *router, "resources/read cleo://epic/{id}",
                                request("resources/read", R"({"uri":"cleo://epic/)" + epic["id"].as_string() + "\"}"), runs));
  rows.push_back(timed_messages(protocol, *router, "resources/list (the first page, 100)", request("resources/list", "{}"), runs));

  // A commit by another router, told to a subscriber of the task.
  progress("subscription latency");
  mcp::ResourceWatch watch(make_router);
  auto outbox = std::make_shared<Clocked>();
  auto subscriber = watch.add(outbox);
  watch.subscribe(*subscriber, "cleo://task/" + task["id"].as_string());
  TimedRow told{"a commit told to a subscriber (notifications/resources/updated)", {}, 0, 0};
  auto writer = make_router();
  const int notes = std::min(runs, 40);
  for (int i = 1; i <= notes; ++i) {
    json::Value update = json::Value::object();
    update.set("id", task["id"].as_string());
    update.set("notes", "note " + std::to_string(i));
    const auto committed = Steady::now();
    call(*writer, mutate("tasks", "update", std::move(update)));
    const auto arrived = outbox->wait(i);
    told.ms.push_back(std::chrono::duration<double, std::milli>(arrived - committed).count());
  }
  std::sort(told.ms.begin(), told.ms.end());
  rows.push_back(std::move(told));

  std::printf("ct_bench_mcp_features (%s build, %s store of %lld tasks, ct %s), %d runs each, load average %s\n\n",
              CT_BENCH_BUILD_TYPE, options.postgresql ? "PostgreSQL" : "SQLite", static_cast<long long>(options.tasks),
              std::string(product_version()).c_str(), runs, load_average().c_str());
  print_timed_rows("message", rows, options.postgresql.has_value());
  return 0;
}

}  // namespace
}  // namespace ct::bench

int main(int argc, char** argv) {
  using namespace ct::bench;
  auto options = parse_store_options(argc, argv, "ct_bench_mcp_features", {.tasks = 10000, .runs = 200});
  if (!options) return 2;
  if (options->tasks < 100 || options->runs < 1) {
    std::fprintf(stderr, "ct_bench_mcp_features: --tasks must be at least 100 and --runs at least 1\n");
    return 2;
  }
  try {
    return run(*options);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ct_bench_mcp_features: %s\n", e.what());
    return 1;
  }
}
