#include "domains/workspace.h"

#include <system_error>

#include "core/log.h"
#include "engines/project/git_worktree.h"
#include "engines/store/open/open_store.h"

namespace ct {

Place process_place() {
  std::error_code ec;
  const std::filesystem::path cwd = std::filesystem::current_path(ec);
  if (ec) return {};
  auto tree = git::locate(cwd);
  if (!tree) return {};
  return {tree->top.string(), tree->branch};
}

std::shared_ptr<Workspace> Workspace::open(std::optional<std::filesystem::path> explicit_dir) {
  return std::make_shared<Workspace>(std::move(explicit_dir));
}

Workspace::Workspace(std::optional<std::filesystem::path> explicit_dir) : dir_(std::move(explicit_dir)) {
  if (auto found = find_project(dir_)) project_ = std::move(*found);
}

Result<Project> Workspace::project() {
  std::lock_guard lock(mutex_);
  return project_locked();
}

Result<Project> Workspace::project_locked() {
  std::error_code ec;
  // A project whose tasks.db is still a file is still the project (one stat); anything else
  // (none yet, a removed store, one on a server) is looked for again as find_project does.
  if (project_ && std::filesystem::is_regular_file(project_->db_path(), ec)) return *project_;
  auto found = find_project(dir_);
  if (!found) {
    project_.reset();
    config_file_.clear();
    config_.reset();
    return std::unexpected(std::move(found.error()));
  }
  if (!project_ || project_->root != found->root) {
    project_ = *found;
    config_file_.clear();
    config_.reset();
  }
  return *found;
}

Result<Workspace::State> Workspace::state(bool opening) {
  std::lock_guard lock(mutex_);
  if (opening || !project_) CT_TRY(project_locked());
  CT_TRY(reload_locked(opening));
  return State{*project_, config_, store_location_};
}

Result<Workspace::Settings> Workspace::settings() {
  std::lock_guard lock(mutex_);
  if (!project_) CT_TRY(project_locked());
  CT_TRY(reload_locked(false));
  return Settings{config_, store_location_};
}

Result<void> Workspace::reload_locked(bool opening) {
  if (config_file_.empty()) config_file_ = project_->config_path();
  FileStamp now = file_stamp(config_file_);
  // A store being opened needs the file as it is; one already open may go on with the settings
  // read before when the file no longer parses.
  if (!config_ || now != config_stamp_ || (opening && !config_read_whole_)) {
    auto loaded = Config::load(config_file_);
    config_stamp_ = now;
    config_read_whole_ = loaded.has_value();
    if (loaded) {
      config_ = std::make_shared<const Config>(std::move(*loaded));
      // The config may name another store now (system.store.migrate with use, storage.url
      // edited by hand): routers on the old one open this one.
      store_location_ = project_store(*project_, *config_)->location();
    } else if (opening || !config_) {
      return std::unexpected(std::move(loaded.error()));
    } else {
      log::warn("cannot reload " + config_file_.string() + ": " + loaded.error().message +
                "; keeping the settings loaded before");
    }
  }
  return {};
}

Result<Workspace::OpenStore> Workspace::open_store(const StoreOpening& opening) {
  CT_TRY_ASSIGN(State state, this->state(/*opening=*/true));
  StoreOptions options = store_options(*state.config);
  options.migration_backups = state.project.safety_backups_dir();
  options.upgrade = opening.upgrade;
  options.clock = opening.clock;
  options.short_lived = opening.short_lived;
  std::unique_ptr<StoreBackend> backend = project_store(state.project, *state.config);
  OpenStore opened{.project = std::move(state.project), .config = std::move(state.config), .location = backend->location()};
  CT_TRY_ASSIGN(opened.store, backend->open(options));
  if (opening.check_integrity) {
    const std::string file = opened.project.db_path().string();
    bool first = false;
    {
      std::lock_guard lock(checked_mutex_);
      first = checked_.insert(file).second;
    }
    if (first)
      if (auto problems = opened.store->integrity_problems(); problems && !problems->empty())
        log::error(file + " failed its integrity check (" + problems->front() +
                   "); writes are refused until a restore (ct restore, or system.restore) brings a good backup back");
  }
  return opened;
}

}  // namespace ct
