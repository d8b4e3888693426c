// The process-level commands that are not registry operations: `ct mcp` (MCP over stdio),
// `ct serve` (MCP over Streamable HTTP) and `ct mcp-config` (a host's client configuration).
// gateway/ does the work; this file only parses their flags.
#pragma once

#include <cstdio>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "domains/router.h"
#include "gateway/http_transport.h"

namespace CLI {
class App;
}  // namespace CLI

namespace ct::cli {

struct ServerCommand {
  std::string_view name;
  std::string_view summary;
};

/// The server commands, for routing and for the top-level help.
std::span<const ServerCommand> server_commands();
bool is_server_command(std::string_view word);

/// Builds the command line of the server command `word` exactly as run_server_command parses it
/// and hands it to `visit` (the manual page lists its flags from it).
void visit_server_command(std::string_view word, const std::function<void(const CLI::App&)>& visit);

/// What `serve` does once its flags are parsed. `ct` passes none and so execs the sibling
/// `ct-serve` executable with the same arguments; `ct-serve` passes mcp::run_http_server.
using HttpRunner = int (*)(std::shared_ptr<Workspace>, const RouterOptions&, const mcp::HttpOptions&, std::FILE*);

/// Runs `word` (one of server_commands()) with the whole argv (without the program name), in
/// `workspace` when the caller opened it already (else in the one --project names). Returns the
/// process exit code.
int run_server_command(std::string_view word, const std::vector<std::string>& args, HttpRunner run_http = nullptr,
                       std::shared_ptr<Workspace> workspace = nullptr);

}  // namespace ct::cli
