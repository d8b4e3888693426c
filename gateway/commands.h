// What `ct mcp`, `ct serve` and `ct mcp-config` do; cli/ only parses their flags.
#pragma once

#include <cstdio>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"
#include "disclosure/product.h"
#include "domains/router.h"
#include "gateway/http_transport.h"
#include "gateway/mcp_protocol.h"

namespace ct::mcp {

/// `ct mcp`: serves MCP on stdin/stdout until stdin closes.
int run_stdio_server(const RouterOptions& router_options);

/// The MCP server identity and instructions: level 0, or for a host that loads a current CLEO
/// block from its instruction file in the project (found from `project_dir` as the router finds
/// it), a line pointing at that block (disclosure::block_pointer_instructions).
ServerInfo server_info(const Registry& operations = registry(),
                       const std::optional<std::filesystem::path>& project_dir = std::nullopt);
/// The registry a server serves: the product's plus the project's plug-in engines (loaded once;
/// a declaration that is skipped is logged with the reason).
const Registry& served_registry(const RouterOptions& router_options);

/// `ct serve`: initialises the project when needed, prints the URL and a client configuration
/// to `out`, then serves until SIGINT or SIGTERM. Defined in http_command.cpp (library
/// ct_gateway_http, linked only into the `ct-serve` executable).
int run_http_server(const RouterOptions& router_options, const HttpOptions& http_options, std::FILE* out);

/// Hosts that `ct mcp-config` knows, in the order shown by --help.
std::vector<std::string> config_hosts();

/// The snippet `host` expects in its MCP configuration for running `ct_path mcp` (or, with
/// `http_url`, for connecting to `ct serve`). E_INVALID_INPUT (with the valid hosts) for an
/// unknown host.
Result<std::string> client_config(std::string_view host, const std::optional<std::string>& http_url,
                                  const std::string& ct_path, const std::optional<std::filesystem::path>& project);

/// Where each host reads that snippet from (for the human-readable header).
std::string config_location(std::string_view host);

/// The absolute path of the running executable (for configs that must not depend on PATH).
std::string self_path();

}  // namespace ct::mcp
