// Real git repositories for tests (release ships and tags in them, evidence is judged against their
// branches, worktrees share a store): git run with an argv (engines/rules/release_engine.h's
// environment), never reading the user's or the system's git configuration.
#pragma once

#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "engines/rules/release_engine.h"

namespace ct::test {

/// git never reads ~/.gitconfig or /etc/gitconfig in these tests (the release engine's
/// git_environment passes these two variables on). Who commits is each repository's config
/// (git_repository), never the process's environment: tests of a missing identity rely on that.
inline void isolate_git() {
  ::setenv("GIT_CONFIG_GLOBAL", "/dev/null", 1);
  ::setenv("GIT_CONFIG_NOSYSTEM", "1", 1);
}

/// Whether `git <args>` in `dir` succeeds.
inline bool git_ok(const std::filesystem::path& dir, const std::vector<std::string>& args) {
  isolate_git();
  auto result = run_git(GitOptions{.root = dir, .timeout = std::chrono::seconds(60)}, args);
  return result && result->ok();
}

/// `git <args>` in `dir`, its stdout without the final line breaks; fails the test when git fails.
inline std::string git(const std::filesystem::path& dir, const std::vector<std::string>& args) {
  isolate_git();
  auto result = run_git(GitOptions{.root = dir, .timeout = std::chrono::seconds(60)}, args);
  REQUIRE(result);
  INFO("git " << args.front() << ": " << result->err);
  REQUIRE(result->ok());
  std::string out = result->out;
  while (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

/// `dir` (created when missing) as a repository on `main` with one commit holding README.md, its
/// commits (in every worktree) by a tester of its config.
inline void git_repository(const std::filesystem::path& dir) {
  std::filesystem::create_directories(dir);
  git(dir, {"init", "-q", "-b", "main"});
  git(dir, {"config", "user.name", "Tester"});
  git(dir, {"config", "user.email", "tester@example.com"});
  { std::ofstream(dir / "README.md") << "hello\n"; }
  git(dir, {"add", "README.md"});
  git(dir, {"commit", "-q", "-m", "first"});
}

}  // namespace ct::test
