// ct_bench_ops: a fixed stream of one operation through the router, for counting instructions.
//
//   ct_bench_ops build DIR [--tasks N] [--seed S]      a store of N tasks (default 2000) in DIR
//   ct_bench_ops run DIR OP [--count N] [--seed S] [--session] [--lease S] [--reserved K]
//                                                      N calls of OP (default 100) on a copy of it
//
// OP is show, find, find-status (find among pending tasks), find-common (a word in a quarter of the
// tasks), list, next, add, update, plan-begin (plan.begin on an epic of --epic-size tasks, default
// 500, added first), plan (on that epic: plan.begin, plan.apply of --plan-adds adds, default 5, plan.diff,
// plan.commit), memory-find (memory.find of two words among 500 entries, added first), heartbeat
// (session.heartbeat: the write a read makes once per renewal step; it needs --session), start
// (tasks.start of the ready tasks in turn, each reserving two paths; --session) or start-bare (the
// same with paths:[], which reserves nothing: start − start-bare is what reservations cost a claim). --reserved K: K other sessions each hold a claim reserving a folder
// of its own first, the live reservations every start is checked against. With
// --session the calls run in a session that holds a claim (as an agent's do), its lease
// session.leaseSeconds S (--lease; default the config's): what renewing the lease costs a call is
// the difference between --lease 900 and --lease 0. `run` copies DIR's .cleo/ to a fresh directory
// first, so every run starts from the same store and makes the same calls (seeded), and prints
// nothing but a line on stderr: under callgrind, the difference between `--count N` and
// `--count 0` divided by N is the instructions one call costs — a number that does not move when
// the machine is busy. scripts/bench-check.sh runs it so; times belong to the other benchmarks.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "bench/router_calls.h"
#include "bench/workload.h"
#include "core/clock.h"
#include "gateway/mcp_syntax.h"
#include "gateway/product.h"
#include "engines/store/task.h"

namespace fs = std::filesystem;
using namespace ct;
using namespace ct::bench;

namespace {

constexpr std::string_view kOps[] = {"show",      "find",   "find-status", "find-common", "list",      "next",
                                     "add",       "update", "heartbeat",   "start",       "start-bare", "plan-begin",
                                     "plan",      "memory-find"};

/// Words of the seeded workload's vocabulary that a quarter of its tasks carry (24.8–27.3 % at 1k,
/// 10k and 100k: the Zipf law does not move with the size): find-common's words.
constexpr std::string_view kQuarterWords[] = {"schema", "migration", "database"};

struct Options {
  std::string command;
  fs::path dir;
  std::string op;
  std::int64_t tasks = 2000;
  std::int64_t count = 100;
  std::uint32_t seed = 17;
  bool session = false;
  std::optional<std::int64_t> lease;
  std::int64_t reserved = 0;
  std::int64_t epic_size = 500;
  std::int64_t plan_adds = 5;
};

[[noreturn]] void usage(const std::string& problem) {
  std::fprintf(stderr,
               "ct_bench_ops: %s\n"
               "usage: ct_bench_ops build DIR [--tasks N] [--seed S]\n"
               "       ct_bench_ops run DIR OP [--count N] [--seed S] [--session] [--lease S] [--epic-size N]\n"
               "       [--plan-adds N]\n"
               "       (OP: show find find-status find-common list next add update heartbeat start start-bare\n"
               "        plan-begin plan memory-find)\n",
               problem.c_str());
  std::exit(2);
}

Options parse(int argc, char** argv) {
  Options options;
  std::vector<std::string> words;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto number = [&]() -> std::int64_t {
      if (i + 1 >= argc) usage(arg + " needs a number");
      char* end = nullptr;
      long long value = std::strtoll(argv[++i], &end, 10);
      if (*end != '\0' || value < 0) usage(arg + " needs a number ≥ 0");
      return value;
    };
    if (arg == "--tasks") {
      options.tasks = number();
    } else if (arg == "--count") {
      options.count = number();
    } else if (arg == "--seed") {
      options.seed = static_cast<std::uint32_t>(number());
    } else if (arg == "--session") {
      options.session = true;
    } else if (arg == "--epic-size") {
      options.epic_size = number();
    } else if (arg == "--plan-adds") {
      options.plan_adds = number();
    } else if (arg == "--lease") {
      options.lease = number();
    } else if (arg == "--reserved") {
      options.reserved = number();
    } else if (arg.starts_with("--")) {
      usage("unknown option " + arg);
    } else {
      words.push_back(arg);
    }
  }
  if (words.empty()) usage("say build or run");
  options.command = words[0];
  if (options.command == "build" && words.size() == 2) {
    options.dir = words[1];
  } else if (options.command == "run" && words.size() == 3) {
    options.dir = words[1];
    options.op = words[2];
    if (std::find(std::begin(kOps), std::end(kOps), options.op) == std::end(kOps)) usage("unknown operation " + options.op);
  } else {
    usage("wrong arguments");
  }
  return options;
}

std::unique_ptr<Router> open_router(const fs::path& dir) {
  RouterOptions options;
  return std::make_unique<Router>(registry(), Workspace::open(dir), options, std::make_unique<FixedClock>(*parse_iso8601("2026-01-01T00:00:00Z")));
}

int build(const Options& options) {
  fs::create_directories(options.dir);
  auto router = open_router(options.dir);
  call(*router, mutate("system", "init", json::Value::object()));
  Workload workload(options.seed);
  fill_store(*router, workload, options.tasks, [](std::int64_t, const std::string&, double) {});
  std::fprintf(stderr, "ct_bench_ops: %lld tasks in %s\n", static_cast<long long>(options.tasks), options.dir.c_str());
  return 0;
}

int run(const Options& options) {
  if (!fs::exists(options.dir / ".cleo")) usage(options.dir.string() + " holds no store (run build first)");
  fs::path copy = fs::temp_directory_path() / ("ct_bench_ops-" + std::to_string(::getpid()));
  fs::remove_all(copy);
  fs::create_directories(copy);
  fs::copy(options.dir / ".cleo", copy / ".cleo", fs::copy_options::recursive);
  auto router = open_router(copy);
  // How many tasks the store holds: ids are T001 … T<total>.
  json::Value stats = json::Value::object();
  Envelope counted = router->dispatch(query("tasks", "stats", stats));
  const auto total = static_cast<std::size_t>(counted.data["total"].as_int());
  if (total == 0) usage("the store is empty");
  if (options.lease) {
    json::Value set = json::Value::object();
    set.set("key", "session.leaseSeconds");
    set.set("value", *options.lease);
    call(*router, mutate("system", "config.set", std::move(set)));
  }
  // In a session, every call names it (as a transport bound to it does), and it holds a claim.
  std::string session;
  if (options.session) {
    json::Value start = json::Value::object();
    start.set("scope", "global");
    Envelope started = router->dispatch(mutate("session", "start", std::move(start)));
    if (!started.success) throw std::runtime_error("session.start failed: " + to_json(started, McpAdvice(registry())));
    session = started.data["id"].as_string();
  }
  auto in_session = [&](Request request) {
    request.caller.session = session;
    return request;
  };
  // The ready tasks now (tasks.next's best, T001 left to the session's first claim below).
  auto ready_now = [&](std::int64_t count) {
    json::Value next = json::Value::object();
    next.set("count", count);
    Envelope ready = router->dispatch(query("tasks", "next", std::move(next)));
    std::vector<std::string> ids;
    if (ready.data.is_array())
      for (const auto& row : ready.data.as_array())
        if (row["id"].as_string() != "T001") ids.push_back(row["id"].as_string());
    return ids;
  };
  // Other sessions' live reservations: each claims the best ready task, reserving a folder of its own.
  for (std::int64_t k = 0; k < options.reserved; ++k) {
    std::vector<std::string> best = ready_now(1);
    if (best.empty()) usage("too few ready tasks for --reserved");
    json::Value start = json::Value::object();
    start.set("scope", "global");
    Envelope other = router->dispatch(mutate("session", "start", std::move(start)));
    if (!other.success) throw std::runtime_error("session.start failed: " + to_json(other, McpAdvice(registry())));
    json::Value claim = json::Value::object();
    claim.set("id", best.front());
    claim.set("paths", json::Value::array_of(std::vector<std::string>{"vendor/held" + std::to_string(k)}));
    Request request = mutate("tasks", "start", std::move(claim));
    request.caller.session = other.data["id"].as_string();
    call(*router, request);
  }
  const std::vector<std::string> ready_ids = ready_now(10);
  if ((options.op == "start" || options.op == "start-bare") && ready_ids.size() < 2) usage("too few ready tasks");
  json::Value first = json::Value::object();
  first.set("id", "T001");
  if (options.session) call(*router, in_session(mutate("tasks", "start", first)));
  call(*router, in_session(query("tasks", "show", std::move(first))));  // warm: schema, statements

  // The plan ops' epic: --epic-size tasks under a new epic (tasks.batch, 500 a call).
  std::string big_epic;
  if (options.op.starts_with("plan")) {
    json::Value epic = json::Value::object();
    epic.set("title", "The plans' epic");
    epic.set("type", "epic");
    Envelope added = router->dispatch(mutate("tasks", "add", std::move(epic)));
    if (!added.success) throw std::runtime_error("tasks.add failed: " + to_json(added, McpAdvice(registry())));
    big_epic = added.data["id"].as_string();
    for (std::int64_t from = 0; from < options.epic_size; from += 500) {
      json::Value ops = json::Value::array();
      for (std::int64_t n = from; n < std::min<std::int64_t>(from + 500, options.epic_size); ++n) {
        json::Value add = json::Value::object();
        add.set("title", "Step " + std::to_string(n + 1) + " of the plans' epic");
        add.set("parent", big_epic);
        ops.push_back(batch_op("tasks.add", std::move(add)));
      }
      json::Value batch = json::Value::object();
      batch.set("ops", std::move(ops));
      call(*router, mutate("tasks", "batch", std::move(batch)));
    }
  }

  Workload workload(options.seed);
  Rng rng(options.seed);
  // memory-find's entries: 500, each of six and twelve words of the workload's vocabulary.
  if (options.op == "memory-find")
    for (int n = 0; n < 500; ++n) {
      json::Value entry = json::Value::object();
      std::string title = workload.random_word();
      for (int w = 0; w < 5; ++w) title += " " + workload.random_word();
      std::string body = workload.random_word();
      for (int w = 0; w < 11; ++w) body += " " + workload.random_word();
      entry.set("kind", "learning");
      entry.set("title", std::move(title));
      entry.set("body", std::move(body));
      entry.set("force", true);
      Envelope added = router->dispatch(in_session(mutate("memory", "observe", std::move(entry))));
      if (!added.success) throw std::runtime_error("memory.observe failed: " + to_json(added, McpAdvice(registry())));
    }
  auto random_id = [&] { return format_task_id(static_cast<std::int64_t>(rng.below(total)) + 1); };
  for (std::int64_t i = 0; i < options.count; ++i) {
    json::Value params = json::Value::object();
    if (options.op == "show") {
      params.set("id", random_id());
      call(*router, in_session(query("tasks", "show", std::move(params))));
    } else if (options.op == "find" || options.op == "find-status") {
      params.set("query", workload.random_word());
      if (options.op == "find-status") params.set("status", json::Value::array_of(std::vector<std::string>{"pending"}));
      call(*router, in_session(query("tasks", "find", std::move(params))));
    } else if (options.op == "find-common") {
      params.set("query", std::string(kQuarterWords[static_cast<std::size_t>(i) % std::size(kQuarterWords)]));
      call(*router, in_session(query("tasks", "find", std::move(params))));
    } else if (options.op == "plan-begin" || options.op == "plan") {
      params.set("label", "bench plan " + std::to_string(i));
      params.set("epicId", big_epic);
      Envelope begun = router->dispatch(in_session(mutate("plan", "begin", std::move(params))));
      if (!begun.success) throw std::runtime_error("plan.begin failed: " + to_json(begun, McpAdvice(registry())));
      if (options.op == "plan") {
        const std::string plan = begun.data["plan"].as_string();
        json::Value ops = json::Value::array();
        for (std::int64_t k = 0; k < options.plan_adds; ++k) {
          json::Value add = workload.plan_add().params;
          for (std::string_view field : {"parent", "depends", "blockedBy", "type"}) add.erase(field);
          add.set("parent", big_epic);
          ops.push_back(batch_op("tasks.add", std::move(add)));
        }
        json::Value apply = json::Value::object();
        apply.set("plan", plan);
        apply.set("ops", std::move(ops));
        call(*router, in_session(mutate("plan", "apply", std::move(apply))));
        json::Value diff = json::Value::object();
        diff.set("plans", json::Value::array_of(std::vector<std::string>{plan}));
        call(*router, in_session(query("plan", "diff", std::move(diff))));
        json::Value commit = json::Value::object();
        commit.set("plan", plan);
        call(*router, in_session(mutate("plan", "commit", std::move(commit))));
      }
    } else if (options.op == "memory-find") {
      params.set("query", workload.random_word() + " " + workload.random_word());
      call(*router, in_session(query("memory", "find", std::move(params))));
    } else if (options.op == "list") {
      params.set("sort", i % 2 == 0 ? "updated" : "priority");
      params.set("limit", 50);
      call(*router, in_session(query("tasks", "list", std::move(params))));
    } else if (options.op == "next") {
      call(*router, in_session(query("tasks", "next", std::move(params))));
    } else if (options.op == "add") {
      PlannedAdd plan = workload.plan_add();
      Envelope added = router->dispatch(in_session(mutate("tasks", "add", plan.params)));
      if (!added.success) throw std::runtime_error("add failed: " + to_json(added, McpAdvice(registry())));
      workload.created(added.data["id"].as_string(), plan);
    } else if (options.op == "heartbeat") {
      call(*router, in_session(mutate("session", "heartbeat", std::move(params))));
    } else if (options.op == "start" || options.op == "start-bare") {
      params.set("id", ready_ids[static_cast<std::size_t>(i) % ready_ids.size()]);
      // Two paths a call (a file and a folder), or none: the same start but for its reservations.
      std::vector<std::string> paths;
      if (options.op == "start") paths = {"src/bench" + std::to_string(i % 10) + "/a.cpp", "docs/bench" + std::to_string(i % 10)};
      params.set("paths", json::Value::array_of(paths));
      call(*router, in_session(mutate("tasks", "start", std::move(params))));
    } else if (options.op == "update") {
      params.set("id", random_id());
      params.set("notes", "bench note " + std::to_string(i));
      call(*router, in_session(mutate("tasks", "update", std::move(params))));
    }
  }
  router.reset();
  fs::remove_all(copy);
  std::fprintf(stderr, "ct_bench_ops: %lld × %s on %zu tasks\n", static_cast<long long>(options.count), options.op.c_str(),
               total);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options options = parse(argc, argv);
  try {
    return options.command == "build" ? build(options) : run(options);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ct_bench_ops: %s\n", e.what());
    return 1;
  }
}
