// ct_bench_writers — concurrent writer processes on one store, and the audit chain's share of a
// mutation.
//
// Writers: for each writer count (default 1, 4, 16) and run (default 5), a fresh project gets
// that many `ct mcp` processes, started and initialised first; then all of them write at once,
// each a sequential stream of tasks.add / tasks.update calls (the update edits the task just
// added), until the run's mutations (default 1600, split evenly) are done. Each call is timed
// from request written to reply read. Reported: mutations/s of the whole run (median over runs)
// and p50/p95 latency per call (over all runs), plus retried E_LOCK_TIMEOUT failures.
//
// Audit chain: in-process, on a store of --chain-tasks tasks built through the router: a whole
// tasks.update (Router::dispatch), the chain's own work per row — audit_hash() of a real
// tasks.update and tasks.add row, and the previous row's hash lookup (the store's query) — and
// their share of the mutation. Markdown on stdout, progress on stderr.
#include <signal.h>
#include <sqlite3.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "bench/report.h"
#include "core/clock.h"
#include "core/json.h"
#include "core/json_parse.h"
#include "gateway/mcp_syntax.h"
#include "gateway/product.h"
#include "domains/router.h"
#include "engines/store/audit_chain.h"
#include "engines/store/sqlite/sqlite_store.h"
#include "support/child_process.h"
#include "support/ct_client.h"

namespace ct::bench {
namespace {

constexpr std::string_view kUsage = R"(usage: ct_bench_writers --ct PATH [options]

  --writers LIST       writer process counts, comma-separated (default 1,4,16)
  --mutations N        mutations per run, split evenly across the writers (default 1600)
  --runs R             runs per writer count (default 5)
  --chain-tasks N      tasks in the store of the audit-chain measurement (default 2000; 0 skips it —
                       it reads the SQLite file, so it is skipped on PostgreSQL anyway)
  --chain-iterations N timed calls per audit-chain measurement (default 3000)
  --keep DIR           build the stores in DIR and keep them (default: a temp dir, removed)
)";

struct Options {
  std::string ct;
  std::vector<int> writers{1, 4, 16};
  int mutations = 1600;
  int runs = 5;
  int chain_tasks = 2000;
  int chain_iterations = 3000;
  std::string keep;
};

Options parse_options(int argc, char** argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    auto value = [&]() -> std::string_view {
      if (i + 1 >= argc) throw std::invalid_argument(std::string(arg) + " needs a value");
      return argv[++i];
    };
    if (arg == "--ct") {
      options.ct = value();
    } else if (arg == "--writers") {
      options.writers = parse_numbers<int>(arg, value());
    } else if (arg == "--mutations") {
      options.mutations = parse_number<int>(arg, value());
    } else if (arg == "--runs") {
      options.runs = parse_number<int>(arg, value());
    } else if (arg == "--chain-tasks") {
      options.chain_tasks = parse_number<int>(arg, value());
    } else if (arg == "--chain-iterations") {
      options.chain_iterations = parse_number<int>(arg, value());
    } else if (arg == "--keep") {
      options.keep = value();
    } else {
      throw std::invalid_argument("unknown option " + std::string(arg) + "\n" + std::string(kUsage));
    }
  }
  if (options.ct.empty()) throw std::invalid_argument(std::string(kUsage));
  return options;
}

// -- processes ----------------------------------------------------------------------------------

std::vector<std::string> child_environment(const fs::path& project) {
  std::vector<std::string> out = testing::inherited_environment({"CLEO_"});
  out.push_back("CLEO_ROOT=" + project.string());
  // On PostgreSQL (CLEO_DATABASE_URL), every run is a store of its own: a fresh schema.
  if (const char* url = std::getenv("CLEO_DATABASE_URL"); url != nullptr && *url != '\0') {
    static int runs = 0;
    out.push_back(std::string("CLEO_DATABASE_URL=") + url);
    out.push_back("CLEO_DATABASE_SCHEMA=bench_w" + std::to_string(::getpid()) + "_" + std::to_string(++runs));
  }
  return out;
}

/// A started and initialised `ct mcp` writer.
std::unique_ptr<testing::McpClient> start_writer(const std::string& ct, const std::vector<std::string>& env) {
  auto client = testing::McpClient::start(ct, env);
  if (!client) throw std::runtime_error(client.error());
  auto writer = std::make_unique<testing::McpClient>(std::move(*client));
  if (!writer->initialize()) throw std::runtime_error("ct mcp did not answer initialize");
  return writer;
}

void run_ct(const std::string& ct, const std::vector<std::string>& args, const std::vector<std::string>& env) {
  testing::CtRun ran = testing::CtCommand(ct, env).run(args);
  if (ran.status.signaled || ran.status.code != 0) throw std::runtime_error("ct " + args.front() + " failed: " + ran.out);
}

// -- writers ------------------------------------------------------------------------------------

struct RunResult {
  double seconds = 0;
  std::vector<double> latencies;  // µs per call
  int retries = 0;
  int failures = 0;
};

RunResult writers_run(const Options& options, int writers, const fs::path& project) {
  fs::remove_all(project);
  fs::create_directories(project);
  auto env = child_environment(project);
  run_ct(options.ct, {"init"}, env);
  std::vector<std::unique_ptr<testing::McpClient>> processes;
  for (int w = 0; w < writers; ++w) processes.push_back(start_writer(options.ct, env));
  const int per_writer = options.mutations / writers;
  std::vector<std::vector<double>> latencies(static_cast<std::size_t>(writers));
  std::atomic<int> retries{0}, failures{0}, ready{0};
  std::atomic<bool> go{false};
  std::vector<std::thread> threads;
  for (int w = 0; w < writers; ++w) {
    threads.emplace_back([&, w] {
      testing::McpClient& writer = *processes[static_cast<std::size_t>(w)];
      auto& mine = latencies[static_cast<std::size_t>(w)];
      mine.reserve(static_cast<std::size_t>(per_writer));
      ++ready;
      while (!go) std::this_thread::yield();
      std::string last;
      for (int i = 0; i < per_writer; ++i) {
        bool add = i % 2 == 0 || last.empty();
        std::string params = add ? R"({"title":"writer )" + std::to_string(w) + " task " + std::to_string(i) + "\"}"
                                 : R"({"id":")" + last + R"(","priority":")" + (i % 4 == 1 ? "high" : "low") + "\"}";
        for (int attempt = 0; attempt < 10; ++attempt) {
          auto started = Steady::now();
          json::Value envelope = writer.call("cleo_mutate", "tasks", add ? "add" : "update", params);
          if (envelope.is_null()) throw std::runtime_error("ct mcp went away");
          mine.push_back(micros_since(started));
          if (envelope["success"].is_bool() && envelope["success"].as_bool()) {
            if (add) last = envelope["data"]["id"].as_string();
            break;
          }
          if (envelope["error"]["retryable"].is_bool() && envelope["error"]["retryable"].as_bool()) {
            ++retries;
            continue;
          }
          ++failures;
          break;
        }
      }
    });
  }
  while (ready < writers) std::this_thread::yield();
  auto started = Steady::now();
  go = true;
  for (auto& thread : threads) thread.join();
  RunResult result;
  result.seconds = micros_since(started) / 1e6;
  for (auto& list : latencies) result.latencies.insert(result.latencies.end(), list.begin(), list.end());
  result.retries = retries;
  result.failures = failures;
  return result;
}

// -- audit chain ---------------------------------------------------------------------------------

struct ChainResult {
  double mutation_us = 0;
  double hash_update_us = 0;
  double hash_add_us = 0;
  double lookup_us = 0;
  std::int64_t audit_rows = 0;
};

double median_of(int iterations, const std::function<void()>& body) {
  std::vector<double> samples;
  samples.reserve(static_cast<std::size_t>(iterations));
  for (int i = 0; i < iterations; ++i) {
    auto started = Steady::now();
    body();
    samples.push_back(micros_since(started));
  }
  return percentile(std::move(samples), 0.5);
}

ChainResult chain_cost(const Options& options, const fs::path& project) {
  fs::remove_all(project);
  fs::create_directories(project);
  RouterOptions router_options;
  Router router(registry(), Workspace::open(project), router_options, std::make_unique<FixedClock>(*parse_iso8601("2026-01-01T00:00:00Z")));
  auto dispatch = [&](Gateway gateway, const char* domain, const char* operation, const std::string& params) {
    auto parsed = json::parse(params);
    Envelope envelope = router.dispatch({gateway, domain, operation, parsed ? *parsed : json::Value::object()});
    if (!envelope.success) throw std::runtime_error(std::string(operation) + " failed: " + to_json(envelope, McpAdvice(registry())));
    return envelope;
  };
  dispatch(Gateway::Mutate, "system", "init", "{}");
  for (int i = 0; i < options.chain_tasks; ++i)
    dispatch(Gateway::Mutate, "tasks", "add", R"({"title":"Chain task )" + std::to_string(i) + R"(","labels":["bench"]})");
  ChainResult result;
  int flip = 0;
  result.mutation_us = median_of(options.chain_iterations, [&] {
    dispatch(Gateway::Mutate, "tasks", "update",
             R"({"id":"T001","priority":")" + std::string(++flip % 2 ? "high" : "low") + "\"}");
  });

  SqliteOptions sqlite;
  auto store = open_sqlite_store(project / ".cleo" / "tasks.db", sqlite, /*shared_by_processes=*/true);
  if (!store) throw std::runtime_error(store.error().message);
  if (!(*store)->begin(TxKind::Read)) throw std::runtime_error("cannot read the store");
  AuditQuery last;
  last.limit = 1;
  auto update_rows = (*store)->read_audit(last);
  last.operation = "tasks.add";
  auto add_rows = (*store)->read_audit(last);
  (*store)->rollback();
  if (!update_rows || update_rows->empty() || !add_rows || add_rows->empty()) throw std::runtime_error("no audit rows");
  const AuditEntry update_row = update_rows->front();
  const AuditEntry add_row = add_rows->front();
  std::string sink;
  result.hash_update_us = median_of(options.chain_iterations, [&] { sink = audit_hash(update_row.hash, update_row); });
  result.hash_add_us = median_of(options.chain_iterations, [&] { sink = audit_hash(add_row.hash, add_row); });

  // The previous row's hash, with the statement append_audit() runs (prepared once, as cached).
  sqlite3* db = nullptr;
  sqlite3_open_v2((project / ".cleo" / "tasks.db").c_str(), &db, SQLITE_OPEN_READONLY, nullptr);
  sqlite3_stmt* stmt = nullptr;
  sqlite3_prepare_v2(db, "SELECT seq, hash FROM audit ORDER BY seq DESC LIMIT 1", -1, &stmt, nullptr);
  sqlite3_exec(db, "BEGIN", nullptr, nullptr, nullptr);
  result.lookup_us = median_of(options.chain_iterations, [&] {
    if (sqlite3_step(stmt) == SQLITE_ROW) sink = reinterpret_cast<const char*>(sqlite3_column_text(stmt, 1));
    sqlite3_reset(stmt);
  });
  sqlite3_stmt* count = nullptr;
  sqlite3_prepare_v2(db, "SELECT count(*) FROM audit", -1, &count, nullptr);
  if (sqlite3_step(count) == SQLITE_ROW) result.audit_rows = sqlite3_column_int64(count, 0);
  sqlite3_finalize(count);
  sqlite3_exec(db, "COMMIT", nullptr, nullptr, nullptr);
  sqlite3_finalize(stmt);
  sqlite3_close(db);
  return result;
}

int run(int argc, char** argv) {
  Options options = parse_options(argc, argv);
  options.ct = fs::absolute(options.ct).string();
  signal(SIGPIPE, SIG_IGN);
  const WorkDir work(options.keep.empty() ? std::nullopt : std::optional<fs::path>(options.keep), "ct-bench-writers");
  const fs::path& root = work.path();

  std::printf("## Concurrent writers and the audit chain\n\n");
  std::printf("`%s`  \n", command_line(argc, argv).c_str());
  std::printf("Build: %s · CPU: %s · %s · load %s\n\n", CT_BENCH_BUILD_TYPE, cpu_model().c_str(), kernel().c_str(),
              load_average().c_str());
  std::printf("%d mutations per run (tasks.add and tasks.update alternating, through `ct mcp`), %d runs per row.\n",
              options.mutations, options.runs);
  if (const char* url = std::getenv("CLEO_DATABASE_URL"); url != nullptr && *url != '\0')
    std::printf("Store: PostgreSQL (CLEO_DATABASE_URL), a schema per run.\n");
  std::printf("\n");
  std::printf("| writer processes | mutations/s (median of runs) | min–max | p50 latency | p95 latency | lock retries | failures |\n");
  std::printf("|---:|---:|---:|---:|---:|---:|---:|\n");
  std::fflush(stdout);
  for (int writers : options.writers) {
    std::vector<double> throughput;
    std::vector<double> latencies;
    int retries = 0, failures = 0;
    for (int r = 0; r < options.runs; ++r) {
      std::fprintf(stderr, "writers=%d run %d/%d\n", writers, r + 1, options.runs);
      RunResult run = writers_run(options, writers, root / ("writers-" + std::to_string(writers)));
      throughput.push_back(static_cast<double>(run.latencies.size() - static_cast<std::size_t>(run.retries)) / run.seconds);
      latencies.insert(latencies.end(), run.latencies.begin(), run.latencies.end());
      retries += run.retries;
      failures += run.failures;
    }
    std::printf("| %d | %s | %s–%s | %s | %s | %d | %d |\n", writers, format_fixed(percentile(throughput, 0.5), 0).c_str(),
                format_fixed(*std::min_element(throughput.begin(), throughput.end()), 0).c_str(),
                format_fixed(*std::max_element(throughput.begin(), throughput.end()), 0).c_str(),
                format_duration(percentile(latencies, 0.5)).c_str(), format_duration(percentile(latencies, 0.95)).c_str(),
                retries, failures);
    std::fflush(stdout);
  }

  const char* pg_url = std::getenv("CLEO_DATABASE_URL");
  if (options.chain_tasks <= 0 || (pg_url != nullptr && *pg_url != '\0')) return 0;
  std::fprintf(stderr, "audit chain: building %d tasks\n", options.chain_tasks);
  ChainResult chain = chain_cost(options, root / "chain");
  double share = 100.0 * (chain.hash_update_us + chain.lookup_us) / chain.mutation_us;
  std::printf("\nAudit chain per mutation (in-process, store of %d tasks and %lld audit rows, medians of %d):\n\n",
              options.chain_tasks, static_cast<long long>(chain.audit_rows), options.chain_iterations);
  std::printf("| measure | time |\n|---|---:|\n");
  std::printf("| whole tasks.update (Router::dispatch, one write transaction, synchronous=NORMAL) | %s |\n",
              format_duration(chain.mutation_us).c_str());
  std::printf("| audit_hash of that tasks.update row (SHA-256 over the canonical row) | %s |\n",
              format_duration(chain.hash_update_us).c_str());
  std::printf("| audit_hash of a tasks.add row (every field of the new task) | %s |\n",
              format_duration(chain.hash_add_us).c_str());
  std::printf("| previous row's hash (`SELECT seq, hash FROM audit ORDER BY seq DESC LIMIT 1`) | %s |\n",
              format_duration(chain.lookup_us).c_str());
  std::printf("| chain share of a tasks.update (hash + lookup) | %s %% |\n", format_fixed(share, 1).c_str());

  return 0;
}

}  // namespace
}  // namespace ct::bench

int main(int argc, char** argv) {
  try {
    return ct::bench::run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ct_bench_writers: %s\n", e.what());
    return 1;
  }
}
