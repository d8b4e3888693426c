// A client of the real `ct serve` for tests and benchmarks: the server started on a free port
// (`--port 0`) and its URL read from its first lines, and MCP sessions over Streamable HTTP on
// kept-alive connections, sending what a non-browser agent host sends (no Origin; the bearer
// token when the server needs one). Built on child_process.h and cpp-httplib's client, as the
// static library ct_test_serve; product code never includes it.
#pragma once

#include <chrono>
#include <cstdint>
#include <expected>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/json.h"
#include "support/child_process.h"

namespace httplib {
class Client;
}

namespace ct::testing {

/// `ct serve --project DIR --port 0 extra_args…`, running until stop() or destruction.
class ServeProcess {
 public:
  /// Starts the server and waits (up to `timeout`) for the line that names its URL. `env` is its
  /// whole environment (CLEO_SERVE_TOKEN there makes it require the token); stderr goes to
  /// `stderr_path` ("" = /dev/null). The error says why it could not start.
  static std::expected<ServeProcess, std::string> start(const std::string& ct, const std::string& project,
                                                        const std::vector<std::string>& env,
                                                        const std::vector<std::string>& extra_args = {},
                                                        const std::string& stderr_path = "",
                                                        std::chrono::milliseconds timeout = std::chrono::seconds(30));

  ServeProcess(ServeProcess&&) noexcept = default;
  ServeProcess& operator=(ServeProcess&&) noexcept = default;
  /// SIGTERM, then SIGKILL when it has not ended within 10 s.
  ~ServeProcess();

  const std::string& host() const { return host_; }
  int port() const { return port_; }
  ChildProcess& process() { return child_; }
  /// The start of what it wrote to `stderr_path` ("" without one), for a failure's message.
  std::string stderr_text() const;
  /// SIGTERM and the exit status (SIGKILL after `grace`).
  ExitStatus stop(std::chrono::milliseconds grace = std::chrono::seconds(10));

 private:
  ServeProcess(ChildProcess child, std::string stderr_path)
      : child_(std::move(child)), stderr_path_(std::move(stderr_path)) {}

  ChildProcess child_;
  std::string stderr_path_;
  std::string host_;
  int port_ = 0;
  bool stopped_ = false;
};

/// One MCP session (protocol revision 2025-11-25) on its own keep-alive connection to /mcp.
class McpHttpSession {
 public:
  /// `token` non-empty: every request carries `Authorization: Bearer <token>`.
  McpHttpSession(const std::string& host, int port, std::string token = "",
                 std::chrono::milliseconds timeout = std::chrono::seconds(60));
  McpHttpSession(McpHttpSession&&) noexcept;
  McpHttpSession& operator=(McpHttpSession&&) noexcept;
  /// Ends the session (DELETE /mcp) when one was opened.
  ~McpHttpSession();

  /// initialize + notifications/initialized; the error (HTTP status, body) when either failed.
  std::expected<void, std::string> initialize();
  /// A request with the next id: its reply, or null when the server answered no 200 JSON body
  /// (last_error() says what it answered).
  json::Value request(std::string_view method, std::string_view params_json);
  /// One tools/call: the envelope (structuredContent), or null as request().
  json::Value call(std::string_view tool, std::string_view domain, std::string_view operation,
                   std::string_view params_json);
  const std::string& session_id() const { return session_; }
  const std::string& last_error() const { return last_error_; }

 private:
  /// POSTs `body`: the response's body when its status is `expected`, else nullopt (last_error_).
  std::optional<std::string> post(const std::string& body, int expected);

  std::unique_ptr<httplib::Client> client_;
  std::string token_;
  std::string session_;
  std::string last_error_;
  std::int64_t next_id_ = 0;
};

}  // namespace ct::testing
