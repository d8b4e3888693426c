// The GitHub Issues tracker (engines/adapters/tracker.h) over GitHub's REST API, with cpp-httplib
// (and so OpenSSL). Built into the module libct_github.so, which `ct` loads on first use
// (engines/adapters/github_tracker.cpp) so that its start-up never loads OpenSSL; test and
// benchmark programs link it in whole. Registers itself through provide_github_client().
//
// A well-behaved client: Link-header pagination; the first page of an incremental pull is a
// conditional request (If-None-Match with the ETag kept in the cursor: a 304 costs no rate limit);
// primary limits (X-RateLimit-Remaining 0 → wait for X-RateLimit-Reset), secondary limits and
// Retry-After (403/429) waited out with backoff, bounded in total (options.maxWaitSeconds, default
// 900); 5xx retried for GET and PATCH (idempotent: they set fields) and never blindly for POST.
// Waits are scaled by options.waitScale (tests set 0: no real sleep, still counted).
#include <httplib.h>
#include <strings.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <map>
#include <optional>
#include <cmath>
#include <thread>

#include "core/json_parse.h"
#include "engines/adapters/github_client.h"

namespace ct::tracker {
namespace {

struct Response {
  int status = 0;
  std::string body;
  httplib::Headers headers;
  std::string header(const std::string& name) const {
    auto found = headers.find(name);
    if (found == headers.end()) {
      for (const auto& [key, value] : headers)
        if (strcasecmp(key.c_str(), name.c_str()) == 0) return value;
      return "";
    }
    return found->second;
  }
};

/// The `rel="next"` URL of a Link header, "" for none.
std::string next_link(const std::string& link) {
  std::size_t at = 0;
  while (at < link.size()) {
    auto open = link.find('<', at);
    auto close = link.find('>', open);
    if (open == std::string::npos || close == std::string::npos) break;
    auto end = link.find(',', close);
    std::string params = link.substr(close + 1, end == std::string::npos ? std::string::npos : end - close - 1);
    if (params.find("rel=\"next\"") != std::string::npos) return link.substr(open + 1, close - open - 1);
    if (end == std::string::npos) break;
    at = end + 1;
  }
  return "";
}

std::string url_encode(std::string_view text) {
  static const char* kHex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : text) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

std::int64_t number_in_url(const std::string& url) {
  auto slash = url.rfind('/');
  if (slash == std::string::npos) return 0;
  std::int64_t n = 0;
  for (char c : url.substr(slash + 1)) {
    if (c < '0' || c > '9') return 0;
    n = n * 10 + (c - '0');
  }
  return n;
}

class GitHubTracker final : public Tracker {
 public:
  GitHubTracker(const Settings& settings, std::string api, std::string token)
      : settings_(settings), api_(std::move(api)), token_(std::move(token)) {
    while (!api_.empty() && api_.back() == '/') api_.pop_back();
    // "https://host[:port]/prefix" → the client's scheme-host-port and the path prefix.
    auto scheme = api_.find("://");
    auto path = api_.find('/', scheme == std::string::npos ? 0 : scheme + 3);
    origin_ = path == std::string::npos ? api_ : api_.substr(0, path);
    prefix_ = path == std::string::npos ? "" : api_.substr(path);
    client_ = std::make_unique<httplib::Client>(origin_);
    client_->set_connection_timeout(10);
    client_->set_read_timeout(60);
    client_->set_keep_alive(true);
    const auto& options = settings_.options;
    if (options["waitScale"].is_number()) wait_scale_ = options["waitScale"].as_double();
    if (options["maxWaitSeconds"].is_int()) max_wait_ = static_cast<double>(options["maxWaitSeconds"].as_int());
    repo_path_ = prefix_ + "/repos/" + settings_.repository;
  }

  std::string_view name() const override { return "github"; }

  Result<Page> pull(const PullOptions& options) override {
    // The cursor: {since, page, etag, comments?: {since, page, etag}, phase?}. Items are asked for
    // by last change, oldest first, since the last change seen (inclusive: items at the boundary
    // come again, and are matched by id). With options.comments, once the items are read the
    // repository's comments are (phase "comments"): one listing for every issue, by the same rule.
    json::Value cursor = json::Value::object();
    if (!options.cursor.empty()) {
      auto parsed = json::parse(options.cursor);
      if (parsed && parsed->is_object()) cursor = std::move(*parsed);
    }
    if (options.comments && cursor["phase"] == json::Value("comments")) return pull_comments(options, cursor);
    CT_TRY_ASSIGN(Response response, changed_page(repo_path_ + "/issues?state=all", cursor, options.page_size));
    Page page;
    if (response.status == 304) {  // nothing changed since: the same cursor (then the comments')
      if (options.comments) {
        cursor.set("phase", "comments");
        page.more = true;
      }
      page.cursor = options.comments ? cursor.dump() : options.cursor;
      return page;
    }
    auto parsed = json::parse(response.body);
    if (!parsed || !parsed->is_array()) return fail(ErrorCode::EngineFailed, "GitHub answered the issues list with no list");
    std::string last = cursor["since"].string_or_empty();
    for (const auto& value : parsed->as_array()) {
      const bool is_pull = value.contains("pull_request") && !value["pull_request"].is_null();
      if (value["updated_at"].is_string()) last = std::max(last, value["updated_at"].as_string());
      if (is_pull && !options.include_pull_requests) continue;
      CT_TRY_ASSIGN(Item item, item_of(value));
      page.items.push_back(std::move(item));
    }
    const bool more = !next_link(response.header("Link")).empty();
    json::Value next = after_page(cursor, response, last, more);
    if (cursor.contains("comments")) next.set("comments", cursor["comments"]);
    if (!more && options.comments) next.set("phase", "comments");  // the comments next
    page.cursor = next.dump();
    page.more = more || options.comments;
    return page;
  }

  /// A page of the repository's comments (GET /repos/{o}/{r}/issues/comments), by last change, oldest
  /// first, from the comments' own {since, page, etag} in the cursor; the last page ends the phase.
  Result<Page> pull_comments(const PullOptions& options, json::Value cursor) {
    const json::Value at = cursor["comments"];
    CT_TRY_ASSIGN(Response response, changed_page(repo_path_ + "/issues/comments", at, options.page_size));
    Page page;
    json::Value next = at;
    bool more = false;
    if (response.status != 304) {
      auto parsed = json::parse(response.body);
      if (!parsed || !parsed->is_array())
        return fail(ErrorCode::EngineFailed, "GitHub answered the comments list with no list");
      std::string last = at["since"].string_or_empty();
      for (const auto& value : parsed->as_array()) {
        if (value["updated_at"].is_string()) last = std::max(last, value["updated_at"].as_string());
        const std::int64_t number = number_in_url(value["issue_url"].string_or_empty());
        if (number <= 0) continue;
        auto known = ids_.find(number);
        page.comments.push_back(comment_of(value, known != ids_.end() ? known->second : "#" + std::to_string(number)));
      }
      more = !next_link(response.header("Link")).empty();
      next = after_page(at, response, last, more);
    }
    cursor.set("comments", std::move(next));
    if (!more) cursor.erase("phase");
    page.cursor = cursor.dump();
    page.more = more;
    return page;
  }

  /// One page of a list GitHub sorts by last change (`list`: its path and any query of its own),
  /// oldest change first, from a position {since, page, etag}: conditional on its first page.
  Result<Response> changed_page(const std::string& list, const json::Value& at, std::size_t page_size) {
    const std::string since = at["since"].string_or_empty();
    const std::int64_t page_number = at["page"].is_int() ? at["page"].as_int() : 1;
    std::string path = list + (list.find('?') == std::string::npos ? "?" : "&") +
                       "sort=updated&direction=asc&per_page=" + std::to_string(std::clamp<std::size_t>(page_size, 1, 100)) +
                       "&page=" + std::to_string(page_number);
    if (!since.empty()) path += "&since=" + url_encode(since);
    return request("GET", path, "", page_number == 1 ? at["etag"].string_or_empty() : "");
  }

  /// The position after a page of changed_page whose latest change is `last`: the same query's next
  /// page when the whole page changed at one instant, else after `last`; with the list's ETag when
  /// it was read whole in one page and nothing moved (the next first page is then conditional).
  static json::Value after_page(const json::Value& at, const Response& response, const std::string& last, bool more) {
    const std::string since = at["since"].string_or_empty();
    const std::int64_t page_number = at["page"].is_int() ? at["page"].as_int() : 1;
    json::Value next = json::Value::object();
    if (more && last == since) {
      next.set("since", since);
      next.set("page", page_number + 1);
    } else {
      next.set("since", last);
      next.set("page", 1);
    }
    if (!more && page_number == 1 && !response.header("ETag").empty() && last == since)
      next.set("etag", response.header("ETag"));
    return next;
  }

  /// The number of the milestone titled `title` (GET /repos/{o}/{r}/milestones?state=all, read once
  /// per sync); 0 when the repository has none by that title.
  Result<std::int64_t> milestone_number(const std::string& title) {
    if (!milestones_) {
      std::map<std::string, std::int64_t> found;
      std::string path = repo_path_ + "/milestones?state=all&per_page=100";
      while (!path.empty()) {
        CT_TRY_ASSIGN(Response response, request("GET", path, "", ""));
        auto parsed = json::parse(response.body);
        if (!parsed || !parsed->is_array())
          return fail(ErrorCode::EngineFailed, "GitHub answered the milestones with no list");
        for (const auto& value : parsed->as_array())
          if (value["title"].is_string() && value["number"].is_int())
            found.emplace(value["title"].as_string(), value["number"].as_int());
        path = relative(next_link(response.header("Link")));
      }
      milestones_ = std::move(found);
    }
    auto hit = milestones_->find(title);
    return hit == milestones_->end() ? 0 : hit->second;
  }

  Result<std::vector<Comment>> comments(const std::string& item, const std::string& since) override {
    CT_TRY_ASSIGN(std::int64_t number, number_of(item));
    std::string path = repo_path_ + "/issues/" + std::to_string(number) + "/comments?per_page=100";
    if (!since.empty()) path += "&since=" + url_encode(since);
    std::vector<Comment> out;
    while (!path.empty()) {
      CT_TRY_ASSIGN(Response response, request("GET", path, "", ""));
      auto parsed = json::parse(response.body);
      if (!parsed || !parsed->is_array()) return fail(ErrorCode::EngineFailed, "GitHub answered the comments with no list");
      for (const auto& value : parsed->as_array()) out.push_back(comment_of(value, item));
      path = relative(next_link(response.header("Link")));
    }
    return out;
  }

  Result<Item> push(const Edit& edit) override {
    CT_TRY_ASSIGN(std::int64_t number, number_of(edit.id));
    json::Value body = json::Value::object();
    if (edit.title) body.set("title", *edit.title);
    if (edit.body) body.set("body", *edit.body);
    if (edit.state) body.set("state", *edit.state);
    if (edit.state_reason) body.set("state_reason", *edit.state_reason);
    if (edit.labels) body.set("labels", json::Value::array_of(*edit.labels));
    CT_TRY_ASSIGN(Response response, request("PATCH", repo_path_ + "/issues/" + std::to_string(number), body.dump(), ""));
    auto parsed = json::parse(response.body);
    if (!parsed) return fail(ErrorCode::EngineFailed, "GitHub answered the edit with no issue");
    return item_of(*parsed);
  }

  Result<Item> create(const Item& draft) override {
    json::Value body = json::Value::object();
    body.set("title", draft.title);
    body.set("body", draft.body);
    if (!draft.labels.empty()) body.set("labels", json::Value::array_of(draft.labels));
    if (!draft.milestone.empty()) {
      CT_TRY_ASSIGN(std::int64_t milestone, milestone_number(draft.milestone));
      if (milestone > 0) body.set("milestone", milestone);
    }
    CT_TRY_ASSIGN(Response response, request("POST", repo_path_ + "/issues", body.dump(), ""));
    auto parsed = json::parse(response.body);
    if (!parsed) return fail(ErrorCode::EngineFailed, "GitHub answered the new issue with no issue");
    return item_of(*parsed);
  }

  void know(const std::string& item, std::string_view key) override {
    auto hash = key.rfind('#');
    if (hash == std::string_view::npos) return;
    std::int64_t n = 0;
    for (char c : key.substr(hash + 1)) {
      if (c < '0' || c > '9') return;
      n = n * 10 + (c - '0');
    }
    if (n > 0) numbers_[item] = n;
  }

  Result<Comment> comment(const std::string& item, std::string_view text) override {
    CT_TRY_ASSIGN(std::int64_t number, number_of(item));
    json::Value body = json::Value::object();
    body.set("body", text);
    CT_TRY_ASSIGN(Response response,
                  request("POST", repo_path_ + "/issues/" + std::to_string(number) + "/comments", body.dump(), ""));
    auto parsed = json::parse(response.body);
    if (!parsed) return fail(ErrorCode::EngineFailed, "GitHub answered the comment with nothing");
    return comment_of(*parsed, item);
  }

 private:
  /// The number of an item by its node id (learnt from what was pulled), or "#n".
  Result<std::int64_t> number_of(const std::string& id) {
    if (id.starts_with("#")) return std::stoll(id.substr(1));
    auto found = numbers_.find(id);
    if (found != numbers_.end()) return found->second;
    return fail(Error(ErrorCode::EngineFailed, "the GitHub issue " + id + " was not seen by this sync"));
  }

  std::string relative(const std::string& url) const {
    if (url.empty()) return "";
    return url.starts_with(origin_) ? url.substr(origin_.size()) : url;
  }

  Comment comment_of(const json::Value& value, const std::string& item) {
    Comment out;
    out.id = value["node_id"].string_or_empty();
    if (out.id.empty() && value["id"].is_int()) out.id = std::to_string(value["id"].as_int());
    out.item = item;
    out.author = value["user"]["login"].string_or_empty();
    out.created_at = value["created_at"].string_or_empty();
    out.body = value["body"].string_or_empty();
    return out;
  }

  Result<Item> item_of(const json::Value& value) {
    if (!value.is_object() || !value["number"].is_int())
      return fail(ErrorCode::EngineFailed, "GitHub answered with an issue that has no number");
    Item item;
    const std::int64_t number = value["number"].as_int();
    item.id = value["node_id"].string_or_empty();
    if (item.id.empty()) item.id = "#" + std::to_string(number);
    numbers_[item.id] = number;
    ids_[number] = item.id;
    item.key = settings_.repository + "#" + std::to_string(number);
    item.url = value["html_url"].string_or_empty();
    item.updated_at = value["updated_at"].string_or_empty();
    item.version = item.updated_at;
    item.title = value["title"].string_or_empty();
    item.body = value["body"].string_or_empty();
    item.state = value["state"].string_or_empty();
    item.state_reason = value["state_reason"].string_or_empty();
    if (value["labels"].is_array())
      for (const auto& label : value["labels"].as_array())
        item.labels.push_back(label.is_string() ? label.as_string() : label["name"].string_or_empty());
    item.milestone = value["milestone"]["title"].string_or_empty();
    if (auto parent = number_in_url(value["parent_issue_url"].string_or_empty()); parent > 0)
      item.parent = "#" + std::to_string(parent);
    if (value["assignees"].is_array())
      for (const auto& who : value["assignees"].as_array()) item.assignees.push_back(who["login"].string_or_empty());
    item.author = value["user"]["login"].string_or_empty();
    item.pull_request = value.contains("pull_request") && !value["pull_request"].is_null();
    // Blockers, where the API has them: only asked for when the summary says there are some.
    const auto& deps = value["issue_dependencies_summary"];
    if (deps["total_blocked_by"].is_int() && deps["total_blocked_by"].as_int() > 0) {
      std::string path = repo_path_ + "/issues/" + std::to_string(number) + "/dependencies/blocked_by?per_page=100";
      while (!path.empty()) {
        CT_TRY_ASSIGN(Response response, request("GET", path, "", ""));
        auto parsed = json::parse(response.body);
        if (!parsed || !parsed->is_array()) break;
        for (const auto& other : parsed->as_array())
          if (other["number"].is_int()) item.blocked_by.push_back("#" + std::to_string(other["number"].as_int()));
        path = relative(next_link(response.header("Link")));
      }
    }
    return item;
  }

  /// Sleeps `seconds` scaled (tests: not at all) — or, for `real_clock` (the primary limit's reset,
  /// a moment of the server's clock), as long as it takes — within the sync's budget of waiting.
  Result<void> wait(double seconds, std::string_view why, bool real_clock = false) {
    seconds = std::max(0.0, seconds);
    if (waited_ + seconds > max_wait_)
      return fail(Error(ErrorCode::EngineFailed, "GitHub asks to wait " + std::to_string(static_cast<int>(seconds)) +
                                                     " s more (" + std::string(why) + "), past the sync's limit")
                      .retry_after(static_cast<std::int64_t>(std::ceil(seconds))));
    waited_ += seconds;
    if (settings_.progress)
      settings_.progress("waiting " + std::to_string(static_cast<std::int64_t>(std::ceil(seconds))) + " s: " +
                         std::string(why));
    const double scale = real_clock ? 1.0 : wait_scale_;
    if (scale > 0) std::this_thread::sleep_for(std::chrono::duration<double>(seconds * scale));
    return {};
  }

  /// GitHub's 422 "Validation Failed": the values were refused (E_VALIDATION, never retried), with
  /// what GitHub said of each field ({resource, field, code, message?}) and the field it names.
  static Error refused(const std::string& method, const std::string& path, const std::string& body, Error error) {
    auto parsed = json::parse(body);
    std::string said, field;
    if (parsed && (*parsed)["errors"].is_array()) {
      error.details.set("errors", (*parsed)["errors"]);
      for (const auto& one : (*parsed)["errors"].as_array()) {
        if (field.empty()) field = one["field"].string_or_empty();
        std::string text = one["message"].string_or_empty();
        if (text.empty())
          text = one["field"].string_or_empty() + " is " + (one["code"] == json::Value("missing_field") ? "missing"
                                                                                                       : "invalid");
        said += (said.empty() ? "" : "; ") + text;
      }
    }
    if (said.empty()) said = parsed ? (*parsed)["message"].string_or_empty() : "Validation Failed";
    Error out(ErrorCode::Validation, "GitHub refused " + method + " " + path + ": " + said);
    out.details = std::move(error.details);
    if (!field.empty()) out.details.set("field", field);
    return out;
  }

  Result<Response> request(const std::string& method, const std::string& path, const std::string& body,
                           const std::string& etag) {
    const bool idempotent = method == "GET" || method == "PATCH";
    double backoff = 1;
    for (int attempt = 1;; ++attempt) {
      httplib::Headers headers = {{"Accept", "application/vnd.github+json"},
                                  {"X-GitHub-Api-Version", "2022-11-28"},
                                  {"User-Agent", "cleo-ct"}};
      if (!token_.empty()) headers.emplace("Authorization", "Bearer " + token_);
      if (!etag.empty()) {
        headers.emplace("If-None-Match", etag);
        // A 304 has no body and, from GitHub, no Content-Length: cpp-httplib (0.11) would read its
        // "body" until the server closes the kept-alive connection (seconds). Closed at once instead.
        headers.emplace("Connection", "close");
      }
      httplib::Result result = method == "GET"     ? client_->Get(path, headers)
                               : method == "PATCH" ? client_->Patch(path, headers, body, "application/json")
                                                   : client_->Post(path, headers, body, "application/json");
      requests_++;
      if (!result) {
        if (idempotent && attempt < 4) {
          CT_TRY(wait(backoff, "network error"));
          backoff *= 2;
          continue;
        }
        return fail(Error(ErrorCode::EngineFailed, "cannot reach GitHub at " + origin_ + ": " +
                                                       httplib::to_string(result.error())));
      }
      Response response{result->status, result->body, result->headers};
      if (response.status < 300 || response.status == 304) return response;
      const std::string message = [&] {
        auto parsed = json::parse(response.body);
        return parsed ? (*parsed)["message"].string_or_empty() : std::string();
      }();
      const std::string retry_after = response.header("Retry-After");
      const bool secondary = message.find("secondary rate limit") != std::string::npos;
      const bool exhausted = response.header("X-RateLimit-Remaining") == "0";
      if ((response.status == 403 || response.status == 429) && (secondary || exhausted || !retry_after.empty())) {
        double seconds = backoff * 60;
        bool until_reset = false;
        if (!retry_after.empty()) {
          seconds = std::atof(retry_after.c_str());
        } else if (exhausted && !response.header("X-RateLimit-Reset").empty()) {
          // The window opens again at X-RateLimit-Reset (+1 s for the clocks' rounding): a real wait.
          const auto now = std::chrono::duration_cast<std::chrono::seconds>(
                               std::chrono::system_clock::now().time_since_epoch()).count();
          seconds = std::max<double>(1, std::atof(response.header("X-RateLimit-Reset").c_str()) + 1 -
                                            static_cast<double>(now));
          until_reset = true;
        }
        if (attempt < 6) {
          CT_TRY(wait(seconds, secondary ? "secondary rate limit" : "rate limit", until_reset));
          backoff *= 2;
          continue;
        }
      }
      if (response.status >= 500 && idempotent && attempt < 4) {
        CT_TRY(wait(backoff, "GitHub answered " + std::to_string(response.status)));
        backoff *= 2;
        continue;
      }
      Error error(ErrorCode::EngineFailed, "GitHub answered " + method + " " + path + " with " +
                                               std::to_string(response.status) + (message.empty() ? "" : ": " + message));
      error.details.set("status", response.status);
      if (response.status == 401) error.fix = "set GITHUB_TOKEN or GH_TOKEN, or run `gh auth login`";
      if (response.status == 422) return fail(refused(method, path, response.body, std::move(error)));
      return fail(std::move(error));
    }
  }

  Settings settings_;
  std::string api_, token_, origin_, prefix_, repo_path_;
  std::unique_ptr<httplib::Client> client_;
  std::map<std::string, std::int64_t> numbers_;   // an item's number by its node id
  std::map<std::int64_t, std::string> ids_;       // and back
  std::optional<std::map<std::string, std::int64_t>> milestones_;  // number by title, once read
  double wait_scale_ = 1;
  double max_wait_ = 900;
  double waited_ = 0;
  std::int64_t requests_ = 0;
};

Result<std::unique_ptr<Tracker>> open_client(const Settings& settings, const std::string& api, const std::string& token) {
  return std::unique_ptr<Tracker>(new GitHubTracker(settings, api, token));
}

#ifdef CT_GITHUB_LINKED
// Linked in whole into a program (tests, benchmarks): registered as it starts.
[[maybe_unused]] const bool kRegistered = (provide_github_client(&open_client), true);
#endif

}  // namespace
}  // namespace ct::tracker

/// The module's entry point (libct_github.so), which open_github_tracker looks up with dlsym.
extern "C" __attribute__((visibility("default"))) ct::tracker::GitHubClientFactory ct_github_client_factory() {
  return &ct::tracker::open_client;
}
