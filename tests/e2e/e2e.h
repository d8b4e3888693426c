// What the end-to-end scenarios share: checks that count failures and go on (a scenario reports
// every broken step, not the first), and the `--ct PATH` argument.
#pragma once

#include <cstdio>
#include <string>

namespace ct::e2e {

inline int failures = 0;

/// Counts and prints a failed check; the scenario goes on.
inline void check(bool ok, const std::string& what) {
  if (ok) return;
  ++failures;
  std::fprintf(stderr, "FAILED: %s\n", what.c_str());
}

/// The `ct` binary named by `--ct PATH`; "" (after the usage line on stderr) when it is missing.
inline std::string ct_argument(int argc, char** argv, const char* program) {
  for (int i = 1; i + 1 < argc; ++i)
    if (std::string(argv[i]) == "--ct") return argv[i + 1];
  std::fprintf(stderr, "usage: %s --ct PATH\n", program);
  return "";
}

}  // namespace ct::e2e
