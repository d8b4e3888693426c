// The project a process serves, opened once where the process starts (cli/, the servers of
// gateway/ and programs/, tests' helpers) and passed to its routers: the project's root, its
// config (read again when config.json changes) and where its store is, and it opens that store
// for them. Routers keep only their store connection; what they know of the project comes from here.
#pragma once

#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>

#include "core/clock.h"
#include "core/error.h"
#include "core/file_stamp.h"
#include "domains/principal.h"
#include "engines/project/config.h"
#include "engines/project/project.h"
#include "engines/store/store.h"

namespace ct {

/// Where this process works (domains/principal.h): the git work tree of its working directory and
/// the branch it is on, read once per call of this function; "" for both outside git.
Place process_place();

/// One process's (or server's) view of its project. Thread-safe: a server's pooled routers share one.
class Workspace {
 public:
  /// The project found from `explicit_dir` (--project), else CLEO_ROOT, else the working directory
  /// upward (find_project). Finding none is no error here: operations that need no project
  /// (system.init, help, user-scope files) run without one, and a later call looks again (after
  /// system.init, or `ct init` in another process).
  static std::shared_ptr<Workspace> open(std::optional<std::filesystem::path> explicit_dir);
  explicit Workspace(std::optional<std::filesystem::path> explicit_dir);
  Workspace(const Workspace&) = delete;
  Workspace& operator=(const Workspace&) = delete;

  /// The directory as the caller named it (--project), if it did.
  const std::optional<std::filesystem::path>& dir() const { return dir_; }

  /// The project: the one found before while its store is still there, else looked for again
  /// (the error says why there is none).
  Result<Project> project();

  /// What a router opens its store with, as it is now.
  struct State {
    Project project;
    std::shared_ptr<const Config> config;
    std::string store_location;  // StoreBackend::location() of the store the config names
  };
  /// The project and its config. config.json is read again when it changed since it was read
  /// (another process ran config.set): one stat. `opening` (a router opening its store) checks the
  /// project as project() does and needs a config that parses; otherwise a file that no longer
  /// parses keeps the settings read before.
  Result<State> state(bool opening);

  /// What a router whose store is open checks before each call: the config and the store it
  /// names, as state(false) gives them, without copying the project.
  struct Settings {
    std::shared_ptr<const Config> config;
    std::string store_location;
  };
  Result<Settings> settings();

  /// How a router opens its store.
  struct StoreOpening {
    bool upgrade = true;            // false in read-only mode: not even a schema upgrade is written
    Clock* clock = nullptr;
    bool check_integrity = false;   // a long-running server's
    bool short_lived = false;       // a `ct` command's (StoreOptions::short_lived)
  };
  /// A store opened for a router, and the project, config and location it was opened with.
  struct OpenStore {
    std::unique_ptr<Store> store;
    Project project;
    std::shared_ptr<const Config> config;
    std::string location;  // StoreBackend::location()
  };
  /// Opens the store the project's config names (state(true)'s rules). With `check_integrity`, the
  /// first opening of each store in this workspace checks its integrity: a damaged store found so
  /// is logged, and writes are refused until a restore brings a good backup back.
  Result<OpenStore> open_store(const StoreOpening& opening);

 private:
  Result<Project> project_locked();
  /// Reads config.json again when its stamp moved (state()'s rules); the lock is held.
  Result<void> reload_locked(bool opening);

  const std::optional<std::filesystem::path> dir_;
  std::mutex mutex_;
  std::optional<Project> project_;
  std::filesystem::path config_file_;  // project_->config_path(), computed once per project
  std::shared_ptr<const Config> config_;  // of project_, when read
  FileStamp config_stamp_;
  bool config_read_whole_ = false;  // config_ is the file as config_stamp_ saw it (it parsed)
  std::string store_location_;
  std::mutex checked_mutex_;
  std::set<std::string> checked_;  // the stores whose integrity was checked (open_store)
};

}  // namespace ct
