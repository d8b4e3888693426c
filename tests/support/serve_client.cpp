#include "support/serve_client.h"

#include <httplib.h>
#include <signal.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>

#include "core/json_parse.h"
#include "support/ct_client.h"

namespace ct::testing {

namespace {

constexpr std::string_view kProtocolVersion = "2025-11-25";
constexpr std::string_view kUrlPrefix = "CLEO MCP server: http://";

}  // namespace

std::expected<ServeProcess, std::string> ServeProcess::start(const std::string& ct, const std::string& project,
                                                             const std::vector<std::string>& env,
                                                             const std::vector<std::string>& extra_args,
                                                             const std::string& stderr_path,
                                                             std::chrono::milliseconds timeout) {
  SpawnOptions options;
  options.env = env;
  options.stderr_path = stderr_path;
  std::vector<std::string> argv = {ct, "serve", "--project", project, "--port", "0"};
  argv.insert(argv.end(), extra_args.begin(), extra_args.end());
  auto child = ChildProcess::start(argv, options);
  if (!child) return std::unexpected("ct serve: " + child.error());
  ServeProcess server(std::move(*child), stderr_path);
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  std::string seen;
  while (true) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    auto line = server.child_.read_line(std::max(left, std::chrono::milliseconds(0)));
    if (!line)
      return std::unexpected("ct serve printed no URL; its stdout: " + seen.substr(0, 400) + "; its stderr: " +
                             server.stderr_text());
    const auto at = line->find(kUrlPrefix);
    if (at == std::string::npos) {
      seen += *line + "\n";
      continue;
    }
    // http://HOST:PORT/mcp
    const std::string url = line->substr(at + kUrlPrefix.size());
    const auto slash = url.find('/');
    const auto colon = url.rfind(':', slash);
    if (colon == std::string::npos) return std::unexpected("ct serve printed an unreadable URL: " + *line);
    server.host_ = url.substr(0, colon);
    server.port_ = std::atoi(url.c_str() + colon + 1);
    if (server.port_ <= 0) return std::unexpected("ct serve printed an unreadable URL: " + *line);
    return server;
  }
}

ServeProcess::~ServeProcess() {
  if (!stopped_ && child_.pid() > 0) child_.stop(SIGTERM, std::chrono::seconds(10));
}

std::string ServeProcess::stderr_text() const {
  if (stderr_path_.empty()) return "";
  std::ifstream in(stderr_path_);
  std::string text(1000, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<std::size_t>(in.gcount()));
  return text;
}

ExitStatus ServeProcess::stop(std::chrono::milliseconds grace) {
  stopped_ = true;
  return child_.stop(SIGTERM, grace);
}

McpHttpSession::McpHttpSession(const std::string& host, int port, std::string token, std::chrono::milliseconds timeout)
    : client_(std::make_unique<httplib::Client>(host, port)), token_(std::move(token)) {
  const auto seconds = static_cast<time_t>(timeout.count() / 1000);
  client_->set_keep_alive(true);
  client_->set_tcp_nodelay(true);  // as curl, Node and Python clients do
  client_->set_connection_timeout(seconds, 0);
  client_->set_read_timeout(seconds, 0);
  client_->set_write_timeout(seconds, 0);
}

McpHttpSession::McpHttpSession(McpHttpSession&&) noexcept = default;
McpHttpSession& McpHttpSession::operator=(McpHttpSession&&) noexcept = default;

McpHttpSession::~McpHttpSession() {
  if (!client_ || session_.empty()) return;
  httplib::Headers headers{{"Mcp-Session-Id", session_}, {"MCP-Protocol-Version", std::string(kProtocolVersion)}};
  if (!token_.empty()) headers.emplace("Authorization", "Bearer " + token_);
  client_->Delete("/mcp", headers);
}

std::optional<std::string> McpHttpSession::post(const std::string& body, int expected) {
  httplib::Headers headers{{"Accept", "application/json, text/event-stream"}};
  if (!token_.empty()) headers.emplace("Authorization", "Bearer " + token_);
  if (!session_.empty()) {
    headers.emplace("Mcp-Session-Id", session_);
    headers.emplace("MCP-Protocol-Version", std::string(kProtocolVersion));
  }
  auto result = client_->Post("/mcp", headers, body, "application/json");
  if (!result) {
    last_error_ = "POST /mcp failed: " + httplib::to_string(result.error());
    return std::nullopt;
  }
  if (result->status != expected) {
    last_error_ = "POST /mcp answered HTTP " + std::to_string(result->status) + ": " + result->body.substr(0, 400);
    return std::nullopt;
  }
  if (session_.empty() && result->has_header("Mcp-Session-Id")) session_ = result->get_header_value("Mcp-Session-Id");
  return std::move(result->body);
}

std::expected<void, std::string> McpHttpSession::initialize() {
  json::Value reply = request("initialize", R"({"protocolVersion":")" + std::string(kProtocolVersion) +
                                                R"(","capabilities":{},"clientInfo":{"name":"ct-testing","version":"1"}})");
  if (!reply["result"].is_object() || session_.empty())
    return std::unexpected("initialize: " + (reply.is_null() ? last_error_ : reply.dump().substr(0, 400)));
  if (!post(R"({"jsonrpc":"2.0","method":"notifications/initialized"})", 202))
    return std::unexpected("notifications/initialized: " + last_error_);
  return {};
}

json::Value McpHttpSession::request(std::string_view method, std::string_view params_json) {
  const std::string body = R"({"jsonrpc":"2.0","id":)" + std::to_string(++next_id_) + R"(,"method":")" +
                           std::string(method) + R"(","params":)" + std::string(params_json) + "}";
  auto reply = post(body, 200);
  if (!reply) return json::Value();
  auto parsed = json::parse(*reply);
  if (!parsed) {
    last_error_ = "not JSON: " + reply->substr(0, 400);
    return json::Value();
  }
  return std::move(*parsed);
}

json::Value McpHttpSession::call(std::string_view tool, std::string_view domain, std::string_view operation,
                                 std::string_view params_json) {
  auto reply = post(McpClient::tool_call_line(++next_id_, tool, domain, operation, params_json), 200);
  if (!reply) return json::Value();
  auto parsed = json::parse(*reply);
  if (!parsed || !(*parsed)["result"]["structuredContent"].is_object()) {
    last_error_ = "no envelope: " + reply->substr(0, 400);
    return json::Value();
  }
  return (*parsed)["result"]["structuredContent"];
}

}  // namespace ct::testing
