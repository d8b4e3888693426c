#include "core/file_read.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <algorithm>
#include <cstring>
#include <functional>

#include "core/sha256.h"

namespace ct {
namespace {

/// This thread's count of write transactions begun and not yet ended (WriteLockMark).
std::shared_ptr<std::atomic<int>>& write_locks() {
  thread_local std::shared_ptr<std::atomic<int>> count = std::make_shared<std::atomic<int>>(0);
  return count;
}

std::string mib(std::int64_t bytes) {
  if (bytes >= (1LL << 20)) return std::to_string(bytes >> 20) + " MiB";
  return std::to_string(bytes) + " bytes";
}

/// Opens `file`, checks what it is, and hands each chunk from `offset` on to `take` until the end,
/// the cap (an error, or the end of a `part`) or the deadline.
Result<void> read_chunks(const std::filesystem::path& file, std::int64_t offset, bool part, ReadLimit limit,
                         FileStamp* stamp, const std::function<void(std::string_view)>& take) {
  const std::string name = file.string();
  if (write_locks()->load() > 0 && !limit.own_file)
    return fail(ErrorCode::Internal, "a file (" + name + ") was to be read while the store's write lock is held: every "
                                     "other writer would wait for it");
  const auto started = std::chrono::steady_clock::now();
  // O_NONBLOCK: opening a FIFO nobody writes to returns at once (it is refused below).
  const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0) {
    const int why = errno;
    if (why == ENOENT || why == ENOTDIR)
      return fail(Error(ErrorCode::NotFound, name + " does not exist").with_detail("file", name));
    return fail(Error(ErrorCode::FileError, "cannot read " + name + ": " + std::strerror(why))
                    .with_fix("check its permissions")
                    .with_detail("file", name));
  }
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st{};
  if (::fstat(fd, &st) != 0)
    return fail(Error(ErrorCode::FileError, "cannot read " + name + ": " + std::strerror(errno)).with_detail("file", name));
  if (!S_ISREG(st.st_mode))
    return fail(Error(ErrorCode::Validation, name + " is not a regular file (a folder, device, FIFO or socket)")
                    .with_fix("name a regular file")
                    .with_detail("file", name)
                    .with_detail("reason", "notRegular"));
  if (!part && st.st_size > limit.max_bytes)
    return fail(Error(ErrorCode::Validation, name + " holds " + mib(st.st_size) + ", more than the " + mib(limit.max_bytes) +
                                                 " read here")
                    .with_fix("name a smaller file")
                    .with_detail("file", name)
                    .with_detail("size", static_cast<std::int64_t>(st.st_size))
                    .with_detail("max", limit.max_bytes)
                    .with_detail("reason", "tooLarge"));
  if (stamp)
    *stamp = FileStamp{static_cast<std::uint64_t>(st.st_dev), static_cast<std::uint64_t>(st.st_ino),
                       static_cast<std::int64_t>(st.st_size),
                       static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec};
  if (offset > 0 && ::lseek(fd, offset, SEEK_SET) != offset)
    return fail(Error(ErrorCode::FileError, "cannot read " + name + " from byte " + std::to_string(offset) + ": " +
                                                std::strerror(errno))
                    .with_detail("file", name));
  std::int64_t total = 0;
  char buffer[65536];
  while (true) {
    const std::size_t want =
        part ? static_cast<std::size_t>(std::min<std::int64_t>(sizeof buffer, limit.max_bytes - total)) : sizeof buffer;
    if (want == 0) return {};
    const ssize_t n = ::read(fd, buffer, want);
    if (n < 0) {
      if (errno == EINTR) continue;
      return fail(Error(ErrorCode::FileError, "cannot read " + name + ": " + std::strerror(errno)).with_detail("file", name));
    }
    if (n == 0) return {};
    total += n;
    // A file that says it is small and reads on (/proc's report no size) stops at the cap.
    if (total > limit.max_bytes)
      return fail(Error(ErrorCode::Validation, name + " reads on past the " + mib(limit.max_bytes) + " read here")
                      .with_fix("name a regular file of the project")
                      .with_detail("file", name)
                      .with_detail("max", limit.max_bytes)
                      .with_detail("reason", "tooLarge"));
    take(std::string_view(buffer, static_cast<std::size_t>(n)));
    if (std::chrono::steady_clock::now() - started > limit.deadline)
      return fail(Error(ErrorCode::Validation, name + " was not read within " +
                                                   std::to_string(limit.deadline.count() / 1000) + " s")
                      .with_fix("name a file on a local disk")
                      .with_detail("file", name)
                      .with_detail("reason", "slow"));
  }
}

}  // namespace

Result<std::string> read_regular_file(const std::filesystem::path& file, ReadLimit limit, FileStamp* stamp) {
  std::string out;
  CT_TRY(read_chunks(file, 0, false, limit, stamp, [&](std::string_view chunk) { out.append(chunk); }));
  return out;
}

Result<std::string> read_regular_file_part(const std::filesystem::path& file, std::int64_t offset, ReadLimit limit) {
  std::string out;
  CT_TRY(read_chunks(file, offset, true, limit, nullptr, [&](std::string_view chunk) { out.append(chunk); }));
  return out;
}

Result<std::string> hash_regular_file(const std::filesystem::path& file, ReadLimit limit, FileStamp* stamp) {
  Sha256 sha;
  CT_TRY(read_chunks(file, 0, false, limit, stamp, [&](std::string_view chunk) { sha.update(chunk); }));
  return sha.hex();
}

WriteLockMark::WriteLockMark() : held_(write_locks()) { held_->fetch_add(1); }
WriteLockMark::~WriteLockMark() { held_->fetch_sub(1); }

bool write_lock_held() { return write_locks()->load() > 0; }

}  // namespace ct
