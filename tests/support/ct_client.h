// Clients of the real `ct` binary for tests and benchmarks: one `ct …` command run to completion
// (its `--json` envelope parsed), and a line-oriented MCP client of one `ct mcp` server. Both
// retry what the product marks retryable (`error.retryable == true`, e.g. E_LOCK_TIMEOUT) when
// asked to. Built on child_process.h; product code never includes it.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <expected>
#include <string>
#include <string_view>
#include <vector>

#include "core/json.h"
#include "support/child_process.h"

namespace ct::testing {

/// True when `envelope` is {"success": true, …}.
bool succeeded(const json::Value& envelope);
/// True when `envelope` is a failure the product marks retryable.
bool retryable(const json::Value& envelope);
/// error.code of a failure envelope, "" otherwise.
std::string error_code(const json::Value& envelope);

/// How a ct command ran.
struct CtRun {
  ExitStatus status;
  bool timed_out = false;
  std::string out;
  json::Value json;  // stdout parsed, null when it is not JSON
  int attempts = 1;  // with run_retrying: how many runs it took
};

/// Runs `ct` commands in one environment.
class CtCommand {
 public:
  /// `cwd`: the directory the commands run in ("" = this process's).
  CtCommand(std::string ct, std::vector<std::string> env, std::string cwd = "")
      : ct_(std::move(ct)), env_(std::move(env)), cwd_(std::move(cwd)) {}

  /// `ct args…`, once. A command that does not end within `timeout` is killed.
  CtRun run(const std::vector<std::string>& args,
            std::chrono::milliseconds timeout = std::chrono::seconds(60)) const;
  /// `ct args… --json`, repeated (up to `attempts` runs) while it fails with a retryable error.
  CtRun run_retrying(std::vector<std::string> args, int attempts = 10) const;

  /// Retries made by run_retrying so far (all threads).
  int retries() const { return retries_; }
  const std::string& ct() const { return ct_; }
  const std::vector<std::string>& env() const { return env_; }

 private:
  std::string ct_;
  std::vector<std::string> env_;
  std::string cwd_;
  mutable std::atomic<int> retries_{0};
};

/// A JSON-RPC client of one `ct mcp` server, newline-delimited over its stdin and stdout.
class McpClient {
 public:
  /// Starts `ct mcp extra_args…` in `cwd` ("" = this process's directory); stderr goes to
  /// `stderr_path` ("" = /dev/null).
  static std::expected<McpClient, std::string> start(const std::string& ct, const std::vector<std::string>& env,
                                                     const std::vector<std::string>& extra_args = {},
                                                     const std::string& stderr_path = "", const std::string& cwd = "");

  ChildProcess& process() { return child_; }

  /// initialize + notifications/initialized; false when the server did not answer.
  bool initialize(std::chrono::milliseconds timeout = std::chrono::seconds(30));

  /// One request line; false when the server's stdin is gone.
  bool send(std::string_view line) { return child_.write_line(line); }
  /// The next message that carries an id (notifications read meanwhile are kept for
  /// next_notification); null at end of stream or after `timeout`.
  json::Value read_reply(std::chrono::milliseconds timeout = std::chrono::seconds(60));
  /// The first notification named `method` the server sent (kept while waiting for replies, or read
  /// now), taken from the kept ones; null when none comes within `timeout`.
  json::Value next_notification(std::string_view method, std::chrono::milliseconds timeout);

  /// A request with the next id; its reply (null when the server is gone or silent).
  json::Value request(std::string_view method, std::string_view params_json,
                      std::chrono::milliseconds timeout = std::chrono::seconds(60));

  /// The tools/call line for `tool` {domain, operation, params}.
  static std::string tool_call_line(std::int64_t id, std::string_view tool, std::string_view domain,
                                    std::string_view operation, std::string_view params_json);

  /// One tools/call: the envelope (structuredContent), or null when the server is gone.
  json::Value call(std::string_view tool, std::string_view domain, std::string_view operation,
                   std::string_view params_json, std::chrono::milliseconds timeout = std::chrono::seconds(60));
  /// call(), repeated (up to `attempts` calls) while the envelope is a retryable failure; the same
  /// params (an idempotencyKey included) go with every attempt. `retries` counts the repeats.
  json::Value call_retrying(std::string_view tool, std::string_view domain, std::string_view operation,
                            std::string_view params_json, std::atomic<int>& retries, int attempts = 10);

 private:
  explicit McpClient(ChildProcess child) : child_(std::move(child)) {}

  ChildProcess child_;
  std::int64_t next_id_ = 0;
  std::vector<json::Value> notifications_;  // read while waiting for a reply, not yet taken
};

}  // namespace ct::testing
