// Locating a CLEO project (.cleo/ with tasks.db) and creating one.
#pragma once

#include <filesystem>
#include <optional>

#include <string_view>

#include "core/clock.h"
#include "core/error.h"

namespace ct {

struct Project {
  std::filesystem::path root;  // the directory holding .cleo/

  std::filesystem::path cleo_dir() const { return root / ".cleo"; }
  std::filesystem::path db_path() const { return cleo_dir() / "tasks.db"; }
  std::filesystem::path config_path() const { return cleo_dir() / "config.json"; }
  std::filesystem::path backups_dir() const { return cleo_dir() / "backups"; }
};

/// A new, unused path in `dir` in the one backup naming scheme, tasks-<UTC stamp>[-<note>].db
/// (the note reduced to a-z, 0-9 and dashes, at most 40 characters; -2, -3… when taken). Names
/// sort by time.
std::filesystem::path new_backup_path(const std::filesystem::path& dir, TimeMs now, std::string_view note);

/// The directory a command should treat as the project: `explicit_dir` (--project), else
/// $CLEO_ROOT, else the nearest ancestor of the current directory holding .cleo/ (like git).
/// Fails with E_NOT_INITIALIZED (fix: system.init) when none is found; `start` is where the
/// walk began, so init can be offered there.
Result<Project> find_project(const std::optional<std::filesystem::path>& explicit_dir);

/// Where `system.init` would create a project: `explicit_dir`, else $CLEO_ROOT, else the cwd.
std::filesystem::path init_target(const std::optional<std::filesystem::path>& explicit_dir);

}  // namespace ct
