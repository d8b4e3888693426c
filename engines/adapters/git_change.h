// A change in git as one `git log` lists it (issue 53: evidence is this task's work): the commits
// of a range — a branch against its base, or the commits named — and every path they touched.
// change_argv() is the command (argv, run by the caller through subprocess.h), parse_change() reads
// its output. One program per change, whatever its size; nothing is kept between calls.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace ct::git {

/// The most commits one change lists; a longer one is `truncated`.
inline constexpr std::size_t kMaxChangeCommits = 10'000;

struct Change {
  std::vector<std::string> commits;  // full hashes, as git log lists them (newest first)
  std::vector<std::string> paths;    // sorted, unique: each path a commit added, changed or deleted,
                                     // both names of a rename or copy, relative to the directory git
                                     // ran in (--relative: outside it nothing is listed); a merge
                                     // commit's own diff is not read
  bool truncated = false;            // the range held more than kMaxChangeCommits commits

  bool has_commit(std::string_view sha) const;
  bool touches(std::string_view path) const;
};

/// `git log` of the commits reachable from `branch` and not from `base` (a branch's own work); with
/// an empty `branch`, of exactly the commits `revs` names (each one its own change; one that no
/// longer exists is passed over). Revisions are
/// passed after --end-of-options, so none is read as an option; a branch name without "refs/" is
/// read as refs/heads/<branch>.
std::vector<std::string> change_argv(std::string_view branch, std::string_view base,
                                     const std::vector<std::string>& revs = {});

/// The change change_argv's command printed (-z output: NUL-separated, renames as two names).
Change parse_change(std::string_view out);

}  // namespace ct::git
