// The only translation unit that includes microhttpd.h.
//
// Threads: libmicrohttpd's polling thread(s) (epoll) accept connections, read and parse requests
// and write replies; they never run a request. A complete request (headers and body) suspends its
// connection and goes to a FIFO queue served by `threads` workers, each running HttpExchange with
// a pooled router; the worker stores the reply and resumes the connection, and the polling
// thread sends it. A slow request (a write waiting for SQLite's lock) holds one worker, never the
// I/O of other connections. Requests of one MCP session wait in a line of their own, so no worker
// ever blocks on a session that another worker is serving.
//
// Deadlines: libmicrohttpd has only an inactivity timeout (idle_timeout_seconds here). The
// thread in run() adds totals: each connection records when it started waiting for a request
// (idle), for the rest of its headers (request line seen) and for its body (headers seen); once
// per sweep it shutdown()s the socket of any connection past its deadline, and libmicrohttpd then
// sees the end of the stream and closes it. A connection leaves the sweep's table in the
// NOTIFY_CONNECTION "closed" callback, which libmicrohttpd calls before it closes the socket, so
// the sweep never touches a descriptor that may have been reused.
#include "gateway/http_transport.h"

#include <microhttpd.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <deque>
#include <mutex>
#include <optional>
#include <thread>
#include <unordered_map>
#include <unordered_set>

#include "core/log.h"
#include "gateway/dashboard.h"

namespace ct::mcp {
namespace {

using Clock = std::chrono::steady_clock;

std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch()).count();
}

/// How often run() looks for connections past a deadline.
constexpr auto kSweepInterval = std::chrono::milliseconds(100);

/// One TCP connection, from libmicrohttpd's "started" to its "closed" notification.
struct ConnectionState {
  int fd = -1;
  /// steady-clock ns by which the current phase must end; 0 = none (a request is running, or a
  /// reply is being sent, which the inactivity timeout covers).
  std::atomic<std::int64_t> deadline{0};
  std::atomic<const char*> phase{""};  // what the deadline is for (read by the sweep when it cuts)
  bool cut = false;        // the sweep has shut the socket down (sweep thread only)
};

/// One request, from its request line to libmicrohttpd's "completed" notification.
struct RequestState {
  MHD_Connection* connection = nullptr;
  ConnectionState* state = nullptr;
  HttpRequest request;
  std::string session_key;  // Mcp-Session-Id as sent: requests of one session run in order
  bool head_seen = false;
  bool dispatched = false;
  HttpResponse response;
  std::atomic<bool> answered{false};
};

void set_deadline(ConnectionState* state, int seconds, const char* phase) {
  if (state == nullptr) return;
  state->phase.store(phase, std::memory_order_relaxed);
  state->deadline.store(seconds > 0 ? now_ns() + std::int64_t{seconds} * 1'000'000'000 : 0, std::memory_order_relaxed);
}

MHD_Result collect_header(void* cls, MHD_ValueKind, const char* key, size_t key_size, const char* value,
                          size_t value_size) {
  auto* headers = static_cast<std::vector<HttpHeader>*>(cls);
  headers->push_back({std::string(key, key_size), value != nullptr ? std::string(value, value_size) : std::string()});
  return MHD_YES;
}

void delete_string(void* body) { delete static_cast<std::string*>(body); }

/// The event streams still being sent. Stopping waits (a little) for their last chunk to leave
/// before libmicrohttpd closes the connections, so a stream ends cleanly rather than cut off.
struct LiveStreams {
  std::mutex mutex;
  std::condition_variable idle;
  int count = 0;

  void add() {
    std::lock_guard lock(mutex);
    ++count;
  }
  void remove() {
    {
      std::lock_guard lock(mutex);
      --count;
    }
    idle.notify_all();
  }
  void wait_idle(std::chrono::milliseconds timeout) {
    std::unique_lock lock(mutex);
    idle.wait_for(lock, timeout, [this] { return count == 0; });
  }
};

/// An event stream being sent: the reader callback's state, freed with the response (once its
/// last chunk was sent, or its connection closed).
struct StreamReader {
  std::shared_ptr<EventStream> stream;
  MHD_Connection* connection;
  LiveStreams* live;
};

/// Sends what the stream has; with nothing to send it suspends the connection until the next
/// push (returning 0 without suspending would make the polling thread spin).
ssize_t read_stream(void* cls, std::uint64_t, char* buffer, size_t max) {
  auto* reader = static_cast<StreamReader*>(cls);
  MHD_Connection* connection = reader->connection;
  std::ptrdiff_t count = reader->stream->read(
      buffer, max, [connection] { MHD_suspend_connection(connection); },
      [connection] { MHD_resume_connection(connection); });
  return count < 0 ? MHD_CONTENT_READER_END_OF_STREAM : static_cast<ssize_t>(count);
}

void free_stream(void* cls) {
  auto* reader = static_cast<StreamReader*>(cls);
  reader->stream->detach();  // the connection is going: never resume it again
  LiveStreams* live = reader->live;
  delete reader;
  live->remove();
}

/// Queues `reply` (made from `response`'s body or stream) with the response's status and headers.
MHD_Result queue_reply(MHD_Connection* connection, const HttpResponse& response, MHD_Response* reply) {
  for (const auto& header : response.headers) MHD_add_response_header(reply, header.name.c_str(), header.value.c_str());
  MHD_Result queued = MHD_queue_response(connection, static_cast<unsigned int>(response.status), reply);
  MHD_destroy_response(reply);
  return queued;
}

MHD_Result send_response(MHD_Connection* connection, HttpResponse response, LiveStreams& live) {
  if (response.stream) {
    auto* reader = new StreamReader{std::move(response.stream), connection, &live};
    live.add();
    MHD_Response* reply = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 4096, &read_stream, reader, &free_stream);
    if (reply == nullptr) {
      delete reader;
      live.remove();
      return MHD_NO;
    }
    return queue_reply(connection, response, reply);
  }
  auto* body = new std::string(std::move(response.body));
  MHD_Response* reply =
      MHD_create_response_from_buffer_with_free_callback_cls(body->size(), body->data(), &delete_string, body);
  if (reply == nullptr) {
    delete body;
    return MHD_NO;
  }
  return queue_reply(connection, response, reply);
}

void log_from_mhd(void*, const char* format, va_list arguments) {
  char line[512];
  std::vsnprintf(line, sizeof line, format, arguments);
  std::string_view text(line);
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.remove_suffix(1);
  log::debug("libmicrohttpd: " + std::string(text));
}

}  // namespace

struct HttpServer::Impl {
  HttpExchange exchange;
  const HttpOptions& options;
  int listen_fd = -1;
  bool ipv6 = false;
  int bound_port = 0;
  MHD_Daemon* daemon = nullptr;

  // stop() → run()
  std::mutex run_mutex;
  std::condition_variable run_wakeup;
  bool stop_requested = false;

  // The work queue.
  std::mutex queue_mutex;
  std::condition_variable queue_wakeup;
  std::deque<RequestState*> ready;
  /// Sessions with a request running or ready, and their later requests, in arrival order.
  std::unordered_map<std::string, std::deque<RequestState*>> session_lines;
  bool draining = false;  // run() is ending: no new request is queued
  std::vector<std::thread> workers;

  LiveStreams live_streams;

  // Open connections, for the deadline sweep.
  std::mutex connections_mutex;
  std::unordered_set<ConnectionState*> connections;

  Impl(const Protocol& protocol, RouterFactory make_router, HttpOptions o, std::shared_ptr<Dashboard> dashboard)
      : exchange(protocol, std::move(make_router), std::move(o), std::move(dashboard)), options(exchange.options()) {}

  // ---- libmicrohttpd callbacks (polling threads) ----

  static void on_connection(void* cls, MHD_Connection* connection, void** socket_context,
                            MHD_ConnectionNotificationCode code) {
    auto* impl = static_cast<Impl*>(cls);
    if (code == MHD_CONNECTION_NOTIFY_STARTED) {
      auto* state = new ConnectionState;
      const MHD_ConnectionInfo* info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
      state->fd = info != nullptr ? info->connect_fd : -1;
      set_deadline(state, impl->options.idle_timeout_seconds, "waiting for a request");
      *socket_context = state;
      std::lock_guard lock(impl->connections_mutex);
      impl->connections.insert(state);
    } else if (code == MHD_CONNECTION_NOTIFY_CLOSED) {
      auto* state = static_cast<ConnectionState*>(*socket_context);
      if (state == nullptr) return;
      {
        std::lock_guard lock(impl->connections_mutex);
        impl->connections.erase(state);
      }
      delete state;
      *socket_context = nullptr;
    }
  }

  /// Called once the request line has arrived: the headers' deadline starts.
  static void* on_request_line(void* cls, const char*, MHD_Connection* connection) {
    auto* impl = static_cast<Impl*>(cls);
    auto* request = new RequestState;
    request->connection = connection;
    const MHD_ConnectionInfo* info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    request->state = info != nullptr ? static_cast<ConnectionState*>(info->socket_context) : nullptr;
    set_deadline(request->state, impl->options.header_timeout_seconds, "receiving request headers");
    return request;
  }

  static void on_completed(void* cls, MHD_Connection*, void** request_context, MHD_RequestTerminationCode) {
    auto* impl = static_cast<Impl*>(cls);
    auto* request = static_cast<RequestState*>(*request_context);
    if (request == nullptr) return;
    set_deadline(request->state, impl->options.idle_timeout_seconds, "waiting for a request");
    delete request;
    *request_context = nullptr;
  }

  static MHD_Result on_request(void* cls, MHD_Connection* connection, const char* url, const char* method,
                               const char* version, const char* upload_data, size_t* upload_data_size,
                               void** request_context) {
    auto* impl = static_cast<Impl*>(cls);
    auto* request = static_cast<RequestState*>(*request_context);
    if (request == nullptr) {  // not expected: on_request_line runs first
      *request_context = request = static_cast<RequestState*>(on_request_line(cls, url, connection));
    }
    if (!request->head_seen) {  // first call: request line and headers are complete
      request->head_seen = true;
      request->request.method = method;
      request->request.path = url;
      request->request.version = version;
      MHD_get_connection_values_n(connection, MHD_HEADER_KIND, &collect_header, &request->request.headers);
      set_deadline(request->state, impl->options.body_timeout_seconds, "receiving the request body");
      if (auto refused = impl->exchange.check_head(request->request)) return send_response(connection, std::move(*refused), impl->live_streams);
      return MHD_YES;
    }
    if (*upload_data_size != 0) {
      // Keep at most one byte past the limit: HttpExchange answers 413 (a chunked body has no
      // length to refuse up front), and the rest is read and dropped, within the body deadline.
      std::string& body = request->request.body;
      std::size_t limit = impl->options.max_body_bytes + 1;
      if (body.size() < limit) body.append(upload_data, std::min(*upload_data_size, limit - body.size()));
      *upload_data_size = 0;
      return MHD_YES;
    }
    if (!request->dispatched) {
      request->dispatched = true;
      set_deadline(request->state, 0, "");
      if (!impl->enqueue(request)) {
        HttpResponse busy;
        busy.status = 503;
        busy.headers = {{"Content-Type", "application/json"}, {"Connection", "close"}};
        busy.body = rpc_error("null", RpcError::InternalError, "Service Unavailable: the server is stopping");
        return send_response(connection, std::move(busy), impl->live_streams);
      }
      return MHD_YES;
    }
    // Resumed by a worker: the reply is ready.
    if (!request->answered.load(std::memory_order_acquire)) return MHD_YES;  // spurious wake-up
    return send_response(connection, std::move(request->response), impl->live_streams);
  }

  // ---- the work queue ----

  /// Suspends the request's connection and queues it; false when the server is stopping.
  bool enqueue(RequestState* request) {
    if (auto session = find_header(request->request.headers, "Mcp-Session-Id")) request->session_key = *session;
    {
      std::lock_guard lock(queue_mutex);
      if (draining) return false;
      MHD_suspend_connection(request->connection);
      if (!request->session_key.empty()) {
        auto [line, first] = session_lines.try_emplace(request->session_key);
        if (!first) {  // the session is busy: wait behind its earlier requests
          line->second.push_back(request);
          return true;
        }
      }
      ready.push_back(request);
    }
    queue_wakeup.notify_one();  // after unlocking: the woken worker does not block on the mutex
    return true;
  }

  void work() {
    std::string finished_session;  // the session whose request this worker last ran
    while (true) {
      RequestState* request = nullptr;
      {
        std::unique_lock lock(queue_mutex);
        // One lock per request: let the finished session's next request in, then take one.
        if (!finished_session.empty()) {
          auto line = session_lines.find(finished_session);
          if (line != session_lines.end()) {
            if (line->second.empty()) {
              session_lines.erase(line);
            } else {
              ready.push_back(line->second.front());
              line->second.pop_front();
              if (ready.size() > 1) queue_wakeup.notify_one();
            }
          }
          finished_session.clear();
        }
        queue_wakeup.wait(lock, [this] { return !ready.empty() || draining; });
        if (ready.empty()) return;  // draining, and nothing is left
        request = ready.front();
        ready.pop_front();
      }
      request->response = exchange.handle(request->request);
      finished_session = std::move(request->session_key);
      MHD_Connection* connection = request->connection;
      request->answered.store(true, std::memory_order_release);
      MHD_resume_connection(connection);  // `request` belongs to the polling thread from here on
    }
  }

  // ---- deadlines ----

  void sweep() {
    std::int64_t now = now_ns();
    std::lock_guard lock(connections_mutex);
    for (ConnectionState* state : connections) {
      std::int64_t deadline = state->deadline.load(std::memory_order_relaxed);
      if (deadline == 0 || now < deadline || state->cut || state->fd < 0) continue;
      state->cut = true;
      log::info(std::string("closing an HTTP connection: deadline passed while ") +
                state->phase.load(std::memory_order_relaxed));
      ::shutdown(state->fd, SHUT_RDWR);
    }
  }
};

HttpServer::HttpServer(const Protocol& protocol, RouterFactory make_router, HttpOptions options,
                       std::shared_ptr<Dashboard> dashboard)
    : impl_(std::make_unique<Impl>(protocol, std::move(make_router), std::move(options), std::move(dashboard))) {}

HttpServer::~HttpServer() {
  stop();
  if (impl_->listen_fd >= 0 && impl_->daemon == nullptr) ::close(impl_->listen_fd);
}

Result<void> HttpServer::bind() {
  const HttpOptions& options = impl_->options;
  auto failure = [&](const std::string& reason) {
    return fail(Error(ErrorCode::FileError, "cannot listen on " + options.host + ":" + std::to_string(options.port) +
                                                (reason.empty() ? "" : ": " + reason))
                    .with_fix("choose another port with --port, or stop the program using it"));
  };
  if (impl_->listen_fd >= 0) return failure("already bound");
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* addresses = nullptr;
  std::string port = std::to_string(options.port);
  if (int rc = ::getaddrinfo(options.host.empty() ? nullptr : options.host.c_str(), port.c_str(), &hints, &addresses);
      rc != 0)
    return failure(::gai_strerror(rc));
  std::string reason;
  for (addrinfo* address = addresses; address != nullptr; address = address->ai_next) {
    int fd = ::socket(address->ai_family, address->ai_socktype | SOCK_CLOEXEC, address->ai_protocol);
    if (fd < 0) {
      reason = std::strerror(errno);
      continue;
    }
    int on = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
    if (::bind(fd, address->ai_addr, address->ai_addrlen) != 0 || ::listen(fd, SOMAXCONN) != 0) {
      reason = std::strerror(errno);
      ::close(fd);
      continue;
    }
    sockaddr_storage bound{};
    socklen_t length = sizeof bound;
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &length);
    impl_->ipv6 = bound.ss_family == AF_INET6;
    impl_->bound_port = ntohs(impl_->ipv6 ? reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port
                                          : reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
    impl_->listen_fd = fd;
    break;
  }
  ::freeaddrinfo(addresses);
  if (impl_->listen_fd < 0) return failure(reason);
  return {};
}

int HttpServer::port() const { return impl_->bound_port; }

void HttpServer::run() {
  Impl& s = *impl_;
  {
    std::lock_guard lock(s.run_mutex);
    if (s.stop_requested || s.listen_fd < 0 || s.daemon != nullptr) return;
  }
  const HttpOptions& o = s.options;
  auto item = [](MHD_OPTION option, std::intptr_t value, void* pointer = nullptr) {
    return MHD_OptionItem{option, value, pointer};
  };
  std::vector<MHD_OptionItem> items = {
      item(MHD_OPTION_LISTEN_SOCKET, s.listen_fd),
      item(MHD_OPTION_CONNECTION_LIMIT, static_cast<std::intptr_t>(o.max_connections)),
      item(MHD_OPTION_CONNECTION_MEMORY_LIMIT, static_cast<std::intptr_t>(o.max_header_bytes)),
      item(MHD_OPTION_CONNECTION_TIMEOUT, std::max(0, o.idle_timeout_seconds)),
      item(MHD_OPTION_NOTIFY_CONNECTION, reinterpret_cast<std::intptr_t>(&Impl::on_connection), &s),
      item(MHD_OPTION_URI_LOG_CALLBACK, reinterpret_cast<std::intptr_t>(&Impl::on_request_line), &s),
      item(MHD_OPTION_NOTIFY_COMPLETED, reinterpret_cast<std::intptr_t>(&Impl::on_completed), &s),
      item(MHD_OPTION_EXTERNAL_LOGGER, reinterpret_cast<std::intptr_t>(&log_from_mhd), nullptr),
  };
  if (o.io_threads > 1) items.push_back(item(MHD_OPTION_THREAD_POOL_SIZE, o.io_threads));
  items.push_back(item(MHD_OPTION_END, 0));
  unsigned int flags = MHD_USE_EPOLL_INTERNAL_THREAD | MHD_ALLOW_SUSPEND_RESUME | MHD_USE_ERROR_LOG;
  if (s.ipv6) flags |= MHD_USE_IPv6;
  s.daemon = MHD_start_daemon(flags, 0, nullptr, nullptr, &Impl::on_request, &s, MHD_OPTION_ARRAY, items.data(),
                              MHD_OPTION_END);
  if (s.daemon == nullptr) {
    log::error("cannot start the HTTP server (libmicrohttpd)");
    s.listen_fd = -1;  // libmicrohttpd may have closed it already: leave it rather than close twice
    return;
  }
  int workers = o.workers(false);  // ct serve has resolved its store's default already
  for (int i = 0; i < workers; ++i) s.workers.emplace_back([&s] { s.work(); });

  {
    std::unique_lock lock(s.run_mutex);
    while (!s.stop_requested) {
      s.run_wakeup.wait_for(lock, kSweepInterval);
      lock.unlock();
      s.sweep();
      lock.lock();
    }
  }

  // Stop: no new request is queued (they get 503), event streams end (which resumes their
  // connections), the workers finish what is queued and resume every suspended connection, then
  // libmicrohttpd closes all connections and the socket.
  if (Dashboard* dashboard = s.exchange.dashboard()) dashboard->stop();
  s.exchange.stop_streams();
  {
    std::lock_guard lock(s.queue_mutex);
    s.draining = true;
  }
  s.queue_wakeup.notify_all();
  for (auto& worker : s.workers) worker.join();
  s.workers.clear();
  // Ended streams send their last chunk from libmicrohttpd's thread; a peer that does not read
  // cannot hold the stop longer than this.
  s.live_streams.wait_idle(std::chrono::seconds(1));
  MHD_stop_daemon(s.daemon);  // closes listen_fd
  s.listen_fd = -1;
}

void HttpServer::stop() {
  {
    std::lock_guard lock(impl_->run_mutex);
    impl_->stop_requested = true;
  }
  impl_->run_wakeup.notify_all();
}

std::string HttpServer::url() const {
  std::string host = impl_->options.host;
  if (host.find(':') != std::string::npos && host.front() != '[') host = "[" + host + "]";
  return "http://" + host + ":" + std::to_string(impl_->bound_port) + "/mcp";
}

}  // namespace ct::mcp
