// Backup files of a project: one naming scheme, one listing, one rotation. Backups people ask for
// live in .cleo/backups/; the copies ct takes before it replaces or upgrades the store (safety
// backups) live in .cleo/backups/safety/, where no rotation of ordinary backups reaches them.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "core/clock.h"
#include "core/error.h"
#include "engines/project/project.h"

namespace ct {

/// Reserves a new file for a backup in `dir` (created when missing): tasks-<UTC stamp>-<seq>[-<note>].db,
/// the note reduced to a-z, 0-9 and dashes (at most 40 characters). The sequence number makes
/// names unique and lets them sort by time; the file is created empty (O_EXCL), so two processes
/// never pick the same name. The caller writes the database into it or removes it.
Result<std::filesystem::path> reserve_backup_path(const std::filesystem::path& dir, TimeMs now, std::string_view note);

struct BackupFile {
  std::filesystem::path path;
  bool safety = false;  // in .cleo/backups/safety/
};

/// Every backup of the project (both folders), newest first.
std::vector<BackupFile> list_backups(const Project& project);

/// Removes the oldest ordinary backups beyond `keep` (0 = keep all). `newest` — the backup just
/// made and verified — is never removed, so a verified backup always remains. Returns the names
/// removed.
std::vector<std::string> rotate_backups(const Project& project, std::int64_t keep, const std::filesystem::path& newest);

}  // namespace ct
