// One Server-Sent Events stream: text that any thread pushes and the HTTP server sends as it
// comes, for as long as the peer stays. The server's side (read, detach) never blocks on the
// pushers; a pusher never waits for the peer.
#pragma once

#include <cstddef>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>

namespace ct::mcp {

class EventStream {
 public:
  /// Beyond this many unsent bytes the peer is too slow to follow: the stream ends (an
  /// EventSource reconnects and starts afresh).
  static constexpr std::size_t kMaxPending = 256 * 1024;

  /// Queues framed text ("event: …\ndata: …\n\n", or a ": comment\n\n"). False when the stream
  /// has ended (closed, peer gone, or too far behind): the caller may forget it.
  bool push(std::string_view text);
  /// Ends the stream once what is queued is sent.
  void close();
  bool is_open() const;

  // ---- the HTTP server's side ----

  /// Moves up to `max` queued bytes into `buffer` and returns how many. With nothing queued:
  /// -1 once closed (the end of the stream), else 0 after calling `pause` (under the stream's
  /// lock, so no push slips in between) and keeping `resume`, which the next push or close calls
  /// once, from the pushing thread.
  std::ptrdiff_t read(char* buffer, std::size_t max, const std::function<void()>& pause, std::function<void()> resume);
  /// The peer is gone: nothing more is queued and `resume` is never called again.
  void detach();

 private:
  void wake_locked();

  mutable std::mutex mutex_;
  std::string pending_;
  bool closed_ = false;
  bool detached_ = false;
  std::function<void()> resume_;  // set while the server waits for text
};

}  // namespace ct::mcp
