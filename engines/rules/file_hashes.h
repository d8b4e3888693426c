// Hashing the files a caller names (memory anchors, evidence atoms, research outputs), read
// before a write transaction and looked up inside it.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/error.h"
#include "core/file_stamp.h"
#include "core/json.h"

namespace ct {

/// A file's stamp and SHA-256 when it was read.
struct HashedFile {
  FileStamp stamp;
  std::string sha256;
};

/// Where the hashes of files a caller names come from (memory anchors, evidence, research
/// outputs). They are read on the caller's behalf, so the rules of core/file_read.h hold: the
/// path must lead to a regular file inside the project (links followed: engines/project/project.h,
/// project_file), is read up to kHashLimit, and never under a store's write lock — a mutation
/// hashes its files in its external step, before its transaction, and its handler takes them
/// from what was read then (ReadFiles).
class FileHashes {
 public:
  virtual ~FileHashes() = default;
  /// The file `file` (relative to `root`): E_NOT_FOUND when it is not there, another error
  /// saying why it cannot be read (outside the project, not a regular file, too large).
  virtual Result<HashedFile> hash(const std::filesystem::path& root, const std::string& file) = 0;
};

/// Reads: remembered per file with its stamp, so an unchanged file is hashed once per process and
/// a changed one once per change.
class FileHasher final : public FileHashes {
 public:
  Result<HashedFile> hash(const std::filesystem::path& root, const std::string& file) override;
  std::int64_t hashed() const { return hashed_; }  // files read and hashed so far (benchmarks)

 private:
  std::unordered_map<std::string, HashedFile> cache_;
  std::int64_t hashed_ = 0;
};
FileHasher& process_hasher();

/// What a call read before its transaction: the files it hashed (read_files), looked up, never read.
class ReadFiles final : public FileHashes {
 public:
  /// As read_files() wrote it: {path: {sha256, size, mtimeNs} | {code, message}}.
  explicit ReadFiles(json::Value read) : read_(std::move(read)) {}
  Result<HashedFile> hash(const std::filesystem::path& root, const std::string& file) override;

 private:
  json::Value read_;
};

/// Hashes each of `files` that names a file (not a folder, "x/", or a glob; with `wide`, those
/// too: memory's scopes, engines/rules/memory_symbols.h) with `hasher`, for ReadFiles: the work a
/// mutation's external step does so that its handler reads nothing.
json::Value read_files(const std::filesystem::path& root, const std::vector<std::string>& files, FileHashes& hasher,
                       bool wide = false);

}  // namespace ct
