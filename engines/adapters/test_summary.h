// The summary line of a test runner's output, read back as counts: ctest, pytest, cargo test,
// go test, jest, vitest and node --test. Each format is recognised by the lines it prints at the
// end of a run; the counts are what those lines say, never guessed. A coverage total printed by
// the usual tools (pytest-cov, gcovr, istanbul, lcov, go -cover) is read too.
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
  /// Line or statement coverage in percent, when the output has a coverage total: pytest-cov's
  /// and gcovr's "TOTAL … 90%", istanbul's "All files | 85.71 | …", lcov's "lines......: 85.2%",
  /// go's "coverage: 85.2% of statements" and go tool cover's "total: (statements) 85.2%". The
  /// last such line wins (go -cover prints one per package: the last package's then).
  std::optional<double> coverage;
};

/// The summary of `output` (stdout and stderr of a run; ANSI colours are ignored). When several
/// formats appear (ctest running pytest), the one whose summary comes last wins; runners that print
/// one summary per binary or package (cargo, go) are summed. Nothing when no line is recognised.
std::optional<TestSummary> parse_test_summary(std::string_view output);

}  // namespace ct
