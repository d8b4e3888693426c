// ct_bench_fleet — a fleet of agents on one store (issue 56, target 1): for each K in --agents,
// a fresh project of --tasks tasks (tasks.import through the router, not timed) and K `ct mcp`
// processes, started and initialised first; then all of them call at once for --seconds, each a
// seeded stream of the agents' mix:
//   70 % reads   — tasks.show of a random task (40), tasks.find of a common word (15), tasks.next
//                  (10), tasks.list of an epic's children, 20 at a time (5);
//   20 % updates — tasks.update with a note (10) or a new priority (10) of a random task;
//   10 % add/complete — tasks.add under a random epic (5), tasks.complete of a task this agent
//                  added (5; an add when it has none left).
// Each call is timed from request written to reply read. A retryable failure (E_LOCK_TIMEOUT…) is
// retried with the same params and counted; any other failure is counted and reported.
// Afterwards, through the router: every acknowledged add is there with its title, every
// acknowledged note is in its task, every acknowledged completion is done, and validate.audit
// verifies the audit chain. Reported per K: calls/s, p50/p99 of each kind and of all writes,
// retries, failures, and the check. Markdown on stdout, progress on stderr.
// With --serve the K agents are K MCP sessions over HTTP, each on its own keep-alive connection,
// to one `ct serve` process (a bearer token required and sent, no Origin, as an agent host
// connects); the report then also gives the server's CPU time per call.
//   ct_bench_fleet --ct PATH [--agents 1,2,4,8,16,32] [--tasks 10000] [--seconds 10]
//                  [--postgresql URL] [--serve] [--serve-args "..."] [--keep DIR]
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <iostream>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "bench/report.h"
#include "bench/pg_schema.h"
#include "bench/router_calls.h"
#include "core/clock.h"
#include "core/version.h"
#include "gateway/mcp_syntax.h"
#include "gateway/product.h"
#include "support/child_process.h"
#include "support/ct_client.h"
#include "support/serve_client.h"

namespace ct::bench {
namespace {

constexpr std::string_view kUsage = R"(usage: ct_bench_fleet --ct PATH [options]

  --agents LIST     agent process counts, comma-separated (default 1,2,4,8,16,32)
  --tasks N         tasks in each run's store (default 10000)
  --seconds S       how long all agents call at once, per K (default 10)
  --postgresql URL  the store on that PostgreSQL server (a schema of its own per K, dropped after it
                    unless --keep) instead of SQLite
  --serve           the agents are K HTTP clients (MCP sessions) of one `ct serve`, not K `ct mcp`
  --serve-args ".." extra `ct serve` arguments, split on spaces (e.g. "--threads 8"); implies --serve
  --keep DIR        build the projects in DIR and keep them (default: a temp dir, removed)
)";

struct Options {
  std::string ct;
  std::vector<int> agents{1, 2, 4, 8, 16, 32};
  std::int64_t tasks = 10000;
  double seconds = 10;
  std::optional<std::string> postgresql;
  bool serve = false;
  std::vector<std::string> serve_args;
  std::optional<fs::path> keep;
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
    } else if (arg == "--agents") {
      options.agents = parse_numbers<int>(arg, value());
    } else if (arg == "--tasks") {
      options.tasks = parse_number<std::int64_t>(arg, value());
    } else if (arg == "--seconds") {
      options.seconds = std::stod(std::string(value()));
    } else if (arg == "--postgresql") {
      options.postgresql = std::string(value());
    } else if (arg == "--serve") {
      options.serve = true;
    } else if (arg == "--serve-args") {
      options.serve = true;
      std::string_view list = value();
      while (!list.empty()) {
        const std::size_t space = std::min(list.find(' '), list.size());
        if (space > 0) options.serve_args.emplace_back(list.substr(0, space));
        list.remove_prefix(std::min(space + 1, list.size()));
      }
    } else if (arg == "--keep") {
      options.keep = fs::path(value());
    } else {
      throw std::invalid_argument("unknown option " + std::string(arg) + "\n" + std::string(kUsage));
    }
  }
  if (options.ct.empty() || options.agents.empty() || options.tasks < 100 || options.seconds <= 0)
    throw std::invalid_argument(std::string(kUsage));
  return options;
}

void progress(const std::string& text) { std::cerr << text << std::endl; }

// -- the store ----------------------------------------------------------------------------------

constexpr const char* kWords[] = {"parser", "storage", "cache", "login", "export", "schema", "queue", "billing"};

/// `n` tasks: an epic per 100, the rest tasks under it, each titled with two of kWords (a word is
/// in a quarter of the tasks), ~30 % done.
json::Value backlog(std::int64_t n) {
  Rng rng(20261130);
  json::Value::Array out;
  std::string epic;
  for (std::int64_t i = 0; i < n; ++i) {
    json::Value record = json::Value::object();
    const std::string id = "X" + std::to_string(i);
    record.set("id", id);
    if (i % 100 == 0) {
      record.set("type", "epic");
      record.set("title", "Epic " + std::to_string(i / 100) + " of the " + kWords[rng.below(8)] + " work");
      epic = id;
    } else {
      record.set("parent", epic);
      record.set("title", std::string("Task ") + std::to_string(i) + " " + kWords[rng.below(8)] + " " + kWords[rng.below(8)]);
      if (rng.chance(0.3)) record.set("status", "done");
    }
    out.push_back(std::move(record));
  }
  return json::Value(std::move(out));
}

struct Store {
  std::vector<std::string> ids;    // every task's id, as the import mapped them
  std::vector<std::string> open;   // the tasks not done (what updates change)
  std::vector<std::string> epics;  // the epics' ids
};

Store build(Router& router, std::int64_t n) {
  json::Value records = backlog(n);
  json::Value params = json::Value::object();
  params.set("tasks", records);
  Envelope envelope = router.dispatch(mutate("tasks", "import", std::move(params)));
  if (!envelope.success)
    throw std::runtime_error("tasks.import failed: " + to_json(envelope, McpAdvice(router.operations())).substr(0, 2000));
  const json::Value& map = envelope.data["idMap"];
  if (!map.is_object()) throw std::runtime_error("tasks.import answered no idMap");
  Store store;
  for (const auto& record : records.as_array()) {
    const json::Value& id = map[record["id"].as_string()];
    if (!id.is_string()) throw std::runtime_error("tasks.import did not map " + record["id"].as_string());
    store.ids.push_back(id.as_string());
    if (record["type"] == json::Value("epic")) store.epics.push_back(id.as_string());
    else if (record["status"] != json::Value("done")) store.open.push_back(id.as_string());
  }
  return store;
}

// -- the agents ---------------------------------------------------------------------------------

enum Kind { Show, Find, Next, List, Note, Priority, Add, Complete, kKinds };
constexpr const char* kKindNames[kKinds] = {"show", "find", "next", "list", "note", "priority", "add", "complete"};
bool is_write(int kind) { return kind >= Note; }

struct Acknowledged {
  std::vector<std::pair<std::string, std::string>> adds;   // id, title
  std::vector<std::pair<std::string, std::string>> notes;  // id, note
  std::vector<std::string> completions;
};

struct AgentResult {
  std::vector<double> latencies[kKinds];  // µs
  int retries = 0;
  int failures = 0;
  std::string first_failure;
  Acknowledged acked;
};

/// One agent's way in: a `ct mcp` process of its own, or an MCP session on the shared `ct serve`.
class Link {
 public:
  virtual ~Link() = default;
  /// One tools/call of the tasks domain: its envelope, null when the server went away.
  virtual json::Value call(std::string_view tool, std::string_view operation, std::string_view params) = 0;
  /// What the server answered instead of an envelope.
  virtual std::string why() const = 0;
};

class StdioLink final : public Link {
 public:
  explicit StdioLink(testing::McpClient client) : client_(std::move(client)) {}
  json::Value call(std::string_view tool, std::string_view operation, std::string_view params) override {
    return client_.call(tool, "tasks", operation, params);
  }
  std::string why() const override { return "a ct mcp agent went away"; }

 private:
  testing::McpClient client_;
};

class HttpLink final : public Link {
 public:
  explicit HttpLink(testing::McpHttpSession session) : session_(std::move(session)) {}
  json::Value call(std::string_view tool, std::string_view operation, std::string_view params) override {
    return session_.call(tool, "tasks", operation, params);
  }
  std::string why() const override { return "ct serve did not answer: " + session_.last_error(); }

 private:
  testing::McpHttpSession session_;
};

std::string json_text(std::string_view text) {
  std::string out;
  json::Writer(out).value(text);
  return out;
}

void agent(Link& client, const Store& store, int number, const std::atomic<bool>& go,
           const std::atomic<bool>& stop, AgentResult& out) {
  Rng rng(static_cast<std::uint32_t>(7919 * (number + 1)));
  std::vector<std::string> mine;  // tasks this agent added and has not completed
  int counter = 0;
  while (!go) std::this_thread::yield();
  while (!stop) {
    const std::size_t roll = rng.below(100);
    int kind = roll < 40 ? Show : roll < 55 ? Find : roll < 65 ? Next : roll < 70 ? List : roll < 80 ? Note
               : roll < 90 ? Priority : roll < 95 ? Add : Complete;
    if (kind == Complete && mine.empty()) kind = Add;
    const std::string& task = is_write(kind) ? store.open[rng.below(store.open.size())] : store.ids[rng.below(store.ids.size())];
    std::string tool = is_write(kind) ? "cleo_mutate" : "cleo_query";
    std::string operation, params, note, title;
    switch (kind) {
      case Show: operation = "show", params = R"({"id":")" + task + "\"}"; break;
      case Find: operation = "find", params = std::string(R"({"query":")") + kWords[rng.below(8)] + "\"}"; break;
      case Next: operation = "next", params = "{}"; break;
      case List:
        operation = "list", params = R"({"parent":")" + store.epics[rng.below(store.epics.size())] + R"(","limit":20})";
        break;
      case Note:
        note = "agent " + std::to_string(number) + " note " + std::to_string(++counter);
        operation = "update", params = R"({"id":")" + task + R"(","notes":)" + json_text(note) + "}";
        break;
      case Priority:
        operation = "update", params = R"({"id":")" + task + R"(","priority":")" + (rng.chance(0.5) ? "high" : "low") + "\"}";
        break;
      case Add:
        title = "Fleet agent " + std::to_string(number) + " task " + std::to_string(++counter);
        operation = "add",
        params = R"({"title":)" + json_text(title) + R"(,"parent":")" + store.epics[rng.below(store.epics.size())] + "\"}";
        break;
      default: {
        const std::size_t pick = rng.below(mine.size());
        operation = "complete", params = R"({"id":")" + mine[pick] + R"(","notes":"done by the fleet"})";
        title = mine[pick];
        mine.erase(mine.begin() + static_cast<std::ptrdiff_t>(pick));
      }
    }
    for (int attempt = 0; attempt < 10; ++attempt) {
      const auto started = Steady::now();
      json::Value envelope = client.call(tool, operation, params);
      if (envelope.is_null()) throw std::runtime_error(client.why());
      out.latencies[kind].push_back(micros_since(started));
      if (envelope["success"] == json::Value(true)) {
        if (kind == Add) {
          const std::string& id = envelope["data"]["id"].as_string();
          out.acked.adds.emplace_back(id, title);
          mine.push_back(id);
        } else if (kind == Note) {
          out.acked.notes.emplace_back(task, note);
        } else if (kind == Complete) {
          out.acked.completions.push_back(title);
        }
        break;
      }
      if (envelope["error"]["retryable"] == json::Value(true) && attempt + 1 < 10) {
        ++out.retries;
        continue;
      }
      ++out.failures;
      if (out.first_failure.empty()) out.first_failure = "tasks." + operation + " " + params + ": " + envelope.dump().substr(0, 400);
      break;
    }
  }
}

// -- the check ----------------------------------------------------------------------------------

/// What is missing of what the agents were told was written, and whether the chain verifies.
std::string check(Router& router, const std::vector<AgentResult>& results) {
  int missing = 0;
  std::string first;
  auto miss = [&](const std::string& what) {
    if (missing++ == 0) first = what;
  };
  std::map<std::string, json::Value> shown;
  auto show = [&](const std::string& id) -> const json::Value& {
    auto found = shown.find(id);
    if (found != shown.end()) return found->second;
    json::Value params = json::Value::object();
    params.set("id", id);
    Envelope envelope = router.dispatch(query("tasks", "show", std::move(params)));
    return shown.emplace(id, envelope.success ? envelope.data : json::Value()).first->second;
  };
  for (const auto& result : results) {
    for (const auto& [id, title] : result.acked.adds)
      if (show(id)["title"] != json::Value(title)) miss("add " + id + " (" + title + ")");
    for (const auto& id : result.acked.completions)
      if (show(id)["status"] != json::Value("done")) miss("completion of " + id);
    for (const auto& [id, note] : result.acked.notes) {
      const json::Value& task = show(id);
      bool found = false;
      if (task["notes"].is_array())
        for (const auto& entry : task["notes"].as_array())
          found = found || entry.dump().find(note) != std::string::npos;
      if (!found) miss("note \"" + note + "\" of " + id);
    }
  }
  Envelope audit = router.dispatch(query("validate", "audit", json::Value::object()));
  const bool chain = audit.success && audit.data["valid"] != json::Value(false) && audit.data["ok"] != json::Value(false);
  std::string out = missing == 0 ? "all present" : std::to_string(missing) + " missing (first: " + first + ")";
  out += chain ? "; chain verifies" : "; **chain does not verify**: " + to_json(audit, McpAdvice(router.operations())).substr(0, 300);
  return out;
}

// -- a run --------------------------------------------------------------------------------------

struct Row {
  int agents = 0;
  double seconds = 0;
  std::size_t calls = 0;
  std::vector<double> latencies[kKinds];
  std::vector<double> writes;
  int retries = 0, failures = 0;
  std::string first_failure, checked;
  double server_cpu_us = 0;  // with --serve: the server's CPU time per call
};

Row run_fleet(const Options& options, int agents) {
  WorkDir work(options.keep ? std::optional<fs::path>(*options.keep / ("k" + std::to_string(agents))) : std::nullopt,
               "ct-bench-fleet");
  const PgSchemaDrop schema(options.postgresql,
                            write_bench_config(work.path(), options.postgresql, "bench_fleet_k" + std::to_string(agents)),
                            options.keep.has_value());
  Router router(registry(), Workspace::open(work.path()), RouterOptions{}, std::make_unique<SystemClock>());
  call(router, mutate("system", "init", json::Value::object()));
  progress("K=" + std::to_string(agents) + ": importing " + std::to_string(options.tasks) + " tasks");
  const Store store = build(router, options.tasks);

  std::vector<std::string> env = testing::inherited_environment({"CLEO_"});
  std::optional<testing::ServeProcess> server;
  std::string token;
  if (options.serve) {
    Rng rng(static_cast<std::uint32_t>(Steady::now().time_since_epoch().count()));
    for (int i = 0; i < 32; ++i) token += "0123456789abcdef"[rng.below(16)];
    env.push_back("CLEO_SERVE_TOKEN=" + token);
    auto started = testing::ServeProcess::start(options.ct, work.path().string(), env, options.serve_args,
                                                (work.path() / "serve.stderr").string());
    if (!started) throw std::runtime_error(started.error());
    server.emplace(std::move(*started));
  } else {
    env.push_back("CLEO_ROOT=" + work.path().string());
  }
  std::vector<std::unique_ptr<Link>> clients;
  for (int a = 0; a < agents; ++a) {
    if (server) {
      testing::McpHttpSession session(server->host(), server->port(), token);
      if (auto ready = session.initialize(); !ready) throw std::runtime_error("ct serve: " + ready.error());
      clients.push_back(std::make_unique<HttpLink>(std::move(session)));
    } else {
      auto client = testing::McpClient::start(options.ct, env);
      if (!client) throw std::runtime_error(client.error());
      if (!client->initialize()) throw std::runtime_error("ct mcp did not answer initialize");
      clients.push_back(std::make_unique<StdioLink>(std::move(*client)));
    }
    // Each agent's connection opened and warm before the clock starts.
    if (clients.back()->call("cleo_query", "show", R"({"id":")" + store.ids.front() + "\"}").is_null())
      throw std::runtime_error("tasks.show: " + clients.back()->why());
  }
  progress("K=" + std::to_string(agents) + ": calling for " + std::to_string(options.seconds) + " s");
  std::vector<AgentResult> results(static_cast<std::size_t>(agents));
  std::atomic<bool> go{false}, stop{false};
  std::vector<std::thread> threads;
  std::mutex errors_mutex;
  std::string error;
  for (int a = 0; a < agents; ++a)
    threads.emplace_back([&, a] {
      try {
        agent(*clients[static_cast<std::size_t>(a)], store, a, go, stop, results[static_cast<std::size_t>(a)]);
      } catch (const std::exception& e) {
        std::lock_guard lock(errors_mutex);
        error = e.what();
      }
    });
  const std::int64_t server_cpu_before = server ? cpu_ns_of(server->process().pid()) : 0;
  const auto started = Steady::now();
  go = true;
  std::this_thread::sleep_for(std::chrono::duration<double>(options.seconds));
  stop = true;
  for (auto& thread : threads) thread.join();
  Row row;
  row.agents = agents;
  row.seconds = micros_since(started) / 1e6;
  const std::int64_t server_cpu = server ? cpu_ns_of(server->process().pid()) - server_cpu_before : 0;
  if (!error.empty()) throw std::runtime_error(error);
  clients.clear();  // every agent's process (or session) ends before the check reads the store
  if (server) {
    const testing::ExitStatus status = server->stop();
    if (status.signaled || status.code != 0)
      throw std::runtime_error("ct serve ended with " + testing::describe(status) + " after SIGTERM; its stderr: " +
                               server->stderr_text());
  }
  for (const auto& result : results) {
    for (int k = 0; k < kKinds; ++k) {
      row.latencies[k].insert(row.latencies[k].end(), result.latencies[k].begin(), result.latencies[k].end());
      if (is_write(k)) row.writes.insert(row.writes.end(), result.latencies[k].begin(), result.latencies[k].end());
      row.calls += result.latencies[k].size();
    }
    row.retries += result.retries;
    row.failures += result.failures;
    if (row.first_failure.empty()) row.first_failure = result.first_failure;
  }
  if (row.calls > 0) row.server_cpu_us = static_cast<double>(server_cpu) / 1000.0 / static_cast<double>(row.calls);
  progress("K=" + std::to_string(agents) + ": checking what was acknowledged");
  row.checked = check(router, results);
  return row;
}

std::string ms(const std::vector<double>& micros, double q) {
  if (micros.empty()) return "—";
  return format_fixed(percentile(micros, q) / 1000.0, 2);
}

int run(const Options& options) {
  std::vector<Row> rows;
  for (int agents : options.agents) rows.push_back(run_fleet(options, agents));
  std::string agents_are = "`ct mcp` agents";
  if (options.serve) {
    agents_are = "HTTP clients of one `ct serve`";
    for (const auto& arg : options.serve_args) agents_are += " " + arg;
  }
  std::printf("ct_bench_fleet (%s build, ct %s), %s, %s, %lld tasks, %g s per K; %s; load %s\n\n",
              CT_BENCH_BUILD_TYPE, std::string(ct::product_version()).c_str(), agents_are.c_str(),
              options.postgresql ? "PostgreSQL" : "SQLite",
              static_cast<long long>(options.tasks), options.seconds, cpu_model().c_str(), load_average().c_str());
  std::printf("| K | calls/s | writes p50 / p99 ms |");
  for (const char* kind : kKindNames) std::printf(" %s |", kind);
  if (options.serve) std::printf(" server CPU µs/call |");
  std::printf(" retries | failures | acknowledged writes |\n|---:|---:|---:|");
  for (int k = 0; k < kKinds; ++k) std::printf("---:|");
  if (options.serve) std::printf("---:|");
  std::printf("---:|---:|---|\n");
  for (const auto& row : rows) {
    std::printf("| %d | %.0f | %s / %s |", row.agents, static_cast<double>(row.calls) / row.seconds, ms(row.writes, 0.5).c_str(),
                ms(row.writes, 0.99).c_str());
    for (int k = 0; k < kKinds; ++k) std::printf(" %s / %s |", ms(row.latencies[k], 0.5).c_str(), ms(row.latencies[k], 0.99).c_str());
    if (options.serve) std::printf(" %.0f |", row.server_cpu_us);
    std::printf(" %d | %d | %s |\n", row.retries, row.failures, row.checked.c_str());
  }
  for (const auto& row : rows)
    if (!row.first_failure.empty()) std::printf("\nK=%d, first failure: %s\n", row.agents, row.first_failure.c_str());
  return 0;
}

}  // namespace
}  // namespace ct::bench

int main(int argc, char** argv) {
  try {
    return ct::bench::run(ct::bench::parse_options(argc, argv));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ct_bench_fleet: %s\n", e.what());
    return 1;
  }
}
