// Seed 004 (the governed instruction catalogue) end to end, issue 54, with the real `ct` binary over
// `ct mcp` stdio: an agent records a convention (a draft under review, version 1, its change log),
// a person approves it at the command line (version 2, the log says who), the catalogue's
// governance hash moves with each governed change and stands still otherwise, an agent checks a
// plan against the verified conventions (memory.review: the plan that breaks it and the plan that
// follows it), an orchestrator's spawns count the skills they inject (the hot set), a project skill
// edited since its last use is reported by the integrity check and recorded as its next version
// at the next spawn, and nothing is due for review yet. Also on PostgreSQL (tests/CMakeLists.txt).
//
//   ct_e2e_seed004 --ct build/release/ct [--postgresql URL]   (exit 0 = passed, 1 = a check failed)
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "e2e/e2e.h"
#include "support/ct_client.h"
#include "support/sandbox.h"

using namespace ct;
using namespace ct::testing;
using ct::e2e::check;
using ct::e2e::failures;
using ct::e2e::text_of;

int main(int argc, char** argv) {
  const std::string ct = e2e::ct_argument(argc, argv, "ct_e2e_seed004");
  if (ct.empty()) return 2;
  const std::string pg_url = e2e::postgresql_argument(argc, argv);
  auto sandbox = sandbox_or_complain("ct-e2e-seed004");
  if (!sandbox) return 2;
  const auto project = sandbox->root() / "project";
  std::filesystem::create_directories(project / "src" / "net");
  std::ofstream(project / "src" / "net" / "client.cpp") << "int retries = 3;\n";
  std::vector<std::string> env = sandbox->env_for(project);
  e2e::use_postgresql(env, pg_url, "e2e_seed004");
  // Agents have no person key; the person's commands (CtCommand) have the fixture's.
  const std::vector<std::string> agent_env = e2e::without(env, {"CT_PERSON_KEY", "CT_PERSON_KEY_FILE"});
  CtCommand cli(ct, env);
  if (CtRun init = cli.run({"init", "--project", project.string(), "--json"}); init.status.code != 0) {
    std::fprintf(stderr, "ct init failed: %s\n", init.out.c_str());
    return 1;
  }
  auto person = e2e::person_in(cli, project);
  auto agent = McpClient::start(ct, agent_env);
  if (!agent || !agent->initialize()) {
    std::fprintf(stderr, "cannot start the agent's ct mcp\n");
    return 1;
  }
  auto mutate = e2e::calls_of(*agent, "cleo_mutate");
  auto query = e2e::calls_of(*agent, "cleo_query");
  auto catalogue = [&]() { return query("validate", "catalogue", "{}"); };

  // 1. The catalogue before: built-in skills only, approved; its hash is deterministic.
  json::Value empty = catalogue();
  check(succeeded(empty), "validate.catalogue on a new project: " + empty.dump());
  const std::string hash0 = text_of(empty["data"]["hash"]);
  check(hash0.size() == 64, "a SHA-256 governance hash: " + empty.dump());
  check(text_of(catalogue()["data"]["hash"]) == hash0, "the same catalogue hashes the same");

  // 2. An agent records a convention: under review, version 1, one change in its log.
  check(succeeded(mutate("session", "start", R"({"scope":"global","agent":"netter"})")), "the agent starts a session");
  json::Value observed = mutate("memory", "observe",
                                R"({"kind":"convention","title":"Every network retry waits with backoff",)"
                                R"("body":"Retries back off exponentially, capped at 30 s","files":["src/net/"]})");
  check(succeeded(observed), "the convention is recorded: " + observed.dump());
  const std::string id = text_of(observed["data"]["id"]);
  json::Value shown = query("memory", "show", R"({"id":")" + id + "\"}");
  const json::Value& governance = shown["data"]["governance"];
  check(governance["status"] == json::Value("review") && governance["version"] == json::Value(1) &&
            governance["tier"] == json::Value("P1") && governance["owner"] == json::Value("netter") &&
            governance["changes"].size() == 1 && governance["nextReviewDue"].is_string(),
        "an agent's convention is a draft under review, version 1, owned by its agent: " + shown.dump());
  json::Value recorded = catalogue();
  const std::string hash1 = text_of(recorded["data"]["hash"]);
  check(hash1 != hash0 && recorded["data"]["byStatus"]["review"] == json::Value(1),
        "the catalogue counts it under review and its hash moved: " + recorded.dump());

  // 3. A person approves it: version 2, the log names the person; the hash moves again.
  json::Value verified = person({"memory", "verify", id});
  check(succeeded(verified), "a person verifies it: " + verified.dump());
  json::Value approved = query("memory", "show", R"({"id":")" + id + "\"}");
  const json::Value& after = approved["data"]["governance"];
  check(after["status"] == json::Value("approved") && after["version"] == json::Value(2) &&
            after["changes"].size() == 2 && e2e::contains(text_of(after["changes"].as_array()[0]["by"]), "person:"),
        "approved at version 2 by a person: " + approved.dump());
  const std::string hash2 = text_of(catalogue()["data"]["hash"]);
  check(hash2 != hash1, "approval is a governed change: the hash moves");

  // 4. memory.review: a plan that breaks the convention, and one that follows it.
  json::Value breaking = query(
      "memory", "review",
      R"({"text":)" + e2e::json_string("Plan: retry the network call at once, without backoff, in src/net/client.cpp") + "}");
  check(succeeded(breaking) && breaking["data"]["mayBreak"].size() == 1 &&
            breaking["data"]["mayBreak"].as_array()[0]["id"] == json::Value(id),
        "the plan may break the approved convention: " + breaking.dump());
  json::Value following = query("memory", "review", R"({"text":"Each network retry in src/net/ waits with backoff"})");
  check(succeeded(following) && following["data"]["mayBreak"].size() == 0 && following["data"]["touches"].size() == 1,
        "a plan that follows it touches it and breaks nothing: " + following.dump());

  // 5. Spawns count the skills they inject: the hot set.
  json::Value added = mutate("tasks", "add", R"({"title":"Harden the network client","labels":["net"]})");
  const std::string task = text_of(added["data"]["id"]);
  check(!task.empty(), "a task is added: " + added.dump());
  for (int i = 0; i < 2; ++i)
    check(succeeded(mutate("orchestrate", "spawn", R"({"id":")" + task + "\"}")), "a spawn prompt is built");
  json::Value validator = mutate("orchestrate", "spawn", R"({"id":")" + task + R"(","skill":"validator"})");
  check(succeeded(validator) && !validator["data"].contains("_catalogueSkill"), "a spawn with another skill: " + validator.dump());
  json::Value hot = catalogue();
  check(hot["data"]["hot"].size() == 2 && hot["data"]["hot"].as_array()[0]["used"] == json::Value(2) &&
            hot["data"]["hot"].as_array()[1]["skill"] == json::Value("validator"),
        "the hot set: the default skill twice, the validator once: " + hot.dump());

  // 6. A project skill: a draft; edited after its use, the integrity check reports it, and the
  //    next spawn records its new version.
  const auto skill_file = project / ".cleo" / "skills" / "net-hardener.md";
  std::filesystem::create_directories(skill_file.parent_path());
  std::ofstream(skill_file) << "---\nname: net-hardener\ndescription: Hardens network code\ntags: [net]\n---\nCheck retries.\n";
  check(succeeded(mutate("orchestrate", "spawn", R"({"id":")" + task + R"(","skill":"net-hardener"})")),
        "a spawn injects the project skill");
  std::ofstream(skill_file, std::ios::trunc)
      << "---\nname: net-hardener\ndescription: Hardens network code\ntags: [net]\n---\nCheck retries and timeouts.\n";
  json::Value changed = catalogue();
  check(succeeded(changed) && changed["data"]["changed"].size() == 1 &&
            changed["data"]["changed"].as_array()[0]["id"] == json::Value("skill:net-hardener") &&
            changed["data"]["byStatus"]["draft"] == json::Value(1),
        "the edited skill is reported, a draft: " + changed.dump());
  check(succeeded(mutate("orchestrate", "spawn", R"({"id":")" + task + R"(","skill":"net-hardener"})")),
        "the next spawn records its new version");
  json::Value settled = catalogue();
  check(succeeded(settled) && !settled["data"].contains("changed"), "nothing left changed: " + settled.dump());
  const std::string hash3 = text_of(settled["data"]["hash"]);
  check(text_of(catalogue()["data"]["hash"]) == hash3, "no change, no new hash");

  // 7. Nothing is due for review yet (a P1 entry is due 30 days after its review).
  json::Value due = query("memory", "list", R"({"due":true})");
  check(succeeded(due) && due["data"].size() == 0, "nothing is due yet: " + due.dump());

  if (failures > 0) {
    std::fprintf(stderr, "%d check(s) failed\n", failures);
    sandbox->keep();
    return 1;
  }
  std::printf("ok: the catalogue governed a convention from draft to approved, hashed it, reviewed plans against "
              "it, counted the skills spawns injected, and caught an edited skill\n");
  return 0;
}
