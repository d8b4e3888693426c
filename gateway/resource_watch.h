// Resource subscriptions: which task and epic resources (disclosure/resources.h) the clients of
// this process watch, and the thread that tells them when one changed — whichever process made
// the change (another `ct`, another server, a store of either backend). While anyone subscribes
// it reads the store's change signal (Router::change_stamp) every interval; when it moved it reads
// what changed since (system.changes: the audit trail's field changes) and sends
// notifications/resources/updated once per changed resource, however many writes it covers:
//  - cleo://task/T1 changed when T1 did;
//  - cleo://epic/T1 changed when T1 or any task in its subtree did, or one left it (moved, deleted).
// The subscriptions of the stateless revision (subscriptions/listen) carry their request's id in
// each notification's _meta. Its own router: one more database connection, on its thread only.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <thread>

#include "gateway/outbox.h"
#include "gateway/router_pool.h"

namespace ct::mcp {

class ResourceWatch {
 public:
  struct Options {
    std::chrono::milliseconds interval{250};      // the change signal is read this often while anyone subscribes
    std::chrono::milliseconds heartbeat{15000};   // each subscriber's outbox is shown life this often
    std::size_t max_per_subscriber = 100;         // resources one connection (or listen stream) may watch
    std::size_t max_subscribers = 1024;
  };
  using Id = std::uint64_t;

  ResourceWatch(RouterFactory make_router, Options options);
  explicit ResourceWatch(RouterFactory make_router) : ResourceWatch(std::move(make_router), Options{}) {}
  ~ResourceWatch();
  ResourceWatch(const ResourceWatch&) = delete;
  ResourceWatch& operator=(const ResourceWatch&) = delete;

  /// A subscriber whose notifications go to `outbox`. `subscription_id` (the JSON text of the id of
  /// a subscriptions/listen request) goes into each notification's _meta; none for
  /// resources/subscribe. Nullopt when max_subscribers are subscribed or the watch has stopped.
  std::optional<Id> add(std::shared_ptr<Outbox> outbox, std::optional<std::string> subscription_id = std::nullopt);
  /// Watches `uri` (canonical: cleo://task/T1, cleo://epic/T1) for `id`; false when the subscriber
  /// already watches max_per_subscriber others (or is gone). Watching it twice is watching it once.
  /// Returns once the watcher knows where the audit trail stands (at most a few seconds when the
  /// store cannot be read), so every change committed after it is told.
  bool subscribe(Id id, const std::string& uri);
  void unsubscribe(Id id, std::string_view uri);
  /// Forgets the subscriber and what it watched.
  void remove(Id id);
  /// Ends the thread; later add() calls get nullopt. Called by the destructor.
  void stop();

  /// For tests and limits: resources watched by `id`, and subscribers in all.
  std::size_t watched(Id id);
  std::size_t subscribers();
  /// How many times the change signal was read (tests: not while nobody subscribes).
  std::uint64_t reads() const { return reads_.load(); }

 private:
  struct Subscriber {
    std::shared_ptr<Outbox> outbox;
    std::optional<std::string> subscription_id;
    std::set<std::string, std::less<>> uris;
  };

  void watch();
  /// The resources among `watched` that the changes after `cursor_` touched (read with `router`).
  std::set<std::string> changed_resources(Router& router, const std::set<std::string>& watched, bool& everything);
  void notify(const std::set<std::string>& uris);
  void keep_alive();
  bool anyone_watching_locked() const;

  RouterFactory make_router_;
  Options options_;
  std::mutex mutex_;
  std::condition_variable wakeup_;
  std::condition_variable ready_cv_;
  bool ready_ = false;  // the watcher has read where the trail stands since someone began watching
  std::map<Id, Subscriber> subscribers_;
  Id next_id_ = 1;
  bool stopping_ = false;
  std::atomic<std::uint64_t> reads_{0};
  // The watcher thread's own state.
  std::int64_t cursor_ = -1;  // audit seq read up to; -1: not read since anyone began watching
  std::map<std::string, std::set<std::string>> subtrees_;  // epic id → its tasks when last read
  std::thread thread_;
};

}  // namespace ct::mcp
