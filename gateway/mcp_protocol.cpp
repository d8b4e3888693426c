#include "gateway/mcp_protocol.h"

#include <array>
#include <exception>

#include "core/json_parse.h"
#include "core/log.h"

namespace ct::mcp {
namespace {

constexpr std::array<std::string_view, 3> kVersions = {"2025-11-25", "2025-06-18", "2025-03-26"};

std::string rpc_result(std::string_view id_json, std::string_view result_json) {
  std::string out = R"({"jsonrpc":"2.0","id":)";
  out += id_json;
  out += R"(,"result":)";
  out += result_json;
  out += '}';
  return out;
}

std::string tool_description(Gateway gateway) {
  return gateway == Gateway::Query
             ? "Read CLEO tasks and state; never changes anything. {domain, operation, params}."
             : "Change CLEO tasks and state: validated, atomic, audited. {domain, operation, params}.";
}

std::string build_tools_list(const Registry& registry) {
  std::string out;
  json::Writer w(out);
  w.begin_object().key("tools").begin_array();
  for (Gateway gateway : {Gateway::Query, Gateway::Mutate}) {
    w.begin_object();
    w.key("name").value(tool_name(gateway));
    w.key("description").value(tool_description(gateway));
    w.key("inputSchema").begin_object();
    w.key("type").value("object");
    w.key("properties").begin_object();
    w.key("domain").begin_object().key("type").value("string").key("enum").begin_array();
    for (const auto& domain : registry.domains(gateway)) w.value(domain);
    w.end_array().end_object();
    w.key("operation").begin_object().key("type").value("string").end_object();
    w.key("params").begin_object().key("type").value("object").end_object();
    w.end_object();
    w.key("required").begin_array().value("domain").value("operation").end_array();
    w.end_object();
    w.key("annotations").begin_object();
    if (gateway == Gateway::Query) {
      w.key("readOnlyHint").value(true);
    } else {
      w.key("readOnlyHint").value(false).key("destructiveHint").value(true);
    }
    w.end_object();
    w.end_object();
  }
  w.end_array().end_object();
  return out;
}

std::string tool_result(const Envelope& envelope) {
  std::string body = to_json(envelope);
  std::string out = R"({"content":[{"type":"text","text":)";
  json::write_string(out, body);
  out += R"(}],"structuredContent":)";
  out += body;
  out += R"(,"isError":)";
  out += envelope.success ? "false" : "true";
  out += '}';
  return out;
}

Envelope argument_error(std::string message, std::string field) {
  Error error(ErrorCode::InvalidInput, std::move(message));
  error.fix = "call with arguments {domain:'tasks', operation:'show', params:{id:'T001'}}";
  return failure(std::move(error).with_detail("field", std::move(field)));
}

}  // namespace

std::span<const std::string_view> supported_versions() { return kVersions; }

bool is_supported_version(std::string_view version) {
  for (auto v : kVersions)
    if (v == version) return true;
  return false;
}

std::string rpc_error(std::string_view id_json, RpcError code, std::string_view message, const json::Value& data) {
  std::string out = R"({"jsonrpc":"2.0","id":)";
  out += id_json;
  out += R"(,"error":{"code":)";
  out += std::to_string(static_cast<int>(code));
  out += R"(,"message":)";
  json::write_string(out, message);
  if (!data.is_null()) {
    out += R"(,"data":)";
    data.dump_to(out);
  }
  out += "}}";
  return out;
}

Protocol::Protocol(const Registry& registry, ServerInfo info)
    : registry_(registry), info_(std::move(info)), tools_list_(build_tools_list(registry)) {}

Outcome Protocol::handle(std::string_view message, Connection& connection, Router& router) const {
  auto parsed = json::parse(message);
  if (parsed) return handle_parsed(*parsed, connection, router, message);
  // Well-formed JSON that holds a value the parser cannot represent (an integer beyond 64 bits,
  // 1e999, a lone surrogate escape) is still a message: its id is answered exactly as sent, and
  // a notification is never answered.
  json::Outline outline = json::outline(message);
  if (!outline.well_formed) {
    Outcome outcome;
    outcome.reply = rpc_error("null", RpcError::ParseError, "Parse error: " + parsed.error().message);
    return outcome;
  }
  std::string why = parsed.error().message;
  if (auto colon = why.find(": "); colon != std::string::npos) why = why.substr(colon + 2);
  auto answer = [&](const json::Outline& item, Outcome& outcome) -> std::optional<std::string> {
    outcome.kind = MessageKind::Invalid;
    if (item.top != json::Type::Object)
      return rpc_error("null", RpcError::InvalidRequest, "Invalid Request: a message must be a JSON object");
    std::string_view id = item.member("id");
    bool usable_id = !id.empty() && (id.front() == '"' || id.front() == '-' || (id.front() >= '0' && id.front() <= '9'));
    if (item.member("method").empty()) {
      if (!id.empty() && (!item.member("result").empty() || !item.member("error").empty())) {
        outcome.kind = MessageKind::Response;
        return std::nullopt;
      }
    } else if (id.empty()) {
      outcome.kind = MessageKind::Notification;
      return std::nullopt;
    }
    outcome.kind = MessageKind::Request;
    return rpc_error(usable_id ? id : "null", RpcError::InvalidParams,
                     "Invalid params: a value cannot be represented (" + why +
                         "); numbers must be finite and integers fit in 64 bits, strings valid Unicode");
  };
  Outcome outcome;
  if (outline.top != json::Type::Array) {
    outcome.reply = answer(outline, outcome);
    return outcome;
  }
  if (connection.protocol_version != "2025-03-26" || outline.elements.empty()) {
    outcome.reply = rpc_error("null", RpcError::InvalidRequest, "Invalid Request: this batch is not accepted");
    return outcome;
  }
  outcome.kind = MessageKind::Batch;
  std::string replies;
  for (std::string_view element : outline.elements) {
    Outcome inner;
    auto reply = answer(json::outline(element), inner);
    if (!reply) continue;
    replies += replies.empty() ? "[" : ",";
    replies += *reply;
  }
  if (!replies.empty()) outcome.reply = replies + "]";
  return outcome;
}

Outcome Protocol::handle_parsed(const json::Value& message, Connection& connection, Router& router,
                                std::string_view text) const {
  Outcome outcome;
  const json::Value* parsed = &message;
  try {
    if (parsed->is_array()) {
      outcome.kind = MessageKind::Batch;
      // JSON-RPC batches exist only in the 2025-03-26 revision; later revisions removed them.
      if (connection.protocol_version != "2025-03-26") {
        outcome.kind = MessageKind::Invalid;
        outcome.reply = rpc_error("null", RpcError::InvalidRequest,
                                  "Invalid Request: batches are not supported in protocol version " +
                                      (connection.protocol_version.empty() ? std::string(kLatestVersion)
                                                                           : connection.protocol_version));
        return outcome;
      }
      if (parsed->empty()) {
        outcome.kind = MessageKind::Invalid;
        outcome.reply = rpc_error("null", RpcError::InvalidRequest, "Invalid Request: empty batch");
        return outcome;
      }
      std::string replies = "[";
      bool any = false;
      json::Outline items;
      if (!text.empty()) items = json::outline(text);
      for (std::size_t i = 0; i < parsed->size(); ++i) {
        const json::Value& item = parsed->as_array()[i];
        Outcome inner;
        auto reply = handle_object(item, i < items.elements.size() ? items.elements[i] : std::string_view(),
                                   connection, router, inner);
        outcome.initialize_succeeded = outcome.initialize_succeeded || inner.initialize_succeeded;
        if (!reply) continue;
        if (any) replies += ',';
        replies += *reply;
        any = true;
      }
      replies += ']';
      if (any) outcome.reply = std::move(replies);
      return outcome;
    }
    outcome.reply = handle_object(*parsed, text, connection, router, outcome);
  } catch (const std::exception& e) {
    log::error(std::string("internal error while handling a message: ") + e.what());
    outcome.reply = rpc_error("null", RpcError::InternalError, "Internal error");
  }
  return outcome;
}

std::optional<std::string> Protocol::handle_object(const json::Value& message, std::string_view text,
                                                   Connection& connection, Router& router, Outcome& outcome) const {
  outcome.kind = MessageKind::Invalid;
  if (!message.is_object())
    return rpc_error("null", RpcError::InvalidRequest, "Invalid Request: a message must be a JSON object");
  const json::Value* id = message.find("id");
  const json::Value* method = message.find("method");
  bool valid_id = id && (id->is_string() || id->is_number());
  std::string id_json = valid_id ? id->dump() : "null";
  // A number id that is not a 64-bit integer (18446744073709551615, 1.5) would not survive the
  // round trip through a double: it is echoed from the raw text.
  if (valid_id && id->is_number() && !id->is_int() && !text.empty())
    if (std::string_view raw = json::outline(text).member("id"); !raw.empty()) id_json = raw;
  if (message["jsonrpc"] != json::Value("2.0"))
    return rpc_error(id_json, RpcError::InvalidRequest, "Invalid Request: jsonrpc must be \"2.0\"");
  if (!method) {
    if (id && (message.contains("result") || message.contains("error"))) {
      outcome.kind = MessageKind::Response;  // a reply to a server request: nothing to answer
      return std::nullopt;
    }
    return rpc_error(id_json, RpcError::InvalidRequest, "Invalid Request: missing method");
  }
  if (!method->is_string())
    return rpc_error(id_json, RpcError::InvalidRequest, "Invalid Request: method must be a string");
  if (!id) {
    // Notifications are never answered, whatever they are.
    outcome.kind = MessageKind::Notification;
    if (method->as_string() == "notifications/initialized") connection.initialized = true;
    log::debug("notification " + method->as_string());
    return std::nullopt;
  }
  if (!valid_id)
    return rpc_error("null", RpcError::InvalidRequest, "Invalid Request: id must be a string or a number");
  outcome.kind = MessageKind::Request;
  const std::string& name = method->as_string();
  const json::Value& params = message["params"];
  if (!params.is_null() && !params.is_object())
    return rpc_error(id_json, RpcError::InvalidParams, "Invalid params: params must be an object");

  if (name == "initialize") {
    const json::Value& requested = params["protocolVersion"];
    if (!requested.is_string())
      return rpc_error(id_json, RpcError::InvalidParams, "Invalid params: protocolVersion (string) is required");
    connection.protocol_version =
        is_supported_version(requested.as_string()) ? requested.as_string() : std::string(kLatestVersion);
    if (params["clientInfo"]["name"].is_string()) connection.client_name = params["clientInfo"]["name"].as_string();
    if (params["clientInfo"]["version"].is_string())
      connection.client_version = params["clientInfo"]["version"].as_string();
    outcome.initialize_succeeded = true;
    std::string result;
    json::Writer w(result);
    w.begin_object();
    w.key("protocolVersion").value(connection.protocol_version);
    w.key("capabilities").begin_object().key("tools").begin_object().key("listChanged").value(false).end_object().end_object();
    w.key("serverInfo").begin_object().key("name").value(info_.name).key("version").value(info_.version).end_object();
    w.key("instructions").value(info_.instructions_for ? info_.instructions_for(connection.client_name) : info_.instructions);
    w.end_object();
    log::info("initialize from " + (connection.client_name.empty() ? "unknown client" : connection.client_name) +
              " (" + connection.protocol_version + ")");
    return rpc_result(id_json, result);
  }
  if (name == "ping") return rpc_result(id_json, "{}");
  if (name == "tools/list") {
    // Both tools fit in one page: no cursor was ever issued, so any cursor is invalid.
    if (params.contains("cursor") && !params["cursor"].is_null())
      return rpc_error(id_json, RpcError::InvalidParams, "Invalid params: unknown cursor (tools/list has one page)");
    return rpc_result(id_json, tools_list_);
  }
  if (name == "tools/call") {
    const json::Value& tool = params["name"];
    Gateway gateway;
    if (tool == json::Value("cleo_query")) {
      gateway = Gateway::Query;
    } else if (tool == json::Value("cleo_mutate")) {
      gateway = Gateway::Mutate;
    } else {
      json::Value data = json::Value::object();
      data.set("valid", json::Value::array_of(std::vector<std::string>{"cleo_query", "cleo_mutate"}));
      std::string given = tool.is_string() ? tool.as_string() : tool.dump();
      return rpc_error(id_json, RpcError::InvalidParams,
                       "Unknown tool '" + given + "'; the tools are cleo_query and cleo_mutate", data);
    }
    const json::Value& arguments = params["arguments"];
    Envelope envelope;
    if (!arguments.is_null() && !arguments.is_object()) {
      envelope = argument_error("arguments must be an object {domain, operation, params}", "arguments");
    } else if (!arguments["domain"].is_string()) {
      envelope = argument_error("arguments.domain is required (a string such as 'tasks')", "domain");
    } else if (!arguments["operation"].is_string()) {
      envelope = argument_error("arguments.operation is required (a string such as 'show')", "operation");
    } else {
      std::string stray;
      for (const auto& [key, value] : arguments.as_object())
        if (key != "domain" && key != "operation" && key != "params") stray = key;
      if (!stray.empty()) {
        envelope = argument_error("unexpected argument '" + stray + "': operation parameters go inside params",
                                  stray);
      } else {
        router.set_session(connection.session);
        router.set_agent(connection.client_name);
        envelope = router.dispatch(
            {gateway, arguments["domain"].as_string(), arguments["operation"].as_string(), arguments["params"]});
        connection.session = router.session();
      }
    }
    return rpc_result(id_json, tool_result(envelope));
  }
  return rpc_error(id_json, RpcError::MethodNotFound, "Method not found: " + name);
}

}  // namespace ct::mcp
