#include "gateway/task_runner.h"

#include <algorithm>

#include "core/log.h"
#include "core/progress.h"
#include "core/text.h"

namespace ct::mcp {

std::string_view to_string(TaskRunner::Status status) {
  switch (status) {
    case TaskRunner::Status::Working: return "working";
    case TaskRunner::Status::Done: return "done";
    case TaskRunner::Status::Cancelled: return "cancelled";
  }
  return "working";
}

TaskRunner::TaskRunner(RouterFactory make_router, Options options, std::unique_ptr<Clock> clock)
    : make_router_(make_router),
      options_(options),
      clock_(clock ? std::move(clock) : std::make_unique<SystemClock>()),
      routers_(std::move(make_router)) {}

TaskRunner::~TaskRunner() {
  std::vector<std::thread> threads;
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    for (auto& [id, entry] : tasks_) {
      if (entry->running) entry->cancel->request_cancel();
      if (entry->thread.joinable()) threads.push_back(std::move(entry->thread));
    }
    for (auto& thread : retired_) threads.push_back(std::move(thread));
    retired_.clear();
  }
  for (auto& thread : threads) thread.join();
}

void TaskRunner::join_retired() {
  std::vector<std::thread> threads;
  {
    std::lock_guard lock(mutex_);
    threads.swap(retired_);
  }
  for (auto& thread : threads) thread.join();
}

TaskRunner::Entry* TaskRunner::find_locked(const std::string& owner, const std::string& id) {
  auto it = tasks_.find(id);
  if (it == tasks_.end() || it->second->owner != owner) return nullptr;
  return it->second.get();
}

void TaskRunner::expire_locked(TimeMs now) {
  for (auto it = tasks_.begin(); it != tasks_.end();) {
    Entry& entry = *it->second;
    if (!entry.running && entry.state.status != Status::Working &&
        now >= entry.state.created_at + entry.state.ttl_ms) {
      if (entry.thread.joinable()) retired_.push_back(std::move(entry.thread));
      it = tasks_.erase(it);
    } else {
      ++it;
    }
  }
}

TaskRunner::Snapshot TaskRunner::snapshot_of(const Entry& entry) {
  Snapshot out = entry.state;
  if (out.status == Status::Working && entry.cancel->state() == CancelToken::State::Committing) {
    out.committing = true;
    out.message += " (writing its changes: it can no longer be cancelled)";
  }
  return out;
}

TaskRunner::Entry* TaskRunner::add_locked(const std::string& owner, std::string what, std::optional<std::int64_t> ttl_ms,
                                          TimeMs now, bool always) {
  if (tasks_.size() >= options_.max_kept) {
    // The oldest finished task makes room.
    auto oldest = tasks_.end();
    for (auto it = tasks_.begin(); it != tasks_.end(); ++it)
      if (!it->second->running && (oldest == tasks_.end() || it->second->state.created_at < oldest->second->state.created_at))
        oldest = it;
    if (oldest != tasks_.end()) {
      if (oldest->second->thread.joinable()) retired_.push_back(std::move(oldest->second->thread));
      tasks_.erase(oldest);
    } else if (!always) {
      return nullptr;
    }
  }
  auto entry = std::make_unique<Entry>();
  entry->owner = owner;
  entry->cancel = make_cancel_flag();
  Snapshot& state = entry->state;
  state.id = random_hex(16);
  state.status = Status::Working;
  state.message = std::move(what);
  state.created_at = state.updated_at = now;
  state.ttl_ms = std::clamp<std::int64_t>(ttl_ms.value_or(options_.default_ttl_ms), 1000, options_.max_ttl_ms);
  state.poll_interval_ms = options_.poll_interval_ms;
  Entry* added = entry.get();
  tasks_.emplace(state.id, std::move(entry));
  return added;
}

Result<TaskRunner::Snapshot> TaskRunner::start(const std::string& owner, std::string what,
                                               std::optional<std::int64_t> ttl_ms, Work work) {
  join_retired();
  std::lock_guard lock(mutex_);
  const TimeMs now = clock_->now();
  expire_locked(now);
  std::size_t running = 0;
  std::size_t owners = 0;
  for (const auto& [id, entry] : tasks_) {
    if (!entry->running) continue;
    ++running;
    owners += entry->owner == owner ? 1 : 0;
  }
  if (stopping_ || running >= options_.max_running || owners >= options_.max_running_per_owner)
    return fail(Error(ErrorCode::InvalidInput, "too many calls running as tasks (" +
                                                   std::to_string(owners >= options_.max_running_per_owner
                                                                      ? options_.max_running_per_owner
                                                                      : options_.max_running) +
                                                   "): wait for one to finish (tasks/get) or cancel one")
                    .with_fix("poll a running task with tasks/get until it finishes"));
  Entry* added = add_locked(owner, std::move(what), ttl_ms, now);
  if (!added) return fail(ErrorCode::InvalidInput, "too many tasks kept: wait for one to finish");
  Snapshot out = added->state;
  added->thread = std::thread([this, id = out.id, work = std::move(work), cancel = added->cancel]() mutable {
    run(id, std::move(work), std::move(cancel));
  });
  log::info("task " + out.id + " started: " + out.message);
  return out;
}

TaskRunner::Snapshot TaskRunner::finished(const std::string& owner, std::string what, std::optional<std::int64_t> ttl_ms,
                                          std::string result, bool call_failed) {
  join_retired();
  std::lock_guard lock(mutex_);
  const TimeMs now = clock_->now();
  expire_locked(now);
  Entry* added = add_locked(owner, std::move(what), ttl_ms, now, /*always=*/true);
  added->running = false;
  added->cancel->begin_commit();  // it ran to its end
  Snapshot& state = added->state;
  state.status = Status::Done;
  state.updated_at = now;
  state.result = std::move(result);
  state.call_failed = call_failed;
  state.message = call_failed ? "The call failed: see its result" : "The call finished";
  return state;
}

void TaskRunner::run(const std::string& id, Work work, CancelFlag cancel) {
  std::pair<std::string, bool> outcome;
  bool ran = false;
  {
    CancelScope scope(cancel);
    // What the call reports of its work is the task's status while it runs ("Running
    // issues.sync: pulled 300 items").
    std::string what;
    {
      std::lock_guard lock(mutex_);
      if (auto it = tasks_.find(id); it != tasks_.end()) what = it->second->state.message;
    }
    ProgressScope watched([this, &id, what](std::string_view message) {
      std::lock_guard lock(mutex_);
      auto it = tasks_.find(id);
      if (it == tasks_.end() || it->second->state.status != Status::Working) return;
      it->second->state.message = what + ": " + terminal_safe(message);
      it->second->state.updated_at = clock_->now();
    });
    auto router = routers_.take();
    try {
      outcome = work(*router);
      ran = true;
    } catch (const std::exception& e) {
      log::error("task " + id + " failed: " + e.what());
    }
    routers_.give_back(std::move(router));
  }
  std::vector<std::function<void(const Snapshot&)>> waiters;
  Snapshot finished;
  {
    std::lock_guard lock(mutex_);
    auto it = tasks_.find(id);
    if (it == tasks_.end()) return;
    Entry& entry = *it->second;
    entry.running = false;
    // A cancelled task stopped before its commit point, having changed nothing: it stays cancelled.
    if (entry.state.status == Status::Working) {
      entry.state.status = Status::Done;
      entry.state.updated_at = clock_->now();
      if (ran) {
        entry.state.result = std::move(outcome.first);
        entry.state.call_failed = outcome.second;
        entry.state.message = outcome.second ? "The call failed: see its result" : "The call finished";
      } else {
        entry.state.call_failed = true;
        entry.state.message = "Internal error while running the call";
      }
      waiters = std::move(entry.waiters);
    }
    finished = entry.state;
  }
  log::info("task " + id + " " + std::string(to_string(finished.status)));
  for (auto& waiter : waiters) waiter(finished);
}

std::optional<TaskRunner::Snapshot> TaskRunner::get(const std::string& owner, const std::string& id) {
  std::lock_guard lock(mutex_);
  expire_locked(clock_->now());
  Entry* entry = find_locked(owner, id);
  if (!entry) return std::nullopt;
  return snapshot_of(*entry);
}

bool TaskRunner::when_finished(const std::string& owner, const std::string& id,
                               std::function<void(const Snapshot&)> done) {
  Snapshot now;
  {
    std::lock_guard lock(mutex_);
    Entry* entry = find_locked(owner, id);
    if (!entry) return false;
    if (entry->state.status == Status::Working) {
      entry->waiters.push_back(std::move(done));
      return true;
    }
    now = entry->state;
  }
  done(now);
  return true;
}

Result<TaskRunner::Snapshot> TaskRunner::cancel(const std::string& owner, const std::string& id) {
  std::vector<std::function<void(const Snapshot&)>> waiters;
  Snapshot cancelled;
  {
    std::lock_guard lock(mutex_);
    Entry* entry = find_locked(owner, id);
    if (!entry) return fail(Error(ErrorCode::NotFound, "no task " + id.substr(0, 64) + " (it may have expired)"));
    if (entry->state.status != Status::Working)
      return fail(Error(ErrorCode::Validation, "cannot cancel task " + id + ": it is already " +
                                                   std::string(entry->state.status == Status::Done
                                                                   ? (entry->state.call_failed ? "failed" : "completed")
                                                                   : "cancelled")));
    // Past its commit point, the call runs to its end: what it did is its task's outcome.
    if (!entry->cancel->request_cancel()) return snapshot_of(*entry);
    entry->state.status = Status::Cancelled;
    entry->state.updated_at = clock_->now();
    entry->state.message = "Cancelled before it committed any change (a program it was running is stopped)";
    waiters = std::move(entry->waiters);
    cancelled = entry->state;
  }
  log::info("task " + id + " cancelled");
  for (auto& waiter : waiters) waiter(cancelled);
  return cancelled;
}

std::vector<TaskRunner::Snapshot> TaskRunner::list(const std::string& owner, std::size_t offset, std::size_t limit,
                                                   bool& more) {
  std::lock_guard lock(mutex_);
  expire_locked(clock_->now());
  std::vector<Snapshot> all;
  for (const auto& [id, entry] : tasks_)
    if (entry->owner == owner) all.push_back(snapshot_of(*entry));
  std::sort(all.begin(), all.end(), [](const Snapshot& a, const Snapshot& b) {
    return a.created_at != b.created_at ? a.created_at > b.created_at : a.id < b.id;
  });
  std::vector<Snapshot> out;
  for (std::size_t i = offset; i < all.size() && out.size() < limit; ++i) out.push_back(all[i]);
  more = offset + out.size() < all.size();
  return out;
}

}  // namespace ct::mcp
