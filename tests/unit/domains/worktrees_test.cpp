// Many agents, one repository (issue 53): sessions record the git worktree and branch their caller
// works in, and show them (session.show/list, a task's claim, the briefing); system.init refuses a
// store of its own in a linked worktree; orchestrate.spawn {execute:true} with
// orchestrator.worktrees runs the agent in a worktree and branch of the task's own, which
// orchestrate.worktrees lists and orchestrate.worktrees.prune removes once the task is finished.
#include <catch2/catch.hpp>

#include <fstream>

#include "gateway/mcp_syntax.h"
#include "unit/git_repo.h"
#include "unit/test_support.h"

using namespace ct;
using ct::test::code_of;

namespace {

namespace fs = std::filesystem;

void require_ok(const Envelope& e) {
  INFO(to_json(e, McpAdvice(registry())));
  REQUIRE(e.success);
}

/// A change of `field` in the newest audit row of `operation`.
json::Value audited(test::Project& p, std::string_view operation, std::string_view field) {
  Envelope log = p.query("system", "log", std::string(R"({"detail":"full","operation":")") + std::string(operation) + "\"}");
  require_ok(log);
  for (const auto& row : log.data.as_array())
    for (const auto& change : row["changes"].as_array())
      if (change["field"].as_string() == field) return change;
  return json::Value();
}

}  // namespace

TEST_CASE("sessions record the worktree and branch their caller works in, and show them", "[worktrees][git]") {
  test::Project p;
  p.add(R"({"title":"Port the parser"})");
  const fs::path root = fs::weakly_canonical(p.dir());
  test::git_repository(root);
  test::git(root, {"worktree", "add", "-q", "-b", "feature", ".worktrees/feature-x"});
  const fs::path feature = root / ".worktrees" / "feature-x";
  p.set_place({feature.string(), "feature"});
  Envelope started = p.mutate("session", "start", R"({"scope":"global","focus":"T001"})");
  require_ok(started);

  Envelope shown = p.query("session", "show");
  require_ok(shown);
  CHECK(shown.data["worktree"].as_string() == ".worktrees/feature-x");
  CHECK(shown.data["branch"].as_string() == "feature");
  Envelope listed = p.query("session", "list");
  require_ok(listed);
  CHECK(listed.data.as_array().front()["worktree"].as_string() == ".worktrees/feature-x");
  // Who works on the task, and where.
  Envelope task = p.query("tasks", "show", R"({"id":"T001"})");
  require_ok(task);
  CHECK(task.data["claim"]["worktree"].as_string() == ".worktrees/feature-x");
  CHECK(task.data["claim"]["branch"].as_string() == "feature");
  Envelope briefing = p.query("session", "briefing");
  require_ok(briefing);
  CHECK(briefing.data["session"]["branch"].as_string() == "feature");
  CHECK(audited(p, "session.start", "branch")["after"].as_string() == "feature");

  // Resumed from the main worktree: it runs there now (audited); the main worktree is not shown.
  require_ok(p.mutate("session", "suspend"));
  p.set_place({root.string(), "main"});
  require_ok(p.mutate("session", "resume", "{\"id\":\"" + started.data["id"].as_string() + "\"}"));
  shown = p.query("session", "show");
  require_ok(shown);
  CHECK_FALSE(shown.data.contains("worktree"));
  CHECK(shown.data["branch"].as_string() == "main");
  CHECK(audited(p, "session.resume", "worktree")["before"].as_string() == feature.string());

  // A caller whose transport cannot say (HTTP), or who works in another repository (ct --project
  // from elsewhere), records nothing, and nothing is shown.
  test::TempDir elsewhere;
  test::git_repository(elsewhere.path());
  for (const Place& place : {Place{}, Place{fs::weakly_canonical(elsewhere.path()).string(), "main"}}) {
    p.set_place(place);
    require_ok(p.mutate("session", "end"));
    require_ok(p.mutate("session", "start", R"({"scope":"global"})"));
    shown = p.query("session", "show");
    require_ok(shown);
    CHECK_FALSE(shown.data.contains("worktree"));
    CHECK_FALSE(shown.data.contains("branch"));
  }
}

TEST_CASE("system.init in a linked git worktree refuses to split the repository's store", "[worktrees][git]") {
  test::Project p;
  const fs::path root = fs::weakly_canonical(p.dir());
  test::git_repository(root);
  test::git(root, {"worktree", "add", "-q", "-b", "side", ".worktrees/side"});
  const fs::path side = root / ".worktrees" / "side";

  Router router(registry(), Workspace::open(side), RouterOptions{}, std::make_unique<SystemClock>());
  Envelope agent = router.dispatch({Gateway::Mutate, "system", "init", json::Value::object()});
  CHECK(code_of(agent) == "E_INVALID_INPUT");
  CHECK(agent.error->details["worktree"].as_string() == side.string());
  CHECK(agent.error->details["main"].as_string() == root.string());
  CHECK(agent.error->message.find("shares the store") != std::string::npos);
  CHECK_FALSE(fs::exists(side / ".cleo" / "tasks.db"));
  // Its commands use the repository's store already.
  Envelope listed = router.dispatch({Gateway::Query, "tasks", "list", json::Value::object()});
  CHECK(listed.success);

  Envelope forced = router.dispatch({Gateway::Mutate, "system", "init", test::parse_json(R"({"separate":true})")});
  CHECK(code_of(forced) == "E_MUTATION_DISABLED");
  Envelope person = router.dispatch(
      {Gateway::Mutate, "system", "init", test::parse_json(R"({"separate":true})"), {.principal = test::test_person()}});
  require_ok(person);
  CHECK(person.data["created"] == json::Value(true));
  CHECK(fs::exists(side / ".cleo"));
}

TEST_CASE("orchestrate.spawn runs each task's agent in a worktree of its own; list and prune them", "[worktrees][git]") {
  test::Project p;
  const fs::path root = fs::weakly_canonical(p.dir());
  test::git_repository(root);
  p.add(R"({"title":"Parser"})");
  p.add(R"({"title":"Printer"})");
  p.add(R"({"title":"Linter"})");
  require_ok(p.mutate_as_person("system", "config.set", R"({"key":"orchestrator.spawnCommand","value":"pwd"})"));

  // Off by default: the agent runs in the project root, and no worktree is made.
  Envelope plain = p.mutate("orchestrate", "spawn", R"({"id":"T003","execute":true})");
  require_ok(plain);
  CHECK_FALSE(plain.data.contains("worktree"));
  CHECK(code_of(p.mutate("system", "config.set", R"({"key":"orchestrator.worktrees","value":".worktrees/{task}"})")) ==
        "E_MUTATION_DISABLED");
  CHECK(code_of(p.mutate_as_person("system", "config.set", R"({"key":"orchestrator.worktrees","value":"../x"})")) ==
        "E_INVALID_INPUT");
  require_ok(p.mutate_as_person("system", "config.set", R"({"key":"orchestrator.worktrees","value":".worktrees/{task}"})"));

  const std::string base = test::git(root, {"rev-parse", "HEAD"});
  Envelope spawned = p.mutate("orchestrate", "spawn", R"({"id":"T001","execute":true})");
  require_ok(spawned);
  const fs::path t1 = root / ".worktrees" / "T001";
  CHECK(spawned.data["worktree"]["path"].as_string() == t1.string());
  CHECK(spawned.data["worktree"]["branch"].as_string() == "cleo/T001");
  CHECK(spawned.data["worktree"]["base"].as_string() == base.substr(0, 12));
  CHECK(spawned.data["worktree"]["created"] == json::Value(true));
  CHECK(spawned.data["run"]["outputTail"].as_string().find(t1.string()) != std::string::npos);  // pwd ran there
  CHECK(test::git(t1, {"rev-parse", "--abbrev-ref", "HEAD"}) == "cleo/T001");
  CHECK(audited(p, "orchestrate.spawn", "worktree")["after"]["base"].as_string() == base);

  // Spawned again: the same worktree, not another.
  Envelope again = p.mutate("orchestrate", "spawn", R"({"id":"T001","execute":true})");
  require_ok(again);
  CHECK(again.data["worktree"]["path"].as_string() == t1.string());
  CHECK_FALSE(again.data["worktree"].contains("created"));

  // A folder or a branch that is something else's is refused with a fix.
  fs::create_directories(root / ".worktrees" / "T002");
  Envelope taken = p.mutate("orchestrate", "spawn", R"({"id":"T002","execute":true})");
  CHECK(code_of(taken) == "E_VALIDATION");
  CHECK(taken.error->details["path"].as_string() == (root / ".worktrees" / "T002").string());
  fs::remove_all(root / ".worktrees" / "T002");
  test::git(root, {"branch", "cleo/T002"});
  Envelope branch = p.mutate("orchestrate", "spawn", R"({"id":"T002","execute":true})");
  CHECK(code_of(branch) == "E_VALIDATION");
  CHECK(branch.error->details["branch"].as_string() == "cleo/T002");
  test::git(root, {"branch", "-D", "cleo/T002"});
  require_ok(p.mutate("orchestrate", "spawn", R"({"id":"T002","execute":true})"));

  // Listed with their tasks' state; uncommitted work shows.
  { std::ofstream(t1 / "parser.cpp") << "int main() {}\n"; }
  Envelope listed = p.query("orchestrate", "worktrees");
  require_ok(listed);
  REQUIRE(listed.data.as_array().size() == 2);
  const json::Value& row = listed.data.as_array().front();
  CHECK(row["id"].as_string() == "T001");
  CHECK(row["status"].as_string() == "pending");
  CHECK(row["path"].as_string() == ".worktrees/T001");
  CHECK(row["dirty"] == json::Value(true));
  CHECK_FALSE(listed.data.as_array()[1].contains("dirty"));

  // Pruned only once finished, never with uncommitted work, an unmerged branch only by a person's force.
  Envelope early = p.mutate("orchestrate", "worktrees.prune");
  require_ok(early);
  CHECK(early.data["pruned"].as_array().empty());
  CHECK(early.data["kept"].as_array().size() == 2);
  require_ok(p.mutate("tasks", "complete", R"({"id":"T001"})"));
  require_ok(p.mutate("tasks", "complete", R"({"id":"T002"})"));
  Envelope dirty = p.mutate("orchestrate", "worktrees.prune", R"({"id":"T001"})");
  require_ok(dirty);
  CHECK(dirty.data["kept"].as_array().front()["why"].as_string().find("uncommitted") != std::string::npos);
  CHECK(fs::exists(t1 / "parser.cpp"));
  test::git(t1, {"add", "parser.cpp"});
  test::git(t1, {"commit", "-q", "-m", "parser"});
  Envelope unmerged = p.mutate("orchestrate", "worktrees.prune", R"({"id":"T001"})");
  require_ok(unmerged);
  CHECK(unmerged.data["kept"].as_array().front()["why"].as_string().find("not merged") != std::string::npos);
  CHECK(code_of(p.mutate("orchestrate", "worktrees.prune", R"({"id":"T001","force":true})")) == "E_MUTATION_DISABLED");

  // T002's branch holds nothing beyond HEAD: an agent prunes it; the dry run first removes nothing.
  Envelope dry = p.mutate("orchestrate", "worktrees.prune", R"({"id":"T002","dryRun":true})");
  require_ok(dry);
  CHECK(dry.data["pruned"].as_array().size() == 1);
  CHECK(fs::exists(root / ".worktrees" / "T002"));
  Envelope pruned = p.mutate("orchestrate", "worktrees.prune", R"({"id":"T002"})");
  require_ok(pruned);
  CHECK(pruned.data["pruned"].as_array().front()["id"].as_string() == "T002");
  CHECK_FALSE(fs::exists(root / ".worktrees" / "T002"));
  CHECK_FALSE(test::git_ok(root, {"rev-parse", "--verify", "--quiet", "refs/heads/cleo/T002"}));
  CHECK(audited(p, "orchestrate.worktrees.prune", "worktree")["after"].is_null());

  Envelope forced = p.mutate_as_person("orchestrate", "worktrees.prune", R"({"id":"T001","force":true})");
  require_ok(forced);
  CHECK(forced.data["pruned"].as_array().front()["unmerged"] == json::Value(true));
  CHECK_FALSE(fs::exists(t1));
  CHECK(p.query("orchestrate", "worktrees").note == ErrorCode::NoData);
  CHECK(code_of(p.mutate("orchestrate", "worktrees.prune", R"({"id":"T001"})")) == "E_NOT_FOUND");
}

TEST_CASE("orchestrate.spawn with worktrees outside a git repository says so", "[worktrees]") {
  test::Project p;
  p.add(R"({"title":"Parser"})");
  require_ok(p.mutate_as_person("system", "config.set", R"({"key":"orchestrator.spawnCommand","value":"pwd"})"));
  require_ok(p.mutate_as_person("system", "config.set", R"({"key":"orchestrator.worktrees","value":".worktrees/{task}"})"));
  Envelope refused = p.mutate("orchestrate", "spawn", R"({"id":"T001","execute":true})");
  CHECK(code_of(refused) == "E_CAPABILITY_UNAVAILABLE");
  CHECK(refused.error->message.find("not in a git repository") != std::string::npos);
}

TEST_CASE("the tasks' worktrees are listed by task number, pruned ones only when asked", "[worktrees]") {
  test::Project p;
  auto store = project_store(ct::Project{p.dir()})->open(StoreOptions{});
  REQUIRE(store);
  REQUIRE((*store)->begin(TxKind::Write));
  for (const char* id : {"T1000", "T999", "T12"}) {
    TaskWorktree row{.task_id = id, .worktree = p.dir().string() + "-" + id, .branch = std::string("cleo/") + id,
                     .base = "", .session = "", .created_at = 1};
    if (std::string_view(id) == "T12") row.pruned_at = 2;
    REQUIRE((*store)->save_task_worktree(row));
  }
  REQUIRE((*store)->commit());
  auto ids = [&](bool pruned) {
    auto rows = (*store)->list_task_worktrees(pruned);
    REQUIRE(rows);
    std::vector<std::string> out;
    for (const auto& row : *rows) out.push_back(row.task_id);
    return out;
  };
  CHECK(ids(false) == std::vector<std::string>{"T999", "T1000"});
  CHECK(ids(true) == std::vector<std::string>{"T12", "T999", "T1000"});
}
