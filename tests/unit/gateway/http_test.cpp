// Streamable HTTP: the session rules and the security checks, against a real server on a
// loopback port.
#include <catch2/catch.hpp>
#include <httplib.h>

#include <thread>

#include "core/version.h"
#include "gateway/http_transport.h"
#include "unit/test_support.h"
#include "disclosure/product.h"

using namespace ct;
using namespace ct::mcp;

namespace {

constexpr const char* kInit =
    R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"test","version":"1"}}})";

struct Server {
  test::Project project;
  Protocol protocol{registry(), ServerInfo{"cleo", std::string(product_version()), "hi"}};
  HttpServer http;
  std::thread thread;

  explicit Server(HttpOptions options = {})
      : http(protocol,
             [this] {
               RouterOptions router_options;
               router_options.project_dir = project.dir();
               return std::make_unique<Router>(registry(), router_options, std::make_unique<SystemClock>());
             },
             with_port_zero(std::move(options))) {
    REQUIRE(http.bind());
    thread = std::thread([this] { http.run(); });
    for (int i = 0; i < 200; ++i) {  // wait until it accepts
      httplib::Client probe("127.0.0.1", http.port());
      if (probe.Get("/health")) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }
  ~Server() {
    http.stop();
    thread.join();
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
};

}  // namespace

TEST_CASE("HTTP: initialize issues a session; requests need it", "[http]") {
  Server s;
  std::string session = s.initialize();
  CHECK(session.size() == 32);
  for (char c : session) CHECK((c >= 0x21 && c <= 0x7E));
  auto c = s.client();
  auto notified = c.Post("/mcp", s.headers(session), R"({"jsonrpc":"2.0","method":"notifications/initialized"})",
                         "application/json");
  CHECK(notified->status == 202);
  CHECK(notified->body.empty());
  auto listed = c.Post("/mcp", s.headers(session), R"({"jsonrpc":"2.0","id":2,"method":"tools/list"})",
                       "application/json");
  CHECK(listed->status == 200);
  CHECK(listed->get_header_value("Content-Type").find("application/json") == 0);
  auto no_session = c.Post("/mcp", s.headers(), R"({"jsonrpc":"2.0","id":3,"method":"ping"})", "application/json");
  CHECK(no_session->status == 400);
  auto unknown = c.Post("/mcp", s.headers("nope"), R"({"jsonrpc":"2.0","id":3,"method":"ping"})", "application/json");
  CHECK(unknown->status == 404);
  auto bad_version = s.headers(session);
  bad_version.erase("MCP-Protocol-Version");
  bad_version.emplace("MCP-Protocol-Version", "2099-01-01");
  CHECK(c.Post("/mcp", bad_version, R"({"jsonrpc":"2.0","id":4,"method":"ping"})", "application/json")->status == 400);
  CHECK(c.Get("/mcp", s.headers(session))->status == 405);
  CHECK(c.Delete("/mcp", s.headers(session))->status == 204);
  CHECK(c.Post("/mcp", s.headers(session), R"({"jsonrpc":"2.0","id":5,"method":"ping"})", "application/json")->status ==
        404);
}

TEST_CASE("HTTP: tool calls work end to end", "[http]") {
  Server s;
  std::string session = s.initialize();
  auto c = s.client();
  auto res = c.Post("/mcp", s.headers(session),
                    R"({"jsonrpc":"2.0","id":"x","method":"tools/call","params":{"name":"cleo_mutate","arguments":{"domain":"tasks","operation":"add","params":{"title":"Over HTTP"}}}})",
                    "application/json");
  REQUIRE(res->status == 200);
  auto reply = test::parse_json(res->body);
  CHECK(reply["id"].as_string() == "x");
  CHECK(reply["result"]["structuredContent"]["data"]["id"].as_string() == "T001");
}

TEST_CASE("HTTP: foreign origins and hosts are refused (DNS rebinding)", "[http][security]") {
  Server s;
  auto c = s.client();
  auto h = s.headers();
  h.emplace("Origin", "https://evil.example");
  CHECK(c.Post("/mcp", h, kInit, "application/json")->status == 403);
  auto local = s.headers();
  local.emplace("Origin", "http://localhost:5173");
  CHECK(c.Post("/mcp", local, kInit, "application/json")->status == 200);
  auto rebinding = s.headers();
  rebinding.emplace("Host", "evil.example:8808");
  CHECK(c.Post("/mcp", rebinding, kInit, "application/json")->status == 403);
}

TEST_CASE("HTTP: configured origins are allowed", "[http][security]") {
  HttpOptions options;
  options.allowed_origins = {"https://app.example"};
  Server s(options);
  auto c = s.client();
  auto h = s.headers();
  h.emplace("Origin", "https://app.example");
  CHECK(c.Post("/mcp", h, kInit, "application/json")->status == 200);
}

TEST_CASE("HTTP: bearer token", "[http][security]") {
  HttpOptions options;
  options.token = "s3cret";
  Server s(options);
  auto c = s.client();
  auto missing = c.Post("/mcp", s.headers(), kInit, "application/json");
  CHECK(missing->status == 401);
  CHECK(missing->get_header_value("WWW-Authenticate").find("Bearer") == 0);
  auto wrong = s.headers();
  wrong.emplace("Authorization", "Bearer nope");
  CHECK(c.Post("/mcp", wrong, kInit, "application/json")->status == 401);
  auto right = s.headers();
  right.emplace("Authorization", "Bearer s3cret");
  CHECK(c.Post("/mcp", right, kInit, "application/json")->status == 200);
}

TEST_CASE("HTTP: malformed, oversized and unacceptable requests; the server keeps serving", "[http]") {
  HttpOptions options;
  options.max_body_bytes = 1024;
  Server s(options);
  auto c = s.client();
  auto garbage = c.Post("/mcp", s.headers(), "{nope", "application/json");
  CHECK(garbage->status == 400);
  CHECK(test::parse_json(garbage->body)["error"]["code"].as_int() == -32700);
  auto big = c.Post("/mcp", s.headers(), std::string(4096, ' ') + kInit, "application/json");
  CHECK(big->status == 413);
  httplib::Headers sse_only{{"Accept", "text/event-stream"}};
  CHECK(c.Post("/mcp", sse_only, kInit, "application/json")->status == 406);
  CHECK(c.Post("/mcp", s.headers(), kInit, "text/plain")->status == 415);
  CHECK(c.Post("/elsewhere", s.headers(), kInit, "application/json")->status == 404);
  // A client that sends half a request and disconnects.
  {
    httplib::Client impatient("127.0.0.1", s.http.port());
    impatient.set_read_timeout(0, 100000);
    impatient.set_write_timeout(0, 100000);
  }
  CHECK(!s.initialize().empty());
}

TEST_CASE("HTTP: concurrent clients are served in parallel", "[http]") {
  Server s;
  std::vector<std::thread> clients;
  std::atomic<int> ok{0};
  for (int i = 0; i < 8; ++i) {
    clients.emplace_back([&, i] {
      std::string session;
      {
        httplib::Client c("127.0.0.1", s.http.port());
        auto res = c.Post("/mcp", s.headers(), kInit, "application/json");
        if (!res || res->status != 200) return;
        session = res->get_header_value("Mcp-Session-Id");
      }
      httplib::Client c("127.0.0.1", s.http.port());
      for (int j = 0; j < 10; ++j) {
        std::string body = R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"cleo_mutate","arguments":{"domain":"tasks","operation":"add","params":{"title":"Client )" +
                           std::to_string(i) + " task " + std::to_string(j) + R"("}}}})";
        auto res = c.Post("/mcp", s.headers(session), body, "application/json");
        if (res && res->status == 200 && res->body.find("\"isError\":false") != std::string::npos) ++ok;
      }
    });
  }
  for (auto& t : clients) t.join();
  CHECK(ok == 80);
  auto c = s.client();
  std::string session = s.initialize();
  auto res = c.Post("/mcp", s.headers(session),
                    R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"cleo_query","arguments":{"domain":"tasks","operation":"stats"}}})",
                    "application/json");
  CHECK(test::parse_json(res->body)["result"]["structuredContent"]["data"]["total"].as_int() == 80);
}
