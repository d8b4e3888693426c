// Editing an agent host's MCP configuration file in place: one server entry is set, and every
// other byte of the file stays as it was — other entries, key order, indentation, comments
// (JSONC: // and /* */, trailing commas; TOML: # comments). The edits are textual on purpose:
// parsing and re-dumping would drop comments and reorder keys people arranged by hand.
//
// A file that cannot be read as its format is refused with E_VALIDATION naming the line; the
// caller then writes nothing. A UTF-8 byte order mark and CRLF line endings are kept; numbers
// beyond a double's range (1E400) are kept as written.
//
// edit_file() applies such an edit to the file on disk: under a lock, with a backup that keeps
// the original's mode and owner, through the file a symlink leads to, never over a read-only file.
#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/clock.h"
#include "core/error.h"
#include "core/json.h"

namespace ct::host_config {

struct Edit {
  std::string text;      // the whole new file
  bool changed = false;  // false: the entry was already as asked (text == the input)
};

/// JSON or JSONC: sets member `name` of the object under the top-level key `servers_key` to
/// `entry` (the key and the object are added when missing; an empty text becomes a new file).
/// An existing entry is merged, as set_toml_table does: the members of `entry` are set, the
/// members named in `owned` that `entry` lacks are removed (switching transport drops `url` or
/// `command`/`args`), and every other member (the user's `env`, `cwd`, `timeout`, `disabled` …)
/// stays as written; an entry already holding those values is left alone. `label` names the file
/// in errors ("…/.mcp.json:4: …").
Result<Edit> set_json_server(std::string_view text, std::string_view servers_key, std::string_view name,
                             const json::Value& entry, std::span<const std::string_view> owned,
                             std::string_view label);

/// JSON or JSONC: makes the array `hooks.<event>` hold `entry` once: the items `is_ours` says
/// CLEO wrote before are replaced by it (in place of the first), every other item (the user's own
/// hooks) stays. The array is written again in the file's indentation; everything outside it
/// stays as written. `top` holds top-level members the file must have (Cursor's "version": 1),
/// added when missing and never changed. `hooks` not an object, or `<event>` not an array, is
/// E_VALIDATION naming the line.
Result<Edit> set_json_hook(std::string_view text, std::string_view event, const json::Value& entry,
                           const std::function<bool(const json::Value&)>& is_ours, const json::Value& top,
                           std::string_view label);

/// A JSON or JSONC file's document as a value (comments and trailing commas dropped), null for a
/// file holding only whitespace and comments; E_VALIDATION naming the line for one that is not
/// JSON(C). A UTF-8 byte order mark is skipped.
Result<json::Value> read_json(std::string_view text, std::string_view label);

/// One `key = value` line of a TOML table; `value` is TOML text (`"ct"`, `["mcp"]`).
using TomlKey = std::pair<std::string, std::string>;

/// TOML: makes table `[<table>]` (dotted, e.g. "mcp_servers.cleo") hold `keys`, and removes the
/// keys of `owned` that are not in `keys` (switching transport drops `url` or `command`/`args`).
/// Other keys of the table, other tables and comments stay. A key equal to what is asked (ignoring
/// whitespace and comments) is not rewritten. The table defined another way (inline, dotted keys
/// from a parent table, or a parent set as a value: `mcp_servers = { … }`, `[[mcp_servers]]`) is
/// E_VALIDATION: editing it by hand is safer than guessing.
Result<Edit> set_toml_table(std::string_view text, std::string_view table, const std::vector<TomlKey>& keys,
                            std::span<const std::string_view> owned, std::string_view label);

/// The TOML text of a string (a basic string with JSON's escapes, which TOML shares).
std::string toml_string(std::string_view text);

/// A unified diff of two texts (one hunk around the changed lines, two lines of context), with
/// `---`/`+++` headers naming `label`, that patch(1) applies (a last line without a newline is
/// marked `\ No newline at end of file`). Empty when they are equal.
std::string line_diff(std::string_view before, std::string_view after, std::string_view label);

/// The new text of a file from its current one ("" when it does not exist yet).
using Editor = std::function<Result<Edit>(std::string_view text)>;

/// What edit_file() found and did.
struct FileEdit {
  std::filesystem::path file;  // the file edited: `path`, or the file its symlinks lead to
  bool existed = false;
  std::string before;  // its content before ("" when it did not exist)
  Edit edit;           // the new content, and whether it differs
  std::optional<std::filesystem::path> backup;  // where `before` was copied (an existing file changed)
};

/// Edits the file at `path` with `editor` and writes the result (unless `dry_run`), so that
/// nothing of the user's is lost, exposed or broken:
/// - a symlink is followed and the file it leads to edited (the link stays); a link to nothing or
///   a loop is E_FILE_ERROR; so is something other than a regular file;
/// - a read-only file is E_FILE_ERROR (reason "read-only"), on a dry run too; it is not replaced;
/// - the folder is locked (core FolderLock) from reading to writing, so concurrent edits of the
///   same file (threads, processes) each apply to the result of the one before; a program that
///   changes the file without the lock (the host itself) is caught by comparing the file with what
///   was read just before publishing, and the edit is redone from the new content;
/// - before an existing file changes, its content is copied to "<file>.bak-<UTC stamp>Z" (then
///   "-2", "-3" … when taken) with the original's mode and owner; then the new text is published
///   whole (core AtomicFile), keeping the mode and owner too.
/// The folder is created when missing. `label` names the file in messages.
Result<FileEdit> edit_file(const std::filesystem::path& path, std::string_view label, const Editor& editor,
                           bool dry_run, TimeMs now);

}  // namespace ct::host_config
