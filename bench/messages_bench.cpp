// ct_bench_messages — what messages (issue 53) cost an agent in a session, beside the calls it
// makes anyway, on a store of --tasks tasks and --messages messages (a quarter to the agent: by
// its label, its session, its task and everyone; the rest to others). Each row is --runs calls
// through Router::dispatch + to_json (median, p95, min), all as one agent in one session holding a
// task, so every call pays the announcement's one statement:
//   tasks.show / tasks.update (a note)   the reference: what an agent calls all day
//   session.inbox (unread, 20)           reading the inbox
//   session.send (to a task's thread)    sending (rate and thread limits lifted)
// and the session's briefing with unread messages: its tokens against its budget (1500).
//   ct_bench_messages [--tasks 10000] [--runs 200] [--postgresql URL] [--keep DIR]
#include <cstdio>
#include <functional>
#include <iostream>
#include <string>
#include <vector>

#include "bench/report.h"
#include "bench/pg_schema.h"
#include "bench/router_calls.h"
#include "core/clock.h"
#include "core/json_parse.h"
#include "core/version.h"
#include "gateway/mcp_syntax.h"
#include "gateway/product.h"

namespace ct::bench {
namespace {

constexpr int kMessages = 2000;

void progress(const std::string& text) { std::cerr << text << std::endl; }

int run(const StoreOptions& options) {
  const fs::path dir = options.keep ? *options.keep : fs::temp_directory_path() / ("ct-bench-messages-" + std::to_string(::getpid()));
  fs::create_directories(dir / ".cleo");
  json::Value config = json::Value::object();
  json::Value limits = json::Value::object();
  limits.set("perMinute", 10000);
  limits.set("maxPerThread", 100000);
  config.set("messages", std::move(limits));
  const PgSchemaDrop schema(options.postgresql,
                            write_bench_config(dir, options.postgresql, "bench_messages", std::move(config)),
                            options.keep.has_value());
  Router router(registry(), Workspace::open(dir), RouterOptions{}, std::make_unique<SystemClock>());
  call(router, mutate("system", "init", json::Value::object()));
  progress("adding " + std::to_string(options.tasks) + " tasks");
  std::vector<std::string> ids;
  for (std::int64_t i = 0; i < options.tasks; ++i) {
    json::Value task = json::Value::object();
    task.set("title", "Task number " + std::to_string(i));
    ids.push_back(router.dispatch(mutate("tasks", "add", std::move(task))).data["id"].as_string());
  }
  // The agent: its own principal and session, holding the first task.
  const Principal agent = Principal::agent("stdio:bench", "connection");
  auto as_agent = [&](Request request, const std::string& session) {
    request.caller.principal = agent;
    request.caller.session = session;
    return request;
  };
  Envelope started = router.dispatch(as_agent(mutate("session", "start", *json::parse(R"({"scope":"global","agent":"coder"})")), ""));
  const std::string session = started.data["id"].as_string();
  call(router, as_agent(mutate("tasks", "start", *json::parse(R"({"id":")" + ids.front() + "\"}")), session));
  // The announcement's cost: tasks.show in the session (which pays it) on a store with no messages
  // yet, then again with 1,000 unread the agent was not told of (a read: never marked told).
  std::vector<TimedRow> rows;
  std::size_t next = 1;
  auto show = [&] { return as_agent(query("tasks", "show", *json::parse(R"({"id":")" + ids.at(next++ % ids.size()) + "\"}")), session); };
  auto timed = [&](std::string name, const std::function<Request()>& make) {
    TimedRow row{std::move(name)};
    row.ms = timed_calls(router, make, options.runs, row.bytes);
    rows.push_back(std::move(row));
  };
  progress("timing without messages");
  timed("tasks.show, no messages, in the session", show);
  // Others send: a quarter of the messages are the agent's.
  progress("sending " + std::to_string(kMessages) + " messages");
  Request other = mutate("session", "send", json::Value::object());
  other.caller.principal = Principal::agent("stdio:other", "connection");
  for (int i = 0; i < kMessages; ++i) {
    const std::string to = i % 8 == 0   ? "coder"
                           : i % 8 == 1 ? session
                           : i % 8 == 2 ? ids.front()
                           : i % 8 == 3 ? "all"
                                        : (i % 2 ? "reviewer" : ids.at(static_cast<std::size_t>(i) % ids.size()));
    Request request = other;
    request.params = json::Value::object();
    request.params.set("to", to);
    request.params.set("body", "Message " + std::to_string(i) + ": the API of the billing module changed, see the spec");
    call(router, request);
  }
  auto update = [&] {
    return as_agent(mutate("tasks", "update", *json::parse(R"({"id":")" + ids.front() + R"(","notes":"progress"})")), session);
  };
  auto inbox = [&] { return as_agent(query("session", "inbox", *json::parse(R"({"unread":true})")), session); };
  auto send = [&] {
    return as_agent(mutate("session", "send", *json::parse(R"({"to":")" + ids.at(next++ % ids.size()) +
                                                           R"(","body":"the spec moved: see T002"})")),
                    session);
  };
  progress("timing");
  timed("tasks.show, in the session (unread, not yet told)", show);
  timed("tasks.update {notes}", update);
  timed("session.inbox {unread} (20 of " + std::to_string(kMessages / 2) + ")", inbox);
  timed("session.send (to a task)", send);
  Envelope briefing = router.dispatch(as_agent(query("session", "briefing", json::Value::object()), session));
  const std::int64_t tokens = briefing.data["tokens"].is_int() ? briefing.data["tokens"].as_int() : -1;
  const std::size_t shown = briefing.data["messages"].is_array() ? briefing.data["messages"].as_array().size() : 0;

  if (!options.keep) fs::remove_all(dir);
  std::printf("ct_bench_messages (%s build, %s store of %lld tasks and %d messages, ct %s), %d runs each\n\n",
              CT_BENCH_BUILD_TYPE, options.postgresql ? "PostgreSQL" : "SQLite", static_cast<long long>(options.tasks),
              kMessages, std::string(ct::product_version()).c_str(), options.runs);
  print_timed_rows("call", rows, options.postgresql.has_value());
  auto median = [&](std::size_t i) { return nearest_rank(rows.at(i).ms, 0.5); };
  std::printf("\nthe announcement with 1,000 unread less without messages: %.3f ms a call\n", median(1) - median(0));
  std::printf("session.inbox / tasks.show: %.2f; session.send / tasks.update: %.2f (each ≤ 1 is the target)\n",
              median(3) / median(1), median(4) / median(2));
  std::printf("\nsession.briefing with unread messages: %lld tokens (budget 1500), %zu messages shown\n",
              static_cast<long long>(tokens), shown);
  return 0;
}

}  // namespace
}  // namespace ct::bench

int main(int argc, char** argv) {
  using namespace ct::bench;
  auto parsed = parse_store_options(argc, argv, "ct_bench_messages", {.tasks = 10000, .runs = 200});
  if (!parsed) return 2;
  try {
    return run(*parsed);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ct_bench_messages: %s\n", e.what());
    return 1;
  }
}
