#include "engines/project/git_worktree.h"

#include <system_error>

#include "core/file_read.h"
#include "core/text.h"

namespace ct::git {
namespace {

namespace fs = std::filesystem;

/// git's small files (.git, HEAD, commondir, a loose ref, config): read whole, bounded; packed-refs
/// may be larger.
constexpr ReadLimit kSmallFile{1 << 16, std::chrono::milliseconds(2000), /*own_file=*/true};
constexpr ReadLimit kPackedRefs{16 << 20, std::chrono::milliseconds(5000), /*own_file=*/true};

std::optional<std::string> read_text(const fs::path& file, ReadLimit limit = kSmallFile) {
  auto text = read_regular_file(file, limit);
  if (!text) return std::nullopt;
  return std::move(*text);
}

/// The first line of a small file, trimmed.
std::optional<std::string> first_line(const fs::path& file) {
  auto text = read_text(file);
  if (!text) return std::nullopt;
  std::string_view view = *text;
  view = view.substr(0, view.find('\n'));
  return std::string(trim(view));
}

/// An absolute, normal form of `path` read in a file of `base`'s folder (relative to it).
fs::path resolved(const fs::path& base, const std::string& path) {
  fs::path out = fs::path(path).is_absolute() ? fs::path(path) : base / path;
  std::error_code ec;
  fs::path canonical = fs::weakly_canonical(out, ec);
  return ec ? out.lexically_normal() : canonical;
}

/// A git directory: a folder holding HEAD.
bool is_git_dir(const fs::path& dir) {
  std::error_code ec;
  return fs::is_regular_file(dir / "HEAD", ec);
}

bool is_hex(std::string_view text) {
  return !text.empty() && text.find_first_not_of("0123456789abcdef") == std::string_view::npos;
}

/// core.worktree of the repository's config, when it names one (relative to the git directory).
std::optional<fs::path> configured_worktree(const fs::path& common) {
  auto text = read_text(common / "config");
  if (!text) return std::nullopt;
  bool in_core = false;
  for (std::string_view raw : split_lines(*text)) {
    std::string_view line = trim(raw);
    if (line.starts_with('[')) {
      in_core = to_lower_ascii(line) == "[core]";
      continue;
    }
    if (!in_core) continue;
    const auto eq = line.find('=');
    if (eq == std::string_view::npos || to_lower_ascii(trim(line.substr(0, eq))) != "worktree") continue;
    std::string value(trim(line.substr(eq + 1)));
    if (value.size() >= 2 && value.front() == '"' && value.back() == '"') value = value.substr(1, value.size() - 2);
    if (!value.empty()) return resolved(common, value);
  }
  return std::nullopt;
}

/// The main work tree of the repository whose git directory is `common`.
fs::path main_of(const fs::path& common) {
  if (auto configured = configured_worktree(common)) return *configured;
  if (common.filename() == ".git") return common.parent_path();
  return {};  // bare, or a git directory kept apart from its work tree that names none
}

std::string branch_of(const fs::path& git_dir) {
  auto head = first_line(git_dir / "HEAD");
  if (!head) return "";
  std::string_view text = *head;
  if (text.starts_with("ref:")) {
    std::string_view ref = trim(text.substr(4));
    if (ref.starts_with("refs/heads/")) ref.remove_prefix(11);
    return std::string(ref);
  }
  return is_hex(text) && text.size() >= 7 ? std::string(text.substr(0, 7)) : std::string();
}

}  // namespace

std::optional<Worktree> at_top(const fs::path& dir) {
  std::error_code ec;
  const fs::path dot_git = dir / ".git";
  const fs::file_status status = fs::status(dot_git, ec);
  if (ec) return std::nullopt;
  Worktree out;
  out.top = dir;
  if (fs::is_directory(status)) {
    if (!is_git_dir(dot_git)) return std::nullopt;
    out.git_dir = dot_git;
    out.common_dir = dot_git;
    out.main = dir;
  } else if (fs::is_regular_file(status)) {
    auto line = first_line(dot_git);
    if (!line || !line->starts_with("gitdir:")) return std::nullopt;
    out.git_dir = resolved(dir, std::string(trim(std::string_view(*line).substr(7))));
    if (!is_git_dir(out.git_dir)) return std::nullopt;
    if (auto common = first_line(out.git_dir / "commondir"); common && !common->empty()) {
      out.common_dir = resolved(out.git_dir, *common);
      if (!is_git_dir(out.common_dir)) return std::nullopt;
      out.linked = true;
      out.main = main_of(out.common_dir);
      if (out.main == dir) out.linked = false;  // a main work tree whose .git is a file pointing home
    } else {
      // A submodule (or a work tree with its git directory elsewhere): the main one of its own repository.
      out.common_dir = out.git_dir;
      out.main = dir;
    }
  } else {
    return std::nullopt;
  }
  out.branch = branch_of(out.git_dir);
  return out;
}

std::optional<Worktree> locate(const fs::path& dir) {
  std::error_code ec;
  fs::path start = fs::weakly_canonical(fs::absolute(dir, ec), ec);
  if (ec) start = fs::absolute(dir, ec).lexically_normal();
  for (fs::path at = start;; at = at.parent_path()) {
    if (at.filename() == ".git") return std::nullopt;  // inside a git directory: no work tree
    if (auto found = at_top(at)) return found;
    if (!at.has_parent_path() || at.parent_path() == at) break;
  }
  return std::nullopt;
}

std::string Worktree::head_commit() const {
  auto head = first_line(git_dir / "HEAD");
  if (!head) return "";
  if (!head->starts_with("ref:")) return is_hex(*head) ? *head : "";
  const std::string ref(trim(std::string_view(*head).substr(4)));
  // A branch's ref lives in the common directory (a linked work tree's own are HEAD and the like).
  for (const fs::path& base : {git_dir, common_dir}) {
    if (auto loose = first_line(base / ref); loose && is_hex(*loose)) return *loose;
  }
  auto packed = read_text(common_dir / "packed-refs", kPackedRefs);
  if (!packed) return "";
  for (std::string_view line : split_lines(*packed)) {
    const auto space = line.find(' ');
    if (space != std::string_view::npos && trim(line.substr(space + 1)) == ref && is_hex(line.substr(0, space)))
      return std::string(line.substr(0, space));
  }
  return "";
}

}  // namespace ct::git
