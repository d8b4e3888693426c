// Text checks applied to every string that may reach storage, and the one way text that came
// from outside (stored text, a plug-in's output, a value echoed in an error) is made harmless to
// show.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/json.h"

namespace ct {

/// Number of Unicode code points in valid UTF-8 text (lengths in the spec are in characters).
std::size_t utf8_length(std::string_view text);
/// Decodes the UTF-8 sequence at `i` and moves `i` past it. A byte that starts no valid sequence
/// (a stray continuation, a cut sequence, an overlong form, a surrogate, beyond U+10FFFF) decodes
/// as itself (bytes 0x80–0xFF as U+0080–U+00FF), one byte long; `valid` (when given) says which
/// it was.
char32_t next_code_point(std::string_view text, std::size_t& i, bool* valid = nullptr);

/// The characters stored text may not hold, because they drive or disguise what a terminal or an
/// editor shows rather than being shown: C0 controls other than tab (line feed, and carriage
/// return right before one, only where `allow_newlines`), DEL, C1 controls (U+0080–U+009F: U+009B
/// is the 8-bit CSI), and the bidirectional embeddings, overrides and isolates U+202A–U+202E and
/// U+2066–U+2069 (text that reads differently from what it is: "Trojan Source"). A lone carriage
/// return is refused even in multi-line text: it makes a terminal overwrite the line. The
/// bidirectional marks U+200E, U+200F and U+061C stay allowed: they order right-to-left text and
/// override nothing. The first such character, or nullopt. `text` is valid UTF-8.
std::optional<char32_t> first_control_character(std::string_view text, bool allow_newlines);
/// first_control_character() found one.
bool has_control_characters(std::string_view text, bool allow_newlines);
/// "U+202E" (four hex digits at least).
std::string code_point_name(char32_t code_point);

/// Text that cannot drive a terminal, for stored text shown to people and for what a program we
/// ran (a plug-in) hands back: the characters first_control_character() refuses, line feed and
/// tab excepted, become caret notation (C0: "\x1b[31m" → "^[[31m", DEL → "^?") or <U+…> notation
/// (C1 controls and bidirectional overrides); a byte that is not UTF-8 becomes <U+00XX> (0x80–0x9F)
/// or U+FFFD, so the result is always valid UTF-8.
std::string terminal_safe(std::string_view text);
/// terminal_safe() applied to every string (and object key) inside `value`.
void make_terminal_safe(json::Value& value);

/// How many characters of a value a caller sent an error quotes back.
inline constexpr std::size_t kEchoChars = 200;
/// A value the caller sent, as an error message quotes it: in single quotes, made terminal_safe(),
/// and cut to kEchoChars characters with the whole length said ("'aaa…' (150000 characters)"), so
/// a 500 KB value is never sent back whole.
std::string echo(std::string_view text);
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
/// Whether `text` is a template variable of an agent host's, which the host fills in later:
/// `$1`, `$ARGUMENTS`, `${name}`, `{{name}}` (opencode asks for a prompt with `$1`, `$2` … as its
/// arguments and puts the user's words in their place).
bool is_template_variable(std::string_view text);

/// An estimate of the o200k tokens of `text`, calibrated on the rendered help levels (the exact
/// counts are measured by the `tokens` tests with a real tokenizer).
std::size_t estimate_tokens(std::string_view text);
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
