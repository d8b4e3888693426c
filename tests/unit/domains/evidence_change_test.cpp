// Evidence is this task's work (issue 53): commit and files atoms are judged against the task's own
// change — its branch in a linked worktree against its base (task_worktrees, or the branch of the
// session that claims it), else the commits its evidence cites — in real git repositories: strict
// refuses what lies outside with what the change touched, advisory records it as unrelated (it
// verifies nothing), renames count for both names, and with no change to judge against a files atom
// is recorded unchecked, never verified. Runs on both backends (the branch comes from the store).
#include <catch2/catch.hpp>

#include <fstream>

#include "engines/adapters/git_change.h"
#include "gateway/mcp_syntax.h"
#include "unit/git_repo.h"
#include "unit/project_edits.h"
#include "unit/test_support.h"

using namespace ct;

namespace {

ErrorCode code_of(const Envelope& e) { return e.error ? e.error->code : ErrorCode::Internal; }

using test::write_file;
using test::set_config;

void store_sql(test::Project& p, const std::string& text) { test::run_sql(p.dir() / ".cleo" / "tasks.db", text); }

/// The project as a git repository (main): src/a.c, src/b.c and docs/old.md in its first commit; a
/// linked worktree on branch `branch` whose one commit changes src/a.c and renames docs/old.md to
/// docs/new.md; then a commit on main that only adds src/other.c — none of the branch's work.
struct Repo {
  test::Project& p;
  test::TempDir worktrees;
  std::string base, work, unrelated;

  Repo(test::Project& project, const std::string& branch) : p(project) {
    test::git(p.dir(), {"init", "-q", "-b", "main"});
    test::git(p.dir(), {"config", "user.name", "Evidence Tester"});
    test::git(p.dir(), {"config", "user.email", "tester@example.com"});
    write_file(p.dir() / ".gitignore", ".cleo/\n");
    write_file(p.dir() / "src" / "a.c", "int a;\n");
    write_file(p.dir() / "src" / "b.c", "int b;\n");
    write_file(p.dir() / "docs" / "old.md", "# The guide\n\nHow to log in, in three steps.\n");
    test::git(p.dir(), {"add", "."});
    test::git(p.dir(), {"commit", "-q", "-m", "first"});
    base = test::git(p.dir(), {"rev-parse", "HEAD"});
    add_branch(branch);
    write_file(p.dir() / "src" / "other.c", "int other;\n");
    test::git(p.dir(), {"add", "src/other.c"});
    test::git(p.dir(), {"commit", "-q", "-m", "unrelated"});
    unrelated = test::git(p.dir(), {"rev-parse", "HEAD"});
  }

  /// A linked worktree on a new branch from main, with one commit of the task's work.
  void add_branch(const std::string& branch) {
    const auto wt = worktrees.path() / branch.substr(branch.rfind('/') + 1);
    test::git(p.dir(), {"worktree", "add", "-q", "-b", branch, wt.string()});
    write_file(wt / "src" / "a.c", "int a = 1;\n");
    test::git(wt, {"mv", "docs/old.md", "docs/new.md"});
    test::git(wt, {"commit", "-q", "-am", "the task's work"});
    work = test::git(wt, {"rev-parse", "HEAD"});
  }
};

std::string evidence(const std::string& id, const std::string& atoms) {
  return R"({"id":")" + id + R"(","evidence":)" + atoms + "}";
}

}  // namespace

TEST_CASE("git_change reads one git log: commits, paths, both names of a rename", "[evidence][change]") {
  using namespace std::string_literals;
  const std::string out = "\x01" "aaa\0\nM\0src/a.c\0R100\0docs/old.md\0docs/new.md\0"s +
                          "\x01" "bbb\0\nA\0we ird\tname.txt\0"s + "\x01" "ccc\0"s;
  git::Change change = git::parse_change(out);
  CHECK(change.commits == std::vector<std::string>{"aaa", "bbb", "ccc"});
  CHECK(change.paths == std::vector<std::string>{"docs/new.md", "docs/old.md", "src/a.c", "we ird\tname.txt"});
  CHECK(change.touches("docs/old.md"));
  CHECK_FALSE(change.touches("src"));
  CHECK(change.has_commit("bbb"));
  CHECK_FALSE(change.truncated);
  CHECK(git::parse_change("").commits.empty());
  // A branch is read as refs/heads/…, its base excluded; revisions come after --end-of-options.
  auto argv = git::change_argv("task/T001", "main-worktree/HEAD");
  auto end = std::find(argv.begin(), argv.end(), "--end-of-options");
  REQUIRE(end != argv.end());
  CHECK(std::vector<std::string>(end + 1, argv.end()) ==
        std::vector<std::string>{"refs/heads/task/T001", "^main-worktree/HEAD", "--"});
  argv = git::change_argv("", "", {"abc"});
  CHECK(std::find(argv.begin(), argv.end(), "--no-walk=unsorted") != argv.end());
}

TEST_CASE("evidence on a task's branch: strict refuses another change's commit and files", "[evidence][change]") {
  test::Project p;
  Repo repo(p, "task/T001");
  set_config(p, "verification.evidence", R"("strict")");
  p.add(R"({"title":"Log in","acceptance":["a password logs in"]})");
  store_sql(p, "INSERT INTO task_worktrees(task_id, worktree, branch, base, session, created_at) VALUES ('T001', '" +
             (repo.worktrees.path() / "T001").string() + "', 'task/T001', '" + repo.base + "', '', 1)");

  // Measured on main before: a commit anywhere in the repository was verified for any task.
  Envelope other = p.mutate("tasks", "evidence", evidence("T001", R"({"commit":")" + repo.unrelated + R"("})"));
  INFO(to_json(other, McpAdvice(registry())));
  REQUIRE(code_of(other) == ErrorCode::EvidenceInvalid);
  CHECK(other.error->message.find("commit " + repo.unrelated.substr(0, 12) + " is not T001's work") != std::string::npos);
  CHECK(other.error->message.find("branch task/T001 since " + repo.base.substr(0, 12)) != std::string::npos);
  CHECK(other.error->message.find("docs/new.md, docs/old.md, src/a.c") != std::string::npos);
  CHECK(other.error->details["change"]["commits"] == json::Value::array_of(std::vector<std::string>{repo.work}));
  CHECK(other.error->details["change"]["branch"] == json::Value("task/T001"));
  CHECK(other.error->details["outside"] == json::Value::array_of(std::vector<std::string>{repo.unrelated}));
  CHECK(mcp_text(other.error->fix, registry()).find("git log " + repo.base + "..task/T001") != std::string::npos);
  // The base itself is not the branch's work either.
  CHECK(code_of(p.mutate("tasks", "evidence", evidence("T001", R"({"commit":")" + repo.base + R"("})"))) ==
        ErrorCode::EvidenceInvalid);

  // A file the branch did not touch (it exists, its checksum is fine): refused, naming it.
  Envelope untouched = p.mutate("tasks", "evidence", evidence("T001", R"({"files":["src/a.c","src/b.c"]})"));
  REQUIRE(code_of(untouched) == ErrorCode::EvidenceInvalid);
  CHECK(untouched.error->details["outside"] == json::Value::array_of(std::vector<std::string>{"src/b.c"}));
  CHECK(untouched.error->details["change"]["paths"] ==
        json::Value::array_of(std::vector<std::string>{"docs/new.md", "docs/old.md", "src/a.c"}));
  CHECK(p.query("tasks", "show", R"({"id":"T001"})").data["evidence"].is_null());  // nothing recorded

  // The branch's commit, the file it changed and the old name of the file it renamed: its work.
  Envelope ours = p.mutate("tasks", "evidence",
                           evidence("T001", R"([{"commit":"task/T001","covers":[1]},{"files":["src/a.c","docs/old.md"]}])"));
  INFO(to_json(ours, McpAdvice(registry())));
  REQUIRE(ours.success);
  CHECK(ours.warnings.empty());
  const json::Value& atoms = ours.data["atoms"];
  REQUIRE(atoms.size() == 2);
  CHECK(atoms.as_array()[0]["ref"] == json::Value(repo.work));
  CHECK(atoms.as_array()[0]["verified"] == json::Value(true));
  CHECK(atoms.as_array()[0]["detail"]["change"] == json::Value("branch task/T001 since " + repo.base.substr(0, 12)));
  CHECK(atoms.as_array()[1]["verified"] == json::Value(true));
  CHECK_FALSE(atoms.as_array()[1].contains("unrelated"));
  CHECK(ours.data["coverage"]["covered"] == test::parse_json("[1]"));
}

TEST_CASE("evidence in advisory mode: another change's work is recorded as unrelated and verifies nothing",
          "[evidence][change]") {
  test::Project p;
  Repo repo(p, "task/T001");
  set_config(p, "verification.required", R"("[\"implemented\"]")");
  p.add(R"({"title":"Log in","acceptance":["a password logs in"]})");
  store_sql(p, "INSERT INTO task_worktrees(task_id, worktree, branch, base, session, created_at) VALUES ('T001', 'wt', "
         "'task/T001', '" + repo.base + "', '', 1)");
  Envelope passed = p.mutate("lifecycle", "gate.pass",
                             R"({"id":"T001","gate":"implemented","evidence":[{"commit":")" + repo.unrelated +
                                 R"(","covers":[1]},{"files":["src/b.c"]}]})");
  INFO(to_json(passed, McpAdvice(registry())));
  REQUIRE(passed.success);  // advisory: recorded, and said
  std::string warned;
  for (const auto& warning : passed.warnings) warned += mcp_text(warning, registry()) + "\n";
  CHECK(warned.find("E001 recorded as unrelated, verifying nothing: commit " + repo.unrelated.substr(0, 12)) !=
        std::string::npos);
  CHECK(warned.find("E002 recorded as unrelated, verifying nothing: file src/b.c is not T001's work") != std::string::npos);
  CHECK(warned.find("needs checked evidence") != std::string::npos);  // the required gate's own warning
  Envelope shown = p.query("tasks", "show", R"({"id":"T001"})");
  REQUIRE(shown.data["evidence"]["atoms"].size() == 2);
  for (const auto& atom : shown.data["evidence"]["atoms"].as_array()) {
    CHECK(atom["verified"] == json::Value(false));
    CHECK(atom["unrelated"] == json::Value(true));
    CHECK(atom["detail"]["unrelated"].is_string());
  }
  // It covers nothing: criterion 1 stays uncovered even in advisory mode.
  CHECK(shown.data["evidence"]["coverage"]["uncovered"] == test::parse_json("[1]"));
  // The branch's commit takes the place of the unrelated one; an unrelated commit after it does not
  // take its place in turn.
  REQUIRE(p.mutate("tasks", "evidence", evidence("T001", R"({"commit":")" + repo.work + R"(","covers":[1]})")).success);
  REQUIRE(p.mutate("tasks", "evidence", evidence("T001", R"({"commit":")" + repo.unrelated + R"("})")).success);
  shown = p.query("tasks", "show", R"({"id":"T001"})");
  CHECK(shown.data["evidence"]["coverage"]["covered"] == test::parse_json("[1]"));
  std::vector<std::string> current;
  for (const auto& atom : shown.data["evidence"]["atoms"].as_array()) current.push_back(atom["id"].as_string());
  CHECK(current == std::vector<std::string>{"E002", "E003", "E004"});
  // Strict from here: the branch still decides what is this task's work.
  set_config(p, "verification.evidence", R"("strict")");
  REQUIRE(code_of(p.mutate("tasks", "evidence", evidence("T001", R"({"files":["src/other.c"]})"))) ==
          ErrorCode::EvidenceInvalid);
}

TEST_CASE("evidence on the branch of the session that claims the task, against the main worktree's HEAD",
          "[evidence][change]") {
  test::Project p;
  Repo repo(p, "task/T001");
  set_config(p, "verification.evidence", R"("strict")");
  p.add(R"({"title":"Log in"})");
  Envelope started = p.mutate("session", "start", R"({"scope":"task:T001","focus":"T001"})");
  INFO(to_json(started, McpAdvice(registry())));
  REQUIRE(started.success);
  const std::string session = p.session();
  REQUIRE_FALSE(session.empty());
  // What session.start records in a linked worktree (issue 53, part 1), set here directly.
  store_sql(p, "UPDATE sessions SET worktree = 'wt', branch = 'task/T001' WHERE id = '" + session + "'");
  CHECK(code_of(p.mutate("tasks", "evidence", evidence("T001", R"({"commit":")" + repo.unrelated + R"("})"))) ==
        ErrorCode::EvidenceInvalid);
  Envelope ours = p.mutate("tasks", "evidence", evidence("T001", R"([{"commit":")" + repo.work +
                                                                      R"("},{"files":["src/a.c"]}])"));
  INFO(to_json(ours, McpAdvice(registry())));
  REQUIRE(ours.success);
  CHECK(ours.data["atoms"].as_array()[1]["detail"]["change"] == json::Value("branch task/T001 since the main worktree's HEAD"));

  // A session on main itself (its branch has no commits beyond main's HEAD): the cited commits are
  // the change, each its own.
  store_sql(p, "UPDATE sessions SET branch = 'main' WHERE id = '" + session + "'");
  Envelope on_main = p.mutate("tasks", "evidence", evidence("T001", R"([{"commit":")" + repo.unrelated +
                                                                        R"("},{"files":["src/other.c"]}])"));
  INFO(to_json(on_main, McpAdvice(registry())));
  REQUIRE(on_main.success);
  CHECK(on_main.data["atoms"].as_array()[2]["detail"]["change"] ==
        json::Value("the cited commits " + std::min(repo.unrelated, repo.work).substr(0, 12) + ", " +
                    std::max(repo.unrelated, repo.work).substr(0, 12)));
}

TEST_CASE("evidence with no branch: the cited commits are the change, renames count for both names",
          "[evidence][change]") {
  test::Project p;
  Repo repo(p, "task/T009");
  set_config(p, "verification.evidence", R"("strict")");
  p.add(R"({"title":"Move the guide"})");
  // The work on main: the guide renamed.
  test::git(p.dir(), {"mv", "docs/old.md", "docs/guide.md"});
  test::git(p.dir(), {"commit", "-q", "-m", "the guide moves"});
  const std::string moved = test::git(p.dir(), {"rev-parse", "HEAD"});

  // No commit cited, no branch: nothing to judge files against — recorded, never verified.
  Envelope unchecked = p.mutate("tasks", "evidence", evidence("T001", R"({"files":["docs/guide.md"]})"));
  INFO(to_json(unchecked, McpAdvice(registry())));
  REQUIRE(unchecked.success);
  const json::Value& atom = unchecked.data["atoms"].as_array()[0];
  CHECK(atom["verified"] == json::Value(false));
  CHECK(atom["detail"]["unchecked"] ==
        json::Value("not checked against T001's change: it runs on no branch of its own and its evidence cites no commit"));
  REQUIRE(unchecked.warnings.size() == 1);
  CHECK(mcp_text(unchecked.warnings[0], registry()).find("cite the commit that holds the work") != std::string::npos);

  // Cited in the call: the new name is touched; a file it did not touch is refused with what it did.
  Envelope refused = p.mutate("tasks", "evidence", evidence("T001", R"([{"commit":")" + moved +
                                                                        R"("},{"files":["src/a.c"]}])"));
  REQUIRE(code_of(refused) == ErrorCode::EvidenceInvalid);
  CHECK(refused.error->details["field"] == json::Value("evidence[1]"));
  CHECK(refused.error->message.find("the cited commit " + moved.substr(0, 12) + ": 1 commit touching docs/guide.md, docs/old.md") !=
        std::string::npos);
  Envelope cited = p.mutate("tasks", "evidence", evidence("T001", R"([{"commit":")" + moved +
                                                                      R"("},{"files":["docs/guide.md"]}])"));
  INFO(to_json(cited, McpAdvice(registry())));
  REQUIRE(cited.success);
  CHECK(cited.data["atoms"].as_array()[1]["verified"] == json::Value(true));  // E002 the commit, E003 the files
  // Recorded commits stay cited: a later call's files are judged against them.
  Envelope later = p.mutate("tasks", "evidence", evidence("T001", R"({"files":["docs/guide.md"]})"));
  REQUIRE(later.success);
  CHECK(later.warnings.empty());
}

TEST_CASE("evidence outside git: files are recorded unchecked against a change and fail a strict gate",
          "[evidence][change]") {
  test::Project p;
  set_config(p, "verification.evidence", R"("strict")");
  set_config(p, "verification.required", R"("[\"implemented\"]")");
  p.add(R"({"title":"Parser","acceptance":["parses"]})");
  write_file(p.dir() / "parser.c", "int parse(void);\n");
  Envelope gate = p.mutate("lifecycle", "gate.pass",
                           R"({"id":"T001","gate":"implemented","evidence":[{"files":["parser.c"],"covers":[1]}]})");
  INFO(to_json(gate, McpAdvice(registry())));
  REQUIRE(code_of(gate) == ErrorCode::EvidenceUnverified);
  CHECK(gate.error->message.find("files (not checked against T001's change: it runs on no branch of its own and its "
                                 "evidence cites no commit)") != std::string::npos);
  Envelope recorded = p.mutate("tasks", "evidence", evidence("T001", R"({"files":["parser.c"],"covers":[1]})"));
  REQUIRE(recorded.success);
  CHECK(recorded.data["atoms"].as_array()[0]["verified"] == json::Value(false));
  // A commit cannot be cited here: git finds no repository.
  CHECK(code_of(p.mutate("tasks", "evidence", evidence("T001", R"([{"commit":"abc1234"},{"files":["parser.c"]}])"))) ==
        ErrorCode::EvidenceInvalid);
  CHECK(recorded.data["coverage"]["uncovered"] == test::parse_json("[1]"));  // strict: unchecked covers nothing
}
