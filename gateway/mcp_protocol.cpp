#include "gateway/mcp_protocol.h"

#include <array>
#include <exception>
#include <utility>

#include "core/json_parse.h"
#include "core/log.h"
#include "gateway/mcp_syntax.h"
#include "gateway/mcp_primitives.h"
#include "gateway/mcp_progress.h"
#include "gateway/outbox.h"
#include "gateway/resource_watch.h"
#include "gateway/tools.h"

namespace ct::mcp {
namespace {

/// The name a client gave as the label its calls are recorded under; a name reserved for people
/// or the product (principal.h) is dropped, so no agent shows as one in the trail.
std::string agent_label(std::string name) {
  if (!is_reserved_label(name)) return name;
  log::warn("a client named itself \"" + name + "\", a name reserved for people: its calls are recorded unnamed");
  return std::string();
}

constexpr std::array<std::string_view, 3> kHandshakeVersions = {"2025-11-25", "2025-06-18", "2025-03-26"};

Envelope argument_error(std::string message, std::string field) {
  Error error(ErrorCode::InvalidInput, std::move(message));
  error.fix = "call with arguments {domain:'tasks', operation:'show', params:{id:'T001'}}";
  return failure(std::move(error).with_detail("field", std::move(field)));
}

bool stateless_header(const MirroredHeaders* headers) {
  return headers && headers->protocol_version && is_stateless_version(*headers->protocol_version);
}

/// The same test as is_stateless_message(), on the raw text of a message parse() refused.
bool stateless_outline(const json::Outline& message, const MirroredHeaders* headers) {
  if (stateless_header(headers)) return true;
  if (message.top != json::Type::Object) return false;
  if (message.member("method") == R"("server/discover")") return true;
  json::Outline params = json::outline(message.member("params"));
  if (params.top != json::Type::Object) return false;
  json::Outline meta = json::outline(params.member("_meta"));
  return meta.top == json::Type::Object && !meta.member(kProtocolVersionKey).empty();
}

/// Why a method does not exist here, and what to call instead.
std::string method_not_found(const std::string& method, bool stateless) {
  std::string message = "Method not found: " + method;
  constexpr std::string_view kFeatures =
      "tools/list, tools/call, prompts/list, prompts/get, resources/list, resources/templates/list, resources/read, "
      "completion/complete";
  if (stateless && (method == "initialize" || method == "ping" || method == "logging/setLevel"))
    message += " (protocol 2026-07-28 has no handshake and no ping: send server/discover, tools/list or tools/call "
               "with _meta)";
  else if (stateless)
    message += " (this server offers server/discover, " + std::string(kFeatures) + ")";
  else
    message += " (this server offers initialize, ping, logging/setLevel, " + std::string(kFeatures) + ")";
  return message;
}

/// How long a client may keep a result of the stateless revision, and who may share it: the
/// prompts and templates are fixed for the process; the resources are the project's, read now.
std::string_view caching_hints(std::string_view method) {
  if (method == "prompts/list" || method == "resources/templates/list") return R"(,"ttlMs":300000,"cacheScope":"public")";
  if (method == "resources/list" || method == "resources/read") return R"(,"ttlMs":0,"cacheScope":"private")";
  return "";
}

}  // namespace

json::Value required_tasks_extension() {
  json::Value extensions = json::Value::object();
  extensions.set(kTasksExtension, json::Value::object());
  json::Value required = json::Value::object();
  required.set("extensions", std::move(extensions));
  json::Value data = json::Value::object();
  data.set("requiredCapabilities", std::move(required));
  return data;
}

std::span<const std::string_view> handshake_versions() { return kHandshakeVersions; }

bool is_handshake_version(std::string_view version) {
  for (auto v : kHandshakeVersions)
    if (v == version) return true;
  return false;
}

bool is_stateless_message(const json::Value& message, const MirroredHeaders* headers) {
  if (stateless_header(headers)) return true;
  if (!message.is_object()) return false;
  if (message["method"] == json::Value("server/discover")) return true;
  return claims_request_meta(message["params"]);
}

Protocol::Protocol(const Registry& registry, ServerInfo info, Services services)
    : registry_(registry), info_(std::move(info)), services_(services) {
  std::string tools = tools_array(registry);
  tools_list_ = R"({"tools":)" + tools + "}";
  tools_list_with_tasks_ = R"({"tools":)" + tools_array(registry, true) + "}";

  json::Writer meta(server_meta_);
  meta.begin_object().key(kServerInfoKey).begin_object().key("name").value(info_.name);
  meta.key("version").value(info_.version).end_object().end_object();
  server_meta_ = R"("_meta":)" + server_meta_;

  // The stateless tools/list names no server in _meta (a SHOULD): it is the one result hosts
  // hand to the model with every conversation, and the tools are what they take from it.
  stateless_tools_list_ = R"({"tools":)" + tools + R"(,"resultType":"complete","ttlMs":)" +
                          std::to_string(kCacheTtlMs) + R"(,"cacheScope":"public"})";
}

void Protocol::capabilities(json::Writer& w, bool tasks_utility, bool tasks_extension) const {
  w.key("capabilities").begin_object();
  w.key("tools").begin_object().key("listChanged").value(false).end_object();
  w.key("prompts").begin_object().key("listChanged").value(false).end_object();
  w.key("resources").begin_object().key("listChanged").value(false);
  if (services_.watch) w.key("subscribe").value(true);
  w.end_object();
  w.key("completions").begin_object().end_object();
  // Off until the client asks for a level (logging/setLevel; 2026-07-28: a request's _meta).
  w.key("logging").begin_object().end_object();
  if (services_.tasks && tasks_utility) {
    // 2025-11-25: cleo_mutate calls may be tasks (tools/list says which tool: execution.taskSupport).
    w.key("tasks").begin_object();
    w.key("list").begin_object().end_object();
    w.key("cancel").begin_object().end_object();
    w.key("requests").begin_object().key("tools").begin_object().key("call").begin_object().end_object().end_object().end_object();
    w.end_object();
  }
  if (services_.tasks && tasks_extension)
    w.key("extensions").begin_object().key(kTasksExtension).begin_object().end_object().end_object();
  w.end_object();
}

std::string Protocol::discover_result(std::string_view client_name) const {
  // The instructions are those the client would get from initialize: for a host that loads a
  // current CLEO block from its own instruction file, a pointer to it. Such a result is the
  // client's own, so caches shared between clients may not keep it ("private").
  const std::optional<std::string> tailored = info_.tailored(client_name);
  const std::string& instructions = tailored ? *tailored : info_.instructions;
  std::string out;
  json::Writer w(out);
  w.begin_object();
  w.key("resultType").value("complete");
  w.key("supportedVersions").begin_array();
  for (auto version : stateless_versions()) w.value(version);
  w.end_array();
  capabilities(w, false, true);
  w.key("instructions").value(instructions);
  w.key("ttlMs").value(kCacheTtlMs);
  w.key("cacheScope").value(tailored ? "private" : "public");
  w.end_object();
  out.pop_back();
  out += "," + server_meta_ + "}";
  return out;
}

Outcome Protocol::handle(std::string_view message, Connection& connection, Router& router,
                         const MirroredHeaders* headers) const {
  auto parsed = json::parse(message);
  if (parsed) return handle_parsed(*parsed, connection, router, message, headers);
  // Well-formed JSON that holds a value the parser cannot represent (an integer beyond 64 bits,
  // 1e999, a lone surrogate escape) is still a message: its id is answered exactly as sent, and
  // a notification is never answered.
  json::Outline outline = json::outline(message);
  if (!outline.well_formed) {
    Outcome outcome;
    outcome.reply = rpc_error("null", RpcError::ParseError, "Parse error: " + parsed.error().message);
    if (stateless_header(headers)) {
      outcome.stateless = true;
      outcome.error_code = static_cast<int>(RpcError::ParseError);
    }
    return outcome;
  }
  std::string why = parsed.error().message;
  if (auto colon = why.find(": "); colon != std::string::npos) why = why.substr(colon + 2);
  auto answer = [&](const json::Outline& item, Outcome& outcome) -> std::optional<std::string> {
    outcome.kind = MessageKind::Invalid;
    outcome.stateless = stateless_outline(item, headers);
    auto refuse = [&](RpcError code, std::string_view id, const std::string& text) {
      if (outcome.stateless) outcome.error_code = static_cast<int>(code);
      return rpc_error(id, code, text);
    };
    if (item.top != json::Type::Object)
      return refuse(RpcError::InvalidRequest, "null", "Invalid Request: a message must be a JSON object");
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
    return refuse(RpcError::InvalidParams, usable_id ? id : "null",
                  "Invalid params: a value cannot be represented (" + why +
                      "); numbers must be finite and integers fit in 64 bits, strings valid Unicode");
  };
  Outcome outcome;
  if (outline.top != json::Type::Array) {
    outcome.reply = answer(outline, outcome);
    return outcome;
  }
  if (connection.protocol_version != "2025-03-26" || outline.elements.empty() || stateless_header(headers)) {
    outcome.reply = rpc_error("null", RpcError::InvalidRequest, "Invalid Request: this batch is not accepted");
    if (stateless_header(headers)) {
      outcome.stateless = true;
      outcome.error_code = static_cast<int>(RpcError::InvalidRequest);
    }
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
                                std::string_view text, const MirroredHeaders* headers) const {
  Outcome outcome;
  const json::Value* parsed = &message;
  try {
    if (parsed->is_array()) {
      outcome.kind = MessageKind::Batch;
      // JSON-RPC batches exist only in the 2025-03-26 revision; later revisions removed them.
      if (connection.protocol_version != "2025-03-26" || stateless_header(headers)) {
        outcome.kind = MessageKind::Invalid;
        std::string version = stateless_header(headers)          ? *headers->protocol_version
                              : connection.protocol_version.empty() ? std::string(kLatestHandshakeVersion)
                                                                    : connection.protocol_version;
        outcome.reply = rpc_error("null", RpcError::InvalidRequest,
                                  "Invalid Request: batches are not supported in protocol version " + version);
        if (stateless_header(headers)) {
          outcome.stateless = true;
          outcome.error_code = static_cast<int>(RpcError::InvalidRequest);
        }
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
                                   connection, router, inner, headers, true);
        outcome.initialize_succeeded = outcome.initialize_succeeded || inner.initialize_succeeded;
        outcome.notifications.insert(outcome.notifications.end(), inner.notifications.begin(), inner.notifications.end());
        if (!reply) continue;
        if (any) replies += ',';
        replies += *reply;
        any = true;
      }
      replies += ']';
      if (any) outcome.reply = std::move(replies);
      return outcome;
    }
    outcome.reply = handle_object(*parsed, text, connection, router, outcome, headers, false);
  } catch (const std::exception& e) {
    log::error(std::string("internal error while handling a message: ") + e.what());
    outcome.reply = rpc_error("null", RpcError::InternalError, "Internal error");
    if (outcome.stateless) outcome.error_code = static_cast<int>(RpcError::InternalError);
  }
  return outcome;
}

std::optional<std::string> Protocol::handle_object(const json::Value& message, std::string_view text,
                                                   Connection& connection, Router& router, Outcome& outcome,
                                                   const MirroredHeaders* headers, bool in_batch) const {
  outcome.kind = MessageKind::Invalid;
  outcome.stateless = !in_batch && is_stateless_message(message, headers);
  auto refuse = [&](std::string_view id, RpcError code, std::string_view why) {
    if (outcome.stateless) outcome.error_code = static_cast<int>(code);
    return rpc_error(id, code, why);
  };
  if (!message.is_object())
    return refuse("null", RpcError::InvalidRequest, "Invalid Request: a message must be a JSON object");
  const json::Value* id = message.find("id");
  const json::Value* method = message.find("method");
  bool valid_id = id && (id->is_string() || id->is_number());
  std::string id_json = valid_id ? id->dump() : "null";
  // A number id that is not a 64-bit integer (18446744073709551615, 1.5) would not survive the
  // round trip through a double: it is echoed from the raw text.
  if (valid_id && id->is_number() && !id->is_int() && !text.empty())
    if (std::string_view raw = json::outline(text).member("id"); !raw.empty()) id_json = raw;
  if (message["jsonrpc"] != json::Value("2.0"))
    return refuse(id_json, RpcError::InvalidRequest, "Invalid Request: jsonrpc must be \"2.0\"");
  if (!method) {
    if (id && (message.contains("result") || message.contains("error"))) {
      outcome.kind = MessageKind::Response;  // a reply to a server request: nothing to answer
      return std::nullopt;
    }
    return refuse(id_json, RpcError::InvalidRequest, "Invalid Request: missing method");
  }
  if (!method->is_string())
    return refuse(id_json, RpcError::InvalidRequest, "Invalid Request: method must be a string");
  if (!id) {
    // Notifications are never answered, whatever they are. Only the handshake revisions have a
    // connection for notifications/initialized to mark.
    outcome.kind = MessageKind::Notification;
    notified(method->as_string(), message["params"], connection, outcome.stateless);
    return std::nullopt;
  }
  if (!valid_id)
    return refuse("null", RpcError::InvalidRequest, "Invalid Request: id must be a string or a number");
  outcome.kind = MessageKind::Request;
  const std::string& name = method->as_string();
  const json::Value& params = message["params"];
  if (!params.is_null() && !params.is_object())
    return refuse(id_json, RpcError::InvalidParams, "Invalid params: params must be an object");
  if (in_batch && is_stateless_message(message, headers))
    return rpc_error(id_json, RpcError::InvalidRequest,
                     "Invalid Request: a request with _meta (protocol 2026-07-28) cannot be part of a batch");
  if (outcome.stateless) {
    std::string reply = handle_stateless(name, params, id_json, headers, connection, router, outcome);
    if (reply.empty()) return std::nullopt;  // it comes later (subscriptions/listen)
    return reply;
  }

  if (name == "initialize") {
    const json::Value& requested = params["protocolVersion"];
    if (!requested.is_string())
      return rpc_error(id_json, RpcError::InvalidParams, "Invalid params: protocolVersion (string) is required");
    // The stateless revision is never negotiated here (it has no handshake): a client asking for
    // it is offered the latest handshake revision, as is any other version this server lacks.
    connection.protocol_version = is_handshake_version(requested.as_string()) ? requested.as_string()
                                                                              : std::string(kLatestHandshakeVersion);
    if (params["clientInfo"]["name"].is_string()) connection.client_name = agent_label(params["clientInfo"]["name"].as_string());
    if (params["clientInfo"]["version"].is_string())
      connection.client_version = params["clientInfo"]["version"].as_string();
    outcome.initialize_succeeded = true;
    std::string result;
    json::Writer w(result);
    w.begin_object();
    w.key("protocolVersion").value(connection.protocol_version);
    connection.client_tasks = connection.protocol_version == "2025-11-25" && params["capabilities"].contains("tasks");
    capabilities(w, connection.protocol_version == "2025-11-25", false);
    w.key("serverInfo").begin_object().key("name").value(info_.name).key("version").value(info_.version).end_object();
    const std::optional<std::string> tailored = info_.tailored(connection.client_name);
    w.key("instructions").value(tailored ? *tailored : info_.instructions);
    w.end_object();
    log::info("initialize from " + (connection.client_name.empty() ? "unknown client" : connection.client_name) +
              " (" + connection.protocol_version + ")");
    return rpc_result(id_json, result);
  }
  if (name == "ping") return rpc_result(id_json, "{}");
  if (name == "logging/setLevel") {
    const json::Value& level = params["level"];
    auto parsed = level.is_string() ? parse_log_level(level.as_string()) : std::nullopt;
    if (!parsed)
      return rpc_error(id_json, RpcError::InvalidParams, "Invalid params: level must be one of " + log_level_names());
    connection.log->set_level(*parsed);
    return rpc_result(id_json, "{}");
  }
  if (name == "tools/list") {
    // Both tools fit in one page: no cursor was ever issued, so any cursor is invalid.
    if (params.contains("cursor") && !params["cursor"].is_null())
      return rpc_error(id_json, RpcError::InvalidParams, "Invalid params: unknown cursor (tools/list has one page)");
    return rpc_result(id_json, services_.tasks && connection.client_tasks ? tools_list_with_tasks_ : tools_list_);
  }
  if (name == "tools/call") {
    // 2025-11-25: a call the client lets become a task (params.task) is answered with the task.
    if (services_.tasks && connection.protocol_version == "2025-11-25" && params["task"].is_object())
      return call_as_task(params, id_json, connection, router, outcome, connection.task_owner, false);
    return call_tool(params, id_json, connection, router, outcome);
  }
  if (is_primitive_method(name)) return answer(name, params, id_json, connection, router, outcome);
  if (name == "resources/subscribe" && services_.watch) return subscribe(params, id_json, connection, router, outcome);
  if (name == "resources/unsubscribe" && services_.watch) return unsubscribe(params, id_json, connection);
  if (name.starts_with("tasks/") && name != "tasks/update" && services_.tasks && connection.protocol_version == "2025-11-25")
    if (auto reply = task_method(name, params, id_json, connection, outcome, false); reply)
      return reply->empty() ? std::nullopt : std::optional(std::move(*reply));
  return rpc_error(id_json, RpcError::MethodNotFound, method_not_found(name, false));
}

void Protocol::notified(const std::string& method, const json::Value& params, Connection& connection,
                        bool stateless) const {
  log::debug("notification " + method);
  // Only the handshake revisions have a connection for notifications/initialized to mark.
  if (!stateless && method == "notifications/initialized") connection.initialized = true;
  // stdio, 2026-07-28: the client ends a subscriptions/listen stream by cancelling its request.
  if (method == "notifications/cancelled" && services_.watch && params.is_object()) {
    const json::Value& request = params["requestId"];
    if (!request.is_string() && !request.is_number()) return;
    if (auto it = connection.listens.find(request.dump()); it != connection.listens.end()) {
      services_.watch->remove(it->second);
      connection.listens.erase(it);
    }
  }
}

std::shared_ptr<Outbox> Protocol::late_channel(const Connection& connection, Outcome& outcome) const {
  if (connection.streams_replies) {
    auto stream = std::make_shared<StreamOutbox>();
    outcome.stream = stream->stream();
    return stream;
  }
  return connection.outbox;
}

std::string Protocol::handle_stateless(const std::string& method, const json::Value& params, const std::string& id_json,
                                       const MirroredHeaders* headers, Connection& base, Router& router,
                                       Outcome& outcome) const {
  auto refuse = [&](RpcError code, std::string_view why, const json::Value& data = json::Value()) {
    outcome.error_code = static_cast<int>(code);
    return rpc_error(id_json, code, why, data);
  };
  // The order of the checks is the spec's: a malformed _meta is -32602, headers that disagree
  // with a well-formed one -32020, and only then is its version judged (-32022).
  auto meta = read_request_meta(params);
  if (!meta) return refuse(meta.error().code, meta.error().message, meta.error().data);
  if (headers)
    if (auto refusal = check_mirrored_headers(*headers, method, params, meta->protocol_version))
      return refuse(refusal->code, refusal->message, refusal->data);
  if (!is_stateless_version(meta->protocol_version)) {
    json::Value data = json::Value::object();
    data.set("supported", json::Value::array_of(stateless_versions()));
    data.set("requested", json::Value(meta->protocol_version));
    std::string handshake;
    for (auto version : handshake_versions()) handshake += (handshake.empty() ? "" : ", ") + std::string(version);
    return refuse(RpcError::UnsupportedProtocolVersion,
                  "Unsupported protocol version: requests with _meta are served in 2026-07-28 (" + handshake +
                      " through initialize)",
                  data);
  }
  // The request's log: none unless its _meta names a level (2026-07-28 has no logging/setLevel).
  std::optional<LogLevel> log_level;
  if (meta->log_level) {
    log_level = meta->log_level->is_string() ? parse_log_level(meta->log_level->as_string()) : std::nullopt;
    if (!log_level)
      return refuse(RpcError::InvalidParams,
                    "Invalid params: _meta." + std::string(kLogLevelKey) + " must be one of " + log_level_names());
  }
  // Only tasks need a client capability (the tasks extension): its methods, and task notifications
  // asked of subscriptions/listen; every other request is served whatever the client declared.
  if (method == "server/discover") return rpc_result(id_json, discover_result(meta->client_name));
  if (method == "tools/list") {
    if (params.contains("cursor") && !params["cursor"].is_null())
      return refuse(RpcError::InvalidParams, "Invalid params: unknown cursor (tools/list has one page)");
    return rpc_result(id_json, stateless_tools_list_);
  }
  // Nothing carries over between stateless requests: each runs with a connection of its own,
  // bound to no CLEO session (session operations take the session's id instead); only where a late
  // message goes is the transport's.
  Connection connection;
  connection.protocol_version = meta->protocol_version;
  connection.client_name = agent_label(meta->client_name);
  connection.client_version = meta->client_version;
  connection.principal = base.principal;
  connection.place = base.place;
  connection.outbox = base.outbox;
  connection.streams_replies = base.streams_replies;
  if (log_level) connection.log->set_level(*log_level);  // the request's log
  if (method == "tools/call") {
    // The tasks extension: a long call (OperationSpec::runs_long) of a client that takes tasks
    // becomes one. Its tasks are anyone's who has the id (128 random bits): there is no connection.
    if (services_.tasks && meta->tasks && long_call(params))
      return call_as_task(params, id_json, connection, router, outcome, "", true);
    return call_tool(params, id_json, connection, router, outcome);
  }
  if (is_primitive_method(method)) return answer(method, params, id_json, connection, router, outcome);
  if (method == "subscriptions/listen" && services_.watch) {
    // The caller as the transport established it (its principal, the label its _meta names): an
    // inbox is watched only by whoever may read it.
    auto reply = listen(params, id_json, meta->tasks, connection.caller(), base, router, outcome);
    return reply ? *reply : std::string();
  }
  if ((method == "tasks/get" || method == "tasks/update" || method == "tasks/cancel") && services_.tasks) {
    // The extension's methods are for clients that declared it (SEP-2663).
    if (!meta->tasks) return refuse(RpcError::MissingRequiredClientCapability, "Missing required client capability",
                                    required_tasks_extension());
    if (auto reply = task_method(method, params, id_json, connection, outcome, true)) return *reply;
  }
  return refuse(RpcError::MethodNotFound, method_not_found(method, true));
}

std::string Protocol::disconnect(Connection& connection, Router& router, std::string_view why) const {
  if (services_.watch) {
    if (connection.subscriber) services_.watch->remove(*std::exchange(connection.subscriber, std::nullopt));
    for (const auto& [request, subscriber] : connection.listens) services_.watch->remove(subscriber);
    connection.listens.clear();
  }
  std::string session = std::exchange(connection.session, std::string());
  if (session.empty()) return session;
  Caller caller = connection.caller();
  caller.session = session;
  json::Value params = json::Value::object();
  params.set("reason", std::string(why));
  // The claim first (tasks.stop needs the session active), then the session. Neither failing
  // (the session was ended elsewhere, the store is gone) keeps the process: the lease covers it.
  Envelope stopped = router.dispatch({Gateway::Mutate, "tasks", "stop", params, caller});
  Envelope suspended = router.dispatch({Gateway::Mutate, "session", "suspend", params, caller});
  if (!stopped.success || !suspended.success) {
    const Envelope& failed = stopped.success ? suspended : stopped;
    log::warn("could not suspend session " + session + " on disconnect: " +
              (failed.error ? failed.error->message : std::string("unknown error")));
    return suspended.success ? session : std::string();
  }
  return session;
}

std::string Protocol::answer(const std::string& method, const json::Value& params, const std::string& id_json,
                             Connection& connection, Router& router, Outcome& outcome) const {
  PrimitiveAnswer answered = answer_primitive(registry_, method, params, router,
                                              connection.caller());
  if (answered.error) {
    if (outcome.stateless) outcome.error_code = static_cast<int>(*answered.error);
    return rpc_error(id_json, *answered.error, answered.message, answered.data);
  }
  std::string result = answered.result.dump();
  if (outcome.stateless) {
    result.pop_back();
    result += R"(,"resultType":"complete")";
    result += caching_hints(method);
    result += "," + server_meta_ + "}";
  }
  return rpc_result(id_json, result);
}

bool Protocol::long_call(const json::Value& params) const {
  const json::Value& arguments = params["arguments"];
  if (!arguments["domain"].is_string() || !arguments["operation"].is_string()) return false;
  // Under our name, or the original CLEO's (which runs the same operation).
  const std::string& domain = arguments["domain"].as_string();
  const std::string& operation = arguments["operation"].as_string();
  const OperationSpec* spec = registry_.find(domain, operation);
  if (!spec) spec = registry_.find_original(domain, operation);
  return spec && spec->runs_long && params["name"] == json::Value(std::string(tool_name(spec->gateway))) &&
         spec->runs_long(arguments["params"]);
}

Protocol::ToolCall Protocol::read_tool_call(const json::Value& params, const std::string& id_json,
                                            const Connection& connection, Outcome& outcome) const {
  ToolCall out;
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
    if (outcome.stateless) outcome.error_code = static_cast<int>(RpcError::InvalidParams);
    out.rpc_error = rpc_error(id_json, RpcError::InvalidParams,
                              "Unknown tool '" + given + "'; the tools are cleo_query and cleo_mutate", data);
    return out;
  }
  const json::Value& arguments = params["arguments"];
  if (!arguments.is_null() && !arguments.is_object()) {
    out.refused = argument_error("arguments must be an object {domain, operation, params}", "arguments");
  } else if (!arguments["domain"].is_string()) {
    out.refused = argument_error("arguments.domain is required (a string such as 'tasks')", "domain");
  } else if (!arguments["operation"].is_string()) {
    out.refused = argument_error("arguments.operation is required (a string such as 'show')", "operation");
  } else {
    std::string stray;
    for (const auto& [key, value] : arguments.as_object())
      if (key != "domain" && key != "operation" && key != "params") stray = key;
    if (!stray.empty()) {
      out.refused = argument_error("unexpected argument '" + stray + "': operation parameters go inside params", stray);
    } else {
      out.request = Request{gateway, arguments["domain"].as_string(), arguments["operation"].as_string(),
                            arguments["params"], connection.caller()};
    }
  }
  return out;
}

std::string Protocol::tool_result(const Registry& registry, const std::string& server_meta,
                                  const Envelope& envelope, bool stateless) {
  // The envelope as structuredContent, mirrored as one text block (docs/architecture.md §3.2).
  std::string body = to_json(envelope, McpAdvice(registry));
  std::string out = R"({"content":[{"type":"text","text":)";
  json::write_string(out, body);
  out += R"(}],"structuredContent":)";
  out += body;
  out += R"(,"isError":)";
  out += envelope.success ? "false" : "true";
  if (stateless) out += R"(,"resultType":"complete",)" + server_meta;
  out += '}';
  return out;
}

std::string Protocol::call_tool(const json::Value& params, const std::string& id_json, Connection& connection,
                                Router& router, Outcome& outcome) const {
  ToolCall call = read_tool_call(params, id_json, connection, outcome);
  if (call.rpc_error) return *call.rpc_error;
  Envelope envelope;
  if (call.refused) {
    envelope = std::move(*call.refused);
  } else {
    // A client that sent a progressToken is told how the call goes, where the transport can say it
    // before the reply (stdio's output; an HTTP response is written whole after the call).
    std::optional<ProgressScope> watched;
    if (auto token = progress_token(params); token && connection.outbox && !connection.streams_replies)
      watched.emplace(progress_sender(std::move(*token), connection.outbox));
    envelope = router.dispatch(*call.request);
    if (envelope.rebind) connection.session = *envelope.rebind;
    // What the people watching are told of it, when the client asked for a log.
    if (connection.log->level()) {
      auto logged = connection.log->admit(
          call_log(call.request->domain + "." + call.request->operation, envelope, McpAdvice(registry_)));
      outcome.notifications.insert(outcome.notifications.end(), logged.begin(), logged.end());
    }
  }
  return rpc_result(id_json, tool_result(registry_, server_meta_, envelope, outcome.stateless));
}

}  // namespace ct::mcp
