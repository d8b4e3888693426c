// Text checks applied to every string that may reach storage.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace ct {

/// Number of Unicode code points in valid UTF-8 text (lengths in the spec are in characters).
std::size_t utf8_length(std::string_view text);
/// True when the text holds a C0 control character other than tab, newline and carriage return,
/// or DEL. `allow_newlines` false also rejects \n and \r (titles are one line).
bool has_control_characters(std::string_view text, bool allow_newlines);
/// Trims ASCII whitespace from both ends.
std::string_view trim(std::string_view text);
std::string to_lower_ascii(std::string_view text);
/// The items with `separator` between them.
std::string join(const std::vector<std::string>& items, std::string_view separator);
/// The text's lines without their line breaks (\n or \r\n); no empty last line for a final break.
std::vector<std::string_view> split_lines(std::string_view text);
/// "a, b,,c" → {"a", "b", "c"}: the pieces between separators, trimmed, empty ones left out.
std::vector<std::string> split_list(std::string_view text, char separator = ',');
/// At most `max_chars` code points of `text`, the last one "…" when it was cut.
std::string clip(std::string_view text, std::size_t max_chars);
/// Random lowercase hex, 2 characters per byte, from the operating system's CSPRNG
/// (deterministic counter in test mode).
std::string random_hex(std::size_t bytes);

/// The hash of a map keyed by std::string that string_views find without a copy (with
/// std::equal_to<>): statement caches keyed by their SQL text.
struct StringHash {
  using is_transparent = void;
  std::size_t operator()(std::string_view text) const noexcept { return std::hash<std::string_view>{}(text); }
};

}  // namespace ct
