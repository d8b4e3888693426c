// Locating a CLEO project (.cleo/ with tasks.db) and creating one.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "core/clock.h"
#include "core/error.h"

namespace ct {

class Config;

struct Project {
  std::filesystem::path root;  // the directory holding .cleo/

  std::filesystem::path cleo_dir() const { return root / ".cleo"; }
  std::filesystem::path db_path() const { return cleo_dir() / "tasks.db"; }
  std::filesystem::path config_path() const { return cleo_dir() / "config.json"; }
  std::filesystem::path backups_dir() const { return cleo_dir() / "backups"; }
  /// Copies taken before the store is replaced or upgraded (engines/store/backups.h).
  std::filesystem::path safety_backups_dir() const { return backups_dir() / "safety"; }
};

/// Where a project keeps its store: the PostgreSQL server `url` names, in `schema` — or, `url`
/// empty, SQLite in .cleo/tasks.db.
struct StoreLocation {
  std::string url;
  std::string schema;
};

/// The default schema of a PostgreSQL store.
inline constexpr std::string_view kDefaultStoreSchema = "cleo";

/// The one decision of which store a project uses: the PostgreSQL store that CLEO_DATABASE_URL or
/// `config`'s storage.url names (is_postgresql_url), in the schema CLEO_DATABASE_SCHEMA or
/// storage.schema names (kDefaultStoreSchema); else SQLite. The environment wins over the
/// configuration, so that one machine can point a project elsewhere without editing it; without a
/// `config` (none read yet, or none) only the environment counts.
StoreLocation store_location(const Config* config);

/// Whether `target` names a PostgreSQL server (postgresql://, postgres://, or key=value with host=
/// or dbname=) rather than a file.
bool is_postgresql_url(std::string_view target);

/// The directory a command should treat as the project: `explicit_dir` (--project), else
/// $CLEO_ROOT, else the nearest ancestor of the current directory holding .cleo/ (like git) — where
/// the top of a linked git work tree without a store of its own stands for its repository's main
/// work tree (SharedStore), and so does a --project or CLEO_ROOT naming that top.
/// Fails with E_NOT_INITIALIZED (fix: system.init) when none is found; `start` is where the
/// walk began, so init can be offered there.
Result<Project> find_project(const std::optional<std::filesystem::path>& explicit_dir);

/// The same walk, for recovery: a .cleo/ whose tasks.db is missing or is not a regular file still
/// marks a project when it holds config.json or backups/.
Result<Project> find_damaged_project(const std::optional<std::filesystem::path>& explicit_dir);

/// The nearest project above `dir` (its parent, grandparent…: a .cleo/ holding tasks.db), if any:
/// where a project created in `dir` would nest.
std::optional<Project> enclosing_project(const std::filesystem::path& dir);

/// A linked git work tree (`git worktree add`, engines/project/git_worktree.h) and the project its
/// repository's main work tree holds: the store find_project gives every folder of the linked work
/// tree that has no store of its own, so that agents in sibling or nested work trees share one.
struct SharedStore {
  std::filesystem::path worktree;        // the linked work tree's top-level directory
  std::filesystem::path main;            // the main work tree (empty for a bare repository)
  std::optional<Project> project;        // the main work tree's project, when it has one
};
/// The linked work tree `dir` lies in, if any (a main work tree, a submodule or no git: none).
std::optional<SharedStore> shared_store(const std::filesystem::path& dir);

/// Where `system.init` would create a project: `explicit_dir`, else $CLEO_ROOT, else the cwd.
std::filesystem::path init_target(const std::optional<std::filesystem::path>& explicit_dir);

/// The absolute path the filesystem reaches through `path`: every symbolic link on the way is
/// followed — parent folders as well as the last component, a dangling link to where it points
/// — and the part that does not exist yet is kept as written. Nullopt for a symlink loop (more
/// than 40 links followed).
std::optional<std::filesystem::path> resolve_links(const std::filesystem::path& path);

/// Whether `path`, resolved through its symlinks (resolve_links), lies inside `root` (resolved
/// likewise), `root` itself excluded. The one containment check for files a caller may only
/// write within the project: a link anywhere on the way (`.vscode -> /elsewhere`) counts.
bool lies_within(const std::filesystem::path& path, const std::filesystem::path& root);

/// Where a file a caller names really is, for reading it on the caller's behalf (core/file_read.h
/// reads it): `path` (relative to `root`, or absolute) resolved through every link, when that
/// lies inside `root` — or anywhere, when `anywhere` (a person allowed it). E_VALIDATION naming
/// the file and where it leads otherwise: a link inside the project to /proc/self/pagemap or to
/// another folder is outside it.
Result<std::filesystem::path> project_file(const std::filesystem::path& root, const std::filesystem::path& path,
                                           bool anywhere = false);

}  // namespace ct
