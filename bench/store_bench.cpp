// ct_bench_store — the store benchmark. For each size (default 1k, 10k and 100k tasks) it builds a
// project through the router, exactly as an agent would (system.init, then tasks.add and
// tasks.complete calls), from a fixed, seeded workload; then it times the calls agents make most —
// tasks.add, show, list (compact, 50 rows), find and next — as Router::dispatch + to_json, and, with
// --ct, the wall time of a whole `ct show T001 --json` process. The report is Markdown on stdout,
// ready for docs/performance.md; progress goes to stderr.
#include <fcntl.h>
#include <spawn.h>
#include <sqlite3.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <string_view>
#include <system_error>
#include <vector>

#include "bench/report.h"
#include "bench/router_calls.h"
#include "bench/workload.h"
#include "core/clock.h"
#include "core/json.h"
#include "core/text.h"
#include "gateway/mcp_syntax.h"
#include "domains/registry.h"
#include "domains/router.h"
#include "gateway/product.h"

extern char** environ;

namespace ct::bench {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kUsage = R"(usage: ct_bench_store [options]

  --sizes LIST       store sizes in tasks, comma-separated (default 1000,10000,100000)
  --iterations K     timed calls per operation (default 300; a slow operation stops early once it
                     has spent --budget seconds and has at least 10 samples)
  --budget S         seconds per operation and size before stopping early (default 3)
  --ct PATH          the ct binary: also time `PATH show T001 --json` as a whole process
  --runs R           timed ct processes per size (default 40)
  --keep DIR         build the stores in DIR/store-<size> and keep them (DIR/store-<size> must not exist)
  --ops LIST         operations to time, comma-separated, from show,list,sorted,find,next,add (default all;
                     handy under perf: `--ops next --iterations 1000`)
  --seed N           workload seed (default 20260101)
  --settle S         seconds to wait between filling a store and timing it (default 0): on
                     PostgreSQL, autovacuum's ANALYZE of the new rows lands within its naptime
                     (60 s), and plans made before it are those of an empty table
)";

struct Options {
  std::vector<std::int64_t> sizes{1000, 10000, 100000};
  int iterations = 300;
  double budget_s = 3.0;
  double settle_s = 0;
  std::optional<fs::path> ct;
  int runs = 40;
  std::optional<fs::path> keep;
  std::uint32_t seed = 20260101;
  std::set<std::string, std::less<>> ops{"show", "list", "sorted", "find", "next", "add"};  // find-common: asked for
};


Options parse_options(int argc, char** argv) {
  Options options;
  std::vector<std::string_view> args(argv + 1, argv + argc);
  for (std::size_t i = 0; i < args.size(); ++i) {
    std::string_view flag = args[i];
    if (flag == "--help" || flag == "-h") {
      std::cout << kUsage;
      std::exit(0);
    }
    if (i + 1 >= args.size()) throw std::invalid_argument(std::string(flag) + ": missing value (see --help)");
    std::string_view value = args[++i];
    if (flag == "--sizes") {
      options.sizes.clear();
      while (!value.empty()) {
        std::size_t comma = value.find(',');
        auto size = parse_number<std::int64_t>(flag, value.substr(0, comma));
        if (size < 1) throw std::invalid_argument("--sizes: sizes must be at least 1");
        options.sizes.push_back(size);
        value = comma == std::string_view::npos ? std::string_view() : value.substr(comma + 1);
      }
      if (options.sizes.empty()) throw std::invalid_argument("--sizes: give at least one size");
    } else if (flag == "--iterations") {
      options.iterations = std::max(1, parse_number<int>(flag, value));
    } else if (flag == "--settle") {
      options.settle_s = std::max(0.0, parse_number<double>(flag, value));
    } else if (flag == "--budget") {
      options.budget_s = std::max(0.1, parse_number<double>(flag, value));
    } else if (flag == "--ct") {
      options.ct = fs::path(value);
    } else if (flag == "--runs") {
      options.runs = std::max(1, parse_number<int>(flag, value));
    } else if (flag == "--keep") {
      options.keep = fs::path(value);
    } else if (flag == "--ops") {
      static const std::set<std::string_view> kKnown{"show", "list", "sorted", "find", "find-common", "next", "add"};
      options.ops.clear();
      while (!value.empty()) {
        std::size_t comma = value.find(',');
        std::string_view op = value.substr(0, comma);
        if (!kKnown.contains(op)) throw std::invalid_argument("--ops: unknown operation '" + std::string(op) + "'");
        options.ops.emplace(op);
        value = comma == std::string_view::npos ? std::string_view() : value.substr(comma + 1);
      }
    } else if (flag == "--seed") {
      options.seed = parse_number<std::uint32_t>(flag, value);
    } else {
      throw std::invalid_argument("unknown option '" + std::string(flag) + "' (see --help)");
    }
  }
  return options;
}

// ---------------------------------------------------------------------------------------------
// Timing.

struct Stats {
  std::size_t n = 0;
  double median = 0;
  double p95 = 0;
  double min = 0;
  double mean_bytes = 0;
};

/// Nearest-rank percentiles over samples in microseconds.
Stats summarize(std::vector<double> samples, double total_bytes) {
  Stats stats;
  if (samples.empty()) return stats;
  std::sort(samples.begin(), samples.end());
  stats.n = samples.size();
  stats.median = nearest_rank(samples, 0.50);
  stats.p95 = nearest_rank(samples, 0.95);
  stats.min = samples.front();
  stats.mean_bytes = total_bytes / static_cast<double>(samples.size());
  return stats;
}


struct Limits {
  int warmup = 5;
  int iterations = 300;
  int min_samples = 10;
  double budget_s = 3.0;
};

/// Times `make_request()` calls through dispatch + to_json (building the request is not timed).
Stats measure(Router& router, const std::function<Request()>& make_request, const Limits& limits) {
  for (int i = 0; i < limits.warmup; ++i) call(router, make_request());
  std::vector<double> samples;
  samples.reserve(static_cast<std::size_t>(limits.iterations));
  double bytes = 0;
  auto started = Steady::now();
  for (int i = 0; i < limits.iterations; ++i) {
    Request request = make_request();
    auto t0 = Steady::now();
    Envelope envelope = router.dispatch(request);
    std::string out = to_json(envelope, McpAdvice(router.operations()));
    samples.push_back(micros_since(t0));
    if (!envelope.success) throw std::runtime_error(describe(request) + " failed: " + out);
    bytes += static_cast<double>(out.size());
    if (std::ssize(samples) >= limits.min_samples && micros_since(started) > limits.budget_s * 1e6) break;
  }
  return summarize(std::move(samples), bytes);
}


// ---------------------------------------------------------------------------------------------
// The ct process.

struct ProcessResult {
  bool ok = false;
  std::string failure;  // why not, when !ok
  Stats stats;          // microseconds
};

std::string first_line_of(const fs::path& file) {
  std::ifstream in(file);
  std::string line;
  std::getline(in, line);
  return line;
}

/// Runs `ct show T001 --json` with CLEO_ROOT=project; stdout to `stdout_file` (or /dev/null).
/// Returns the wait status, or -1 when the process could not be started.
int run_ct_show(const fs::path& ct, const fs::path& project, const fs::path& stdout_file,
                const fs::path& stderr_file, int& spawn_errno) {
  std::vector<std::string> env_strings;
  for (char** entry = environ; *entry != nullptr; ++entry)
    if (std::string_view(*entry).substr(0, 10) != "CLEO_ROOT=") env_strings.emplace_back(*entry);
  env_strings.push_back("CLEO_ROOT=" + project.string());
  std::vector<char*> envp;
  for (auto& entry : env_strings) envp.push_back(entry.data());
  envp.push_back(nullptr);
  std::string program = ct.string();
  std::string show = "show";
  std::string id = "T001";
  std::string json_flag = "--json";
  std::vector<char*> argv{program.data(), show.data(), id.data(), json_flag.data(), nullptr};

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, stdout_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, stderr_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  pid_t pid = 0;
  spawn_errno = posix_spawnp(&pid, program.c_str(), &actions, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  if (spawn_errno != 0) return -1;
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return -1;
  }
  return status;
}

std::string explain_status(int status, int spawn_errno, const fs::path& stderr_file) {
  std::string why;
  if (status == -1) {
    why = "could not start: " + std::string(std::strerror(spawn_errno));
  } else if (WIFEXITED(status)) {
    why = "exit " + std::to_string(WEXITSTATUS(status));
  } else if (WIFSIGNALED(status)) {
    why = "killed by signal " + std::to_string(WTERMSIG(status));
  } else {
    why = "wait status " + std::to_string(status);
  }
  std::string line = first_line_of(stderr_file);
  if (!line.empty()) why += ": " + line.substr(0, 160);
  return why;
}

ProcessResult time_ct_show(const fs::path& ct, const fs::path& project, const fs::path& scratch, int runs) {
  ProcessResult result;
  const fs::path out_file = scratch / "ct-show.out";
  const fs::path err_file = scratch / "ct-show.err";
  // One checked run first (it also warms the page cache): exit 0 and a reply about T001.
  int spawn_errno = 0;
  int status = run_ct_show(ct, project, out_file, err_file, spawn_errno);
  if (status == -1 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    result.failure = explain_status(status, spawn_errno, err_file);
    return result;
  }
  {
    std::ifstream in(out_file);
    std::stringstream text;
    text << in.rdbuf();
    if (text.str().find("\"T001\"") == std::string::npos) {
      result.failure = "exit 0 but the output does not mention T001: " + text.str().substr(0, 160);
      return result;
    }
  }
  for (int i = 0; i < 2; ++i) run_ct_show(ct, project, "/dev/null", err_file, spawn_errno);
  std::vector<double> samples;
  for (int i = 0; i < runs; ++i) {
    auto t0 = Steady::now();
    status = run_ct_show(ct, project, "/dev/null", err_file, spawn_errno);
    samples.push_back(micros_since(t0));
    if (status == -1 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      result.failure = "run " + std::to_string(i + 1) + ": " + explain_status(status, spawn_errno, err_file);
      return result;
    }
  }
  result.ok = true;
  result.stats = summarize(std::move(samples), 0);
  return result;
}

// ---------------------------------------------------------------------------------------------
// One store size.

struct Row {
  std::int64_t size = 0;
  std::string op;
  Stats stats;
  std::string failure;              // a row that could not be measured
  std::optional<double> target_us;  // the issue's target at this size, if any
};

struct FillReport {
  std::int64_t size = 0;
  std::size_t completed = 0;
  double add_seconds = 0;
  double complete_seconds = 0;
  double db_megabytes = 0;
  Stats add_stats;  // per add during the fill
  double rss_anon_mb = -1;  // the process's resident memory once this size was measured: heap …
  double rss_file_mb = -1;  // … and mapped file pages (the database, memory-mapped, and the binary)
};

/// The issue's targets, in microseconds, by operation key (as in --ops, plus "ct").
std::optional<double> target_for(std::string_view key, std::int64_t size) {
  if (key == "add") return 100.0;
  if (key == "show") return 20.0;
  if (key == "find" && size == 100000) return 2000.0;
  if (key == "next" && size == 10000) return 5000.0;
  if (key == "ct" && size == 10000) return 5000.0;
  return std::nullopt;
}


/// A line "Key:   123 kB" of /proc/self/status, in MB; -1 where there is none (not Linux).
double status_megabytes(std::string_view key) {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line))
    if (line.starts_with(key) && line.size() > key.size() && line[key.size()] == ':')
      return std::strtod(line.c_str() + key.size() + 1, nullptr) / 1024.0;
  return -1;
}

void progress(const std::string& text) {
  std::cerr << text << std::endl;
}

/// Builds the store of `size` tasks in `dir` and measures it; appends its rows.
void bench_size(std::int64_t size, const fs::path& dir, const fs::path& scratch, const Options& options,
                std::vector<Row>& rows, std::vector<FillReport>& fills) {
  fs::create_directories(dir);
  RouterOptions router_options;
  // On PostgreSQL (CLEO_DATABASE_URL), each size is a store of its own: a fresh schema.
  if (const char* url = std::getenv("CLEO_DATABASE_URL"); url != nullptr && *url != '\0')
    ::setenv("CLEO_DATABASE_SCHEMA", ("bench_" + std::to_string(size) + "_" + std::to_string(::getpid())).c_str(), 1);
  Router router(registry(), Workspace::open(dir), router_options, std::make_unique<FixedClock>(*parse_iso8601("2026-01-01T00:00:00Z")));
  call(router, mutate("system", "init", json::Value::object()));

  // Same seed for every size: the 1k store is the first 1k tasks of the 10k store, and so on.
  Workload workload(options.seed);
  FillReport fill;
  fill.size = size;
  std::vector<double> add_samples;
  add_samples.reserve(static_cast<std::size_t>(size));
  auto fill_started = Steady::now();
  std::int64_t step = std::max<std::int64_t>(1, size / 10);
  Steady::time_point complete_started;
  fill.completed = static_cast<std::size_t>(fill_store(router, workload, size, [&](std::int64_t i, const std::string&, double micros) {
    add_samples.push_back(micros);
    if ((i + 1) % step == 0) progress("  " + std::to_string(size) + ": added " + std::to_string(i + 1));
    if (i + 1 == size) complete_started = Steady::now();
  }));
  fill.add_seconds = std::chrono::duration<double>(complete_started - fill_started).count();
  fill.add_stats = summarize(std::move(add_samples), 0);
  fill.complete_seconds = micros_since(complete_started) / 1e6;
  fill.db_megabytes = megabytes_of(dir / ".cleo");
  fills.push_back(fill);
  progress("  " + std::to_string(size) + ": filled in " + std::to_string(fill.add_seconds + fill.complete_seconds) +
           " s; measuring");
  if (options.settle_s > 0) std::this_thread::sleep_for(std::chrono::duration<double>(options.settle_s));

  Limits limits;
  limits.iterations = options.iterations;
  limits.budget_s = options.budget_s;
  auto record = [&](std::string_view key, std::string op, const std::function<Request()>& make) {
    if (!options.ops.contains(key)) return;
    progress("  " + std::to_string(size) + ": " + op);
    Row row;
    row.size = size;
    row.op = std::move(op);
    row.target_us = target_for(key, size);
    row.stats = measure(router, make, limits);
    rows.push_back(std::move(row));
  };
  // Reads first, on exactly `size` tasks; add last (it grows the store by a few hundred tasks).
  record("show", "show", [&] {
    json::Value params = json::Value::object();
    params.set("id", workload.random_id());
    return query("tasks", "show", std::move(params));
  });
  record("list", "list (compact, 50 rows)", [&] {
    json::Value params = json::Value::object();
    params.set("status", json::Value::array_of(std::vector<std::string>{"pending"}));
    params.set("limit", 50);
    params.set("detail", "compact");
    return query("tasks", "list", std::move(params));
  });
  // What the dashboard's board asks per column: a status, the most recently changed first.
  record("sorted", "list (pending, by updated desc, 50 rows)", [&] {
    json::Value params = json::Value::object();
    params.set("status", json::Value::array_of(std::vector<std::string>{"pending"}));
    params.set("sort", "updated");
    params.set("order", "desc");
    params.set("limit", 50);
    return query("tasks", "list", std::move(params));
  });
  record("find", "find (one word)", [&] {
    json::Value params = json::Value::object();
    params.set("query", workload.random_word());
    return query("tasks", "find", std::move(params));
  });
  // Issue 56: a word in a quarter of the tasks (schema, migration, database in turn).
  std::size_t common = 0;
  record("find-common", "find (a word in a quarter of the tasks)", [&] {
    static constexpr std::string_view kWords[] = {"schema", "migration", "database"};
    json::Value params = json::Value::object();
    params.set("query", std::string(kWords[common++ % std::size(kWords)]));
    return query("tasks", "find", std::move(params));
  });
  record("next", "next", [&] {
    json::Value params = json::Value::object();
    params.set("count", 1);
    return query("tasks", "next", std::move(params));
  });
  record("add", "add", [&] {
    PlannedAdd plan = workload.plan_add();
    return mutate("tasks", "add", plan.params);
  });

  // While this size's router (its connection, statement cache and SQLite page cache) is alive.
  fills.back().rss_anon_mb = status_megabytes("RssAnon");
  fills.back().rss_file_mb = status_megabytes("RssFile");

  if (options.ct) {
    progress("  " + std::to_string(size) + ": ct show T001 --json");
    Row row;
    row.size = size;
    row.op = "ct show (process)";
    row.target_us = target_for("ct", size);
    ProcessResult process = time_ct_show(*options.ct, dir, scratch, options.runs);
    if (process.ok) row.stats = process.stats;
    else row.failure = process.failure;
    rows.push_back(std::move(row));
  }
}

// ---------------------------------------------------------------------------------------------
// Report.






std::string today() {
  return format_iso8601(SystemClock().now()).substr(0, 10);
}


void print_report(const Options& options, const std::string& command, const std::vector<Row>& rows,
                  const std::vector<FillReport>& fills, double total_seconds, const std::string& load_before) {
  std::ostream& out = std::cout;
#ifdef NDEBUG
  const char* asserts = "off";
#else
  const char* asserts = "on";
#endif
  out << "## ct_bench_store, " << today() << "\n\n";
  out << "- Command: `" << command << "`\n";
  out << "- Machine: " << cpu_model() << ", " << sysconf(_SC_NPROCESSORS_ONLN) << " CPUs online, " << kernel()
      << "\n";
  out << "- Build: " << CT_BENCH_BUILD_TYPE << " (assertions " << asserts << "), g++ " << __VERSION__
      << ", SQLite " << sqlite3_libversion() << "\n";
  out << "- Load average (1 min): " << load_before << " before, " << load_average() << " after\n";
  out << "- Workload: seed " << options.seed << ", up to " << options.iterations << " timed calls per operation ("
      << options.budget_s << " s budget, at least 10), 5 untimed warm-up calls; in-process times are "
      << "Router::dispatch + to_json on one connection; total run " << format_fixed(total_seconds, 1) << " s\n";
  if (const char* url = std::getenv("CLEO_DATABASE_URL"); url != nullptr && *url != '\0')
    out << "- Store: PostgreSQL (CLEO_DATABASE_URL), a schema per size"
        << (options.settle_s > 0 ? ", timed " + format_fixed(options.settle_s, 0) + " s after the fill" : std::string())
        << "\n";
  out << "\n";

  out << "### Building the stores (through tasks.add and tasks.complete)\n\n";
  out << "| size | adds | completes | add median | add p95 | add mean | database | RSS anon | RSS file |\n";
  out << "|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n";
  for (const auto& fill : fills) {
    out << "| " << fill.size << " | " << format_fixed(fill.add_seconds, 1) << " s | " << fill.completed << " in "
        << format_fixed(fill.complete_seconds, 1) << " s | " << format_duration(fill.add_stats.median) << " | "
        << format_duration(fill.add_stats.p95) << " | "
        << format_duration(fill.add_seconds * 1e6 / static_cast<double>(fill.size)) << " | "
        << format_fixed(fill.db_megabytes, 1) << " MB | " << format_fixed(fill.rss_anon_mb, 1) << " MB | "
        << format_fixed(fill.rss_file_mb, 1) << " MB |\n";
  }
  out << "\nRSS: this process's resident memory once a size was measured, its router still open — anonymous "
         "(heap: SQLite's page cache, statements, our data) and file-backed (the memory-mapped database, "
         "up to mmap_size, and the binary). The sizes run one after another in one process.\n";
  out << "\n### Operations\n\n";
  out << "| size | op | n | median | p95 | min | reply | target | ok? |\n";
  out << "|---:|---|---:|---:|---:|---:|---:|---:|:---:|\n";
  for (const auto& row : rows) {
    std::string target = row.target_us ? "< " + format_duration(*row.target_us) : "—";
    out << "| " << row.size << " | " << row.op << " | ";
    if (!row.failure.empty()) {
      out << "— | **failed: " << row.failure << "** | | | | " << target << " | " << (row.target_us ? "**no**" : "—")
          << " |\n";
      continue;
    }
    std::string ok = "—";
    if (row.target_us) ok = row.stats.median < *row.target_us ? "yes" : "**no**";
    std::string reply = row.stats.mean_bytes > 0 ? format_fixed(row.stats.mean_bytes, 0) + " B" : "—";
    out << row.stats.n << " | " << format_duration(row.stats.median) << " | " << format_duration(row.stats.p95)
        << " | " << format_duration(row.stats.min) << " | " << reply << " | " << target << " | " << ok << " |\n";
  }
  if (!options.ct) out << "\n(`ct show` process times not measured: pass `--ct PATH`.)\n";
  out << "\n`ok?` compares the median with the target; `reply` is the mean size of the JSON reply.\n";
}

int run(int argc, char** argv) {
  Options options = parse_options(argc, argv);
  auto started = Steady::now();
  const std::string load_before = load_average();

  if (options.keep) {
    for (auto size : options.sizes) {
      fs::path store = fs::absolute(*options.keep) / ("store-" + std::to_string(size));
      if (fs::exists(store))
        throw std::runtime_error(store.string() + " already exists; remove it or choose another --keep directory");
    }
  }
  const WorkDir work(options.keep, "ct-bench");
  const fs::path& root = work.path();

  std::vector<Row> rows;
  std::vector<FillReport> fills;
  for (auto size : options.sizes) {
    progress("store of " + std::to_string(size) + " tasks in " + (root / ("store-" + std::to_string(size))).string());
    bench_size(size, root / ("store-" + std::to_string(size)), root, options, rows, fills);
  }
  std::error_code ec;
  fs::remove(root / "ct-show.out", ec);
  fs::remove(root / "ct-show.err", ec);
  print_report(options, command_line(argc, argv), rows, fills, micros_since(started) / 1e6, load_before);
  return 0;
}

}  // namespace
}  // namespace ct::bench

int main(int argc, char** argv) {
  try {
    return ct::bench::run(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "ct_bench_store: " << e.what() << "\n";
    return 1;
  }
}
