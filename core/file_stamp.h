// What identifies one version of a file cheaply: device, inode, size and modification time. Two
// equal stamps mean "not replaced, not rewritten" for files written whole (config.json).
#pragma once

#include <sys/stat.h>

#include <cstdint>
#include <filesystem>

namespace ct {

struct FileStamp {
  std::uint64_t device = 0;
  std::uint64_t inode = 0;
  std::int64_t size = -1;  // -1: the file did not exist
  std::int64_t mtime_ns = 0;

  friend bool operator==(const FileStamp&, const FileStamp&) = default;
};

inline FileStamp file_stamp(const std::filesystem::path& file) {
  struct stat st{};
  if (::stat(file.c_str(), &st) != 0) return FileStamp{};
  return FileStamp{static_cast<std::uint64_t>(st.st_dev), static_cast<std::uint64_t>(st.st_ino),
                   static_cast<std::int64_t>(st.st_size),
                   static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec};
}

}  // namespace ct
