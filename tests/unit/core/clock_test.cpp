// The clock seam: ISO-8601 formatting and parsing, the fixed clock, and environment selection.
#include <catch2/catch.hpp>

#include <chrono>
#include <cstdlib>
#include <string>
#include <vector>

#include "core/clock.h"
#include "tests/unit/core/env_guard.h"

namespace {

using ct::TimeMs;
using ct::testing::EnvGuard;

constexpr TimeMs kNewYear2026 = 1767225600000;  // 2026-01-01T00:00:00Z

TimeMs must_parse(std::string_view text) {
  auto parsed = ct::parse_iso8601(text);
  INFO("parsing: " << text);
  REQUIRE(parsed.has_value());
  return *parsed;
}

TimeMs system_now() {
  using namespace std::chrono;
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

}  // namespace

TEST_CASE("format_iso8601", "[core][clock]") {
  CHECK(ct::format_iso8601(0) == "1970-01-01T00:00:00Z");
  CHECK(ct::format_iso8601(kNewYear2026) == "2026-01-01T00:00:00Z");
  CHECK(ct::format_iso8601(kNewYear2026 + 999) == "2026-01-01T00:00:00Z");  // seconds precision
  CHECK(ct::format_iso8601(kNewYear2026 + 1000) == "2026-01-01T00:00:01Z");
  CHECK(ct::format_iso8601(kNewYear2026 - 1) == "2025-12-31T23:59:59Z");
  CHECK(ct::format_iso8601(-1) == "1969-12-31T23:59:59Z");
  CHECK(ct::format_iso8601(-1000) == "1969-12-31T23:59:59Z");
  CHECK(ct::format_iso8601(-1001) == "1969-12-31T23:59:58Z");
  CHECK(ct::format_iso8601(951782400000) == "2000-02-29T00:00:00Z");
  CHECK(ct::format_iso8601(4102444799000) == "2099-12-31T23:59:59Z");
}

TEST_CASE("parse_iso8601 accepts dates, times, fractions and offsets", "[core][clock]") {
  CHECK(must_parse("1970-01-01T00:00:00Z") == 0);
  CHECK(must_parse("2026-01-01T00:00:00Z") == kNewYear2026);
  CHECK(must_parse("2026-01-01") == kNewYear2026);
  CHECK(must_parse("2026-01-01 00:00:00Z") == kNewYear2026);
  CHECK(must_parse("2026-01-01T10:04:05Z") == kNewYear2026 + (10 * 3600 + 4 * 60 + 5) * 1000);
  CHECK(must_parse("2024-02-29T12:00:00Z") == 1709208000000);
  CHECK(must_parse("2000-02-29") == 951782400000);
  CHECK(must_parse("1969-12-31T23:59:59Z") == -1000);

  // Fractional seconds: milliseconds kept, finer digits truncated.
  CHECK(must_parse("2026-01-01T00:00:00.5Z") == kNewYear2026 + 500);
  CHECK(must_parse("2026-01-01T00:00:00.05Z") == kNewYear2026 + 50);
  CHECK(must_parse("2026-01-01T00:00:00.123Z") == kNewYear2026 + 123);
  CHECK(must_parse("2026-01-01T00:00:00.123999Z") == kNewYear2026 + 123);
  CHECK(must_parse("2026-01-01T00:00:00.000Z") == kNewYear2026);

  // Offsets: local time minus the offset is UTC.
  CHECK(must_parse("2026-01-01T01:00:00+01:00") == kNewYear2026);
  CHECK(must_parse("2025-12-31T19:00:00-05:00") == kNewYear2026);
  CHECK(must_parse("2026-01-01T05:30:00+05:30") == kNewYear2026);
  CHECK(must_parse("2025-12-31T20:15:00-03:45") == kNewYear2026);
  CHECK(must_parse("2026-01-01T00:00:00+00:00") == kNewYear2026);
  CHECK(must_parse("2026-01-01T00:00:00-00:00") == kNewYear2026);
  CHECK(must_parse("2026-01-01T02:00:00.250+02:00") == kNewYear2026 + 250);
}

TEST_CASE("parse_iso8601 rejects malformed input", "[core][clock]") {
  const std::vector<std::string> bad = {
      "",
      "2026",
      "2026-01",
      "26-01-01",
      "2026-1-01",
      "2026-01-1",
      "2026/01/01",
      "2026-13-01",
      "2026-00-10",
      "2026-01-00",
      "2026-01-32",
      "2026-02-29",  // not a leap year
      "2026-02-30",
      "2026-04-31",
      "1900-02-29",  // century, not a leap year
      "2026-01-01T",
      "2026-01-01X00:00:00Z",
      "2026-01-01T24:00:00Z",
      "2026-01-01T10:60:00Z",
      "2026-01-01T10:00:61Z",
      "2026-01-01T10:00Z",
      "2026-01-01T1:00:00Z",
      "2026-01-01T10:00:00.Z",
      "2026-01-01T10:00:00ZZ",
      "2026-01-01T10:00:00 Z",
      "2026-01-01T10:00:00+0100",
      "2026-01-01T10:00:00+01",
      "2026-01-01T10:00:00+24:00",
      "2026-01-01T10:00:00+01:60",
      "2026-01-01T10:00:00z",
      "2026-01-01x",
      " 2026-01-01",
      "2026-01-01 ",
      "abcd-ef-gh",
      "２０２６-01-01",
      "2026-01-01T10:00:00Z trailing",
  };
  for (const auto& text : bad) {
    INFO("input: '" << text << "'");
    CHECK_FALSE(ct::parse_iso8601(text).has_value());
  }
}

TEST_CASE("format and parse round-trip", "[core][clock]") {
  for (TimeMs t = -86400000LL * 800; t < 86400000LL * 40000; t += 86400000LL * 37 + 3723000) {
    std::string text = ct::format_iso8601(t);
    INFO(t << " → " << text);
    CHECK(must_parse(text) == t);
  }
  // Milliseconds are dropped by format: the round trip lands on the second.
  for (TimeMs t : {kNewYear2026 + 1, kNewYear2026 + 999, TimeMs{-1}, TimeMs{-999}, TimeMs{123456789}}) {
    TimeMs floor_second = t >= 0 ? t / 1000 * 1000 : (t - 999) / 1000 * 1000;
    CHECK(must_parse(ct::format_iso8601(t)) == floor_second);
  }
  for (std::string text : {"2026-11-22T10:04:05Z", "1999-12-31T23:59:59Z", "2038-01-19T03:14:08Z",
                           "2000-01-01T00:00:00Z", "2400-02-29T12:34:56Z"}) {
    CHECK(ct::format_iso8601(must_parse(text)) == text);
  }
}

TEST_CASE("FixedClock steps on every reading", "[core][clock]") {
  ct::FixedClock clock(kNewYear2026);
  CHECK(clock.now() == kNewYear2026);
  CHECK(clock.now() == kNewYear2026 + 1000);
  CHECK(clock.now() == kNewYear2026 + 2000);

  ct::FixedClock fast(100, 7);
  CHECK(fast.now() == 100);
  CHECK(fast.now() == 107);
  CHECK(fast.now() == 114);

  ct::FixedClock frozen(5, 0);
  CHECK(frozen.now() == 5);
  CHECK(frozen.now() == 5);

  ct::Clock& as_interface = clock;
  CHECK(as_interface.now() == kNewYear2026 + 3000);
}

TEST_CASE("SystemClock reads the real time", "[core][clock]") {
  ct::SystemClock clock;
  TimeMs before = system_now();
  TimeMs now = clock.now();
  TimeMs after = system_now();
  CHECK(now >= before);
  CHECK(now <= after);
}

TEST_CASE("test_mode follows CLEO_TEST_MODE=1 exactly", "[core][clock]") {
  {
    EnvGuard mode("CLEO_TEST_MODE", "1");
    CHECK(ct::test_mode());
  }
  {
    EnvGuard mode("CLEO_TEST_MODE", "0");
    CHECK_FALSE(ct::test_mode());
  }
  {
    EnvGuard mode("CLEO_TEST_MODE", "true");
    CHECK_FALSE(ct::test_mode());
  }
  {
    EnvGuard mode("CLEO_TEST_MODE", std::nullopt);
    CHECK_FALSE(ct::test_mode());
  }
}

TEST_CASE("clock_from_environment honours CLEO_FIXED_TIME and CLEO_TEST_MODE", "[core][clock]") {
  SECTION("CLEO_FIXED_TIME wins and the clock steps a second per reading") {
    EnvGuard fixed("CLEO_FIXED_TIME", "2030-05-06T07:08:09Z");
    EnvGuard mode("CLEO_TEST_MODE", "1");
    auto clock = ct::clock_from_environment();
    CHECK(ct::format_iso8601(clock->now()) == "2030-05-06T07:08:09Z");
    CHECK(ct::format_iso8601(clock->now()) == "2030-05-06T07:08:10Z");
  }
  SECTION("CLEO_FIXED_TIME works without test mode, offsets included") {
    EnvGuard fixed("CLEO_FIXED_TIME", "2030-05-06T09:08:09+02:00");
    EnvGuard mode("CLEO_TEST_MODE", std::nullopt);
    auto clock = ct::clock_from_environment();
    CHECK(ct::format_iso8601(clock->now()) == "2030-05-06T07:08:09Z");
  }
  SECTION("CLEO_TEST_MODE=1 alone starts at 2026-01-01") {
    EnvGuard fixed("CLEO_FIXED_TIME", std::nullopt);
    EnvGuard mode("CLEO_TEST_MODE", "1");
    auto clock = ct::clock_from_environment();
    CHECK(clock->now() == kNewYear2026);
    CHECK(clock->now() == kNewYear2026 + 1000);
  }
  SECTION("an unparsable CLEO_FIXED_TIME falls back to test mode") {
    EnvGuard fixed("CLEO_FIXED_TIME", "yesterday");
    EnvGuard mode("CLEO_TEST_MODE", "1");
    CHECK(ct::clock_from_environment()->now() == kNewYear2026);
  }
  SECTION("neither: the system clock") {
    EnvGuard fixed("CLEO_FIXED_TIME", std::nullopt);
    EnvGuard mode("CLEO_TEST_MODE", std::nullopt);
    auto clock = ct::clock_from_environment();
    TimeMs before = system_now();
    TimeMs now = clock->now();
    CHECK(now >= before);
    CHECK(now <= system_now());
  }
  SECTION("the environment is restored by the guards") {
    const char* outside = std::getenv("CLEO_FIXED_TIME");
    {
      EnvGuard fixed("CLEO_FIXED_TIME", "2030-01-01");
      CHECK(std::string(std::getenv("CLEO_FIXED_TIME")) == "2030-01-01");
    }
    const char* after = std::getenv("CLEO_FIXED_TIME");
    CHECK((outside == nullptr) == (after == nullptr));
  }
}

TEST_CASE("parse_time_expression: dates, today, yesterday and ages, relative to now", "[core][clock]") {
  const ct::TimeMs now = *ct::parse_iso8601("2026-11-23T15:30:00Z");
  auto at = [&](std::string_view text) { return ct::parse_time_expression(text, now); };
  CHECK(at("2026-11-01") == ct::parse_iso8601("2026-11-01"));
  CHECK(at("now") == now);
  CHECK(at("today") == ct::parse_iso8601("2026-11-23T00:00:00Z"));
  CHECK(at("yesterday") == ct::parse_iso8601("2026-11-22T00:00:00Z"));
  CHECK(at("3d") == ct::parse_iso8601("2026-11-20T15:30:00Z"));
  CHECK(at("12h") == ct::parse_iso8601("2026-11-23T03:30:00Z"));
  CHECK(at("90m") == ct::parse_iso8601("2026-11-23T14:00:00Z"));
  CHECK(at("2w") == ct::parse_iso8601("2026-11-09T15:30:00Z"));
  for (std::string_view bad : {"", "d", "3", "3y", "-3d", "3.5d", "last week", "123456789d"}) {
    INFO(bad);
    CHECK_FALSE(at(bad));
  }
}
