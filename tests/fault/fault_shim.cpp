// libct_fault_shim.so — an LD_PRELOAD library that makes storage fail under one directory, so
// that tests can put `ct` on a full or read-only disk without mounting anything. It wraps the
// libc calls a process (SQLite included) writes files with; everything outside the directory,
// and everything the environment does not ask for, passes straight through.
//
//   CT_FAULT_DIR=/abs/dir   the directory the faults apply to (and everything below it)
//   CT_FAULT_MODE=enospc    a full disk: a write that would take the total size of the files under
//                           the directory past CT_FAULT_QUOTA bytes, or this process's bytes written
//                           there past CT_FAULT_BUDGET, is cut short at the limit (a short write,
//                           as a real file system does) and the next one fails with ENOSPC. The
//                           same for growing a file with ftruncate, fallocate, posix_fallocate,
//                           truncate, copy_file_range or sendfile. Shrinking and overwriting within
//                           a file's size are free under the quota (they take no new space).
//   CT_FAULT_MODE=erofs     a read-only file system: opening for writing, creating, removing,
//                           renaming, linking, truncating, changing modes/owners/times and writing
//                           under the directory fail with EROFS (mkdir of an existing directory
//                           fails with EEXIST first, as the kernel does).
//   CT_FAULT_LOG=/path      appends one line per injected fault: "<pid> <call> <errno name> <path>"
//                           (the file must be outside CT_FAULT_DIR).
//
// Wrapped calls are looked up with dlsym(RTLD_NEXT); the checks use only calls that are not
// wrapped (readlink, fstat, lseek, opendir…), so nothing recurses. Not for product code.
#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <string>

namespace {

enum class Mode { Off, Enospc, Erofs };

struct Config {
  Mode mode = Mode::Off;
  std::string dir;             // absolute, no trailing slash
  std::int64_t quota = -1;     // total bytes of the files under dir; -1 = none
  std::int64_t budget = -1;    // bytes this process may write under dir; -1 = none
  std::string log;
};

std::atomic<std::int64_t> g_written{0};  // bytes written under dir by this process

template <typename F>
F real(const char* name) {
  return reinterpret_cast<F>(dlsym(RTLD_NEXT, name));
}

std::int64_t env_number(const char* name) {
  const char* text = getenv(name);
  if (text == nullptr || *text == '\0') return -1;
  return strtoll(text, nullptr, 10);
}

const Config& config() {
  static const Config loaded = [] {
    Config c;
    const char* dir = getenv("CT_FAULT_DIR");
    const char* mode = getenv("CT_FAULT_MODE");
    if (dir == nullptr || *dir == '\0' || mode == nullptr) return c;
    char resolved[PATH_MAX];
    c.dir = realpath(dir, resolved) != nullptr ? resolved : dir;
    while (c.dir.size() > 1 && c.dir.back() == '/') c.dir.pop_back();
    if (strcmp(mode, "enospc") == 0) c.mode = Mode::Enospc;
    if (strcmp(mode, "erofs") == 0) c.mode = Mode::Erofs;
    c.quota = env_number("CT_FAULT_QUOTA");
    c.budget = env_number("CT_FAULT_BUDGET");
    if (const char* log = getenv("CT_FAULT_LOG")) c.log = log;
    return c;
  }();
  return loaded;
}

bool under_dir(const std::string& path) {
  const std::string& dir = config().dir;
  return path == dir || (path.size() > dir.size() && path.compare(0, dir.size(), dir) == 0 && path[dir.size()] == '/');
}

std::string fd_path(int fd) {
  char link[64];
  snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  char target[PATH_MAX];
  ssize_t n = readlink(link, target, sizeof target - 1);
  if (n <= 0) return "";
  return std::string(target, static_cast<std::size_t>(n));
}

/// `a/./b/../c` → `a/c`, for absolute paths.
std::string normalise(const std::string& path) {
  std::string out;
  std::size_t at = 0;
  while (at <= path.size()) {
    std::size_t slash = path.find('/', at);
    if (slash == std::string::npos) slash = path.size();
    std::string part = path.substr(at, slash - at);
    if (part == "..") {
      auto last = out.rfind('/');
      out.erase(last == std::string::npos ? 0 : last);
    } else if (!part.empty() && part != ".") {
      out += '/';
      out += part;
    }
    at = slash + 1;
  }
  return out.empty() ? "/" : out;
}

/// The absolute path `path` names relative to `dirfd` (AT_FDCWD: the working directory), with the
/// symbolic links of its parent directory resolved when it exists.
std::string absolute_path(int dirfd, const char* path) {
  if (path == nullptr) return "";
  std::string full;
  if (path[0] == '/') {
    full = path;
  } else if (dirfd == AT_FDCWD) {
    char cwd[PATH_MAX];
    full = std::string(getcwd(cwd, sizeof cwd) != nullptr ? cwd : "") + "/" + path;
  } else {
    full = fd_path(dirfd) + "/" + path;
  }
  full = normalise(full);
  auto slash = full.rfind('/');
  std::string parent = slash == 0 ? "/" : full.substr(0, slash);
  char resolved[PATH_MAX];
  if (realpath(parent.c_str(), resolved) != nullptr)
    full = normalise(std::string(resolved) + "/" + full.substr(slash + 1));
  return full;
}

const char* errno_name(int error) {
  switch (error) {
    case ENOSPC: return "ENOSPC";
    case EROFS: return "EROFS";
    case EEXIST: return "EEXIST";
    default: return "E?";
  }
}

/// Sets errno and returns -1.
int fail_with(int error) {
  errno = error;
  return -1;
}

/// Records an injected fault, sets errno and returns -1.
int inject(const char* call, const std::string& path, int error) {
  const std::string& log = config().log;
  if (!log.empty()) {
    static auto real_open = real<int (*)(const char*, int, ...)>("open");
    static auto real_write = real<ssize_t (*)(int, const void*, size_t)>("write");
    int fd = real_open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd >= 0) {
      std::string line = std::to_string(getpid()) + " " + call + " " + errno_name(error) + " " + path + "\n";
      real_write(fd, line.data(), line.size());
      close(fd);
    }
  }
  return fail_with(error);
}

// ---- a full disk ------------------------------------------------------------------------------

/// Total size of the regular files below `dir`.
std::int64_t usage(const std::string& dir) {
  std::int64_t total = 0;
  DIR* stream = opendir(dir.c_str());
  if (stream == nullptr) return 0;
  while (dirent* entry = readdir(stream)) {
    if (strcmp(entry->d_name, ".") == 0 || strcmp(entry->d_name, "..") == 0) continue;
    std::string path = dir + "/" + entry->d_name;
    struct stat info;
    if (lstat(path.c_str(), &info) != 0) continue;
    if (S_ISDIR(info.st_mode)) total += usage(path);
    else if (S_ISREG(info.st_mode)) total += info.st_size;
  }
  closedir(stream);
  return total;
}

/// How many of `length` bytes at `offset` of the file behind `fd` (under the directory) may be
/// written on the full disk: `length` when all fit, fewer for a short write, 0 when none does.
std::int64_t room(int fd, std::int64_t offset, std::int64_t length) {
  const Config& c = config();
  std::int64_t allowed = length;
  if (c.budget >= 0) allowed = std::min(allowed, std::max<std::int64_t>(0, c.budget - g_written.load()));
  if (c.quota >= 0) {
    struct stat info;
    std::int64_t size = fstat(fd, &info) == 0 ? info.st_size : 0;
    std::int64_t free_bytes = std::max<std::int64_t>(0, c.quota - usage(c.dir));
    // Bytes up to the current end of the file take no new space.
    allowed = std::min(allowed, std::max<std::int64_t>(0, size + free_bytes - offset));
  }
  return allowed;
}

/// The file offset a write() on `fd` goes to.
std::int64_t write_offset(int fd) {
  int flags = fcntl(fd, F_GETFL);
  if (flags >= 0 && (flags & O_APPEND) != 0) {
    struct stat info;
    return fstat(fd, &info) == 0 ? info.st_size : 0;
  }
  return lseek(fd, 0, SEEK_CUR);
}

/// Which fault, if any, applies to writing on `fd`: its path when it is under the directory and a
/// mode is on, else "".
std::string faulty_fd(int fd) {
  if (config().mode == Mode::Off || fd < 0) return "";
  std::string path = fd_path(fd);
  return under_dir(path) ? path : "";
}

/// Runs a write of `length` bytes at `offset` through the fault rules: `perform(n)` does the real
/// write of the first n bytes.
template <typename Perform>
ssize_t guarded_write(const char* call, int fd, std::int64_t offset, std::size_t length, Perform perform) {
  std::string path = faulty_fd(fd);
  if (path.empty()) return perform(length);
  if (config().mode == Mode::Erofs) return inject(call, path, EROFS);
  if (length == 0) return perform(length);
  std::int64_t allowed = room(fd, offset < 0 ? write_offset(fd) : offset, static_cast<std::int64_t>(length));
  if (allowed <= 0) return inject(call, path, ENOSPC);
  ssize_t done = perform(static_cast<std::size_t>(allowed));
  if (done > 0) g_written += done;
  return done;
}

/// Growing a file to `new_end` bytes (ftruncate, fallocate): 0 when allowed, else the errno.
int growth_fault(const char* call, int fd, std::int64_t new_end) {
  std::string path = faulty_fd(fd);
  if (path.empty()) return 0;
  if (config().mode == Mode::Erofs) {
    inject(call, path, EROFS);
    return EROFS;
  }
  struct stat info;
  std::int64_t size = fstat(fd, &info) == 0 ? info.st_size : 0;
  if (new_end <= size) return 0;
  if (room(fd, size, new_end - size) < new_end - size) {
    inject(call, path, ENOSPC);
    return ENOSPC;
  }
  g_written += new_end - size;
  return 0;
}

/// Gathers the first `length` bytes of an iovec array.
std::string gather(const struct iovec* iov, int count, std::size_t length) {
  std::string out;
  for (int i = 0; i < count && out.size() < length; ++i)
    out.append(static_cast<const char*>(iov[i].iov_base), std::min(iov[i].iov_len, length - out.size()));
  return out;
}

std::size_t iov_length(const struct iovec* iov, int count) {
  std::size_t total = 0;
  for (int i = 0; i < count; ++i) total += iov[i].iov_len;
  return total;
}

// ---- a read-only file system -----------------------------------------------------------------

bool erofs_path(int dirfd, const char* path, std::string& absolute) {
  if (config().mode != Mode::Erofs) return false;
  absolute = absolute_path(dirfd, path);
  return under_dir(absolute);
}

bool exists(const std::string& path) {
  struct stat info;
  return lstat(path.c_str(), &info) == 0;
}

/// Opening with these flags writes (or may create) on a read-only file system.
bool open_writes(const std::string& path, int flags) {
  if ((flags & O_ACCMODE) != O_RDONLY || (flags & O_TRUNC) != 0) return true;
  return (flags & O_CREAT) != 0 && !exists(path);
}

/// -1 with errno when opening `path` must fail, else 0.
int open_fault(const char* call, int dirfd, const char* path, int flags) {
  std::string absolute;
  if (erofs_path(dirfd, path, absolute) && open_writes(absolute, flags)) return inject(call, absolute, EROFS);
  return 0;
}

/// -1 with EROFS for a call that changes `path` on the read-only file system, else 0.
int change_fault(const char* call, int dirfd, const char* path) {
  std::string absolute;
  if (erofs_path(dirfd, path, absolute)) return inject(call, absolute, EROFS);
  return 0;
}

mode_t mode_argument(int flags, va_list args) {
  return (flags & O_CREAT) != 0 || (flags & O_TMPFILE) == O_TMPFILE ? static_cast<mode_t>(va_arg(args, int)) : 0;
}

}  // namespace

extern "C" {

// ---- writes -----------------------------------------------------------------------------------

ssize_t write(int fd, const void* data, size_t length) {
  static auto next = real<ssize_t (*)(int, const void*, size_t)>("write");
  return guarded_write("write", fd, -1, length, [&](std::size_t n) { return next(fd, data, n); });
}

ssize_t pwrite(int fd, const void* data, size_t length, off_t offset) {
  static auto next = real<ssize_t (*)(int, const void*, size_t, off_t)>("pwrite");
  return guarded_write("pwrite", fd, offset, length, [&](std::size_t n) { return next(fd, data, n, offset); });
}

ssize_t pwrite64(int fd, const void* data, size_t length, off64_t offset) {
  static auto next = real<ssize_t (*)(int, const void*, size_t, off64_t)>("pwrite64");
  return guarded_write("pwrite64", fd, offset, length, [&](std::size_t n) { return next(fd, data, n, offset); });
}

ssize_t writev(int fd, const struct iovec* iov, int count) {
  static auto next = real<ssize_t (*)(int, const struct iovec*, int)>("writev");
  static auto plain = real<ssize_t (*)(int, const void*, size_t)>("write");
  const std::size_t length = iov_length(iov, count);
  return guarded_write("writev", fd, -1, length, [&](std::size_t n) -> ssize_t {
    if (n == length) return next(fd, iov, count);
    std::string part = gather(iov, count, n);
    return plain(fd, part.data(), part.size());
  });
}

ssize_t pwritev(int fd, const struct iovec* iov, int count, off_t offset) {
  static auto next = real<ssize_t (*)(int, const struct iovec*, int, off_t)>("pwritev");
  static auto plain = real<ssize_t (*)(int, const void*, size_t, off_t)>("pwrite");
  const std::size_t length = iov_length(iov, count);
  return guarded_write("pwritev", fd, offset, length, [&](std::size_t n) -> ssize_t {
    if (n == length) return next(fd, iov, count, offset);
    std::string part = gather(iov, count, n);
    return plain(fd, part.data(), part.size(), offset);
  });
}

ssize_t pwritev64(int fd, const struct iovec* iov, int count, off64_t offset) {
  static auto next = real<ssize_t (*)(int, const struct iovec*, int, off64_t)>("pwritev64");
  static auto plain = real<ssize_t (*)(int, const void*, size_t, off64_t)>("pwrite64");
  const std::size_t length = iov_length(iov, count);
  return guarded_write("pwritev64", fd, offset, length, [&](std::size_t n) -> ssize_t {
    if (n == length) return next(fd, iov, count, offset);
    std::string part = gather(iov, count, n);
    return plain(fd, part.data(), part.size(), offset);
  });
}

ssize_t copy_file_range(int in, off64_t* in_offset, int out, off64_t* out_offset, size_t length,
                        unsigned int flags) {
  static auto next = real<ssize_t (*)(int, off64_t*, int, off64_t*, size_t, unsigned int)>("copy_file_range");
  return guarded_write("copy_file_range", out, out_offset ? *out_offset : -1, length,
                       [&](std::size_t n) { return next(in, in_offset, out, out_offset, n, flags); });
}

ssize_t sendfile(int out, int in, off_t* offset, size_t length) {
  static auto next = real<ssize_t (*)(int, int, off_t*, size_t)>("sendfile");
  return guarded_write("sendfile", out, -1, length, [&](std::size_t n) { return next(out, in, offset, n); });
}

ssize_t sendfile64(int out, int in, off64_t* offset, size_t length) {
  static auto next = real<ssize_t (*)(int, int, off64_t*, size_t)>("sendfile64");
  return guarded_write("sendfile64", out, -1, length, [&](std::size_t n) { return next(out, in, offset, n); });
}

int ftruncate(int fd, off_t length) {
  static auto next = real<int (*)(int, off_t)>("ftruncate");
  if (int error = growth_fault("ftruncate", fd, length)) return fail_with(error);
  return next(fd, length);
}

int ftruncate64(int fd, off64_t length) {
  static auto next = real<int (*)(int, off64_t)>("ftruncate64");
  if (int error = growth_fault("ftruncate64", fd, length)) return fail_with(error);
  return next(fd, length);
}

int fallocate(int fd, int mode, off_t offset, off_t length) {
  static auto next = real<int (*)(int, int, off_t, off_t)>("fallocate");
  if (int error = growth_fault("fallocate", fd, offset + length)) return fail_with(error);
  return next(fd, mode, offset, length);
}

int fallocate64(int fd, int mode, off64_t offset, off64_t length) {
  static auto next = real<int (*)(int, int, off64_t, off64_t)>("fallocate64");
  if (int error = growth_fault("fallocate64", fd, offset + length)) return fail_with(error);
  return next(fd, mode, offset, length);
}

// posix_fallocate returns the error number instead of setting errno.
int posix_fallocate(int fd, off_t offset, off_t length) {
  static auto next = real<int (*)(int, off_t, off_t)>("posix_fallocate");
  if (int error = growth_fault("posix_fallocate", fd, offset + length)) return error;
  return next(fd, offset, length);
}

int posix_fallocate64(int fd, off64_t offset, off64_t length) {
  static auto next = real<int (*)(int, off64_t, off64_t)>("posix_fallocate64");
  if (int error = growth_fault("posix_fallocate64", fd, offset + length)) return error;
  return next(fd, offset, length);
}

int truncate(const char* path, off_t length) {
  static auto next = real<int (*)(const char*, off_t)>("truncate");
  if (change_fault("truncate", AT_FDCWD, path) != 0) return -1;
  if (config().mode == Mode::Enospc) {
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd >= 0) {
      int error = growth_fault("truncate", fd, length);
      close(fd);
      if (error != 0) return fail_with(error);
    }
  }
  return next(path, length);
}

int truncate64(const char* path, off64_t length) { return truncate(path, length); }

// ---- opening files ------------------------------------------------------------------------------

int open(const char* path, int flags, ...) {
  static auto next = real<int (*)(const char*, int, ...)>("open");
  va_list args;
  va_start(args, flags);
  mode_t mode = mode_argument(flags, args);
  va_end(args);
  if (open_fault("open", AT_FDCWD, path, flags) != 0) return -1;
  return next(path, flags, mode);
}

int open64(const char* path, int flags, ...) {
  static auto next = real<int (*)(const char*, int, ...)>("open64");
  va_list args;
  va_start(args, flags);
  mode_t mode = mode_argument(flags, args);
  va_end(args);
  if (open_fault("open64", AT_FDCWD, path, flags) != 0) return -1;
  return next(path, flags, mode);
}

int openat(int dirfd, const char* path, int flags, ...) {
  static auto next = real<int (*)(int, const char*, int, ...)>("openat");
  va_list args;
  va_start(args, flags);
  mode_t mode = mode_argument(flags, args);
  va_end(args);
  if (open_fault("openat", dirfd, path, flags) != 0) return -1;
  return next(dirfd, path, flags, mode);
}

int openat64(int dirfd, const char* path, int flags, ...) {
  static auto next = real<int (*)(int, const char*, int, ...)>("openat64");
  va_list args;
  va_start(args, flags);
  mode_t mode = mode_argument(flags, args);
  va_end(args);
  if (open_fault("openat64", dirfd, path, flags) != 0) return -1;
  return next(dirfd, path, flags, mode);
}

// The _FORTIFY_SOURCE entry points of open (no mode argument: they never create).
int __open_2(const char* path, int flags) {
  static auto next = real<int (*)(const char*, int)>("__open_2");
  if (open_fault("__open_2", AT_FDCWD, path, flags) != 0) return -1;
  return next(path, flags);
}

int __open64_2(const char* path, int flags) {
  static auto next = real<int (*)(const char*, int)>("__open64_2");
  if (open_fault("__open64_2", AT_FDCWD, path, flags) != 0) return -1;
  return next(path, flags);
}

int __openat_2(int dirfd, const char* path, int flags) {
  static auto next = real<int (*)(int, const char*, int)>("__openat_2");
  if (open_fault("__openat_2", dirfd, path, flags) != 0) return -1;
  return next(dirfd, path, flags);
}

int __openat64_2(int dirfd, const char* path, int flags) {
  static auto next = real<int (*)(int, const char*, int)>("__openat64_2");
  if (open_fault("__openat64_2", dirfd, path, flags) != 0) return -1;
  return next(dirfd, path, flags);
}

int creat(const char* path, mode_t mode) { return open(path, O_WRONLY | O_CREAT | O_TRUNC, mode); }
int creat64(const char* path, mode_t mode) { return open64(path, O_WRONLY | O_CREAT | O_TRUNC, mode); }

/// fopen's mode as open flags: anything but "r" without '+' writes.
static int fopen_flags(const char* mode) {
  if (mode == nullptr) return O_RDONLY;
  bool plus = strchr(mode, '+') != nullptr;
  if (mode[0] == 'r') return plus ? O_RDWR : O_RDONLY;
  return (plus ? O_RDWR : O_WRONLY) | O_CREAT | (mode[0] == 'w' ? O_TRUNC : O_APPEND);
}

FILE* fopen(const char* path, const char* mode) {
  static auto next = real<FILE* (*)(const char*, const char*)>("fopen");
  if (open_fault("fopen", AT_FDCWD, path, fopen_flags(mode)) != 0) return nullptr;
  return next(path, mode);
}

FILE* fopen64(const char* path, const char* mode) {
  static auto next = real<FILE* (*)(const char*, const char*)>("fopen64");
  if (open_fault("fopen64", AT_FDCWD, path, fopen_flags(mode)) != 0) return nullptr;
  return next(path, mode);
}

// ---- changing the directory tree ------------------------------------------------------------------

int mkdir(const char* path, mode_t mode) {
  static auto next = real<int (*)(const char*, mode_t)>("mkdir");
  std::string absolute;
  if (erofs_path(AT_FDCWD, path, absolute)) {
    if (exists(absolute)) return fail_with(EEXIST);
    return inject("mkdir", absolute, EROFS);
  }
  return next(path, mode);
}

int mkdirat(int dirfd, const char* path, mode_t mode) {
  static auto next = real<int (*)(int, const char*, mode_t)>("mkdirat");
  std::string absolute;
  if (erofs_path(dirfd, path, absolute)) {
    if (exists(absolute)) return fail_with(EEXIST);
    return inject("mkdirat", absolute, EROFS);
  }
  return next(dirfd, path, mode);
}

int rmdir(const char* path) {
  static auto next = real<int (*)(const char*)>("rmdir");
  if (change_fault("rmdir", AT_FDCWD, path) != 0) return -1;
  return next(path);
}

int unlink(const char* path) {
  static auto next = real<int (*)(const char*)>("unlink");
  if (change_fault("unlink", AT_FDCWD, path) != 0) return -1;
  return next(path);
}

int unlinkat(int dirfd, const char* path, int flags) {
  static auto next = real<int (*)(int, const char*, int)>("unlinkat");
  if (change_fault("unlinkat", dirfd, path) != 0) return -1;
  return next(dirfd, path, flags);
}

int remove(const char* path) {
  static auto next = real<int (*)(const char*)>("remove");
  if (change_fault("remove", AT_FDCWD, path) != 0) return -1;
  return next(path);
}

int rename(const char* from, const char* to) {
  static auto next = real<int (*)(const char*, const char*)>("rename");
  if (change_fault("rename", AT_FDCWD, from) != 0 || change_fault("rename", AT_FDCWD, to) != 0) return -1;
  return next(from, to);
}

int renameat(int from_dir, const char* from, int to_dir, const char* to) {
  static auto next = real<int (*)(int, const char*, int, const char*)>("renameat");
  if (change_fault("renameat", from_dir, from) != 0 || change_fault("renameat", to_dir, to) != 0) return -1;
  return next(from_dir, from, to_dir, to);
}

int renameat2(int from_dir, const char* from, int to_dir, const char* to, unsigned int flags) {
  static auto next = real<int (*)(int, const char*, int, const char*, unsigned int)>("renameat2");
  if (change_fault("renameat2", from_dir, from) != 0 || change_fault("renameat2", to_dir, to) != 0) return -1;
  return next(from_dir, from, to_dir, to, flags);
}

int link(const char* from, const char* to) {
  static auto next = real<int (*)(const char*, const char*)>("link");
  if (change_fault("link", AT_FDCWD, to) != 0) return -1;
  return next(from, to);
}

int linkat(int from_dir, const char* from, int to_dir, const char* to, int flags) {
  static auto next = real<int (*)(int, const char*, int, const char*, int)>("linkat");
  if (change_fault("linkat", to_dir, to) != 0) return -1;
  return next(from_dir, from, to_dir, to, flags);
}

int symlink(const char* target, const char* path) {
  static auto next = real<int (*)(const char*, const char*)>("symlink");
  if (change_fault("symlink", AT_FDCWD, path) != 0) return -1;
  return next(target, path);
}

int symlinkat(const char* target, int dirfd, const char* path) {
  static auto next = real<int (*)(const char*, int, const char*)>("symlinkat");
  if (change_fault("symlinkat", dirfd, path) != 0) return -1;
  return next(target, dirfd, path);
}

int chmod(const char* path, mode_t mode) {
  static auto next = real<int (*)(const char*, mode_t)>("chmod");
  if (change_fault("chmod", AT_FDCWD, path) != 0) return -1;
  return next(path, mode);
}

int fchmodat(int dirfd, const char* path, mode_t mode, int flags) {
  static auto next = real<int (*)(int, const char*, mode_t, int)>("fchmodat");
  if (change_fault("fchmodat", dirfd, path) != 0) return -1;
  return next(dirfd, path, mode, flags);
}

int fchmod(int fd, mode_t mode) {
  static auto next = real<int (*)(int, mode_t)>("fchmod");
  if (config().mode == Mode::Erofs) {
    if (std::string path = faulty_fd(fd); !path.empty()) return inject("fchmod", path, EROFS);
  }
  return next(fd, mode);
}

int chown(const char* path, uid_t owner, gid_t group) {
  static auto next = real<int (*)(const char*, uid_t, gid_t)>("chown");
  if (change_fault("chown", AT_FDCWD, path) != 0) return -1;
  return next(path, owner, group);
}

int fchownat(int dirfd, const char* path, uid_t owner, gid_t group, int flags) {
  static auto next = real<int (*)(int, const char*, uid_t, gid_t, int)>("fchownat");
  if (change_fault("fchownat", dirfd, path) != 0) return -1;
  return next(dirfd, path, owner, group, flags);
}

int fchown(int fd, uid_t owner, gid_t group) {
  static auto next = real<int (*)(int, uid_t, gid_t)>("fchown");
  if (config().mode == Mode::Erofs) {
    if (std::string path = faulty_fd(fd); !path.empty()) return inject("fchown", path, EROFS);
  }
  return next(fd, owner, group);
}

int utimensat(int dirfd, const char* path, const struct timespec times[2], int flags) {
  static auto next = real<int (*)(int, const char*, const struct timespec*, int)>("utimensat");
  if (change_fault("utimensat", dirfd, path) != 0) return -1;
  return next(dirfd, path, times, flags);
}

}  // extern "C"
