#include "gateway/commands.h"

#include <algorithm>

#include "capability/plugins.h"
#include "core/clock.h"
#include "core/json.h"
#include "core/log.h"
#include "core/version.h"
#include "disclosure/help.h"
#include "disclosure/product.h"
#include "gateway/stdio_transport.h"

namespace ct::mcp {
namespace {


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

ServerInfo server_info(const Registry& operations) {
  // Level 0 of the help is what every agent gets on connecting. It renders from embedded
  // templates that the tests render too, so a failure here is a build defect.
  auto instructions = disclosure::level0(operations);
  return ServerInfo{"cleo", std::string(product_version()), instructions ? *instructions : instructions.error().message};
}

const Registry& served_registry(const RouterOptions& router_options) {
  std::vector<std::string> warnings;
  const Registry& operations = capability::project_registry(registry(), router_options.project_dir, &warnings);
  for (const auto& warning : warnings) log::warn(warning);
  return operations;
}

int run_stdio_server(const RouterOptions& router_options) {
  const Registry& operations = served_registry(router_options);
  Protocol protocol(operations, server_info(operations));
  Router router(operations, router_options, clock_from_environment());
  return serve_stdio(protocol, router, stdin, stdout);
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
