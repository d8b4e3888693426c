#include "engines/rules/memory_symbols.h"

#include <algorithm>
#include <map>
#include <system_error>
#include <unordered_map>

#include "core/file_read.h"
#include "core/file_stamp.h"
#include "core/json_parse.h"
#include "core/sha256.h"
#include "engines/adapters/subprocess.h"
#include "engines/project/project.h"
#include "engines/rules/memory.h"

namespace ct::memory {
namespace fs = std::filesystem;

namespace {

constexpr std::chrono::milliseconds kCtagsTimeout{10'000};

struct IndexedFile {
  FileStamp stamp;
  std::vector<Symbol> symbols;
};

/// ctags' JSON lines as definitions, in line order.
std::vector<Symbol> parse_tags(std::string_view out) {
  std::vector<Symbol> symbols;
  std::size_t start = 0;
  while (start < out.size()) {
    std::size_t end = out.find('\n', start);
    if (end == std::string_view::npos) end = out.size();
    const std::string_view line = out.substr(start, end - start);
    start = end + 1;
    auto tag = json::parse(line);
    if (!tag || !tag->is_object() || (*tag)["_type"].string_or_empty() != "tag") continue;
    Symbol symbol;
    const std::string name = (*tag)["name"].string_or_empty();
    const std::string scope = (*tag)["scope"].string_or_empty();
    if (name.empty()) continue;
    // C-family and most others qualify with "::"; a scope already written with dots keeps them.
    const bool dotted = !scope.empty() && scope.find("::") == std::string::npos &&
                        ((*tag)["kind"].string_or_empty() == "member" || scope.find('.') != std::string::npos);
    symbol.name = scope.empty() ? name : scope + (dotted ? "." : "::") + name;
    symbol.kind = (*tag)["kind"].string_or_empty();
    symbol.line = (*tag)["line"].is_int() ? (*tag)["line"].as_int() : 0;
    symbol.end = (*tag)["end"].is_int() ? (*tag)["end"].as_int() : symbol.line;
    if (symbol.line <= 0) continue;
    symbol.end = std::max(symbol.end, symbol.line);
    symbols.push_back(std::move(symbol));
  }
  std::stable_sort(symbols.begin(), symbols.end(), [](const Symbol& a, const Symbol& b) { return a.line < b.line; });
  return symbols;
}

Result<std::vector<Symbol>> run_ctags(const fs::path& root, const fs::path& real) {
  ProcessSpec spec;
  // --options=NONE: the user's ~/.ctags.d and the project's .ctags.d change nothing here.
  spec.argv = {"ctags", "--options=NONE", "--output-format=json", "--fields=+neKZ", "--extras=-q",
               "--sort=no", "-o", "-", real.string()};  // real is absolute: never taken for an option
  spec.cwd = root;
  spec.env = minimal_environment();
  spec.timeout = kCtagsTimeout;
  auto ran = run_process(spec);
  if (!ran) {
    if (ran.error().code == ErrorCode::CapabilityUnavailable)
      return fail(Error(ErrorCode::CapabilityUnavailable, "ctags is not installed: symbols cannot be located")
                      .with_fix("install universal-ctags (apt-get install universal-ctags, brew install universal-ctags)")
                      .with_detail("program", "ctags"));
    return fail(std::move(ran.error()));
  }
  if (!ran->ok()) return fail(process_error(spec, *ran, "ctags"));
  return parse_tags(ran->out);
}

std::unordered_map<std::string, IndexedFile>& symbol_cache() {
  static thread_local std::unordered_map<std::string, IndexedFile> cache;
  return cache;
}

/// The definitions of a file read now (its text and stamp), from the cache or ctags.
Result<std::vector<Symbol>> indexed(const fs::path& root, const fs::path& real, const FileStamp& stamp) {
  auto& cache = symbol_cache();
  const std::string key = real.string();
  if (auto found = cache.find(key); found != cache.end() && found->second.stamp == stamp) return found->second.symbols;
  CT_TRY_ASSIGN(std::vector<Symbol> symbols, run_ctags(root, real));
  if (cache.size() > 4096) cache.clear();
  cache[key] = {stamp, symbols};
  return symbols;
}

/// The text of lines [first, last] (1-based) of `text`.
std::string_view lines_of(std::string_view text, std::int64_t first, std::int64_t last) {
  std::size_t begin = 0;
  for (std::int64_t line = 1; line < first && begin != std::string_view::npos; ++line) {
    begin = text.find('\n', begin);
    if (begin != std::string_view::npos) ++begin;
  }
  if (begin == std::string_view::npos || begin > text.size()) return {};
  std::size_t end = begin;
  for (std::int64_t line = first; line <= last && end != std::string_view::npos && end < text.size(); ++line) {
    end = text.find('\n', end);
    if (end != std::string_view::npos) ++end;
  }
  if (end == std::string_view::npos) end = text.size();
  return text.substr(begin, end - begin);
}

Result<HashedFile> hash_symbol(const fs::path& root, const SymbolScope& scope, const std::string& whole) {
  CT_TRY_ASSIGN(fs::path real, project_file(root, scope.file));
  FileStamp stamp;
  auto text = read_regular_file(real, kHashLimit, &stamp);
  if (!text) {
    if (file_stamp(real).size < 0)
      return fail(Error(ErrorCode::NotFound, scope.file + " does not exist").with_detail("file", whole));
    return fail(std::move(text.error()));
  }
  CT_TRY_ASSIGN(std::vector<Symbol> symbols, indexed(root, real, stamp));
  std::string spans;
  for (const auto& symbol : symbols) {
    if (!symbol_names(scope.symbol, symbol.name)) continue;
    spans += lines_of(*text, symbol.line, symbol.end);
    spans += '\n';
  }
  if (spans.empty())
    return fail(Error(ErrorCode::NotFound, scope.symbol + " is not defined in " + scope.file).with_detail("file", whole));
  return HashedFile{stamp, sha256_hex(spans)};
}

bool hidden(const fs::path& name) {
  const std::string text = name.filename().string();
  return !text.empty() && text.front() == '.';
}

/// The literal folder a scope's files are under (the scope itself for a folder).
std::string walked_folder(std::string_view scope) {
  return is_glob(scope) ? glob_folder(scope) : std::string(scope);
}

std::int64_t digest_int(std::string_view text) {
  return static_cast<std::int64_t>(std::stoull(sha256_hex(text).substr(0, 15), nullptr, 16));
}

}  // namespace

SymbolScope split_symbol(std::string_view scope) {
  const auto hash = scope.find('#');
  if (hash == std::string_view::npos) return {std::string(scope), ""};
  return {std::string(scope.substr(0, hash)), std::string(scope.substr(hash + 1))};
}

bool symbol_names(std::string_view symbol, std::string_view qualified) {
  if (symbol.empty() || symbol.size() > qualified.size()) return false;
  if (!qualified.ends_with(symbol)) return false;
  if (symbol.size() == qualified.size()) return true;
  const std::string_view before = qualified.substr(0, qualified.size() - symbol.size());
  return before.ends_with("::") || before.ends_with(".");
}

std::string symbol_leaf(std::string_view symbol) {
  const auto colons = symbol.rfind("::");
  const auto dot = symbol.rfind('.');
  std::size_t cut = 0;
  if (colons != std::string_view::npos) cut = colons + 2;
  if (dot != std::string_view::npos && dot + 1 > cut) cut = dot + 1;
  return std::string(symbol.substr(cut));
}

Result<std::vector<Symbol>> symbols_of(const fs::path& root, const std::string& file) {
  CT_TRY_ASSIGN(fs::path real, project_file(root, file));
  const FileStamp stamp = file_stamp(real);
  if (stamp.size < 0) return fail(Error(ErrorCode::NotFound, file + " does not exist").with_detail("file", file));
  return indexed(root, real, stamp);
}

bool is_wide_scope(std::string_view scope) {
  return !scope.empty() && (scope.back() == '/' || is_glob(scope)) && scope.find('#') == std::string_view::npos;
}

namespace {

/// A walk of a folder: its folders with their times (a file added, removed or renamed changes its
/// folder's), and the files it found.
struct Walk {
  std::vector<std::pair<std::string, std::int64_t>> folders;
  std::vector<std::string> files;
};

std::unordered_map<std::string, Walk>& walk_cache() {
  static thread_local std::unordered_map<std::string, Walk> cache;
  return cache;
}

/// Whether a remembered walk still holds: no folder of it changed (each folder stat'ed, none read).
bool still_holds(const Walk& walk) {
  return std::all_of(walk.folders.begin(), walk.folders.end(),
                     [](const auto& folder) { return file_stamp(folder.first).mtime_ns == folder.second; });
}

}  // namespace

Result<std::vector<std::string>> covered_files(const fs::path& root, std::string_view scope) {
  const std::string folder = walked_folder(scope);
  const fs::path base = folder.empty() ? root : root / folder;
  const std::string key = root.string() + '\0' + std::string(scope);
  if (auto found = walk_cache().find(key); found != walk_cache().end() && still_holds(found->second))
    return found->second.files;
  std::error_code ec;
  if (!fs::is_directory(base, ec))
    return fail(Error(ErrorCode::NotFound, (folder.empty() ? std::string("the project") : folder) + " is not a folder")
                    .with_detail("file", std::string(scope)));
  if (auto inside = project_file(root, folder); !folder.empty() && !inside) return fail(std::move(inside.error()));
  Walk walk;
  walk.folders.emplace_back(base.string(), file_stamp(base).mtime_ns);
  fs::recursive_directory_iterator it(base, fs::directory_options::skip_permission_denied, ec);
  for (const fs::recursive_directory_iterator end; !ec && it != end; it.increment(ec)) {
    const fs::directory_entry& entry = *it;
    if (hidden(entry.path())) {
      if (entry.is_directory(ec)) it.disable_recursion_pending();
      continue;
    }
    if (entry.is_directory(ec) && !entry.is_symlink(ec)) {
      walk.folders.emplace_back(entry.path().string(), file_stamp(entry.path()).mtime_ns);
      continue;
    }
    if (!entry.is_regular_file(ec) || entry.is_symlink(ec)) continue;
    std::string rel = folder + entry.path().lexically_relative(base).generic_string();
    if (is_glob(scope) && scope_match(scope, rel) == 0) continue;
    walk.files.push_back(std::move(rel));
    if (walk.files.size() > kFolderFileLimit) break;
  }
  std::sort(walk.files.begin(), walk.files.end());
  if (walk.files.size() > kFolderFileLimit) return walk.files;  // too wide: not remembered
  if (walk_cache().size() > 1024) walk_cache().clear();
  std::vector<std::string> files = walk.files;
  walk_cache()[key] = std::move(walk);
  return files;
}

ScopeStamp scope_stamp(const fs::path& root, const std::string& scope) {
  ScopeStamp out;
  if (!is_wide_scope(scope)) {
    const FileStamp stamp = file_stamp(root / split_symbol(scope).file);
    if (stamp.size < 0) return out;
    return {stamp.size, stamp.mtime_ns, stamp.mtime_ns / 1'000'000};
  }
  auto files = covered_files(root, scope);
  if (!files) return out;
  std::string stamps;
  for (const auto& file : *files) {
    const FileStamp stamp = file_stamp(root / file);
    stamps += file + '\0' + std::to_string(stamp.size) + '\0' + std::to_string(stamp.mtime_ns) + '\n';
    out.latest_ms = std::max(out.latest_ms, stamp.mtime_ns / 1'000'000);
  }
  out.size = std::ssize(*files);
  out.mtime_ns = digest_int(stamps);
  return out;
}

ScopeStamp ScopeHasher::stamp(const fs::path& root, const std::string& scope) {
  if (!is_wide_scope(scope)) return scope_stamp(root, scope);
  if (auto found = stamps_.find(scope); found != stamps_.end()) return found->second;
  return stamps_[scope] = scope_stamp(root, scope);
}

Result<HashedFile> ScopeHasher::hash(const fs::path& root, const std::string& scope) {
  SymbolScope parts = split_symbol(scope);
  if (!parts.symbol.empty()) return hash_symbol(root, parts, scope);
  if (!is_wide_scope(scope)) return files_.hash(root, scope);
  if (auto found = wide_.find(scope); found != wide_.end()) return found->second;
  CT_TRY_ASSIGN(std::vector<std::string> files, covered_files(root, scope));
  if (files.size() > kFolderFileLimit)
    return fail(Error(ErrorCode::Validation, scope + " covers more than " + std::to_string(kFolderFileLimit) + " files")
                    .with_fix("scope the entry to a narrower folder or glob")
                    .with_detail("file", scope));
  std::string contents;
  for (const auto& file : files) {
    CT_TRY_ASSIGN(HashedFile hashed, files_.hash(root, file));
    contents += file + '\0' + hashed.sha256 + '\n';
  }
  const ScopeStamp now = stamp(root, scope);
  HashedFile out;
  out.stamp.size = now.size;
  out.stamp.mtime_ns = now.mtime_ns;
  out.sha256 = sha256_hex(contents);
  return wide_[scope] = out;
}

json::Value read_scopes(const fs::path& root, const std::vector<std::string>& scopes) {
  ScopeHasher hasher(process_hasher());
  return read_files(root, scopes, hasher, true);
}

}  // namespace ct::memory
