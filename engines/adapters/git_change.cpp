#include "engines/adapters/git_change.h"

#include <algorithm>

namespace ct::git {
namespace {

/// A --name-status letter (with a score for R and C): "M", "A", "D", "T", "R100", "C075".
bool is_status(std::string_view token) {
  if (token.empty() || std::string_view("ACDMRTUXB").find(token.front()) == std::string_view::npos) return false;
  return std::all_of(token.begin() + 1, token.end(), [](char c) { return c >= '0' && c <= '9'; });
}

}  // namespace

bool Change::has_commit(std::string_view sha) const {
  return std::find(commits.begin(), commits.end(), sha) != commits.end();
}

bool Change::touches(std::string_view path) const { return std::binary_search(paths.begin(), paths.end(), path); }

std::vector<std::string> change_argv(std::string_view branch, std::string_view base,
                                     const std::vector<std::string>& revs) {
  // -c core.quotePath=false with -z: names as they are; -M: a rename is one entry with both names;
  // --no-ext-diff/--no-textconv keep the user's diff drivers out (names only, nothing runs).
  std::vector<std::string> argv = {"git", "-c", "core.quotePath=false", "log", "--no-color", "--no-ext-diff",
                                   "--no-textconv", "--format=%x01%H", "-z", "--name-status", "-M", "--relative",
                                   "--max-count=" + std::to_string(kMaxChangeCommits + 1)};
  // The commits named: each alone; one that no longer exists (rewritten away) is passed over.
  if (branch.empty()) argv.insert(argv.end(), {"--no-walk=unsorted", "--ignore-missing"});
  argv.push_back("--end-of-options");
  if (!branch.empty()) {
    argv.push_back(branch.starts_with("refs/") ? std::string(branch) : "refs/heads/" + std::string(branch));
    argv.push_back("^" + std::string(base));
  }
  argv.insert(argv.end(), revs.begin(), revs.end());
  argv.push_back("--");
  return argv;
}

Change parse_change(std::string_view out) {
  Change change;
  std::vector<std::string_view> tokens;
  for (std::size_t at = 0; at < out.size();) {
    std::size_t end = out.find('\0', at);
    if (end == std::string_view::npos) end = out.size();
    tokens.push_back(out.substr(at, end - at));
    at = end + 1;
  }
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    std::string_view token = tokens[i];
    // A header or status follows a newline git writes after each commit's header.
    while (!token.empty() && token.front() == '\n') token.remove_prefix(1);
    if (token.empty()) continue;
    if (token.front() == '\x01') {
      change.commits.emplace_back(token.substr(1));
      continue;
    }
    if (!is_status(token)) continue;  // not git log's shape: read nothing of it
    const std::size_t names = token.front() == 'R' || token.front() == 'C' ? 2 : 1;
    for (std::size_t n = 0; n < names && i + 1 < tokens.size(); ++n) change.paths.emplace_back(tokens[++i]);
  }
  if (change.commits.size() > kMaxChangeCommits) {
    change.commits.resize(kMaxChangeCommits);
    change.truncated = true;
  }
  std::sort(change.paths.begin(), change.paths.end());
  change.paths.erase(std::unique(change.paths.begin(), change.paths.end()), change.paths.end());
  return change;
}

}  // namespace ct::git
