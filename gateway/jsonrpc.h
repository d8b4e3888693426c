// JSON-RPC 2.0 envelopes: the error codes MCP uses and the two reply shapes. Every reply the
// gateway sends is built here.
#pragma once

#include <string>
#include <string_view>

#include "core/json.h"

namespace ct::mcp {

/// JSON-RPC error codes: the standard ones, and those MCP 2026-07-28 defines in the range it
/// reserves (-32020 to -32099). Never renumbered.
enum class RpcError : int {
  ParseError = -32700,
  InvalidRequest = -32600,
  MethodNotFound = -32601,
  InvalidParams = -32602,
  InternalError = -32603,
  HeaderMismatch = -32020,                   // HTTP headers that mirror the body disagree with it
  MissingRequiredClientCapability = -32021,  // never sent: no request needs a client capability
  UnsupportedProtocolVersion = -32022,       // the request's _meta names a version not served
};

/// A JSON-RPC error response; `id_json` is the raw id JSON ("null" when unknown).
std::string rpc_error(std::string_view id_json, RpcError code, std::string_view message,
                      const json::Value& data = json::Value());

/// A JSON-RPC result response; `result_json` is compact JSON.
std::string rpc_result(std::string_view id_json, std::string_view result_json);

}  // namespace ct::mcp
