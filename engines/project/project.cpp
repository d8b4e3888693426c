#include "engines/project/project.h"

#include <algorithm>
#include <cstdlib>
#include <string>
#include <system_error>
#include <vector>

#include "engines/project/config.h"
#include "engines/project/git_worktree.h"

namespace ct {
namespace {

namespace fs = std::filesystem;

Advice init_fix() { return call("system.init"); }

/// $CLEO_ROOT when set and non-empty.
std::optional<fs::path> cleo_root_env() {
  const char* root = std::getenv("CLEO_ROOT");
  if (root == nullptr || *root == '\0') return std::nullopt;
  return fs::path(root);
}

/// An absolute, normalised form of `dir`; falls back to the lexical form when the filesystem
/// cannot resolve it.
fs::path absolute_dir(const fs::path& dir) {
  std::error_code ec;
  fs::path resolved = fs::weakly_canonical(dir, ec);
  if (!ec) return resolved;
  fs::path absolute = fs::absolute(dir, ec);
  return ec ? dir.lexically_normal() : absolute.lexically_normal();
}

/// Whether the project in `dir` keeps its store on a PostgreSQL server rather than in
/// .cleo/tasks.db (store_location()): with CLEO_DATABASE_URL naming one, any .cleo/ directory; else
/// a config.json whose storage.url names one.
bool uses_server_store(const fs::path& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir / ".cleo", ec)) return false;
  if (!store_location(nullptr).url.empty()) return true;  // the environment decides alone
  const fs::path config = dir / ".cleo" / "config.json";
  if (!fs::is_regular_file(config, ec)) return false;
  auto loaded = Config::load(config);
  return loaded && !store_location(&*loaded).url.empty();
}

/// A project: .cleo/tasks.db is a file, or .cleo/config.json names a PostgreSQL store. For
/// recovery (`damaged`), a .cleo/ holding config.json or backups/ is one too, whatever became of
/// its tasks.db.
bool holds_project(const fs::path& dir, bool damaged) {
  std::error_code ec;
  if (fs::is_regular_file(dir / ".cleo" / "tasks.db", ec)) return true;
  if (uses_server_store(dir)) return true;
  return damaged && (fs::is_regular_file(dir / ".cleo" / "config.json", ec) ||
                     fs::is_directory(dir / ".cleo" / "backups", ec));
}

Error not_initialized(const fs::path& dir, bool walked) {
  std::string message = walked ? "no CLEO project found in " + dir.string() + " or any parent directory"
                               : "no CLEO project in " + dir.string() + " (no .cleo/tasks.db)";
  return Error(ErrorCode::NotInitialized, std::move(message))
      .with_fix(init_fix())
      .with_detail("searchedFrom", dir.string());
}

Error store_missing(const fs::path& dir) {
  return Error(ErrorCode::NotInitialized, "the project in " + dir.string() + " has no .cleo/tasks.db (removed or moved?)")
      .with_fix(call("system.restore") + " brings back the newest good backup; with no backup, " + init_fix() +
                " starts an empty store")
      .with_detail("searchedFrom", dir.string())
      .with_detail("damaged", true);
}

/// The project of the repository's main work tree when `dir` is the top of a linked git work tree
/// (issue 53: every work tree of a repository shares its store); none when `dir` is no such top or
/// the main work tree holds no project — an error when it holds one that lost its store.
std::optional<Result<Project>> shared_project(const fs::path& dir, bool damaged) {
  auto tree = git::at_top(dir);
  if (!tree || !tree->linked || tree->main.empty()) return std::nullopt;
  if (holds_project(tree->main, damaged)) return Project{tree->main};
  if (holds_project(tree->main, true)) return fail(store_missing(tree->main));
  return std::nullopt;
}

/// A directory named explicitly (--project or $CLEO_ROOT) must exist and hold the project itself.
Result<Project> project_at(const fs::path& dir, std::string_view source, bool damaged) {
  std::error_code ec;
  fs::path root = absolute_dir(dir);
  if (!fs::exists(root, ec)) {
    return fail(Error(ErrorCode::FileError, std::string(source) + " directory " + root.string() + " does not exist")
                    .with_fix("pass an existing project directory, or create it and " + init_fix()));
  }
  if (!fs::is_directory(root, ec)) {
    return fail(Error(ErrorCode::FileError, std::string(source) + " " + root.string() + " is not a directory")
                    .with_fix("pass the directory that holds .cleo/"));
  }
  if (!holds_project(root, damaged)) {
    if (auto shared = shared_project(root, damaged)) return std::move(*shared);
    return fail(holds_project(root, true) ? store_missing(root) : not_initialized(root, false));
  }
  return Project{root};
}

Result<Project> walk_to_project(const std::optional<std::filesystem::path>& explicit_dir, bool damaged) {
  if (explicit_dir && !explicit_dir->empty()) return project_at(*explicit_dir, "project", damaged);
  if (auto root = cleo_root_env()) return project_at(*root, "CLEO_ROOT", damaged);

  std::error_code ec;
  fs::path start = fs::current_path(ec);
  if (ec) {
    return fail(Error(ErrorCode::FileError, "cannot read the current directory: " + ec.message())
                    .with_fix("cd into the project directory, or pass --project <dir>"));
  }
  start = absolute_dir(start);
  for (fs::path dir = start;; dir = dir.parent_path()) {
    if (holds_project(dir, damaged)) return Project{dir};
    // A linked work tree without a store of its own (the usual case) uses its repository's.
    if (auto shared = shared_project(dir, damaged)) return std::move(*shared);
    // A project that lost its store is still the project here: never fall through to a parent's.
    if (holds_project(dir, true)) return fail(store_missing(dir));
    if (!dir.has_parent_path() || dir.parent_path() == dir) break;
  }
  return fail(not_initialized(start, true));
}

}  // namespace

bool is_postgresql_url(std::string_view target) {
  if (target.starts_with("postgresql://") || target.starts_with("postgres://")) return true;
  // libpq's key=value form: "host=db dbname=cleo user=ann"
  return target.find('=') != std::string_view::npos &&
         (target.find("host=") != std::string_view::npos || target.find("dbname=") != std::string_view::npos);
}

StoreLocation store_location(const Config* config) {
  StoreLocation out;
  if (const char* env = std::getenv("CLEO_DATABASE_URL"); env != nullptr && *env != '\0') out.url = env;
  if (const char* env = std::getenv("CLEO_DATABASE_SCHEMA"); env != nullptr && *env != '\0') out.schema = env;
  if (config != nullptr) {
    if (out.url.empty()) out.url = config->get_string("storage.url");
    if (out.schema.empty()) out.schema = config->get_string("storage.schema");
  }
  if (!is_postgresql_url(out.url)) out.url.clear();
  if (out.schema.empty()) out.schema = kDefaultStoreSchema;
  return out;
}

Result<Project> find_project(const std::optional<std::filesystem::path>& explicit_dir) {
  return walk_to_project(explicit_dir, false);
}

Result<Project> find_damaged_project(const std::optional<std::filesystem::path>& explicit_dir) {
  return walk_to_project(explicit_dir, true);
}

std::optional<Project> enclosing_project(const std::filesystem::path& dir) {
  fs::path start = absolute_dir(dir);
  for (fs::path up = start.parent_path(); !up.empty(); up = up.parent_path()) {
    if (holds_project(up, false)) return Project{up};
    if (!up.has_parent_path() || up.parent_path() == up) break;
  }
  return std::nullopt;
}

std::optional<SharedStore> shared_store(const std::filesystem::path& dir) {
  auto tree = git::locate(dir);
  if (!tree || !tree->linked) return std::nullopt;
  SharedStore out{.worktree = tree->top, .main = tree->main};
  if (!tree->main.empty() && holds_project(tree->main, true)) out.project = Project{tree->main};
  return out;
}

std::filesystem::path init_target(const std::optional<std::filesystem::path>& explicit_dir) {
  if (explicit_dir && !explicit_dir->empty()) return absolute_dir(*explicit_dir);
  if (auto root = cleo_root_env()) return absolute_dir(*root);
  std::error_code ec;
  fs::path cwd = fs::current_path(ec);
  return ec ? fs::path(".") : absolute_dir(cwd);
}

std::optional<fs::path> resolve_links(const fs::path& path) {
  std::error_code ec;
  fs::path absolute = fs::absolute(path, ec);
  if (ec) absolute = path;
  // The components still to walk, in order (a link's target is put back at the front).
  std::vector<fs::path> pending(absolute.begin(), absolute.end());
  std::reverse(pending.begin(), pending.end());
  fs::path out = absolute.root_path();
  int links = 0;
  while (!pending.empty()) {
    fs::path part = std::move(pending.back());
    pending.pop_back();
    if (part.empty() || part == "." || part == absolute.root_path() || part == absolute.root_directory()) continue;
    if (part == "..") {
      out = out.parent_path();
      continue;
    }
    fs::path next = out / part;
    if (!fs::is_symlink(fs::symlink_status(next, ec))) {
      out = std::move(next);
      continue;
    }
    if (++links > 40) return std::nullopt;
    fs::path target = fs::read_symlink(next, ec);
    if (ec) return std::nullopt;
    if (target.is_absolute()) out = target.root_path();
    std::vector<fs::path> parts(target.begin(), target.end());
    for (auto it = parts.rbegin(); it != parts.rend(); ++it) pending.push_back(*it);
  }
  return out;
}

bool lies_within(const fs::path& path, const fs::path& root) {
  auto resolved = resolve_links(path);
  auto base = resolve_links(root);
  if (!resolved || !base) return false;
  const fs::path relative = resolved->lexically_relative(*base);
  return !relative.empty() && relative != "." && *relative.begin() != "..";
}

Result<fs::path> project_file(const fs::path& root, const fs::path& path, bool anywhere) {
  const fs::path given = path.is_absolute() ? path : root / path;
  auto resolved = resolve_links(given);
  if (!resolved)
    return fail(Error(ErrorCode::Validation, path.string() + " leads through a loop of symbolic links")
                    .with_detail("file", path.string()));
  if (anywhere || lies_within(*resolved, root)) return std::move(*resolved);
  Error error(ErrorCode::Validation, path.string() + " is outside the project" +
                                         (resolved->lexically_normal() != given.lexically_normal()
                                              ? " (it leads to " + resolved->string() + ")"
                                              : std::string()));
  return fail(std::move(error).with_fix("name a file inside " + root.string()).with_detail("file", path.string()));
}

}  // namespace ct
