#include "cli/progress_line.h"

#include "core/text.h"

namespace ct::cli {
namespace {

// Back to the line's start and clear it (VT100, which every terminal we run in speaks).
constexpr std::string_view kEraseLine = "\r\033[K";

}  // namespace

ProgressLine::ProgressLine(std::FILE* out, std::string what)
    : out_(out), what_(std::move(what)), scope_([this](std::string_view message) { say(message); }) {}

ProgressLine::~ProgressLine() {
  if (!last_) return;
  std::fwrite(kEraseLine.data(), 1, kEraseLine.size(), out_);
  std::fflush(out_);
}

void ProgressLine::say(std::string_view message) {
  const auto now = Clock::now();
  if (last_ && now - *last_ < kInterval) return;
  last_ = now;
  std::string line(kEraseLine);
  line += what_ + ": " + terminal_safe(message);
  std::fwrite(line.data(), 1, line.size(), out_);
  std::fflush(out_);
}

}  // namespace ct::cli
