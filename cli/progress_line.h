// Long work's progress on a person's terminal: one line on stderr, rewritten in place as the work
// reports (core/progress.h) and erased when it ends, as git and curl do. Only on a terminal: a
// pipe or a file wants the result, not the story.
#pragma once

#include <chrono>
#include <cstdio>
#include <optional>
#include <string>

#include "core/progress.h"

namespace ct::cli {

class ProgressLine {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr std::chrono::milliseconds kInterval{100};

  /// Watches the work on this thread while it lives, saying each note (at most every kInterval)
  /// as "<what>: <note>" on `out`.
  ProgressLine(std::FILE* out, std::string what);
  /// Erases the line, if one was written.
  ~ProgressLine();
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;

 private:
  void say(std::string_view message);

  std::FILE* out_;
  std::string what_;
  std::optional<Clock::time_point> last_;
  ProgressScope scope_;
};

}  // namespace ct::cli
