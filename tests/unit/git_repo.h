// git in unit tests: real repositories in temp dirs (release ships and tags in them, evidence is
// judged against their branches), never reading the user's ~/.gitconfig or /etc/gitconfig.
#pragma once

#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "engines/adapters/subprocess.h"
#include "engines/rules/release_engine.h"

namespace ct::test {

/// Sets GIT_CONFIG_GLOBAL=/dev/null and GIT_CONFIG_NOSYSTEM=1 in this process: the git the tests
/// run, and the git the code under test runs (git_environment() passes them on), read neither.
inline void isolate_git() {
  ::setenv("GIT_CONFIG_GLOBAL", "/dev/null", 1);
  ::setenv("GIT_CONFIG_NOSYSTEM", "1", 1);
}

/// git in `dir` (`args` after "git"); nullopt when it cannot be started.
inline Result<ProcessResult> run_git(const std::filesystem::path& dir, const std::vector<std::string>& args) {
  isolate_git();
  ProcessSpec spec;
  spec.argv = {"git"};
  spec.argv.insert(spec.argv.end(), args.begin(), args.end());
  spec.cwd = dir;
  spec.env = git_environment();
  return run_process(spec);
}

/// git in `dir`, its stdout without trailing newlines; fails the test when git fails. A repository
/// that commits sets its user.name and user.email first (git config in it).
inline std::string git(const std::filesystem::path& dir, const std::vector<std::string>& args) {
  auto result = run_git(dir, args);
  REQUIRE(result);
  INFO("git " << args.front() << ": " << result->err);
  REQUIRE(result->ok());
  std::string out = result->out;
  while (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

/// Whether git in `dir` succeeds.
inline bool git_ok(const std::filesystem::path& dir, const std::vector<std::string>& args) {
  auto result = run_git(dir, args);
  return result && result->ok();
}

}  // namespace ct::test
