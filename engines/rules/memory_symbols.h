// Memory scopes finer and wider than one file (issue 54, seed 001): a symbol named in a file, and
// a folder or glob that goes stale when what it covers changes.
//
// A symbol scope is written `<file>#<symbol>`: `src/retry.cpp#RetryPolicy::backoff`. The symbol is
// a name as universal-ctags reports it, qualified by as much of its scope as the writer wants
// (`backoff`, `RetryPolicy::backoff`, `net::RetryPolicy::backoff`; Python's `A.m`): it names every
// definition in the file whose qualified name ends with it at a scope boundary (overloads
// together). Its anchor is the SHA-256 of the text of those definitions' lines (ctags' `line` to
// `end`), with the file's size and time: an edit elsewhere in the file leaves it fresh, a move
// within the file too (the text is the same), and an edit of its lines makes it stale.
//
// A folder (`src/net/`) or glob (`src/**/*.cpp`) is anchored to what it covers: the regular files
// under it (hidden folders and files left out, links not followed), as a digest of each one's path
// and SHA-256; a file added, removed or changed makes it stale. Its stamp is the count of those
// files and a digest of their paths, sizes and times: when the stamp is unchanged nothing is
// hashed, and a changed file is hashed once per change by the process's FileHasher. The walk
// itself is remembered per process with its folders' times: while none changed (a file added,
// removed or renamed changes its folder's), the files are only stat'ed, no folder read again.
//
// Symbols are read by running ctags (engines/adapters/subprocess.h: argv, no shell, a time limit,
// the user's ctags options ignored) and remembered per file version; without ctags a symbol
// scope cannot be anchored (E_CAPABILITY_UNAVAILABLE, said as a warning) and stays a scope that
// finds the entry.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"
#include "core/json.h"
#include "engines/rules/file_hashes.h"

namespace ct::memory {

/// The most files a folder or glob scope is anchored to; a wider one is refused an anchor.
inline constexpr std::size_t kFolderFileLimit = 5000;

/// A scope path split at its '#': {file, symbol}; the symbol is empty for a plain path.
struct SymbolScope {
  std::string file;
  std::string symbol;
};
SymbolScope split_symbol(std::string_view scope);
/// Whether `symbol` (as written in a scope) names the definition `qualified` (scope and name):
/// equal, or its end at a "::" or "." boundary.
bool symbol_names(std::string_view symbol, std::string_view qualified);
/// The last part of a symbol ("backoff" of "RetryPolicy::backoff").
std::string symbol_leaf(std::string_view symbol);

/// One definition in a file, as ctags reports it.
struct Symbol {
  std::string name;       // the qualified name: scope "::" name (or "." for languages that use it)
  std::string kind;       // function, class, member, …
  std::int64_t line = 0;  // 1-based, first line
  std::int64_t end = 0;   // last line (the first when ctags gives no end)
};

/// The definitions of `file` (relative to `root`, inside the project), in line order: run ctags
/// once per version of the file (remembered by its stamp). E_CAPABILITY_UNAVAILABLE without
/// ctags, E_NOT_FOUND for a missing file, E_ENGINE_FAILED or E_TIMEOUT when ctags fails.
Result<std::vector<Symbol>> symbols_of(const std::filesystem::path& root, const std::string& file);

/// The files a folder or glob scope covers now, sorted (hidden ones and links left out); at most
/// kFolderFileLimit + 1. E_NOT_FOUND when the folder does not exist.
Result<std::vector<std::string>> covered_files(const std::filesystem::path& root, std::string_view scope);

/// What a scope's anchor is compared with first: a file's size and time, a symbol's file's, a
/// folder's count of files and digest of their stamps. `size` -1: it is gone.
struct ScopeStamp {
  std::int64_t size = -1;
  std::int64_t mtime_ns = 0;
  std::int64_t latest_ms = 0;  // the newest change time among its files (what "since" says)
};
ScopeStamp scope_stamp(const std::filesystem::path& root, const std::string& scope);

/// Whether a scope path is anchored by what it covers (a folder or glob, not the whole project).
bool is_wide_scope(std::string_view scope);

/// Hashes any scope path: a file through `files` (FileHasher: once per change), a symbol (its
/// lines' text), a folder or glob (the digest above). HashedFile's stamp is the ScopeStamp. One
/// serves one call: a folder or glob several entries share is walked once in it.
class ScopeHasher final : public FileHashes {
 public:
  explicit ScopeHasher(FileHashes& files) : files_(files) {}
  Result<HashedFile> hash(const std::filesystem::path& root, const std::string& scope) override;
  /// scope_stamp(), a folder's or glob's remembered for this hasher's life.
  ScopeStamp stamp(const std::filesystem::path& root, const std::string& scope);

 private:
  FileHashes& files_;
  std::map<std::string, ScopeStamp, std::less<>> stamps_;
  std::map<std::string, HashedFile, std::less<>> wide_;
};

/// The external step's reading of scope paths (memory's read_files): each file, symbol, folder and
/// glob of `scopes` hashed, as {scope: {sha256, size, mtimeNs} | {code, message}} (ReadFiles reads it).
json::Value read_scopes(const std::filesystem::path& root, const std::vector<std::string>& scopes);

}  // namespace ct::memory
