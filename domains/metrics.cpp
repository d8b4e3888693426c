#include "domains/metrics.h"

#include <algorithm>
#include <cmath>

namespace ct {
namespace {

constexpr double kPerDoubling = 8.0;

std::size_t bucket_of(double ms) {
  double us = ms * 1000.0;
  if (!(us >= 1.0)) return 0;  // also NaN
  auto index = static_cast<std::size_t>(std::log2(us) * kPerDoubling) + 1;
  return std::min(index, DurationHistogram::kBuckets - 1);
}

/// The geometric middle of a bucket, in ms.
double bucket_value(std::size_t index) {
  if (index == 0) return 0.0005;
  return std::exp2((static_cast<double>(index) - 0.5) / kPerDoubling) / 1000.0;
}

}  // namespace

void DurationHistogram::add(double ms) {
  if (!(ms >= 0)) ms = 0;
  ++buckets_[bucket_of(ms)];
  min_ms_ = count_ == 0 ? ms : std::min(min_ms_, ms);
  max_ms_ = count_ == 0 ? ms : std::max(max_ms_, ms);
  ++count_;
}

double DurationHistogram::percentile(double p) const {
  if (count_ == 0) return 0;
  auto rank = static_cast<std::int64_t>(std::ceil(p * static_cast<double>(count_)));
  rank = std::clamp<std::int64_t>(rank, 1, count_);
  std::int64_t seen = 0;
  for (std::size_t i = 0; i < kBuckets; ++i) {
    seen += buckets_[i];
    if (seen >= rank) return std::clamp(bucket_value(i), min_ms_, max_ms_);
  }
  return max_ms_;
}

CallMetrics& CallMetrics::global() {
  static CallMetrics instance;
  return instance;
}

void CallMetrics::record(std::string_view operation, double ms, bool error) {
  std::lock_guard lock(mutex_);
  auto it = entries_.find(operation);
  if (it == entries_.end()) it = entries_.emplace(std::string(operation), Entry{}).first;
  it->second.durations.add(ms);
  if (error) ++it->second.errors;
}

std::vector<OperationMetrics> CallMetrics::snapshot() const {
  std::lock_guard lock(mutex_);
  std::vector<OperationMetrics> out;
  out.reserve(entries_.size());
  for (const auto& [name, entry] : entries_) {
    out.push_back({name, entry.durations.count(), entry.errors, entry.durations.percentile(0.5),
                   entry.durations.percentile(0.95), entry.durations.max_ms()});
  }
  return out;
}

void CallMetrics::reset() {
  std::lock_guard lock(mutex_);
  entries_.clear();
}

}  // namespace ct
