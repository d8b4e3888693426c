// MCP over Streamable HTTP (one endpoint, /mcp). Only http_transport.cpp includes httplib.
// Security by default: binds 127.0.0.1, validates Origin and Host (DNS-rebinding protection),
// limits body size, times out slow peers, optional bearer token. Sessions are not authentication.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/error.h"
#include "domains/router.h"
#include "gateway/mcp_protocol.h"

namespace ct::mcp {

struct HttpOptions {
  std::string host = "127.0.0.1";
  int port = 8808;                          // 0 = any free port
  std::vector<std::string> allowed_origins; // extra origins beyond the loopback ones, e.g. "https://app.example"
  std::string token;                        // non-empty: require "Authorization: Bearer <token>"
  std::size_t max_body_bytes = 4 * 1024 * 1024;
  int read_timeout_seconds = 30;
  int write_timeout_seconds = 30;
  int keep_alive_seconds = 2;               // idle connection lifetime (also bounds shutdown time)
  int threads = 16;                         // connections served in parallel
  std::size_t max_sessions = 1024;          // oldest idle sessions are dropped beyond this
  int session_idle_seconds = 24 * 3600;     // sessions unused for this long end
};

/// Makes a router for one worker; each worker keeps its own database connection.
using RouterFactory = std::function<std::unique_ptr<Router>()>;

class HttpServer {
 public:
  HttpServer(const Protocol& protocol, RouterFactory make_router, HttpOptions options);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  /// Binds the socket (E_FILE_ERROR with the reason when the address is taken or invalid).
  Result<void> bind();
  /// The bound port (after bind()).
  int port() const;
  /// Serves until stop() is called from another thread (or a signal handler's thread).
  void run();
  void stop();
  std::string url() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ct::mcp
