// Time as a seam: production reads the system clock, tests fix it (CLEO_TEST_MODE / CLEO_FIXED_TIME).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace ct {

/// Milliseconds since the Unix epoch, UTC.
using TimeMs = std::int64_t;

class Clock {
 public:
  virtual ~Clock() = default;
  virtual TimeMs now() = 0;
};

class SystemClock final : public Clock {
 public:
  TimeMs now() override;
};

/// Starts at `start` and advances by `step` on every reading, so ordered events stay ordered.
class FixedClock final : public Clock {
 public:
  explicit FixedClock(TimeMs start, TimeMs step = 1000) : next_(start), step_(step) {}
  TimeMs now() override {
    TimeMs t = next_;
    next_ += step_;
    return t;
  }

 private:
  TimeMs next_;
  TimeMs step_;
};

/// "2026-11-22T10:04:05Z" (seconds precision: enough for people and cheap in tokens).
std::string format_iso8601(TimeMs time);
/// Accepts "YYYY-MM-DD", "YYYY-MM-DDTHH:MM:SS[.fff](Z|±HH:MM)".
std::optional<TimeMs> parse_iso8601(std::string_view text);

/// What people write for a point in time, relative to `now`: an ISO date or time (as above),
/// "now", "today" and "yesterday" (midnight UTC), or an age: a number and m, h, d or w ("90m",
/// "12h", "3d", "2w" ago).
std::optional<TimeMs> parse_time_expression(std::string_view text, TimeMs now);

/// The clock the process should use: a FixedClock when CLEO_FIXED_TIME is set (an ISO time) or
/// CLEO_TEST_MODE=1 (2026-01-01T00:00:00Z), else the system clock.
std::unique_ptr<Clock> clock_from_environment();

/// True when CLEO_TEST_MODE=1: hermetic runs (fixed clock, deterministic tokens).
bool test_mode();

}  // namespace ct
