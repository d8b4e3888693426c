#include "support/ct_client.h"

#include "core/json_parse.h"

namespace ct::testing {

bool succeeded(const json::Value& envelope) {
  return envelope["success"].is_bool() && envelope["success"].as_bool();
}

bool retryable(const json::Value& envelope) {
  const json::Value& flag = envelope["error"]["retryable"];
  return !succeeded(envelope) && flag.is_bool() && flag.as_bool();
}

std::string error_code(const json::Value& envelope) {
  const json::Value& code = envelope["error"]["code"];
  return code.is_string() ? code.as_string() : "";
}

CtRun CtCommand::run(const std::vector<std::string>& args, std::chrono::milliseconds timeout) const {
  std::vector<std::string> argv{ct_};
  argv.insert(argv.end(), args.begin(), args.end());
  SpawnOptions options;
  options.env = env_;
  options.cwd = cwd_;
  ProcessResult result = run_process(argv, options, timeout);
  CtRun ran;
  ran.status = result.status;
  ran.timed_out = result.timed_out;
  ran.out = result.start_error.empty() ? std::move(result.out) : result.start_error;
  if (auto parsed = json::parse(ran.out)) ran.json = std::move(*parsed);
  return ran;
}

CtRun CtCommand::run_retrying(std::vector<std::string> args, int attempts) const {
  args.emplace_back("--json");
  for (int attempt = 1;; ++attempt) {
    CtRun ran = run(args);
    ran.attempts = attempt;
    if (attempt >= attempts || !retryable(ran.json)) return ran;
    ++retries_;
  }
}

std::expected<McpClient, std::string> McpClient::start(const std::string& ct, const std::vector<std::string>& env,
                                                       const std::vector<std::string>& extra_args,
                                                       const std::string& stderr_path, const std::string& cwd) {
  std::vector<std::string> argv{ct, "mcp"};
  argv.insert(argv.end(), extra_args.begin(), extra_args.end());
  SpawnOptions options;
  options.pipe_stdin = true;
  options.env = env;
  options.stderr_path = stderr_path;
  options.cwd = cwd;
  auto child = ChildProcess::start(argv, options);
  if (!child) return std::unexpected(child.error());
  return McpClient(std::move(*child));
}

bool McpClient::initialize(std::chrono::milliseconds timeout) {
  json::Value reply = request("initialize",
                              R"({"protocolVersion":"2025-11-25","capabilities":{},)"
                              R"("clientInfo":{"name":"ct-testing","version":"1"}})",
                              timeout);
  return reply["result"].is_object() && send(R"({"jsonrpc":"2.0","method":"notifications/initialized"})");
}

json::Value McpClient::read_reply(std::chrono::milliseconds timeout) {
  while (auto line = child_.read_line(timeout)) {
    auto parsed = json::parse(*line);
    if (!parsed) continue;
    if (parsed->contains("id")) return std::move(*parsed);
    if (parsed->contains("method")) notifications_.push_back(std::move(*parsed));
  }
  return json::Value();
}

json::Value McpClient::next_notification(std::string_view method, std::chrono::milliseconds timeout) {
  auto take = [&]() -> json::Value {
    for (auto it = notifications_.begin(); it != notifications_.end(); ++it)
      if ((*it)["method"].is_string() && (*it)["method"].as_string() == method) {
        json::Value found = std::move(*it);
        notifications_.erase(it);
        return found;
      }
    return json::Value();
  };
  if (json::Value kept = take(); !kept.is_null()) return kept;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return json::Value();
    auto line = child_.read_line(left);
    if (!line) return json::Value();
    auto parsed = json::parse(*line);
    if (!parsed) continue;
    if (parsed->contains("method") && !parsed->contains("id")) {
      notifications_.push_back(std::move(*parsed));
      if (json::Value found = take(); !found.is_null()) return found;
    }
  }
}

json::Value McpClient::request(std::string_view method, std::string_view params_json,
                               std::chrono::milliseconds timeout) {
  const std::int64_t id = ++next_id_;
  std::string line = R"({"jsonrpc":"2.0","id":)" + std::to_string(id) + R"(,"method":")" + std::string(method) +
                     R"(","params":)" + std::string(params_json) + "}";
  if (!send(line)) return json::Value();
  while (true) {
    json::Value reply = read_reply(timeout);
    if (reply.is_null()) return reply;
    if (reply["id"].is_int() && reply["id"].as_int() == id) return reply;
  }
}

namespace {

/// The params of a tools/call request: {name, arguments: {domain, operation, params}}.
std::string tool_call_params(std::string_view tool, std::string_view domain, std::string_view operation,
                             std::string_view params_json) {
  return R"({"name":")" + std::string(tool) + R"(","arguments":{"domain":")" + std::string(domain) +
         R"(","operation":")" + std::string(operation) + R"(","params":)" + std::string(params_json) + "}}";
}

}  // namespace

std::string McpClient::tool_call_line(std::int64_t id, std::string_view tool, std::string_view domain,
                                      std::string_view operation, std::string_view params_json) {
  return R"({"jsonrpc":"2.0","id":)" + std::to_string(id) + R"(,"method":"tools/call","params":)" +
         tool_call_params(tool, domain, operation, params_json) + "}";
}

json::Value McpClient::call(std::string_view tool, std::string_view domain, std::string_view operation,
                            std::string_view params_json, std::chrono::milliseconds timeout) {
  json::Value reply = request("tools/call", tool_call_params(tool, domain, operation, params_json), timeout);
  return reply.is_null() ? reply : reply["result"]["structuredContent"];
}

json::Value McpClient::call_retrying(std::string_view tool, std::string_view domain, std::string_view operation,
                                     std::string_view params_json, std::atomic<int>& retries, int attempts) {
  for (int attempt = 1;; ++attempt) {
    json::Value envelope = call(tool, domain, operation, params_json);
    if (attempt >= attempts || !retryable(envelope)) return envelope;
    ++retries;
  }
}

}  // namespace ct::testing
