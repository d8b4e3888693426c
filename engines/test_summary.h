// The summary line of a test runner's output, read back as counts: ctest, pytest, cargo test,
// go test, jest, vitest and node --test. Each format is recognised by the lines it prints at the
// end of a run; the counts are what those lines say, never guessed.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace ct {

struct TestSummary {
  std::string format;           // "ctest", "pytest", "cargo", "go", "jest", "vitest", "node"
  std::string unit = "tests";   // what the counts count: "tests", or "packages" (go test without -v)
  std::int64_t passed = 0;
  std::int64_t failed = 0;      // failures and errors
  std::int64_t skipped = 0;     // skipped, ignored, todo, expected failures
  std::optional<std::int64_t> total;  // when the runner states it
};

/// The summary of `output` (stdout and stderr of a run; ANSI colours are ignored). When several
/// formats appear (ctest running pytest), the one whose summary comes last wins; runners that print
/// one summary per binary or package (cargo, go) are summed. Nothing when no line is recognised.
std::optional<TestSummary> parse_test_summary(std::string_view output);

}  // namespace ct
