// Log lines to stderr (stdout belongs to the protocol in `ct mcp`). One process-wide level.
#pragma once

#include <string_view>

namespace ct::log {

enum class Level { Error = 0, Warn = 1, Info = 2, Debug = 3 };

void set_level(Level level);
Level level();
/// "error" | "warn" | "info" | "debug"; false when unknown.
bool parse_level(std::string_view text, Level& out);
void write(Level level, std::string_view message);

inline void error(std::string_view m) { write(Level::Error, m); }
inline void warn(std::string_view m) { write(Level::Warn, m); }
inline void info(std::string_view m) { write(Level::Info, m); }
inline void debug(std::string_view m) { write(Level::Debug, m); }

}  // namespace ct::log
