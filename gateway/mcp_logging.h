// MCP's logging utility: what the server tells the people watching a client — a host shows it in
// its server log — apart from the replies its agent reads. Off until the client asks for a level:
// the handshake revisions' logging/setLevel (for the connection), 2026-07-28's per-request
// `_meta["io.modelcontextprotocol/logLevel"]` (for that request). What a tools/call tells (call_log):
// the warnings of its reply, a call that was slow, a wait for the store's write lock, a failure of
// the server's own (never the caller's mistakes: its agent has those in the reply). Each message is
// a `notifications/message` sent before the call's reply (stdio: the lines before it; HTTP: the
// events before it on the response's stream), at most kLogBurst at once and kLogPerSecond after,
// each at most kMaxLogDataBytes.
#pragma once

#include <chrono>
#include <cstddef>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/json.h"
#include "domains/router.h"

namespace ct::mcp {

/// The levels of RFC 5424 that MCP names, least severe first.
enum class LogLevel { Debug, Info, Notice, Warning, Error, Critical, Alert, Emergency };
std::string_view to_string(LogLevel level);
/// "debug" … "emergency"; nullopt for anything else.
std::optional<LogLevel> parse_log_level(std::string_view text);
/// "debug, info, notice, warning, error, critical, alert, emergency": for error messages.
std::string log_level_names();

/// One message to log: its level, and its data (an object whose `message` says it in words).
struct LogEntry {
  LogLevel level = LogLevel::Info;
  json::Value data;
};

/// When a call is worth a message: how long it took, how long it waited for the write lock.
struct LogThresholds {
  double slow_call_ms = 1000;
  double lock_wait_ms = 200;
};

/// What a finished tools/call of `operation` (domain.name) tells the people watching: each warning
/// of its reply (warning), a lock wait past the threshold (notice; a call that gave up waiting,
/// E_LOCK_TIMEOUT, is a warning), a slow call (notice), a failure that is not the caller's — the
/// store, a file, the server itself (error). Nothing for a call that went as asked.
/// Warnings are written as the reply writes them (`writer`: the MCP tools' syntax).
std::vector<LogEntry> call_log(std::string_view operation, const Envelope& envelope, const AdviceWriter& writer,
                               const LogThresholds& thresholds = {});

inline constexpr std::size_t kLogBurst = 10;          // messages at once
inline constexpr double kLogPerSecond = 5;            // then this many a second
inline constexpr std::size_t kMaxLogDataBytes = 2048;  // a message's data, as JSON

/// Where a client's log goes: the level it asked for (none: nothing is sent) and the budget that
/// bounds how much is sent. A connection of the handshake revisions keeps one; a stateless request
/// has its own. Safe to share between threads.
class LogGate {
 public:
  using Clock = std::chrono::steady_clock;
  void set_level(LogLevel level);
  std::optional<LogLevel> level() const;
  /// The notifications/message (compact JSON, one per entry) to send now for `entries`: those at
  /// or above the level, while the budget lasts (refilled at kLogPerSecond up to kLogBurst), each
  /// cut to kMaxLogDataBytes. Messages the budget drops are counted, and the next message sent
  /// (budget allowing) is preceded by one saying how many were dropped.
  std::vector<std::string> admit(const std::vector<LogEntry>& entries, Clock::time_point now = Clock::now());

 private:
  mutable std::mutex mutex_;
  std::optional<LogLevel> level_;
  double tokens_ = static_cast<double>(kLogBurst);
  std::optional<Clock::time_point> refilled_;
  std::size_t dropped_ = 0;
};

/// The notifications/message of `entry` (compact JSON), its data cut to kMaxLogDataBytes.
std::string log_notification(const LogEntry& entry);

}  // namespace ct::mcp
