// Calls through the router for the in-process benchmarks: requests built in one line, and a call
// that fails loudly (a benchmark of error replies would measure nothing).
#pragma once

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <vector>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

#include "bench/workload.h"
#include "core/json.h"
#include "gateway/mcp_syntax.h"
#include "domains/router.h"

namespace ct::bench {

inline std::string describe(const Request& request) {
  return std::string(to_string(request.gateway)) + " " + request.domain + "." + request.operation + " " +
         request.params.dump();
}

/// Dispatches and serialises; throws when the call fails.
inline std::string call(Router& router, const Request& request) {
  Envelope envelope = router.dispatch(request);
  std::string out = to_json(envelope, McpAdvice(router.operations()));
  if (!envelope.success) throw std::runtime_error(describe(request) + " failed: " + out);
  return out;
}

/// Calls `make()` `runs` times after one call that warms the statement and page caches: the
/// milliseconds each took, sorted; `bytes` is the size of the last reply.
inline std::vector<double> timed_calls(Router& router, const std::function<Request()>& make, int runs, std::size_t& bytes) {
  call(router, make());
  std::vector<double> ms;
  for (int i = 0; i < runs; ++i) {
    Request request = make();
    auto t0 = std::chrono::steady_clock::now();
    std::string out = call(router, request);
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    bytes = out.size();
  }
  std::sort(ms.begin(), ms.end());
  return ms;
}

/// The agent every benchmark call names, as an MCP client names itself: audit rows carry it, as
/// they do in real use.
inline constexpr std::string_view kBenchAgent = "ct_bench";

inline Request mutate(std::string domain, std::string operation, json::Value params) {
  Request request{Gateway::Mutate, std::move(domain), std::move(operation), std::move(params)};
  request.caller.agent = kBenchAgent;
  return request;
}
/// One op of tasks.batch or plan.apply: {operation, params}.
inline json::Value batch_op(std::string_view operation, json::Value params) {
  json::Value op = json::Value::object();
  op.set("operation", std::string(operation));
  op.set("params", std::move(params));
  return op;
}

inline Request query(std::string domain, std::string operation, json::Value params) {
  Request request{Gateway::Query, std::move(domain), std::move(operation), std::move(params)};
  request.caller.agent = kBenchAgent;
  return request;
}

/// The benchmark project's .cleo/config.json: `config`'s keys and, with `postgresql`, the store on
/// that server in a schema of its own (`schema` and the process id). Returns that schema's name
/// ("" on SQLite), for a PgSchemaDrop (bench/pg_schema.h) to take away when the run is done.
inline std::string write_bench_config(const std::filesystem::path& dir, const std::optional<std::string>& postgresql,
                                      std::string_view schema, json::Value config = json::Value::object()) {
  std::filesystem::create_directories(dir / ".cleo");
  std::string name;
  if (postgresql) {
    name = std::string(schema) + "_" + std::to_string(::getpid());
    json::Value storage = json::Value::object();
    storage.set("url", *postgresql);
    storage.set("schema", name);
    config.set("storage", std::move(storage));
  }
  if (!config.empty()) std::ofstream(dir / ".cleo" / "config.json") << config.dump();
  return name;
}

/// Fills a store through `router` with `size` tasks planned by `workload`, then completes ~30% of
/// them. `on_add(index, id, micros)` sees every add; returns how many tasks were completed.
template <class OnAdd>
std::int64_t fill_store(Router& router, Workload& workload, std::int64_t size, OnAdd&& on_add) {
  for (std::int64_t i = 0; i < size; ++i) {
    PlannedAdd plan = workload.plan_add();
    Request request = mutate("tasks", "add", plan.params);
    auto started = std::chrono::steady_clock::now();
    Envelope envelope = router.dispatch(request);
    std::string out = to_json(envelope, McpAdvice(router.operations()));
    double micros = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - started).count();
    if (!envelope.success) throw std::runtime_error(describe(request) + " failed: " + out);
    const std::string& id = envelope.data["id"].as_string();
    workload.created(id, plan);
    on_add(i, id, micros);
  }
  std::int64_t completed = 0;
  for (const auto& id : workload.plan_completions()) {
    json::Value params = json::Value::object();
    params.set("id", id);
    call(router, mutate("tasks", "complete", std::move(params)));
    ++completed;
  }
  return completed;
}

}  // namespace ct::bench
