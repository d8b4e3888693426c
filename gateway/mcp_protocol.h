// MCP over JSON-RPC 2.0, independent of the transport: lifecycle (initialize, version
// negotiation, ping), tools/list with exactly two tools, and tools/call routed to the router.
// Only this layer knows JSON-RPC; `to_json(Envelope)` is the one mapping of results to the wire.
#pragma once

#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "domains/registry.h"
#include "domains/router.h"

namespace ct::mcp {

/// Protocol revisions served with the initialize handshake, newest first.
std::span<const std::string_view> supported_versions();
bool is_supported_version(std::string_view version);
inline constexpr std::string_view kLatestVersion = "2025-11-25";

/// JSON-RPC error codes.
enum class RpcError : int {
  ParseError = -32700,
  InvalidRequest = -32600,
  MethodNotFound = -32601,
  InvalidParams = -32602,
  InternalError = -32603,
};

/// Protocol state of one MCP connection (a stdio process or an HTTP session).
struct Connection {
  std::string protocol_version;  // negotiated; empty before initialize
  bool initialized = false;      // notifications/initialized received
  std::string client_name;
  std::string client_version;
  /// The CLEO session this connection is bound to ("" = none). HTTP routers are pooled, so the
  /// connection, not the router, is the source of truth between calls.
  std::string session;
};

enum class MessageKind { Request, Notification, Response, Batch, Invalid };

struct Outcome {
  std::optional<std::string> reply;  // compact JSON to send back; none for notifications/responses
  MessageKind kind = MessageKind::Invalid;
  bool initialize_succeeded = false; // the message was an initialize request that succeeded
};

struct ServerInfo {
  std::string name = "cleo";
  std::string version;
  std::string instructions;  // served as the initialize result's `instructions`
  /// When set, the instructions for a client by its clientInfo.name (instead of `instructions`).
  std::function<std::string(std::string_view client_name)> instructions_for;
};

class Protocol {
 public:
  Protocol(const Registry& registry, ServerInfo info);

  /// Handles one message as received (a stdio line or an HTTP body).
  Outcome handle(std::string_view message, Connection& connection, Router& router) const;
  /// The same for a message the transport has already parsed; `text`, when given, is the message
  /// as received (ids that are not 64-bit integers are echoed from it exactly).
  Outcome handle_parsed(const json::Value& message, Connection& connection, Router& router,
                        std::string_view text = {}) const;

  /// The cached tools/list result (compact JSON): stable in order and small.
  const std::string& tools_list_result() const { return tools_list_; }
  const ServerInfo& info() const { return info_; }

 private:
  std::optional<std::string> handle_object(const json::Value& message, std::string_view text,
                                           Connection& connection, Router& router, Outcome& outcome) const;

  const Registry& registry_;
  ServerInfo info_;
  std::string tools_list_;
};

/// A JSON-RPC error response; `id` is the raw id JSON ("null" when unknown).
std::string rpc_error(std::string_view id_json, RpcError code, std::string_view message,
                      const json::Value& data = json::Value());

}  // namespace ct::mcp
