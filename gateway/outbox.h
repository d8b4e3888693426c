// Where the messages a server sends unasked go: notifications (a subscribed resource changed,
// a subscription acknowledged) and replies that come later than their request (tasks/result of
// a task still working). On stdio that is standard output, shared with the replies of the request
// loop; over HTTP an event stream — the response of the request that asked (subscriptions/listen,
// tasks/result), or a session's GET stream.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include "gateway/event_stream.h"

namespace ct::mcp {

class Outbox {
 public:
  virtual ~Outbox() = default;
  /// Sends one JSON-RPC message (compact JSON, one line). False when the peer is gone for good:
  /// the sender may forget this outbox.
  virtual bool send(std::string_view message) = 0;
  /// Whether messages can still reach the peer.
  virtual bool open() const = 0;
  /// Whether a message sent now would reach it: open, and, for an HTTP session, with its GET
  /// stream there to carry it (a session without one holds its subscriptions, told nothing).
  virtual bool reachable() const { return open(); }
  /// Ends the channel once what was sent has left (an HTTP response's stream); stdio stays.
  virtual void close() {}
  /// Something that shows the peer is still there without a message (an SSE comment): a stream
  /// whose peer went away is found out this way.
  virtual void keep_alive() {}
};

/// Standard output of `ct mcp`: one message per line; the request loop writes its replies through
/// it too, so that lines from several threads never interleave.
class LineOutbox final : public Outbox {
 public:
  explicit LineOutbox(int fd) : fd_(fd) {}
  bool send(std::string_view message) override;
  bool open() const override;

 private:
  int fd_;
  mutable std::mutex mutex_;
  bool broken_ = false;  // a write failed: the reader is gone
};

/// An HTTP response sent as Server-Sent Events: each message one `message` event.
class StreamOutbox final : public Outbox {
 public:
  StreamOutbox() : stream_(std::make_shared<EventStream>()) {}
  bool send(std::string_view message) override;
  bool open() const override { return stream_->is_open(); }
  void close() override { stream_->close(); }
  void keep_alive() override { stream_->push(": keep-alive\n\n"); }
  const std::shared_ptr<EventStream>& stream() const { return stream_; }

 private:
  std::shared_ptr<EventStream> stream_;
};

/// An MCP session of the handshake revisions over HTTP: its notifications go to the GET stream the
/// client has open (the newest one; an older one is closed). With none open they are dropped, as
/// the transport allows no other way to send them.
class SessionOutbox final : public Outbox {
 public:
  /// A new GET stream for the session: the previous one, if any, ends.
  std::shared_ptr<StreamOutbox> attach();
  bool send(std::string_view message) override;
  bool open() const override { return !closed_.load(); }
  bool reachable() const override;
  void close() override;
  void keep_alive() override;

 private:
  mutable std::mutex mutex_;
  std::shared_ptr<StreamOutbox> current_;
  std::atomic<bool> closed_{false};
};

}  // namespace ct::mcp
