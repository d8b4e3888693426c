#include "core/cancel.h"

#include <utility>

namespace ct {
namespace {

thread_local CancelFlag current;

}  // namespace

bool CancelToken::request_cancel() {
  State expected = State::Running;
  if (state_.compare_exchange_strong(expected, State::CancelRequested)) return true;
  return expected == State::CancelRequested;
}

bool CancelToken::begin_commit() {
  State expected = State::Running;
  if (state_.compare_exchange_strong(expected, State::Committing)) return true;
  return expected == State::Committing;
}

CancelScope::CancelScope(CancelFlag flag) : previous_(std::exchange(current, std::move(flag))) {}

CancelScope::~CancelScope() { current = std::move(previous_); }

bool cancel_requested() { return current && current->cancel_requested(); }

bool begin_commit() { return !current || current->begin_commit(); }

}  // namespace ct
