#include "gateway/commands.h"

#include <algorithm>
#include <csignal>
#include <pthread.h>
#include <thread>
#include <unistd.h>

#include "core/clock.h"
#include "core/json.h"
#include "core/log.h"
#include "core/version.h"
#include "gateway/stdio_transport.h"

namespace ct::mcp {
namespace {

ServerInfo server_info() {
  return ServerInfo{"cleo", std::string(product_version()), default_instructions(registry())};
}

std::string toml_string(std::string_view text) {
  std::string out;
  json::write_string(out, text);  // JSON string escapes are valid TOML basic-string escapes
  return out;
}

}  // namespace

std::string self_path() {
  std::error_code ec;
  auto path = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::string("ct") : path.string();
}

int run_stdio_server(const RouterOptions& router_options) {
  Protocol protocol(registry(), server_info());
  Router router(registry(), router_options, clock_from_environment());
  return serve_stdio(protocol, router, stdin, stdout);
}

int run_http_server(const RouterOptions& router_options, const HttpOptions& http_options, std::FILE* out) {
  // Initialise the project when there is none yet: `ct serve` is the one command to get going.
  {
    Router router(registry(), router_options, clock_from_environment());
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
      if (!probe.error->fix.empty()) std::fprintf(stderr, "  fix: %s\n", probe.error->fix.c_str());
      return probe.exit_code();
    }
  }
  Protocol protocol(registry(), server_info());
  HttpServer server(
      protocol, [router_options] { return std::make_unique<Router>(registry(), router_options, clock_from_environment()); },
      http_options);
  if (auto bound = server.bind(); !bound) {
    std::fprintf(stderr, "ct serve: %s\n  fix: %s\n", bound.error().message.c_str(), bound.error().fix.c_str());
    return bound.error().exit_code();
  }
  // Signals go to one thread that stops the server cleanly; the main thread serves.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  std::thread waiter([&server, signals] {
    int received = 0;
    sigwait(&signals, &received);
    log::info("signal received; stopping");
    server.stop();
  });

  std::string url = server.url();
  std::fprintf(out, "CLEO MCP server: %s\n", url.c_str());
  std::optional<std::filesystem::path> project = router_options.project_dir;
  auto snippet = client_config("claude", url, self_path(), project);
  if (snippet) std::fprintf(out, "Claude Code (%s):\n%s", config_location("claude").c_str(), snippet->c_str());
  std::fprintf(out, "Other hosts: ct mcp-config --host codex|cursor|gemini|vscode --http %s\n", url.c_str());
  if (!http_options.token.empty()) std::fprintf(out, "Clients must send: Authorization: Bearer <token>\n");
  std::fprintf(out, "Press Ctrl-C to stop.\n");
  std::fflush(out);
  server.run();
  // The server stopped: wake the waiter if it is still waiting (stop came from elsewhere).
  pthread_kill(waiter.native_handle(), SIGTERM);
  waiter.join();
  return 0;
}

std::vector<std::string> config_hosts() { return {"claude", "codex", "cursor", "gemini", "vscode"}; }

std::string config_location(std::string_view host) {
  if (host == "claude") return ".mcp.json in the project (or: claude mcp add)";
  if (host == "codex") return "~/.codex/config.toml";
  if (host == "cursor") return ".cursor/mcp.json in the project";
  if (host == "gemini") return ".gemini/settings.json in the project";
  if (host == "vscode") return ".vscode/mcp.json in the project";
  return "";
}

Result<std::string> client_config(std::string_view host, const std::optional<std::string>& http_url,
                                  const std::string& ct_path, const std::optional<std::filesystem::path>& project) {
  auto hosts = config_hosts();
  if (std::find(hosts.begin(), hosts.end(), host) == hosts.end()) {
    Error error(ErrorCode::InvalidInput, "unknown host '" + std::string(host) + "'");
    error.fix = "ct mcp-config --host claude";
    return fail(std::move(error).with_choices(host, hosts));
  }
  std::vector<std::string> args = {"mcp"};
  if (project) {
    args.push_back("--project");
    args.push_back(std::filesystem::absolute(*project).string());
  }
  if (host == "codex") {
    std::string out = "[mcp_servers.cleo]\n";
    if (http_url) {
      out += "url = " + toml_string(*http_url) + "\n";
    } else {
      out += "command = " + toml_string(ct_path) + "\nargs = [";
      for (std::size_t i = 0; i < args.size(); ++i) out += (i ? ", " : "") + toml_string(args[i]);
      out += "]\n";
    }
    return out;
  }
  json::Value server = json::Value::object();
  if (http_url) {
    if (host == "claude" || host == "vscode") server.set("type", "http");
    server.set(host == "gemini" ? "httpUrl" : "url", *http_url);
  } else {
    if (host == "vscode") server.set("type", "stdio");
    server.set("command", ct_path);
    server.set("args", json::Value::array_of(args));
  }
  json::Value servers = json::Value::object();
  servers.set("cleo", std::move(server));
  json::Value root = json::Value::object();
  root.set(host == "vscode" ? "servers" : "mcpServers", std::move(servers));
  return root.dump_pretty() + "\n";
}

}  // namespace ct::mcp
