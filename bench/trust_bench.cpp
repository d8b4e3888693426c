// ct_bench_trust — the cost of tasks.complete with evidence (issue 35) on a store of --tasks tasks
// in a real git repository. Each call completes another task, through Router::dispatch + to_json
// (median, p95, min over --runs calls):
//   tasks.complete                                   no evidence (the baseline)
//   tasks.complete {evidence: files + test run}      a file hashed, a test record read
//   tasks.complete {evidence: commit}                git rev-parse and merge-base, in the external step
//   tasks.complete {evidence: commit + files}        and the cited commit's change: one git log (issue 53)
//   tasks.complete of a task with recorded evidence  the recheck alone (a commit and a file)
// git runs in the operation's external step, before the write transaction opens: the rows the
// first two columns time are the whole call; the write lock is held only for the handler.
// The report is Markdown on stdout, for docs/performance.md; progress goes to stderr.
//   ct_bench_trust [--tasks 10000] [--runs 200] [--postgresql URL] [--keep DIR]
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
#include "core/json_parse.h"
#include "core/version.h"
#include "gateway/mcp_syntax.h"
#include "gateway/product.h"
#include "engines/adapters/subprocess.h"

namespace ct::bench {
namespace {

using Options = StoreOptions;

void progress(const std::string& text) { std::cerr << text << std::endl; }

std::string git(const fs::path& dir, std::vector<std::string> args) {
  ProcessSpec spec;
  spec.argv = {"git"};
  spec.argv.insert(spec.argv.end(), args.begin(), args.end());
  spec.cwd = dir;
  spec.env = minimal_environment({}, {"GIT_AUTHOR_NAME=bench", "GIT_AUTHOR_EMAIL=bench@example.com",
                                      "GIT_COMMITTER_NAME=bench", "GIT_COMMITTER_EMAIL=bench@example.com"});
  auto ran = run_process(spec);
  if (!ran || !ran->ok()) throw std::runtime_error("git " + args.front() + " failed");
  std::string out = ran->out;
  while (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

int run(const Options& options) {
  const fs::path dir = options.keep ? *options.keep : fs::temp_directory_path() / ("ct-bench-trust-" + std::to_string(::getpid()));
  fs::create_directories(dir / ".cleo");
  fs::create_directories(dir / "src");
  for (int i = 0; i < 50; ++i) std::ofstream(dir / "src" / ("file" + std::to_string(i) + ".c")) << "int f" << i << ";\n";
  git(dir, {"init", "-q"});
  git(dir, {"add", "."});
  git(dir, {"commit", "-q", "-m", "bench"});
  const std::string sha = git(dir, {"rev-parse", "HEAD"});
  // The project's test command (`true`: a run that passes), and the store.
  json::Value config = json::Value::object();
  json::Value validate = json::Value::object();
  validate.set("testCommand", "true");
  config.set("validate", std::move(validate));
  const PgSchemaDrop schema(options.postgresql,
                            write_bench_config(dir, options.postgresql, "bench_trust", std::move(config)),
                            options.keep.has_value());
  RouterOptions router_options;
  Router router(registry(), Workspace::open(dir), router_options, std::make_unique<SystemClock>());
  call(router, mutate("system", "init", json::Value::object()));
  progress("adding " + std::to_string(options.tasks) + " tasks");
  std::vector<std::string> ids;
  for (std::int64_t i = 0; i < options.tasks; ++i) {
    json::Value task = json::Value::object();
    task.set("title", "Task number " + std::to_string(i));
    task.set("acceptance", json::Value::array_of(std::vector<std::string>{"it works"}));
    ids.push_back(router.dispatch(mutate("tasks", "add", std::move(task))).data["id"].as_string());
  }
  // One passing test run any task may name (a run recorded without a task).
  Envelope ran = router.dispatch(mutate("validate", "test.run", json::Value::object()));
  if (!ran.success || !ran.data["recorded"].is_int()) throw std::runtime_error("validate.test.run: " + to_json(ran, McpAdvice(router.operations())));
  const std::int64_t test_id = ran.data["recorded"].as_int();

  std::size_t next = 0;
  auto take = [&] { return ids.at(next++); };
  std::vector<std::pair<std::string, std::vector<double>>> rows;
  std::size_t bytes = 0;
  auto complete = [&](std::function<json::Value(const std::string&)> evidence) {
    return [&, evidence] {
      json::Value params = json::Value::object();
      const std::string id = take();
      params.set("id", id);
      json::Value atoms = evidence(id);
      if (!atoms.is_null()) params.set("evidence", std::move(atoms));
      return mutate("tasks", "complete", std::move(params));
    };
  };
  auto file_atoms = [&](const std::string&) {
    return *json::parse(R"([{"files":["src/file7.c"]},{"test":)" + std::to_string(test_id) + R"(,"covers":[1]}])");
  };
  auto commit_atoms = [&](const std::string&) {
    return *json::parse(R"([{"commit":")" + sha + R"(","covers":[1]}])");
  };
  progress("tasks.complete, no evidence");
  rows.emplace_back("tasks.complete (no evidence)", timed_calls(router, complete([](const std::string&) { return json::Value(); }), options.runs, bytes));
  progress("tasks.complete, files + test run");
  rows.emplace_back("tasks.complete {evidence: files + test run}", timed_calls(router, complete(file_atoms), options.runs, bytes));
  progress("tasks.complete, commit");
  rows.emplace_back("tasks.complete {evidence: commit} (git)", timed_calls(router, complete(commit_atoms), options.runs, bytes));
  // Files judged against the task's change (issue 53): the cited commit's, read by one more git log.
  auto change_atoms = [&](const std::string&) {
    return *json::parse(R"([{"commit":")" + sha + R"(","covers":[1]},{"files":["src/file7.c"]}])");
  };
  progress("tasks.complete, commit + files");
  rows.emplace_back("tasks.complete {evidence: commit + files} (git; the change: one git log)",
                    timed_calls(router, complete(change_atoms), options.runs, bytes));
  // Tasks whose commit and file were recorded before: completion rechecks them.
  progress("recording evidence for the recheck");
  const std::size_t first = next;
  for (int i = 0; i <= options.runs; ++i) {
    json::Value params = json::Value::object();
    params.set("id", ids.at(first + static_cast<std::size_t>(i)));
    params.set("evidence", *json::parse(R"([{"commit":")" + sha + R"(","covers":[1]},{"files":["src/file3.c"]}])"));
    call(router, mutate("tasks", "evidence", std::move(params)));
  }
  progress("tasks.complete, recheck");
  rows.emplace_back("tasks.complete of a task with a recorded commit and file (recheck)",
                    timed_calls(router, complete([](const std::string&) { return json::Value(); }), options.runs, bytes));

  if (!options.keep) fs::remove_all(dir);
  std::printf("ct_bench_trust (%s build, %s store of %lld tasks, ct %s), %d runs each\n\n", CT_BENCH_BUILD_TYPE,
              options.postgresql ? "PostgreSQL" : "SQLite", static_cast<long long>(options.tasks),
              std::string(ct::product_version()).c_str(), options.runs);
  std::printf("| call | median ms | p95 ms | min ms |\n|---|---:|---:|---:|\n");
  for (const auto& [name, ms] : rows)
    std::printf("| %s | %.3f | %.3f | %.3f |\n", name.c_str(), nearest_rank(ms, 0.5), nearest_rank(ms, 0.95), ms.front());
  return 0;
}

}  // namespace
}  // namespace ct::bench

int main(int argc, char** argv) {
  using namespace ct::bench;
  auto parsed = parse_store_options(argc, argv, "ct_bench_trust", {.tasks = 10000, .runs = 200});
  if (!parsed) return 2;
  const Options& options = *parsed;
  if (options.tasks < 5 * static_cast<std::int64_t>(options.runs) + 8) {
    std::fprintf(stderr, "ct_bench_trust: --tasks must be at least 5 × --runs + 8 (each call completes a task)\n");
    return 2;
  }
  try {
    return run(options);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ct_bench_trust: %s\n", e.what());
    return 1;
  }
}
