// http: the Streamable HTTP endpoint after the HTTP parser, HttpExchange (gateway/http_exchange.h),
// with the product's Protocol and routers on a real project (as jsonrpc: scratch dir, test mode,
// re-created every kInputsPerProject inputs).
//
// Input: an HTTP/1.1 request as text — "METHOD PATH VERSION", header lines "Name: value", an empty
// line, the body (CRLF or LF). The harness turns it into an HttpRequest as a parser would (the
// query string is cut from the path); it is not itself a parser under test. A header value
// "$session" becomes the id of a live MCP session (a fresh initialize per input), so inputs can
// reach the session paths. Each request goes to two exchanges: `open` (the defaults of `ct serve`)
// and `guarded` (a bearer token, a 512-byte body limit); both keep at most 16 sessions.
//
// Invariants:
//   - nothing crashes; handle() never answers the catch-all 500;
//   - the status is one the endpoint documents; 202 and 204 have no body, every other status a
//     JSON body (Content-Type application/json) that is well-formed, parses whenever the request
//     body parses, and whose objects carry "jsonrpc":"2.0"; 401 has WWW-Authenticate, 405 Allow;
//   - when check_head() refuses a request, handle() gives the same status, with Connection: close;
//   - a success (2xx) never passes what must be refused: a path other than /mcp, a method other
//     than POST/DELETE, an HTTP/1.1 request without exactly one Host, a body over the limit, a
//     well-formed browser Origin or a well-formed Host that is not loopback (DNS rebinding), and
//     on `guarded` a missing or wrong bearer token;
//   - Mcp-Session-Id is handed out only with a 200.
#include <algorithm>
#include <cctype>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <regex>
#include <string>
#include <vector>

#include "core/json_parse.h"
#include "gateway/product.h"
#include "gateway/server_commands.h"
#include "gateway/http_exchange.h"
#include "fuzz_project.h"
#include "fuzz_support.h"

using namespace ct;
using namespace ct::mcp;
namespace fs = std::filesystem;

namespace {

constexpr std::size_t kInputsPerProject = 10000;
constexpr const char* kToken = "fuzz-token";
constexpr std::size_t kGuardedBodyLimit = 512;
constexpr const char* kInitialize =
    R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"fuzz","version":"1"}}})";

struct Harness {
  fs::path project;
  std::unique_ptr<Protocol> protocol;
  std::unique_ptr<HttpExchange> open;
  std::unique_ptr<HttpExchange> guarded;
  std::size_t handled = 0;
};
Harness* harness = nullptr;  // lives as long as the process

void fresh_project() {
  harness->open.reset();
  harness->guarded.reset();
  fuzz::fresh_project(harness->project);
  auto factory = [] { return fuzz::make_router(harness->project); };
  HttpOptions open;
  open.max_sessions = 16;
  harness->open = std::make_unique<HttpExchange>(*harness->protocol, factory, open);
  HttpOptions guarded = open;
  guarded.token = kToken;
  guarded.max_body_bytes = kGuardedBodyLimit;
  harness->guarded = std::make_unique<HttpExchange>(*harness->protocol, factory, guarded);
}

std::string_view trim_blanks(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t' || text.back() == '\r')) text.remove_suffix(1);
  return text;
}

/// The input as the HTTP parser would have delivered it.
HttpRequest request_of(std::string_view input, const std::string& session) {
  HttpRequest request;
  std::string_view head = input;
  std::size_t split = input.find("\r\n\r\n");
  std::size_t skip = 4;
  if (std::size_t lf = input.find("\n\n"); lf != std::string_view::npos && (split == std::string_view::npos || lf < split)) {
    split = lf;
    skip = 2;
  }
  if (split != std::string_view::npos) {
    head = input.substr(0, split);
    request.body = std::string(input.substr(split + skip));
  }
  bool first = true;
  while (!head.empty() || first) {
    std::size_t end = head.find('\n');
    std::string_view line = trim_blanks(head.substr(0, end));
    head = end == std::string_view::npos ? std::string_view() : head.substr(end + 1);
    if (first) {
      first = false;
      std::size_t a = line.find(' ');
      request.method = std::string(line.substr(0, a));
      std::string_view rest = a == std::string_view::npos ? std::string_view() : line.substr(a + 1);
      std::size_t b = rest.find(' ');
      std::string_view target = rest.substr(0, b);
      request.path = std::string(target.substr(0, target.find('?')));
      request.version = b == std::string_view::npos ? std::string() : std::string(rest.substr(b + 1));
      continue;
    }
    std::size_t colon = line.find(':');
    HttpHeader header{std::string(line.substr(0, colon)),
                      colon == std::string_view::npos ? std::string() : std::string(trim_blanks(line.substr(colon + 1)))};
    if (header.value == "$session") header.value = session;
    request.headers.push_back(std::move(header));
  }
  return request;
}

std::string lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::optional<std::string> header(const std::vector<HttpHeader>& headers, std::string_view name) {
  for (const auto& h : headers)
    if (lower(h.name) == lower(name)) return h.value;
  return std::nullopt;
}

std::size_t count(const std::vector<HttpHeader>& headers, std::string_view name) {
  return static_cast<std::size_t>(
      std::count_if(headers.begin(), headers.end(), [&](const HttpHeader& h) { return lower(h.name) == lower(name); }));
}

/// A host as a browser writes it (name or address, optional port) that is not loopback: what a
/// DNS-rebinding or cross-site request carries. Malformed values are no claim either way.
bool foreign_host(std::string_view authority) {
  static const std::regex well_formed(R"(^([a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*|\[[0-9a-f:.]+\])(:[0-9]{1,5})?$)");
  if (authority.empty() || authority.size() > 255) return false;  // (and std::regex recurses per character)
  std::string text = lower(authority);
  if (!std::regex_match(text, well_formed)) return false;
  std::string host = text.substr(0, text.front() == '[' ? text.find(']') + 1 : text.find(':'));
  return host != "localhost" && host != "127.0.0.1" && host != "[::1]";
}

bool foreign_origin(std::string_view origin) {
  std::string text = lower(origin);
  for (std::string_view scheme : {"http://", "https://"})
    if (text.starts_with(scheme)) return foreign_host(std::string_view(text).substr(scheme.size()));
  return false;
}

bool bearer_given(const std::vector<HttpHeader>& headers) {
  auto value = header(headers, "Authorization");
  if (!value) return false;
  std::string_view text = *value;
  if (text.size() < 7 || lower(text.substr(0, 7)) != "bearer ") return false;
  text.remove_prefix(7);
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front()))) text.remove_prefix(1);
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.remove_suffix(1);
  return text == kToken;
}

void check_body_object(std::string_view body, std::string_view input, std::string_view which) {
  json::Outline outline = json::outline(body);
  if (outline.member("jsonrpc") != "\"2.0\"")
    fuzz::finding(std::string(which) + ": a reply without \"jsonrpc\":\"2.0\"", input, body);
  if (outline.member("result").empty() == outline.member("error").empty())
    fuzz::finding(std::string(which) + ": a reply without exactly one of result and error", input, body);
}

void check(HttpExchange& exchange, const HttpRequest& request, bool guarded, std::string_view input) {
  const char* which = guarded ? "guarded" : "open";
  auto finding = [&](std::string_view what, std::string_view detail) {
    fuzz::finding(std::string(which) + ": " + std::string(what), input, detail);
  };
  std::optional<HttpResponse> head = exchange.check_head(request);
  HttpResponse response = exchange.handle(request);
  std::string shown = std::to_string(response.status) + " " + response.body;

  static const std::vector<int> kStatuses = {200, 202, 204, 400, 401, 403, 404, 405, 406, 413, 415, 501};
  if (response.status == 500) finding("the catch-all 500 answered (an exception escaped)", shown);
  if (std::find(kStatuses.begin(), kStatuses.end(), response.status) == kStatuses.end())
    finding("an undocumented status", shown);
  if (response.status == 202 || response.status == 204) {
    if (!response.body.empty()) finding("a 202/204 with a body", shown);
  } else {
    if (header(response.headers, "Content-Type") != "application/json") finding("a body without Content-Type application/json", shown);
    json::Outline outline = json::outline(response.body);
    if (!outline.well_formed) finding("a body that is not well-formed JSON", shown);
    if (json::parse(request.body) && !json::parse(response.body)) finding("a reply to a parsable body does not parse", shown);
    if (outline.top == json::Type::Array) {
      if (outline.elements.empty()) finding("an empty batch reply", shown);
      for (std::string_view element : outline.elements) check_body_object(element, input, which);
    } else {
      check_body_object(response.body, input, which);
    }
  }
  if (response.status == 401 && !header(response.headers, "WWW-Authenticate")) finding("a 401 without WWW-Authenticate", shown);
  if (response.status == 405 && !header(response.headers, "Allow")) finding("a 405 without Allow", shown);
  if (head) {
    if (head->status != response.status) finding("handle() and check_head() refuse differently", shown);
    if (lower(header(response.headers, "Connection").value_or("")) != "close")
      finding("a refusal from the head without Connection: close", shown);
  }
  if (header(response.headers, "Mcp-Session-Id") && response.status != 200) finding("a session id with a non-200", shown);

  if (response.status / 100 != 2) return;
  // A success: nothing that must be refused got through.
  std::size_t hosts = count(request.headers, "Host");
  if (request.path != "/mcp") finding("a success on a path other than /mcp", shown);
  if (request.method != "POST" && request.method != "DELETE") finding("a success for a method other than POST or DELETE", shown);
  if (hosts > 1 || (hosts == 0 && request.version != "HTTP/1.0")) finding("a success without exactly one Host", shown);
  if (request.body.size() > (guarded ? kGuardedBodyLimit : HttpOptions{}.max_body_bytes)) finding("a success over the body limit", shown);
  if (auto origin = header(request.headers, "Origin"); origin && foreign_origin(*origin))
    finding("a success for a foreign Origin", *origin + " -> " + shown);
  if (auto host = header(request.headers, "Host"); host && foreign_host(*host))
    finding("a success for a foreign Host (DNS rebinding)", *host + " -> " + shown);
  if (guarded && !bearer_given(request.headers)) finding("a success without the bearer token", shown);
}

std::string new_session(HttpExchange& exchange, bool guarded) {
  HttpRequest initialize{"POST", "/mcp", "HTTP/1.1",
                         {{"Host", "127.0.0.1:8808"}, {"Accept", "application/json, text/event-stream"},
                          {"Content-Type", "application/json"}},
                         kInitialize};
  if (guarded) initialize.headers.push_back({"Authorization", std::string("Bearer ") + kToken});
  HttpResponse response = exchange.handle(initialize);
  auto id = header(response.headers, "Mcp-Session-Id");
  if (response.status != 200 || !id) {
    std::fprintf(stderr, "http_fuzz: initialize failed: %d %s\n", response.status, response.body.c_str());
    std::abort();
  }
  return *id;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  harness = new Harness;
  harness->project = fuzz::hermetic_environment("http") / "project";
  std::fprintf(stderr, "http_fuzz: project in %s\n", harness->project.c_str());
  harness->protocol = std::make_unique<Protocol>(registry(), server_info());
  fresh_project();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (++harness->handled % kInputsPerProject == 0) fresh_project();
  std::string_view input = fuzz::as_text(data, size);
  for (bool guarded : {false, true}) {
    HttpExchange& exchange = guarded ? *harness->guarded : *harness->open;
    HttpRequest request = request_of(input, new_session(exchange, guarded));
    check(exchange, request, guarded, input);
  }
  return 0;
}
