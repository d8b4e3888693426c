#include "gateway/resource_watch.h"

#include <vector>

#include "core/json.h"
#include "core/log.h"
#include "domains/projection.h"
#include "gateway/request_meta.h"

namespace ct::mcp {
namespace {

using Clock = std::chrono::steady_clock;

constexpr std::string_view kTaskPrefix = "cleo://task/";
constexpr std::string_view kEpicPrefix = "cleo://epic/";
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

/// The epic and every task below it (archived ones too), or nullopt when they cannot be read.
std::optional<std::set<std::string>> subtree(Router& router, const std::string& epic) {
  std::set<std::string> ids{epic};
  for (std::int64_t offset = 0;;) {
    Envelope listed = router.dispatch(
        {Gateway::Query, "tasks", "list",
         object({{"under", epic}, {"archived", "include"}, {"fields", json::Value::array_of(std::vector<std::string>{"id"})},
                 {"sort", "id"}, {"limit", 500}, {"offset", offset}})});
    if (!listed.success) return listed.error && listed.error->code == ErrorCode::NotFound ? std::optional(ids) : std::nullopt;
    auto rows = reply_rows(listed.data);
    for (const auto& row : rows)
      if (row["id"].is_string()) ids.insert(row["id"].as_string());
    if (!listed.page || !listed.page->has_more() || rows.empty()) return ids;
    offset += std::ssize(rows);
  }
}

}  // namespace

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
  }
  wakeup_.notify_all();
  if (thread_.joinable() && thread_.get_id() != std::this_thread::get_id()) thread_.join();
  // The server ends each subscriptions/listen stream itself: a reply to the request that opened it
  // says the end is graceful (the client need not take it for a dropped connection).
  for (auto& [id, subscriber] : ending) {
    if (!subscriber.subscription_id) continue;
    std::string reply;
    json::Writer w(reply);
    w.begin_object().key("jsonrpc").value("2.0").key("id").raw(*subscriber.subscription_id);
    w.key("result").begin_object().key("resultType").value("complete");
    w.key("_meta").begin_object().key(kSubscriptionIdKey).raw(*subscriber.subscription_id).end_object();
    w.end_object().end_object();
    subscriber.outbox->send(reply);
    subscriber.outbox->close();
  }
}

std::optional<ResourceWatch::Id> ResourceWatch::add(std::shared_ptr<Outbox> outbox,
                                                    std::optional<std::string> subscription_id) {
  std::lock_guard lock(mutex_);
  if (stopping_ || subscribers_.size() >= options_.max_subscribers) return std::nullopt;
  Id id = next_id_++;
  subscribers_.emplace(id, Subscriber{std::move(outbox), std::move(subscription_id), {}});
  return id;
}

bool ResourceWatch::subscribe(Id id, const std::string& uri) {
  std::unique_lock lock(mutex_);
  auto it = subscribers_.find(id);
  if (it == subscribers_.end()) return false;
  if (it->second.uris.contains(uri)) return true;
  if (it->second.uris.size() >= options_.max_per_subscriber) return false;
  it->second.uris.insert(uri);
  wakeup_.notify_all();  // the watcher starts reading if it was idle
  // Changes are told from where the watcher first read the trail: wait for that read, so that a
  // change made after this returns is never taken for one made before.
  ready_cv_.wait_for(lock, std::chrono::seconds(5), [this] { return ready_ || stopping_; });
  return true;
}

void ResourceWatch::unsubscribe(Id id, std::string_view uri) {
  std::lock_guard lock(mutex_);
  auto it = subscribers_.find(id);
  if (it == subscribers_.end()) return;
  if (auto found = it->second.uris.find(uri); found != it->second.uris.end()) it->second.uris.erase(found);
}

void ResourceWatch::remove(Id id) {
  std::lock_guard lock(mutex_);
  subscribers_.erase(id);
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

bool ResourceWatch::anyone_watching_locked() const {
  for (const auto& [id, subscriber] : subscribers_)
    if (!subscriber.uris.empty()) return true;
  return false;
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
    const bool watching = anyone_watching_locked();
    if (!watching) {
      // Nothing to read: the next subscriber starts from the newest change then.
      cursor_ = -1;
      ready_ = false;
      stamp_known = false;
      subtrees_.clear();
    }
    wakeup_.wait_for(lock, watching ? options_.interval : options_.heartbeat,
                     [&] { return stopping_ || (!watching && anyone_watching_locked()); });
    if (stopping_) break;
    std::set<std::string> uris;
    for (const auto& [id, subscriber] : subscribers_) uris.insert(subscriber.uris.begin(), subscriber.uris.end());
    lock.unlock();

    if (Clock::now() - beat >= options_.heartbeat) {
      keep_alive();
      beat = Clock::now();
    }
    if (!uris.empty()) {
      if (!router) router = make_router_();
      Result<std::int64_t> stamp = router->change_stamp();
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
          std::set<std::string> changed = changed_resources(*router, uris, everything);
          notify(everything ? uris : changed);
        }
      }
    }
    lock.lock();
  }
}

std::set<std::string> ResourceWatch::changed_resources(Router& router, const std::set<std::string>& watched,
                                                       bool& everything) {
  std::set<std::string> ids;
  std::int64_t since = cursor_;
  bool more = true;
  for (int page = 0; page < kChangePages && more; ++page) {
    Envelope read = router.dispatch({Gateway::Query, "system", "changes", object({{"sinceSeq", since}, {"limit", 500}})});
    if (!read.success) return {};  // read again at the next poll, from the same point
    for (const auto& row : reply_rows(read.data["changes"]))
      if (row["id"].is_string()) ids.insert(row["id"].as_string());
    if (read.data["next"].is_int()) since = read.data["next"].as_int();
    more = read.data["more"] == json::Value(true);
  }
  if (more) {
    // Too much to read through: everything watched may have changed.
    everything = true;
    if (auto seq = newest_seq(router)) since = *seq;
  }
  cursor_ = since;
  std::set<std::string> out;
  std::map<std::string, std::set<std::string>> subtrees;
  for (const auto& uri : watched) {
    if (uri.starts_with(kTaskPrefix)) {
      if (ids.contains(uri.substr(kTaskPrefix.size()))) out.insert(uri);
    } else if (uri.starts_with(kEpicPrefix)) {
      std::string epic = uri.substr(kEpicPrefix.size());
      std::set<std::string> before = subtrees_.contains(epic) ? subtrees_.at(epic) : std::set<std::string>{};
      std::optional<std::set<std::string>> now;
      if (!ids.empty() || !subtrees_.contains(epic)) now = subtree(router, epic);
      std::set<std::string> members = now ? *now : before;
      subtrees[epic] = members;
      members.insert(before.begin(), before.end());  // a task that left it changed it too
      for (const auto& id : ids)
        if (members.contains(id)) {
          out.insert(uri);
          break;
        }
    }
  }
  subtrees_ = std::move(subtrees);  // only the epics still watched
  return out;
}

void ResourceWatch::notify(const std::set<std::string>& uris) {
  if (uris.empty()) return;
  struct Delivery {
    Id id;
    std::shared_ptr<Outbox> outbox;
    std::vector<std::string> messages;
  };
  std::vector<Delivery> deliveries;
  {
    std::lock_guard lock(mutex_);
    for (const auto& [id, subscriber] : subscribers_) {
      Delivery delivery{id, subscriber.outbox, {}};
      for (const auto& uri : subscriber.uris) {
        if (!uris.contains(uri)) continue;
        std::string message;
        json::Writer w(message);
        w.begin_object().key("jsonrpc").value("2.0").key("method").value("notifications/resources/updated");
        w.key("params").begin_object();
        if (subscriber.subscription_id)
          w.key("_meta").begin_object().key(kSubscriptionIdKey).raw(*subscriber.subscription_id).end_object();
        w.key("uri").value(uri).end_object().end_object();
        delivery.messages.push_back(std::move(message));
      }
      if (!delivery.messages.empty()) deliveries.push_back(std::move(delivery));
    }
  }
  std::vector<Id> gone;
  for (const auto& delivery : deliveries)
    for (const auto& message : delivery.messages)
      if (!delivery.outbox->send(message)) {
        gone.push_back(delivery.id);
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
