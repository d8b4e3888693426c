// Writing a file so that readers see the old content or the new, never half of either.
#pragma once

#include <filesystem>
#include <string_view>

#include "core/error.h"

namespace ct {

/// How a finished temp file takes the target's name.
enum class Publish {
  Replace,    // rename(): an existing target is replaced
  Exclusive,  // link() + unlink(): an existing target is never touched; see is_target_exists()
};

/// A file being written beside `target` under a unique temp name (".<name>.cleo-<pid>-<n>", created
/// O_EXCL, so threads and processes never share one) and published by commit(): the bytes are
/// fsynced, the temp file takes the target's name, and the directory is fsynced. Until then the
/// target is untouched; an AtomicFile destroyed uncommitted removes its temp file.
///
/// The published file keeps the mode of the target it replaces; a new one gets 0666 less the
/// umask. The target is taken literally: a caller that wants a symlink to survive passes the
/// link's destination. The directory must exist.
class AtomicFile {
 public:
  static Result<AtomicFile> create(std::filesystem::path target);

  AtomicFile(AtomicFile&& other) noexcept;
  AtomicFile& operator=(AtomicFile&& other) noexcept;
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;
  ~AtomicFile();

  /// Appends bytes; may be called any number of times. After a failure the temp file is gone and
  /// every later call fails.
  Result<void> write(std::string_view bytes);
  /// Publishes the file. Called at most once; on failure the temp file is gone and the target is
  /// as it was.
  Result<void> commit(Publish how = Publish::Replace);

  const std::filesystem::path& target() const { return target_; }
  const std::filesystem::path& temp() const { return temp_; }

 private:
  AtomicFile(std::filesystem::path target, std::filesystem::path temp, int fd)
      : target_(std::move(target)), temp_(std::move(temp)), fd_(fd) {}
  /// Closes and removes the temp file (nothing can be published afterwards).
  void abandon();

  std::filesystem::path target_;
  std::filesystem::path temp_;  // empty once published or abandoned
  int fd_ = -1;
};

/// The whole of `content` as `target`, through an AtomicFile.
Result<void> write_file_atomically(const std::filesystem::path& target, std::string_view content,
                                   Publish how = Publish::Replace);

/// Whether `error` is commit(Publish::Exclusive) refusing because the target already exists.
bool is_target_exists(const Error& error);

}  // namespace ct
