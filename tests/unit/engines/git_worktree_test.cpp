// engines/project/git_worktree.h on real repositories made by git: the main work tree, sibling and
// nested linked ones, a detached HEAD, relative links, a bare repository, a submodule (not a linked
// work tree) and broken .git files; and find_project from each (the store every work tree shares).
#include "engines/project/git_worktree.h"

#include <catch2/catch.hpp>

#include <fstream>

#include "engines/project/project.h"
#include "unit/git_repo.h"
#include "unit/temp_dir.h"

namespace ct {
namespace {

namespace fs = std::filesystem;

fs::path real_path(const fs::path& path) { return fs::weakly_canonical(path); }

/// A project (.cleo/tasks.db as a file: what find_project looks for) in `dir`.
void make_project(const fs::path& dir) {
  fs::create_directories(dir / ".cleo");
  std::ofstream(dir / ".cleo" / "tasks.db") << "";
}

}  // namespace

TEST_CASE("git_worktree reads the main work tree and linked ones from git's files", "[engines][git_worktree]") {
  test::TempDir tmp;
  const fs::path repo = real_path(tmp.path()) / "repo";
  test::git_repository(repo);
  fs::create_directories(repo / "src" / "deep");
  const std::string head = test::git(repo, {"rev-parse", "HEAD"});

  SECTION("the main work tree, from a folder inside it") {
    auto tree = git::locate(repo / "src" / "deep");
    REQUIRE(tree);
    CHECK(tree->top == repo);
    CHECK(tree->git_dir == repo / ".git");
    CHECK(tree->common_dir == repo / ".git");
    CHECK(tree->main == repo);
    CHECK_FALSE(tree->linked);
    CHECK(tree->branch == "main");
    CHECK(tree->head_commit() == head);
    CHECK(git::at_top(repo));
    CHECK_FALSE(git::at_top(repo / "src"));
  }
  SECTION("a sibling linked work tree on its own branch") {
    test::git(repo, {"worktree", "add", "-q", "-b", "feature", "../feature-x"});
    const fs::path sibling = repo.parent_path() / "feature-x";
    fs::create_directories(sibling / "lib");
    auto tree = git::locate(sibling / "lib");
    REQUIRE(tree);
    CHECK(tree->top == sibling);
    CHECK(tree->git_dir == repo / ".git" / "worktrees" / "feature-x");
    CHECK(tree->common_dir == repo / ".git");
    CHECK(tree->main == repo);
    CHECK(tree->linked);
    CHECK(tree->branch == "feature");
    CHECK(tree->head_commit() == head);
    // A commit on the branch is read from the common directory's refs, loose or packed.
    { std::ofstream(sibling / "b.txt") << "b\n"; }
    test::git(sibling, {"add", "b.txt"});
    test::git(sibling, {"commit", "-q", "-m", "b"});
    CHECK(git::locate(sibling)->head_commit() == test::git(sibling, {"rev-parse", "HEAD"}));
    test::git(repo, {"pack-refs", "--all"});
    CHECK(git::locate(sibling)->head_commit() == test::git(sibling, {"rev-parse", "HEAD"}));
  }
  SECTION("a linked work tree nested inside the main one") {
    test::git(repo, {"worktree", "add", "-q", "-b", "nested", ".worktrees/n"});
    auto tree = git::locate(repo / ".worktrees" / "n");
    REQUIRE(tree);
    CHECK(tree->top == repo / ".worktrees" / "n");
    CHECK(tree->linked);
    CHECK(tree->main == repo);
    CHECK(tree->branch == "nested");
  }
  SECTION("a detached HEAD gives the commit's short sha") {
    test::git(repo, {"worktree", "add", "-q", "--detach", "../detached"});
    auto tree = git::locate(repo.parent_path() / "detached");
    REQUIRE(tree);
    CHECK(tree->branch == head.substr(0, 7));
    CHECK(tree->head_commit() == head);
  }
  SECTION("relative links in .git and commondir") {
    test::git(repo, {"worktree", "add", "-q", "-b", "rel", "../rel"});
    const fs::path rel = repo.parent_path() / "rel";
    { std::ofstream(rel / ".git", std::ios::trunc) << "gitdir: ../repo/.git/worktrees/rel\n"; }
    auto tree = git::locate(rel);
    REQUIRE(tree);
    CHECK(tree->linked);
    CHECK(tree->main == repo);
    CHECK(tree->common_dir == repo / ".git");  // commondir is "../.." as git writes it
  }
  SECTION("a .git file that leads nowhere, or says something else, is no work tree") {
    const fs::path broken = repo.parent_path() / "broken";
    fs::create_directories(broken);
    { std::ofstream(broken / ".git") << "gitdir: ../nowhere/.git/worktrees/broken\n"; }
    CHECK_FALSE(git::locate(broken));
    { std::ofstream(broken / ".git", std::ios::trunc) << "not a git file\n"; }
    CHECK_FALSE(git::locate(broken));
    // A folder of git's own is no work tree either.
    CHECK_FALSE(git::locate(repo / ".git" / "refs"));
  }
  SECTION("outside any repository") { CHECK_FALSE(git::locate(tmp.path())); }
}

TEST_CASE("git_worktree: a submodule is a main work tree of its own, a bare repository has none",
          "[engines][git_worktree]") {
  test::TempDir tmp;
  const fs::path base = real_path(tmp.path());
  const fs::path repo = base / "repo";
  test::git_repository(repo);
  test::git_repository(base / "lib");

  SECTION("submodule") {
    test::git(repo, {"-c", "protocol.file.allow=always", "submodule", "add", "-q", (base / "lib").string(), "vendor/lib"});
    auto tree = git::locate(repo / "vendor" / "lib");
    REQUIRE(tree);
    CHECK(tree->top == repo / "vendor" / "lib");
    CHECK_FALSE(tree->linked);
    CHECK(tree->main == repo / "vendor" / "lib");
    CHECK(tree->git_dir == repo / ".git" / "modules" / "vendor" / "lib");
    CHECK(tree->branch == "main");
    // Not a linked work tree: named as the project, it is not sent to any other repository's store.
    make_project(repo);
    auto found = find_project(repo / "vendor" / "lib");
    REQUIRE_FALSE(found);
    CHECK(found.error().code == ErrorCode::NotInitialized);
    CHECK_FALSE(shared_store(repo / "vendor" / "lib"));
  }
  SECTION("bare repository") {
    test::git(base, {"clone", "-q", "--bare", repo.string(), "bare.git"});
    test::git(base / "bare.git", {"worktree", "add", "-q", "../bw", "main"});
    auto tree = git::locate(base / "bw");
    REQUIRE(tree);
    CHECK(tree->linked);
    CHECK(tree->main.empty());
    CHECK(tree->common_dir == base / "bare.git");
    auto shared = shared_store(base / "bw");
    REQUIRE(shared);
    CHECK(shared->main.empty());
    CHECK_FALSE(shared->project);
  }
}

TEST_CASE("find_project: every work tree of a repository uses the main work tree's store", "[engines][git_worktree]") {
  test::TempDir tmp;
  const fs::path repo = real_path(tmp.path()) / "repo";
  test::git_repository(repo);
  make_project(repo);
  test::git(repo, {"worktree", "add", "-q", "-b", "feature", "../feature-x"});
  test::git(repo, {"worktree", "add", "-q", "-b", "nested", ".worktrees/n"});
  const fs::path sibling = repo.parent_path() / "feature-x";
  fs::create_directories(sibling / "src");

  // --project naming any folder of a linked work tree's top, or the walk from inside it.
  auto from_sibling = find_project(sibling);
  REQUIRE(from_sibling);
  CHECK(from_sibling->root == repo);
  auto from_nested = find_project(repo / ".worktrees" / "n");
  REQUIRE(from_nested);
  CHECK(from_nested->root == repo);
  auto shared = shared_store(sibling / "src");
  REQUIRE(shared);
  CHECK(shared->worktree == sibling);
  CHECK(shared->main == repo);
  REQUIRE(shared->project);
  CHECK(shared->project->root == repo);
  CHECK_FALSE(shared_store(repo / "src"));  // the main work tree shares nothing: it is the store's

  SECTION("a .cleo/config.json committed into the work tree does not make it a project that lost its store") {
    fs::create_directories(sibling / ".cleo");
    std::ofstream(sibling / ".cleo" / "config.json") << "{}";
    auto found = find_project(sibling);
    REQUIRE(found);
    CHECK(found->root == repo);
  }
  SECTION("a store the work tree was given of its own wins") {
    make_project(sibling);
    auto found = find_project(sibling);
    REQUIRE(found);
    CHECK(found->root == sibling);
  }
  SECTION("the main work tree without a project: nothing to share") {
    fs::remove_all(repo / ".cleo");
    auto found = find_project(sibling);
    REQUIRE_FALSE(found);
    CHECK(found.error().code == ErrorCode::NotInitialized);
  }
  SECTION("the main work tree's store gone: said so, never another store") {
    fs::remove(repo / ".cleo" / "tasks.db");
    std::ofstream(repo / ".cleo" / "config.json") << "{}";
    auto found = find_project(sibling);
    REQUIRE_FALSE(found);
    CHECK(found.error().details["damaged"] == json::Value(true));
  }
}

}  // namespace ct
