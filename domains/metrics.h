// Per-operation call metrics of this process (system.metrics): calls, errors and the duration
// distribution since the process started. One table per process, shared by every Router (ct
// serve runs many worker threads), thread-safe, and bounded: each operation keeps a fixed
// log-scale histogram instead of its samples, so memory does not grow with the number of calls.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace ct {

/// A fixed-size histogram of durations: 8 buckets per doubling from 1 µs (relative error of a
/// reported percentile under 5%), everything above ~2 hours in the last bucket.
class DurationHistogram {
 public:
  static constexpr std::size_t kBuckets = 8 * 33;

  void add(double ms);
  std::int64_t count() const { return count_; }
  /// The nearest-rank percentile (0 < p ≤ 1) in ms, clamped to the smallest and largest sample.
  double percentile(double p) const;
  double max_ms() const { return max_ms_; }

 private:
  std::array<std::uint32_t, kBuckets> buckets_{};
  std::int64_t count_ = 0;
  double min_ms_ = 0;
  double max_ms_ = 0;
};

struct OperationMetrics {
  std::string operation;   // "tasks.add"
  std::int64_t calls = 0;
  std::int64_t errors = 0; // replies with success false
  double p50_ms = 0;
  double p95_ms = 0;
  double max_ms = 0;
};

class CallMetrics {
 public:
  /// The process-wide table the router records into.
  static CallMetrics& global();

  void record(std::string_view operation, double ms, bool error);
  /// Every operation called so far, by name.
  std::vector<OperationMetrics> snapshot() const;
  void reset();

 private:
  struct Entry {
    std::int64_t errors = 0;
    DurationHistogram durations;
  };
  mutable std::mutex mutex_;
  std::map<std::string, Entry, std::less<>> entries_;
};

}  // namespace ct
