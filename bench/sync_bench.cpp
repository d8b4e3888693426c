// The GitHub sync (issue 55) against the fake GitHub (tests/github/server.mjs): the first sync of
// 10,000 issues, then an incremental sync after 10 issues changed — requests made (the fake's log),
// wall time, and the longest write transaction (the write lock's longest hold: issues.sync's
// longestWriteMs). Results: docs/performance.md.
//
//   ct_bench_sync --ct build/release/ct --server tests/github/server.mjs [--issues 10000] [--postgresql URL]
#include <httplib.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>

#include "core/json_parse.h"
#include "support/child_process.h"
#include "support/ct_client.h"
#include "support/sandbox.h"

using namespace ct;
using namespace ct::testing;
namespace fs = std::filesystem;

namespace {

std::string argument(int argc, char** argv, std::string_view name, std::string fallback = "") {
  for (int i = 1; i + 1 < argc; ++i)
    if (argv[i] == name) return argv[i + 1];
  return fallback;
}

json::Value get(httplib::Client& client, const std::string& path) {
  auto result = client.Get(path);
  if (!result) return json::Value();
  auto parsed = json::parse(result->body);
  return parsed ? *parsed : json::Value();
}

std::size_t requests(httplib::Client& client) {
  json::Value log = get(client, "/_control/log");
  return log.is_array() ? log.size() : 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string ct = argument(argc, argv, "--ct");
  const std::string server = argument(argc, argv, "--server");
  const int issues = std::stoi(argument(argc, argv, "--issues", "10000"));
  const std::string pg_url = argument(argc, argv, "--postgresql");
  if (ct.empty() || server.empty()) {
    std::fprintf(stderr, "usage: ct_bench_sync --ct PATH --server tests/github/server.mjs [--issues N] [--postgresql URL]\n");
    return 2;
  }
  std::signal(SIGPIPE, SIG_IGN);
  auto sandbox = sandbox_or_complain("ct-bench-sync");
  if (!sandbox) return 2;
  SpawnOptions options;
  options.pipe_stdin = true;
  options.env = inherited_environment({});
  auto fake = ChildProcess::start({"/usr/bin/node", server, "--port", "0"}, options);
  if (!fake) return 2;
  auto line = fake->read_line(std::chrono::seconds(60));
  auto port = line ? json::parse(*line) : Result<json::Value>(json::Value());
  if (!port || !(*port)["port"].is_int()) return 2;
  httplib::Client client("127.0.0.1", static_cast<int>((*port)["port"].as_int()));
  client.set_read_timeout(600);
  client.Post("/_control/reset", R"({"repos":[{"owner":"octo","name":"app"}]})", "application/json");
  client.Post("/_control/generate",
              R"({"repo":"octo/app","count":)" + std::to_string(issues) +
                  R"(,"seed":3,"labels":8,"milestones":5,"taskLists":true,"references":true})",
              "application/json");

  const fs::path project = sandbox->root() / "project";
  fs::create_directories(project);
  std::vector<std::string> env = sandbox->env_for(project);
  env.push_back("GITHUB_API_URL=http://127.0.0.1:" + std::to_string((*port)["port"].as_int()));
  env.push_back("GITHUB_TOKEN=tok-bench");
  if (!pg_url.empty()) {
    env.push_back("CLEO_DATABASE_URL=" + pg_url);
    env.push_back("CLEO_DATABASE_SCHEMA=bench_sync_" + std::to_string(::getpid()));
  }
  CtCommand person(ct, env, project.string());
  person.run({"init", "--json"});
  auto sync = [&](const char* label) {
    const std::size_t before = requests(client);
    const auto started = std::chrono::steady_clock::now();
    CtRun ran = person.run({"sync", "github", "--repo", "octo/app", "--dry-run=false", "--json"}, std::chrono::seconds(3600));
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
    const json::Value& data = ran.json["data"];
    std::printf("%-34s %9.0f ms  %6zu requests  longest write %7.1f ms  created %lld updated %lld pushed %lld%s\n",
                label, ms, requests(client) - before,
                data["longestWriteMs"].is_number() ? data["longestWriteMs"].as_double() : -1.0,
                static_cast<long long>(data["created"].is_int() ? data["created"].as_int() : -1),
                static_cast<long long>(data["updated"].is_int() ? data["updated"].as_int() : -1),
                static_cast<long long>(data["pushed"].is_int() ? data["pushed"].as_int() : -1),
                succeeded(ran.json) ? "" : ("  FAILED " + ran.out.substr(0, 300)).c_str());
  };
  std::printf("ct sync github, %d issues, %s\n", issues, pg_url.empty() ? "SQLite" : "PostgreSQL");
  sync("first sync");
  sync("again, nothing changed");
  for (int number = 1; number <= 10; ++number)
    client.Post("/_control/edit",
                R"({"repo":"octo/app","number":)" + std::to_string(number * 7) + R"(,"as":"alice","title":"Edited title )" +
                    std::to_string(number) + R"("})",
                "application/json");
  sync("incremental, 10 issues changed");
  return 0;
}
