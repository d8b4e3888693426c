#include "gateway/outbox.h"

#include <unistd.h>

#include <cerrno>
#include <utility>

namespace ct::mcp {

bool LineOutbox::send(std::string_view message) {
  std::lock_guard lock(mutex_);
  if (broken_) return false;
  std::string line(message);
  line += '\n';
  std::string_view rest = line;
  while (!rest.empty()) {
    ssize_t n = ::write(fd_, rest.data(), rest.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      broken_ = true;  // EPIPE (SIGPIPE is ignored) or another error: the reader is gone
      return false;
    }
    rest.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

bool LineOutbox::open() const {
  std::lock_guard lock(mutex_);
  return !broken_;
}

bool StreamOutbox::send(std::string_view message) {
  // One event per message; a message is one line of JSON, so one data line holds it.
  std::string event = "event: message\ndata: ";
  event += message;
  event += "\n\n";
  return stream_->push(event);
}

std::shared_ptr<StreamOutbox> SessionOutbox::attach() {
  auto fresh = std::make_shared<StreamOutbox>();
  std::shared_ptr<StreamOutbox> old;
  {
    std::lock_guard lock(mutex_);
    old = std::exchange(current_, fresh);
    if (closed_) fresh->close();
  }
  if (old) old->close();
  return fresh;
}

bool SessionOutbox::send(std::string_view message) {
  std::shared_ptr<StreamOutbox> stream;
  {
    std::lock_guard lock(mutex_);
    if (closed_) return false;
    stream = current_;
  }
  if (stream && stream->open()) stream->send(message);
  return true;  // the session lives on, whether or not a stream carried this
}

bool SessionOutbox::reachable() const {
  std::shared_ptr<StreamOutbox> stream;
  {
    std::lock_guard lock(mutex_);
    if (closed_) return false;
    stream = current_;
  }
  return stream && stream->open();
}

void SessionOutbox::close() {
  std::shared_ptr<StreamOutbox> stream;
  {
    std::lock_guard lock(mutex_);
    closed_ = true;
    stream = std::move(current_);
  }
  if (stream) stream->close();
}

void SessionOutbox::keep_alive() {
  std::shared_ptr<StreamOutbox> stream;
  {
    std::lock_guard lock(mutex_);
    stream = current_;
  }
  if (stream && stream->open()) stream->keep_alive();
}

}  // namespace ct::mcp
