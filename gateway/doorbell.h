// How a live view (resource_watch.h, dashboard.h) waits between two reads of the store's change
// signal. On a store that tells of its commits (PostgreSQL: Router::wait_for_change, LISTEN/NOTIFY)
// it waits until one is told — reading at most once per min_gap, and after the interval at the
// latest —; on one that cannot (SQLite), or when the wait failed, on the clock. A Doorbell (an
// eventfd: ring() any number of times, one clear() empties it) ends a wait for the store when the
// view must stop or start reading for a newcomer, as the condition variable ends a wait on the clock.
#pragma once

#include <sys/eventfd.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>

#include "core/error.h"
#include "engines/store/store.h"

namespace ct::mcp {

class Doorbell {
 public:
  Doorbell() : fd_(::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) {}
  ~Doorbell() {
    if (fd_ >= 0) ::close(fd_);
  }
  Doorbell(const Doorbell&) = delete;
  Doorbell& operator=(const Doorbell&) = delete;

  void ring() {
    const std::uint64_t one = 1;
    if (fd_ >= 0) (void)!::write(fd_, &one, sizeof one);
  }
  void clear() {
    std::uint64_t count = 0;
    if (fd_ >= 0) (void)!::read(fd_, &count, sizeof count);
  }
  /// -1 when no eventfd could be made: waits then run to their timeout.
  int fd() const { return fd_; }

 private:
  int fd_;
};

class CommitWait {
 public:
  using Clock = std::chrono::steady_clock;
  /// Waits for the store to be told of a commit (Router::wait_for_change).
  using Wait = std::function<Result<Waited>(std::chrono::milliseconds timeout, int interrupt)>;

  /// Ends a wait for the store: call it where the view notifies its condition variable.
  void ring() { doorbell_.ring(); }
  /// The signal was read now (the gap counts from here).
  void read() { last_read_ = Clock::now(); }

  /// Between two reads, `lock` held on entry and on return. `woken` ends a wait on the clock (and
  /// the gap) early; `wait` is the store's (empty: the clock only).
  template <class Woken>
  void wait(std::unique_lock<std::mutex>& lock, std::condition_variable& cv, const Wait& wait,
            std::chrono::milliseconds interval, std::chrono::milliseconds min_gap, Woken&& woken) {
    if (wait && store_waits_) {
      if (auto since = Clock::now() - last_read_; since < min_gap) cv.wait_for(lock, min_gap - since, woken);
      if (woken()) return;
      lock.unlock();
      Result<Waited> waited = wait(interval, doorbell_.fd());
      doorbell_.clear();
      lock.lock();
      if (waited && *waited == Waited::Never) store_waits_ = false;  // on the clock from now on
      if (waited && *waited != Waited::Never) return;
    }
    cv.wait_for(lock, interval, woken);
  }

 private:
  Doorbell doorbell_;
  bool store_waits_ = true;  // until the store says it cannot be told of commits (SQLite)
  Clock::time_point last_read_;
};

}  // namespace ct::mcp
