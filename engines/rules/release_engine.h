// The release engine: semantic versions, the changelog (rendered from a release's done tasks and
// merged into CHANGELOG.md section by section), the version-file bump, and the git steps of
// release.ship / tag / rollback. git runs only through the subprocess adapter (engines/adapters/subprocess.h):
// an argv, the project root as cwd, a minimal environment and a time limit. Nothing here touches
// the store; the release domain reads and writes it around these calls.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"
#include "core/json.h"
#include "engines/store/release_store.h"
#include "engines/store/task.h"
#include "engines/adapters/subprocess.h"

namespace ct {

/// The most of a release file (CHANGELOG.md, a version file) the release reads.
inline constexpr std::int64_t kMaxReleaseFileBytes = 16LL << 20;

/// ECMAScript pattern of a semantic version (semver.org 2.0.0), with an optional leading "v": the
/// pattern of the `version` param in the operations' schemas. The engine itself checks versions
/// with is_semver(), a scanner (libstdc++'s std::regex recurses per character).
inline constexpr std::string_view kSemverPattern =
    "^v?(0|[1-9][0-9]*)\\.(0|[1-9][0-9]*)\\.(0|[1-9][0-9]*)"
    "(-(0|[1-9][0-9]*|[0-9]*[A-Za-z-][0-9A-Za-z-]*)(\\.(0|[1-9][0-9]*|[0-9]*[A-Za-z-][0-9A-Za-z-]*))*)?"
    "(\\+[0-9A-Za-z-]+(\\.[0-9A-Za-z-]+)*)?$";

/// Whether `text` is a semantic version without a leading "v" (what kSemverPattern accepts after it).
bool is_semver(std::string_view text);

/// "1.2.0" or "v1.2.0" → "1.2.0"; nullopt when the text is not a semantic version.
std::optional<std::string> normalize_semver(std::string_view text);

/// The git tag of a version: "v1.2.0".
std::string release_tag(std::string_view version);

/// The CHANGELOG.md section of one release: "## [1.2.0] - <date>", its notes, then its done tasks
/// grouped by label (Features, Fixes, Documentation, Maintenance) and else by type (Epics, Tasks).
/// A line of the notes that reads as a release heading is escaped ("\## [2.0.0]"), so the section
/// holds exactly one. Ends with one newline.
std::string render_changelog_section(const Release& release, const std::vector<Task>& done, std::string_view date);

/// `existing` (a whole CHANGELOG.md, possibly empty) with the section of `version` replaced by
/// `section`, or inserted before the first release heading (newest first) when it has none. Every
/// byte outside that section stays as it was.
std::string merge_changelog(std::string_view existing, std::string_view version, std::string_view section);

/// The section of `version` in a CHANGELOG.md text: from its heading ("## [1.2.0] …", "## 1.2.0",
/// "## v1.2.0") up to the next release heading — a version's or "## [Unreleased]"; other "## "
/// headings (in a release's notes) belong to the section. nullopt when it has none.
std::optional<std::string_view> changelog_section(std::string_view changelog, std::string_view version);

/// Where the version of a project is written in a version file: the bytes to replace.
struct VersionField {
  std::size_t offset = 0;
  std::size_t length = 0;
  bool numeric_only = false;  // CMake's project(VERSION) takes numbers only: no pre-release or build
};

/// The version field of a version file, by its format, from its name: package.json (any *.json:
/// the top-level "version"), pyproject.toml and Cargo.toml (any *.toml: `version` of [project],
/// [tool.poetry], [package] or [workspace.package]), CMakeLists.txt (and *.cmake: the VERSION of
/// project()); any other file must hold exactly one version string, as a whole token (a bare
/// VERSION file). E_VALIDATION naming the file when the field is missing, there is more than one,
/// or its value is not a literal string.
Result<VersionField> find_version_field(std::string_view file, std::string_view text);

/// A version file's text with its version field (find_version_field) set to `next`; nullopt when
/// it already holds `next`.
Result<std::optional<std::string>> bump_version_text(std::string_view file, std::string_view text,
                                                     std::string_view next);

/// E_VALIDATION unless `relative` names a file inside the project root itself: a relative path,
/// not under .git, and no symbolic link on the way (its canonical path is the root's canonical
/// path joined with it), so that nothing outside the project is ever written. `what` names the
/// setting in the message ("release.versionFile").
Result<void> check_release_file(const std::filesystem::path& root, std::string_view relative, std::string_view what);

/// How git is run for the release domain.
struct GitOptions {
  std::filesystem::path root;                    // the project root: cwd of every command
  std::chrono::milliseconds timeout{600'000};
};

/// The environment of git: minimal_environment plus git's identity and config variables when
/// the caller set them (GIT_AUTHOR_*, GIT_COMMITTER_*, GIT_CONFIG_GLOBAL, GIT_CONFIG_NOSYSTEM) and
/// SSH_AUTH_SOCK for pushes over ssh; GIT_TERMINAL_PROMPT=0 so git never waits for a password, and
/// GIT_LITERAL_PATHSPECS=1 so a file's name is never a pattern ("*.json", ":(glob)…").
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
  std::string copy;                       // file write: where its content before the step is kept
                                          // (relative to the root) for the undo; "" = it did not exist
  std::vector<std::string> undo;          // the command that undoes it; empty when undo_text says how
  std::string undo_text;                  // how to undo it when no single command does
  bool gate = false;                      // a configured gate: a failure is E_VALIDATION
};

json::Value step_json(const ReleaseStep& step, bool with_undo);

/// What release.ship does, planned without changing anything: preflight reads of git (branch,
/// HEAD, the tag must not exist), the new changelog and version file, then the steps in order.
///
/// The release's files (CHANGELOG.md, the version file) are planned from HEAD, what is committed:
/// their new content is HEAD's with this release's section and version, and the commit step is
/// planned while HEAD does not hold that yet. So a retry after a partial run plans exactly what is
/// left (a file that already holds its new content is not written again; the commit is planned
/// until it happened). Before anything runs, the plan refuses (E_VALIDATION) uncommitted edits of
/// the user in those files — in the work tree or staged — other than this release's own section
/// of CHANGELOG.md (which release.changelog may have written): they would be folded into the
/// release commit. Other files are never staged or committed, whatever their state. Each release
/// file is checked before any step too: inside the project (check_release_file), a regular file,
/// and not ignored by git unless HEAD holds it.
struct ShipInput {
  Release release;
  std::vector<Task> done;                 // the release's done tasks (changelog)
  std::string date;                       // the changelog date, YYYY-MM-DD
  std::vector<std::vector<std::string>> gates;  // argv of each gate, in order
  std::string version_file;               // relative to the root; "" = none
  std::string remote;
  bool push = false;
  std::string copies_dir = ".cleo/backups/release";  // relative to the root: copies of the files
                                                     // as they were before a step wrote them
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
/// details.done (each done step with how to undo it, newest first). A file step first keeps the
/// file's content in its `copy`, which its undo puts back.
Result<StepsOutcome> run_steps(const GitOptions& options, const std::vector<ReleaseStep>& steps);

}  // namespace ct
