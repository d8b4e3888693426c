// The per-request metadata of MCP 2026-07-28, the stateless revision: every request carries its
// protocol version and the client's capabilities (and, optionally, its name) in `params._meta`,
// instead of an initialize handshake; over Streamable HTTP the version, the method and the tool
// name are mirrored in headers, which must agree with the body. These functions read and check
// that metadata and nothing else; Protocol (mcp_protocol.h) decides what a request is and
// answers it.
#pragma once

#include <expected>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "core/json.h"
#include "gateway/jsonrpc.h"

namespace ct::mcp {

inline constexpr std::string_view kProtocolVersionKey = "io.modelcontextprotocol/protocolVersion";
inline constexpr std::string_view kClientInfoKey = "io.modelcontextprotocol/clientInfo";
inline constexpr std::string_view kClientCapabilitiesKey = "io.modelcontextprotocol/clientCapabilities";
inline constexpr std::string_view kServerInfoKey = "io.modelcontextprotocol/serverInfo";
/// In a request's _meta (2026-07-28): the least severe log message the client wants for it.
inline constexpr std::string_view kLogLevelKey = "io.modelcontextprotocol/logLevel";
/// In the _meta of every message on a subscriptions/listen stream: the id of that request.
inline constexpr std::string_view kSubscriptionIdKey = "io.modelcontextprotocol/subscriptionId";
/// The tasks extension (2026-07-28's successor of the 2025-11-25 tasks utility).
inline constexpr std::string_view kTasksExtension = "io.modelcontextprotocol/tasks";
/// In the _meta of a tasks/result reply (2025-11-25): the task it is the result of.
inline constexpr std::string_view kRelatedTaskKey = "io.modelcontextprotocol/related-task";

/// Revisions served statelessly, with per-request `_meta` (newest first). The ones served with
/// the initialize handshake are `handshake_versions()` in mcp_protocol.h.
std::span<const std::string_view> stateless_versions();
bool is_stateless_version(std::string_view version);

/// The headers of a Streamable HTTP POST that mirror its body (2026-07-28, "Request Metadata").
/// Absent members were not sent; stdio has no such headers at all.
struct MirroredHeaders {
  std::optional<std::string> protocol_version;  // MCP-Protocol-Version
  std::optional<std::string> method;            // Mcp-Method
  std::optional<std::string> name;              // Mcp-Name, as sent (maybe =?base64?…?=)
};

/// A request the server refuses before running it: the JSON-RPC error to answer with.
struct Refusal {
  RpcError code = RpcError::InvalidParams;
  std::string message;
  json::Value data;
};

/// What a stateless request says about itself, once checked.
struct RequestMeta {
  std::string protocol_version;
  std::string client_name;     // "" when the client did not name itself (a SHOULD, not a MUST)
  std::string client_version;
  bool tasks = false;          // clientCapabilities.extensions names io.modelcontextprotocol/tasks
  /// io.modelcontextprotocol/logLevel as sent (absent: no log for this request); a value that
  /// names no level is refused by the Protocol (mcp_logging.h).
  std::optional<json::Value> log_level;
};

/// True when `params._meta` names a protocol version (well-formed or not): the request claims
/// the per-request envelope of 2026-07-28, and is answered by its rules.
bool claims_request_meta(const json::Value& params);

/// Reads `params._meta`: the protocol version (a string) and the client capabilities (an object)
/// are required, the client info optional. A missing or malformed field is -32602.
[[nodiscard]] std::expected<RequestMeta, Refusal> read_request_meta(const json::Value& params);

/// The checks of 2026-07-28 "Server Validation": MCP-Protocol-Version and Mcp-Method must be sent
/// and equal the body's version and method; Mcp-Name must be sent for tools/call, prompts/get
/// and resources/read and equal params.name (params.uri), and for the tasks extension's tasks/get,
/// tasks/update and tasks/cancel equal params.taskId; no header may hold characters outside
/// visible ASCII, space and tab. A failure is -32020 (HeaderMismatch).
[[nodiscard]] std::optional<Refusal> check_mirrored_headers(const MirroredHeaders& headers, std::string_view method,
                                                            const json::Value& params,
                                                            std::string_view meta_version);

/// A header value as meant: the text of the `=?base64?…?=` form decoded, anything else as it
/// is; nullopt when the base64 form is malformed.
std::optional<std::string> decode_header_value(std::string_view value);

}  // namespace ct::mcp
