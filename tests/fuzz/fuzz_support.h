// Shared by the libFuzzer targets in tests/fuzz: how a broken invariant is reported, JSON
// comparison by value, a scratch directory. Test-only; links nothing beyond ct_core.
#pragma once

#include <stdlib.h>
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <string_view>

#include "core/json.h"

namespace ct::fuzz {

/// A broken invariant: says which, shows the input (escaped, cut to 2000 bytes) and aborts, so
/// libFuzzer keeps the input as a crash artifact.
[[noreturn]] inline void finding(std::string_view invariant, std::string_view input, std::string_view detail = {}) {
  std::string shown;
  for (unsigned char c : input.substr(0, 2000)) {
    if (c >= 0x20 && c < 0x7f && c != '\\') {
      shown += static_cast<char>(c);
    } else {
      char escaped[8];
      std::snprintf(escaped, sizeof escaped, "\\x%02x", c);
      shown += escaped;
    }
  }
  std::fprintf(stderr, "\n==== FUZZ FINDING: %.*s\ninput (%zu bytes): %s\n", static_cast<int>(invariant.size()),
               invariant.data(), input.size(), shown.c_str());
  if (!detail.empty()) std::fprintf(stderr, "detail: %.*s\n", static_cast<int>(detail.size()), detail.data());
  std::fflush(stderr);
  std::abort();
}

/// A known finding: reported, its reproducer in regressions/<target>/, the product not fixed yet.
/// By default it is a finding like any other. With CT_FUZZ_SKIP_KNOWN=1 (scripts/fuzz.sh
/// --skip-known) an input that hits it is counted and skipped, so a run can look past it for new
/// findings; the counts are printed at exit ("known finding <id>: skipped N inputs").
inline bool skip_known(const char* id) {
  static const bool skipping = [] {
    const char* flag = std::getenv("CT_FUZZ_SKIP_KNOWN");
    return flag && std::string_view(flag) == "1";
  }();
  if (!skipping) return false;
  struct Count {
    const char* id;
    std::size_t hits;
  };
  static Count counts[16];
  static bool registered = false;
  if (!registered) {
    registered = true;
    std::atexit([] {
      for (const auto& count : counts)
        if (count.id) std::fprintf(stderr, "known finding %s: skipped %zu inputs\n", count.id, count.hits);
    });
  }
  for (auto& count : counts) {
    if (!count.id) count.id = id;
    if (std::string_view(count.id) == id) {
      ++count.hits;
      break;
    }
  }
  return true;
}

/// JSON equality as JSON means it: numbers compare by exact value whatever their C++ type (the
/// text "1.0" parses to a double, its dump "1" to an integer); everything else as Value's ==.
inline bool same_json(const json::Value& a, const json::Value& b) {
  if (a.is_number() && b.is_number()) {
    if (a.is_int() && b.is_int()) return a.as_int() == b.as_int();
    if (!a.is_int() && !b.is_int()) return a.as_double() == b.as_double();
    std::int64_t i = a.is_int() ? a.as_int() : b.as_int();
    double d = a.is_int() ? b.as_double() : a.as_double();
    // Exact: the double must be an integer inside int64's range and equal to it.
    if (!std::isfinite(d) || d != std::trunc(d) || d < -9223372036854775808.0 || d >= 9223372036854775808.0)
      return false;
    return static_cast<std::int64_t>(d) == i;
  }
  if (a.type() != b.type()) return false;
  if (a.is_array()) {
    if (a.size() != b.size()) return false;
    for (std::size_t k = 0; k < a.size(); ++k)
      if (!same_json(a.as_array()[k], b.as_array()[k])) return false;
    return true;
  }
  if (a.is_object()) {
    const auto& x = a.as_object();
    const auto& y = b.as_object();
    if (x.size() != y.size()) return false;
    for (std::size_t k = 0; k < x.size(); ++k)
      if (x[k].first != y[k].first || !same_json(x[k].second, y[k].second)) return false;
    return true;
  }
  return a == b;
}

/// A fresh directory for the run: under $CT_FUZZ_SCRATCH (scripts/fuzz.sh sets it to a dir it
/// removes afterwards, since a crash skips every clean-up), else /dev/shm when it can be written
/// (SQLite's fsyncs cost nothing there), else $TMPDIR or /tmp.
inline std::filesystem::path scratch_dir(std::string_view target) {
  std::filesystem::path base = "/tmp";
  if (const char* tmp = std::getenv("TMPDIR"); tmp && *tmp) base = tmp;
  if (::access("/dev/shm", W_OK) == 0) base = "/dev/shm";
  if (const char* scratch = std::getenv("CT_FUZZ_SCRATCH"); scratch && *scratch) base = scratch;
  std::string pattern = (base / ("ct-fuzz-" + std::string(target) + "-XXXXXX")).string();
  if (!::mkdtemp(pattern.data())) {
    std::perror("mkdtemp");
    std::abort();
  }
  return pattern;
}

/// The input as text.
inline std::string_view as_text(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

}  // namespace ct::fuzz
