// Cancelling work that runs on this thread: the owner of a long call (an MCP task its client
// cancels) raises a flag, and what the call does checks it where it can stop — the subprocess
// adapter ends its child as at a time limit. The flag is ambient for the thread while a
// CancelScope lives (as clangd's Context carries its cancellation), so no layer between the
// transport and the subprocess has to pass it along.
#pragma once

#include <atomic>
#include <memory>

namespace ct {

/// Raised (set to true) to ask the work it was given to stop. Shared by the owner and the work.
using CancelFlag = std::shared_ptr<std::atomic<bool>>;

inline CancelFlag make_cancel_flag() { return std::make_shared<std::atomic<bool>>(false); }

/// While it lives, `flag` is the calling thread's cancel flag (scopes nest; the innermost counts).
class CancelScope {
 public:
  explicit CancelScope(CancelFlag flag);
  ~CancelScope();
  CancelScope(const CancelScope&) = delete;
  CancelScope& operator=(const CancelScope&) = delete;

 private:
  CancelFlag previous_;
};

/// Whether the work on this thread was asked to stop (false outside any CancelScope).
bool cancel_requested();

}  // namespace ct
