// What `ct mcp`, `ct serve` and `ct mcp-config` do; cli/ only parses their flags.
#pragma once

#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"
#include "gateway/product.h"
#include "domains/router.h"
#include "gateway/http_transport.h"
#include "gateway/mcp_protocol.h"

namespace ct::mcp {

/// `ct mcp`: serves MCP on stdin/stdout until stdin closes.
int run_stdio_server(std::shared_ptr<Workspace> workspace, const RouterOptions& router_options);

/// The MCP server identity and instructions: level 0, or for a host that loads a current CLEO
/// block from its instruction file in the workspace's project, a line pointing at that block
/// (disclosure::block_pointer_instructions).
ServerInfo server_info(const Registry& operations = registry(), std::shared_ptr<Workspace> workspace = nullptr);
/// The registry a server serves: the product's plus the project's plug-in engines (loaded once;
/// a declaration that is skipped is logged with the reason).
const Registry& served_registry(Workspace& workspace);

/// `ct serve`: initialises the project when needed, prints the URL and a client configuration
/// to `out`, then serves until SIGINT or SIGTERM. Defined in programs/serve_http.cpp, linked only
/// into the `ct-serve` executable (with ct_gateway_http, the libmicrohttpd transport).
int run_http_server(std::shared_ptr<Workspace> workspace, const RouterOptions& router_options,
                    const HttpOptions& http_options, std::FILE* out);

/// Hosts that `ct mcp-config` knows, in the order shown by --help.
std::vector<std::string> config_hosts();

/// What `ct mcp-config` prints: the entry for `host` in the file of one scope.
struct ClientConfigRequest {
  std::string host = "claude";
  /// The user's own file (the installed ct's absolute path) or the project's (the portable ct).
  bool user_scope = true;
  std::optional<std::string> http_url;  // connect to `ct serve` there instead of starting ct mcp
  std::string token_env;                // http: the variable holding the server's token
  std::optional<std::filesystem::path> project;
};
struct ClientConfig {
  std::string snippet;   // the entry as a file of its own would hold it
  std::string location;  // the file it goes in, and the command that merges it there
  std::string note;      // approval, PATH, token and how to check (providers::entry_note)
};
/// E_INVALID_INPUT for an unknown host (with the valid hosts), a host without a file for the
/// scope, or a token the host cannot take from an environment variable.
Result<ClientConfig> client_config(const ClientConfigRequest& request);

}  // namespace ct::mcp
