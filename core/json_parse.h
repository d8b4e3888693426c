// JSON parsing (simdjson) into owned values, and UTF-8 validation for text that did not come
// through the parser (command-line arguments, files).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/error.h"
#include "core/json.h"

namespace ct::json {

/// Limits every parsed document obeys; beyond them parse() refuses the document (a client cannot
/// make the server build a structure deeper or wider than any operation needs).
inline constexpr int kMaxDepth = 64;
inline constexpr std::size_t kMaxMembers = 10'000;  // per object
/// outline() reads deeper documents than parse() accepts (so that a message nested too deep is
/// still answered with its id), up to this bound.
inline constexpr int kMaxOutlineDepth = 1024;

/// Parses one JSON document. Errors are E_INVALID_INPUT with the parser's reason; invalid
/// UTF-8 is rejected here, so nothing that passed through the parser can reach storage broken.
/// Objects are built in linear time; a repeated key keeps its first position and its last value.
Result<Value> parse(std::string_view text);

/// JSON Lines (beads' issues.jsonl, MANIFEST.jsonl): text of two or more lines that each hold one
/// JSON value (blank lines skipped), as an array of them; nullopt when it is anything else.
std::optional<Value> parse_lines(std::string_view text);

/// A syntax-only reading of one JSON text (RFC 8259), for text that parse() may refuse although
/// it is well-formed: integers beyond 64 bits, 1e999, a lone "\ud800" escape. It keeps raw tokens,
/// so a JSON-RPC id can be echoed exactly as it was sent.
struct Outline {
  bool well_formed = false;
  Type top = Type::Null;  // type of the top-level value (Double for any number)
  /// Top-level object: each member's key (escapes decoded) and the raw text of its value, in order.
  std::vector<std::pair<std::string, std::string_view>> members;
  /// Top-level array: the raw text of each element.
  std::vector<std::string_view> elements;

  /// The raw value text of the last member named `key` (parse() keeps the last value of a
  /// repeated key), or empty.
  std::string_view member(std::string_view key) const;
};
Outline outline(std::string_view text);

}  // namespace ct::json

namespace ct {
bool valid_utf8(std::string_view text);
}  // namespace ct
