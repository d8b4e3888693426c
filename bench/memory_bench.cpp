// ct_bench_memory — project memory (the memory domain, issue 34) at 10,000 entries and beyond.
// Each store is built through the router as agents build it: memory.observe of entries whose
// titles and bodies draw words from the workload's Zipf vocabulary, each scoped to one or two of
// 400 files (real files in the project, so every entry is anchored to its files' checksums), some
// to a folder or a glob, a third with labels, a tenth tied to a task. Then, as Router::dispatch +
// to_json (median, p95, min over --runs calls, each with other words and files):
//   memory.find {query: 2 words, files: [a file]}   target p50 < 1 ms, p95 < 2 ms (SQLite)
//   memory.find {taskId}                            the task's files, labels and epic as the scope
//   memory.observe (a new entry, force:true)        target < 1 ms
// and the staleness check: after one anchored file changes, how many files the next finds hash
// (engines/rules/memory.h: a file is hashed once per change; unchanged ones only stat'ed).
// The report is Markdown on stdout, for docs/performance.md; progress goes to stderr.
//   ct_bench_memory [--sizes 10000] [--runs 300] [--postgresql URL] [--keep DIR]
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <functional>
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
#include "engines/rules/memory.h"

namespace ct::bench {
namespace {

constexpr std::size_t kFiles = 400;
constexpr std::string_view kKinds[] = {"decision", "learning", "risk", "pattern", "observation"};

struct Options {
  std::vector<std::int64_t> sizes{10000};
  int runs = 300;
  std::optional<std::string> postgresql;
  std::optional<fs::path> keep;
};

struct Row {
  std::int64_t size = 0;
  std::string op;
  std::string target;
  double median = 0, p95 = 0, min = 0;
  std::size_t bytes = 0;
};

void progress(const std::string& text) { std::cerr << text << std::endl; }

std::string file_path(std::size_t i) { return "src/mod" + std::to_string(i % 20) + "/file" + std::to_string(i) + ".cpp"; }

std::string words(Rng& rng, const Vocabulary& vocabulary, int count) {
  std::string out;
  for (int i = 0; i < count; ++i) out += (i ? " " : "") + vocabulary.zipf(rng);
  return out;
}

Row measure(Router& router, std::int64_t size, std::string op, std::string target, const std::function<Request()>& make,
            int runs) {
  std::size_t bytes = 0;
  const std::vector<double> ms = timed_calls(router, make, runs, bytes);
  return {size, std::move(op), std::move(target), nearest_rank(ms, 0.5), nearest_rank(ms, 0.95), ms.front(), bytes};
}

void bench_size(std::int64_t size, const fs::path& dir, const Options& options, std::vector<Row>& rows,
                std::vector<std::string>& notes) {
  const PgSchemaDrop schema(options.postgresql,
                            write_bench_config(dir, options.postgresql, "bench_memory_" + std::to_string(size)),
                            options.keep.has_value());
  for (std::size_t i = 0; i < kFiles; ++i) {
    fs::create_directories((dir / file_path(i)).parent_path());
    std::ofstream(dir / file_path(i)) << "// file " << i << "\nint value" << i << " = " << i << ";\n";
  }
  RouterOptions router_options;
  Router router(registry(), Workspace::open(dir), router_options, std::make_unique<SystemClock>());
  call(router, mutate("system", "init", json::Value::object()));

  Rng rng(20261127);
  Vocabulary vocabulary(rng, 2000);
  // A few tasks for entries to come from and for find {taskId}: an epic with 20 tasks.
  json::Value epic = json::Value::object();
  epic.set("title", "Memory epic");
  epic.set("type", "epic");
  const std::string epic_id = router.dispatch(mutate("tasks", "add", std::move(epic))).data["id"].as_string();
  std::vector<std::string> tasks;
  for (int t = 0; t < 20; ++t) {
    json::Value task = json::Value::object();
    task.set("title", "Task " + words(rng, vocabulary, 4));
    task.set("parent", epic_id);
    task.set("files", json::Value::array_of(std::vector<std::string>{file_path(rng.below(kFiles))}));
    task.set("labels", json::Value::array_of(std::vector<std::string>{"lab" + std::to_string(rng.below(30))}));
    tasks.push_back(router.dispatch(mutate("tasks", "add", std::move(task))).data["id"].as_string());
  }

  auto entry = [&](bool force) {
    json::Value params = json::Value::object();
    params.set("kind", std::string(kKinds[rng.below(std::size(kKinds))]));
    params.set("title", words(rng, vocabulary, 6));
    params.set("body", words(rng, vocabulary, 24));
    std::vector<std::string> files = {file_path(rng.below(kFiles))};
    const std::size_t shape = rng.below(10);
    if (shape == 0) files.push_back("src/mod" + std::to_string(rng.below(20)) + "/");
    else if (shape == 1) files.push_back("src/**/file" + std::to_string(rng.below(10)) + "*.cpp");
    else if (shape < 4) files.push_back(file_path(rng.below(kFiles)));
    params.set("files", json::Value::array_of(files));
    if (rng.below(3) == 0) params.set("labels", json::Value::array_of(std::vector<std::string>{"lab" + std::to_string(rng.below(30))}));
    if (rng.below(10) == 0) params.set("taskId", tasks[rng.below(tasks.size())]);
    if (force) params.set("force", true);
    return mutate("memory", "observe", std::move(params));
  };
  auto started = Steady::now();
  std::int64_t made = 0;
  std::int64_t near_duplicates = 0;
  while (made < size) {
    Envelope added = router.dispatch(entry(false));
    if (added.success) ++made;
    else if (added.error && added.error->code == ErrorCode::AlreadyExists) ++near_duplicates;
    else throw std::runtime_error("memory.observe failed: " + to_json(added, McpAdvice(router.operations())));
    if (made % 2000 == 0 && added.success) progress("  " + std::to_string(made) + " entries");
  }
  notes.push_back(std::to_string(size) + " entries built in " + std::to_string(static_cast<int>(micros_since(started) / 1e6)) +
                  " s; " + std::to_string(near_duplicates) + " near-duplicates refused on the way");

  rows.push_back(measure(router, size, "memory.find {query: 2 words, files: [a file]}", "p50 < 1 ms, p95 < 2 ms", [&] {
    json::Value params = json::Value::object();
    params.set("query", words(rng, vocabulary, 2));
    params.set("files", json::Value::array_of(std::vector<std::string>{file_path(rng.below(kFiles))}));
    return query("memory", "find", std::move(params));
  }, options.runs));
  rows.push_back(measure(router, size, "memory.find {query: 2 words}", "", [&] {
    json::Value params = json::Value::object();
    params.set("query", words(rng, vocabulary, 2));
    return query("memory", "find", std::move(params));
  }, options.runs));
  rows.push_back(measure(router, size, "memory.find {taskId}", "", [&] {
    json::Value params = json::Value::object();
    params.set("taskId", tasks[rng.below(tasks.size())]);
    return query("memory", "find", std::move(params));
  }, options.runs));
  rows.push_back(measure(router, size, "memory.observe (force)", "< 1 ms", [&] { return entry(true); }, options.runs));

  // Staleness: one anchored file changes; count what the next finds hash.
  FileHasher& hasher = process_hasher();
  const std::string changed = file_path(7);
  auto find_changed = [&] {
    json::Value params = json::Value::object();
    params.set("files", json::Value::array_of(std::vector<std::string>{changed}));
    params.set("includeStale", true);
    return query("memory", "find", std::move(params));
  };
  call(router, find_changed());
  const std::int64_t before = hasher.hashed();
  std::ofstream(dir / changed, std::ios::app) << "// changed\n";
  call(router, find_changed());
  const std::int64_t first = hasher.hashed() - before;
  for (int i = 0; i < 50; ++i) call(router, find_changed());
  const std::int64_t later = hasher.hashed() - before - first;
  notes.push_back("staleness at " + std::to_string(size) + " entries: after " + changed + " changed, the next find hashed " +
                  std::to_string(first) + " file(s), the 50 finds after it " + std::to_string(later) +
                  " (unchanged files are compared by size and mtime, not hashed)");
}

}  // namespace
}  // namespace ct::bench

int main(int argc, char** argv) {
  using namespace ct::bench;
  Options options;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    const char* value = i + 1 < argc ? argv[i + 1] : nullptr;
    if (arg == "--sizes" && value) {
      options.sizes.clear();
      for (const auto& part : ct::split_list(value, ',')) options.sizes.push_back(std::stoll(part));
      ++i;
    } else if (arg == "--runs" && value) {
      options.runs = std::stoi(value);
      ++i;
    } else if (arg == "--postgresql" && value) {
      options.postgresql = value;
      ++i;
    } else if (arg == "--keep" && value) {
      options.keep = fs::path(value);
      ++i;
    } else {
      std::fprintf(stderr, "usage: ct_bench_memory [--sizes 10000] [--runs 300] [--postgresql URL] [--keep DIR]\n");
      return 2;
    }
  }
  const fs::path root = options.keep ? *options.keep : fs::temp_directory_path() / ("ct-bench-memory-" + std::to_string(::getpid()));
  std::vector<Row> rows;
  std::vector<std::string> notes;
  try {
    for (auto size : options.sizes) {
      progress("building " + std::to_string(size) + " entries");
      bench_size(size, root / std::to_string(size), options, rows, notes);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ct_bench_memory: %s\n", e.what());
    return 1;
  }
  if (!options.keep) fs::remove_all(root);
  std::printf("ct_bench_memory (%s build, %s store, ct %s), %d runs each\n\n", CT_BENCH_BUILD_TYPE,
              options.postgresql ? "PostgreSQL" : "SQLite", std::string(ct::product_version()).c_str(), options.runs);
  std::printf("| entries | call | median ms | p95 ms | min ms | reply bytes | target |\n|---:|---|---:|---:|---:|---:|---|\n");
  for (const auto& row : rows)
    std::printf("| %lld | %s | %.3f | %.3f | %.3f | %zu | %s |\n", static_cast<long long>(row.size), row.op.c_str(),
                row.median, row.p95, row.min, row.bytes, row.target.c_str());
  std::printf("\n");
  for (const auto& note : notes) std::printf("- %s\n", note.c_str());
  return 0;
}
