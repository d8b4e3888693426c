// HttpExchange: the HTTP request path after parsing, driven with plain structs and no sockets
// (the seam a fuzz target uses).
#include <catch2/catch.hpp>

#include <random>

#include "core/version.h"
#include "disclosure/product.h"
#include "gateway/http_exchange.h"
#include "unit/test_support.h"

using namespace ct;
using namespace ct::mcp;

namespace {

constexpr const char* kInit =
    R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"test","version":"1"}}})";

struct Endpoint {
  test::Project project;
  Protocol protocol{registry(), ServerInfo{"cleo", std::string(product_version()), "hi"}};
  HttpExchange exchange;

  explicit Endpoint(HttpOptions options = {})
      : exchange(protocol,
                 [this] {
                   RouterOptions router_options;
                   router_options.project_dir = project.dir();
                   return std::make_unique<Router>(registry(), router_options, std::make_unique<SystemClock>());
                 },
                 std::move(options)) {}

  static HttpRequest post(std::string body, std::vector<HttpHeader> extra = {}) {
    HttpRequest request{"POST", "/mcp", "HTTP/1.1", {{"Host", "127.0.0.1:8808"}, {"Accept", "application/json"},
                                                     {"Content-Type", "application/json"}},
                        std::move(body)};
    for (auto& header : extra) request.headers.push_back(std::move(header));
    return request;
  }
  std::string initialize() {
    HttpResponse response = exchange.handle(post(kInit));
    REQUIRE(response.status == 200);
    auto session = find_header(response.headers, "mcp-session-id");
    REQUIRE(session);
    return std::string(*session);
  }
};

}  // namespace

TEST_CASE("HttpExchange: initialize, a session, a tool call and DELETE without sockets", "[http][exchange]") {
  Endpoint e;
  std::string session = e.initialize();
  CHECK(session.size() == 32);
  CHECK(e.exchange.session_count() == 1);
  HttpResponse called = e.exchange.handle(Endpoint::post(
      R"({"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"cleo_mutate","arguments":{"domain":"tasks","operation":"add","params":{"title":"Seam"}}}})",
      {{"Mcp-Session-Id", session}, {"MCP-Protocol-Version", "2025-11-25"}}));
  CHECK(called.status == 200);
  CHECK(find_header(called.headers, "Content-Type") == "application/json");
  CHECK(test::parse_json(called.body)["result"]["structuredContent"]["data"]["id"].as_string() == "T001");
  HttpResponse notified = e.exchange.handle(
      Endpoint::post(R"({"jsonrpc":"2.0","method":"notifications/initialized"})", {{"Mcp-Session-Id", session}}));
  CHECK(notified.status == 202);
  CHECK(notified.body.empty());
  HttpRequest end{"DELETE", "/mcp", "HTTP/1.1", {{"Host", "localhost"}, {"Mcp-Session-Id", session}}, ""};
  CHECK(e.exchange.handle(end).status == 204);
  CHECK(e.exchange.session_count() == 0);
}

TEST_CASE("HttpExchange: Host rules (RFC 9112)", "[http][exchange]") {
  Endpoint e;
  HttpRequest two_hosts = Endpoint::post(kInit, {{"host", "evil.example"}});
  HttpResponse refused = e.exchange.handle(two_hosts);
  CHECK(refused.status == 400);
  CHECK(find_header(refused.headers, "Connection") == "close");
  HttpRequest no_host{"POST", "/mcp", "HTTP/1.1", {{"Content-Type", "application/json"}}, kInit};
  CHECK(e.exchange.handle(no_host).status == 400);
  CHECK(e.exchange.check_head(no_host));
  no_host.version = "HTTP/1.0";
  CHECK(e.exchange.handle(no_host).status == 200);
}

TEST_CASE("HttpExchange: framing and size are checked from the head alone", "[http][exchange]") {
  HttpOptions options;
  options.max_body_bytes = 100;
  Endpoint e(options);
  auto head = [](std::vector<HttpHeader> headers) {
    headers.insert(headers.begin(), {"Host", "127.0.0.1"});
    return HttpRequest{"POST", "/mcp", "HTTP/1.1", std::move(headers), ""};
  };
  CHECK(!e.exchange.check_head(head({{"Content-Length", "100"}})));
  CHECK(e.exchange.check_head(head({{"Content-Length", "101"}}))->status == 413);
  CHECK(e.exchange.check_head(head({{"Content-Length", "99999999999999999999"}}))->status == 413);
  CHECK(e.exchange.check_head(head({{"Content-Length", "12x"}}))->status == 400);
  CHECK(e.exchange.check_head(head({{"Content-Length", "5"}, {"Content-Length", "6"}}))->status == 400);
  CHECK(!e.exchange.check_head(head({{"Content-Length", "5"}, {"Content-Length", "5"}})));
  CHECK(e.exchange.check_head(head({{"Content-Length", "5"}, {"Transfer-Encoding", "chunked"}}))->status == 400);
  CHECK(e.exchange.check_head(head({{"Transfer-Encoding", "gzip"}}))->status == 501);
  CHECK(!e.exchange.check_head(head({{"Transfer-Encoding", "Chunked"}})));
  // A body past the limit (as a chunked body arrives) is refused when the whole request is seen.
  HttpResponse big = e.exchange.handle(Endpoint::post(std::string(101, ' ')));
  CHECK(big.status == 413);
  CHECK(find_header(big.headers, "Connection") == "close");
}

TEST_CASE("HttpExchange: refusals echo a readable request id", "[http][exchange]") {
  Endpoint e;
  HttpResponse no_session = e.exchange.handle(Endpoint::post(R"({"jsonrpc":"2.0","id":7,"method":"tools/call"})"));
  CHECK(no_session.status == 400);
  CHECK(no_session.body.find(R"("id":7)") != std::string::npos);
  HttpResponse unparsable = e.exchange.handle(Endpoint::post(R"({"jsonrpc":"2.0","id":7,)"));
  CHECK(unparsable.status == 400);
  CHECK(unparsable.body.find(R"("id":null)") != std::string::npos);
}

TEST_CASE("HttpExchange: methods, paths and the bearer scheme", "[http][exchange]") {
  HttpOptions options;
  options.token = "t0ken";
  Endpoint e(options);
  HttpRequest get{"GET", "/mcp", "HTTP/1.1", {{"Host", "localhost"}, {"Authorization", "bearer t0ken"}}, ""};
  HttpResponse got = e.exchange.handle(get);
  CHECK(got.status == 405);
  CHECK(find_header(got.headers, "allow") == "POST, DELETE");
  get.path = "/other";
  CHECK(e.exchange.handle(get).status == 404);
  HttpResponse unauthorised = e.exchange.handle(Endpoint::post(kInit));
  CHECK(unauthorised.status == 401);
  CHECK(find_header(unauthorised.headers, "WWW-Authenticate") == R"(Bearer realm="cleo")");
  CHECK(e.exchange.handle(Endpoint::post(kInit, {{"Authorization", "BEARER t0ken"}})).status == 200);
  CHECK(e.exchange.handle(Endpoint::post(kInit, {{"Authorization", "Bearer t0ken2"}})).status == 401);
}

TEST_CASE("HttpExchange: arbitrary requests each get one well-formed reply", "[http][exchange]") {
  // What a fuzz target does, in small: mutated methods, paths, headers and bodies (fixed seed).
  HttpOptions options;
  options.max_body_bytes = 256;
  Endpoint e(options);
  std::string session = e.initialize();
  std::mt19937 rng(20261123);
  auto pick = [&](std::initializer_list<std::string_view> choices) {
    return std::string(choices.begin()[rng() % choices.size()]);
  };
  auto garble = [&](std::string text) {
    for (int i = 0, n = static_cast<int>(rng() % 4); i < n && !text.empty(); ++i)
      text[rng() % text.size()] = static_cast<char>(rng() % 256);
    return text;
  };
  for (int i = 0; i < 500; ++i) {
    HttpRequest request;
    request.method = garble(pick({"POST", "POST", "POST", "GET", "DELETE", "PUT", ""}));
    request.path = garble(pick({"/mcp", "/mcp", "/", "/mcp/", ""}));
    request.version = pick({"HTTP/1.1", "HTTP/1.0", ""});
    for (int h = 0, n = static_cast<int>(rng() % 6); h < n; ++h)
      request.headers.push_back({garble(pick({"Host", "Content-Type", "Accept", "Mcp-Session-Id", "Origin",
                                              "Authorization", "Content-Length", "Transfer-Encoding",
                                              "MCP-Protocol-Version"})),
                                 garble(pick({"127.0.0.1", "application/json", "*/*", session, "http://localhost",
                                              "Bearer x", "12", "chunked", "2025-11-25", "", "99999999999999999999"}))});
    request.body = garble(pick({kInit, R"({"jsonrpc":"2.0","id":3,"method":"ping"})",
                                R"({"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"cleo_query","arguments":{"domain":"tasks","operation":"list"}}})",
                                R"([{"jsonrpc":"2.0","id":5,"method":"ping"}])", "", "{", std::string(300, 'x')}));
    HttpResponse response = e.exchange.handle(request);
    INFO("request " << i << ": " << request.method << " " << request.path << " body " << request.body);
    CHECK(response.status >= 200);
    CHECK(response.status <= 599);
    if (!response.body.empty()) CHECK(json::parse(response.body).has_value());
  }
}

TEST_CASE("HttpExchange: header bytes that are not UTF-8 never break the JSON reply", "[http][exchange]") {
  // Found by fuzzing (tests/fuzz/regressions/http): the header was quoted into the message as it was.
  Endpoint e;
  std::string session = e.initialize();
  HttpResponse refused = e.exchange.handle(Endpoint::post(R"({"jsonrpc":"2.0","id":1,"method":"ping"})",
                                                          {{"Mcp-Session-Id", session},
                                                           {"MCP-Protocol-Version", "2025-11-25\xff\x7f"}}));
  CHECK(refused.status == 400);
  auto body = json::parse(refused.body);
  REQUIRE(body);
  CHECK((*body)["id"].as_int() == 1);
  CHECK((*body)["error"]["message"].as_string().ends_with("2025-11-25\\xff\\x7f"));
}

TEST_CASE("HttpExchange: ids are echoed as sent, from the last of repeated keys", "[http][exchange]") {
  Endpoint e;
  HttpResponse repeated = e.exchange.handle(Endpoint::post(R"({"jsonrpc":"2.0","id":"a","id":18446744073709551615,"method":"tools/call"})"));
  CHECK(repeated.status == 400);  // no session
  CHECK(repeated.body.find(R"("id":18446744073709551615)") != std::string::npos);
  HttpResponse escaped = e.exchange.handle(Endpoint::post(R"({"jsonrpc":"2.0","\u0069d":9,"method":"tools/call"})"));
  CHECK(escaped.body.find(R"("id":9)") != std::string::npos);
}
