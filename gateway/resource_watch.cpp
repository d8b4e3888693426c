#include "gateway/resource_watch.h"

#include <vector>

#include "core/json.h"
#include "core/log.h"
#include "domains/projection.h"
#include "gateway/request_meta.h"

namespace ct::mcp {
namespace {

constexpr std::string_view kTaskPrefix = "cleo://task/";
constexpr std::string_view kEpicPrefix = "cleo://epic/";
constexpr std::string_view kInboxPrefix = "cleo://inbox/";
/// What a message to everyone changed: every watched inbox.
constexpr std::string_view kEveryInbox = "cleo://inbox/*";
/// Changes read per poll at most (pages of 500); beyond, every watched resource is said to have
/// changed rather than reading on (a bulk import, a restore).
constexpr int kChangePages = 20;

json::Value object(std::initializer_list<std::pair<std::string_view, json::Value>> members) {
  json::Value out = json::Value::object();
  for (const auto& [key, value] : members) out.set(key, value);
  return out;
}

/// The newest audit row's seq (0 for none), or nullopt when it cannot be read.
std::optional<std::int64_t> newest_seq(Router& router) {
  Envelope newest = router.dispatch(
      {Gateway::Query, "system", "log", object({{"limit", 1}, {"fields", json::Value::array_of(std::vector<std::string>{"seq"})}})});
  if (!newest.success) return std::nullopt;
  auto rows = reply_rows(newest.data);
  return rows.empty() || !rows.front()["seq"].is_int() ? 0 : rows.front()["seq"].as_int();
}

std::string updated(std::string_view uri, const std::optional<std::string>& subscription_id) {
  std::string message;
  json::Writer w(message);
  w.begin_object().key("jsonrpc").value("2.0").key("method").value("notifications/resources/updated");
  w.key("params").begin_object();
  if (subscription_id) w.key("_meta").begin_object().key(kSubscriptionIdKey).raw(*subscription_id).end_object();
  w.key("uri").value(uri).end_object().end_object();
  return message;
}

}  // namespace

std::string listen_end(std::string_view subscription_id) {
  std::string reply;
  json::Writer w(reply);
  w.begin_object().key("jsonrpc").value("2.0").key("id").raw(subscription_id);
  w.key("result").begin_object().key("resultType").value("complete");
  w.key("_meta").begin_object().key(kSubscriptionIdKey).raw(subscription_id).end_object();
  w.end_object().end_object();
  return reply;
}

ResourceWatch::ResourceWatch(RouterFactory make_router, Options options)
    : make_router_(std::move(make_router)), options_(options), thread_([this] { watch(); }) {}

ResourceWatch::~ResourceWatch() { stop(); }

void ResourceWatch::stop() {
  std::map<Id, Subscriber> ending;
  {
    std::lock_guard lock(mutex_);
    if (stopping_) return;
    stopping_ = true;
    ending.swap(subscribers_);
    watchers_.clear();
    per_client_.clear();
    watching_ = 0;
  }
  wakeup_.notify_all();
  commits_.ring();
  ready_cv_.notify_all();
  if (thread_.joinable() && thread_.get_id() != std::this_thread::get_id()) thread_.join();
  // The server ends each subscriptions/listen stream itself: a reply to the request that opened it
  // says the end is graceful (the client need not take it for a dropped connection).
  for (auto& [id, subscriber] : ending) {
    if (!subscriber.subscription_id) continue;
    subscriber.outbox->send(listen_end(*subscriber.subscription_id));
    subscriber.outbox->close();
  }
}

std::optional<ResourceWatch::Id> ResourceWatch::add(std::shared_ptr<Outbox> outbox,
                                                    std::optional<std::string> subscription_id, std::string client) {
  std::lock_guard lock(mutex_);
  if (stopping_) return std::nullopt;
  Id id = next_id_++;
  // A subscriber of no client is a client of its own ('#' never begins a session id or "stdio").
  if (client.empty()) client = "#" + std::to_string(id);
  subscribers_.emplace(id, Subscriber{std::move(outbox), std::move(subscription_id), std::move(client), {}, Clock::now()});
  return id;
}

ResourceWatch::Subscribed ResourceWatch::subscribe(Id id, const std::string& uri) {
  std::unique_lock lock(mutex_);
  auto it = subscribers_.find(id);
  if (it == subscribers_.end()) return {Outcome::NoSubscriber, 0};
  Subscriber& subscriber = it->second;
  if (subscriber.uris.contains(uri)) return {};
  if (auto client = per_client_.find(subscriber.client);
      client != per_client_.end() && client->second >= options_.max_per_client)
    return {Outcome::ClientLimit, options_.max_per_client};
  if (subscriber.uris.empty()) {
    // Its first resource takes a slot.
    if (watching_ >= options_.max_subscribers && !evict_unreachable_locked(id))
      return {Outcome::ServerLimit, options_.max_subscribers};
    ++watching_;
  }
  subscriber.uris.insert(uri);
  watchers_[uri].insert(id);
  ++per_client_[subscriber.client];
  wakeup_.notify_all();  // the watcher starts reading if it was idle
  commits_.ring();
  // Changes are told from where the watcher first read the trail: wait for that read, so that a
  // change made after this returns is never taken for one made before.
  ready_cv_.wait_for(lock, std::chrono::seconds(5), [this] { return ready_ || stopping_; });
  return {};
}

void ResourceWatch::forget_locked(Id id, Subscriber& subscriber, std::string_view uri) {
  if (auto watcher = watchers_.find(uri); watcher != watchers_.end()) {
    watcher->second.erase(id);
    if (watcher->second.empty()) watchers_.erase(watcher);
  }
  if (auto client = per_client_.find(subscriber.client); client != per_client_.end() && --client->second == 0)
    per_client_.erase(client);
}

void ResourceWatch::unsubscribe(Id id, std::string_view uri) {
  std::lock_guard lock(mutex_);
  auto it = subscribers_.find(id);
  if (it == subscribers_.end()) return;
  auto found = it->second.uris.find(uri);
  if (found == it->second.uris.end()) return;
  forget_locked(id, it->second, uri);
  it->second.uris.erase(found);
  if (it->second.uris.empty()) --watching_;  // watching nothing, it holds no slot
}

void ResourceWatch::remove_locked(std::map<Id, Subscriber>::iterator it) {
  for (const auto& uri : it->second.uris) forget_locked(it->first, it->second, uri);
  if (!it->second.uris.empty()) --watching_;
  subscribers_.erase(it);
}

void ResourceWatch::remove(Id id) {
  std::lock_guard lock(mutex_);
  if (auto it = subscribers_.find(id); it != subscribers_.end()) remove_locked(it);
}

bool ResourceWatch::evict_unreachable_locked(Id keep) {
  const auto before = Clock::now() - options_.unreachable_grace;
  for (auto it = subscribers_.begin(); it != subscribers_.end(); ++it) {
    if (it->first == keep || it->second.uris.empty() || it->second.added > before || it->second.outbox->reachable())
      continue;
    log::info("resource subscriptions: a subscriber that cannot be told anything gave its slot up");
    remove_locked(it);
    return true;
  }
  return false;
}

std::size_t ResourceWatch::watched(Id id) {
  std::lock_guard lock(mutex_);
  auto it = subscribers_.find(id);
  return it == subscribers_.end() ? 0 : it->second.uris.size();
}

std::size_t ResourceWatch::subscribers() {
  std::lock_guard lock(mutex_);
  return subscribers_.size();
}

void ResourceWatch::watch() {
  std::unique_ptr<Router> router;
  // The change signal when last read (stamp_known false: not read since anyone began watching).
  std::int64_t last_stamp = 0;
  bool stamp_known = false;
  bool failing = false;
  auto beat = Clock::now();
  std::unique_lock lock(mutex_);
  while (!stopping_) {
    const bool watching = !watchers_.empty();
    if (!watching) {
      // Nothing to read: the next subscriber starts from the newest change then.
      cursor_ = -1;
      ready_ = false;
      stamp_known = false;
    }
    auto woken = [&] { return stopping_ || (!watching && !watchers_.empty()); };
    if (watching && !router) {
      // The first read, at once: a subscriber waits for it to know where the trail stands.
    } else if (watching) {
      commits_.wait(
          lock, wakeup_,
          [&](std::chrono::milliseconds timeout, int interrupt) { return router->wait_for_change(timeout, interrupt); },
          options_.interval, options_.min_gap, woken);
    } else {
      wakeup_.wait_for(lock, options_.heartbeat, woken);
    }
    if (stopping_) break;
    const bool read = !watchers_.empty();
    lock.unlock();

    if (Clock::now() - beat >= options_.heartbeat) {
      keep_alive();
      beat = Clock::now();
    }
    if (read) {
      if (!router) {
        router = make_router_();
        // Listening before the first read: no commit falls between the read and the first wait.
        (void)router->wait_for_change(std::chrono::milliseconds(0), -1);
      }
      Result<std::int64_t> stamp = router->change_stamp();
      commits_.read();
      reads_.fetch_add(1);
      if (!stamp) {
        if (!failing) log::warn("resource subscriptions: cannot read the store's change signal: " + stamp.error().message);
        failing = true;
      } else {
        failing = false;
        if (cursor_ < 0) {
          if (auto seq = newest_seq(*router)) {
            cursor_ = *seq;
            last_stamp = *stamp;
            stamp_known = true;
            std::lock_guard ready_lock(mutex_);
            ready_ = true;
            ready_cv_.notify_all();
          }
        } else if (!stamp_known || *stamp != last_stamp) {
          last_stamp = *stamp;
          stamp_known = true;
          bool everything = false;
          std::set<std::string> changed = changed_resources(*router, everything);
          notify(everything ? nullptr : &changed);
        }
      }
    }
    lock.lock();
  }
}

std::set<std::string> ResourceWatch::changed_resources(Router& router, bool& everything) {
  std::set<std::string> out;
  std::int64_t since = cursor_;
  bool more = true;
  for (int page = 0; page < kChangePages && more; ++page) {
    Envelope read = router.dispatch(
        {Gateway::Query, "system", "changes", object({{"sinceSeq", since}, {"limit", 500}, {"subtrees", true}})});
    if (!read.success) return {};  // read again at the next poll, from the same point
    for (const auto& row : reply_rows(read.data["changes"]))
      if (row["id"].is_string()) {
        // session.send records the inboxes it reached as changes of "inbox/<name>" ("inbox/*": all).
        const std::string& id = row["id"].as_string();
        out.insert(id.starts_with("inbox/") ? std::string(kInboxPrefix) + id.substr(6) : std::string(kTaskPrefix) + id);
      }
    // The changed tasks, their ancestors, and those of where a task that moved or went was.
    if (read.data["subtrees"].is_array())
      for (const auto& id : read.data["subtrees"].as_array())
        if (id.is_string()) out.insert(std::string(kEpicPrefix) + id.as_string());
    if (read.data["next"].is_int()) since = read.data["next"].as_int();
    more = read.data["more"] == json::Value(true);
  }
  if (more) {
    // Too much to read through: everything watched may have changed.
    everything = true;
    if (auto seq = newest_seq(router)) since = *seq;
  }
  cursor_ = since;
  return out;
}

void ResourceWatch::notify(const std::set<std::string>* uris) {
  struct Delivery {
    std::shared_ptr<Outbox> outbox;
    std::vector<std::string> messages;
  };
  std::map<Id, Delivery> deliveries;
  {
    std::lock_guard lock(mutex_);
    auto tell = [&](const std::string& uri, const std::set<Id>& ids) {
      for (Id id : ids) {
        const Subscriber& subscriber = subscribers_.at(id);
        Delivery& delivery = deliveries[id];
        delivery.outbox = subscriber.outbox;
        delivery.messages.push_back(updated(uri, subscriber.subscription_id));
      }
    };
    if (!uris) {
      for (const auto& [uri, ids] : watchers_) tell(uri, ids);
    } else {
      // Each candidate looked up in the index: the work follows what changed, not what is watched.
      for (const auto& uri : *uris) {
        if (uri == kEveryInbox) {
          for (auto it = watchers_.lower_bound(kInboxPrefix); it != watchers_.end() && it->first.starts_with(kInboxPrefix); ++it)
            if (!uris->contains(it->first)) tell(it->first, it->second);
          continue;
        }
        if (auto watcher = watchers_.find(uri); watcher != watchers_.end()) tell(uri, watcher->second);
      }
    }
  }
  std::vector<Id> gone;
  for (const auto& [id, delivery] : deliveries)
    for (const auto& message : delivery.messages)
      if (!delivery.outbox->send(message)) {
        gone.push_back(id);
        break;
      }
  for (Id id : gone) remove(id);
}

void ResourceWatch::keep_alive() {
  std::vector<std::pair<Id, std::shared_ptr<Outbox>>> outboxes;
  {
    std::lock_guard lock(mutex_);
    for (const auto& [id, subscriber] : subscribers_) outboxes.emplace_back(id, subscriber.outbox);
  }
  for (const auto& [id, outbox] : outboxes) {
    outbox->keep_alive();
    if (!outbox->open()) remove(id);
  }
}

}  // namespace ct::mcp
