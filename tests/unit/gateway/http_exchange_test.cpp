// HttpExchange: the HTTP request path after parsing, driven with plain structs and no sockets
// (the seam a fuzz target uses).
#include <catch2/catch.hpp>

#include <random>
#include <thread>

#include "core/version.h"
#include "gateway/product.h"
#include "gateway/http_exchange.h"
#include "gateway/resource_watch.h"
#include "gateway/task_runner.h"
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
                   return std::make_unique<Router>(registry(), project.workspace(), router_options, std::make_unique<SystemClock>());
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

TEST_CASE("HttpExchange: a deleted session lets go of its CLEO session's claim at once", "[http][exchange][lease]") {
  Endpoint e;
  e.project.add(R"({"title":"Held task"})");
  std::string session = e.initialize();
  auto call = [&](std::string_view domain, std::string_view operation, std::string_view params) {
    HttpResponse response = e.exchange.handle(Endpoint::post(
        R"({"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"cleo_mutate","arguments":{"domain":")" +
            std::string(domain) + R"(","operation":")" + std::string(operation) + R"(","params":)" + std::string(params) + "}}}",
        {{"Mcp-Session-Id", session}, {"MCP-Protocol-Version", "2025-11-25"}}));
    REQUIRE(response.status == 200);
    return test::parse_json(response.body)["result"]["structuredContent"];
  };
  REQUIRE(call("session", "start", R"({"scope":"global"})")["success"] == json::Value(true));
  REQUIRE(call("tasks", "start", R"({"id":"T001"})")["success"] == json::Value(true));
  CHECK(e.project.query("tasks", "show", R"({"id":"T001"})").data["status"].as_string() == "active");
  HttpRequest end{"DELETE", "/mcp", "HTTP/1.1", {{"Host", "localhost"}, {"Mcp-Session-Id", session}}, ""};
  CHECK(e.exchange.handle(end).status == 204);
  Envelope task = e.project.query("tasks", "show", R"({"id":"T001"})");
  CHECK(task.data["status"].as_string() == "pending");
  CHECK_FALSE(task.data.contains("claim"));
  Envelope sessions = e.project.query("session", "list", R"({"detail":"full"})");
  REQUIRE(sessions.data.as_array().size() == 1);
  CHECK(sessions.data.as_array()[0]["status"].as_string() == "suspended");
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
  CHECK(e.exchange.handle(get).status == 406);  // a GET stream is text/event-stream
  get.headers.push_back({"Accept", "text/event-stream"});
  CHECK(e.exchange.handle(get).status == 400);  // …of a session
  get.headers.push_back({"Mcp-Session-Id", "nope"});
  CHECK(e.exchange.handle(get).status == 404);
  HttpRequest put{"PUT", "/mcp", "HTTP/1.1", {{"Host", "localhost"}, {"Authorization", "bearer t0ken"}}, ""};
  HttpResponse refused = e.exchange.handle(put);
  CHECK(refused.status == 405);
  CHECK(find_header(refused.headers, "allow") == "GET, POST, DELETE");
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

namespace {

constexpr const char* kStatelessMeta =
    R"("_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}})";

/// A stateless (2026-07-28) request with the headers a conforming client sends.
HttpRequest stateless_post(std::string_view method, std::string params_body = "", std::string name = "",
                           std::vector<HttpHeader> extra = {}) {
  std::string params = "{" + std::string(kStatelessMeta) + (params_body.empty() ? "" : "," + params_body) + "}";
  HttpRequest request = Endpoint::post(R"({"jsonrpc":"2.0","id":11,"method":")" + std::string(method) +
                                       R"(","params":)" + params + "}");
  request.headers.push_back({"MCP-Protocol-Version", "2026-07-28"});
  request.headers.push_back({"Mcp-Method", std::string(method)});
  if (!name.empty()) request.headers.push_back({"Mcp-Name", name});
  for (auto& header : extra) request.headers.push_back(std::move(header));
  return request;
}

int code_of(const HttpResponse& response) { return static_cast<int>(test::parse_json(response.body)["error"]["code"].as_int()); }

}  // namespace

TEST_CASE("HttpExchange: stateless requests need no session and get none", "[http][exchange][stateless]") {
  Endpoint e;
  HttpResponse discovered = e.exchange.handle(stateless_post("server/discover"));
  CHECK(discovered.status == 200);
  CHECK_FALSE(find_header(discovered.headers, "Mcp-Session-Id"));
  CHECK(test::parse_json(discovered.body)["result"]["supportedVersions"].as_array()[0].as_string() == "2026-07-28");
  HttpResponse called = e.exchange.handle(stateless_post(
      "tools/call", R"("name":"cleo_mutate","arguments":{"domain":"tasks","operation":"add","params":{"title":"No session"}})",
      "cleo_mutate"));
  CHECK(called.status == 200);
  CHECK(test::parse_json(called.body)["result"]["structuredContent"]["data"]["id"].as_string() == "T001");
  CHECK(e.exchange.session_count() == 0);
  // A session id sent along (even an unknown one) is ignored, not looked up or echoed.
  HttpResponse ignored = e.exchange.handle(stateless_post("tools/list", "", "", {{"Mcp-Session-Id", "nonexistent"}}));
  CHECK(ignored.status == 200);
  CHECK_FALSE(find_header(ignored.headers, "Mcp-Session-Id"));
  // A notification is accepted without a body.
  HttpRequest note = Endpoint::post(R"({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}})",
                                    {{"MCP-Protocol-Version", "2026-07-28"}, {"Mcp-Method", "notifications/cancelled"}});
  HttpResponse accepted = e.exchange.handle(note);
  CHECK(accepted.status == 202);
  CHECK(accepted.body.empty());
}

TEST_CASE("HttpExchange: stateless refusals use 400 and 404 with the JSON-RPC code", "[http][exchange][stateless]") {
  Endpoint e;
  // Missing _meta, with the 2026-07-28 header: -32602, 400.
  HttpResponse no_meta = e.exchange.handle(Endpoint::post(R"({"jsonrpc":"2.0","id":5,"method":"server/discover","params":{}})",
                                                          {{"MCP-Protocol-Version", "2026-07-28"}, {"Mcp-Method", "server/discover"}}));
  CHECK(no_meta.status == 400);
  CHECK(code_of(no_meta) == -32602);
  CHECK(test::parse_json(no_meta.body)["id"].as_int() == 5);
  // Removed and unknown methods: -32601, 404.
  for (std::string_view method : {"initialize", "ping", "resources/subscribe", "subscriptions/listen", "unknown/method"}) {
    HttpResponse missing = e.exchange.handle(stateless_post(method));
    INFO(method);
    CHECK(missing.status == 404);
    CHECK(code_of(missing) == -32601);
  }
  // Headers that disagree with the body, or are missing: -32020, 400.
  HttpResponse wrong_tool = e.exchange.handle(stateless_post(
      "tools/call", R"("name":"cleo_query","arguments":{"domain":"tasks","operation":"list"})", "cleo_mutate"));
  CHECK(wrong_tool.status == 400);
  CHECK(code_of(wrong_tool) == -32020);
  // Whitespace around a field value is not part of it (RFC 9110 §5.5).
  HttpResponse padded = e.exchange.handle(stateless_post(
      "tools/call", R"("name":"cleo_query","arguments":{"domain":"tasks","operation":"list"})", " cleo_query \t"));
  CHECK(padded.status == 200);
  HttpResponse no_name = e.exchange.handle(stateless_post(
      "tools/call", R"("name":"cleo_query","arguments":{"domain":"tasks","operation":"list"})"));
  CHECK(code_of(no_name) == -32020);
  HttpRequest no_version_header =
      Endpoint::post(R"({"jsonrpc":"2.0","id":6,"method":"tools/list","params":{)" + std::string(kStatelessMeta) + "}}",
                     {{"Mcp-Method", "tools/list"}});
  HttpResponse refused = e.exchange.handle(no_version_header);
  CHECK(refused.status == 400);
  CHECK(code_of(refused) == -32020);
  HttpResponse twice = e.exchange.handle(stateless_post("tools/list", "", "", {{"mcp-method", "tools/list"}}));
  CHECK(twice.status == 400);
  CHECK(code_of(twice) == -32020);
  // An unsupported version named in both: -32022, 400, with what is supported.
  HttpRequest future = Endpoint::post(
      R"({"jsonrpc":"2.0","id":7,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2099-01-01","io.modelcontextprotocol/clientCapabilities":{}}}})",
      {{"MCP-Protocol-Version", "2099-01-01"}, {"Mcp-Method", "tools/list"}});
  HttpResponse unsupported = e.exchange.handle(future);
  CHECK(unsupported.status == 400);
  CHECK(code_of(unsupported) == -32022);
  CHECK(test::parse_json(unsupported.body)["error"]["data"]["requested"].as_string() == "2099-01-01");
  // A batch under the 2026-07-28 header: 400.
  HttpRequest batch = Endpoint::post("[" + std::string(R"({"jsonrpc":"2.0","id":1,"method":"tools/list"})") + "]",
                                     {{"MCP-Protocol-Version", "2026-07-28"}, {"Mcp-Method", "tools/list"}});
  CHECK(e.exchange.handle(batch).status == 400);
  // Tool errors are results: 200.
  HttpResponse not_found = e.exchange.handle(stateless_post(
      "tools/call", R"("name":"cleo_query","arguments":{"domain":"tasks","operation":"show","params":{"id":"T404"}})", "cleo_query"));
  CHECK(not_found.status == 200);
  CHECK(e.exchange.session_count() == 0);
}

TEST_CASE("HttpExchange: the security checks apply to stateless requests too", "[http][exchange][stateless]") {
  HttpOptions options;
  options.token = "s3cret";
  Endpoint e(options);
  CHECK(e.exchange.handle(stateless_post("server/discover")).status == 401);
  CHECK(e.exchange.handle(stateless_post("server/discover", "", "", {{"Authorization", "Bearer s3cret"}})).status == 200);
  CHECK(e.exchange.handle(stateless_post("server/discover", "", "",
                                         {{"Authorization", "Bearer s3cret"}, {"Origin", "https://evil.example"}}))
            .status == 403);
}

TEST_CASE("HttpExchange: the handshake revisions are unchanged beside the stateless one", "[http][exchange][stateless]") {
  Endpoint e;
  // No session, no 2026-07-28 header, no _meta: the session is required, as before.
  HttpResponse ping = e.exchange.handle(Endpoint::post(R"({"jsonrpc":"2.0","id":1,"method":"ping"})"));
  CHECK(ping.status == 400);
  CHECK(code_of(ping) == -32600);
  std::string session = e.initialize();
  HttpResponse pinged = e.exchange.handle(Endpoint::post(R"({"jsonrpc":"2.0","id":2,"method":"ping"})",
                                                         {{"Mcp-Session-Id", session}, {"MCP-Protocol-Version", "2025-11-25"}}));
  CHECK(pinged.status == 200);
  // A legacy session's tools/list has no stateless fields.
  HttpResponse listed = e.exchange.handle(Endpoint::post(R"({"jsonrpc":"2.0","id":3,"method":"tools/list"})",
                                                         {{"Mcp-Session-Id", session}}));
  CHECK_FALSE(test::parse_json(listed.body)["result"].contains("resultType"));
  // An unknown method in a session is still 200 with -32601.
  HttpResponse unknown = e.exchange.handle(Endpoint::post(R"({"jsonrpc":"2.0","id":4,"method":"sampling/createMessage"})",
                                                          {{"Mcp-Session-Id", session}}));
  CHECK(unknown.status == 200);
  CHECK(code_of(unknown) == -32601);
}

namespace {

/// What an event stream has sent so far (its queued text, taken).
std::string drain(EventStream& stream) {
  std::string out;
  char buffer[4096];
  while (true) {
    std::ptrdiff_t n = stream.read(buffer, sizeof buffer, [] {}, [] {});
    if (n <= 0) return out;
    out.append(buffer, static_cast<std::size_t>(n));
  }
}

}  // namespace

TEST_CASE("HttpExchange: a session's GET stream carries its notifications; a listen or a late reply is a stream",
          "[http][exchange][subscriptions]") {
  test::Project project;
  project.add(R"({"title":"Watched"})");
  RouterFactory make = [&project] {
    return std::make_unique<Router>(registry(), project.workspace(), RouterOptions{}, std::make_unique<SystemClock>());
  };
  ResourceWatch watch(make, {.interval = std::chrono::milliseconds(20)});
  TaskRunner tasks(make);
  Protocol protocol{registry(), ServerInfo{"cleo", std::string(product_version()), "hi"}, {&watch, &tasks}};
  HttpExchange exchange(protocol, make, {});
  HttpResponse initialized = exchange.handle(Endpoint::post(kInit));
  REQUIRE(initialized.status == 200);
  const std::string session(*find_header(initialized.headers, "mcp-session-id"));
  const std::vector<HttpHeader> in_session = {{"Mcp-Session-Id", session}, {"MCP-Protocol-Version", "2025-11-25"}};

  HttpRequest get{"GET", "/mcp", "HTTP/1.1", {{"Host", "localhost"}, {"Accept", "text/event-stream"}, {"Mcp-Session-Id", session}}, ""};
  HttpResponse first = exchange.handle(get);
  CHECK(first.status == 200);
  CHECK(find_header(first.headers, "Content-Type") == "text/event-stream");
  REQUIRE(first.stream);
  HttpResponse stream = exchange.handle(get);  // a second GET: the first one ends
  REQUIRE(stream.stream);
  CHECK_FALSE(first.stream->is_open());

  HttpResponse subscribed = exchange.handle(
      Endpoint::post(R"({"jsonrpc":"2.0","id":2,"method":"resources/subscribe","params":{"uri":"cleo://task/T001"}})", in_session));
  CHECK(test::parse_json(subscribed.body)["result"] == json::Value::object());
  REQUIRE(project.mutate("tasks", "update", R"({"id":"T001","notes":"changed"})").success);
  std::string text;
  for (int i = 0; i < 500 && text.find("notifications/resources/updated") == std::string::npos; ++i) {
    text += drain(*stream.stream);
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  CHECK(text.find("event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/resources/updated\",\"params\":{\"uri\":\"cleo://task/T001\"}}") !=
        std::string::npos);

  // 2026-07-28: subscriptions/listen answers with an event stream whose first event is the ack.
  HttpResponse listened = exchange.handle(Endpoint::post(
      R"({"jsonrpc":"2.0","id":"L","method":"subscriptions/listen","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}},"notifications":{"resourceSubscriptions":["cleo://task/T001"]}}})",
      {{"MCP-Protocol-Version", "2026-07-28"}, {"Mcp-Method", "subscriptions/listen"}}));
  CHECK(listened.status == 200);
  REQUIRE(listened.stream);
  CHECK(drain(*listened.stream).find(R"("method":"notifications/subscriptions/acknowledged")") != std::string::npos);
  CHECK(watch.subscribers() == 2);

  // Ending the session ends its stream and what it watched.
  HttpRequest end{"DELETE", "/mcp", "HTTP/1.1", {{"Host", "localhost"}, {"Mcp-Session-Id", session}}, ""};
  CHECK(exchange.handle(end).status == 204);
  CHECK(watch.subscribers() == 1);
  // The server stopping ends the listen stream with its closing reply.
  exchange.stop_streams();
  CHECK(drain(*listened.stream).find(R"("id":"L","result":{"resultType":"complete")") != std::string::npos);
  CHECK_FALSE(listened.stream->is_open());
}

TEST_CASE("HttpOptions: the workers asked for, else 4 on SQLite and 16 on PostgreSQL", "[http][exchange]") {
  ct::mcp::HttpOptions options;
  CHECK(options.workers(false) == 4);
  CHECK(options.workers(true) == 16);  // a worker on PostgreSQL mostly waits for the server
  options.threads = 8;
  CHECK(options.workers(false) == 8);
  CHECK(options.workers(true) == 8);
}
