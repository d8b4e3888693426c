// Files are the caller's worktree's (issue 53): the store is the repository's, shared by every
// linked worktree, but what a caller names as its work — evidence files and commits, the test
// command's folder, memory file scopes — is read in the worktree it works in (Context::work_root),
// in real git worktrees beside the project. Evidence records that worktree and is checked there
// again at completion while it exists; once it is removed, in the caller's own. A caller that names
// no place (HTTP) reads the project's root as before. Runs on both backends.
#include <catch2/catch.hpp>

#include <fstream>

#include "gateway/mcp_syntax.h"
#include "unit/git_repo.h"
#include "unit/project_edits.h"
#include "unit/test_support.h"

using namespace ct;
using ct::test::code_of;

namespace {

namespace fs = std::filesystem;
using test::set_config;
using test::write_file;

void require_ok(const Envelope& e) {
  INFO(to_json(e, McpAdvice(registry())));
  REQUIRE(e.success);
}

/// The project as a repository on main holding src/a.c, and a sibling worktree wt-a (outside the
/// project's folder) on branch task/T001 whose one commit changes src/a.c and adds src/new.c.
struct Sibling {
  test::Project& p;
  test::TempDir beside;
  fs::path wt;

  explicit Sibling(test::Project& project) : p(project) {
    test::git(p.dir(), {"init", "-q", "-b", "main"});
    test::git(p.dir(), {"config", "user.name", "Tester"});
    test::git(p.dir(), {"config", "user.email", "tester@example.com"});
    write_file(p.dir() / ".gitignore", ".cleo/\n");
    write_file(p.dir() / "src" / "a.c", "int a;\n");
    test::git(p.dir(), {"add", "."});
    test::git(p.dir(), {"commit", "-q", "-m", "first"});
    wt = fs::weakly_canonical(beside.path()) / "wt-a";
    test::git(p.dir(), {"worktree", "add", "-q", "-b", "task/T001", wt.string()});
    write_file(wt / "src" / "a.c", "int a = 1;\n");
    write_file(wt / "src" / "new.c", "int fresh;\n");
    test::git(wt, {"add", "."});
    test::git(wt, {"commit", "-q", "-m", "the task's work"});
  }
  Place there() const { return {wt.string(), "task/T001"}; }
  Place main() const { return {fs::weakly_canonical(p.dir()).string(), "main"}; }
};

std::string evidence(const std::string& atoms) { return R"({"id":"T001","evidence":)" + atoms + "}"; }

/// Strict evidence, task T001, and the caller in the sibling worktree with a session that claims it.
void claim_in_worktree(test::Project& p, const Sibling& repo) {
  set_config(p, "verification.evidence", R"("strict")");
  p.add(R"({"title":"Log in"})");
  p.set_place(repo.there());
  require_ok(p.mutate("session", "start", R"({"scope":"task:T001","focus":"T001"})"));
}

}  // namespace

TEST_CASE("evidence is hashed in the caller's worktree and checked there again until it is removed",
          "[worktrees][evidence][git]") {
  test::Project p;
  Sibling repo(p);
  // An agent in ../wt-a: its session records the worktree and branch, and src/new.c — which only
  // that worktree holds — is its work, hashed there.
  claim_in_worktree(p, repo);
  Envelope ours = p.mutate("tasks", "evidence", evidence(R"({"files":["src/a.c","src/new.c"]})"));
  require_ok(ours);
  const json::Value& atom = ours.data["atoms"].as_array()[0];
  CHECK(atom["verified"] == json::Value(true));
  CHECK(atom["detail"]["change"] == json::Value("branch task/T001 since the main worktree's HEAD"));
  const std::string recorded = atom["detail"]["worktree"].as_string();
  CHECK(fs::path(recorded).is_relative());
  CHECK((fs::weakly_canonical(p.dir()) / recorded).lexically_normal() == repo.wt);

  // The same call with no place (HTTP) reads the project's root, where src/new.c does not exist.
  p.set_place({});
  Envelope at_root = p.mutate("tasks", "evidence", evidence(R"({"files":["src/new.c"]})"));
  CHECK(code_of(at_root) == "E_EVIDENCE_INVALID");
  CHECK(at_root.error->message.find("does not exist") != std::string::npos);

  // A person in the main checkout, before the branch is merged: the atom is checked in ../wt-a,
  // where it still holds — no false staleness from main's older src/a.c.
  p.set_place(repo.main());
  SECTION("unchanged in its worktree: it completes from the main checkout") {
    require_ok(p.mutate("tasks", "complete", R"({"id":"T001"})"));
  }
  SECTION("changed in its worktree after it was recorded: stale, though main's file did not move") {
    write_file(repo.wt / "src" / "new.c", "int fresh = 2;\n");
    Envelope stale = p.mutate("tasks", "complete", R"({"id":"T001"})");
    CHECK(code_of(stale) == "E_EVIDENCE_STALE");
    INFO(to_json(stale, McpAdvice(registry())));
    CHECK(to_json(stale, McpAdvice(registry())).find("src/new.c changed") != std::string::npos);
  }
  SECTION("its worktree removed: checked in the caller's own, stale until the branch is merged") {
    test::git(p.dir(), {"worktree", "remove", "--force", repo.wt.string()});
    Envelope unmerged = p.mutate("tasks", "complete", R"({"id":"T001"})");
    CHECK(code_of(unmerged) == "E_EVIDENCE_STALE");
    const std::string said = to_json(unmerged, McpAdvice(registry()));
    CHECK(said.find("src/a.c changed") != std::string::npos);
    CHECK(said.find("src/new.c is gone") != std::string::npos);
    test::git(p.dir(), {"merge", "-q", "--ff-only", "task/T001"});
    require_ok(p.mutate("tasks", "complete", R"({"id":"T001"})"));
  }
}

TEST_CASE("a commit made in the caller's worktree is reachable there, and stays so from the main checkout",
          "[worktrees][evidence][git]") {
  test::Project p;
  Sibling repo(p);
  claim_in_worktree(p, repo);
  const std::string work = test::git(repo.wt, {"rev-parse", "HEAD"});
  Envelope cited = p.mutate("tasks", "evidence", evidence(R"({"commit":")" + work + R"("})"));
  require_ok(cited);
  const json::Value& atom = cited.data["atoms"].as_array()[0];
  CHECK(atom["detail"]["reachable"] == json::Value(true));  // from wt-a's HEAD, not main's
  CHECK(atom["detail"]["worktree"].is_string());
  p.set_place(repo.main());
  require_ok(p.mutate("tasks", "complete", R"({"id":"T001"})"));
}

TEST_CASE("validate.test.run runs the test command in the caller's worktree", "[worktrees][git][validate]") {
  test::Project p;
  Sibling repo(p);
  p.add(R"({"title":"Log in"})");
  // `test -f src/new.c` passes only where src/new.c is: in wt-a.
  set_config(p, "validate.testCommand", R"("test -f src/new.c")");
  const std::string run = R"({"id":"T001"})";
  p.set_place(repo.there());
  Envelope in_worktree = p.mutate("validate", "test.run", run);
  require_ok(in_worktree);
  CHECK(in_worktree.data["passed"] == json::Value(true));
  for (const Place& place : {repo.main(), Place{}}) {
    p.set_place(place);
    Envelope at_root = p.mutate("validate", "test.run", run);
    require_ok(at_root);
    CHECK(at_root.data["passed"] == json::Value(false));
  }
}

TEST_CASE("memory file scopes are anchored and checked in the caller's worktree", "[worktrees][git][memory]") {
  test::Project p;
  Sibling repo(p);
  p.set_place(repo.there());
  Envelope observed = p.mutate("memory", "observe", R"({"kind":"learning","title":"Fresh needs a value","files":["src/new.c"]})");
  require_ok(observed);
  CHECK(observed.warnings.empty());  // src/new.c exists where the caller works
  CHECK_FALSE(p.query("memory", "show", R"({"id":"M001"})").data.contains("stale"));
  write_file(repo.wt / "src" / "new.c", "int fresh = 3;\n");
  CHECK(p.query("memory", "show", R"({"id":"M001"})").data["stale"]["what"] == json::Value("changed"));

  // From the project's root, where there is no src/new.c, the same scope cannot be anchored.
  p.set_place({});
  Envelope at_root = p.mutate("memory", "observe", R"({"kind":"learning","title":"Fresh again","files":["src/new.c"]})");
  require_ok(at_root);
  REQUIRE_FALSE(at_root.warnings.empty());
  CHECK(mcp_text(at_root.warnings.front(), registry()).find("src/new.c does not exist") != std::string::npos);
}
