#include "core/log.h"

#include <atomic>
#include <cstdio>
#include <mutex>
#include <string>

#include "core/clock.h"

namespace ct::log {
namespace {
std::atomic<Level> g_level{Level::Warn};
std::mutex g_mutex;
}  // namespace

void set_level(Level level) { g_level = level; }
Level level() { return g_level; }

bool parse_level(std::string_view text, Level& out) {
  if (text == "error") out = Level::Error;
  else if (text == "warn") out = Level::Warn;
  else if (text == "info") out = Level::Info;
  else if (text == "debug") out = Level::Debug;
  else return false;
  return true;
}

void write(Level level, std::string_view message) {
  if (level > g_level.load()) return;
  static constexpr const char* kNames[] = {"error", "warn", "info", "debug"};
  SystemClock clock;
  std::string line = format_iso8601(clock.now()) + " " + kNames[static_cast<int>(level)] + " " +
                     std::string(message) + "\n";
  std::lock_guard lock(g_mutex);
  std::fwrite(line.data(), 1, line.size(), stderr);
  std::fflush(stderr);
}

}  // namespace ct::log
