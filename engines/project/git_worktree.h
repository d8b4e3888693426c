// Which git work tree a directory lies in, read from git's own files without running git (issue
// 53): the work tree's top-level directory, its git directory, the repository's common directory,
// the main work tree and the branch HEAD names. A linked work tree (`git worktree add`) has a
// `.git` file `gitdir: <common>/worktrees/<name>` whose `commondir` file leads to the repository's
// git directory; a submodule's `.git` file leads to `<super>/.git/modules/<name>`, which has no
// `commondir`: it is the main work tree of a repository of its own, never a linked one.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

namespace ct::git {

struct Worktree {
  std::filesystem::path top;         // the work tree's top-level directory
  std::filesystem::path git_dir;     // its git directory: top/.git, or <common>/worktrees/<name>
  std::filesystem::path common_dir;  // the repository's git directory (shared by its work trees)
  /// The main work tree: the common directory's parent (its core.worktree when it names one);
  /// empty for a bare repository, whose work trees are all linked.
  std::filesystem::path main;
  /// The branch HEAD names ("main", "cleo/T012", also before its first commit); a detached HEAD
  /// gives its commit's first 7 hex digits; "" when HEAD cannot be read.
  std::string branch;
  bool linked = false;  // made by `git worktree add`: not the repository's main work tree

  /// The commit HEAD is at (full hex), when it can be read from the files (a loose or packed ref);
  /// "" otherwise (no commit yet).
  std::string head_commit() const;
};

/// The git work tree holding `dir` (the nearest ancestor, `dir` itself included, with a `.git`
/// directory or a `.git` file that leads to a git directory), all paths absolute and normal;
/// none outside a work tree or inside a git directory. Links in `.git` files and `commondir` may be
/// relative (to the file's folder) or absolute; a file that is missing or says something else
/// makes the folder no work tree rather than a wrong one.
std::optional<Worktree> locate(const std::filesystem::path& dir);

/// The work tree whose top-level directory is `dir` exactly (locate()'s answer when its top is
/// `dir`), else none: one stat for a folder without `.git`.
std::optional<Worktree> at_top(const std::filesystem::path& dir);

}  // namespace ct::git
