// `ct serve`'s flags as the HTTP server receives them (cli/servers.h), without starting it.
#include <catch2/catch.hpp>

#include <optional>

#include "cli/servers.h"

namespace {

std::optional<ct::mcp::HttpOptions> received;

int capture(std::shared_ptr<ct::Workspace>, const ct::RouterOptions&, const ct::mcp::HttpOptions& options, std::FILE*) {
  received = options;
  return 0;
}

ct::mcp::HttpOptions serve(std::vector<std::string> args) {
  received.reset();
  args.insert(args.begin(), "serve");  // the whole argv after the program's name
  REQUIRE(ct::cli::run_server_command("serve", args, &capture) == 0);
  REQUIRE(received);
  return *received;
}

}  // namespace

TEST_CASE("ct serve: the dashboard's flags reach the server", "[cli][dashboard]") {
  auto plain = serve({"--port", "0"});
  CHECK(plain.dashboard);
  CHECK_FALSE(plain.dashboard_write);
  auto write = serve({"--dashboard-write"});
  CHECK(write.dashboard);
  CHECK(write.dashboard_write);
  CHECK_FALSE(serve({"--no-dashboard", "--token", "t"}).dashboard);
  received.reset();
  // Both at once is a contradiction, refused before the server starts.
  std::vector<std::string> both = {"serve", "--dashboard-write", "--no-dashboard"};
  CHECK(ct::cli::run_server_command("serve", both, &capture) == 2);
  CHECK_FALSE(received);
}
