// ct_bench_import — tasks.import of N records into a fresh store (issue 56: the work of an import
// grows with the file, not faster). The records are generated from a fixed seed in tasks.export's
// format: an epic every 1,000 records, a task every fifth record under the epic and subtasks under
// the last task; each task depends on the task before it in its epic (steps of a plan: chains of
// 200), ~30 % of the records on one of the 50 records before, labels, ~30 % done. Each run is a
// fresh project (system.init, not timed), then one tasks.import {tasks} through Router::dispatch +
// to_json: its wall time and this process's CPU time (user + system) across it.
// Median over --runs per size; the report gives each size's CPU per record and its ratio to the
// first size's (target: 100k ≤ 12× 10k, and 1M in < 5 minutes of wall time).
//   ct_bench_import [--sizes 10000,100000 | --tasks N] [--runs 3] [--postgresql URL] [--keep DIR]
#include <sys/resource.h>

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "bench/report.h"
#include "bench/pg_schema.h"
#include "bench/router_calls.h"
#include "core/clock.h"
#include "core/version.h"
#include "gateway/mcp_syntax.h"
#include "gateway/product.h"

namespace ct::bench {
namespace {

struct Options {
  std::vector<std::int64_t> sizes{10000, 100000};
  int runs = 3;
  std::optional<std::string> postgresql;
  std::optional<fs::path> keep;
};

void progress(const std::string& text) { std::cerr << text << std::endl; }

double cpu_seconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  auto seconds = [](const timeval& t) { return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6; };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

/// N records in tasks.export's format (see the header), the same for every run of one N.
json::Value records(std::int64_t n) {
  static constexpr const char* kLabels[] = {"api", "ui", "db", "perf", "docs"};
  static constexpr const char* kPriorities[] = {"low", "medium", "high"};
  Rng rng(20261129);
  json::Value::Array out;
  out.reserve(static_cast<std::size_t>(n));
  std::string epic, task, previous_task;
  for (std::int64_t i = 0; i < n; ++i) {
    const std::string id = "X" + std::to_string(i);
    json::Value record = json::Value::object();
    record.set("id", id);
    record.set("title", "Imported record " + std::to_string(i) + " of the parser and storage work");
    record.set("priority", kPriorities[rng.below(3)]);
    std::vector<std::string> depends;
    if (i % 1000 == 0) {
      record.set("type", "epic");
      epic = id;
      previous_task.clear();
    } else if (i % 5 == 1) {
      record.set("parent", epic);
      if (!previous_task.empty()) depends.push_back(previous_task);
      task = previous_task = id;
    } else {
      record.set("parent", task);
    }
    if (i > 50 && rng.chance(0.3)) {
      std::string dep = "X" + std::to_string(i - 1 - static_cast<std::int64_t>(rng.below(50)));
      if (std::find(depends.begin(), depends.end(), dep) == depends.end()) depends.push_back(std::move(dep));
    }
    if (!depends.empty()) record.set("depends", json::Value::array_of(depends));
    record.set("labels", json::Value::array_of(std::vector<std::string>{kLabels[rng.below(5)]}));
    if (rng.chance(0.3)) record.set("status", "done");
    out.push_back(std::move(record));
  }
  return json::Value(std::move(out));
}

struct Sample {
  double cpu_s = 0;
  double wall_s = 0;
};

Sample import_once(const Options& options, const json::Value& tasks, int run) {
  // Every import into a store of its own: a directory, and on PostgreSQL a schema, per size and run.
  const std::string name = std::to_string(tasks.size()) + "_" + std::to_string(run);
  WorkDir work(options.keep ? std::optional<fs::path>(*options.keep / ("n" + name)) : std::nullopt, "ct-bench-import");
  const PgSchemaDrop schema(options.postgresql, write_bench_config(work.path(), options.postgresql, "bench_import_" + name),
                            options.keep.has_value());
  RouterOptions router_options;
  Router router(registry(), Workspace::open(work.path()), router_options, std::make_unique<SystemClock>());
  call(router, mutate("system", "init", json::Value::object()));
  json::Value params = json::Value::object();
  params.set("tasks", tasks);
  Request request = mutate("tasks", "import", std::move(params));
  const double cpu_before = cpu_seconds();
  const auto started = Steady::now();
  Envelope envelope = router.dispatch(request);
  std::string out = to_json(envelope, McpAdvice(router.operations()));
  Sample sample{cpu_seconds() - cpu_before, std::chrono::duration<double>(Steady::now() - started).count()};
  if (!envelope.success) throw std::runtime_error("tasks.import failed: " + out.substr(0, 2000));
  if (envelope.data["imported"] != json::Value(static_cast<std::int64_t>(tasks.size())))
    throw std::runtime_error("tasks.import imported " + envelope.data["imported"].dump() + " of " +
                             std::to_string(tasks.size()));
  return sample;
}

int run(const Options& options) {
  struct Row {
    std::int64_t n;
    double cpu_s, wall_s;
  };
  std::vector<Row> rows;
  for (std::int64_t n : options.sizes) {
    progress("generating " + std::to_string(n) + " records");
    const json::Value tasks = records(n);
    std::vector<double> cpu, wall;
    for (int r = 0; r < options.runs; ++r) {
      progress("importing " + std::to_string(n) + " records: run " + std::to_string(r + 1) + " of " +
               std::to_string(options.runs));
      Sample sample = import_once(options, tasks, r);
      progress("  cpu " + format_fixed(sample.cpu_s, 2) + " s, wall " + format_fixed(sample.wall_s, 2) + " s");
      cpu.push_back(sample.cpu_s);
      wall.push_back(sample.wall_s);
    }
    rows.push_back({n, percentile(cpu, 0.5), percentile(wall, 0.5)});
  }
  std::printf("ct_bench_import (%s build, %s store, ct %s), median of %d run(s) per size, load average %s\n\n",
              CT_BENCH_BUILD_TYPE, options.postgresql ? "PostgreSQL" : "SQLite",
              std::string(ct::product_version()).c_str(), options.runs, load_average().c_str());
  std::printf("| records | CPU s | wall s | CPU µs per record | CPU vs %lld |\n|---:|---:|---:|---:|---:|\n",
              static_cast<long long>(rows.front().n));
  for (const Row& row : rows)
    std::printf("| %lld | %s | %s | %s | %s× |\n", static_cast<long long>(row.n), format_fixed(row.cpu_s, 2).c_str(),
                format_fixed(row.wall_s, 2).c_str(), format_fixed(row.cpu_s * 1e6 / static_cast<double>(row.n), 1).c_str(),
                format_fixed(row.cpu_s / rows.front().cpu_s, 1).c_str());
  return 0;
}

/// --sizes (taken out of argv first) and what parse_store_options reads: --tasks N (one size),
/// --runs, --postgresql, --keep.
std::optional<Options> parse(int argc, char** argv) {
  constexpr std::string_view kUsage = "usage: ct_bench_import [--sizes 10000,100000 | --tasks N] [--runs 3] "
                                      "[--postgresql URL] [--keep DIR]\n";
  Options options;
  std::vector<char*> rest{argv[0]};
  std::optional<std::string> sizes;
  for (int i = 1; i < argc; ++i) {
    if (std::string_view(argv[i]) == "--sizes" && i + 1 < argc) sizes = argv[++i];
    else rest.push_back(argv[i]);
  }
  auto store = parse_store_options(static_cast<int>(rest.size()), rest.data(), "ct_bench_import",
                                   {.tasks = 0, .runs = options.runs});
  if (!store) return std::nullopt;
  options.runs = store->runs;
  options.postgresql = store->postgresql;
  options.keep = store->keep;
  try {
    if (sizes) {
      options.sizes.clear();
      for (const auto& size : split_list(*sizes)) options.sizes.push_back(parse_number<std::int64_t>("--sizes", size));
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ct_bench_import: %s\n%.*s", e.what(), static_cast<int>(kUsage.size()), kUsage.data());
    return std::nullopt;
  }
  if (store->tasks > 0) options.sizes = {store->tasks};
  if (options.sizes.empty() || options.runs < 1 ||
      std::ranges::any_of(options.sizes, [](std::int64_t n) { return n < 1; })) {
    std::fprintf(stderr, "ct_bench_import: the sizes must be positive and --runs at least 1\n%.*s",
                 static_cast<int>(kUsage.size()), kUsage.data());
    return std::nullopt;
  }
  return options;
}

}  // namespace
}  // namespace ct::bench

int main(int argc, char** argv) {
  auto options = ct::bench::parse(argc, argv);
  if (!options) return 2;
  try {
    return ct::bench::run(*options);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ct_bench_import: %s\n", e.what());
    return 1;
  }
}
