// MCP over Streamable HTTP (one endpoint, /mcp), served by libmicrohttpd: event-driven socket
// I/O on a polling thread, complete requests run by a small pool of worker threads. Only
// http_transport.cpp includes microhttpd.h; what a request means is gateway/http_exchange.h.
// Security by default: binds 127.0.0.1, validates Origin and Host (DNS-rebinding protection),
// limits connections, header and body sizes, deadlines for slow peers, optional bearer token.
// Sessions are not authentication.
#pragma once

#include <memory>
#include <string>

#include "core/error.h"
#include "gateway/http_exchange.h"
#include "gateway/mcp_protocol.h"

namespace ct::mcp {

class HttpServer {
 public:
  /// `dashboard` (may be null) serves every path but /mcp (gateway/dashboard.h).
  HttpServer(const Protocol& protocol, RouterFactory make_router, HttpOptions options,
             std::shared_ptr<Dashboard> dashboard = nullptr);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  /// Binds and listens (E_FILE_ERROR with the reason when the address is taken or invalid).
  Result<void> bind();
  /// The bound port (after bind()).
  int port() const;
  /// Serves until stop() is called from another thread (or a signal handler's thread). Requests
  /// already running finish; connections still open are closed.
  void run();
  /// Asks run() to return; safe from any thread, any number of times, before or during run().
  void stop();
  std::string url() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ct::mcp
