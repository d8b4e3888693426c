#include "core/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
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

/// Makes a rename or link in `dir` durable. Best effort: the data itself is already fsynced.
void sync_directory(const fs::path& dir) {
  int dir_fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd >= 0) {
    ::fsync(dir_fd);
    ::close(dir_fd);
  }
}

}  // namespace

Result<AtomicFile> AtomicFile::create(fs::path target) {
  // A counter keeps the threads of `ct serve` apart, the pid keeps processes apart, and O_EXCL
  // settles anything else (a stale file from a crashed process with a recycled pid).
  static std::atomic<unsigned> counter{0};
  const std::string prefix = "." + target.filename().string() + ".cleo-" + std::to_string(::getpid()) + "-";
  for (int attempt = 0; attempt < 100; ++attempt) {
    fs::path temp = directory_of(target) / (prefix + std::to_string(counter.fetch_add(1)));
    int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd >= 0) return AtomicFile(std::move(target), std::move(temp), fd);
    if (errno != EEXIST) return fail(file_error("cannot create", temp, errno));
  }
  return fail(Error(ErrorCode::FileError, "cannot create a temp file beside " + target.string())
                  .with_fix("remove stale ." + target.filename().string() + ".cleo-* files there"));
}

AtomicFile::AtomicFile(AtomicFile&& other) noexcept
    : target_(std::move(other.target_)), temp_(std::exchange(other.temp_, {})), fd_(std::exchange(other.fd_, -1)) {}

AtomicFile& AtomicFile::operator=(AtomicFile&& other) noexcept {
  if (this != &other) {
    abandon();
    target_ = std::move(other.target_);
    temp_ = std::exchange(other.temp_, {});
    fd_ = std::exchange(other.fd_, -1);
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
  struct stat existing {};
  if (how == Publish::Replace && ::stat(target_.c_str(), &existing) == 0 && ::fchmod(fd_, existing.st_mode & 07777) != 0)
    return give_up("cannot set the mode of", errno);
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

}  // namespace ct
