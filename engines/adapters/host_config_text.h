// What the editors of host config files share (engines/adapters/host_config.h is the interface):
// errors that name a line, line endings kept, a byte order mark kept. host_config_json.cpp edits
// JSON and JSONC, host_config_toml.cpp TOML, host_config.cpp the file on disk and its diff.
#pragma once

#include <algorithm>
#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

#include "engines/adapters/host_config.h"

namespace ct::host_config::detail {

inline std::size_t line_of(std::string_view text, std::size_t pos) {
  pos = std::min(pos, text.size());
  return 1 + static_cast<std::size_t>(std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(pos), '\n'));
}

/// E_VALIDATION naming the file and line: the caller writes nothing.
inline Error invalid(std::string_view label, std::size_t line, std::string problem) {
  Error error(ErrorCode::Validation, std::string(label) + ":" + std::to_string(line) + ": " + std::move(problem));
  error.fix = "correct " + std::string(label) + " (or move it away), then run again; nothing was written";
  return std::move(error).with_detail("file", std::string(label)).with_detail("line", static_cast<std::int64_t>(line));
}

/// With CRLF files, the lines we add end the same way.
inline std::string with_eol(std::string text, bool crlf) {
  if (!crlf) return text;
  std::string out;
  for (char c : text) {
    if (c == '\n') out += '\r';
    out += c;
  }
  return out;
}

inline constexpr std::string_view kBom = "\xEF\xBB\xBF";

/// `edit` of the text after a UTF-8 byte order mark, which stays first: not JSON or TOML, but
/// editors write it and hosts accept it, so it is kept, not parsed.
inline Result<Edit> keeping_bom(std::string_view text, const std::function<Result<Edit>(std::string_view)>& edit) {
  const bool bom = text.starts_with(kBom);
  CT_TRY_ASSIGN(Edit done, edit(bom ? text.substr(kBom.size()) : text));
  if (bom) done.text.insert(0, kBom);
  return done;
}

}  // namespace ct::host_config::detail
