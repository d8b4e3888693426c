// Summary lines of test runners, as the runners print them, read back as counts.
#include <catch2/catch.hpp>

#include "engines/adapters/test_summary.h"

using namespace ct;

namespace {

TestSummary parsed(std::string_view output) {
  auto summary = parse_test_summary(output);
  INFO(output);
  REQUIRE(summary.has_value());
  return *summary;
}

}  // namespace

TEST_CASE("ctest's summary line", "[engines][test_summary]") {
  TestSummary s = parsed("Test project /src/build\n100% tests passed, 0 tests failed out of 116\n\nTotal Test time (real) = 41.37 sec\n");
  CHECK(s.format == "ctest");
  CHECK(s.passed == 116);
  CHECK(s.failed == 0);
  CHECK(s.total == 116);

  s = parsed("97% tests passed, 3 tests failed out of 116\n\nThe following tests FAILED:\n\t 12 - cli/issues (Failed)\n");
  CHECK(s.passed == 113);
  CHECK(s.failed == 3);

  // Skipped tests are listed after the summary and are inside its total.
  s = parsed("100% tests passed, 0 tests failed out of 10\n\nThe following tests did not run:\n\t  4 - slow (Skipped)\n\t  7 - net (Skipped)\n");
  CHECK(s.passed == 8);
  CHECK(s.skipped == 2);
  CHECK(s.total == 10);
}

TEST_CASE("pytest's summary line", "[engines][test_summary]") {
  TestSummary s = parsed("=================== 3 failed, 10 passed, 1 skipped in 0.12s ===================\n");
  CHECK(s.format == "pytest");
  CHECK(s.failed == 3);
  CHECK(s.passed == 10);
  CHECK(s.skipped == 1);
  CHECK_FALSE(s.total);

  s = parsed("========== 1 failed, 2 passed, 1 error, 3 warnings in 1.50s (0:00:01) ==========\n");
  CHECK(s.failed == 2);  // an error is a failure
  CHECK(s.passed == 2);

  s = parsed("12 passed, 2 xfailed in 0.40s\n");  // -q prints it without the rules
  CHECK(s.passed == 12);
  CHECK(s.skipped == 2);

  s = parsed("============================ no tests ran in 0.01s =============================\n");
  CHECK(s.passed == 0);
  CHECK(s.failed == 0);
}

TEST_CASE("cargo test prints one result line per test binary: they are summed", "[engines][test_summary]") {
  TestSummary s = parsed(
      "running 13 tests\n"
      "test result: ok. 12 passed; 0 failed; 1 ignored; 0 measured; 0 filtered out; finished in 0.00s\n\n"
      "   Doc-tests app\n\n"
      "test result: FAILED. 2 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.31s\n");
  CHECK(s.format == "cargo");
  CHECK(s.passed == 14);
  CHECK(s.failed == 1);
  CHECK(s.skipped == 1);
  // The shortest form of the line.
  CHECK(parsed("test result: ok. 12 passed; 0 failed; 1 ignored").passed == 12);
}

TEST_CASE("go test: tests with -v, packages without", "[engines][test_summary]") {
  TestSummary s = parsed(
      "=== RUN   TestA\n--- PASS: TestA (0.00s)\n=== RUN   TestB\n--- FAIL: TestB (0.00s)\n"
      "    --- FAIL: TestB/sub (0.00s)\n=== RUN   TestC\n--- SKIP: TestC (0.00s)\nFAIL\n"
      "FAIL\texample.com/app\t0.004s\n");
  CHECK(s.format == "go");
  CHECK(s.unit == "tests");
  CHECK(s.passed == 1);
  CHECK(s.failed == 1);  // subtests are not counted twice
  CHECK(s.skipped == 1);

  s = parsed("--- FAIL: TestParse (0.00s)\n    parse_test.go:12: got 1, want 2\nFAIL\n"
             "FAIL\texample.com/app/parse\t0.004s\nok  \texample.com/app/store\t0.011s\n"
             "ok  \texample.com/app/cli\t(cached)\n");
  CHECK(s.unit == "packages");
  CHECK(s.passed == 2);
  CHECK(s.failed == 1);

  CHECK(parsed("ok  \texample.com/app\t0.01s\n").passed == 1);
  CHECK(parsed("FAIL\texample.com/app [build failed]\n").failed == 1);
}

TEST_CASE("jest and vitest summary lines", "[engines][test_summary]") {
  TestSummary s = parsed("Test Suites: 1 failed, 1 passed, 2 total\nTests:       1 failed, 5 passed, 6 total\n"
                         "Snapshots:   0 total\nTime:        1.234 s\n");
  CHECK(s.format == "jest");
  CHECK(s.failed == 1);
  CHECK(s.passed == 5);
  CHECK(s.total == 6);
  CHECK(parsed("Tests:       2 skipped, 1 todo, 4 passed, 7 total\n").skipped == 3);

  s = parsed(" Test Files  1 failed | 3 passed (4)\n      Tests  2 failed | 8 passed (10)\n   Start at  12:00:00\n");
  CHECK(s.format == "vitest");
  CHECK(s.failed == 2);
  CHECK(s.passed == 8);
  CHECK(s.total == 10);
  // With the colours a terminal gets.
  s = parsed("\x1b[2m      Tests \x1b[22m \x1b[1m\x1b[32m8 passed\x1b[39m\x1b[22m\x1b[90m (8)\x1b[39m\n");
  CHECK(s.format == "vitest");
  CHECK(s.passed == 8);
  CHECK(s.total == 8);
}

TEST_CASE("node --test: TAP and spec reporter", "[engines][test_summary]") {
  TestSummary s = parsed("# tests 6\n# suites 0\n# pass 5\n# fail 1\n# cancelled 0\n# skipped 0\n# todo 0\n# duration_ms 42.5\n");
  CHECK(s.format == "node");
  CHECK(s.passed == 5);
  CHECK(s.failed == 1);
  CHECK(s.total == 6);
  s = parsed("\xE2\x84\xB9 tests 3\n\xE2\x84\xB9 pass 2\n\xE2\x84\xB9 fail 0\n\xE2\x84\xB9 skipped 1\n");
  CHECK(s.passed == 2);
  CHECK(s.skipped == 1);
}

TEST_CASE("the summary printed last wins; unrecognised output has none", "[engines][test_summary]") {
  // ctest running a pytest suite: ctest's own summary comes last.
  TestSummary s = parsed("==== 2 passed in 0.10s ====\n100% tests passed, 0 tests failed out of 1\n");
  CHECK(s.format == "ctest");
  CHECK(s.total == 1);
  CHECK_FALSE(parse_test_summary("all good, as far as I can tell\n"));
  CHECK_FALSE(parse_test_summary(""));
  CHECK_FALSE(parse_test_summary("ok 1 - adds numbers\nok 2 - subtracts\n"));  // TAP lines are not go packages
  CHECK_FALSE(parse_test_summary("Done in 3s\n"));
}

TEST_CASE("coverage totals of the usual tools", "[engines][test_summary]") {
  // pytest-cov: the TOTAL row of its table, then pytest's own summary.
  TestSummary s = parsed("Name        Stmts   Miss  Cover\n-----\napp.py         40      4    90%\nTOTAL         120     12    90%\n"
                         "=================== 10 passed in 0.12s ===================\n");
  CHECK(s.format == "pytest");
  REQUIRE(s.coverage);
  CHECK(*s.coverage == Approx(90.0));
  // istanbul (jest, vitest, nyc): the statements column of "All files".
  s = parsed("Tests:       5 passed, 5 total\n---\nFile      | % Stmts | % Branch\nAll files |   85.71 |    50 |\n");
  CHECK(*s.coverage == Approx(85.71));
  // lcov's summary, go test -cover and go tool cover.
  s = parsed("100% tests passed, 0 tests failed out of 4\n  lines......: 72.5% (290 of 400 lines)\n  functions..: 80.0% (40 of 50 functions)\n");
  CHECK(*s.coverage == Approx(72.5));
  s = parsed("--- PASS: TestA (0.00s)\nok  \texample.com/app\t0.01s\tcoverage: 61.3% of statements\n");
  CHECK(*s.coverage == Approx(61.3));
  s = parsed("--- PASS: TestA (0.00s)\nok  \texample.com/app\t0.01s\ntotal:\t\t\t(statements)\t64.0%\n");
  CHECK(*s.coverage == Approx(64.0));
  // gcovr's TOTAL row.
  s = parsed("100% tests passed, 0 tests failed out of 4\nTOTAL                                      400     290    72%\n");
  CHECK(*s.coverage == Approx(72.0));
}

TEST_CASE("no coverage without a coverage total", "[engines][test_summary]") {
  CHECK_FALSE(parsed("=================== 10 passed in 0.12s ===================\n").coverage);
  // A TOTAL that is no percentage, or a percentage out of range, is not a coverage figure.
  CHECK_FALSE(parsed("TOTAL 12 tests\n100% tests passed, 0 tests failed out of 4\n").coverage);
  CHECK_FALSE(parsed("TOTAL 140%\n100% tests passed, 0 tests failed out of 4\n").coverage);
  // Coverage alone is no summary of a run.
  CHECK_FALSE(parse_test_summary("TOTAL 120 12 90%\n"));
}
