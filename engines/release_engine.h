// The release engine: semantic versions, the changelog (rendered from a release's done tasks and
// merged into CHANGELOG.md section by section), the version-file bump, and the git steps of
// release.ship / tag / rollback. git runs only through the subprocess adapter (engines/subprocess.h):
// an argv, the project root as cwd, a minimal environment and a time limit. Nothing here touches
// the store; the release domain reads and writes it around these calls.
#pragma once

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"
#include "core/json.h"
#include "engines/store.h"
#include "engines/subprocess.h"

namespace ct {

/// ECMAScript pattern of a semantic version (semver.org 2.0.0), with an optional leading "v".
inline constexpr std::string_view kSemverPattern =
    "^v?(0|[1-9][0-9]*)\\.(0|[1-9][0-9]*)\\.(0|[1-9][0-9]*)"
    "(-(0|[1-9][0-9]*|[0-9]*[A-Za-z-][0-9A-Za-z-]*)(\\.(0|[1-9][0-9]*|[0-9]*[A-Za-z-][0-9A-Za-z-]*))*)?"
    "(\\+[0-9A-Za-z-]+(\\.[0-9A-Za-z-]+)*)?$";

/// "1.2.0" or "v1.2.0" → "1.2.0"; nullopt when the text is not a semantic version.
std::optional<std::string> normalize_semver(std::string_view text);

/// The git tag of a version: "v1.2.0".
std::string release_tag(std::string_view version);

/// The CHANGELOG.md section of one release: "## [1.2.0] - <date>", its notes, then its done tasks
/// grouped by label (Features, Fixes, Documentation, Maintenance) and else by type (Epics, Tasks).
/// Ends with one newline.
std::string render_changelog_section(const Release& release, const std::vector<Task>& done, std::string_view date);

/// `existing` (a whole CHANGELOG.md, possibly empty) with the section of `version` replaced by
/// `section`, or inserted before the first "## " heading (newest first) when it has none. Every
/// byte outside that section stays as it was.
std::string merge_changelog(std::string_view existing, std::string_view version, std::string_view section);

/// The section of `version` in a CHANGELOG.md text: from its "## " heading ("## [1.2.0] …",
/// "## 1.2.0", "## v1.2.0") up to the next "## " heading; nullopt when it has none.
std::optional<std::string_view> changelog_section(std::string_view changelog, std::string_view version);

/// A version file's text with its version string replaced by `next`: `previous` when it occurs,
/// else the first semantic version in the text. nullopt when `next` is already there (nothing to
/// do); E_VALIDATION when the text holds no version string.
Result<std::optional<std::string>> bump_version_text(std::string_view text, std::string_view previous,
                                                     std::string_view next);

/// How git is run for the release domain.
struct GitOptions {
  std::filesystem::path root;                    // the project root: cwd of every command
  std::chrono::milliseconds timeout{600'000};
};

/// The environment of git: minimal_environment plus git's identity and config variables when
/// the caller set them (GIT_AUTHOR_*, GIT_COMMITTER_*, GIT_CONFIG_GLOBAL, GIT_CONFIG_NOSYSTEM) and
/// SSH_AUTH_SOCK for pushes over ssh; GIT_TERMINAL_PROMPT=0 so git never waits for a password.
std::vector<std::string> git_environment();

/// Runs `git <args>` and returns its result (a failed run is a result, not an error).
Result<ProcessResult> run_git(const GitOptions& options, const std::vector<std::string>& args);

/// Runs `git <args>` and returns its stdout without the trailing newline; a failed run is an
/// error (E_ENGINE_FAILED / E_TIMEOUT with git's stderr tail).
Result<std::string> git_output(const GitOptions& options, const std::vector<std::string>& args, std::string_view what);

/// E_CAPABILITY_UNAVAILABLE unless the root is inside a git work tree.
Result<void> require_git_repo(const GitOptions& options);

/// One step of ship (or tag, rollback): a command, or a file written natively.
struct ReleaseStep {
  std::string name;                       // "gate", "changelog", "versionFile", "add", "commit", "tag", "push", "pushTag"
  std::vector<std::string> argv;          // the command; empty for a file write
  std::string file;                       // file write: the file, relative to the root
  std::string content;                    // file write: its new content
  std::vector<std::string> undo;          // the command that undoes it; empty when undo_text says how
  std::string undo_text;                  // how to undo it when no single command does
  bool gate = false;                      // a configured gate: a failure is E_VALIDATION
};

json::Value step_json(const ReleaseStep& step, bool with_undo);

/// What release.ship does, planned without changing anything: preflight reads of git (branch,
/// HEAD, the tag must not exist), the new changelog and version file, then the steps in order.
struct ShipInput {
  Release release;
  std::vector<Task> done;                 // the release's done tasks (changelog)
  std::string date;                       // the changelog date, YYYY-MM-DD
  std::string previous_version;           // the newest shipped version before this one ("" = none)
  std::vector<std::vector<std::string>> gates;  // argv of each gate, in order
  std::string version_file;               // relative to the root; "" = none
  std::string remote;
  bool push = false;
};

struct ShipPlan {
  std::string tag;
  std::string branch;
  std::string previous_head;              // "" in a repository without commits
  std::vector<ReleaseStep> steps;
};

Result<ShipPlan> plan_ship(const GitOptions& options, const ShipInput& input);

/// What running steps did: their order, and on failure the error (which lists the steps done,
/// each with its undo, in error.details).
struct StepsOutcome {
  std::vector<json::Value> done;
};

/// Runs the steps in order; the first failure stops and is returned with details.failedStep and
/// details.done (each done step with how to undo it, newest first).
Result<StepsOutcome> run_steps(const GitOptions& options, const std::vector<ReleaseStep>& steps);

}  // namespace ct
