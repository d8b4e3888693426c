// Streamable HTTP after the HTTP parser: one request in, one response out, no sockets. The
// server (http_transport.cpp) feeds it what libmicrohttpd parsed; tests and a fuzz target can
// drive the same code with plain structs. Holds the MCP sessions and the pool of routers.
// Security by default: Origin and Host checks (DNS rebinding), body limit, optional bearer
// token. Sessions are not authentication.
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "domains/router.h"
#include "gateway/event_stream.h"
#include "gateway/mcp_protocol.h"
#include "gateway/router_pool.h"

namespace ct::mcp {

/// Workers that keep two cores busy with SQLite reads (more only add context switches).
inline constexpr int kWorkers = 4;
/// On PostgreSQL a worker mostly waits for the database server: with 4, a fleet's cheap calls queue
/// behind a few slow ones (docs/performance.md, "K HTTP clients over one `ct serve`").
inline constexpr int kPostgresqlWorkers = 16;

struct HttpOptions {
  std::string host = "127.0.0.1";
  int port = 8808;                          // 0 = any free port
  std::vector<std::string> allowed_origins; // extra origins beyond the loopback ones, e.g. "https://app.example"
  std::string token;                        // non-empty: require "Authorization: Bearer <token>"
  std::size_t max_body_bytes = 4 * 1024 * 1024;  // larger bodies get 413
  std::size_t max_header_bytes = 16 * 1024; // a connection's buffer: request line + headers (431 beyond)
  std::size_t max_connections = 4096;       // open connections; more are closed at accept
  int header_timeout_seconds = 10;          // request line seen → all headers received, in total
  int body_timeout_seconds = 30;            // headers received → whole body received, in total
  int idle_timeout_seconds = 30;            // keep-alive wait for the next request (in total), and
                                            // any stall while reading or writing
  int threads = 0;                          // worker threads running requests (each keeps a router);
                                            // 0: kWorkers, or kPostgresqlWorkers for `ct serve` on PostgreSQL
  int io_threads = 1;                       // libmicrohttpd polling threads (socket I/O, HTTP parsing)
  std::size_t max_sessions = 1024;          // oldest idle sessions are dropped beyond this
  int session_idle_seconds = 24 * 3600;     // sessions unused for this long end
  bool dashboard = true;                    // the web dashboard at / (gateway/dashboard.h)
  bool dashboard_write = false;             // people may change tasks from it (--dashboard-write)
  /// A person started the server at their terminal: it prints a one-use code that logs a browser
  /// in as that person (never when an agent started it: the agent would read the code).
  bool person_login_code = false;
  /// The workers to start: `threads`, else the default for the store's backend.
  int workers(bool on_postgresql) const {
    return threads > 0 ? threads : on_postgresql ? kPostgresqlWorkers : kWorkers;
  }
  int stop_grace_seconds = 10;              // after SIGINT/SIGTERM, the most the stop waits for calls
                                            // that still run before the process ends (--grace)
};

class Dashboard;

struct HttpHeader {
  std::string name;
  std::string value;
};

/// A request as the HTTP parser delivered it.
struct HttpRequest {
  std::string method;                // "POST"
  std::string path;                  // without the query string: "/mcp"
  std::string version;               // "HTTP/1.1"
  std::vector<HttpHeader> headers;   // in arrival order, duplicates kept
  std::string body;
};

struct HttpResponse {
  int status = 200;
  std::vector<HttpHeader> headers;   // besides Content-Length, Date and Connection
  std::string body;
  /// Set: the body is this stream's text as it comes (Server-Sent Events), not `body`.
  std::shared_ptr<EventStream> stream;
};

/// The first value of header `name` (case-insensitive), if any.
std::optional<std::string_view> find_header(const std::vector<HttpHeader>& headers, std::string_view name);
/// Equal, in a time that does not tell how much of a secret was guessed right.
bool constant_time_equal(std::string_view a, std::string_view b);
/// An Authorization value "Bearer <token>" (the scheme in any case) carrying `token`.
bool bearer_matches(std::string_view authorization, std::string_view token);

/// The MCP endpoint (/mcp) over HTTP. handle() may run on many threads at once; requests of one
/// MCP session run one at a time (its protocol state is not shared).
class HttpExchange {
 public:
  /// `dashboard` (may be null) serves every path but /mcp, after the Origin and Host checks.
  HttpExchange(const Protocol& protocol, RouterFactory make_router, HttpOptions options,
               std::shared_ptr<Dashboard> dashboard = nullptr);
  ~HttpExchange();
  HttpExchange(const HttpExchange&) = delete;
  HttpExchange& operator=(const HttpExchange&) = delete;

  /// The whole exchange: the checks of check_head(), then the endpoint. Never throws (an
  /// unexpected exception becomes 500).
  HttpResponse handle(const HttpRequest& request);

  /// The checks that need only the request line and headers, so a server can refuse before it
  /// reads a body: Host (exactly one in HTTP/1.1), framing (Content-Length and
  /// Transfer-Encoding) and the body limit. A refusal asks for the connection to be closed.
  std::optional<HttpResponse> check_head(const HttpRequest& request) const;

  const HttpOptions& options() const { return options_; }
  Dashboard* dashboard() const { return dashboard_.get(); }
  /// The server is stopping: subscriptions end (each listen stream with its closing reply) and so
  /// does every session's GET stream.
  void stop_streams();
  /// Live sessions (for tests).
  std::size_t session_count();

 private:
  struct Session;

  HttpResponse handle_post(const HttpRequest& request);
  /// A request of the stateless revision (2026-07-28), after admission: no session involved.
  HttpResponse handle_stateless(const HttpRequest& request, const json::Value* parsed, const MirroredHeaders& mirrored);
  HttpResponse handle_delete(const HttpRequest& request);
  /// GET /mcp: an MCP session's stream of notifications (the handshake revisions).
  HttpResponse handle_get(const HttpRequest& request);
  std::optional<HttpResponse> admit(const HttpRequest& request) const;
  std::optional<HttpResponse> check_origin_and_host(const HttpRequest& request) const;
  std::shared_ptr<Session> find_session(std::string_view id);
  std::string add_session(const Connection& connection);
  /// Removes the session; null when there is none.
  std::shared_ptr<Session> end_session(std::string_view id);

  const Protocol& protocol_;
  RouterPool routers_;
  HttpOptions options_;
  std::shared_ptr<Dashboard> dashboard_;

  std::mutex sessions_mutex_;
  std::map<std::string, std::shared_ptr<Session>, std::less<>> sessions_;
};

}  // namespace ct::mcp
