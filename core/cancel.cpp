#include "core/cancel.h"

#include <utility>

namespace ct {
namespace {

thread_local CancelFlag current;

}  // namespace

CancelScope::CancelScope(CancelFlag flag) : previous_(std::exchange(current, std::move(flag))) {}

CancelScope::~CancelScope() { current = std::move(previous_); }

bool cancel_requested() { return current && current->load(std::memory_order_relaxed); }

}  // namespace ct
