#include "engines/store/backups.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <system_error>

#include "core/text.h"

namespace ct {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kPrefix = "tasks-";

bool is_backup_name(std::string_view name) {
  return name.starts_with(kPrefix) && name.ends_with(".db") && !name.starts_with(".");
}

std::vector<fs::path> backups_in(const fs::path& dir) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    std::error_code type_ec;
    if (entry.is_regular_file(type_ec) && is_backup_name(entry.path().filename().string())) out.push_back(entry.path());
  }
  return out;
}

}  // namespace

Result<fs::path> reserve_backup_path(const fs::path& dir, TimeMs now, std::string_view note) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec)
    return fail(Error(ErrorCode::FileError, "cannot create " + dir.string() + ": " + ec.message())
                    .with_fix("check the free space and permissions of " + dir.parent_path().string()));
  std::string stamp = format_iso8601(now);
  std::erase_if(stamp, [](char c) { return c == '-' || c == ':'; });
  const std::string base = std::string(kPrefix) + stamp + "-";
  std::string suffix;
  if (!note.empty()) {
    std::string slug;
    for (char c : to_lower_ascii(note)) slug += (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ? c : '-';
    suffix = "-" + slug.substr(0, 40);
  }
  // The next sequence number after those of the same second already present.
  int seq = 1;
  for (const auto& path : backups_in(dir)) {
    std::string name = path.filename().string();
    if (!name.starts_with(base)) continue;
    int value = 0;
    std::size_t i = base.size();
    for (; i < name.size() && name[i] >= '0' && name[i] <= '9'; ++i) value = value * 10 + (name[i] - '0');
    if (i > base.size()) seq = std::max(seq, value + 1);
  }
  for (int attempt = 0; attempt < 1000; ++attempt, ++seq) {
    std::string number = std::to_string(seq);
    if (number.size() < 3) number.insert(0, 3 - number.size(), '0');
    fs::path file = dir / (base + number + suffix + ".db");
    int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd >= 0) {
      ::close(fd);
      return file;
    }
    if (errno != EEXIST)
      return fail(Error(ErrorCode::FileError, "cannot create " + file.string() + ": " + std::strerror(errno))
                      .with_fix("check the free space and permissions of " + dir.string()));
  }
  return fail(Error(ErrorCode::FileError, "cannot find a free backup name in " + dir.string()));
}

std::vector<BackupFile> list_backups(const Project& project) {
  struct Found {
    BackupFile file;
    fs::file_time_type time;
  };
  std::vector<Found> found;
  for (bool safety : {false, true}) {
    for (auto& path : backups_in(safety ? project.safety_backups_dir() : project.backups_dir())) {
      std::error_code ec;
      auto time = fs::last_write_time(path, ec);
      found.push_back({{std::move(path), safety}, time});
    }
  }
  // Newest first: by modification time, then by name (names sort by time too; under a fixed test
  // clock several backups share a second and only their sequence numbers differ).
  std::sort(found.begin(), found.end(), [](const Found& a, const Found& b) {
    if (a.time != b.time) return a.time > b.time;
    return a.file.path.filename() > b.file.path.filename();
  });
  std::vector<BackupFile> out;
  for (auto& item : found) out.push_back(std::move(item.file));
  return out;
}

std::vector<std::string> rotate_backups(const Project& project, std::int64_t keep, const fs::path& newest) {
  std::vector<std::string> removed;
  if (keep <= 0) return removed;
  std::vector<fs::path> ordinary = backups_in(project.backups_dir());
  std::sort(ordinary.begin(), ordinary.end(), [](const fs::path& a, const fs::path& b) {
    return a.filename() > b.filename();  // newest first
  });
  std::error_code ec;
  std::int64_t kept = 0;
  for (const auto& path : ordinary) {
    const bool is_newest = fs::equivalent(path, newest, ec);
    if (is_newest || kept < keep) {
      ++kept;
      continue;
    }
    if (fs::remove(path, ec)) removed.push_back(path.filename().string());
  }
  return removed;
}

}  // namespace ct
