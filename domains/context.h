// What a handler may use while serving one call: the store, clock, config, project, who is
// calling, and the audit entry it fills with what it changed. Plain data of the call: a handler
// that runs other operations' calls is handed the router's NestedRuns (domains/nested_runs.h).
#pragma once

#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "core/clock.h"
#include "core/error.h"
#include "engines/project/config.h"
#include "engines/project/project.h"
#include "engines/store/store.h"
#include "domains/capabilities.h"
#include "domains/principal.h"
#include "domains/registry.h"
#include "domains/workspace.h"

namespace ct {

class Context {
 public:
  const Registry* registry = nullptr;    // every operation of the product (set by the router)
  Store* store = nullptr;                // null for operations with needs_project = false
  Clock* clock = nullptr;
  const Config* config = nullptr;
  std::optional<Project> project;        // resolved project, when there is one
  /// The project of the process (never null under the router): operations that run without the
  /// store find the project, its directory as given (--project) and its config here.
  Workspace* workspace = nullptr;
  std::string session;                   // current session id, empty when none
  std::string agent;                     // calling agent, when known
  bool agent_is_fixed = false;           // `agent` wins over the session's (RouterOptions)
  AuditEntry* audit = nullptr;           // mutations record their changes here
  /// What can run here (system.capabilities, system.health); null when the caller gave none.
  CapabilityResolver* capabilities = nullptr;
  /// The reply of the spec's external step (a subprocess), when it has one. A bulk call runs the
  /// step for each of its tasks first (`externals`, by task id); each task's handler sees its own.
  std::optional<Reply> external;
  std::map<std::string, Reply> externals;
  /// The call keeps nothing (a query, a dry run): what runs inside it is taken back, so it may run
  /// even in read-only mode (plan.diff on a read-only dashboard).
  bool keeps_nothing = false;
  /// Set by session operations: the caller's session after a successful call ("" = none). The
  /// router adopts it for later calls (a connection or CLI invocation stays bound).
  std::optional<std::string> rebind;
  bool config_changed = false;           // the router reloads config.json after the call
  /// Why the store could not be opened, for operations that run on a damaged store
  /// (OperationSpec::runs_on_damaged_store); `store` is null then.
  std::optional<Error> store_error;
  /// Who calls, as the transport established it (domains/principal.h). A person may name files
  /// outside the project, change the keys only people set (SetBy::People), approve, verify and
  /// reclaim; an agent — over MCP, or `ct` from an agent's shell — may not.
  Principal principal;
  /// The git work tree and branch the caller works in, as the transport knows them ("" unknown).
  Place place;
  /// The user's home directory, for user-scope files (agent hosts' configuration): set by tests
  /// and embedders; none means $HOME at the time of the call.
  std::optional<std::filesystem::path> home;

  TimeMs now() { return clock->now(); }
  /// Where external programs run and probes look: the project root, else the directory the
  /// caller named, else the working directory.
  std::filesystem::path root() const {
    if (project) return project->root;
    return workspace->dir() ? *workspace->dir() : std::filesystem::current_path();
  }
  /// The top-level folder of the git work tree `dir` is the top of, when it is a work tree of the
  /// project's repository (shares its git common directory), else none. Read from git's files
  /// (engines/project/git_worktree.h), not by running git.
  std::optional<std::filesystem::path> project_worktree(const std::filesystem::path& dir) const;
  /// Where the caller works when it is a work tree of the project's own repository (a linked
  /// worktree ../wt-a, or the main checkout itself); else none (HTTP, which knows no place; a folder
  /// of another repository; no git).
  Place project_place() const;
  /// Where the files of the caller's work are (issue 53): its work tree when project_place()
  /// names one, else root(). The store, config and project files stay at root(); what a caller
  /// changed, hashes, tests and reads as its work — evidence files and commits, the test command,
  /// memory file scopes, a task's files — is read here. A project in a folder of its repository (a
  /// monorepo's sub/) is that folder of the caller's work tree. Computed once per call.
  const std::filesystem::path& work_root() const;
  /// The project's folder in the work tree whose top is `top` (one of its repository's): root() in
  /// the project's own work tree, else `top`, or the same subfolder of it as root() is of the project's.
  std::filesystem::path work_root_in(const std::filesystem::path& top) const;
  /// `home`, else $HOME; E_CONFIG_ERROR when neither is set.
  Result<std::filesystem::path> home_dir() const {
    if (home) return *home;
    const char* value = std::getenv("HOME");
    if (!value || !*value)
      return fail(Error(ErrorCode::ConfigError, "HOME is not set: the user's files cannot be found")
                      .with_fix("set HOME, or use the project scope"));
    return std::filesystem::path(value);
  }
  /// Whether this call may read or write outside the project: a person on the command line, or a
  /// project whose config sets security.allowOutsideProject (read here for operations that run
  /// without the store, which the router loads the config with).
  bool may_leave_project() const {
    if (is_person()) return true;
    if (project) return config->get_bool("security.allowOutsideProject");
    auto state = workspace->state(/*opening=*/true);
    return state && state->config->get_bool("security.allowOutsideProject");
  }
  /// How a person lets agents past the project's edge, for the fix of a refusal by may_leave_project.
  static Advice let_agents_leave_project() {
    return "to let agents do it, " + config_set_fix("security.allowOutsideProject", json::Value(true));
  }
  /// Whether this caller may set `key` to `value`: a key only people set refuses an agent with
  /// E_MUTATION_DISABLED, naming the key and what a person runs instead.
  Result<void> may_set_config(const ConfigKey& key, const json::Value& value) const {
    if (is_person() || key.set_by == SetBy::Anyone) return {};
    return fail(Error(ErrorCode::MutationDisabled,
                      std::string(key.name) + " widens what agents may do: only a person changes it, not an agent")
                    .with_fix(config_set_fix(key.name, value))
                    .with_detail("key", std::string(key.name))
                    .with_detail("setBy", "people"));
  }
  bool is_person() const { return principal.is_person(); }
  Store& db() { return *store; }
  /// Who is calling, for records that name an agent: the bound session's agent, else the caller's.
  Result<std::string> agent_name() {
    if (!session.empty() && store && !agent_is_fixed) {
      auto found = store->get_session(session);
      if (!found) return std::unexpected(std::move(found.error()));
      if (*found && !(*found)->agent.empty()) return (*found)->agent;
    }
    return agent;
  }
  void bind_session(std::string id) { rebind = std::move(id); }
  void record(FieldChange change) {
    if (audit) audit->changes.push_back(std::move(change));
  }
 private:
  mutable std::optional<std::filesystem::path> work_root_;  // work_root(), once known
};

}  // namespace ct
