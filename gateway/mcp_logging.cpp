#include "gateway/mcp_logging.h"

#include <algorithm>
#include <array>
#include <cstdio>

#include "core/text.h"

namespace ct::mcp {
namespace {

constexpr std::array<std::string_view, 8> kLevelNames = {"debug",   "info",  "notice", "warning",
                                                         "error",   "critical", "alert", "emergency"};
constexpr std::size_t kMaxWarnings = 5;       // of one reply
constexpr std::size_t kMaxWarningChars = 300;
constexpr std::size_t kMaxMessageChars = 600;

std::string seconds(double ms) {
  char text[32];
  std::snprintf(text, sizeof text, ms >= 10'000 ? "%.0f s" : "%.1f s", ms / 1000.0);
  return text;
}

LogEntry entry(LogLevel level, std::string message, std::string_view operation) {
  json::Value data = json::Value::object();
  data.set("message", std::move(message));
  data.set("operation", std::string(operation));
  return {level, std::move(data)};
}

/// A failure that is not what the caller asked wrong: the store, a file, a program, the server.
bool servers_failure(ErrorCode code) {
  switch (code) {
    case ErrorCode::Internal:
    case ErrorCode::FileError:
    case ErrorCode::StoreUnavailable:
    case ErrorCode::EngineFailed:
    case ErrorCode::Timeout:
    case ErrorCode::General: return true;
    default: return false;
  }
}

}  // namespace

std::string_view to_string(LogLevel level) { return kLevelNames[static_cast<std::size_t>(level)]; }

std::optional<LogLevel> parse_log_level(std::string_view text) {
  for (std::size_t i = 0; i < kLevelNames.size(); ++i)
    if (kLevelNames[i] == text) return static_cast<LogLevel>(i);
  return std::nullopt;
}

std::string log_level_names() {
  std::string out;
  for (auto name : kLevelNames) out += (out.empty() ? "" : ", ") + std::string(name);
  return out;
}

std::vector<LogEntry> call_log(std::string_view operation, const Envelope& envelope, const AdviceWriter& writer,
                               const LogThresholds& thresholds) {
  std::vector<LogEntry> out;
  if (!envelope.warnings.empty()) {
    LogEntry warned = entry(LogLevel::Warning,
                            std::string(operation) + " answered with " + std::to_string(envelope.warnings.size()) +
                                (envelope.warnings.size() == 1 ? " warning" : " warnings"),
                            operation);
    json::Value warnings = json::Value::array();
    for (std::size_t i = 0; i < envelope.warnings.size() && i < kMaxWarnings; ++i) {
      const json::Value written = writer.write(envelope.warnings[i]);
      warnings.push_back(clip(written.is_string() ? written.as_string() : written.dump(), kMaxWarningChars));
    }
    warned.data.set("warnings", std::move(warnings));
    out.push_back(std::move(warned));
  }
  const Envelope::Timing& timing = envelope.timing;
  const bool gave_up = envelope.error && envelope.error->code == ErrorCode::LockTimeout;
  if (gave_up) {
    out.push_back(entry(LogLevel::Warning,
                        std::string(operation) + " gave up after waiting " + seconds(timing.lock_wait_ms) +
                            " for the store's write lock (another writer held it); the agent may retry",
                        operation));
  } else if (timing.lock_wait_ms >= thresholds.lock_wait_ms) {
    out.push_back(entry(LogLevel::Notice,
                        std::string(operation) + " waited " + seconds(timing.lock_wait_ms) +
                            " for the store's write lock (another writer held it)",
                        operation));
  }
  if (timing.total_ms >= thresholds.slow_call_ms) {
    LogEntry slow = entry(LogLevel::Notice, std::string(operation) + " took " + seconds(timing.total_ms), operation);
    slow.data.set("durationMs", static_cast<std::int64_t>(timing.total_ms));
    out.push_back(std::move(slow));
  }
  if (envelope.error && servers_failure(envelope.error->code)) {
    LogEntry failed = entry(LogLevel::Error, std::string(operation) + " failed: " + envelope.error->message, operation);
    failed.data.set("code", std::string(error_info(envelope.error->code).name));
    out.push_back(std::move(failed));
  }
  return out;
}

std::string log_notification(const LogEntry& entry) {
  json::Value data = entry.data;
  if (data.dump().size() > kMaxLogDataBytes) {
    // Too long whole: its words, cut, and nothing else.
    json::Value cut = json::Value::object();
    cut.set("message", clip(data["message"].string_or_empty(), kMaxMessageChars));
    cut.set("truncated", true);
    data = std::move(cut);
  }
  json::Value params = json::Value::object();
  params.set("level", std::string(to_string(entry.level)));
  params.set("logger", "cleo");
  params.set("data", std::move(data));
  json::Value message = json::Value::object();
  message.set("jsonrpc", "2.0");
  message.set("method", "notifications/message");
  message.set("params", std::move(params));
  return message.dump();
}

void LogGate::set_level(LogLevel level) {
  std::lock_guard lock(mutex_);
  level_ = level;
}

std::optional<LogLevel> LogGate::level() const {
  std::lock_guard lock(mutex_);
  return level_;
}

std::vector<std::string> LogGate::admit(const std::vector<LogEntry>& entries, Clock::time_point now) {
  std::vector<std::string> out;
  std::lock_guard lock(mutex_);
  if (!level_) return out;
  if (refilled_) {
    const double elapsed = std::chrono::duration<double>(now - *refilled_).count();
    tokens_ = std::min(static_cast<double>(kLogBurst), tokens_ + std::max(0.0, elapsed) * kLogPerSecond);
  }
  refilled_ = now;
  for (const auto& logged : entries) {
    if (logged.level < *level_) continue;
    // What was dropped is said first, when the budget has room for both.
    if (dropped_ > 0 && tokens_ >= 2 && LogLevel::Notice >= *level_) {
      json::Value data = json::Value::object();
      data.set("message", std::to_string(dropped_) + " log messages were dropped (at most " +
                              std::to_string(kLogBurst) + " at once, then " +
                              std::to_string(static_cast<int>(kLogPerSecond)) + " a second)");
      data.set("dropped", static_cast<std::int64_t>(dropped_));
      out.push_back(log_notification({LogLevel::Notice, std::move(data)}));
      tokens_ -= 1;
      dropped_ = 0;
    }
    if (tokens_ < 1) {
      if (LogLevel::Notice >= *level_) ++dropped_;  // said later, at a level the client takes
      continue;
    }
    tokens_ -= 1;
    out.push_back(log_notification(logged));
  }
  return out;
}

}  // namespace ct::mcp
