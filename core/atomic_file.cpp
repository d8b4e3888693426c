#include "core/atomic_file.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <utility>

namespace ct {
namespace {

namespace fs = std::filesystem;

fs::path directory_of(const fs::path& file) { return file.has_parent_path() ? file.parent_path() : fs::path("."); }

Error file_error(std::string_view what, const fs::path& file, int error_number) {
  return Error(ErrorCode::FileError, std::string(what) + " " + file.string() + ": " + std::strerror(error_number))
      .with_fix("check that " + directory_of(file).string() +
                " exists and is writable, and that the disk is not full");
}

Error link_error(const fs::path& link, std::string problem) {
  return Error(ErrorCode::FileError, link.string() + " is a symbolic link " + std::move(problem) +
                                         "; nothing was written")
      .with_fix("point " + link.string() + " at an existing file (or replace the link with the file), then run again")
      .with_detail("reason", "link");
}

/// Refuses to replace a file nobody may write (no write bit) or this process may not write: the
/// rename would succeed where a plain write fails, and the user marked it so on purpose.
Result<void> check_writable(const fs::path& file, const struct stat& info) {
  if ((info.st_mode & 0222) != 0 && ::faccessat(AT_FDCWD, file.c_str(), W_OK, AT_EACCESS) == 0) return {};
  char mode[8];
  std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(info.st_mode & 07777));
  return fail(Error(ErrorCode::FileError, file.string() + " is read-only (mode " + mode + "); it was left as it was")
                  .with_fix("make it writable (chmod u+w " + file.string() + ") if it may be changed, then run again")
                  .with_detail("reason", "read-only"));
}

/// 0666 less the umask, read without changing it (umask() would race other threads' files).
unsigned new_file_mode() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line))
    if (line.starts_with("Umask:")) return 0666 & ~static_cast<unsigned>(std::stoul(line.substr(6), nullptr, 8));
  return 0644;
}

/// Makes a rename or link in `dir` durable. Best effort: the data itself is already fsynced.
void sync_directory(const fs::path& dir) {
  int dir_fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd >= 0) {
    ::fsync(dir_fd);
    ::close(dir_fd);
  }
}

}  // namespace

Result<fs::path> write_target(const fs::path& path) {
  fs::path current = path;
  for (int hops = 0; hops <= 40; ++hops) {
    struct stat info {};
    if (::lstat(current.c_str(), &info) != 0) {
      int error_number = errno;
      if (error_number == ENOENT && hops == 0) return current;  // a new file
      if (error_number == ENOENT) return fail(link_error(path, "to " + current.string() + ", which does not exist"));
      if (error_number == ELOOP) return fail(link_error(path, "in a loop of links"));
      return fail(file_error("cannot inspect", current, error_number));
    }
    if (!S_ISLNK(info.st_mode)) return current;
    std::error_code ec;
    fs::path destination = fs::read_symlink(current, ec);
    if (ec) return fail(file_error("cannot read the link", current, ec.value()));
    current = destination.is_absolute() ? destination : directory_of(current) / destination;
  }
  return fail(link_error(path, "in a loop of links (or a chain of more than 40)"));
}

Result<void> may_replace(const fs::path& file) {
  struct stat existing {};
  if (::stat(file.c_str(), &existing) != 0) return {};
  return check_writable(file, existing);
}

Result<AtomicFile> AtomicFile::create(fs::path target, Links links) {
  if (links == Links::Follow) {
    CT_TRY_ASSIGN(target, write_target(target));
  }
  // A counter keeps the threads of `ct serve` apart, the pid keeps processes apart, and O_EXCL
  // settles anything else (a stale file from a crashed process with a recycled pid).
  static std::atomic<unsigned> counter{0};
  const std::string prefix = "." + target.filename().string() + ".cleo-" + std::to_string(::getpid()) + "-";
  for (int attempt = 0; attempt < 100; ++attempt) {
    fs::path temp = directory_of(target) / (prefix + std::to_string(counter.fetch_add(1)));
    int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd >= 0) return AtomicFile(std::move(target), std::move(temp), fd, new_file_mode(), links);
    if (errno != EEXIST) return fail(file_error("cannot create", temp, errno));
  }
  return fail(Error(ErrorCode::FileError, "cannot create a temp file beside " + target.string())
                  .with_fix("remove stale ." + target.filename().string() + ".cleo-* files there"));
}

AtomicFile::AtomicFile(AtomicFile&& other) noexcept
    : target_(std::move(other.target_)),
      temp_(std::exchange(other.temp_, {})),
      fd_(std::exchange(other.fd_, -1)),
      new_mode_(other.new_mode_),
      links_(other.links_),
      attributes_(other.attributes_) {}

AtomicFile& AtomicFile::operator=(AtomicFile&& other) noexcept {
  if (this != &other) {
    abandon();
    target_ = std::move(other.target_);
    temp_ = std::exchange(other.temp_, {});
    fd_ = std::exchange(other.fd_, -1);
    new_mode_ = other.new_mode_;
    links_ = other.links_;
    attributes_ = other.attributes_;
  }
  return *this;
}

AtomicFile::~AtomicFile() { abandon(); }

void AtomicFile::abandon() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  if (!temp_.empty()) ::unlink(temp_.c_str());
  temp_.clear();
}

Result<void> AtomicFile::write(std::string_view bytes) {
  if (fd_ < 0)
    return fail(Error(ErrorCode::Internal, "write to " + target_.string() + " after it was published or abandoned"));
  while (!bytes.empty()) {
    ssize_t n = ::write(fd_, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      int error_number = n == 0 ? EIO : errno;
      abandon();
      return fail(file_error("cannot write", target_, error_number));
    }
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
  return {};
}

Result<void> AtomicFile::commit(Publish how) {
  if (fd_ < 0)
    return fail(Error(ErrorCode::Internal, "commit of " + target_.string() + " after it was published or abandoned"));
  auto give_up = [&](std::string_view what, int error_number) -> Result<void> {
    abandon();
    return fail(file_error(what, target_, error_number));
  };
  // The mode and owner: chosen by the caller, else the replaced file's, else a new file's.
  std::optional<FileAttributes> keep = attributes_;
  // The file replaced: with Links::Replace a symlink at the target is itself what goes.
  struct stat existing {};
  const int found = links_ == Links::Follow ? ::stat(target_.c_str(), &existing) : ::lstat(target_.c_str(), &existing);
  if (how == Publish::Replace && found == 0 && !S_ISLNK(existing.st_mode)) {
    if (auto writable = check_writable(target_, existing); !writable) {
      abandon();
      return writable;
    }
    if (!keep)
      keep = FileAttributes{static_cast<unsigned>(existing.st_mode & 07777), static_cast<unsigned>(existing.st_uid),
                            static_cast<unsigned>(existing.st_gid)};
  }
  if (::fchmod(fd_, keep ? keep->mode : new_mode_) != 0) return give_up("cannot set the mode of", errno);
  struct stat mine {};
  if (keep && ::fstat(fd_, &mine) == 0 && (mine.st_uid != keep->uid || mine.st_gid != keep->gid) &&
      ::fchown(fd_, keep->uid, keep->gid) != 0) {
    int error_number = errno;
    abandon();
    return fail(Error(ErrorCode::FileError, "cannot give the new " + target_.string() + " its owner " +
                                                std::to_string(keep->uid) + ":" + std::to_string(keep->gid) + " (" +
                                                std::strerror(error_number) + "); it was left as it was")
                    .with_fix("run this as the file's owner (or as root), then try again")
                    .with_detail("reason", "owner"));
  }
  if (::fsync(fd_) != 0) return give_up("cannot flush", errno);
  int closed = ::close(fd_);
  fd_ = -1;
  if (closed != 0) return give_up("cannot close", errno);

  if (how == Publish::Replace) {
    if (::rename(temp_.c_str(), target_.c_str()) != 0) return give_up("cannot replace", errno);
  } else {
    // link() publishes the complete file under its name but, unlike rename(), fails rather than
    // replace a file already there.
    if (::link(temp_.c_str(), target_.c_str()) != 0) {
      int error_number = errno;
      abandon();
      if (error_number == EEXIST)
        return fail(Error(ErrorCode::FileError, target_.string() + " already exists; it was left as it was")
                        .with_fix("move " + target_.string() + " away, then try again")
                        .with_detail("reason", "exists"));
      return fail(file_error("cannot create", target_, error_number));
    }
    ::unlink(temp_.c_str());
  }
  temp_.clear();
  sync_directory(directory_of(target_));
  return {};
}

Result<void> append_line(const fs::path& file, std::string_view line) {
  std::string bytes(line);
  bytes += '\n';
  const int fd = ::open(file.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd < 0)
    return fail(Error(ErrorCode::FileError, "cannot append to " + file.string() + ": " + std::strerror(errno))
                    .with_fix("check the permissions of " + file.parent_path().string()));
  const ssize_t written = ::write(fd, bytes.data(), bytes.size());
  const int write_errno = errno;
  const bool synced = ::fsync(fd) == 0;
  ::close(fd);
  if (written != static_cast<ssize_t>(bytes.size()) || !synced)
    return fail(Error(ErrorCode::FileError, "cannot append to " + file.string() + ": " +
                                                std::strerror(written < 0 ? write_errno : EIO))
                    .with_fix("check free space and permissions"));
  return {};
}

Result<void> write_file_atomically(const fs::path& target, std::string_view content, Publish how) {
  CT_TRY_ASSIGN(AtomicFile file, AtomicFile::create(target));
  CT_TRY(file.write(content));
  return file.commit(how);
}

bool is_target_exists(const Error& error) {
  const json::Value* reason = error.details.find("reason");
  return error.code == ErrorCode::FileError && reason != nullptr && reason->is_string() &&
         reason->as_string() == "exists";
}

Result<FolderLock> FolderLock::acquire(const fs::path& folder) {
  int fd = ::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return fail(file_error("cannot open the folder", folder, errno));
  while (::flock(fd, LOCK_EX) != 0) {
    if (errno == EINTR) continue;
    int error_number = errno;
    ::close(fd);
    return fail(file_error("cannot lock the folder", folder, error_number));
  }
  return FolderLock(fd);
}

FolderLock::FolderLock(FolderLock&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}

FolderLock& FolderLock::operator=(FolderLock&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(other.fd_, -1);
  }
  return *this;
}

FolderLock::~FolderLock() {
  if (fd_ >= 0) ::close(fd_);  // closing the last descriptor releases the flock
}

}  // namespace ct
