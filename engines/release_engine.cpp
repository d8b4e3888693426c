#include "engines/release_engine.h"

#include <algorithm>
#include <array>
#include <fstream>
#include <regex>
#include <sstream>
#include <system_error>

#include "core/atomic_file.h"
#include "core/text.h"

namespace ct {
namespace {

namespace fs = std::filesystem;

const std::regex& semver_regex() {
  static const std::regex re{std::string(kSemverPattern), std::regex::ECMAScript};
  return re;
}

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

/// True when `line` is the "## " heading of `version`: "## [1.2.0] …", "## 1.2.0 …", "## v1.2.0 …".
bool is_version_heading(std::string_view line, std::string_view version) {
  if (!line.starts_with("## ")) return false;
  line.remove_prefix(3);
  while (line.starts_with(' ')) line.remove_prefix(1);
  if (line.starts_with('[')) line.remove_prefix(1);
  if (line.starts_with('v')) line.remove_prefix(1);
  if (!line.starts_with(version)) return false;
  line.remove_prefix(version.size());
  return line.empty() || line.front() == ']' || line.front() == ' ' || line.front() == '\r' || line.front() == '\t';
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
  std::ifstream in(file, std::ios::binary);
  if (!in) return fail(Error(ErrorCode::FileError, "cannot read " + file.string()).with_fix("check its permissions"));
  std::ostringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
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
std::string git_fix(const ProcessResult& result, const std::string& fallback) {
  if (result.err.find("tell me who you are") != std::string::npos ||
      result.err.find("empty ident") != std::string::npos)
    return "git has no identity here: run `git config user.name \"Your Name\"` and `git config user.email "
           "you@example.com` in the project (or set GIT_AUTHOR_NAME/GIT_AUTHOR_EMAIL), then retry";
  return fallback;
}

}  // namespace

std::optional<std::string> normalize_semver(std::string_view text) {
  if (text.size() > 64) return std::nullopt;
  std::string value(text);
  if (!std::regex_match(value, semver_regex())) return std::nullopt;
  if (value.starts_with('v')) value.erase(0, 1);
  return value;
}

std::string release_tag(std::string_view version) { return "v" + std::string(version); }

std::string render_changelog_section(const Release& release, const std::vector<Task>& done, std::string_view date) {
  std::string out = "## [" + release.version + "] - " + std::string(date) + "\n";
  if (!trim(release.notes).empty()) out += "\n" + trim_newline(std::string(trim(release.notes))) + "\n";
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
    std::string_view line = line_at(changelog, start);
    if (!line.starts_with("## ")) continue;
    if (begin) return changelog.substr(*begin, start - *begin);
    if (is_version_heading(line, version)) begin = start;
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
    std::string_view line = line_at(existing, starts[i]);
    if (!line.starts_with("## ")) continue;
    if (!first_heading) first_heading = starts[i];
    if (begin) {
      end = starts[i];
      break;
    }
    if (is_version_heading(line, version)) begin = starts[i];
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

Result<std::optional<std::string>> bump_version_text(std::string_view text, std::string_view previous,
                                                     std::string_view next) {
  std::string out(text);
  if (!previous.empty() && previous != next) {
    auto at = out.find(previous);
    if (at != std::string::npos) {
      out.replace(at, previous.size(), next);
      return std::optional<std::string>(std::move(out));
    }
  }
  static const std::regex any_version{"[0-9]+\\.[0-9]+\\.[0-9]+(-[0-9A-Za-z.-]+)?(\\+[0-9A-Za-z.-]+)?"};
  std::smatch match;
  if (!std::regex_search(out, match, any_version))
    return fail(Error(ErrorCode::Validation, "the version file holds no version string (like 1.2.0) to replace")
                    .with_fix("write the current version into it, or set release.versionFile to the right file"));
  if (match.str(0) == next) return std::optional<std::string>();
  out.replace(static_cast<std::size_t>(match.position(0)), static_cast<std::size_t>(match.length(0)), next);
  return std::optional<std::string>(std::move(out));
}

std::vector<std::string> git_environment() {
  return minimal_environment({"GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL",
                              "GIT_CONFIG_GLOBAL", "GIT_CONFIG_NOSYSTEM", "SSH_AUTH_SOCK"},
                             {"GIT_TERMINAL_PROMPT=0"});
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
                    .with_fix("cleo_mutate {domain:'release', operation:'rollback', params:{version:'" +
                              input.release.version + "', reason:'re-ship'}} removes it first")
                    .with_detail("tag", plan.tag));

  for (const auto& gate : input.gates)
    plan.steps.push_back({.name = "gate", .argv = gate, .undo_text = "nothing to undo", .gate = true});

  std::vector<std::string> changed;
  bool existed = false;
  CT_TRY_ASSIGN(std::string changelog, read_text(options.root / "CHANGELOG.md", existed));
  std::string merged = merge_changelog(changelog, input.release.version,
                                       render_changelog_section(input.release, input.done, input.date));
  if (merged != changelog) {
    plan.steps.push_back({.name = "changelog", .file = "CHANGELOG.md", .content = merged,
                          .undo = existed ? std::vector<std::string>{"git", "checkout", "--", "CHANGELOG.md"}
                                          : std::vector<std::string>{"rm", "CHANGELOG.md"}});
    changed.push_back("CHANGELOG.md");
  }
  if (!input.version_file.empty()) {
    bool version_existed = false;
    CT_TRY_ASSIGN(std::string text, read_text(options.root / input.version_file, version_existed));
    if (!version_existed)
      return fail(Error(ErrorCode::Validation, "release.versionFile " + input.version_file + " does not exist")
                      .with_fix("create it with the current version, or: cleo_mutate {domain:'system', "
                                "operation:'config.set', params:{key:'release.versionFile', value:''}}"));
    CT_TRY_ASSIGN(std::optional<std::string> bumped, bump_version_text(text, input.previous_version, input.release.version));
    if (bumped) {
      plan.steps.push_back({.name = "versionFile", .file = input.version_file, .content = *bumped,
                            .undo = {"git", "checkout", "--", input.version_file}});
      changed.push_back(input.version_file);
    }
  }
  if (!changed.empty()) {
    std::vector<std::string> add = {"git", "add", "--"};
    add.insert(add.end(), changed.begin(), changed.end());
    std::vector<std::string> unstage = {"git", "reset", "-q", "--"};
    unstage.insert(unstage.end(), changed.begin(), changed.end());
    plan.steps.push_back({.name = "add", .argv = add, .undo = unstage});
    // Only the release's files are committed, whatever else is staged.
    std::vector<std::string> commit = {"git", "commit", "-m", "Release " + plan.tag, "--"};
    commit.insert(commit.end(), changed.begin(), changed.end());
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
  return plan;
}

Result<StepsOutcome> run_steps(const GitOptions& options, const std::vector<ReleaseStep>& steps) {
  StepsOutcome outcome;
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const ReleaseStep& step = steps[i];
    std::optional<Error> failed;
    if (step.argv.empty()) {
      if (auto written = write_file_atomically(options.root / step.file, step.content); !written)
        failed = std::move(written.error());
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
