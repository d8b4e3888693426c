// Progress of long work on this thread, for whoever watches it: a person at `ct`'s terminal, an
// MCP client that sent a progressToken, a task's status. Like the cancel token (cancel.h), the
// watcher is ambient for the thread while a ProgressScope lives, so nothing between the transport
// and the work has to pass it along. Work says in words what it has done so far ("pulled 300
// items"); each watcher decides how often to pass it on. Scopes nest, and a note reaches every
// scope's sink, innermost first (a task's status and its client's notifications follow one call).
#pragma once

#include <functional>
#include <string_view>

namespace ct {

using ProgressSink = std::function<void(std::string_view message)>;

/// While it lives, `sink` watches the work on the calling thread (with the scopes around it).
class ProgressScope {
 public:
  explicit ProgressScope(ProgressSink sink);
  ~ProgressScope();
  ProgressScope(const ProgressScope&) = delete;
  ProgressScope& operator=(const ProgressScope&) = delete;

 private:
  friend void report_progress(std::string_view message);
  ProgressSink sink_;
  ProgressScope* outer_;
};

/// Tells the watchers of this thread's work (nobody, outside any ProgressScope).
void report_progress(std::string_view message);

}  // namespace ct
