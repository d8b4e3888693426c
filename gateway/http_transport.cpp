// The only translation unit that includes httplib.h.
#include "gateway/http_transport.h"

#include <httplib.h>

#include <atomic>
#include <chrono>
#include <map>
#include <mutex>

#include "core/json_parse.h"
#include "core/log.h"
#include "core/text.h"

namespace ct::mcp {
namespace {

using Clock = std::chrono::steady_clock;

struct SessionState {
  Connection connection;
  Clock::time_point last_used;
  std::mutex mutex;  // one request at a time per session: its protocol state is not shared
};

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

bool constant_time_equal(std::string_view a, std::string_view b) {
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  for (std::size_t i = 0; i < a.size(); ++i) diff |= static_cast<unsigned char>(a[i] ^ (i < b.size() ? b[i] : 0));
  return diff == 0;
}

bool accepts_json(const std::string& accept) {
  if (accept.empty()) return true;  // no Accept header: anything is acceptable
  std::string lower = to_lower_ascii(accept);
  return lower.find("application/json") != std::string::npos || lower.find("application/*") != std::string::npos ||
         lower.find("*/*") != std::string::npos;
}

void send_error(httplib::Response& res, int status, RpcError code, std::string_view message) {
  res.status = status;
  res.set_content(rpc_error("null", code, message), "application/json");
}

}  // namespace

struct HttpServer::Impl {
  const Protocol& protocol;
  RouterFactory make_router;
  HttpOptions options;
  httplib::Server server;
  int bound_port = 0;

  std::mutex sessions_mutex;
  std::map<std::string, std::shared_ptr<SessionState>, std::less<>> sessions;

  std::mutex routers_mutex;
  std::vector<std::unique_ptr<Router>> idle_routers;

  Impl(const Protocol& p, RouterFactory f, HttpOptions o) : protocol(p), make_router(std::move(f)), options(std::move(o)) {}

  /// A router (and so a database connection) for the current request; returned afterwards.
  std::unique_ptr<Router> take_router() {
    {
      std::lock_guard lock(routers_mutex);
      if (!idle_routers.empty()) {
        auto router = std::move(idle_routers.back());
        idle_routers.pop_back();
        return router;
      }
    }
    return make_router();
  }
  void give_back(std::unique_ptr<Router> router) {
    std::lock_guard lock(routers_mutex);
    idle_routers.push_back(std::move(router));
  }

  std::shared_ptr<SessionState> find_session(std::string_view id) {
    std::lock_guard lock(sessions_mutex);
    auto it = sessions.find(id);
    if (it == sessions.end()) return nullptr;
    if (Clock::now() - it->second->last_used > std::chrono::seconds(options.session_idle_seconds)) {
      sessions.erase(it);
      return nullptr;
    }
    it->second->last_used = Clock::now();
    return it->second;
  }

  std::string add_session(const Connection& connection) {
    std::string id = random_hex(16);  // 128 bits from the OS CSPRNG, visible ASCII
    auto state = std::make_shared<SessionState>();
    state->connection = connection;
    state->last_used = Clock::now();
    std::lock_guard lock(sessions_mutex);
    while (sessions.size() >= options.max_sessions) {
      auto oldest = sessions.begin();
      for (auto it = sessions.begin(); it != sessions.end(); ++it)
        if (it->second->last_used < oldest->second->last_used) oldest = it;
      sessions.erase(oldest);
    }
    sessions.emplace(id, std::move(state));
    return id;
  }

  bool end_session(std::string_view id) {
    std::lock_guard lock(sessions_mutex);
    auto it = sessions.find(id);
    if (it == sessions.end()) return false;
    sessions.erase(it);
    return true;
  }

  /// Checks shared by every method: bearer token, Origin, Host. Writes the refusal and
  /// returns false when the request must not go further.
  bool admit(const httplib::Request& req, httplib::Response& res) {
    if (!options.token.empty()) {
      std::string auth = req.get_header_value("Authorization");
      constexpr std::string_view kBearer = "Bearer ";
      if (auth.size() <= kBearer.size() || auth.compare(0, kBearer.size(), kBearer) != 0 ||
          !constant_time_equal(std::string_view(auth).substr(kBearer.size()), options.token)) {
        res.set_header("WWW-Authenticate", R"(Bearer realm="cleo")");
        send_error(res, 401, RpcError::InvalidRequest, "Unauthorized: a valid bearer token is required");
        return false;
      }
    }
    if (req.has_header("Origin")) {
      std::string origin = req.get_header_value("Origin");
      bool allowed = false;
      for (const auto& extra : options.allowed_origins) allowed = allowed || extra == origin || extra == "*";
      if (!allowed && is_loopback_host(host_part(origin)) && origin.rfind("http", 0) == 0) allowed = true;
      if (!allowed) {
        log::warn("refused request from origin " + origin);
        send_error(res, 403, RpcError::InvalidRequest, "Forbidden: origin not allowed");
        return false;
      }
    }
    // DNS rebinding: a page on evil.example resolving to 127.0.0.1 sends Host: evil.example.
    if (is_loopback_host(options.host) || options.host.empty()) {
      std::string host = host_part(req.get_header_value("Host"));
      bool allowed = host.empty() || is_loopback_host(host);
      for (const auto& extra : options.allowed_origins) allowed = allowed || host_part(extra) == host;
      if (!allowed) {
        log::warn("refused request for host " + host);
        send_error(res, 403, RpcError::InvalidRequest, "Forbidden: host not allowed");
        return false;
      }
    }
    return true;
  }

  void handle_post(const httplib::Request& req, httplib::Response& res) {
    if (!admit(req, res)) return;
    if (!accepts_json(req.get_header_value("Accept"))) {
      send_error(res, 406, RpcError::InvalidRequest, "Not Acceptable: the client must accept application/json");
      return;
    }
    std::string content_type = to_lower_ascii(req.get_header_value("Content-Type"));
    if (!content_type.empty() && content_type.find("application/json") == std::string::npos) {
      send_error(res, 415, RpcError::InvalidRequest, "Unsupported Media Type: send application/json");
      return;
    }
    auto parsed = json::parse(req.body);
    if (!parsed) {
      send_error(res, 400, RpcError::ParseError, "Parse error: " + parsed.error().message);
      return;
    }
    bool is_initialize = parsed->is_object() && (*parsed)["method"] == json::Value("initialize");
    std::string session_id = req.get_header_value("Mcp-Session-Id");
    std::shared_ptr<SessionState> session;
    if (!session_id.empty()) {
      session = find_session(session_id);
      if (!session) {
        send_error(res, 404, RpcError::InvalidRequest, "Session not found: start a new one with initialize");
        return;
      }
    } else if (!is_initialize) {
      send_error(res, 400, RpcError::InvalidRequest, "Bad Request: Mcp-Session-Id header is required");
      return;
    }
    if (req.has_header("MCP-Protocol-Version") && !is_initialize) {
      std::string version = req.get_header_value("MCP-Protocol-Version");
      if (!is_supported_version(version)) {
        send_error(res, 400, RpcError::InvalidRequest, "Bad Request: unsupported MCP-Protocol-Version " + version);
        return;
      }
    }

    auto router = take_router();
    Outcome outcome;
    if (session) {
      std::lock_guard lock(session->mutex);
      outcome = protocol.handle_parsed(*parsed, session->connection, *router);
    } else {
      Connection connection;
      outcome = protocol.handle_parsed(*parsed, connection, *router);
      if (outcome.initialize_succeeded) res.set_header("Mcp-Session-Id", add_session(connection));
    }
    give_back(std::move(router));

    if (!outcome.reply) {
      res.status = 202;  // a notification or a response: accepted, no body
      return;
    }
    bool invalid = outcome.kind == MessageKind::Invalid;
    res.status = invalid ? 400 : 200;
    res.set_content(std::move(*outcome.reply), "application/json");
  }

  void handle_delete(const httplib::Request& req, httplib::Response& res) {
    if (!admit(req, res)) return;
    std::string session_id = req.get_header_value("Mcp-Session-Id");
    if (session_id.empty()) {
      send_error(res, 400, RpcError::InvalidRequest, "Bad Request: Mcp-Session-Id header is required");
      return;
    }
    if (!end_session(session_id)) {
      send_error(res, 404, RpcError::InvalidRequest, "Session not found");
      return;
    }
    res.status = 204;
  }
};

HttpServer::HttpServer(const Protocol& protocol, RouterFactory make_router, HttpOptions options)
    : impl_(std::make_unique<Impl>(protocol, std::move(make_router), std::move(options))) {
  auto& s = impl_->server;
  Impl* impl = impl_.get();
  s.set_payload_max_length(impl->options.max_body_bytes);
  s.set_read_timeout(impl->options.read_timeout_seconds, 0);
  s.set_write_timeout(impl->options.write_timeout_seconds, 0);
  // httplib serves a connection per worker thread, and stop() waits for idle keep-alive
  // connections to time out: keep them short so idle clients neither pin workers nor delay exit.
  s.set_keep_alive_timeout(impl->options.keep_alive_seconds);
  s.set_keep_alive_max_count(1000000);  // the default (5) reconnects a busy client every 5 calls
  // httplib writes headers and body separately: with Nagle on, the body waits for the client's
  // delayed ACK (~40 ms per call on Linux).
  s.set_tcp_nodelay(true);
  int threads = std::max(1, impl->options.threads);
  s.new_task_queue = [threads] { return new httplib::ThreadPool(static_cast<std::size_t>(threads)); };
  s.Post("/mcp", [impl](const httplib::Request& req, httplib::Response& res) { impl->handle_post(req, res); });
  s.Delete("/mcp", [impl](const httplib::Request& req, httplib::Response& res) { impl->handle_delete(req, res); });
  s.Get("/mcp", [impl](const httplib::Request& req, httplib::Response& res) {
    if (!impl->admit(req, res)) return;
    res.set_header("Allow", "POST, DELETE");
    send_error(res, 405, RpcError::InvalidRequest, "Method Not Allowed: this server offers no SSE stream");
  });
  s.set_exception_handler([](const httplib::Request&, httplib::Response& res, std::exception_ptr ep) {
    std::string what = "unknown";
    try {
      if (ep) std::rethrow_exception(ep);
    } catch (const std::exception& e) {
      what = e.what();
    } catch (...) {
    }
    log::error("internal error while serving HTTP: " + what);
    send_error(res, 500, RpcError::InternalError, "Internal error");
  });
  s.set_error_handler([](const httplib::Request&, httplib::Response& res) {
    if (!res.body.empty()) return;
    if (res.status == 413) {
      res.set_content(rpc_error("null", RpcError::InvalidRequest, "Payload Too Large"), "application/json");
    } else if (res.status == 404) {
      res.set_content(rpc_error("null", RpcError::InvalidRequest, "Not Found: the MCP endpoint is /mcp"),
                      "application/json");
    }
  });
}

HttpServer::~HttpServer() { stop(); }

Result<void> HttpServer::bind() {
  auto& s = impl_->server;
  int port = impl_->options.port;
  if (port == 0) {
    port = s.bind_to_any_port(impl_->options.host);
  } else if (!s.bind_to_port(impl_->options.host, port)) {
    port = -1;
  }
  if (port <= 0)
    return fail(Error(ErrorCode::FileError, "cannot listen on " + impl_->options.host + ":" +
                                                std::to_string(impl_->options.port))
                    .with_fix("choose another port with --port, or stop the program using it"));
  impl_->bound_port = port;
  return {};
}

int HttpServer::port() const { return impl_->bound_port; }

void HttpServer::run() { impl_->server.listen_after_bind(); }

void HttpServer::stop() {
  if (impl_ && impl_->server.is_running()) impl_->server.stop();
}

std::string HttpServer::url() const {
  std::string host = impl_->options.host;
  if (host.find(':') != std::string::npos && host.front() != '[') host = "[" + host + "]";
  return "http://" + host + ":" + std::to_string(impl_->bound_port) + "/mcp";
}

}  // namespace ct::mcp
