// `ct serve`: the HTTP server program. Linked only into the `ct-serve` executable, so that every
// other `ct` command starts without loading libmicrohttpd and the TLS libraries Debian builds it
// with.
#include <pthread.h>
#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <thread>

#include "cli/usage.h"
#include "core/clock.h"
#include "core/log.h"
#include "core/text.h"
#include "gateway/product.h"
#include "domains/providers/providers.h"
#include "engines/adapters/subprocess.h"
#include "gateway/server_commands.h"
#include "gateway/dashboard.h"
#include "engines/project/person_keys.h"
#include "engines/project/project.h"
#include "gateway/resource_watch.h"
#include "gateway/task_runner.h"

namespace ct::mcp {
namespace {

/// SIGINT and SIGTERM, taken by one thread: the first stops the server cleanly (calls that run
/// finish, streams end); if the process has not ended `grace` later — a call that does not
/// return, a task that does not stop — or a second signal comes, it ends at once. The store
/// stays whole either way: a write transaction that never committed is rolled back (SQLite's
/// journal, the PostgreSQL server), and every acknowledged write had committed.
class SignalStop {
 public:
  SignalStop(const sigset_t& signals, std::chrono::seconds grace) : signals_(signals), grace_(grace) {}
  /// Starts waiting; `stop` is called on the first signal.
  void start(std::function<void()> stop) {
    thread_ = std::thread([this, stop = std::move(stop)] {
      int received = 0;
      sigwait(&signals_, &received);
      if (ended_.load()) return;
      log::info("signal received; stopping (at most " + std::to_string(grace_.count()) + " s)");
      stop();
      const bool again = second_signal_within_grace();
      if (ended_.load()) return;
      log::error(again ? "second signal: stopping now"
                       : "calls still ran " + std::to_string(grace_.count()) + " s after the signal: stopping now");
      kill_running_children();  // a test run, a spawned agent: nothing it started runs on without it
      std::fflush(nullptr);
      std::_Exit(128 + received);
    });
  }
  /// Waits out the grace period: true when another signal came first (or the server ended: the
  /// destructor's wake-up), false when the period ran out. sigtimedwait may return early without
  /// a signal of the set (EINTR): the period's end is the clock's, waited again for the time left.
  bool second_signal_within_grace() {
    const auto deadline = std::chrono::steady_clock::now() + grace_;
    for (;;) {
      const auto left = std::chrono::duration_cast<std::chrono::nanoseconds>(deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) return false;
      const timespec wait{static_cast<time_t>(left.count() / 1'000'000'000), static_cast<long>(left.count() % 1'000'000'000)};
      siginfo_t info{};
      if (sigtimedwait(&signals_, &info, &wait) > 0) return true;
    }
  }

  /// The server ended by itself (or everything after the signal finished in time): no more waiting.
  ~SignalStop() {
    if (!thread_.joinable()) return;
    ended_.store(true);
    pthread_kill(thread_.native_handle(), SIGTERM);
    thread_.join();
  }

 private:
  sigset_t signals_;
  std::chrono::seconds grace_;
  std::atomic<bool> ended_{false};
  std::thread thread_;
};

}  // namespace

int run_http_server(std::shared_ptr<Workspace> workspace, const RouterOptions& router_options,
                    const HttpOptions& http_options, std::FILE* out) {
  // Initialise the project when there is none yet: `ct serve` is the one command to get going.
  {
    // Not the integrity check: it reads the whole file (0.14 s at 65k tasks, 1.6 s at 1M) and
    // would hold the port closed. The first call a worker serves runs it, once per process.
    RouterOptions probe_options = router_options;
    probe_options.check_integrity_on_open = false;
    Router router(registry(), workspace, probe_options, clock_from_environment());
    Envelope probe = router.dispatch({Gateway::Query, "tasks", "exists", json::Value(json::Value::Object{{"id", "T001"}})});
    if (!probe.success && probe.error && probe.error->code == ErrorCode::NotInitialized) {
      Envelope init = router.dispatch({Gateway::Mutate, "system", "init", json::Value()});
      if (!init.success) {
        std::fprintf(stderr, "ct serve: cannot initialise the project: %s\n", init.error->message.c_str());
        return init.exit_code();
      }
      std::fprintf(out, "Initialised a CLEO project in %s\n", init.data["root"].as_string().c_str());
    } else if (!probe.success) {
      std::fprintf(stderr, "ct serve: %s\n", probe.error->message.c_str());
      if (!probe.error->fix.empty())
        std::fprintf(stderr, "  fix: %s\n", cli::advice_for_people(probe.error->fix, registry()).c_str());
      return probe.exit_code();
    }
  }
  // Every connection is a file descriptor: raise the soft limit to the hard one, and keep the
  // connection limit under it (a few dozen stay for the database, logs and the listener).
  HttpOptions options = http_options;
  if (options.threads <= 0) {
    auto state = workspace->state(false);
    options.threads = options.workers(state && !store_location(state->config.get()).url.empty());
  }
  if (rlimit files{}; ::getrlimit(RLIMIT_NOFILE, &files) == 0) {
    if (files.rlim_cur < files.rlim_max) {
      files.rlim_cur = files.rlim_max;
      ::setrlimit(RLIMIT_NOFILE, &files);
      ::getrlimit(RLIMIT_NOFILE, &files);
    }
    constexpr rlim_t kReserved = 64;
    if (files.rlim_cur != RLIM_INFINITY && files.rlim_cur > 2 * kReserved)
      options.max_connections = std::min<std::size_t>(options.max_connections, files.rlim_cur - kReserved);
  }
  // SIGINT and SIGTERM are taken by one thread that stops the server cleanly (below): blocked here,
  // before any thread starts, so that every thread inherits the mask and none dies of them.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  // Declared before everything that may hold the stop up (the tasks' and subscriptions' threads,
  // the server's workers), so that its grace covers their ends too.
  SignalStop signal_stop(signals, std::chrono::seconds(std::max(1, http_options.stop_grace_seconds)));
  const Registry& operations = served_registry(*workspace);
  RouterFactory make_router = [workspace, router_options, &operations] {
    return std::make_unique<Router>(operations, workspace, router_options, clock_from_environment());
  };
  // Resource subscriptions and MCP tasks: each with routers of its own. Declared before the
  // server, so they outlive it.
  ResourceWatch watch(make_router);
  TaskRunner tasks(make_router);
  Protocol protocol(operations, server_info(operations, workspace), {&watch, &tasks});
  std::shared_ptr<Dashboard> dashboard;
  if (options.dashboard) {
    // The page's calls: recorded as a person at the dashboard, even in an agent's session, and
    // read-only unless --dashboard-write (dashboard_router_options).
    RouterOptions people = dashboard_router_options(router_options, options.dashboard_write);
    DashboardOptions dashboard_options;
    dashboard_options.write = !people.read_only;
    dashboard_options.token = options.token;
    dashboard_options.allowed_origins = options.allowed_origins;
    dashboard_options.person = os_user_name();
    if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0') dashboard_options.person_home = home;
    if (options.person_login_code) dashboard_options.login_code = random_hex(16);
    if (auto project = workspace->project()) dashboard_options.project = project->root.string();
    if (const char* dir = std::getenv("CLEO_DASHBOARD_DIR"); dir != nullptr && *dir != '\0')
      dashboard_options.files_dir = std::filesystem::path(dir);
    dashboard = std::make_shared<Dashboard>(
        [workspace, people, &operations] {
          return std::make_unique<Router>(operations, workspace, people, clock_from_environment());
        },
        embedded_dashboard_files(), std::move(dashboard_options));
  }
  HttpServer server(protocol, make_router, options, dashboard);
  if (auto bound = server.bind(); !bound) {
    std::fprintf(stderr, "ct serve: %s\n  fix: %s\n", bound.error().message.c_str(), cli::advice_for_people(bound.error().fix, operations).c_str());
    return bound.error().exit_code();
  }
  // Signals go to one thread that stops the server; the main thread serves.
  signal_stop.start([&server] { server.stop(); });

  std::string url = server.url();
  std::fprintf(out, "CLEO MCP server: %s\n", url.c_str());
  // The entry a host needs: with a token, one that names the variable holding it (never the token).
  ClientConfigRequest request;
  request.http_url = url;
  request.project = workspace->dir();
  if (!http_options.token.empty()) request.token_env = std::string(providers::kTokenEnv);
  if (auto config = client_config(request))
    std::fprintf(out, "Claude Code (%s):\n%s", config->location.c_str(), config->snippet.c_str());
  std::string hosts;
  for (const auto& host : config_hosts())
    if (host != "claude") hosts += (hosts.empty() ? "" : "|") + host;
  const std::string token_flag = request.token_env.empty() ? "" : " --token-env " + request.token_env;
  std::fprintf(out, "Other hosts: ct mcp-config --host %s --http %s%s\n", hosts.c_str(), url.c_str(), token_flag.c_str());
  if (!http_options.token.empty())
    std::fprintf(out, "Clients must send: Authorization: Bearer <token>; set %s to the token where the host starts\n",
                 request.token_env.c_str());
  if (dashboard) {
    std::string page = url.substr(0, url.size() - std::string_view("mcp").size());
    std::fprintf(out, "Dashboard: %s (%s%s)\n", page.c_str(),
                 dashboard->options().write ? "a person signed in may change tasks, approve and verify"
                                            : "read-only; --dashboard-write lets a person change tasks",
                 http_options.token.empty() ? "" : "; the page asks for the token");
    if (dashboard->options().write) {
      if (!dashboard->options().login_code.empty())
        std::fprintf(out, "Sign in as a person with this one-use code: %s\n", dashboard->options().login_code.c_str());
      else
        std::fprintf(out, "Sign in as a person with a person key (ct person key create, at your terminal)\n");
    }
  }
  std::fprintf(out, "Press Ctrl-C to stop.\n");
  std::fflush(out);
  server.run();
  return 0;
}

}  // namespace ct::mcp
