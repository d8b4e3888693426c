// Editing an agent host's MCP configuration file in place: one server entry is set, and every
// other byte of the file stays as it was — other entries, key order, indentation, comments
// (JSONC: // and /* */, trailing commas; TOML: # comments). The edits are textual on purpose:
// parsing and re-dumping would drop comments and reorder keys people arranged by hand.
//
// A file that cannot be read as its format is refused with E_VALIDATION naming the line; the
// caller then writes nothing.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/error.h"
#include "core/json.h"

namespace ct::host_config {

struct Edit {
  std::string text;      // the whole new file
  bool changed = false;  // false: the entry was already as asked (text == the input)
};

/// JSON or JSONC: sets member `name` of the object under the top-level key `servers_key` to
/// `entry` (the key and the object are added when missing; an empty text becomes a new file).
/// An entry already equal to `entry` (as JSON values) is left alone. `label` names the file in
/// errors ("…/.mcp.json:4: …").
Result<Edit> set_json_server(std::string_view text, std::string_view servers_key, std::string_view name,
                             const json::Value& entry, std::string_view label);

/// One `key = value` line of a TOML table; `value` is TOML text (`"ct"`, `["mcp"]`).
using TomlKey = std::pair<std::string, std::string>;

/// TOML: makes table `[<table>]` (dotted, e.g. "mcp_servers.cleo") hold `keys`, and removes the
/// keys of `owned` that are not in `keys` (switching transport drops `url` or `command`/`args`).
/// Other keys of the table, other tables and comments stay. A key equal to what is asked (ignoring
/// whitespace and comments) is not rewritten. The table defined another way (inline, dotted keys
/// from a parent table) is E_VALIDATION: editing it by hand is safer than guessing.
Result<Edit> set_toml_table(std::string_view text, std::string_view table, const std::vector<TomlKey>& keys,
                            std::span<const std::string_view> owned, std::string_view label);

/// The TOML text of a string (a basic string with JSON's escapes, which TOML shares).
std::string toml_string(std::string_view text);

/// A unified diff of two texts (one hunk around the changed lines, two lines of context), with
/// `---`/`+++` headers naming `label`. Empty when they are equal.
std::string line_diff(std::string_view before, std::string_view after, std::string_view label);

}  // namespace ct::host_config
