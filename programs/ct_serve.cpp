// `ct-serve`: the HTTP server program behind `ct serve` (which execs it with the same arguments).
#include <string>
#include <vector>

#include "cli/servers.h"
#include "gateway/server_commands.h"

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  return ct::cli::run_server_command("serve", args, &ct::mcp::run_http_server);
}
