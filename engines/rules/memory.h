// The rules of project memory (the memory domain, engines/store/memory_store.h keeps the rows):
// what an entry may hold, its content hash, the keys that find it, when an entry has gone stale,
// which entries nearly repeat another, and the Markdown a team reviews. How a find ranks entries
// is memory_find.h's.
//
// Keys (engines/store/memory_store.h: memory_keys) are byte strings with a one-letter prefix:
//   w:<word>   a word of the title or body (lowercase ASCII letters and digits; other bytes kept)
//   f:<path>   a scope file, a folder ("src/store/") or a glob's literal folder ("src/" of
//              "src/**/*.cpp", "" of "*.md"); a file looks up its own path and each of its folders
//   s:<symbol> a symbol scope's name as written and its last part ("s:RetryPolicy::backoff",
//              "s:backoff" of "src/retry.cpp#RetryPolicy::backoff", which also keys f:src/retry.cpp)
//   l:<label>  t:<task>  e:<epic>
//
// Staleness is read, never stored: an entry scoped to files keeps each file's SHA-256 (with its
// size and modification time) from when it was recorded or verified; a file that is gone, or whose
// content differs, makes the entry stale. A symbol, folder or glob scope is anchored the same way
// to the text of the symbol or to the files it covers (memory_symbols.h). A file whose size and time are unchanged is not hashed
// again, and a changed one is hashed once per change by the process (FileHasher). A task the
// entry came from or is scoped to that is deleted, or was done and is open again, makes it stale.
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/clock.h"
#include "core/error.h"
#include "core/file_stamp.h"
#include "core/json.h"
#include "engines/rules/file_hashes.h"
#include "engines/rules/memory_symbols.h"
#include "engines/store/memory_store.h"
#include "engines/store/task.h"

namespace ct::memory {

inline constexpr std::array<std::string_view, 6> kKinds = {"decision", "convention", "learning",
                                                           "risk",     "pattern",    "observation"};
inline constexpr std::array<std::string_view, 4> kStatuses = {"active", "proposed", "superseded", "retracted"};
inline constexpr std::string_view kIdPattern = "^M[0-9]{1,9}$";

/// The content hash of an entry: kind, title, body and scope (16 hex digits). Equal hashes mean
/// the same entry as an agent reads it; knownHashes compares against it.
std::string content_hash(const MemoryEntry& entry);

/// The words of a text, lowercased, each once, in order of first appearance; words of one letter
/// and the commonest English words are left out.
std::vector<std::string> words(std::string_view text);

/// Every key of an entry (see above).
std::vector<std::string> keys_of(const MemoryEntry& entry);

/// A scope path as stored: relative to the project, '/'-separated, no "." or ".." parts, a folder
/// ending in '/'. E_VALIDATION for an absolute path, one leaving the project, or an empty one.
Result<std::string> normal_scope_path(std::string_view path);
/// The f: keys a file is found by: its path, then each of its folders up to "" (the root); a
/// symbol scope's file's, and the s: keys of its symbol (its name and last part).
std::vector<std::string> file_lookup_keys(std::string_view scope);
/// Whether a scope path (a file, a folder, a glob with *, ** and ?) covers `file`; 2 for the file
/// itself, 1 for a folder or glob covering it, 0 for no match.
int scope_match(std::string_view scope, std::string_view file);
/// Whether a scope path is a glob.
bool is_glob(std::string_view scope);
/// The literal folder a glob starts with ("src/" of "src/**/*.cpp").
std::string glob_folder(std::string_view glob);

/// The anchors of an entry now: each scope path that names a regular file of the project, a
/// symbol in one, a folder or a glob (not the whole project), and each task it came from or is scoped to, with the status `tasks` gives
/// it. Paths that cannot be anchored are returned in `skipped` with why (a folder named without
/// its slash is skipped in silence).
struct Skipped {
  std::string file;
  Error why;
};
std::vector<MemoryAnchor> anchors_of(const MemoryEntry& entry, const std::filesystem::path& root,
                                     const std::map<std::string, TaskStatus>& tasks, FileHashes& hasher,
                                     std::vector<Skipped>* skipped);

/// Why an entry reads as stale: which file or task, what happened, since when.
struct Staleness {
  std::string file;
  std::string task;
  std::string what;  // "changed" | "missing" | "unreadable" | "reopened" | "deleted"
  TimeMs since = 0;
};
/// The first anchor that no longer holds; `tasks` has the status and change time of the anchored
/// tasks that exist (a task missing from it was deleted).
std::optional<Staleness> staleness(const MemoryEntry& entry, const std::filesystem::path& root,
                                   const std::map<std::string, std::pair<TaskStatus, TimeMs>>& tasks,
                                   ScopeHasher& hasher);

/// How much two entries say the same: the Jaccard overlap of their title and body words (0..1).
double similarity(const MemoryEntry& a, const MemoryEntry& b);
inline constexpr double kNearDuplicate = 0.6;

/// Memory as a reviewable Markdown file: grouped by kind, ids kept, one entry per `### Mnnn title`
/// with its fields as `- key: value` lines and its body below.
std::string to_markdown(const std::vector<MemoryEntry>& entries);
/// The entries of such a file (kind, title, body, scope, status, confidence, verification, source,
/// supersession, reason); E_VALIDATION naming the line of the first thing it cannot read.
Result<std::vector<MemoryEntry>> from_markdown(std::string_view text);

/// An entry's body as it is kept: line breaks as LF (a CRLF or a lone CR is one), no blank edges —
/// what the Markdown of to_markdown() holds and reads back the same.
std::string normalized_body(std::string_view text);

}  // namespace ct::memory
