#include "core/clock.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>

namespace ct {

TimeMs SystemClock::now() {
  using namespace std::chrono;
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

std::string format_iso8601(TimeMs time) {
  std::time_t seconds = static_cast<std::time_t>(time / 1000);
  if (time < 0 && time % 1000 != 0) --seconds;
  std::tm parts{};
  gmtime_r(&seconds, &parts);
  char buffer[80];  // room for any int fields, so -Wformat-truncation is satisfied
  std::snprintf(buffer, sizeof buffer, "%04d-%02d-%02dT%02d:%02d:%02dZ", parts.tm_year + 1900,
                parts.tm_mon + 1, parts.tm_mday, parts.tm_hour, parts.tm_min, parts.tm_sec);
  return buffer;
}

namespace {

bool read_digits(std::string_view text, std::size_t& pos, std::size_t count, int& out) {
  if (pos + count > text.size()) return false;
  int value = 0;
  for (std::size_t i = 0; i < count; ++i) {
    char c = text[pos + i];
    if (c < '0' || c > '9') return false;
    value = value * 10 + (c - '0');
  }
  pos += count;
  out = value;
  return true;
}

bool expect(std::string_view text, std::size_t& pos, char c) {
  if (pos >= text.size() || text[pos] != c) return false;
  ++pos;
  return true;
}

int days_in_month(int year, int month) {
  static constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
  return month == 2 && leap ? 29 : kDays[month - 1];
}

// Days since 1970-01-01 for a proleptic Gregorian date (Howard Hinnant's algorithm).
std::int64_t days_from_civil(int y, unsigned m, unsigned d) {
  y -= m <= 2;
  const int era = (y >= 0 ? y : y - 399) / 400;
  const unsigned yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return static_cast<std::int64_t>(era) * 146097 + static_cast<std::int64_t>(doe) - 719468;
}

}  // namespace

std::optional<TimeMs> parse_iso8601(std::string_view text) {
  std::size_t pos = 0;
  int year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0, millis = 0;
  if (!read_digits(text, pos, 4, year) || !expect(text, pos, '-') ||
      !read_digits(text, pos, 2, month) || !expect(text, pos, '-') ||
      !read_digits(text, pos, 2, day))
    return std::nullopt;
  if (month < 1 || month > 12 || day < 1 || day > days_in_month(year, month)) return std::nullopt;
  int offset_minutes = 0;
  if (pos < text.size()) {
    if (text[pos] != 'T' && text[pos] != ' ') return std::nullopt;
    ++pos;
    if (!read_digits(text, pos, 2, hour) || !expect(text, pos, ':') ||
        !read_digits(text, pos, 2, minute) || !expect(text, pos, ':') ||
        !read_digits(text, pos, 2, second))
      return std::nullopt;
    if (hour > 23 || minute > 59 || second > 60) return std::nullopt;
    if (pos < text.size() && text[pos] == '.') {
      ++pos;
      std::size_t start = pos;
      int scale = 100;
      while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9') {
        millis += (text[pos] - '0') * scale;
        scale /= 10;
        ++pos;
      }
      if (pos == start) return std::nullopt;
    }
    if (pos < text.size() && text[pos] == 'Z') {
      ++pos;
    } else if (pos < text.size() && (text[pos] == '+' || text[pos] == '-')) {
      int sign = text[pos] == '-' ? -1 : 1;
      ++pos;
      int oh, om;
      if (!read_digits(text, pos, 2, oh) || !expect(text, pos, ':') || !read_digits(text, pos, 2, om))
        return std::nullopt;
      if (oh > 23 || om > 59) return std::nullopt;
      offset_minutes = sign * (oh * 60 + om);
    }
    if (pos != text.size()) return std::nullopt;
  }
  std::int64_t days = days_from_civil(year, static_cast<unsigned>(month), static_cast<unsigned>(day));
  std::int64_t seconds = days * 86400 + hour * 3600 + minute * 60 + second - offset_minutes * 60;
  return seconds * 1000 + millis;
}

bool test_mode() {
  const char* value = std::getenv("CLEO_TEST_MODE");
  return value && std::string_view(value) == "1";
}

std::optional<TimeMs> parse_time_expression(std::string_view text, TimeMs now) {
  if (auto exact = parse_iso8601(text)) return exact;
  constexpr TimeMs kDay = 86'400'000;
  const TimeMs midnight = now - ((now % kDay) + kDay) % kDay;
  if (text == "now") return now;
  if (text == "today") return midnight;
  if (text == "yesterday") return midnight - kDay;
  if (text.size() < 2 || text.size() > 8) return std::nullopt;
  TimeMs unit = 0;
  switch (text.back()) {
    case 'm': unit = 60'000; break;
    case 'h': unit = 3'600'000; break;
    case 'd': unit = kDay; break;
    case 'w': unit = 7 * kDay; break;
    default: return std::nullopt;
  }
  TimeMs count = 0;
  for (char c : text.substr(0, text.size() - 1)) {
    if (c < '0' || c > '9') return std::nullopt;
    count = count * 10 + (c - '0');
  }
  return now - count * unit;
}

std::unique_ptr<Clock> clock_from_environment() {
  if (const char* fixed = std::getenv("CLEO_FIXED_TIME")) {
    if (auto start = parse_iso8601(fixed)) return std::make_unique<FixedClock>(*start);
  }
  if (test_mode()) return std::make_unique<FixedClock>(*parse_iso8601("2026-01-01T00:00:00Z"));
  return std::make_unique<SystemClock>();
}

}  // namespace ct
