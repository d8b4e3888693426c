// What the end-to-end scenarios share: checks that count failures and go on (a scenario reports
// every broken step, not the first), and the `--ct PATH` argument.
#pragma once

#include <cstdio>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

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

/// The PostgreSQL URL named by `--postgresql URL`; "" (SQLite) without it.
inline std::string postgresql_argument(int argc, char** argv) {
  for (int i = 1; i + 1 < argc; ++i)
    if (std::string(argv[i]) == "--postgresql") return argv[i + 1];
  return "";
}

/// The environment `env` without the variables named `names`.
inline std::vector<std::string> without(std::vector<std::string> env, std::initializer_list<std::string_view> names) {
  std::erase_if(env, [&](const std::string& entry) {
    for (auto name : names)
      if (entry.starts_with(std::string(name) + "=")) return true;
    return false;
  });
  return env;
}

}  // namespace ct::e2e
