// Resource subscriptions: which task, epic and inbox resources (disclosure/resources.h) the clients of
// this process watch, and the thread that tells them when one changed — whichever process made
// the change (another `ct`, another server, a store of either backend). While anyone subscribes
// it reads the store's change signal (Router::change_stamp) every interval — on PostgreSQL also as
// soon as the store is told of a commit (LISTEN/NOTIFY: Router::wait_for_change); when it moved it reads
// what changed since (system.changes with `subtrees`: the audit trail's field changes, and every
// task whose subtree they touched) and sends notifications/resources/updated once per changed
// resource, however many writes it covers:
//  - cleo://task/T1 changed when T1 did;
//  - cleo://epic/T1 changed when T1 or any task in its subtree did, or one left it (moved, deleted);
//  - cleo://inbox/coder changed when a message reached it (session.send records each inbox it
//    reaches as a change of "inbox/<name>"; a message to everyone, every watched inbox).
// What a change costs grows with what changed, never with how many resources are watched: the
// changed tasks and their ancestors are read once, and looked up in the index of watched URIs.
// The subscriptions of the stateless revision (subscriptions/listen) carry their request's id in
// each notification's _meta. Its own router: one more database connection, on its thread only.
//
// Limits: a client — a stdio process, an HTTP session (its resources/subscribe and, on stdio, its
// listen streams together), or a listen stream of the stateless revision over HTTP, which belongs
// to no session — watches at most max_per_client resources; at most max_subscribers subscribers
// watch something at once. A subscriber that watches nothing holds no slot, and one that has
// nowhere to be told (an HTTP session without its GET stream) gives its slot up to another when the
// server is full, once unreachable_grace has passed since it was added.
#pragma once

#include <atomic>
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

#include "gateway/doorbell.h"
#include "gateway/outbox.h"
#include "gateway/router_pool.h"

namespace ct::mcp {

/// The reply that ends a subscriptions/listen stream gracefully (the server stops, or the stream
/// has nothing to carry): a result for the request `subscription_id` (its id's JSON) opened.
std::string listen_end(std::string_view subscription_id);

class ResourceWatch {
 public:
  struct Options {
    std::chrono::milliseconds interval{250};      // the change signal is read this often while anyone subscribes…
    std::chrono::milliseconds min_gap{20};        // …and, on a store that tells of commits, after each commit,
                                                  // at most once per min_gap
    std::chrono::milliseconds heartbeat{15000};   // each subscriber's outbox is shown life this often
    std::size_t max_per_client = 100;             // resources one client may watch, over all its subscribers
    std::size_t max_subscribers = 1024;           // subscribers watching something at once
    std::chrono::milliseconds unreachable_grace{30000};  // after this, one that cannot be told may lose its slot
  };
  using Id = std::uint64_t;

  /// What subscribe() did; true when the resource is watched.
  enum class Outcome { Watching, NoSubscriber, ClientLimit, ServerLimit };
  struct Subscribed {
    Outcome outcome = Outcome::Watching;
    std::size_t limit = 0;  // ClientLimit, ServerLimit: the limit reached
    explicit operator bool() const { return outcome == Outcome::Watching; }
  };

  ResourceWatch(RouterFactory make_router, Options options);
  explicit ResourceWatch(RouterFactory make_router) : ResourceWatch(std::move(make_router), Options{}) {}
  ~ResourceWatch();
  ResourceWatch(const ResourceWatch&) = delete;
  ResourceWatch& operator=(const ResourceWatch&) = delete;

  /// A subscriber whose notifications go to `outbox`, of `client` ("": a client of its own).
  /// `subscription_id` (the JSON text of the id of a subscriptions/listen request) goes into each
  /// notification's _meta; none for resources/subscribe. It holds no slot until it watches
  /// something. Nullopt once the watch has stopped.
  std::optional<Id> add(std::shared_ptr<Outbox> outbox, std::optional<std::string> subscription_id = std::nullopt,
                        std::string client = "");
  /// Watches `uri` (canonical: cleo://task/T1, cleo://epic/T1; that it exists is the caller's to
  /// check) for `id`; watching it twice is watching it once. Refused when the subscriber is gone
  /// (removed, or its slot given to another), its client watches max_per_client resources, or it
  /// would take a slot and max_subscribers are taken. Returns once the watcher knows where the
  /// audit trail stands (at most a few seconds when the store cannot be read), so every change
  /// committed after it is told.
  Subscribed subscribe(Id id, const std::string& uri);
  void unsubscribe(Id id, std::string_view uri);
  /// Forgets the subscriber and what it watched.
  void remove(Id id);
  /// Ends the thread; later add() calls get nullopt. Called by the destructor.
  void stop();
  const Options& options() const { return options_; }

  /// For tests and limits: resources watched by `id`, and subscribers in all (watching or not).
  std::size_t watched(Id id);
  std::size_t subscribers();
  /// How many times the change signal was read (tests: not while nobody subscribes).
  std::uint64_t reads() const { return reads_.load(); }

 private:
  using Clock = std::chrono::steady_clock;
  struct Subscriber {
    std::shared_ptr<Outbox> outbox;
    std::optional<std::string> subscription_id;
    std::string client;  // the key its resources count against
    std::set<std::string, std::less<>> uris;
    Clock::time_point added;
  };

  void watch();
  /// The URIs the changes after `cursor_` may have changed (read with `router`): cleo://task/ of
  /// each changed task, cleo://epic/ of each task whose subtree they touched. `everything` when
  /// too much changed to read through.
  std::set<std::string> changed_resources(Router& router, bool& everything);
  /// Tells the subscribers of `uris` (all of them: every watched resource).
  void notify(const std::set<std::string>* uris);
  void keep_alive();
  void remove_locked(std::map<Id, Subscriber>::iterator it);
  void forget_locked(Id id, Subscriber& subscriber, std::string_view uri);
  /// Removes a subscriber (not `keep`) that watches something but has nowhere to be told, added
  /// unreachable_grace ago or more; false when there is none.
  bool evict_unreachable_locked(Id keep);

  RouterFactory make_router_;
  Options options_;
  std::mutex mutex_;
  std::condition_variable wakeup_;
  std::condition_variable ready_cv_;
  bool ready_ = false;  // the watcher has read where the trail stands since someone began watching
  std::map<Id, Subscriber> subscribers_;
  std::map<std::string, std::set<Id>, std::less<>> watchers_;    // a watched URI → who watches it
  std::map<std::string, std::size_t, std::less<>> per_client_;  // a client → resources it watches
  std::size_t watching_ = 0;                                    // subscribers watching something: the slots taken
  Id next_id_ = 1;
  bool stopping_ = false;
  std::atomic<std::uint64_t> reads_{0};
  // The watcher thread's own state.
  std::int64_t cursor_ = -1;  // audit seq read up to; -1: not read since anyone began watching
  CommitWait commits_;        // how the watcher waits between reads (rung to end a wait for the store)
  std::thread thread_;
};

}  // namespace ct::mcp
