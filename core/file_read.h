// Reading a file on a caller's behalf (a memory anchor, an evidence file, a file to import, a
// skill, a manifest): a regular file only — never a FIFO, a device or a /proc file that never
// ends —, at most a stated number of bytes, within a deadline. A file the caller names is found
// inside the project first (engines/project/project.h, `project_file`); this is the read itself.
//
// And never while this thread holds a store's write lock: every other writer would wait for the
// file. The store backends mark the lock (`WriteLockMark`, held from begin(Write) to commit or
// rollback); a read under it is refused as a bug (E_INTERNAL), so the rule holds by construction,
// not by review: what a mutation reads, it reads in its external step, before its transaction.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>

#include "core/error.h"
#include "core/file_stamp.h"

namespace ct {

struct ReadLimit {
  std::int64_t max_bytes = 0;
  std::chrono::milliseconds deadline{10000};
  /// The product's own small file (.cleo/config.json, which a router reads again when it changed,
  /// inside a call's transaction too): still regular and bounded, but allowed under the write lock.
  bool own_file = false;
};

/// What files hashed on a caller's behalf (memory anchors, evidence) may be: larger ones are
/// refused at once by their size, before a byte is read.
inline constexpr ReadLimit kHashLimit{64LL << 20, std::chrono::milliseconds(10000)};

/// The bytes of the regular file `file` (links followed), and its stamp when opened. E_NOT_FOUND
/// when it is not there; E_VALIDATION with details.reason "notRegular" (a folder, device, FIFO or
/// socket), "tooLarge" (more than `limit.max_bytes`, with details.size when the file says it; also
/// a file that reports no size and reads on past it, such as /proc's) or "slow" (not read within
/// the deadline); E_FILE_ERROR when it cannot be read; E_INTERNAL under a store's write lock.
Result<std::string> read_regular_file(const std::filesystem::path& file, ReadLimit limit, FileStamp* stamp = nullptr);

/// At most `limit.max_bytes` of the regular file `file` from byte `offset` (a file others append
/// to, read in parts): what is there now, never an error for more. Errors as read_regular_file's.
Result<std::string> read_regular_file_part(const std::filesystem::path& file, std::int64_t offset, ReadLimit limit);

/// The SHA-256 (lowercase hex) of the regular file `file`, read as read_regular_file reads it,
/// without holding it in memory.
Result<std::string> hash_regular_file(const std::filesystem::path& file, ReadLimit limit, FileStamp* stamp = nullptr);

/// Held by a store while its write transaction is open, marking the thread that began it (a
/// transaction ended from another thread still unmarks the one that began it).
class WriteLockMark {
 public:
  WriteLockMark();
  ~WriteLockMark();
  WriteLockMark(const WriteLockMark&) = delete;
  WriteLockMark& operator=(const WriteLockMark&) = delete;

 private:
  std::shared_ptr<std::atomic<int>> held_;  // the beginning thread's count
};

/// Whether this thread holds a store's write lock now.
bool write_lock_held();

}  // namespace ct
