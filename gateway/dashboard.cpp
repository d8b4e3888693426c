#include "gateway/dashboard.h"

#include <algorithm>
#include <fstream>
#include <sstream>

#include "core/json.h"
#include "core/json_parse.h"
#include "core/log.h"
#include "core/sha256.h"
#include "core/text.h"
#include "core/version.h"
#include "engines/project/person_keys.h"

namespace ct::mcp {
namespace {

constexpr std::string_view kCookie = "cleo_dashboard";

/// The page runs only its own files, talks only to this server and is never framed.
constexpr std::string_view kPolicy =
    "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; connect-src 'self'; "
    "frame-ancestors 'none'; base-uri 'none'; form-action 'self'";

void common_headers(HttpResponse& response) {
  response.headers.push_back({"X-Content-Type-Options", "nosniff"});
  response.headers.push_back({"Referrer-Policy", "no-referrer"});
}

HttpResponse json_reply(int status, std::string body) {
  HttpResponse response;
  response.status = status;
  response.headers.push_back({"Content-Type", "application/json"});
  response.headers.push_back({"Cache-Control", "no-store"});
  common_headers(response);
  response.body = std::move(body);
  return response;
}

HttpResponse problem(int status, std::string_view message) {
  json::Value body(json::Value::Object{{"error", json::Value(std::string(message))}});
  return json_reply(status, body.dump());
}

std::string_view content_type(std::string_view name) {
  auto ends = [&](std::string_view suffix) { return name.ends_with(suffix); };
  if (ends(".html")) return "text/html; charset=utf-8";
  if (ends(".js") || ends(".mjs")) return "text/javascript; charset=utf-8";
  if (ends(".css")) return "text/css; charset=utf-8";
  if (ends(".svg")) return "image/svg+xml";
  if (ends(".json")) return "application/json";
  return "text/plain; charset=utf-8";
}

/// A file name the page may ask for: one path segment of letters, digits, '.', '-', '_', not
/// starting with a dot (so never "..", never a hidden file, never a directory).
bool plain_file_name(std::string_view name) {
  if (name.empty() || name.size() > 100 || name.front() == '.') return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '-' ||
           c == '_';
  });
}

/// The value of cookie `name` in a Cookie header ("a=1; b=2").
std::optional<std::string_view> cookie(const std::vector<HttpHeader>& headers, std::string_view name) {
  for (const auto& header : headers) {
    if (to_lower_ascii(header.name) != "cookie") continue;
    std::string_view rest = header.value;
    while (!rest.empty()) {
      auto end = rest.find(';');
      std::string_view pair = trim(rest.substr(0, end));
      rest = end == std::string_view::npos ? std::string_view() : rest.substr(end + 1);
      auto equals = pair.find('=');
      if (equals != std::string_view::npos && trim(pair.substr(0, equals)) == name) return trim(pair.substr(equals + 1));
    }
  }
  return std::nullopt;
}

bool is_json(const HttpRequest& request) {
  auto type = find_header(request.headers, "Content-Type");
  return type && to_lower_ascii(*type).find("application/json") != std::string::npos;
}

std::string event(std::string_view name, std::string_view data) {
  return "event: " + std::string(name) + "\ndata: " + std::string(data) + "\n\n";
}

}  // namespace

// ---- ChangeFeed ----

ChangeFeed::ChangeFeed(Stamp stamp, Options options, Wait wait)
    : stamp_(std::move(stamp)), wait_(std::move(wait)), options_(options) {}

ChangeFeed::~ChangeFeed() { stop(); }

std::shared_ptr<EventStream> ChangeFeed::subscribe() {
  auto stream = std::make_shared<EventStream>();
  {
    std::lock_guard lock(mutex_);
    prune_locked();
    if (stopping_ || streams_.size() + joining_.size() >= options_.max_listeners) return nullptr;
    joining_.push_back(stream);
    if (!thread_.joinable()) thread_ = std::thread([this] { watch(); });
  }
  wakeup_.notify_all();
  commits_.ring();  // a newcomer is greeted after the next read, not after the next commit
  return stream;
}

void ChangeFeed::stop() {
  {
    std::lock_guard lock(mutex_);
    if (stopping_ && !thread_.joinable()) return;
    stopping_ = true;
    for (auto& stream : streams_) stream->close();
    for (auto& stream : joining_) stream->close();
    streams_.clear();
    joining_.clear();
  }
  wakeup_.notify_all();
  commits_.ring();
  if (thread_.joinable()) thread_.join();
}

std::size_t ChangeFeed::listeners() {
  std::lock_guard lock(mutex_);
  prune_locked();
  return streams_.size() + joining_.size();
}

void ChangeFeed::prune_locked() {
  auto gone = [](const auto& stream) { return !stream->is_open(); };
  std::erase_if(streams_, gone);
  std::erase_if(joining_, gone);
}

void ChangeFeed::broadcast(std::string_view text) {
  std::erase_if(streams_, [&](const auto& stream) { return !stream->push(text); });
}

void ChangeFeed::watch() {
  using Clock = std::chrono::steady_clock;
  std::optional<std::int64_t> last;  // the signal as last read; none while nobody listened
  Clock::time_point beat = Clock::now();
  bool failing = false;
  std::unique_lock lock(mutex_);
  while (!stopping_) {
    prune_locked();
    if (streams_.empty() && joining_.empty()) {
      last.reset();  // nobody listens: read nothing until someone does
      wakeup_.wait(lock, [this] { return stopping_ || !joining_.empty(); });
      continue;
    }
    if (joining_.empty())
      commits_.wait(lock, wakeup_, wait_, options_.interval, options_.min_gap,
                    [this] { return stopping_ || !joining_.empty(); });
    if (stopping_) break;
    lock.unlock();
    Result<std::int64_t> stamp = stamp_();
    commits_.read();
    reads_.fetch_add(1);
    lock.lock();
    if (stopping_) break;
    if (!stamp) {
      if (!failing) log::warn("dashboard: cannot read the store's change signal: " + stamp.error().message);
      failing = true;
      // Try again after an interval, even with listeners waiting for their hello.
      wakeup_.wait_for(lock, options_.interval, [this] { return stopping_; });
      continue;
    }
    failing = false;
    if (last && *stamp != *last)
      broadcast(event("change", "{\"stamp\":" + std::to_string(++changes_) + "}"));
    last = *stamp;
    // Those who joined before this read are greeted now: whatever they load next is at least as
    // new as the signal just read, and any later commit moves it again.
    for (auto& stream : joining_)
      if (stream->push("retry: 2000\n" + event("hello", "{\"stamp\":" + std::to_string(changes_) + "}")))
        streams_.push_back(std::move(stream));
    joining_.clear();
    if (Clock::now() - beat >= options_.heartbeat) {
      broadcast(": keep-alive\n\n");
      beat = Clock::now();
    }
  }
}

// ---- Dashboard ----

Dashboard::Dashboard(RouterFactory make_router, std::span<const DashboardFile> files, DashboardOptions options)
    : routers_(std::move(make_router)),
      files_(files),
      options_(std::move(options)),
      feed_(
          [this]() -> Result<std::int64_t> { return feed_router().change_stamp(); },  // the watcher's thread only
          options_.feed,
          [this](std::chrono::milliseconds timeout, int interrupt) -> Result<Waited> {  // the same thread
            return feed_router().wait_for_change(timeout, interrupt);
          }) {}

Router& Dashboard::feed_router() {
  if (!feed_router_) {
    feed_router_ = routers_.factory()();
    // Listening before the first read: no commit falls between the read and the first wait.
    (void)feed_router_->wait_for_change(std::chrono::milliseconds(0), -1);
  }
  return *feed_router_;
}

Dashboard::~Dashboard() { feed_.stop(); }

void Dashboard::stop() { feed_.stop(); }

HttpResponse Dashboard::handle(const HttpRequest& request) {
  const std::string& path = request.path;
  if (path == "/api" || path == "/api/login" || path == "/api/logout" || path == "/api/info" || path == "/events") {
    if (auto refused = refuse_cross_site(request)) return std::move(*refused);
    if (path == "/api/login" || path == "/api/logout") {
      if (request.method != "POST") return problem(405, "use POST");
      if (path == "/api/logout") {  // the login ends here, not only in the browser
        if (auto value = cookie(request.headers, kCookie)) {
          std::lock_guard lock(logins_mutex_);
          logins_.erase(std::string(*value));
        }
        HttpResponse response = json_reply(204, "");
        response.headers.push_back({"Set-Cookie", std::string(kCookie) + "=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0"});
        return response;
      }
      return login(request);
    }
    const Access granted = access(request);
    if (granted == Access::None) {
      HttpResponse response = problem(401, "Unauthorized: log in with the server's token, or as a person");
      response.headers.push_back({"WWW-Authenticate", R"(Bearer realm="cleo")"});
      return response;
    }
    if (path == "/api") {
      if (request.method != "POST") return problem(405, "use POST");
      return call(request, granted);
    }
    if (request.method != "GET") return problem(405, "use GET");
    return path == "/events" ? events() : info(granted);
  }
  if (request.method != "GET" && request.method != "HEAD") {
    HttpResponse response = problem(405, "Method Not Allowed");
    response.headers.push_back({"Allow", "GET, HEAD"});
    return response;
  }
  return serve_file(request);
}

Dashboard::Access Dashboard::access(const HttpRequest& request) const {
  if (auto value = cookie(request.headers, kCookie)) {
    std::lock_guard lock(logins_mutex_);
    // A map lookup by the value: its comparisons leak at most how a 256-bit random value begins.
    if (auto found = logins_.find(std::string(*value)); found != logins_.end())
      return found->second ? Access::Person : Access::Read;
  }
  if (options_.token.empty()) return Access::Read;
  if (auto authorization = find_header(request.headers, "Authorization"))
    if (bearer_matches(*authorization, options_.token)) return Access::Read;
  return Access::None;
}

HttpHeader Dashboard::new_login(bool person) {
  std::string value = random_hex(32);
  {
    std::lock_guard lock(logins_mutex_);
    constexpr std::size_t kMaxLogins = 256;  // the oldest go first: logins are few, and people's
    while (logins_.size() >= kMaxLogins) logins_.erase(logins_.begin());
    logins_.emplace(value, person);
  }
  return {"Set-Cookie", std::string(kCookie) + "=" + value + "; Path=/; HttpOnly; SameSite=Strict"};
}

/// The API is for the page itself (and programs that send no browser headers): a request a browser
/// made for another site's page is refused, even from another port of localhost, because the
/// login cookie would otherwise speak for it.
std::optional<HttpResponse> Dashboard::refuse_cross_site(const HttpRequest& request) const {
  if (auto site = find_header(request.headers, "Sec-Fetch-Site")) {
    std::string value = to_lower_ascii(trim(*site));
    if (value != "same-origin" && value != "none") return problem(403, "Forbidden: the dashboard's API serves its own page");
  }
  if (auto origin = find_header(request.headers, "Origin")) {
    std::string host(find_header(request.headers, "Host").value_or(""));
    std::string sent(trim(*origin));
    bool allowed = sent == "http://" + host || sent == "https://" + host;
    for (const auto& extra : options_.allowed_origins) allowed = allowed || extra == sent;
    if (!allowed) return problem(403, "Forbidden: origin not allowed");
  }
  return std::nullopt;
}

HttpResponse Dashboard::login(const HttpRequest& request) {
  if (!is_json(request)) return problem(415, "send application/json");
  auto parsed = json::parse(request.body);
  const json::Value* token = parsed && parsed->is_object() ? parsed->find("token") : nullptr;
  if (!token || !token->is_string()) return problem(400, "send {\"token\": \"…\"}");
  const std::string& sent = token->as_string();
  bool person = false;
  if (!options_.login_code.empty() && constant_time_equal(sent, options_.login_code)) {
    std::lock_guard lock(logins_mutex_);
    person = !std::exchange(code_used_, true);  // one use: a code seen later (scrollback, a log) opens nothing
  }
  if (!person && options_.person_home) {
    auto key = match_person_key(*options_.person_home, sent);
    if (!key) log::warn("dashboard: person keys cannot be read: " + key.error().message);
    person = key && key->has_value();
  }
  const bool reader = !person && !options_.token.empty() && constant_time_equal(sent, options_.token);
  if (!person && !reader) {
    log::warn("dashboard: a login was refused");
    return problem(401, "Unauthorized: not the server's token, its one-use person code, or a person key");
  }
  if (person) log::info("dashboard: a person logged in");
  HttpResponse response = json_reply(204, "");
  response.headers.push_back(new_login(person));
  return response;
}

RouterOptions dashboard_router_options(const RouterOptions& server, bool write) {
  RouterOptions people = server;
  people.read_only = server.read_only || !write;
  people.budget_replies = false;  // the page pages through lists itself
  return people;
}

HttpResponse Dashboard::info(Access access) {
  json::Value body(json::Value::Object{
      {"write", json::Value(options_.write)},
      {"auth", json::Value(!options_.token.empty())},
      {"person", json::Value(access == Access::Person)},
      {"version", json::Value(std::string(product_version()))},
      {"project", json::Value(options_.project)},
  });
  return json_reply(200, body.dump());
}

HttpResponse Dashboard::call(const HttpRequest& request, Access access) {
  if (!is_json(request)) return problem(415, "send application/json");
  auto parsed = json::parse(request.body);
  if (!parsed || !parsed->is_object()) return problem(400, "send {\"gateway\",\"domain\",\"operation\",\"params\"}");
  auto text = [&](std::string_view key) -> std::string {
    const json::Value* value = parsed->find(key);
    return value ? value->string_or_empty() : std::string();
  };
  std::string gateway = text("gateway");
  if (gateway != "query" && gateway != "mutate") return problem(400, "gateway must be \"query\" or \"mutate\"");
  // A person logged in as one is recorded as a person at the dashboard, even in an agent's session;
  // the token's holder reads, as any agent may.
  const bool person = access == Access::Person;
  Request call{gateway == "query" ? Gateway::Query : Gateway::Mutate, text("domain"), text("operation"), json::Value(),
               {.principal = person ? Principal::person(options_.person, "dashboard-login")
                                    : Principal::agent("dashboard:reader", "token"),
                .agent = person ? "human@dashboard" : "dashboard-reader",
                .agent_is_fixed = true}};
  if (const json::Value* params = parsed->find("params"); params && !params->is_null()) {
    if (!params->is_object()) return problem(400, "params must be an object");
    call.params = *params;
  }
  auto router = routers_.take();
  auto reply = [&](const Envelope& envelope) {
    // The page gets advice as JSON (Advice::parts_json) and shows each call its own way.
    HttpResponse response = json_reply(200, to_json(envelope, AdviceAsJson(router->operations())));
    routers_.give_back(std::move(router));
    return response;
  };
  if (call.gateway == Gateway::Mutate) {
    if (!options_.write)
      return reply(failure(Error(ErrorCode::MutationDisabled, "the dashboard is read-only")
                               .with_fix("restart the server with: ct serve --dashboard-write")));
    if (!person)
      return reply(failure(Error(ErrorCode::MutationDisabled,
                                 "changes from the dashboard are a person's: sign in as one (the server's token only reads)")
                               .with_fix("sign in on the page with the one-use code ct serve printed at your terminal, or "
                                         "a person key (ct person key create, at your terminal)")));
    // What a person may change from the page: the operations whose spec says so (tasks, nothing else).
    const Registry& registry = router->operations();
    const OperationSpec* spec = registry.find(call.domain, call.operation);
    if (!spec || !spec->dashboard || spec->gateway != Gateway::Mutate) {
      std::string allowed;
      for (const auto& op : registry.operations())
        if (op.dashboard) allowed += (allowed.empty() ? "" : ", ") + op.full_name();
      std::string name = call.domain + "." + call.operation;
      return reply(failure(Error(ErrorCode::MutationDisabled, "the dashboard does not run " + name + "; it may run " + allowed)
                               .with_fix("run it with ct, or through an agent")));
    }
  }
  return reply(router->dispatch(call));
}

HttpResponse Dashboard::events() {
  auto stream = feed_.subscribe();
  if (!stream) {
    HttpResponse busy = problem(503, "Service Unavailable: too many live views, or the server is stopping");
    busy.headers.push_back({"Retry-After", "5"});
    return busy;
  }
  HttpResponse response;
  response.headers.push_back({"Content-Type", "text/event-stream"});
  response.headers.push_back({"Cache-Control", "no-store"});
  response.headers.push_back({"X-Accel-Buffering", "no"});
  common_headers(response);
  response.stream = std::move(stream);
  return response;
}

HttpResponse Dashboard::serve_file(const HttpRequest& request) {
  std::string_view name = request.path == "/" ? std::string_view("index.html") : std::string_view(request.path).substr(1);
  std::optional<std::string> text;
  if (plain_file_name(name)) {
    if (options_.files_dir) {
      std::ifstream in(*options_.files_dir / std::string(name), std::ios::binary);
      if (in) {
        std::ostringstream buffer;
        buffer << in.rdbuf();
        text = buffer.str();
      }
    } else {
      for (const auto& file : files_)
        if (file.path == name) text = std::string(file.text);
    }
  }
  if (!text) {
    HttpResponse missing = problem(404, "Not Found: the dashboard is at /, MCP at /mcp");
    return missing;
  }
  HttpResponse response;
  response.headers.push_back({"Content-Type", std::string(content_type(name))});
  response.headers.push_back({"Cache-Control", "no-cache"});
  response.headers.push_back({"Content-Security-Policy", std::string(kPolicy)});
  response.headers.push_back({"X-Frame-Options", "DENY"});
  common_headers(response);
  response.body = std::move(*text);
  return response;
}

}  // namespace ct::mcp
