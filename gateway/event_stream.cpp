#include "gateway/event_stream.h"

#include <algorithm>
#include <cstring>

namespace ct::mcp {

bool EventStream::push(std::string_view text) {
  std::lock_guard lock(mutex_);
  if (closed_ || detached_) return false;
  if (pending_.size() + text.size() > kMaxPending) {
    pending_.clear();
    closed_ = true;
  } else {
    pending_.append(text);
  }
  wake_locked();
  return !closed_;
}

void EventStream::close() {
  std::lock_guard lock(mutex_);
  closed_ = true;
  wake_locked();
}

bool EventStream::is_open() const {
  std::lock_guard lock(mutex_);
  return !closed_ && !detached_;
}

std::ptrdiff_t EventStream::read(char* buffer, std::size_t max, const std::function<void()>& pause,
                                 std::function<void()> resume) {
  std::lock_guard lock(mutex_);
  if (!pending_.empty()) {
    std::size_t count = std::min(max, pending_.size());
    std::memcpy(buffer, pending_.data(), count);
    pending_.erase(0, count);
    return static_cast<std::ptrdiff_t>(count);
  }
  if (closed_ || detached_) return -1;
  pause();
  resume_ = std::move(resume);
  return 0;
}

void EventStream::detach() {
  std::lock_guard lock(mutex_);
  detached_ = true;
  pending_.clear();
  resume_ = nullptr;
}

void EventStream::wake_locked() {
  if (!resume_) return;
  auto resume = std::move(resume_);
  resume_ = nullptr;
  resume();
}

}  // namespace ct::mcp
