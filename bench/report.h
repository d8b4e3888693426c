// Helpers shared by the benchmark programs: number parsing, timing, percentiles and the report's
// machine line.
#pragma once

#include <stdlib.h>
#include <sys/types.h>
#include <sys/utsname.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "core/text.h"

namespace ct::bench {

using Steady = std::chrono::steady_clock;
namespace fs = std::filesystem;

/// The command line of the in-process benchmarks of one store: --tasks N, --runs N, --postgresql URL
/// (the store on that server instead of SQLite), --keep DIR (the project kept there).
struct StoreOptions {
  std::int64_t tasks = 10000;
  int runs = 30;
  std::optional<std::string> postgresql;
  std::optional<fs::path> keep;
};

/// `defaults` with what argv says; nullopt (the usage printed to stderr) for anything else.
inline std::optional<StoreOptions> parse_store_options(int argc, char** argv, std::string_view program,
                                                       StoreOptions defaults) {
  StoreOptions options = std::move(defaults);
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    const char* value = i + 1 < argc ? argv[i + 1] : nullptr;
    try {
      if (arg == "--tasks" && value) options.tasks = std::stoll(value);
      else if (arg == "--runs" && value) options.runs = std::stoi(value);
      else if (arg == "--postgresql" && value) options.postgresql = value;
      else if (arg == "--keep" && value) options.keep = fs::path(value);
      else throw std::invalid_argument(std::string(arg));
      ++i;
    } catch (const std::exception&) {
      std::fprintf(stderr, "usage: %.*s [--tasks %lld] [--runs %d] [--postgresql URL] [--keep DIR]\n",
                   static_cast<int>(program.size()), program.data(), static_cast<long long>(defaults.tasks), defaults.runs);
      return std::nullopt;
    }
  }
  return options;
}

template <typename Number>
inline Number parse_number(std::string_view flag, std::string_view text) {
  Number value{};
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size())
    throw std::invalid_argument(std::string(flag) + ": not a number: '" + std::string(text) + "'");
  return value;
}

/// "1,4,16" → {1, 4, 16}: a flag's comma-separated numbers.
template <typename Number>
inline std::vector<Number> parse_numbers(std::string_view flag, std::string_view list) {
  std::vector<Number> out;
  while (!list.empty()) {
    auto comma = list.find(',');
    out.push_back(parse_number<Number>(flag, list.substr(0, comma)));
    list = comma == std::string_view::npos ? std::string_view() : list.substr(comma + 1);
  }
  return out;
}

inline double micros_since(Steady::time_point start) {
  return std::chrono::duration<double, std::micro>(Steady::now() - start).count();
}

/// Nearest-rank percentile `q` (0–1) of samples already sorted ascending; 0 when there are none.
inline double nearest_rank(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return 0;
  auto index = static_cast<std::size_t>(std::ceil(q * static_cast<double>(sorted.size())));
  return sorted[std::clamp<std::size_t>(index, 1, sorted.size()) - 1];
}

/// Nearest-rank percentile `q` of samples in any order.
inline double percentile(std::vector<double> samples, double q) {
  std::sort(samples.begin(), samples.end());
  return nearest_rank(samples, q);
}

inline double megabytes_of(const fs::path& dir) {
  std::error_code ec;
  std::uintmax_t total = 0;
  for (const auto& entry : fs::recursive_directory_iterator(dir, ec))
    if (entry.is_regular_file(ec)) total += entry.file_size(ec);
  return static_cast<double>(total) / (1024.0 * 1024.0);
}

inline std::string format_duration(double micros) {
  char buffer[32];
  if (micros < 1000.0) std::snprintf(buffer, sizeof buffer, "%.1f µs", micros);
  else if (micros < 1e6) std::snprintf(buffer, sizeof buffer, "%.2f ms", micros / 1000.0);
  else std::snprintf(buffer, sizeof buffer, "%.2f s", micros / 1e6);
  return buffer;
}

inline std::string format_fixed(double value, int decimals) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.*f", decimals, value);
  return buffer;
}

/// One timed call of a report: its samples and the target its median is held to.
struct TimedRow {
  std::string call;
  std::vector<double> ms;  // sorted
  std::size_t bytes = 0;   // the last reply's size
  double target_ms = 0;    // 0 = none
  bool sqlite_target = false;  // the issue sets it on SQLite (PostgreSQL's row is held to it only for reference)
};

/// The Markdown table of `rows` (`first_column` names what each row times): median, p95 and min
/// in ms, reply bytes, and the median against its target, met or MISSED.
inline void print_timed_rows(std::string_view first_column, const std::vector<TimedRow>& rows, bool on_postgresql) {
  std::printf("| %.*s | median ms | p95 ms | min ms | reply bytes | target (median) |\n|---|---:|---:|---:|---:|---|\n",
              static_cast<int>(first_column.size()), first_column.data());
  for (const auto& row : rows) {
    const double median = nearest_rank(row.ms, 0.5);
    std::string target = "—";
    if (row.target_ms > 0)
      target = "< " + format_fixed(row.target_ms, 0) + " ms" + (row.sqlite_target ? " on SQLite" : "") +
               (row.sqlite_target && on_postgresql ? " (for reference): " : ": ") +
               (median < row.target_ms ? "met" : "MISSED");
    std::printf("| %s | %.3f | %.3f | %.3f | %zu | %s |\n", row.call.c_str(), median, nearest_rank(row.ms, 0.95),
                row.ms.empty() ? 0.0 : row.ms.front(), row.bytes, target.c_str());
  }
}

inline std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) {
      auto colon = line.find(':');
      if (colon != std::string::npos) return std::string(trim(std::string_view(line).substr(colon + 1)));
    }
  }
  return "unknown";
}

inline std::string kernel() {
  utsname name{};
  if (uname(&name) != 0) return "unknown";
  return std::string(name.sysname) + " " + name.release + " " + name.machine;
}

/// The 1-minute load average: other work on the machine shows up in the numbers.
inline std::string load_average() {
  std::ifstream in("/proc/loadavg");
  std::string one;
  in >> one;
  return one.empty() ? "unknown" : one;
}

/// CPU time (ns) the process has used so far, over its live threads (/proc/<pid>/task/*/schedstat).
inline std::int64_t cpu_ns_of(pid_t pid) {
  std::int64_t total = 0;
  std::error_code ec;
  for (const auto& task : fs::directory_iterator("/proc/" + std::to_string(pid) + "/task", ec)) {
    std::ifstream in(task.path() / "schedstat");
    std::int64_t ns = 0;
    if (in >> ns) total += ns;
  }
  return total;
}

inline std::string command_line(int argc, char** argv) {
  std::string out;
  for (int i = 0; i < argc; ++i) {
    if (i > 0) out += ' ';
    out += argv[i];
  }
  return out;
}

/// Where a benchmark builds its stores: `keep` (absolute, created, kept afterwards), or a fresh
/// private directory under the system temp directory that is removed when the run ends, also
/// when it ends with an exception.
class WorkDir {
 public:
  WorkDir(const std::optional<fs::path>& keep, std::string_view prefix) {
    if (keep) {
      path_ = fs::absolute(*keep);
      fs::create_directories(path_);
      return;
    }
    std::string pattern = (fs::temp_directory_path() / (std::string(prefix) + "-XXXXXX")).string();
    if (mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("cannot create a directory in " + pattern);
    path_ = pattern;
    temporary_ = true;
  }
  ~WorkDir() {
    std::error_code ec;
    if (temporary_) fs::remove_all(path_, ec);
  }
  WorkDir(const WorkDir&) = delete;
  WorkDir& operator=(const WorkDir&) = delete;

  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
  bool temporary_ = false;
};

}  // namespace ct::bench
