#include "gateway/request_meta.h"

#include <array>
#include <vector>

namespace ct::mcp {
namespace {

constexpr std::array<std::string_view, 1> kStatelessVersions = {"2026-07-28"};

Refusal invalid_meta(std::string message, std::vector<std::string> missing) {
  Refusal refusal{RpcError::InvalidParams, std::move(message), json::Value::object()};
  refusal.data.set("missing", json::Value::array_of(missing));
  refusal.data.set("example", json::Value(R"({"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",)"
                                          R"("io.modelcontextprotocol/clientCapabilities":{}}})"));
  return refusal;
}

Refusal mismatch(std::string message) { return Refusal{RpcError::HeaderMismatch, std::move(message), json::Value()}; }

/// RFC 9110 §5.5 field values: visible ASCII, space and horizontal tab.
bool header_safe(std::string_view value) {
  for (char c : value) {
    auto byte = static_cast<unsigned char>(c);
    if (!(byte == '\t' || (byte >= 0x20 && byte < 0x7F))) return false;
  }
  return true;
}

int base64_digit(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}

/// Standard base64 (RFC 4648 §4) with its padding; nullopt for anything else.
std::optional<std::string> base64_decode(std::string_view text) {
  if (text.size() % 4 != 0) return std::nullopt;
  std::string out;
  out.reserve(text.size() / 4 * 3);
  for (std::size_t i = 0; i < text.size(); i += 4) {
    int digits[4];
    int padding = 0;
    for (int j = 0; j < 4; ++j) {
      char c = text[i + static_cast<std::size_t>(j)];
      if (c == '=' && i + 4 == text.size() && j >= 2) {
        digits[j] = 0;
        ++padding;
        continue;
      }
      if (padding > 0) return std::nullopt;  // a digit after padding
      digits[j] = base64_digit(c);
      if (digits[j] < 0) return std::nullopt;
    }
    unsigned bits = (static_cast<unsigned>(digits[0]) << 18) | (static_cast<unsigned>(digits[1]) << 12) |
                    (static_cast<unsigned>(digits[2]) << 6) | static_cast<unsigned>(digits[3]);
    out += static_cast<char>((bits >> 16) & 0xFF);
    if (padding < 2) out += static_cast<char>((bits >> 8) & 0xFF);
    if (padding < 1) out += static_cast<char>(bits & 0xFF);
  }
  return out;
}

/// The body field Mcp-Name mirrors for `method` (2026-07-28: params.name, or params.uri; the
/// tasks extension: params.taskId), or empty when the method has none.
std::string_view named_key(std::string_view method) {
  if (method == "tools/call" || method == "prompts/get") return "name";
  if (method == "resources/read") return "uri";
  if (method == "tasks/get" || method == "tasks/update" || method == "tasks/cancel") return "taskId";
  return {};
}

std::string shown(std::string_view value) {
  std::string out;
  for (char c : value.substr(0, 100)) out += header_safe(std::string_view(&c, 1)) ? c : '?';
  return "'" + out + "'";
}

}  // namespace

std::span<const std::string_view> stateless_versions() { return kStatelessVersions; }

bool is_stateless_version(std::string_view version) {
  for (auto v : kStatelessVersions)
    if (v == version) return true;
  return false;
}

bool claims_request_meta(const json::Value& params) { return params["_meta"].contains(kProtocolVersionKey); }

std::expected<RequestMeta, Refusal> read_request_meta(const json::Value& params) {
  const json::Value& meta = params["_meta"];
  if (!meta.is_object())
    return std::unexpected(invalid_meta(
        "Invalid params: _meta is required, with io.modelcontextprotocol/protocolVersion and "
        "io.modelcontextprotocol/clientCapabilities (protocol 2026-07-28 has no initialize handshake)",
        {std::string(kProtocolVersionKey), std::string(kClientCapabilitiesKey)}));
  std::vector<std::string> missing;
  const json::Value& version = meta[kProtocolVersionKey];
  if (!version.is_string() || version.as_string().empty()) missing.emplace_back(kProtocolVersionKey);
  if (!meta[kClientCapabilitiesKey].is_object()) missing.emplace_back(kClientCapabilitiesKey);
  if (!missing.empty()) {
    std::string names;
    for (const auto& name : missing) names += (names.empty() ? "_meta." : " and _meta.") + name;
    return std::unexpected(invalid_meta(
        "Invalid params: " + names + (missing.size() == 1 ? " is" : " are") +
            " required (protocolVersion a string such as 2026-07-28, clientCapabilities an object, {} for none)",
        std::move(missing)));
  }
  RequestMeta out;
  out.protocol_version = version.as_string();
  // clientInfo is a SHOULD: it names the agent in the audit trail when present, and a malformed
  // one is ignored rather than refused (it is never relied on).
  const json::Value& info = meta[kClientInfoKey];
  if (info["name"].is_string()) out.client_name = info["name"].as_string();
  if (info["version"].is_string()) out.client_version = info["version"].as_string();
  out.tasks = meta[kClientCapabilitiesKey]["extensions"].contains(kTasksExtension);
  if (meta.contains(kLogLevelKey)) out.log_level = meta[kLogLevelKey];
  return out;
}

std::optional<std::string> decode_header_value(std::string_view value) {
  constexpr std::string_view kPrefix = "=?base64?";
  constexpr std::string_view kSuffix = "?=";
  if (value.size() < kPrefix.size() + kSuffix.size() || !value.starts_with(kPrefix) || !value.ends_with(kSuffix))
    return std::string(value);
  return base64_decode(value.substr(kPrefix.size(), value.size() - kPrefix.size() - kSuffix.size()));
}

std::optional<Refusal> check_mirrored_headers(const MirroredHeaders& headers, std::string_view method,
                                              const json::Value& params, std::string_view meta_version) {
  for (const auto* header : {&headers.protocol_version, &headers.method, &headers.name})
    if (*header && !header_safe(**header))
      return mismatch("Header mismatch: a mirrored header holds characters outside visible ASCII (encode it as "
                      "=?base64?…?=)");
  if (!headers.protocol_version)
    return mismatch("Header mismatch: the MCP-Protocol-Version header is required and must equal "
                    "_meta.io.modelcontextprotocol/protocolVersion");
  if (*headers.protocol_version != meta_version)
    return mismatch("Header mismatch: MCP-Protocol-Version header value " + shown(*headers.protocol_version) +
                    " does not match body value " + shown(meta_version));
  if (!headers.method) return mismatch("Header mismatch: the Mcp-Method header is required and must equal the method");
  if (*headers.method != method)
    return mismatch("Header mismatch: Mcp-Method header value " + shown(*headers.method) +
                    " does not match body value " + shown(method));
  const std::string_view key = named_key(method);
  if (key.empty()) return std::nullopt;  // Mcp-Name mirrors nothing for this method: not checked
  const json::Value* field = &params[key];
  if (!field->is_string()) {
    if (headers.name) return mismatch("Header mismatch: Mcp-Name is sent but the body names nothing");
    return std::nullopt;  // the body's own error (no tool name) is answered by the method
  }
  if (!headers.name)
    return mismatch("Header mismatch: the Mcp-Name header is required for " + std::string(method) +
                    " and must equal params." + std::string(key));
  auto decoded = decode_header_value(*headers.name);
  if (!decoded) return mismatch("Header mismatch: Mcp-Name is not valid =?base64?…?= encoding");
  if (*decoded != field->as_string())
    return mismatch("Header mismatch: Mcp-Name header value " + shown(*decoded) + " does not match body value " +
                    shown(field->as_string()));
  return std::nullopt;
}

}  // namespace ct::mcp
