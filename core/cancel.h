// Cancelling work that runs on this thread: the owner of a long call (an MCP task its client
// cancels) asks it to stop, and what the call does checks where it can stop — the subprocess
// adapter ends its child as at a time limit. The token is ambient for the thread while a
// CancelScope lives (as clangd's Context carries its cancellation), so no layer between the
// transport and the subprocess has to pass it along.
//
// A call can be stopped only until it begins to change what cannot be taken back: its write
// transaction (the router marks that point, domains/router.cpp), or an act outside the store that
// an external step makes (release.ship's first git step). Whichever comes first wins: a cancel
// that came first stops the call before it changes anything; a call past its commit point runs to
// its end, and the cancel is refused — its owner reports the call's real outcome.
#pragma once

#include <atomic>
#include <memory>

namespace ct {

class CancelToken {
 public:
  enum class State { Running, CancelRequested, Committing };

  /// Asks the work to stop. True when it will (it had not passed its commit point; asking twice
  /// is asking once), false when it is past that point and runs to its end.
  bool request_cancel();
  /// The work passes its commit point. True when it may go on (also when it had passed it
  /// already), false when a cancel came first: then it must stop and change nothing.
  bool begin_commit();
  State state() const { return state_.load(); }
  bool cancel_requested() const { return state() == State::CancelRequested; }

 private:
  std::atomic<State> state_{State::Running};
};

/// Shared by the owner and the work.
using CancelFlag = std::shared_ptr<CancelToken>;

inline CancelFlag make_cancel_flag() { return std::make_shared<CancelToken>(); }

/// While it lives, `flag` is the calling thread's cancel token (scopes nest; the innermost counts).
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

/// The work on this thread passes its commit point (CancelToken::begin_commit): false when it was
/// cancelled first and must change nothing; true outside any CancelScope.
bool begin_commit();

}  // namespace ct
