// Streamable HTTP: the session rules and the security checks, against a real server on a
// loopback port; then what the event-driven server adds: RFC 9112 request checks, slow and idle
// peers, many keep-alive clients, requests running in parallel and a prompt stop.
#include <catch2/catch.hpp>
#include <httplib.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <optional>
#include <thread>
#include <utility>

#include "core/text.h"
#include "core/version.h"
#include "gateway/product.h"
#include "gateway/http_transport.h"
#include "unit/test_support.h"

using namespace ct;
using namespace ct::mcp;
using Steady = std::chrono::steady_clock;
using namespace std::chrono_literals;

namespace {

constexpr const char* kInit =
    R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"test","version":"1"}}})";
constexpr const char* kStats =
    R"({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"cleo_query","arguments":{"domain":"tasks","operation":"stats"}}})";

double seconds_since(Steady::time_point start) { return std::chrono::duration<double>(Steady::now() - start).count(); }

struct Server {
  test::Project project;
  Protocol protocol{registry(), ServerInfo{"cleo", std::string(product_version()), "hi"}};
  HttpServer http;
  std::thread thread;

  explicit Server(HttpOptions options = {})
      : http(protocol,
             [this] {
               RouterOptions router_options;
               return std::make_unique<Router>(registry(), project.workspace(), router_options, std::make_unique<SystemClock>());
             },
             with_port_zero(std::move(options))) {
    REQUIRE(http.bind());
    thread = std::thread([this] { http.run(); });
  }
  ~Server() { stop(); }
  void stop() {
    http.stop();
    if (thread.joinable()) thread.join();
  }
  static HttpOptions with_port_zero(HttpOptions o) {
    o.port = 0;
    return o;
  }
  httplib::Client client() {
    httplib::Client c("127.0.0.1", http.port());
    c.set_read_timeout(5, 0);
    return c;
  }
  httplib::Headers headers(std::string session = "") {
    httplib::Headers h{{"Accept", "application/json, text/event-stream"}};
    if (!session.empty()) {
      h.emplace("Mcp-Session-Id", session);
      h.emplace("MCP-Protocol-Version", "2025-11-25");
    }
    return h;
  }
  std::string initialize() {
    auto c = client();
    auto res = c.Post("/mcp", headers(), kInit, "application/json");
    REQUIRE(res);
    REQUIRE(res->status == 200);
    return res->get_header_value("Mcp-Session-Id");
  }
  std::string db_path() const { return (project.dir() / ".cleo" / "tasks.db").string(); }
};

/// The response of a request that must have been answered: a failed connection fails the test.
httplib::Response must(httplib::Result result) {
  INFO("HTTP error: " << httplib::to_string(result.error()));
  REQUIRE(result);
  return *result;
}

/// A raw TCP client, for what httplib's client will not send (no Host, two Hosts, huge
/// Content-Length) and for sockets that stay idle or send slowly.
class Raw {
 public:
  struct Response {
    int status = 0;
    std::string head;
    std::string body;
  };

  explicit Raw(int port) {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(static_cast<std::uint16_t>(port));
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    connected_ = fd_ >= 0 && ::connect(fd_, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0;
  }
  ~Raw() {
    if (fd_ >= 0) ::close(fd_);
  }
  Raw(const Raw&) = delete;
  Raw& operator=(const Raw&) = delete;
  Raw(Raw&& other) noexcept : fd_(std::exchange(other.fd_, -1)), connected_(other.connected_), buffer_(std::move(other.buffer_)) {}

  bool connected() const { return connected_; }

  bool send(std::string_view data) {
    while (!data.empty()) {
      ssize_t n = ::send(fd_, data.data(), data.size(), MSG_NOSIGNAL);
      if (n <= 0) return false;
      data.remove_prefix(static_cast<std::size_t>(n));
    }
    return true;
  }

  /// One response (head and a Content-Length body), or none within `timeout`.
  std::optional<Response> read_response(std::chrono::milliseconds timeout) {
    auto deadline = Steady::now() + timeout;
    std::size_t head_end;
    while ((head_end = buffer_.find("\r\n\r\n")) == std::string::npos)
      if (!fill(deadline)) return std::nullopt;
    Response response;
    response.head = buffer_.substr(0, head_end + 2);
    if (response.head.size() > 12) response.status = std::atoi(response.head.c_str() + 9);
    std::size_t length = 0;
    std::string lower = to_lower_ascii(response.head);
    if (auto at = lower.find("\r\ncontent-length:"); at != std::string::npos)
      length = std::strtoul(lower.c_str() + at + 17, nullptr, 10);
    while (buffer_.size() < head_end + 4 + length)
      if (!fill(deadline)) return std::nullopt;
    response.body = buffer_.substr(head_end + 4, length);
    buffer_.erase(0, head_end + 4 + length);
    return response;
  }

  /// True when the server closes the connection (end of stream or reset) within `timeout`.
  bool closed_within(std::chrono::milliseconds timeout) {
    auto deadline = Steady::now() + timeout;
    while (true) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Steady::now()).count();
      if (left <= 0) return false;
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, static_cast<int>(left)) <= 0) continue;
      char chunk[4096];
      ssize_t n = ::recv(fd_, chunk, sizeof chunk, 0);
      if (n <= 0) return true;
    }
  }

 private:
  bool fill(Steady::time_point deadline) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Steady::now()).count();
    if (left <= 0) return false;
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(left)) <= 0) return false;
    char chunk[16384];
    ssize_t n = ::recv(fd_, chunk, sizeof chunk, 0);
    if (n <= 0) return false;
    buffer_.append(chunk, static_cast<std::size_t>(n));
    return true;
  }

  int fd_ = -1;
  bool connected_ = false;
  std::string buffer_;
};

std::string raw_post(std::string_view body, std::string_view extra_headers = "", std::string_view version = "HTTP/1.1",
                     bool with_host = true) {
  std::string request = "POST /mcp " + std::string(version) + "\r\n";
  if (with_host) request += "Host: 127.0.0.1\r\n";
  request += "Accept: application/json\r\nContent-Type: application/json\r\n";
  request += "Content-Length: " + std::to_string(body.size()) + "\r\n";
  request += extra_headers;
  request += "\r\n";
  request += body;
  return request;
}

}  // namespace

TEST_CASE("HTTP: initialize issues a session; requests need it", "[http]") {
  Server s;
  std::string session = s.initialize();
  CHECK(session.size() == 32);
  for (char c : session) CHECK((c >= 0x21 && c <= 0x7E));
  auto c = s.client();
  auto notified = must(c.Post("/mcp", s.headers(session), R"({"jsonrpc":"2.0","method":"notifications/initialized"})",
                              "application/json"));
  CHECK(notified.status == 202);
  CHECK(notified.body.empty());
  auto listed = must(c.Post("/mcp", s.headers(session), R"({"jsonrpc":"2.0","id":2,"method":"tools/list"})",
                            "application/json"));
  CHECK(listed.status == 200);
  CHECK(listed.get_header_value("Content-Type").find("application/json") == 0);
  auto no_session = must(c.Post("/mcp", s.headers(), R"({"jsonrpc":"2.0","id":3,"method":"ping"})", "application/json"));
  CHECK(no_session.status == 400);
  auto unknown = must(c.Post("/mcp", s.headers("nope"), R"({"jsonrpc":"2.0","id":3,"method":"ping"})", "application/json"));
  CHECK(unknown.status == 404);
  auto bad_version = s.headers(session);
  bad_version.erase("MCP-Protocol-Version");
  bad_version.emplace("MCP-Protocol-Version", "2099-01-01");
  CHECK(must(c.Post("/mcp", bad_version, R"({"jsonrpc":"2.0","id":4,"method":"ping"})", "application/json")).status == 400);
  // GET is the session's notification stream (http_exchange_test.cpp follows one): it must accept
  // text/event-stream.
  auto json_only = s.headers(session);
  json_only.erase("Accept");
  json_only.emplace("Accept", "application/json");
  CHECK(must(c.Get("/mcp", json_only)).status == 406);
  CHECK(must(c.Delete("/mcp", s.headers(session))).status == 204);
  CHECK(must(c.Post("/mcp", s.headers(session), R"({"jsonrpc":"2.0","id":5,"method":"ping"})", "application/json"))
            .status == 404);
}

TEST_CASE("HTTP: refusals before the protocol runs echo the request's id", "[http]") {
  Server s;
  auto c = s.client();
  // No Mcp-Session-Id on a tools/call with id 7.
  auto no_session = must(c.Post("/mcp", s.headers(), R"({"jsonrpc":"2.0","id":7,"method":"tools/call","params":{}})",
                                "application/json"));
  CHECK(no_session.status == 400);
  auto reply = test::parse_json(no_session.body);
  CHECK(reply["id"].as_int() == 7);
  CHECK(reply["error"]["code"].as_int() == -32600);
  // A string id, an unknown session, an unsupported protocol version.
  auto unknown = must(c.Post("/mcp", s.headers("nope"), R"({"jsonrpc":"2.0","id":"a-1","method":"ping"})",
                             "application/json"));
  CHECK(unknown.status == 404);
  CHECK(test::parse_json(unknown.body)["id"].as_string() == "a-1");
  std::string session = s.initialize();
  auto bad_version = s.headers(session);
  bad_version.erase("MCP-Protocol-Version");
  bad_version.emplace("MCP-Protocol-Version", "2099-01-01");
  auto version = must(c.Post("/mcp", bad_version, R"({"jsonrpc":"2.0","id":8.5,"method":"ping"})", "application/json"));
  CHECK(version.status == 400);
  CHECK(test::parse_json(version.body)["id"].as_double() == 8.5);
  // An id that is not a string or a number, and a body that is not an object: null.
  auto odd = must(c.Post("/mcp", s.headers(), R"({"jsonrpc":"2.0","id":{"x":1},"method":"ping"})", "application/json"));
  CHECK(odd.status == 400);
  CHECK(test::parse_json(odd.body)["id"].is_null());
  auto batch = must(c.Post("/mcp", s.headers(), R"([{"jsonrpc":"2.0","id":9,"method":"ping"}])", "application/json"));
  CHECK(batch.status == 400);
  CHECK(test::parse_json(batch.body)["id"].is_null());
}

TEST_CASE("HTTP: tool calls work end to end", "[http]") {
  Server s;
  std::string session = s.initialize();
  auto c = s.client();
  auto res = must(c.Post("/mcp", s.headers(session),
                         R"({"jsonrpc":"2.0","id":"x","method":"tools/call","params":{"name":"cleo_mutate","arguments":{"domain":"tasks","operation":"add","params":{"title":"Over HTTP"}}}})",
                         "application/json"));
  REQUIRE(res.status == 200);
  auto reply = test::parse_json(res.body);
  CHECK(reply["id"].as_string() == "x");
  CHECK(reply["result"]["structuredContent"]["data"]["id"].as_string() == "T001");
}

TEST_CASE("HTTP: foreign origins and hosts are refused (DNS rebinding)", "[http][security]") {
  Server s;
  auto c = s.client();
  auto h = s.headers();
  h.emplace("Origin", "https://evil.example");
  CHECK(must(c.Post("/mcp", h, kInit, "application/json")).status == 403);
  auto local = s.headers();
  local.emplace("Origin", "http://localhost:5173");
  CHECK(must(c.Post("/mcp", local, kInit, "application/json")).status == 200);
  auto rebinding = s.headers();
  rebinding.emplace("Host", "evil.example:8808");
  CHECK(must(c.Post("/mcp", rebinding, kInit, "application/json")).status == 403);
}

TEST_CASE("HTTP: configured origins are allowed", "[http][security]") {
  HttpOptions options;
  options.allowed_origins = {"https://app.example"};
  Server s(options);
  auto c = s.client();
  auto h = s.headers();
  h.emplace("Origin", "https://app.example");
  CHECK(must(c.Post("/mcp", h, kInit, "application/json")).status == 200);
}

TEST_CASE("HTTP: bearer token, the scheme in any case", "[http][security]") {
  HttpOptions options;
  options.token = "s3cret";
  Server s(options);
  auto c = s.client();
  auto missing = must(c.Post("/mcp", s.headers(), kInit, "application/json"));
  CHECK(missing.status == 401);
  CHECK(missing.get_header_value("WWW-Authenticate") == R"(Bearer realm="cleo")");
  for (const char* wrong_value : {"Bearer nope", "Bearer", "Bearer ", "Basic s3cret", "s3cret", "Bearers3cret"}) {
    INFO(wrong_value);
    auto wrong = s.headers();
    wrong.emplace("Authorization", wrong_value);
    CHECK(must(c.Post("/mcp", wrong, kInit, "application/json")).status == 401);
  }
  for (const char* right_value : {"Bearer s3cret", "bearer s3cret", "BEARER s3cret", "bEaReR  s3cret"}) {
    INFO(right_value);
    auto right = s.headers();
    right.emplace("Authorization", right_value);
    CHECK(must(c.Post("/mcp", right, kInit, "application/json")).status == 200);
  }
}

TEST_CASE("HTTP: malformed, oversized and unacceptable requests; the server keeps serving", "[http]") {
  HttpOptions options;
  options.max_body_bytes = 1024;
  Server s(options);
  auto c = s.client();
  auto garbage = must(c.Post("/mcp", s.headers(), "{nope", "application/json"));
  CHECK(garbage.status == 400);
  CHECK(test::parse_json(garbage.body)["error"]["code"].as_int() == -32700);
  auto big = must(c.Post("/mcp", s.headers(), std::string(4096, ' ') + kInit, "application/json"));
  CHECK(big.status == 413);
  httplib::Headers sse_only{{"Accept", "text/event-stream"}};
  CHECK(must(c.Post("/mcp", sse_only, kInit, "application/json")).status == 406);
  CHECK(must(c.Post("/mcp", s.headers(), kInit, "text/plain")).status == 415);
  auto elsewhere = must(c.Post("/elsewhere", s.headers(), kInit, "application/json"));
  CHECK(elsewhere.status == 404);
  CHECK(test::parse_json(elsewhere.body)["error"]["code"].as_int() == -32600);
  // A chunked body has no length to refuse up front: 413 once it grows past the limit.
  {
    Raw raw(s.http.port());
    REQUIRE(raw.connected());
    std::string chunk(2000, ' ');
    char size[16];
    std::snprintf(size, sizeof size, "%zx", chunk.size());
    raw.send("POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n" +
             std::string(size) + "\r\n" + chunk + "\r\n0\r\n\r\n");
    auto reply = raw.read_response(5s);
    REQUIRE(reply);
    CHECK(reply->status == 413);
  }
  // A client that sends half a request and disconnects.
  {
    Raw raw(s.http.port());
    raw.send("POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100\r\n\r\n{\"jsonrpc\"");
  }
  CHECK(!s.initialize().empty());
}

TEST_CASE("HTTP: RFC 9112 request rules (Host, Content-Length)", "[http]") {
  Server s;
  SECTION("an HTTP/1.1 request without Host is refused with 400") {
    Raw raw(s.http.port());
    REQUIRE(raw.send(raw_post(kInit, "", "HTTP/1.1", false)));
    auto reply = raw.read_response(5s);
    REQUIRE(reply);
    CHECK(reply->status == 400);
  }
  SECTION("an HTTP/1.0 request needs no Host") {
    Raw raw(s.http.port());
    REQUIRE(raw.send(raw_post(kInit, "", "HTTP/1.0", false)));
    auto reply = raw.read_response(5s);
    REQUIRE(reply);
    CHECK(reply->status == 200);
  }
  SECTION("two Host headers are refused with 400, whatever their order") {
    for (const char* extra : {"Host: evil.example\r\n", "Host: 127.0.0.1\r\n"}) {
      Raw raw(s.http.port());
      REQUIRE(raw.send(raw_post(kInit, extra)));
      auto reply = raw.read_response(5s);
      REQUIRE(reply);
      CHECK(reply->status == 400);
    }
  }
  SECTION("a Content-Length too large for 64 bits gets an immediate answer, and the connection closes") {
    Raw raw(s.http.port());
    REQUIRE(raw.send("POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                     "Content-Length: 99999999999999999999\r\n\r\n{}"));
    auto reply = raw.read_response(5s);
    REQUIRE(reply);
    CHECK((reply->status == 400 || reply->status == 413));
    CHECK(raw.closed_within(5s));
  }
  SECTION("conflicting Content-Length headers are refused") {
    Raw raw(s.http.port());
    REQUIRE(raw.send(raw_post(kInit, "Content-Length: 3\r\n")));
    auto reply = raw.read_response(5s);
    REQUIRE(reply);
    CHECK(reply->status == 400);
  }
  CHECK(!s.initialize().empty());
}

TEST_CASE("HTTP: concurrent requests run in parallel (a read overtakes a write waiting for the lock)", "[http]") {
  Server s;
  std::string writer_session = s.initialize();
  std::string reader_session = s.initialize();
  // Another process holds the database's write lock: the server's tasks.add waits for it (up to
  // the busy timeout) on one worker while other requests go on.
  auto holder = test::backend_for(s.db_path())->open(StoreOptions{});
  REQUIRE(holder);
  REQUIRE((*holder)->begin(TxKind::Write));
  REQUIRE((*holder)->schema_version());  // PostgreSQL takes the lock with the first statement

  std::atomic<bool> write_answered{false};
  std::optional<httplib::Response> write_reply;
  Steady::time_point write_end;
  std::thread writer([&] {
    httplib::Client c("127.0.0.1", s.http.port());
    c.set_read_timeout(15, 0);
    auto result = c.Post("/mcp", s.headers(writer_session),
                         R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"cleo_mutate","arguments":{"domain":"tasks","operation":"add","params":{"title":"Waited for the lock"}}}})",
                         "application/json");
    write_end = Steady::now();
    if (result) write_reply = *result;
    write_answered = true;
  });
  std::this_thread::sleep_for(300ms);  // the write is now running, blocked on the lock
  auto c = s.client();
  auto read = c.Post("/mcp", s.headers(reader_session), kStats, "application/json");
  auto read_end = Steady::now();
  bool write_still_running = !write_answered;
  REQUIRE((*holder)->commit());
  writer.join();

  REQUIRE(read);
  CHECK(read->status == 200);
  CHECK(read->body.find(R"("isError":false)") != std::string::npos);
  CHECK(write_still_running);  // the two requests' handling overlapped
  REQUIRE(write_reply);
  CHECK(write_reply->status == 200);
  CHECK(write_reply->body.find(R"("isError":false)") != std::string::npos);
  CHECK(write_end > read_end);
}

TEST_CASE("HTTP: requests of one session run one at a time, in order", "[http]") {
  Server s;
  std::string session = s.initialize();
  constexpr int kClients = 4, kCalls = 10;
  std::atomic<int> ok{0};
  std::vector<std::thread> clients;
  for (int i = 0; i < kClients; ++i) {
    clients.emplace_back([&, i] {
      httplib::Client c("127.0.0.1", s.http.port());
      c.set_read_timeout(10, 0);
      for (int j = 0; j < kCalls; ++j) {
        std::string body = R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"cleo_mutate","arguments":{"domain":"tasks","operation":"add","params":{"title":"Shared session )" +
                           std::to_string(i) + " " + std::to_string(j) + R"("}}}})";
        auto res = c.Post("/mcp", s.headers(session), body, "application/json");
        if (res && res->status == 200 && res->body.find(R"("isError":false)") != std::string::npos) ++ok;
      }
    });
  }
  for (auto& t : clients) t.join();
  CHECK(ok == kClients * kCalls);
  auto c = s.client();
  auto res = must(c.Post("/mcp", s.headers(session), kStats, "application/json"));
  CHECK(test::parse_json(res.body)["result"]["structuredContent"]["data"]["total"].as_int() == kClients * kCalls);
}

TEST_CASE("HTTP: many concurrent keep-alive clients are all answered", "[http]") {
  Server s;
  constexpr int kClients = 100, kCalls = 5;
  std::atomic<int> ok{0};
  std::atomic<int> clients_answered{0};
  std::vector<std::thread> clients;
  for (int i = 0; i < kClients; ++i) {
    clients.emplace_back([&] {
      httplib::Client c("127.0.0.1", s.http.port());
      c.set_keep_alive(true);
      c.set_read_timeout(30, 0);
      c.set_connection_timeout(30, 0);
      auto init = c.Post("/mcp", s.headers(), kInit, "application/json");
      if (!init || init->status != 200) return;
      std::string session = init->get_header_value("Mcp-Session-Id");
      int mine = 0;
      for (int j = 0; j < kCalls; ++j) {
        auto res = c.Post("/mcp", s.headers(session), kStats, "application/json");
        if (res && res->status == 200 && res->body.find(R"("isError":false)") != std::string::npos) ++mine;
      }
      ok += mine;
      if (mine == kCalls) ++clients_answered;
    });
  }
  for (auto& t : clients) t.join();
  CHECK(clients_answered == kClients);
  CHECK(ok == kClients * kCalls);
}

TEST_CASE("HTTP: idle and slow-header sockets do not hold up other clients", "[http]") {
  Server s;
  std::vector<Raw> idle;
  for (int i = 0; i < 200; ++i) {
    idle.emplace_back(s.http.port());
    REQUIRE(idle.back().connected());
  }
  std::vector<Raw> slow;
  for (int i = 0; i < 16; ++i) {
    slow.emplace_back(s.http.port());
    REQUIRE(slow.back().connected());
    slow.back().send("POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n");
  }
  std::atomic<bool> done{false};
  std::thread dribbler([&] {  // a header line every 300 ms on each slow socket
    for (int line = 0; !done; ++line) {
      for (auto& socket : slow) socket.send("X-Slow-" + std::to_string(line) + ": 1\r\n");
      for (int i = 0; i < 30 && !done; ++i) std::this_thread::sleep_for(10ms);
    }
  });
  auto started = Steady::now();
  std::string session = s.initialize();
  auto c = s.client();
  auto res = c.Post("/mcp", s.headers(session), kStats, "application/json");
  double elapsed = seconds_since(started);
  done = true;
  dribbler.join();
  REQUIRE(res);
  CHECK(res->status == 200);
  CHECK(elapsed < 2.0);
}

TEST_CASE("HTTP: deadlines close slow-header and idle connections", "[http]") {
  HttpOptions options;
  options.header_timeout_seconds = 1;
  options.idle_timeout_seconds = 1;
  options.body_timeout_seconds = 1;
  Server s(options);
  Raw slow(s.http.port());
  Raw idle(s.http.port());
  Raw slow_body(s.http.port());
  REQUIRE(slow.connected());
  REQUIRE(idle.connected());
  REQUIRE(slow_body.connected());
  auto started = Steady::now();
  slow.send("POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n");
  slow_body.send("POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 1000\r\n\r\n{");
  // The slow sockets keep sending (so an inactivity timeout alone would never fire).
  std::atomic<bool> done{false};
  std::thread dribbler([&] {
    for (int line = 0; !done && line < 100; ++line) {
      slow.send("X-Slow-" + std::to_string(line) + ": 1\r\n");
      slow_body.send(" ");
      std::this_thread::sleep_for(100ms);
    }
  });
  CHECK(slow.closed_within(5s));
  CHECK(slow_body.closed_within(5s));
  CHECK(idle.closed_within(5s));
  done = true;
  dribbler.join();
  CHECK(seconds_since(started) < 5.0);
  CHECK(!s.initialize().empty());  // a normal client is still served
}

TEST_CASE("HTTP: stop() is prompt with idle keep-alive clients connected", "[http]") {
  Server s;
  std::vector<Raw> clients;
  for (int i = 0; i < 50; ++i) {
    clients.emplace_back(s.http.port());
    REQUIRE(clients.back().connected());
    REQUIRE(clients.back().send(raw_post(kInit)));
  }
  for (auto& client : clients) {
    auto reply = client.read_response(10s);
    REQUIRE(reply);
    CHECK(reply->status == 200);
  }
  auto started = Steady::now();
  s.stop();
  CHECK(seconds_since(started) < 1.0);
  for (auto& client : clients) CHECK(client.closed_within(2s));
}

TEST_CASE("HTTP: replies do not wait for the client's delayed ACK", "[http]") {
  // A reply written in two pieces with Nagle's algorithm on waits for the ACK of the first, which
  // the client delays by 40 ms (it has nothing to send): 20 calls would take 800 ms or more. The
  // client sets TCP_NODELAY, as curl and Node do (httplib's client also writes a request in two
  // pieces, a stall on its own side that no server can prevent).
  Server s;
  std::string session = s.initialize();
  httplib::Client c("127.0.0.1", s.http.port());
  c.set_keep_alive(true);
  c.set_tcp_nodelay(true);
  c.set_read_timeout(5, 0);
  auto started = Steady::now();
  for (int i = 0; i < 20; ++i) CHECK(must(c.Post("/mcp", s.headers(session), kStats, "application/json")).status == 200);
  CHECK(seconds_since(started) < 0.6);
}
