// The subprocess adapter's cost (docs/performance.md, "Subprocess adapter"): spawning a program
// through run_process (posix_spawn, pipes, reaping) against doing nothing, and a plug-in engine
// call through the router against the native operation it replaces.
//   ct_bench_spawn [runs]      (default 300; medians and p90 in milliseconds)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <sys/stat.h>

#include "capability/plugins.h"
#include "core/clock.h"
#include "core/json_parse.h"
#include "gateway/product.h"
#include "domains/router.h"
#include "engines/adapters/subprocess.h"

namespace fs = std::filesystem;
using namespace ct;

namespace {

struct Stats {
  double median = 0, p90 = 0;
};

template <typename F>
Stats measure(int runs, F&& run) {
  std::vector<double> ms;
  for (int i = 0; i < runs; ++i) {
    auto start = std::chrono::steady_clock::now();
    run();
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
  }
  std::sort(ms.begin(), ms.end());
  return {ms[ms.size() / 2], ms[ms.size() * 9 / 10]};
}

void print(const char* what, Stats s) { std::printf("%-58s median %7.3f ms   p90 %7.3f ms\n", what, s.median, s.p90); }

}  // namespace

int main(int argc, char** argv) {
  int runs = argc > 1 ? std::max(10, std::atoi(argv[1])) : 300;
  std::printf("ct_bench_spawn: %d runs each, build %s\n", runs, CT_BENCH_BUILD_TYPE);
  fs::path dir = fs::temp_directory_path() / ("ct-bench-spawn-" + std::to_string(::getpid()));
  fs::create_directories(dir);

  ProcessSpec truth;
  truth.argv = {"true"};
  truth.env = minimal_environment();
  print("run_process {true} (spawn, wait, reap)", measure(runs, [&] { (void)run_process(truth); }));
  ProcessSpec cat;
  cat.argv = {"cat"};
  cat.env = truth.env;
  cat.stdin_data = std::string(64 * 1024, 'x');
  print("run_process {cat} with 64 KiB through stdin and stdout", measure(runs, [&] { (void)run_process(cat); }));
  ProcessSpec shell;
  shell.argv = {"sh", "-c", "exit 0"};
  shell.env = truth.env;
  print("run_process {sh -c 'exit 0'} (a script's interpreter)", measure(runs, [&] { (void)run_process(shell); }));

  // A project whose tasks.show is served by a plug-in that answers at once.
  RouterOptions options;
  std::shared_ptr<Workspace> workspace = Workspace::open(dir);
  {
    Router init(registry(), workspace, options, std::make_unique<SystemClock>());
    init.dispatch({Gateway::Mutate, "system", "init", json::Value()});
    init.dispatch({Gateway::Mutate, "tasks", "add", *json::parse(R"({"title":"Benchmark task"})")});
  }
  fs::path plugin = dir / "show.sh";
  std::ofstream(plugin) << "#!/bin/sh\necho '{\"success\":true,\"data\":{\"id\":\"T001\",\"title\":\"Benchmark task\"}}'\n";
  ::chmod(plugin.c_str(), 0755);
  auto plugins = capability::with_plugins(registry(), *json::parse(R"({"tasks.show":{"command":["./show.sh"]}})"));
  Router native(registry(), workspace, options, std::make_unique<SystemClock>());
  Router plugged(plugins.registry, workspace, options, std::make_unique<SystemClock>());
  Request show{Gateway::Query, "tasks", "show", *json::parse(R"({"id":"T001"})")};
  if (!native.dispatch(show).success || !plugged.dispatch(show).success) {
    std::fprintf(stderr, "ct_bench_spawn: the calls failed\n");
    return 1;
  }
  print("router tasks.show, native", measure(runs, [&] { native.dispatch(show); }));
  print("router tasks.show, plug-in engine (sh script)", measure(runs, [&] { plugged.dispatch(show); }));
  fs::remove_all(dir);
  return 0;
}
