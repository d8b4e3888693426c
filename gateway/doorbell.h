// A descriptor that wakes a thread waiting on descriptors, as a condition variable wakes one that
// waits on it: the live views (resource_watch.h, dashboard.h) wait for the store's notifications
// of commits (PostgreSQL: Store::wait_for_change) and are rung when they must stop or start
// reading for a new listener. An eventfd: ring() any number of times, one clear() empties it.
#pragma once

#include <sys/eventfd.h>
#include <unistd.h>

#include <cstdint>

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

}  // namespace ct::mcp
