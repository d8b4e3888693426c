#include "engines/rules/release_engine.h"

#include <algorithm>
#include <array>
#include <system_error>

#include "core/atomic_file.h"
#include "core/cancel.h"
#include "core/file_read.h"
#include "core/text.h"
#include "engines/project/config.h"

namespace ct {
namespace {

namespace fs = std::filesystem;

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

/// semver's numeric identifier: digits, no leading zero.
bool numeric_identifier(std::string_view part) {
  if (part.empty() || (part.size() > 1 && part.front() == '0')) return false;
  return std::all_of(part.begin(), part.end(), is_digit);
}

/// semver's alphanumeric identifier: [0-9A-Za-z-]+.
bool word_identifier(std::string_view part) {
  return !part.empty() &&
         std::all_of(part.begin(), part.end(), [](char c) { return is_digit(c) || is_alpha(c) || c == '-'; });
}

/// Calls `each` with every part of `text` between `separator`s; false as soon as one returns false.
template <typename Each>
bool all_parts(std::string_view text, char separator, Each each) {
  while (true) {
    auto at = text.find(separator);
    if (!each(text.substr(0, at))) return false;
    if (at == std::string_view::npos) return true;
    text.remove_prefix(at + 1);
  }
}

/// A character of a version token in running text ("1.2.0-rc.1+b5").
bool is_token_char(char c) { return is_digit(c) || is_alpha(c) || c == '.' || c == '-' || c == '+' || c == '_'; }

/// The group a done task is listed under in the changelog.
std::string_view changelog_group(const Task& task) {
  struct Group {
    std::string_view title;
    std::array<std::string_view, 7> labels;
  };
  static constexpr std::array<Group, 4> kGroups = {{
      {"Features", {"feature", "feat", "enhancement", "", "", "", ""}},
      {"Fixes", {"bug", "fix", "bugfix", "hotfix", "", "", ""}},
      {"Documentation", {"docs", "doc", "documentation", "", "", "", ""}},
      {"Maintenance", {"chore", "refactor", "test", "tests", "ci", "build", "perf"}},
  }};
  for (const auto& group : kGroups)
    for (const auto& label : task.labels) {
      std::string lower = to_lower_ascii(label);
      for (auto name : group.labels)
        if (!name.empty() && lower == name) return group.title;
    }
  return task.type == TaskType::Epic ? "Epics" : "Tasks";
}

/// The version a "## " heading names — "## [1.2.0] …", "## 1.2.0 …", "## v1.2.0 …" — or
/// "Unreleased" for "## [Unreleased]"; nullopt for any other line (a heading of a release's notes).
std::optional<std::string_view> release_heading(std::string_view line) {
  if (!line.starts_with("## ")) return std::nullopt;
  line.remove_prefix(3);
  while (line.starts_with(' ')) line.remove_prefix(1);
  if (line.starts_with('[')) line.remove_prefix(1);
  auto ends_here = [](std::string_view rest) {
    return rest.empty() || rest.front() == ']' || rest.front() == ' ' || rest.front() == '\r' || rest.front() == '\t';
  };
  constexpr std::string_view kUnreleased = "unreleased";
  if (line.size() >= kUnreleased.size() && to_lower_ascii(line.substr(0, kUnreleased.size())) == kUnreleased &&
      ends_here(line.substr(kUnreleased.size())))
    return line.substr(0, kUnreleased.size());
  if (line.starts_with('v')) line.remove_prefix(1);
  std::size_t end = 0;
  while (end < line.size() && is_token_char(line[end])) ++end;
  if (!ends_here(line.substr(end)) || !is_semver(line.substr(0, end))) return std::nullopt;
  return line.substr(0, end);
}

/// Start offsets of every line of `text`.
std::vector<std::size_t> line_starts(std::string_view text) {
  std::vector<std::size_t> starts;
  std::size_t at = 0;
  while (at < text.size()) {
    starts.push_back(at);
    auto newline = text.find('\n', at);
    if (newline == std::string_view::npos) break;
    at = newline + 1;
  }
  return starts;
}

std::string_view line_at(std::string_view text, std::size_t start) {
  auto newline = text.find('\n', start);
  return text.substr(start, newline == std::string_view::npos ? std::string_view::npos : newline - start);
}

std::string trim_newline(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
  return text;
}

Result<std::string> read_text(const fs::path& file, bool& existed) {
  std::error_code ec;
  existed = fs::exists(file, ec);
  if (!existed) return std::string();
  return read_regular_file(file, {kMaxReleaseFileBytes, std::chrono::milliseconds(10000)});
}

json::Value argv_json(const std::vector<std::string>& argv) { return json::Value::array_of(argv); }

std::string describe_argv(const std::vector<std::string>& argv) {
  std::string out;
  for (const auto& word : argv) {
    if (!out.empty()) out += ' ';
    out += word;
  }
  return out;
}

std::vector<std::string> git_argv(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {"git"};
  argv.insert(argv.end(), args.begin(), args.end());
  return argv;
}

ProcessSpec process_spec(const GitOptions& options, std::vector<std::string> argv, std::vector<std::string> env) {
  ProcessSpec spec;
  spec.argv = std::move(argv);
  spec.cwd = options.root;
  spec.env = std::move(env);
  spec.timeout = options.timeout;
  return spec;
}

/// The fix for a failed git command, when its stderr says what is missing.
Advice git_fix(const ProcessResult& result, const Advice& fallback) {
  if (result.err.find("tell me who you are") != std::string::npos ||
      result.err.find("empty ident") != std::string::npos)
    return "git has no identity here: run `git config user.name \"Your Name\"` and `git config user.email "
           "you@example.com` in the project (or set GIT_AUTHOR_NAME/GIT_AUTHOR_EMAIL), then retry";
  return fallback;
}

}  // namespace

bool is_semver(std::string_view text) {
  const auto build = text.find('+');
  std::string_view core = text.substr(0, build);
  std::string_view pre;
  if (auto dash = core.find('-'); dash != std::string_view::npos) {
    pre = core.substr(dash + 1);
    core = core.substr(0, dash);
    if (pre.empty()) return false;
  }
  int numbers = 0;
  if (!all_parts(core, '.', [&](std::string_view part) { return ++numbers <= 3 && numeric_identifier(part); }) ||
      numbers != 3)
    return false;
  // A pre-release identifier is numeric (no leading zero) or holds a letter or '-'.
  if (!pre.empty() && !all_parts(pre, '.', [](std::string_view part) {
        return word_identifier(part) &&
               (!std::all_of(part.begin(), part.end(), is_digit) || numeric_identifier(part));
      }))
    return false;
  return build == std::string_view::npos || all_parts(text.substr(build + 1), '.', word_identifier);
}

std::optional<std::string> normalize_semver(std::string_view text) {
  if (text.starts_with('v')) text.remove_prefix(1);
  if (!is_semver(text)) return std::nullopt;
  return std::string(text);
}

std::string release_tag(std::string_view version) { return "v" + std::string(version); }

std::string render_changelog_section(const Release& release, const std::vector<Task>& done, std::string_view date) {
  std::string out = "## [" + release.version + "] - " + std::string(date) + "\n";
  if (!trim(release.notes).empty()) {
    out += "\n";
    const std::string notes = trim_newline(std::string(trim(release.notes)));
    for (auto line : split_lines(notes)) {
      if (release_heading(line)) out += '\\';  // text, not a second release heading
      out.append(line);
      out += '\n';
    }
  }
  static constexpr std::array<std::string_view, 6> kOrder = {"Features", "Fixes",  "Documentation",
                                                             "Maintenance", "Epics", "Tasks"};
  bool any = false;
  for (auto group : kOrder) {
    std::string lines;
    for (const auto& task : done)
      if (changelog_group(task) == group) lines += "- " + task.title + " (" + task.id + ")\n";
    if (lines.empty()) continue;
    out += "\n### " + std::string(group) + "\n\n" + lines;
    any = true;
  }
  if (!any) out += "\nNo completed tasks.\n";
  return out;
}

std::optional<std::string_view> changelog_section(std::string_view changelog, std::string_view version) {
  std::optional<std::size_t> begin;
  for (std::size_t start : line_starts(changelog)) {
    auto named = release_heading(line_at(changelog, start));
    if (!named) continue;
    if (begin) return changelog.substr(*begin, start - *begin);
    if (*named == version) begin = start;
  }
  if (begin) return changelog.substr(*begin);
  return std::nullopt;
}

std::string merge_changelog(std::string_view existing, std::string_view version, std::string_view section) {
  if (trim(existing).empty()) return "# Changelog\n\n" + std::string(section);
  auto starts = line_starts(existing);
  std::optional<std::size_t> begin, first_heading;
  std::size_t end = existing.size();
  for (std::size_t i = 0; i < starts.size(); ++i) {
    auto named = release_heading(line_at(existing, starts[i]));
    if (!named) continue;
    if (!first_heading) first_heading = starts[i];
    if (begin) {
      end = starts[i];
      break;
    }
    if (*named == version) begin = starts[i];
  }
  std::string out;
  if (begin) {
    // Replace [heading, next heading): the blank line before the next heading stays a blank line.
    const bool followed = end < existing.size();
    out.append(existing.substr(0, *begin));
    out.append(section);
    if (followed) out += '\n';
    out.append(existing.substr(end));
    return out;
  }
  if (first_heading) {
    out.append(existing.substr(0, *first_heading));
    out.append(section);
    out += '\n';
    out.append(existing.substr(*first_heading));
    return out;
  }
  // A preamble only: the section goes after it, separated by one blank line.
  out.append(existing);
  if (!out.ends_with('\n')) out += '\n';
  if (!out.ends_with("\n\n")) out += '\n';
  out.append(section);
  return out;
}

Result<void> check_release_file(const fs::path& root, std::string_view relative, std::string_view what) {
  auto refuse = [&](std::string why, std::string fix) {
    return fail(Error(ErrorCode::Validation, std::string(what) + " " + std::string(relative) + " " + std::move(why) +
                                                 "; nothing was written")
                    .with_fix(std::move(fix))
                    .with_detail("file", std::string(relative)));
  };
  const fs::path given(relative);
  const fs::path normal = given.lexically_normal();
  if (relative.empty() || relative.find('\0') != std::string_view::npos || given.is_absolute() ||
      normal.empty() || *normal.begin() == ".." || normal == ".")
    return refuse("is not a path inside the project", "name the file relative to the project root, inside it");
  for (const auto& part : normal)
    if (part == ".git") return refuse("is inside .git", "name a file of the work tree");
  std::error_code ec;
  const fs::path base = fs::weakly_canonical(root, ec);
  if (ec) return refuse("cannot be resolved: " + ec.message(), "check the project directory");
  const fs::path resolved = fs::weakly_canonical(root / normal, ec);
  if (ec) return refuse("cannot be resolved: " + ec.message(), "check the path and its permissions");
  // A symbolic link on the way — the file itself or a parent directory — may lead anywhere, and
  // git does not follow it: the canonical path must be the root's joined with the path itself.
  if (resolved != (base / normal).lexically_normal()) {
    const fs::path inside = resolved.lexically_relative(base);
    const bool outside = inside.empty() || *inside.begin() == "..";
    return refuse(outside ? "leads outside the project (to " + resolved.string() + ")"
                          : "passes through a symbolic link (to " + resolved.string() + ")",
                  "name the file itself, inside the project, with no symbolic link on the way");
  }
  return {};
}

std::vector<std::string> git_environment() {
  return minimal_environment({"GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL",
                              "GIT_CONFIG_GLOBAL", "GIT_CONFIG_NOSYSTEM", "SSH_AUTH_SOCK"},
                             {"GIT_TERMINAL_PROMPT=0", "GIT_LITERAL_PATHSPECS=1"});
}

Result<ProcessResult> run_git(const GitOptions& options, const std::vector<std::string>& args) {
  return run_process(process_spec(options, git_argv(args), git_environment()));
}

Result<std::string> git_output(const GitOptions& options, const std::vector<std::string>& args, std::string_view what) {
  ProcessSpec spec = process_spec(options, git_argv(args), git_environment());
  CT_TRY_ASSIGN(ProcessResult result, run_process(spec));
  if (!result.ok()) {
    Error error = process_error(spec, result, what);
    error.fix = git_fix(result, error.fix);
    return fail(std::move(error).with_detail("argv", argv_json(spec.argv)));
  }
  return trim_newline(result.out);
}

Result<void> require_git_repo(const GitOptions& options) {
  CT_TRY_ASSIGN(ProcessResult result, run_git(options, {"rev-parse", "--is-inside-work-tree"}));
  if (result.ok() && trim_newline(result.out) == "true") return {};
  return fail(Error(ErrorCode::CapabilityUnavailable, options.root.string() + " is not inside a git work tree")
                  .with_fix("run `git init` in the project (and commit), or use release.changelog, which needs no git")
                  .with_alternative("Write the changelog without git", "release.changelog")
                  .with_detail("need", "git-repo"));
}

json::Value step_json(const ReleaseStep& step, bool with_undo) {
  json::Value out = json::Value::object();
  out.set("step", step.name);
  if (!step.argv.empty()) out.set("argv", argv_json(step.argv));
  if (!step.file.empty()) out.set("file", step.file);
  if (with_undo) {
    if (!step.undo.empty()) out.set("undo", argv_json(step.undo));
    else if (!step.undo_text.empty()) out.set("undo", step.undo_text);
  }
  return out;
}

namespace {

/// A file the release writes, as the work tree and HEAD hold it.
struct ReleaseFile {
  std::string path;                 // relative to the root, lexically normal
  bool in_work_tree = false;
  std::string work;                 // its content in the work tree
  std::optional<std::string> head;  // its content at HEAD as git checks it out; nullopt: not in HEAD
};

Error uncommitted(const std::string& path, std::string what) {
  return Error(ErrorCode::Validation, path + " " + std::move(what) + "; nothing was changed")
      .with_fix("commit them first (git commit -m '…' -- " + path + "), or put them aside (git stash push -- " + path +
                "), then ship again")
      .with_detail("file", path);
}

/// Runs git; an exit code outside `accepted` is an error. `pathspecs` false: the arguments are
/// paths that git does not read as pathspecs (check-ignore refuses GIT_LITERAL_PATHSPECS).
Result<ProcessResult> checked_git(const GitOptions& options, const std::vector<std::string>& args,
                                  std::initializer_list<int> accepted, bool pathspecs = true) {
  std::vector<std::string> env = git_environment();
  if (!pathspecs) std::erase(env, "GIT_LITERAL_PATHSPECS=1");
  ProcessSpec spec = process_spec(options, git_argv(args), std::move(env));
  CT_TRY_ASSIGN(ProcessResult result, run_process(spec));
  if (!result.timed_out && std::find(accepted.begin(), accepted.end(), result.exit_code) != accepted.end())
    return result;
  Error error = process_error(spec, result, "release.ship");
  error.fix = git_fix(result, error.fix);
  return fail(std::move(error).with_detail("argv", argv_json(spec.argv)));
}

/// Reads a release file (checked to lie inside the project first) from the work tree and HEAD,
/// and refuses staged changes of it that are neither HEAD's content nor the work tree's.
Result<ReleaseFile> read_release_file(const GitOptions& options, const std::string& relative, bool has_head,
                                      std::string_view what) {
  CT_TRY(check_release_file(options.root, relative, what));
  ReleaseFile file;
  file.path = fs::path(relative).lexically_normal().generic_string();
  const fs::path on_disk = options.root / file.path;
  std::error_code ec;
  if (fs::exists(fs::symlink_status(on_disk, ec)) && !fs::is_regular_file(on_disk, ec))
    return fail(Error(ErrorCode::Validation, std::string(what) + " " + file.path + " is not a regular file")
                    .with_fix("name a file")
                    .with_detail("file", file.path));
  CT_TRY_ASSIGN(file.work, read_text(on_disk, file.in_work_tree));
  if (has_head) {
    const std::string at_head = "HEAD:./" + file.path;
    CT_TRY_ASSIGN(ProcessResult there, checked_git(options, {"rev-parse", "-q", "--verify", at_head}, {0, 1}));
    if (there.ok()) {
      CT_TRY_ASSIGN(ProcessResult blob, checked_git(options, {"cat-file", "--filters", at_head}, {0}));
      if (blob.out_truncated)
        return fail(Error(ErrorCode::Validation, file.path + " is too large to release (over 4 MiB at HEAD)")
                        .with_detail("file", file.path));
      file.head = std::move(blob.out);
    }
  }
  if (!file.head) {
    // git add would refuse an ignored file only after the steps before it wrote it.
    CT_TRY_ASSIGN(ProcessResult ignored, checked_git(options, {"check-ignore", "-q", "--", file.path}, {0, 1}, false));
    if (ignored.exit_code == 0)
      return fail(Error(ErrorCode::Validation, std::string(what) + " " + file.path +
                                                   " is ignored by git (.gitignore), so the release commit cannot "
                                                   "hold it; nothing was written")
                      .with_fix("remove it from .gitignore (git check-ignore -v -- " + file.path +
                                " names the line), then ship again")
                      .with_detail("file", file.path));
  }
  CT_TRY_ASSIGN(ProcessResult staged, checked_git(options, {"diff", "--cached", "--quiet", "--", file.path}, {0, 1}));
  if (staged.exit_code == 1) {
    CT_TRY_ASSIGN(ProcessResult unstaged, checked_git(options, {"diff", "--quiet", "--", file.path}, {0, 1}));
    if (unstaged.exit_code == 1)
      return fail(uncommitted(file.path, "has staged changes that the work tree does not hold: the release "
                                         "would replace them"));
  }
  return file;
}

}  // namespace

namespace {

/// What release.versionFile will hold: its version bumped when the work tree is HEAD's; when they
/// differ, what a partial run of this release left there — any other edit is refused, never
/// committed with the release.
Result<std::string> bumped_version_file(const std::string& path, const ReleaseFile& version, const std::string& release) {
  std::string content = version.work;
  if (version.head == version.work) {
    CT_TRY_ASSIGN(std::optional<std::string> bumped, bump_version_text(path, version.work, release));
    if (bumped) content = std::move(*bumped);
    return content;
  }
  // The work tree differs from HEAD: a partial run left the new version there, or the user
  // edited the file.
  bool left_by_release = false;
  if (version.head)
    if (auto bumped = bump_version_text(path, *version.head, release); bumped)
      left_by_release = bumped->value_or(*version.head) == version.work;
  if (!left_by_release)
    return fail(uncommitted(path, version.head ? "holds changes that are not committed: the release commit "
                                                 "would take them in"
                                               : "is not committed: the release commit would take all of it in"));
  return content;
}

/// The git steps after the files: add and commit the release's files (only those, whatever else is
/// staged), tag, and with `push` push the branch and the tag — each with its undo.
void plan_git_steps(ShipPlan& plan, const std::vector<std::string>& committed, const ShipInput& input) {
  if (!committed.empty()) {
    std::vector<std::string> add = {"git", "add", "--"};
    add.insert(add.end(), committed.begin(), committed.end());
    std::vector<std::string> unstage = {"git", "reset", "-q", "--"};
    unstage.insert(unstage.end(), committed.begin(), committed.end());
    plan.steps.push_back({.name = "add", .argv = add, .undo = unstage});
    // Only the release's files are committed, whatever else is staged.
    std::vector<std::string> commit = {"git", "commit", "-m", "Release " + plan.tag, "--"};
    commit.insert(commit.end(), committed.begin(), committed.end());
    plan.steps.push_back({.name = "commit", .argv = commit,
                          .undo = plan.previous_head.empty()
                                      ? std::vector<std::string>{"git", "update-ref", "-d", "HEAD"}
                                      : std::vector<std::string>{"git", "reset", "--soft", plan.previous_head}});
  }
  plan.steps.push_back({.name = "tag", .argv = {"git", "tag", "-a", plan.tag, "-m", "Release " + input.release.version},
                        .undo = {"git", "tag", "-d", plan.tag}});
  if (input.push) {
    std::vector<std::string> undo_push =
        plan.previous_head.empty()
            ? std::vector<std::string>{"git", "push", input.remote, "--delete", "refs/heads/" + plan.branch}
            : std::vector<std::string>{"git", "push", "--force-with-lease", input.remote,
                                       plan.previous_head + ":refs/heads/" + plan.branch};
    plan.steps.push_back({.name = "push", .argv = {"git", "push", input.remote, "HEAD:refs/heads/" + plan.branch},
                          .undo = undo_push});
    plan.steps.push_back({.name = "pushTag", .argv = {"git", "push", input.remote, "refs/tags/" + plan.tag},
                          .undo = {"git", "push", input.remote, "--delete", "refs/tags/" + plan.tag}});
  }
}

}  // namespace

Result<ShipPlan> plan_ship(const GitOptions& options, const ShipInput& input) {
  CT_TRY(require_git_repo(options));
  ShipPlan plan;
  plan.tag = release_tag(input.release.version);
  CT_TRY_ASSIGN(ProcessResult branch, run_git(options, {"symbolic-ref", "--short", "-q", "HEAD"}));
  if (!branch.ok())
    return fail(Error(ErrorCode::Validation, "HEAD is detached: release.ship commits on a branch")
                    .with_fix("check out the branch to release from (git switch main), then retry"));
  plan.branch = trim_newline(branch.out);
  CT_TRY_ASSIGN(ProcessResult head, run_git(options, {"rev-parse", "-q", "--verify", "HEAD"}));
  if (head.ok()) plan.previous_head = trim_newline(head.out);
  CT_TRY_ASSIGN(ProcessResult tag, run_git(options, {"rev-parse", "-q", "--verify", "refs/tags/" + plan.tag}));
  if (tag.ok())
    return fail(Error(ErrorCode::Validation, "tag " + plan.tag + " already exists")
                    .with_fix(call("release.rollback", {{"version", input.release.version}, {"reason", "re-ship"}}) +
                              " removes it first")
                    .with_detail("tag", plan.tag));

  for (const auto& gate : input.gates)
    plan.steps.push_back({.name = "gate", .argv = gate, .undo_text = "nothing to undo", .gate = true});

  // The release's files, planned from HEAD (see ShipInput): a file is written unless the work
  // tree holds its new content already, and committed unless HEAD does.
  const bool has_head = !plan.previous_head.empty();
  std::vector<std::string> committed;
  auto plan_file = [&](std::string name, const ReleaseFile& file, std::string content) {
    if (!file.in_work_tree || file.work != content) {
      ReleaseStep step{.name = std::move(name), .file = file.path, .content = content};
      if (file.in_work_tree) {
        step.copy = (fs::path(input.copies_dir) / plan.tag / file.path).generic_string();
        step.undo = {"cp", "--", step.copy, file.path};
      } else {
        step.undo = {"rm", "--", file.path};
      }
      plan.steps.push_back(std::move(step));
    }
    if (file.head != content) committed.push_back(file.path);
  };

  CT_TRY_ASSIGN(ReleaseFile changelog, read_release_file(options, "CHANGELOG.md", has_head, "the changelog"));
  const std::string section = render_changelog_section(input.release, input.done, input.date);
  std::string merged = merge_changelog(changelog.head.value_or(""), input.release.version, section);
  // Only this release's own section may differ from HEAD (release.changelog writes it).
  if (merge_changelog(changelog.work, input.release.version, section) != merged)
    return fail(uncommitted(changelog.path, "holds changes that are not committed outside the section of " +
                                                input.release.version + ": the release commit would take them in"));
  plan_file("changelog", changelog, std::move(merged));

  if (!input.version_file.empty()) {
    const std::string path = fs::path(input.version_file).lexically_normal().generic_string();
    if (path == changelog.path)
      return fail(Error(ErrorCode::Validation, "release.versionFile cannot be CHANGELOG.md, which release.ship writes")
                      .with_fix("set release.versionFile to the file that holds the project's version (\"\" for none)"));
    CT_TRY_ASSIGN(ReleaseFile version, read_release_file(options, path, has_head, "release.versionFile"));
    if (!version.in_work_tree)
      return fail(Error(ErrorCode::Validation, "release.versionFile " + input.version_file + " does not exist")
                      .with_fix("create it with the current version, or: " +
                                config_set_fix("release.versionFile", json::Value(""))));
    CT_TRY_ASSIGN(std::string content, bumped_version_file(path, version, input.release.version));
    plan_file("versionFile", version, std::move(content));
  }
  plan_git_steps(plan, committed, input);
  return plan;
}

namespace {

/// A file step: the file's content kept in step.copy first (its undo puts it back), then the new content.
Result<void> write_file_step(const fs::path& root, const ReleaseStep& step) {
  if (!step.copy.empty()) {
    bool existed = false;
    CT_TRY_ASSIGN(std::string before, read_text(root / step.file, existed));
    std::error_code ec;
    fs::create_directories((root / step.copy).parent_path(), ec);
    if (ec)
      return fail(Error(ErrorCode::FileError, "cannot create " + (root / step.copy).parent_path().string() + ": " +
                                                  ec.message())
                      .with_fix("check the permissions of .cleo/"));
    CT_TRY(write_file_atomically(root / step.copy, before));
  }
  return write_file_atomically(root / step.file, step.content);
}

}  // namespace

Result<StepsOutcome> run_steps(const GitOptions& options, const std::vector<ReleaseStep>& steps) {
  StepsOutcome outcome;
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const ReleaseStep& step = steps[i];
    std::optional<Error> failed;
    // The gates only check; the first other step changes the project (a file, a commit, a tag):
    // the release's commit point (core/cancel.h). Cancelled before it, it stops with nothing changed.
    if (!step.gate && !begin_commit())
      return fail(Error(ErrorCode::EngineFailed, "the release was cancelled before step " + step.name +
                                                ": nothing was changed by the release")
                      .with_detail("cancelled", true));
    if (step.argv.empty()) {
      if (auto written = write_file_step(options.root, step); !written) failed = std::move(written.error());
    } else {
      // Gates get the plain minimal environment; git gets its identity variables too.
      ProcessSpec spec = process_spec(options, step.argv, step.argv.front() == "git" ? git_environment()
                                                                                     : minimal_environment());
      auto ran = run_process(spec);
      if (!ran) {
        failed = std::move(ran.error());
      } else if (!ran->ok()) {
        Error error = process_error(spec, *ran, "release step " + step.name + " (" + describe_argv(step.argv) + ")");
        if (step.gate && error.code == ErrorCode::EngineFailed) error.code = ErrorCode::Validation;
        error.fix = git_fix(*ran, step.gate ? "fix what the gate reports and ship again; nothing was changed by "
                                              "the release yet unless error.details.done lists steps"
                                            : "see error.details.stderr; undo the steps in error.details.done "
                                              "(newest first) or fix the cause and ship again");
        failed = std::move(error);
      }
    }
    if (failed) {
      Error error = std::move(*failed);
      json::Value done = json::Value::array();
      for (auto it = outcome.done.rbegin(); it != outcome.done.rend(); ++it) done.push_back(*it);
      error.details.set("failedStep", step_json(step, false));
      error.details.set("done", std::move(done));
      error.message += outcome.done.empty() ? " (no step had run)"
                                            : " (" + std::to_string(outcome.done.size()) +
                                                  " step(s) ran before it: see error.details.done to undo them)";
      return fail(std::move(error));
    }
    outcome.done.push_back(step_json(step, true));
  }
  return outcome;
}

}  // namespace ct
