// ct_bench_graph — dependency-graph analysis (engines/rules/graph.h) at 10k and 100k tasks. Each store
// is built through the router as agents build it: epics of 1,000 tasks (sizes below 1,000 make one
// epic), each task depending on 0–2 of the 50 tasks before it in its epic (seeded), the first 30 %
// of every epic completed. Then it times, as Router::dispatch + to_json (median, p90, min):
//   tasks.analyze {epicId}    one 1,000-task epic            target < 10 ms
//   tasks.analyze {}          the whole project              target < 300 ms at 100k
//   orchestrate.ready {epicId}                               target < 5 ms at 100k
//   orchestrate.spawn {id}    a ready task's prompt          (no target; reported)
// The report is Markdown on stdout, for docs/performance.md; progress goes to stderr.
//   ct_bench_graph [--sizes 10000,100000] [--runs 30] [--keep DIR]
#include <algorithm>
#include <cstdio>
#include <functional>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#include "bench/report.h"
#include "bench/router_calls.h"
#include "core/clock.h"
#include "gateway/mcp_syntax.h"
#include "gateway/product.h"

namespace ct::bench {
namespace {

constexpr std::int64_t kEpicSize = 1000;

struct Options {
  std::vector<std::int64_t> sizes{10000, 100000};
  int runs = 30;
  std::optional<fs::path> keep;
};

struct Row {
  std::int64_t size = 0;
  std::string op;
  double target_ms = 0;  // 0 = none
  double median = 0, p90 = 0, min = 0;
  std::size_t bytes = 0;
};

void progress(const std::string& text) { std::cerr << text << std::endl; }

Row measure(Router& router, std::int64_t size, std::string op, double target_ms, const std::function<Request()>& make,
            int runs) {
  std::size_t bytes = 0;
  const std::vector<double> ms = timed_calls(router, make, runs, bytes);
  return {size, std::move(op), target_ms, nearest_rank(ms, 0.5), nearest_rank(ms, 0.9), ms.front(), bytes};
}

void bench_size(std::int64_t size, const fs::path& dir, const Options& options, std::vector<Row>& rows) {
  fs::create_directories(dir);
  RouterOptions router_options;
  Router router(registry(), Workspace::open(dir), router_options, std::make_unique<FixedClock>(*parse_iso8601("2026-01-01T00:00:00Z")));
  call(router, mutate("system", "init", json::Value::object()));

  std::mt19937 random(20261123);
  const std::int64_t epics = std::max<std::int64_t>(1, size / kEpicSize);
  const std::int64_t per_epic = size / epics - 1;  // the epic itself counts
  std::vector<std::string> epic_ids;
  std::vector<std::string> first_ready;
  auto started = Steady::now();
  for (std::int64_t e = 0; e < epics; ++e) {
    json::Value epic = json::Value::object();
    epic.set("title", "Epic " + std::to_string(e + 1));
    epic.set("type", "epic");
    Envelope added = router.dispatch(mutate("tasks", "add", std::move(epic)));
    const std::string epic_id = added.data["id"].as_string();
    epic_ids.push_back(epic_id);
    std::vector<std::string> ids;
    for (std::int64_t t = 0; t < per_epic; ++t) {
      json::Value params = json::Value::object();
      params.set("title", "Task " + std::to_string(t + 1) + " of epic " + std::to_string(e + 1));
      params.set("parent", epic_id);
      std::vector<std::string> depends;
      const auto window = static_cast<std::int64_t>(std::min<std::size_t>(ids.size(), 50));
      for (int d = 0; d < 2 && window > 0; ++d)
        if (random() % 10 < 6) {
          const std::string& dep = ids[ids.size() - 1 - static_cast<std::size_t>(random() % static_cast<std::uint32_t>(window))];
          if (std::find(depends.begin(), depends.end(), dep) == depends.end()) depends.push_back(dep);
        }
      if (!depends.empty()) params.set("depends", json::Value::array_of(depends));
      Envelope task = router.dispatch(mutate("tasks", "add", std::move(params)));
      if (!task.success) throw std::runtime_error("tasks.add failed: " + to_json(task, McpAdvice(registry())));
      ids.push_back(task.data["id"].as_string());
    }
    for (std::size_t t = 0; t < ids.size() * 3 / 10; ++t) {
      json::Value params = json::Value::object();
      params.set("id", ids[t]);
      call(router, mutate("tasks", "complete", std::move(params)));
    }
    if ((e + 1) % std::max<std::int64_t>(1, epics / 10) == 0)
      progress("  " + std::to_string(size) + ": " + std::to_string(e + 1) + " of " + std::to_string(epics) + " epics");
  }
  progress("  " + std::to_string(size) + ": built in " + format_fixed(micros_since(started) / 1e6, 1) + " s");

  // The middle epic: neither the first rows of the table nor the last.
  const std::string epic_id = epic_ids[epic_ids.size() / 2];
  json::Value ready_params = json::Value::object();
  ready_params.set("epicId", epic_id);
  Envelope ready = router.dispatch(query("orchestrate", "ready", ready_params));
  if (!ready.success || ready.data["tasks"].as_array().empty())
    throw std::runtime_error("orchestrate.ready found nothing to spawn: " + to_json(ready, McpAdvice(registry())));
  const std::string spawn_id = ready.data["tasks"].as_array().front()["id"].as_string();

  auto with_epic = [&](std::string domain, std::string op) {
    return [domain, op, epic_id] {
      json::Value params = json::Value::object();
      params.set("epicId", epic_id);
      return query(domain, op, std::move(params));
    };
  };
  rows.push_back(measure(router, size, "tasks.analyze {epicId} (1,000-task epic)", 10, with_epic("tasks", "analyze"),
                         options.runs));
  rows.push_back(measure(router, size, "tasks.analyze {} (whole project)", size >= 100000 ? 300 : 0,
                         [] { return query("tasks", "analyze", json::Value::object()); }, std::max(5, options.runs / 3)));
  rows.push_back(measure(router, size, "orchestrate.ready {epicId}", size >= 100000 ? 5 : 0,
                         with_epic("orchestrate", "ready"), options.runs));
  rows.push_back(measure(router, size, "orchestrate.status {epicId}", 0, with_epic("orchestrate", "status"),
                         options.runs));
  rows.push_back(measure(
      router, size, "orchestrate.spawn {id} (prompt only)", 0,
      [&] {
        json::Value params = json::Value::object();
        params.set("id", spawn_id);
        return mutate("orchestrate", "spawn", std::move(params));
      },
      options.runs));
}

Options parse(int argc, char** argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    std::string_view flag = argv[i];
    if (flag == "--help") {
      std::puts("ct_bench_graph [--sizes 10000,100000] [--runs 30] [--keep DIR]");
      std::exit(0);
    }
    if (i + 1 >= argc) throw std::invalid_argument(std::string(flag) + " needs a value");
    std::string_view value = argv[++i];
    if (flag == "--sizes") {
      options.sizes.clear();
      for (std::size_t at = 0; at <= value.size();) {
        std::size_t comma = std::min(value.find(',', at), value.size());
        options.sizes.push_back(parse_number<std::int64_t>(flag, value.substr(at, comma - at)));
        at = comma + 1;
      }
    } else if (flag == "--runs") {
      options.runs = std::max(3, parse_number<int>(flag, value));
    } else if (flag == "--keep") {
      options.keep = fs::path(value);
    } else {
      throw std::invalid_argument("unknown flag " + std::string(flag));
    }
  }
  return options;
}

}  // namespace
}  // namespace ct::bench

int main(int argc, char** argv) {
  using namespace ct::bench;
  try {
    Options options = parse(argc, argv);
    WorkDir work(options.keep, "ct-bench-graph");
    std::vector<Row> rows;
    for (auto size : options.sizes) {
      progress("size " + std::to_string(size));
      bench_size(size, work.path() / ("store-" + std::to_string(size)), options, rows);
    }
    std::printf("### Dependency-graph analysis (`ct_bench_graph`)\n\n");
    std::printf("- Command: `%s`\n", command_line(argc, argv).c_str());
    std::printf("- Build: %s; CPU: %s; %s; load average %s at the end\n", CT_BENCH_BUILD_TYPE, cpu_model().c_str(),
                kernel().c_str(), load_average().c_str());
    std::printf("- Stores: epics of 1,000 tasks, each task depending on 0–2 of the 50 before it, 30 %% done; "
                "Router::dispatch + to_json, %d runs (the whole-project analyse a third as many)\n\n", options.runs);
    std::printf("| tasks | call | median | p90 | min | reply bytes | target |\n|---|---|---|---|---|---|---|\n");
    for (const auto& row : rows) {
      std::string target = row.target_ms <= 0 ? "—"
                           : row.median < row.target_ms
                               ? "< " + format_fixed(row.target_ms, 0) + " ms: met"
                               : "< " + format_fixed(row.target_ms, 0) + " ms: **missed**";
      std::printf("| %lld | %s | %s ms | %s ms | %s ms | %zu | %s |\n", static_cast<long long>(row.size), row.op.c_str(),
                  format_fixed(row.median, 2).c_str(), format_fixed(row.p90, 2).c_str(), format_fixed(row.min, 2).c_str(),
                  row.bytes, target.c_str());
    }
    return 0;
  } catch (const std::exception& error) {
    std::fprintf(stderr, "ct_bench_graph: %s\n", error.what());
    return 1;
  }
}
