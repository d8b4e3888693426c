#include "gateway/http_exchange.h"

#include <chrono>
#include <exception>

#include "core/json_parse.h"
#include "core/log.h"
#include "core/text.h"
#include "gateway/dashboard.h"
#include "gateway/outbox.h"
#include "gateway/resource_watch.h"

namespace ct::mcp {
namespace {

using Clock = std::chrono::steady_clock;

bool equals_ignoring_case(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; };
    if (lower(a[i]) != lower(b[i])) return false;
  }
  return true;
}

std::size_t count_headers(const std::vector<HttpHeader>& headers, std::string_view name) {
  std::size_t count = 0;
  for (const auto& header : headers) count += equals_ignoring_case(header.name, name) ? 1 : 0;
  return count;
}

std::string header_or_empty(const std::vector<HttpHeader>& headers, std::string_view name) {
  auto value = find_header(headers, name);
  return value ? std::string(*value) : std::string();
}

bool is_loopback_host(std::string_view host) {
  return host == "localhost" || host == "127.0.0.1" || host == "[::1]" || host == "::1";
}

/// "http://localhost:5173" → "localhost"; "localhost:8808" → "localhost"; "[::1]:80" → "[::1]".
std::string host_part(std::string_view authority) {
  if (auto scheme = authority.find("://"); scheme != std::string_view::npos) authority.remove_prefix(scheme + 3);
  if (auto slash = authority.find('/'); slash != std::string_view::npos) authority = authority.substr(0, slash);
  if (!authority.empty() && authority.front() == '[') {
    auto close = authority.find(']');
    return std::string(authority.substr(0, close == std::string_view::npos ? authority.size() : close + 1));
  }
  if (auto colon = authority.rfind(':'); colon != std::string_view::npos) authority = authority.substr(0, colon);
  return to_lower_ascii(authority);
}

bool accepts_json(const std::string& accept) {
  if (accept.empty()) return true;  // no Accept header: anything is acceptable
  std::string lower = to_lower_ascii(accept);
  return lower.find("application/json") != std::string::npos || lower.find("application/*") != std::string::npos ||
         lower.find("*/*") != std::string::npos;
}

HttpResponse json_response(int status, std::string body) {
  HttpResponse response;
  response.status = status;
  response.headers.push_back({"Content-Type", "application/json"});
  response.body = std::move(body);
  return response;
}

HttpResponse error_response(int status, RpcError code, std::string_view message, std::string_view id_json = "null") {
  return json_response(status, rpc_error(id_json, code, message));
}

/// A header value as it may appear in a reply or a log line: printable ASCII as it is, every other
/// byte as \xNN (a header may carry bytes that are not UTF-8, which JSON text cannot hold).
std::string printable_header(std::string_view value) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (char c : value.substr(0, 200)) {
    auto byte = static_cast<unsigned char>(c);
    if (byte >= 0x20 && byte < 0x7F) {
      out += c;
    } else {
      out += "\\x";
      out += kHex[byte >> 4];
      out += kHex[byte & 0xF];
    }
  }
  return out;
}

/// A refusal after which the connection cannot be trusted to be in step (framing errors, an
/// unread body): the server closes it once the reply is sent.
HttpResponse closing(HttpResponse response) {
  response.headers.push_back({"Connection", "close"});
  return response;
}

/// The request's id as sent (its raw text) when the message is an object with a string or number
/// id, so that refusals before the protocol runs still name the request they answer.
std::string id_json_of(const json::Outline& outline) {
  std::string_view id = outline.member("id");
  if (id.empty() || !(id.front() == '"' || id.front() == '-' || (id.front() >= '0' && id.front() <= '9'))) return "null";
  return std::string(id);
}

bool parse_content_length(std::string_view text, std::size_t& out) {
  text = trim(text);
  if (text.empty() || text.size() > 19) return false;  // 19 digits always fit in 64 bits
  std::size_t value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
    value = value * 10 + static_cast<std::size_t>(c - '0');
  }
  out = value;
  return true;
}

/// The headers that mirror a request's body (2026-07-28), without the optional whitespace around
/// a field value (RFC 9110 §5.5: it is not part of the value; a value that needs it is sent as
/// =?base64?…?=). A header sent twice is refused before these are read.
MirroredHeaders mirrored_headers(const std::vector<HttpHeader>& headers) {
  MirroredHeaders out;
  if (auto value = find_header(headers, "MCP-Protocol-Version")) out.protocol_version = std::string(trim(*value));
  if (auto value = find_header(headers, "Mcp-Method")) out.method = std::string(trim(*value));
  if (auto value = find_header(headers, "Mcp-Name")) out.name = std::string(trim(*value));
  return out;
}

/// The HTTP status of a stateless reply (2026-07-28): 200 for a result; a method that does not
/// exist is 404, so that a client can tell it from a server without the endpoint; every other
/// refusal of the request (bad _meta, headers, version, params, framing) 400; a bug of ours 500.
int stateless_status(const Outcome& outcome) {
  switch (static_cast<RpcError>(outcome.error_code)) {
    case RpcError::MethodNotFound: return 404;
    case RpcError::InternalError: return 500;
    default: return outcome.error_code == 0 ? 200 : 400;
  }
}

}  // namespace

std::optional<std::string_view> find_header(const std::vector<HttpHeader>& headers, std::string_view name) {
  for (const auto& header : headers)
    if (equals_ignoring_case(header.name, name)) return std::string_view(header.value);
  return std::nullopt;
}

bool constant_time_equal(std::string_view a, std::string_view b) {
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  for (std::size_t i = 0; i < a.size(); ++i) diff |= static_cast<unsigned char>(a[i] ^ (i < b.size() ? b[i] : 0));
  return diff == 0;
}

/// "Bearer <token>", the scheme in any case (RFC 9110 §11.1), one or more spaces after it.
bool bearer_matches(std::string_view authorization, std::string_view token) {
  auto space = authorization.find(' ');
  if (space == std::string_view::npos || !equals_ignoring_case(authorization.substr(0, space), "bearer")) return false;
  std::string_view credentials = trim(authorization.substr(space + 1));
  return !credentials.empty() && constant_time_equal(credentials, token);
}

struct HttpExchange::Session {
  Connection connection;
  Clock::time_point last_used;
  std::mutex mutex;  // one request at a time per session: its protocol state is not shared
  /// Its notifications: the GET stream the client has open (Connection::outbox is this).
  std::shared_ptr<SessionOutbox> outbox = std::make_shared<SessionOutbox>();
};

namespace {

/// The response that sends `stream` as Server-Sent Events.
HttpResponse event_stream_response(std::shared_ptr<EventStream> stream);

/// A reply with messages before it (the call's log): one event each, then the reply's, as the
/// response's stream; nullopt when there are none (the reply is sent as JSON).
std::optional<HttpResponse> with_notifications(const Outcome& outcome) {
  if (outcome.notifications.empty() || !outcome.reply) return std::nullopt;
  StreamOutbox events;
  for (const auto& notification : outcome.notifications) events.send(notification);
  events.send(*outcome.reply);
  events.close();
  return event_stream_response(events.stream());
}

HttpResponse event_stream_response(std::shared_ptr<EventStream> stream) {
  HttpResponse response;
  response.status = 200;
  response.headers.push_back({"Content-Type", "text/event-stream"});
  response.headers.push_back({"Cache-Control", "no-cache"});
  response.stream = std::move(stream);
  return response;
}

}  // namespace

HttpExchange::HttpExchange(const Protocol& protocol, RouterFactory make_router, HttpOptions options,
                           std::shared_ptr<Dashboard> dashboard)
    : protocol_(protocol), routers_(std::move(make_router)), options_(std::move(options)), dashboard_(std::move(dashboard)) {}

HttpExchange::~HttpExchange() = default;

std::optional<HttpResponse> HttpExchange::check_head(const HttpRequest& request) const {
  // RFC 9112 §3.2: exactly one Host in HTTP/1.1 (a second one is how requests get smuggled
  // past a check that reads the first and a router that reads the last).
  std::size_t hosts = count_headers(request.headers, "Host");
  if (hosts > 1) return closing(error_response(400, RpcError::InvalidRequest, "Bad Request: more than one Host header"));
  if (hosts == 0 && request.version != "HTTP/1.0")
    return closing(error_response(400, RpcError::InvalidRequest, "Bad Request: an HTTP/1.1 request needs a Host header"));
  // RFC 9112 §6.3: the body's length must be unambiguous.
  std::optional<std::size_t> length;
  for (const auto& header : request.headers) {
    if (!equals_ignoring_case(header.name, "Content-Length")) continue;
    std::size_t value = 0;
    if (!parse_content_length(header.value, value)) {
      bool digits = !trim(header.value).empty() && trim(header.value).find_first_not_of("0123456789") == std::string_view::npos;
      if (digits)  // only digits, but more than 64 bits hold
        return closing(error_response(413, RpcError::InvalidRequest, "Payload Too Large"));
      return closing(error_response(400, RpcError::InvalidRequest, "Bad Request: malformed Content-Length"));
    }
    if (length && *length != value)
      return closing(error_response(400, RpcError::InvalidRequest, "Bad Request: conflicting Content-Length headers"));
    length = value;
  }
  if (auto encoding = find_header(request.headers, "Transfer-Encoding")) {
    if (length)
      return closing(error_response(400, RpcError::InvalidRequest, "Bad Request: both Transfer-Encoding and Content-Length"));
    if (!equals_ignoring_case(trim(*encoding), "chunked") || count_headers(request.headers, "Transfer-Encoding") > 1)
      return closing(error_response(501, RpcError::InvalidRequest, "Not Implemented: only chunked transfer coding"));
  }
  if (length && *length > options_.max_body_bytes)
    return closing(error_response(413, RpcError::InvalidRequest, "Payload Too Large"));
  return std::nullopt;
}

HttpResponse HttpExchange::handle(const HttpRequest& request) {
  try {
    if (auto refused = check_head(request)) return std::move(*refused);
    if (request.body.size() > options_.max_body_bytes)
      return closing(error_response(413, RpcError::InvalidRequest, "Payload Too Large"));
    if (request.path != "/mcp") {
      if (!dashboard_) return error_response(404, RpcError::InvalidRequest, "Not Found: the MCP endpoint is /mcp");
      if (auto refused = check_origin_and_host(request)) return std::move(*refused);
      return dashboard_->handle(request);  // its own token check: a page cannot send the header
    }
    if (request.method == "POST") return handle_post(request);
    if (request.method == "DELETE") return handle_delete(request);
    if (request.method == "GET") return handle_get(request);
    if (auto refused = admit(request)) return std::move(*refused);
    HttpResponse response = error_response(
        405, RpcError::InvalidRequest,
        "Method Not Allowed: use POST (messages), GET (a session's notifications) or DELETE (end a session)");
    response.headers.push_back({"Allow", "GET, POST, DELETE"});
    return response;
  } catch (const std::exception& e) {
    log::error(std::string("internal error while serving HTTP: ") + e.what());
  } catch (...) {
    log::error("internal error while serving HTTP: unknown exception");
  }
  return error_response(500, RpcError::InternalError, "Internal error");
}

std::optional<HttpResponse> HttpExchange::admit(const HttpRequest& request) const {
  if (!options_.token.empty()) {
    auto authorization = find_header(request.headers, "Authorization");
    if (!authorization || !bearer_matches(*authorization, options_.token)) {
      HttpResponse response =
          error_response(401, RpcError::InvalidRequest, "Unauthorized: a valid bearer token is required");
      response.headers.push_back({"WWW-Authenticate", R"(Bearer realm="cleo")"});
      return response;
    }
  }
  return check_origin_and_host(request);
}

std::optional<HttpResponse> HttpExchange::check_origin_and_host(const HttpRequest& request) const {
  if (auto origin_header = find_header(request.headers, "Origin")) {
    std::string origin(*origin_header);
    bool allowed = false;
    for (const auto& extra : options_.allowed_origins) allowed = allowed || extra == origin || extra == "*";
    if (!allowed && is_loopback_host(host_part(origin)) && origin.rfind("http", 0) == 0) allowed = true;
    if (!allowed) {
      log::warn("refused request from origin " + printable_header(origin));
      return error_response(403, RpcError::InvalidRequest, "Forbidden: origin not allowed");
    }
  }
  // DNS rebinding: a page on evil.example resolving to 127.0.0.1 sends Host: evil.example.
  if (is_loopback_host(options_.host) || options_.host.empty()) {
    std::string host = host_part(header_or_empty(request.headers, "Host"));
    bool allowed = host.empty() || is_loopback_host(host);
    for (const auto& extra : options_.allowed_origins) allowed = allowed || host_part(extra) == host;
    if (!allowed) {
      log::warn("refused request for host " + printable_header(host));
      return error_response(403, RpcError::InvalidRequest, "Forbidden: host not allowed");
    }
  }
  return std::nullopt;
}

HttpResponse HttpExchange::handle_post(const HttpRequest& request) {
  if (auto refused = admit(request)) return std::move(*refused);
  if (!accepts_json(header_or_empty(request.headers, "Accept")))
    return error_response(406, RpcError::InvalidRequest, "Not Acceptable: the client must accept application/json");
  std::string content_type = to_lower_ascii(header_or_empty(request.headers, "Content-Type"));
  if (!content_type.empty() && content_type.find("application/json") == std::string::npos)
    return error_response(415, RpcError::InvalidRequest, "Unsupported Media Type: send application/json");
  // The body is read twice over: parsed, and outlined for the raw id (and for well-formed JSON
  // the parser cannot represent, which Protocol::handle answers with the request's own id).
  auto parsed = json::parse(request.body);
  json::Outline outline = json::outline(request.body);
  if (!parsed && !outline.well_formed)
    return error_response(400, RpcError::ParseError, "Parse error: " + parsed.error().message);
  std::string id = id_json_of(outline);

  // The era of the request decides everything after this point: a stateless request (2026-07-28)
  // is answered on its own, whatever session header it carries; any other needs its session.
  MirroredHeaders mirrored = mirrored_headers(request.headers);
  bool stateless = parsed ? is_stateless_message(*parsed, &mirrored)
                          : mirrored.protocol_version && is_stateless_version(*mirrored.protocol_version);
  if (stateless) return handle_stateless(request, parsed ? &*parsed : nullptr, mirrored);

  bool is_initialize = outline.member("method") == R"("initialize")";
  std::string session_id = header_or_empty(request.headers, "Mcp-Session-Id");
  std::shared_ptr<Session> session;
  if (!session_id.empty()) {
    session = find_session(session_id);
    if (!session)
      return error_response(404, RpcError::InvalidRequest, "Session not found: start a new one with initialize", id);
  } else if (!is_initialize) {
    return error_response(400, RpcError::InvalidRequest,
                          "Bad Request: Mcp-Session-Id header is required (or, for protocol 2026-07-28, "
                          "MCP-Protocol-Version: 2026-07-28 and _meta in the request)",
                          id);
  }
  if (auto version = find_header(request.headers, "MCP-Protocol-Version"); version && !is_initialize) {
    if (!is_handshake_version(trim(*version)))
      return error_response(400, RpcError::InvalidRequest,
                            "Bad Request: unsupported MCP-Protocol-Version " + printable_header(*version), id);
  }

  HttpResponse response;
  auto router = routers_.take();
  Outcome outcome;
  auto handle = [&](Connection& connection) {
    return parsed ? protocol_.handle_parsed(*parsed, connection, *router, request.body)
                  : protocol_.handle(request.body, connection, *router);
  };
  if (session) {
    std::lock_guard lock(session->mutex);
    outcome = handle(session->connection);
  } else {
    Connection connection;
    connection.streams_replies = true;
    outcome = handle(connection);
    if (outcome.initialize_succeeded) response.headers.push_back({"Mcp-Session-Id", add_session(connection)});
  }
  routers_.give_back(std::move(router));

  if (outcome.stream) {
    // A reply that comes later (tasks/result of a working task): this response is its stream.
    HttpResponse streamed = event_stream_response(std::move(outcome.stream));
    for (auto& header : response.headers) streamed.headers.push_back(std::move(header));
    return streamed;
  }
  if (!outcome.reply) {
    response.status = 202;  // a notification or a response: accepted, no body
    return response;
  }
  if (auto streamed = with_notifications(outcome)) {
    for (auto& header : response.headers) streamed->headers.push_back(std::move(header));
    return std::move(*streamed);
  }
  response.status = outcome.kind == MessageKind::Invalid ? 400 : 200;
  response.headers.push_back({"Content-Type", "application/json"});
  response.body = std::move(*outcome.reply);
  return response;
}

HttpResponse HttpExchange::handle_stateless(const HttpRequest& request, const json::Value* parsed,
                                            const MirroredHeaders& mirrored) {
  // Nothing of a session is read or written: no Mcp-Session-Id is looked up, minted or echoed.
  // A mirrored header sent twice cannot be trusted to say what an intermediary read in it.
  for (std::string_view name : {"MCP-Protocol-Version", "Mcp-Method", "Mcp-Name"})
    if (count_headers(request.headers, name) > 1)
      return error_response(400, RpcError::HeaderMismatch,
                            "Header mismatch: " + std::string(name) + " is sent more than once",
                            id_json_of(json::outline(request.body)));
  auto router = routers_.take();
  Connection connection;  // never kept: the next request starts from nothing again
  connection.streams_replies = true;
  // No connection: every stateless request is the same agent, one that owns no session of another's.
  connection.principal = Principal::agent("http:stateless", "connection");
  Outcome outcome = parsed ? protocol_.handle_parsed(*parsed, connection, *router, request.body, &mirrored)
                           : protocol_.handle(request.body, connection, *router, &mirrored);
  routers_.give_back(std::move(router));
  if (outcome.stream) return event_stream_response(std::move(outcome.stream));  // subscriptions/listen
  HttpResponse response;
  if (!outcome.reply) {
    response.status = 202;  // a notification: accepted, no body
    return response;
  }
  if (auto streamed = with_notifications(outcome)) return std::move(*streamed);
  response.status = stateless_status(outcome);
  response.headers.push_back({"Content-Type", "application/json"});
  response.body = std::move(*outcome.reply);
  return response;
}

HttpResponse HttpExchange::handle_delete(const HttpRequest& request) {
  if (auto refused = admit(request)) return std::move(*refused);
  std::string session_id = header_or_empty(request.headers, "Mcp-Session-Id");
  if (session_id.empty())
    return error_response(400, RpcError::InvalidRequest, "Bad Request: Mcp-Session-Id header is required");
  std::shared_ptr<Session> ended = end_session(session_id);
  if (!ended) return error_response(404, RpcError::InvalidRequest, "Session not found");
  {
    // The client ended it: its subscriptions end, and the CLEO session bound to it lets go of its
    // claim at once.
    std::lock_guard lock(ended->mutex);
    auto router = routers_.take();
    protocol_.disconnect(ended->connection, *router, "the MCP client ended its HTTP session");
    routers_.give_back(std::move(router));
    ended->outbox->close();  // its GET stream ends
  }
  HttpResponse response;
  response.status = 204;
  return response;
}

HttpResponse HttpExchange::handle_get(const HttpRequest& request) {
  if (auto refused = admit(request)) return std::move(*refused);
  // 2026-07-28 has no GET endpoint (subscriptions/listen replaced it).
  if (auto version = find_header(request.headers, "MCP-Protocol-Version"); version && is_stateless_version(trim(*version))) {
    HttpResponse response = error_response(
        405, RpcError::InvalidRequest,
        "Method Not Allowed: protocol 2026-07-28 has no GET stream; POST subscriptions/listen instead");
    response.headers.push_back({"Allow", "POST"});
    return response;
  }
  std::string accept = to_lower_ascii(header_or_empty(request.headers, "Accept"));
  if (accept.find("text/event-stream") == std::string::npos)
    return error_response(406, RpcError::InvalidRequest, "Not Acceptable: the client must accept text/event-stream");
  std::string session_id = header_or_empty(request.headers, "Mcp-Session-Id");
  if (session_id.empty())
    return error_response(400, RpcError::InvalidRequest,
                          "Bad Request: Mcp-Session-Id header is required (a session's notifications)");
  std::shared_ptr<Session> session = find_session(session_id);
  if (!session) return error_response(404, RpcError::InvalidRequest, "Session not found: start a new one with initialize");
  // One stream per session: a new GET replaces the one before (which ends). The session becomes a
  // subscriber of the watcher now, if it is not one yet: its stream is then shown life every 15 s
  // (a peer that went away is found out), and what it subscribes to later is told on it. Watching
  // nothing yet, it holds none of the watcher's slots.
  auto stream = session->outbox->attach();
  if (ResourceWatch* watch = protocol_.services().watch) {
    std::lock_guard lock(session->mutex);
    if (!session->connection.subscriber)
      session->connection.subscriber = watch->add(session->outbox, std::nullopt, session->connection.task_owner);
  }
  return event_stream_response(stream->stream());
}

void HttpExchange::stop_streams() {
  if (ResourceWatch* watch = protocol_.services().watch) watch->stop();
  std::lock_guard lock(sessions_mutex_);
  for (auto& [id, session] : sessions_) session->outbox->close();
}

std::shared_ptr<HttpExchange::Session> HttpExchange::find_session(std::string_view id) {
  std::lock_guard lock(sessions_mutex_);
  auto it = sessions_.find(id);
  if (it == sessions_.end()) return nullptr;
  if (Clock::now() - it->second->last_used > std::chrono::seconds(options_.session_idle_seconds)) {
    it->second->outbox->close();  // its subscriber goes at the watcher's next look
    sessions_.erase(it);
    return nullptr;
  }
  it->second->last_used = Clock::now();
  return it->second;
}

std::string HttpExchange::add_session(const Connection& connection) {
  std::string id = random_hex(16);  // 128 bits from the OS CSPRNG, visible ASCII
  auto state = std::make_shared<Session>();
  state->connection = connection;
  state->connection.outbox = state->outbox;
  state->connection.streams_replies = true;
  state->connection.task_owner = id;
  // Its own id, not derived from the session's (which would let a reader of the trail reuse it).
  state->connection.principal = Principal::agent("http:" + random_hex(6), "connection");
  state->last_used = Clock::now();
  std::lock_guard lock(sessions_mutex_);
  while (!sessions_.empty() && sessions_.size() >= options_.max_sessions) {
    auto oldest = sessions_.begin();
    for (auto it = sessions_.begin(); it != sessions_.end(); ++it)
      if (it->second->last_used < oldest->second->last_used) oldest = it;
    oldest->second->outbox->close();
    sessions_.erase(oldest);
  }
  sessions_.emplace(id, std::move(state));
  return id;
}

std::shared_ptr<HttpExchange::Session> HttpExchange::end_session(std::string_view id) {
  std::lock_guard lock(sessions_mutex_);
  auto it = sessions_.find(id);
  if (it == sessions_.end()) return nullptr;
  std::shared_ptr<Session> ended = std::move(it->second);
  sessions_.erase(it);
  return ended;
}

std::size_t HttpExchange::session_count() {
  std::lock_guard lock(sessions_mutex_);
  return sessions_.size();
}

}  // namespace ct::mcp
