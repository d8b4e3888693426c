// Writing a file so that readers see the old content or the new, never half of either.
#pragma once

#include <filesystem>
#include <optional>
#include <string_view>

#include "core/error.h"

namespace ct {

/// How a finished temp file takes the target's name.
enum class Publish {
  Replace,    // rename(): an existing target is replaced
  Exclusive,  // link() + unlink(): an existing target is never touched; see is_target_exists()
};

/// A file's permission bits and owner: what a replacement or a copy of it must keep.
struct FileAttributes {
  unsigned mode = 0;  // the permission bits (07777)
  unsigned uid = 0;
  unsigned gid = 0;
};

/// What a symlink at the target means to an AtomicFile.
enum class Links {
  Replace,  // the path is taken literally: a link there is replaced by the new file
  Follow,   // the file the link leads to is replaced and the link stays (write_target())
};

/// The file that writing `path` would change. Symbolic links are followed to the file they lead
/// to, so that writing edits that file and the links stay; a path that is not a link is itself.
/// A link to nothing or a loop of links is E_FILE_ERROR (detail reason "link"): a file written
/// in place of the link would silently end what the link shared. A path that does not exist is
/// returned as it is (a new file).
Result<std::filesystem::path> write_target(const std::filesystem::path& path);

/// E_FILE_ERROR (detail reason "read-only") when `file` exists and may not be written: it has no
/// write bit, or this process lacks the permission. commit(Publish::Replace) refuses such a file
/// (a rename would succeed where a plain write fails); callers may ask first, e.g. for a dry run.
Result<void> may_replace(const std::filesystem::path& file);

/// A file being written beside `target` under a unique temp name (".<name>.cleo-<pid>-<n>", created
/// O_EXCL and private (0600), so threads and processes never share one and nobody else can read the
/// bytes before they are published) and published by commit(): the bytes are fsynced, the temp
/// file takes the target's name, and the directory is fsynced. Until then the target is untouched;
/// an AtomicFile destroyed uncommitted removes its temp file.
///
/// With Links::Follow the target is write_target(target): a symlink is followed and the file it
/// leads to replaced (the link stays) — for a person's files (a host's config kept in a dotfiles
/// repository). With Links::Replace (the default) a link at the target is replaced, never written
/// through: for files CLEO owns, and for callers that have not checked where a link leads (a
/// project's file linked outside the project). Replacing a read-only file is refused
/// (may_replace()). The published
/// file keeps the mode and owner of the target it replaces (set_attributes() chooses them instead,
/// e.g. for a copy of another file); a new one gets 0666 less the umask and this process's owner.
/// An owner that cannot be kept fails the commit rather than change who owns the file. The
/// directory must exist.
class AtomicFile {
 public:
  static Result<AtomicFile> create(std::filesystem::path target, Links links = Links::Replace);

  AtomicFile(AtomicFile&& other) noexcept;
  AtomicFile& operator=(AtomicFile&& other) noexcept;
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;
  ~AtomicFile();

  /// Appends bytes; may be called any number of times. After a failure the temp file is gone and
  /// every later call fails.
  Result<void> write(std::string_view bytes);
  /// The mode and owner the published file gets, instead of the replaced target's (or the new
  /// file's defaults).
  void set_attributes(const FileAttributes& attributes) { attributes_ = attributes; }
  /// Publishes the file. Called at most once; on failure the temp file is gone and the target is
  /// as it was.
  Result<void> commit(Publish how = Publish::Replace);

  /// The file that is written (with Links::Follow, where the symlinks lead).
  const std::filesystem::path& target() const { return target_; }
  const std::filesystem::path& temp() const { return temp_; }

 private:
  AtomicFile(std::filesystem::path target, std::filesystem::path temp, int fd, unsigned new_mode, Links links)
      : target_(std::move(target)), temp_(std::move(temp)), fd_(fd), new_mode_(new_mode), links_(links) {}
  /// Closes and removes the temp file (nothing can be published afterwards).
  void abandon();

  std::filesystem::path target_;
  std::filesystem::path temp_;  // empty once published or abandoned
  int fd_ = -1;
  unsigned new_mode_ = 0644;  // 0666 less the umask
  Links links_ = Links::Replace;
  std::optional<FileAttributes> attributes_;
};

/// The whole of `content` as `target`, through an AtomicFile.
Result<void> write_file_atomically(const std::filesystem::path& target, std::string_view content,
                                   Publish how = Publish::Replace);

/// Appends `line` and a newline to `file` (created 0644 when missing) in one write(2) of an
/// O_APPEND descriptor, then fsyncs it: a record kept beside the store (the audit seals) never
/// interleaves with another process's line and is on disk before the call returns. A symlink is
/// not followed.
Result<void> append_line(const std::filesystem::path& file, std::string_view line);

/// Whether `error` is commit(Publish::Exclusive) refusing because the target already exists.
bool is_target_exists(const Error& error);

/// An exclusive lock (flock) on a folder, held until it is destroyed: writers that read a file,
/// change it and write it back take the lock of the file's folder around the whole cycle, so
/// that two of them (threads or processes) never both start from the same content and one
/// silently drops the other's change. The folder gets no extra file.
class FolderLock {
 public:
  static Result<FolderLock> acquire(const std::filesystem::path& folder);

  FolderLock(FolderLock&& other) noexcept;
  FolderLock& operator=(FolderLock&& other) noexcept;
  FolderLock(const FolderLock&) = delete;
  FolderLock& operator=(const FolderLock&) = delete;
  ~FolderLock();

 private:
  explicit FolderLock(int fd) : fd_(fd) {}
  int fd_ = -1;
};

}  // namespace ct
