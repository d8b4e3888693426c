// The web dashboard (gateway/dashboard.h): its files, its API and the token, driven through the
// exchange without sockets; the change feed with a fake signal; then a real server whose event
// stream reports a commit made by another connection and ends promptly when the server stops.
#include <catch2/catch.hpp>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <iterator>
#include <thread>

#include "core/json_parse.h"
#include "core/sha256.h"
#include "core/version.h"
#include "gateway/mcp_syntax.h"
#include "gateway/product.h"
#include "gateway/dashboard.h"
#include "gateway/http_transport.h"
#include "unit/test_support.h"

using namespace ct;
using namespace ct::mcp;
using namespace std::chrono_literals;

namespace {

constexpr DashboardFile kFiles[] = {
    {"index.html", "<!doctype html><title>CLEO</title><script src=\"app.js\"></script>"},
    {"app.js", "console.log('hi');"},
};

constexpr std::string_view kHost = "127.0.0.1:8808";

/// The page's routers as `ct serve` makes them (dashboard_router_options), for a server on `dir`.
RouterFactory people_routers(const std::filesystem::path& dir, bool write) {
  return [dir, write] {
    RouterOptions server;
    return std::make_unique<Router>(registry(), Workspace::open(dir), dashboard_router_options(server, write), std::make_unique<SystemClock>());
  };
}

/// The one-use code `ct serve` would print at a person's terminal.
constexpr std::string_view kLoginCode = "0123456789abcdef0123456789abcdef";

struct Site {
  test::Project project;
  test::TempDir home;  // the person's, with their person keys
  Protocol protocol{registry(), ServerInfo{"cleo", std::string(product_version()), "hi"}};
  std::shared_ptr<Dashboard> dashboard;
  HttpExchange exchange;

  explicit Site(bool write = false, std::string token = "")
      : dashboard(std::make_shared<Dashboard>(people_routers(project.dir(), write), kFiles,
                                              DashboardOptions{.write = write,
                                                               .token = token,
                                                               .project = "p",
                                                               .login_code = std::string(kLoginCode),
                                                               .person_home = home.path(),
                                                               .person = "alice"})),
        exchange(
            protocol,
            [this] {
              RouterOptions options;
              return std::make_unique<Router>(registry(), project.workspace(), options, std::make_unique<SystemClock>());
            },
            HttpOptions{.token = token}, dashboard) {}

  HttpResponse get(std::string path, std::vector<HttpHeader> extra = {}) {
    HttpRequest request{"GET", std::move(path), "HTTP/1.1", {{"Host", std::string(kHost)}}, ""};
    for (auto& header : extra) request.headers.push_back(std::move(header));
    return exchange.handle(request);
  }
  HttpResponse post(std::string path, std::string body, std::vector<HttpHeader> extra = {}) {
    HttpRequest request{"POST", std::move(path), "HTTP/1.1",
                        {{"Host", std::string(kHost)}, {"Content-Type", "application/json"}}, std::move(body)};
    for (auto& header : extra) request.headers.push_back(std::move(header));
    return exchange.handle(request);
  }
  /// POST /api, the reply's envelope.
  json::Value api(std::string_view gateway, std::string_view op, std::string_view params = "{}",
                  std::vector<HttpHeader> extra = {}) {
    auto dot = op.find('.');
    std::string body = "{\"gateway\":\"" + std::string(gateway) + "\",\"domain\":\"" + std::string(op.substr(0, dot)) +
                       "\",\"operation\":\"" + std::string(op.substr(dot + 1)) + "\",\"params\":" + std::string(params) +
                       "}";
    for (const auto& header : signed_in) extra.push_back(header);
    HttpResponse response = post("/api", body, std::move(extra));
    REQUIRE(response.status == 200);
    auto parsed = json::parse(response.body);
    REQUIRE(parsed);
    return *parsed;
  }
  /// Signs in with `secret` (the one-use code by default): later api() calls send the cookie.
  int sign_in(std::string_view secret = kLoginCode) {
    HttpResponse login = post("/api/login", R"({"token":")" + std::string(secret) + "\"}");
    if (login.status == 204) {
      std::string cookie(find_header(login.headers, "Set-Cookie").value_or(""));
      signed_in = {{"Cookie", cookie.substr(0, cookie.find(';'))}};
    }
    return login.status;
  }
  std::vector<HttpHeader> signed_in;
};

std::string header(const HttpResponse& response, std::string_view name) {
  auto value = find_header(response.headers, name);
  return value ? std::string(*value) : std::string();
}

/// Drains what a stream holds now (as the server would), without waiting.
std::string drain(EventStream& stream) {
  std::string out;
  char buffer[256];
  while (true) {
    std::ptrdiff_t n = stream.read(buffer, sizeof buffer, [] {}, [] {});
    if (n <= 0) break;
    out.append(buffer, static_cast<std::size_t>(n));
  }
  return out;
}

/// Waits until `text` shows up in what the stream sends, for up to `timeout`.
bool wait_for(EventStream& stream, std::string& seen, std::string_view text, std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    seen += drain(stream);
    if (seen.find(text) != std::string::npos) return true;
    std::this_thread::sleep_for(5ms);
  }
  return false;
}

}  // namespace

TEST_CASE("Dashboard: the page's files, with a policy that lets it run only itself", "[dashboard]") {
  Site s;
  HttpResponse page = s.get("/");
  CHECK(page.status == 200);
  CHECK(header(page, "Content-Type") == "text/html; charset=utf-8");
  CHECK(header(page, "Content-Security-Policy").find("script-src 'self'") != std::string::npos);
  CHECK(header(page, "X-Content-Type-Options") == "nosniff");
  CHECK(page.body.find("<title>CLEO</title>") != std::string::npos);
  HttpResponse script = s.get("/app.js");
  CHECK(script.status == 200);
  CHECK(header(script, "Content-Type") == "text/javascript; charset=utf-8");
  for (std::string path : {"/missing.js", "/../tasks.db", "/.cleo", "/a/b.js", "/%2e%2e"}) {
    INFO(path);
    CHECK(s.get(path).status == 404);
  }
  CHECK(s.post("/", "{}").status == 405);
  // MCP is where it was: a GET there is MCP's (a session's event stream, which this one does not accept).
  CHECK(s.get("/mcp").status == 406);
}

TEST_CASE("Dashboard: a server without it answers 404 for everything but /mcp", "[dashboard]") {
  test::Project project;
  Protocol protocol{registry(), ServerInfo{"cleo", std::string(product_version()), "hi"}};
  HttpExchange exchange(protocol, people_routers(project.dir(), false), HttpOptions{});
  CHECK(exchange.handle({"GET", "/", "HTTP/1.1", {{"Host", std::string(kHost)}}, ""}).status == 404);
  CHECK(exchange.handle({"GET", "/events", "HTTP/1.1", {{"Host", std::string(kHost)}}, ""}).status == 404);
}

TEST_CASE("Dashboard: the API reads through the router and is read-only by default", "[dashboard]") {
  Site s;
  s.project.add(R"({"title":"Seen from the page"})");
  HttpResponse info = s.get("/api/info");
  CHECK(info.status == 200);
  CHECK(info.body.find("\"write\":false") != std::string::npos);
  CHECK(info.body.find("\"auth\":false") != std::string::npos);

  json::Value listed = s.api("query", "tasks.list");
  CHECK(listed["success"].as_bool());
  CHECK(listed["data"].as_array()[0]["title"].as_string() == "Seen from the page");

  json::Value refused = s.api("mutate", "tasks.add", R"({"title":"x"})");
  CHECK_FALSE(refused["success"].as_bool());
  CHECK(refused["error"]["code"].as_string() == "E_MUTATION_DISABLED");
  CHECK(refused["error"]["fix"].as_string().find("--dashboard-write") != std::string::npos);
  // A dry run is a mutation too: the page offers none.
  CHECK(s.api("mutate", "tasks.add", R"({"title":"x","dryRun":true})")["error"]["code"].as_string() ==
        "E_MUTATION_DISABLED");
  CHECK(s.project.query("tasks", "list").data.as_array().size() == 1);

  SECTION("malformed calls are refused before the router") {
    CHECK(s.post("/api", "not json").status == 400);
    CHECK(s.post("/api", R"({"gateway":"both","domain":"tasks","operation":"list"})").status == 400);
    CHECK(s.post("/api", R"({"gateway":"query","domain":"tasks","operation":"list","params":[1]})").status == 400);
    HttpRequest form{"POST", "/api", "HTTP/1.1",
                     {{"Host", std::string(kHost)}, {"Content-Type", "application/x-www-form-urlencoded"}}, "a=1"};
    CHECK(s.exchange.handle(form).status == 415);  // a plain HTML form cannot call it
    CHECK(s.get("/api").status == 405);
  }
  SECTION("an unknown operation is the router's error") {
    json::Value unknown = s.api("query", "tasks.lisst");
    CHECK(unknown["error"]["code"].as_string() == "E_INVALID_OPERATION");
  }
}

TEST_CASE("Dashboard: write mode changes tasks as human@dashboard, even in an agent's session", "[dashboard]") {
  Site s(true);
  CHECK(s.get("/api/info").body.find("\"write\":true") != std::string::npos);
  REQUIRE(s.sign_in() == 204);
  json::Value added = s.api("mutate", "tasks.add", R"({"title":"From a person"})");
  REQUIRE(added["success"].as_bool());
  std::string id = added["data"]["id"].as_string();
  CHECK(s.api("mutate", "tasks.complete", "{\"id\":\"" + id + "\"}")["success"].as_bool());

  // An agent's session holds a task; the person releases it and hands it to another session.
  std::string held = s.project.add(R"({"title":"Held"})");
  Envelope first = s.project.mutate("session", "start", R"({"scope":"global","agent":"claude","name":"one"})");
  REQUIRE(first.success);
  std::string one = first.data["id"].as_string();
  REQUIRE(s.project.mutate("tasks", "start", "{\"id\":\"" + held + "\"}").success);
  s.project.mutate("session", "suspend", "{\"id\":\"" + one + "\"}");
  s.project.set_session("");
  Envelope second = s.project.mutate("session", "start", R"({"scope":"global","agent":"codex","name":"two"})");
  REQUIRE(second.success);
  std::string two = second.data["id"].as_string();
  s.project.mutate("session", "resume", "{\"id\":\"" + one + "\"}");

  CHECK(s.api("mutate", "tasks.stop", "{\"sessionId\":\"" + one + "\"}")["success"].as_bool());
  json::Value moved = s.api("mutate", "tasks.start", "{\"id\":\"" + held + "\",\"sessionId\":\"" + two + "\"}");
  CHECK(moved["success"].as_bool());

  Envelope log = s.project.query("system", "log", R"({"limit":4,"fields":["operation","agent","session"]})");
  REQUIRE(log.success);
  REQUIRE(log.data.as_array().size() == 4);
  CHECK(log.data.as_array()[0]["operation"].as_string() == "tasks.start");
  CHECK(log.data.as_array()[0]["agent"].as_string() == "human@dashboard");
  CHECK(log.data.as_array()[0]["session"].as_string() == two);
  CHECK(log.data.as_array()[1]["operation"].as_string() == "tasks.stop");
  CHECK(log.data.as_array()[1]["agent"].as_string() == "human@dashboard");
  // Who really did it: the person, not a name anyone could give.
  Envelope rows = s.project.query("system", "log", R"({"limit":1})");
  REQUIRE(rows.success);
  CHECK(rows.data.dump().find("person:alice") != std::string::npos);

  SECTION("only task changes: nothing else is run from the page") {
    json::Value refused = s.api("mutate", "tasks.delete", "{\"id\":\"" + id + "\"}");
    CHECK(refused["error"]["code"].as_string() == "E_MUTATION_DISABLED");
    CHECK(refused["error"]["message"].as_string().find("tasks.complete") != std::string::npos);
    CHECK(s.api("mutate", "system.gc", "{}")["error"]["code"].as_string() == "E_MUTATION_DISABLED");
  }
}

TEST_CASE("Dashboard: its callers are not a person at the command line: no config key only people set",
          "[dashboard][config]") {
  Site s(true);
  const auto config_file = s.project.dir() / ".cleo" / "config.json";
  auto config_text = [&] {
    std::ifstream in(config_file);
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  const std::string before = config_text();
  // The page's API runs no config.set at all.
  json::Value refused = s.api("mutate", "system.config.set", R"({"key":"security.allowOutsideProject","value":true})");
  CHECK(refused["error"]["code"].as_string() == "E_MUTATION_DISABLED");
  // Its routers refuse keys only people set to a caller that is not a person (the token's holder).
  RouterOptions server;
  Router page(registry(), Workspace::open(s.project.dir()), dashboard_router_options(server, true), std::make_unique<SystemClock>());
  for (std::string_view params : {R"({"key":"security.allowOutsideProject","value":true})",
                                  R"({"key":"validate.testCommand","value":"sh -c id"})"}) {
    INFO(params);
    Envelope set = page.dispatch({Gateway::Mutate, "system", "config.set", test::parse_json(params)});
    CHECK(test::code_of(set) == "E_MUTATION_DISABLED");
    REQUIRE(set.error);
    CHECK(mcp_text(set.error->fix, registry()).find("ct config set") != std::string::npos);
  }
  CHECK(config_text() == before);
  // A key anyone sets still works from there.
  CHECK(page.dispatch({Gateway::Mutate, "system", "config.set", test::parse_json(R"({"key":"output.maxReplyBytes","value":5000})")})
            .success);
}

TEST_CASE("Dashboard: with a token, data needs the header or the login cookie", "[dashboard]") {
  Site s(false, "s3cret");
  CHECK(s.get("/").status == 200);  // the page holds no data: it asks for the token
  HttpResponse info = s.get("/api/info");
  CHECK(info.status == 401);
  CHECK(s.get("/events").status == 401);
  CHECK(s.post("/api", R"({"gateway":"query","domain":"tasks","operation":"list"})").status == 401);
  CHECK(s.get("/api/info", {{"Authorization", "Bearer s3cret"}}).status == 200);
  CHECK(s.get("/api/info", {{"Authorization", "Bearer wrong"}}).status == 401);

  CHECK(s.post("/api/login", R"({"token":"wrong"})").status == 401);
  CHECK(s.post("/api/login", R"({"token":1})").status == 400);
  HttpResponse login = s.post("/api/login", R"({"token":"s3cret"})");
  CHECK(login.status == 204);
  std::string cookie = header(login, "Set-Cookie");
  CHECK(cookie.find("HttpOnly") != std::string::npos);
  CHECK(cookie.find("SameSite=Strict") != std::string::npos);
  CHECK(cookie.find("s3cret") == std::string::npos);  // the cookie stands for the token, never holds it
  std::string pair = cookie.substr(0, cookie.find(';'));
  HttpResponse in = s.get("/api/info", {{"Cookie", "theme=dark; " + pair}});
  CHECK(in.status == 200);
  CHECK(in.body.find("\"auth\":true") != std::string::npos);
  CHECK(s.get("/api/info", {{"Cookie", "cleo_dashboard=0000"}}).status == 401);
  HttpResponse logout = s.post("/api/logout", "");
  CHECK(logout.status == 204);
  CHECK(header(logout, "Set-Cookie").find("cleo_dashboard=;") == 0);
  CHECK(header(logout, "Set-Cookie").find("Max-Age=0") != std::string::npos);
  CHECK(s.get("/api/logout").status == 405);
  // /mcp still wants the bearer header; the cookie is the page's.
  CHECK(s.post("/mcp", "{}", {{"Cookie", pair}, {"Accept", "application/json"}}).status == 401);
}

TEST_CASE("Dashboard: the MCP token reads; changes, approvals and verifications need a person's login (issue 52)",
          "[dashboard][principals]") {
  Site s(true, "s3cret");
  const std::vector<HttpHeader> bearer = {{"Authorization", "Bearer s3cret"}};
  // An MCP client holding the server's token is no person: it reads, and every change is refused.
  CHECK(s.api("query", "tasks.list", "{}", bearer)["success"].as_bool());
  json::Value added = s.api("mutate", "tasks.add", R"({"title":"By the token"})", bearer);
  CHECK(added["error"]["code"].as_string() == "E_MUTATION_DISABLED");
  CHECK(added["error"]["fix"].as_string().find("person key") != std::string::npos);
  s.project.write_config(R"({"approval":{"required":["tasks.delete"]}})");
  std::string id = s.project.add(R"({"title":"Keep me"})");
  Envelope proposed = s.project.mutate("tasks", "delete", "{\"id\":\"" + id + "\"}");
  REQUIRE(proposed.success);
  REQUIRE(test::code_of(proposed) == "E_PROPOSED");
  const std::string proposal = proposed.data["id"].as_string();
  json::Value approve = s.api("mutate", "system.proposal.approve", "{\"id\":\"" + proposal + "\"}", bearer);
  CHECK(approve["error"]["code"].as_string() == "E_MUTATION_DISABLED");
  // Logging in with the token gives a reader's cookie: still no person.
  CHECK(s.sign_in("s3cret") == 204);
  CHECK(s.get("/api/info", s.signed_in).body.find("\"person\":false") != std::string::npos);
  CHECK(s.api("mutate", "system.proposal.approve", "{\"id\":\"" + proposal + "\"}")["error"]["code"].as_string() ==
        "E_MUTATION_DISABLED");
  CHECK(s.project.query("tasks", "show", "{\"id\":\"" + id + "\"}").success);
  // The one-use code makes a person's login, once.
  CHECK(s.sign_in() == 204);
  CHECK(s.get("/api/info", s.signed_in).body.find("\"person\":true") != std::string::npos);
  json::Value approved = s.api("mutate", "system.proposal.approve", "{\"id\":\"" + proposal + "\"}");
  CHECK(approved["success"].as_bool());
  CHECK(approved["data"]["approvedBy"].as_string() == "person:alice");
  const auto person_cookie = s.signed_in;
  CHECK(s.sign_in() == 401);  // used
  // A person key listed in the person's home signs in too; an unlisted one does not.
  std::filesystem::create_directories(s.home.path() / ".config" / "cleo");
  std::ofstream(s.home.path() / ".config" / "cleo" / "person-keys.json")
      << R"({"keys":[{"name":"ci","sha256":")" << sha256_hex("ctpk_0001") << R"("}]})";
  std::filesystem::permissions(s.home.path() / ".config" / "cleo" / "person-keys.json",
                               std::filesystem::perms::owner_read | std::filesystem::perms::owner_write,
                               std::filesystem::perm_options::replace);
  CHECK(s.sign_in("ctpk_0002") == 401);
  CHECK(s.sign_in("ctpk_0001") == 204);
  CHECK(s.api("mutate", "tasks.add", R"({"title":"By a person key"})")["success"].as_bool());
  // Signing out ends the login on the server, not only in the browser.
  CHECK(s.post("/api/logout", "", person_cookie).status == 204);
  CHECK(s.get("/api/info", person_cookie).status == 401);
}

TEST_CASE("Dashboard: without a token the page reads, and changes still need a person", "[dashboard][principals]") {
  Site s(true);
  json::Value added = s.api("mutate", "tasks.add", R"({"title":"curl, no Origin"})");
  CHECK(added["error"]["code"].as_string() == "E_MUTATION_DISABLED");
  CHECK(s.api("query", "tasks.list")["success"].as_bool());
}

TEST_CASE("Dashboard: the API serves its own page only", "[dashboard]") {
  Site s(true);
  std::string call = R"({"gateway":"query","domain":"tasks","operation":"list"})";
  CHECK(s.post("/api", call, {{"Origin", "http://127.0.0.1:8808"}}).status == 200);
  CHECK(s.post("/api", call, {{"Sec-Fetch-Site", "same-origin"}}).status == 200);
  // Another page on this machine (loopback, so /mcp would take it) may not use the page's cookie.
  CHECK(s.post("/api", call, {{"Origin", "http://localhost:5173"}}).status == 403);
  CHECK(s.post("/api", call, {{"Sec-Fetch-Site", "same-site"}}).status == 403);
  CHECK(s.get("/events", {{"Origin", "http://localhost:5173"}}).status == 403);
  // A site elsewhere fails the exchange's own Origin check; a rebound name fails the Host check.
  CHECK(s.post("/api", call, {{"Origin", "https://evil.example"}}).status == 403);
  HttpRequest rebound{"GET", "/api/info", "HTTP/1.1", {{"Host", "evil.example"}}, ""};
  CHECK(s.exchange.handle(rebound).status == 403);
}

TEST_CASE("ChangeFeed: hello once the signal is read, a change per move, nothing read while nobody listens",
          "[dashboard]") {
  std::atomic<std::int64_t> signal{7};
  ChangeFeed feed([&]() -> Result<std::int64_t> { return signal.load(); },
                  ChangeFeed::Options{.interval = 10ms, .heartbeat = 40ms, .max_listeners = 2});
  std::this_thread::sleep_for(30ms);
  CHECK(feed.reads() == 0);

  auto stream = feed.subscribe();
  REQUIRE(stream);
  std::string seen;
  REQUIRE(wait_for(*stream, seen, "event: hello\ndata: {\"stamp\":0}\n\n", 2s));
  CHECK(seen.find("retry: 2000\n") == 0);
  CHECK(seen.find("change") == std::string::npos);
  signal = 8;
  REQUIRE(wait_for(*stream, seen, "event: change\ndata: {\"stamp\":1}\n\n", 2s));
  signal = 9;
  signal = 10;  // two commits between reads: one event at most
  REQUIRE(wait_for(*stream, seen, "event: change\ndata: {\"stamp\":2}\n\n", 2s));
  REQUIRE(wait_for(*stream, seen, ": keep-alive\n\n", 2s));

  SECTION("listeners are limited; a gone one frees its place") {
    auto second = feed.subscribe();
    REQUIRE(second);
    CHECK(feed.subscribe() == nullptr);
    second->detach();
    CHECK(feed.listeners() == 1);
    CHECK(feed.subscribe() != nullptr);
  }
  SECTION("after the last listener leaves, the signal is no longer read") {
    stream->detach();
    std::this_thread::sleep_for(50ms);
    std::uint64_t reads = feed.reads();
    std::this_thread::sleep_for(60ms);
    CHECK(feed.reads() == reads);
  }
  SECTION("stop ends every stream, and nobody joins after") {
    feed.stop();
    char buffer[64];
    std::string rest = drain(*stream);
    CHECK(stream->read(buffer, sizeof buffer, [] {}, [] {}) == -1);
    CHECK(feed.subscribe() == nullptr);
  }
}

TEST_CASE("ChangeFeed: a signal that cannot be read is retried once per interval, and greets once it can",
          "[dashboard]") {
  std::atomic<bool> broken{true};
  ChangeFeed feed(
      [&]() -> Result<std::int64_t> {
        if (broken) return fail(ErrorCode::FileError, "the store is gone");
        return 1;
      },
      ChangeFeed::Options{.interval = 20ms});
  auto stream = feed.subscribe();
  REQUIRE(stream);
  std::this_thread::sleep_for(200ms);
  CHECK(feed.reads() <= 15);  // about 10; a spinning watcher would have read thousands of times
  CHECK(feed.reads() >= 2);
  std::string seen;
  CHECK(drain(*stream).empty());  // no hello before the signal was read
  broken = false;
  CHECK(wait_for(*stream, seen, "event: hello", 2s));
}

TEST_CASE("EventStream: the server pauses on an empty stream and the next push resumes it once", "[dashboard]") {
  EventStream stream;
  int paused = 0;
  int resumed = 0;
  char buffer[8];
  CHECK(stream.read(buffer, sizeof buffer, [&] { ++paused; }, [&] { ++resumed; }) == 0);
  CHECK(paused == 1);
  CHECK(stream.push("0123456789"));
  CHECK(resumed == 1);
  CHECK(stream.read(buffer, sizeof buffer, [&] { ++paused; }, [&] { ++resumed; }) == 8);
  CHECK(stream.read(buffer, sizeof buffer, [&] { ++paused; }, [&] { ++resumed; }) == 2);
  CHECK(stream.push("x"));
  CHECK(resumed == 1);  // not waiting: nothing to resume
  stream.detach();      // the peer is gone: nothing is queued, nothing resumed
  CHECK_FALSE(stream.push("y"));
  CHECK(stream.read(buffer, sizeof buffer, [&] { ++paused; }, [&] { ++resumed; }) == -1);

  EventStream slow;
  std::string big(EventStream::kMaxPending / 2 + 1, 'x');
  CHECK(slow.push(big));
  CHECK_FALSE(slow.push(big));  // a peer this far behind is dropped
  CHECK_FALSE(slow.is_open());
}

TEST_CASE("Dashboard over HTTP: the event stream reports another connection's commit, and stop ends it",
          "[dashboard][http]") {
  test::Project project;
  Protocol protocol{registry(), ServerInfo{"cleo", std::string(product_version()), "hi"}};
  auto dashboard = std::make_shared<Dashboard>(people_routers(project.dir(), false), kFiles,
                                               DashboardOptions{.feed = {.interval = 20ms}});
  HttpServer server(protocol, people_routers(project.dir(), false), HttpOptions{.port = 0}, dashboard);
  REQUIRE(server.bind());
  std::thread thread([&] { server.run(); });

  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<std::uint16_t>(server.port()));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0);
  std::string request = "GET /events HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n";
  REQUIRE(::send(fd, request.data(), request.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(request.size()));
  std::string seen;
  auto read_until = [&](std::string_view text, std::chrono::milliseconds timeout) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    while (seen.find(text) == std::string::npos) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) return false;
      pollfd p{fd, POLLIN, 0};
      if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) return false;
      char buffer[1024];
      ssize_t n = ::recv(fd, buffer, sizeof buffer, 0);
      if (n <= 0) return seen.find(text) != std::string::npos;
      seen.append(buffer, static_cast<std::size_t>(n));
    }
    return true;
  };
  REQUIRE(read_until("event: hello", 5s));
  CHECK(seen.find("HTTP/1.1 200") == 0);
  CHECK(seen.find("Content-Type: text/event-stream") != std::string::npos);
  project.add(R"({"title":"Written elsewhere"})");
  CHECK(read_until("event: change", 5s));

  auto stopping = std::chrono::steady_clock::now();
  server.stop();
  thread.join();
  CHECK(std::chrono::steady_clock::now() - stopping < 3s);
  CHECK(read_until("0\r\n\r\n", 2s));  // the chunked body ended: the stream closed cleanly
  ::close(fd);
}
