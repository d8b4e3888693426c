// The web dashboard of `ct serve`, for the people who watch over the agents: a page (HTML, CSS
// and JavaScript embedded at build time, gateway/dashboard/) that reads the operations through
// the router, and a live feed of changes as Server-Sent Events. No sockets here: the exchange
// (http_exchange.h) hands it every request for a path other than /mcp, after its Origin and Host
// checks; the server (http_transport.cpp) sends an event stream as its text comes.
//
//   GET  /, /<file>    the page's files (no data in them, so no token needed)
//   GET  /api/info     {write, auth, person, version, project}
//   POST /api/login    {"token": …} → a login cookie (HttpOnly, SameSite=Strict): a reader's for the
//                      bearer token, a person's for the one-use code `ct serve` printed at a person's
//                      terminal or a person key (engines/project/person_keys.h)
//   POST /api/logout   the cookie is cleared and its login ends
//   POST /api          {"gateway","domain","operation","params"} → the operation's envelope
//   GET  /events       text/event-stream: `hello` once, then `change` after any commit (any process)
//
// The bearer token is the MCP clients' too, so it proves no person: it reads. Read-only unless the
// server was started with --dashboard-write; then a person logged in as one may add, update,
// complete, reopen, start and stop tasks, approve and verify, recorded as human@dashboard with the
// person's principal (domains/principal.h).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "core/error.h"
#include "gateway/doorbell.h"
#include "gateway/event_stream.h"
#include "gateway/http_exchange.h"
#include "gateway/router_pool.h"

namespace ct::mcp {

/// One file of the page: its name under gateway/dashboard/ and its text.
struct DashboardFile {
  std::string_view path;
  std::string_view text;
};

/// The page's files as built into ct-serve (generated from gateway/dashboard/).
std::span<const DashboardFile> embedded_dashboard_files();

/// Watches the store's change signal (Router::change_stamp, a cheap read) on a thread of its own
/// while anyone listens, and tells every listener when it moved: at most one `change` event per
/// interval — or, on a store that tells of its commits (`wait`: Router::wait_for_change), per
/// min_gap —, however many commits it covers. Its own router: one more database connection.
class ChangeFeed {
 public:
  using Stamp = std::function<Result<std::int64_t>()>;
  using Wait = std::function<Result<Waited>(std::chrono::milliseconds timeout, int interrupt)>;
  struct Options {
    std::chrono::milliseconds interval{250};   // how often the signal is read while anyone listens
    std::chrono::milliseconds min_gap{20};     // on a store that tells of commits, reads at most this often
    std::chrono::milliseconds heartbeat{15000};  // a comment line this often (dead peers show up)
    std::size_t max_listeners = 256;
  };

  ChangeFeed(Stamp stamp, Options options, Wait wait = {});
  ~ChangeFeed();
  ChangeFeed(const ChangeFeed&) = delete;
  ChangeFeed& operator=(const ChangeFeed&) = delete;

  /// A new listener; it receives `hello` once the signal has been read after it joined (a page
  /// loads its data then, so no change can fall between). Null when the feed has stopped or
  /// max_listeners are listening.
  std::shared_ptr<EventStream> subscribe();
  /// Ends every stream and the watcher; later subscribe() calls get null.
  void stop();
  std::size_t listeners();
  /// How many times the signal was read (tests: it is not read while nobody listens).
  std::uint64_t reads() const { return reads_.load(); }

 private:
  void watch();
  void broadcast(std::string_view text);
  void prune_locked();  // forgets streams that ended

  Stamp stamp_;
  Wait wait_;
  Options options_;
  std::mutex mutex_;
  std::condition_variable wakeup_;
  CommitWait commits_;  // how the watcher waits between reads (rung to end a wait for the store)
  std::vector<std::shared_ptr<EventStream>> streams_;  // listening, and greeted
  std::vector<std::shared_ptr<EventStream>> joining_;  // waiting for their hello
  bool stopping_ = false;
  std::uint64_t changes_ = 0;
  std::atomic<std::uint64_t> reads_{0};
  std::thread thread_;
};

struct DashboardOptions {
  bool write = false;                            // --dashboard-write
  std::string token;                             // the server's bearer token ("" = none)
  std::vector<std::string> allowed_origins;      // --allow-origin: pages elsewhere that may call /api
  std::string project;                           // shown by the page
  /// Serve the page's files from this directory instead of the built-in copies (development:
  /// CLEO_DASHBOARD_DIR); every request reads the file again.
  std::optional<std::filesystem::path> files_dir;
  ChangeFeed::Options feed;
  /// A code that logs one browser in as a person, once ("" = none): `ct serve` makes and prints it
  /// only when a person started it at their terminal (an agent that started it would read it).
  std::string login_code;
  /// The person's home, whose person keys log a person in (none: person keys are not accepted).
  std::optional<std::filesystem::path> person_home;
  /// The user the page's person acts as (their principal's id).
  std::string person;
};

/// The options of the page's routers, from the server's: read-only unless `write`, lists never
/// cut to an agent's reply budget. Who calls is each request's principal: a person signed in as one
/// (recorded as human@dashboard with their principal, even in an agent's session), else a reader.
RouterOptions dashboard_router_options(const RouterOptions& server, bool write);

class Dashboard {
 public:
  /// `make_router` makes the routers of /api (and one for the feed): they should be read-only
  /// unless options.write (dashboard_router_options).
  Dashboard(RouterFactory make_router, std::span<const DashboardFile> files, DashboardOptions options);
  ~Dashboard();

  /// A request for any path but /mcp, after the exchange's Origin and Host checks. A GET of
  /// /events answers with HttpResponse::stream set.
  HttpResponse handle(const HttpRequest& request);
  /// The server is stopping: every event stream ends.
  void stop();
  const DashboardOptions& options() const { return options_; }
  ChangeFeed& feed() { return feed_; }

 private:
  /// What a request may do: nothing, read (the bearer token, or no token set), or act as a person.
  enum class Access { None, Read, Person };
  HttpResponse serve_file(const HttpRequest& request);
  HttpResponse call(const HttpRequest& request, Access access);
  HttpResponse login(const HttpRequest& request);
  HttpResponse info(Access access);
  HttpResponse events();
  Access access(const HttpRequest& request) const;
  /// A new login cookie's Set-Cookie header.
  HttpHeader new_login(bool person);
  std::optional<HttpResponse> refuse_cross_site(const HttpRequest& request) const;

  RouterPool routers_;
  std::span<const DashboardFile> files_;
  DashboardOptions options_;
  /// The logins: a random cookie value each, true for a person's. Ended by logout.
  mutable std::mutex logins_mutex_;
  std::map<std::string, bool> logins_;
  bool code_used_ = false;
  /// The feed's own connection (its thread only), listening for commits from its first use.
  Router& feed_router();
  std::unique_ptr<Router> feed_router_;
  ChangeFeed feed_;
};

}  // namespace ct::mcp
