// Trust end to end (issue 35), with the real `ct` binary, a real git repository and a real test
// command: an agent on its own `ct mcp` passes the required gates of a task with a commit, files
// and a test run in strict verification.evidence; its file changes and tasks.complete refuses the
// stale evidence; the agent may not waive the criterion no atom covers (a person does, with `ct`),
// and fresh files evidence then completes it. A
// commit the agent recorded for another task is rewritten away (git reset) and refused as stale.
// Completing the epic and deleting a task are only proposed (approval.required): the agent cannot
// approve (over MCP, nor with `ct` in its shell), a person approves one with `ct approve` and
// rejects the other with `ct reject`. The
// audit trail, with evidence, intents, proposals and an epoch in it, still verifies.
//
//   ct_e2e_trust --ct build/release/ct        (exit 0 = passed, 1 = a check failed)
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "e2e/e2e.h"
#include "engines/adapters/subprocess.h"
#include "support/ct_client.h"
#include "support/sandbox.h"

using namespace ct;
using namespace ct::testing;
using ct::e2e::check;
using ct::e2e::failures;

namespace {

/// git in `dir`, its output trimmed; empty when it fails (the failure is counted).
std::string git(const std::filesystem::path& dir, const std::vector<std::string>& env, std::vector<std::string> args) {
  ProcessSpec spec;
  spec.argv = {"git"};
  spec.argv.insert(spec.argv.end(), args.begin(), args.end());
  spec.cwd = dir;
  spec.env = env;
  auto ran = run_process(spec);
  const bool ok = ran && ran->ok();
  check(ok, "git " + args.front() + ": " + (ran ? ran->err : ran.error().message));
  if (!ok) return "";
  std::string out = ran->out;
  while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
  return out;
}

std::string code(const json::Value& envelope) { return error_code(envelope); }

}  // namespace

int main(int argc, char** argv) {
  const std::string ct = e2e::ct_argument(argc, argv, "ct_e2e_trust");
  if (ct.empty()) return 2;
  auto sandbox = sandbox_or_complain("ct-e2e-trust");
  if (!sandbox) return 2;
  const auto project = sandbox->root() / "project";
  std::filesystem::create_directories(project / "src");
  const auto env = sandbox->env_for(project);
  std::vector<std::string> git_env = env;
  git_env.insert(git_env.end(), {"GIT_AUTHOR_NAME=e2e", "GIT_AUTHOR_EMAIL=e2e@example.com", "GIT_COMMITTER_NAME=e2e",
                                 "GIT_COMMITTER_EMAIL=e2e@example.com"});
  std::ofstream(project / "src" / "login.c") << "int login(const char* password) { return password != 0; }\n";
  // The project's real test command: it checks the source the task is about.
  std::ofstream(project / "test.sh") << "grep -q 'int login' src/login.c && echo '1 passed'\n";
  git(project, git_env, {"init", "-q"});
  git(project, git_env, {"add", "."});
  git(project, git_env, {"commit", "-q", "-m", "login"});
  const std::string login_commit = git(project, git_env, {"rev-parse", "HEAD"});

  CtCommand cli(ct, env);
  if (cli.run({"init", "--project", project.string()}).status.code != 0) {
    std::fprintf(stderr, "ct init failed\n");
    return 1;
  }
  auto person = e2e::person_in(cli, project);
  check(succeeded(person({"config", "set", "verification.evidence", "strict"})), "strict evidence");
  check(succeeded(person({"config", "set", "verification.required", R"(["implemented","testsPassed"])"})), "required gates");
  check(succeeded(person({"config", "set", "validate.testCommand", "sh test.sh"})), "the test command");
  check(succeeded(person({"config", "set", "approval.required", R"(["tasks.complete:epic","tasks.delete"])"})),
        "approval rules");

  auto agent = McpClient::start(ct, env);
  if (!agent || !agent->initialize()) {
    std::fprintf(stderr, "cannot start the agent's ct mcp\n");
    return 1;
  }
  auto mutate = e2e::calls_of(*agent, "cleo_mutate");
  auto add = [&](const std::string& params) {
    json::Value added = mutate("tasks", "add", params);
    check(succeeded(added), "task added: " + added.dump());
    return added["data"]["id"].string_or_empty();
  };
  const std::string epic = add(R"({"title":"Accounts","type":"epic"})");
  const std::string task = add(R"({"title":"Log in","parent":")" + epic +
                               R"(","files":["src/login.c"],"acceptance":["a password logs in","a wrong password is refused"]})");
  const std::string other = add(R"({"title":"Log out","parent":")" + epic + R"("})");
  check(succeeded(mutate("session", "start", R"({"scope":"epic:)" + epic + R"(","focus":")" + task + "\"}")), "session");

  // 1. The gates, on checked evidence: a note alone is refused for a required gate.
  json::Value note_only = mutate("lifecycle", "gate.pass", R"({"id":")" + task + R"(","gate":"implemented","evidence":"done, trust me"})");
  check(code(note_only) == "E_EVIDENCE_UNVERIFIED", "a note is not evidence for a required gate: " + note_only.dump());
  json::Value bogus = mutate("lifecycle", "gate.pass", R"({"id":")" + task + R"(","gate":"implemented","evidence":{"commit":"deadbeef"}})");
  check(code(bogus) == "E_EVIDENCE_INVALID", "a commit that does not exist is refused: " + bogus.dump());
  json::Value implemented = mutate("lifecycle", "gate.pass",
                                   R"({"id":")" + task + R"(","gate":"implemented","evidence":[{"commit":")" + login_commit +
                                       R"(","covers":[1]},{"files":["src/login.c"]}],"intent":{"category":"refine","confidence":0.8}})");
  check(succeeded(implemented), "implemented on a commit and its file: " + implemented.dump());
  json::Value run = mutate("validate", "test.run", R"({"id":")" + task + "\"}");
  check(succeeded(run) && run["data"]["passed"] == json::Value(true), "the real test command passes: " + run.dump());
  const std::string recorded = run["data"]["recorded"].is_int() ? std::to_string(run["data"]["recorded"].as_int()) : "0";
  json::Value tested = mutate("lifecycle", "gate.pass",
                              R"({"id":")" + task + R"(","gate":"testsPassed","evidence":{"test":)" + recorded + R"(,"covers":[1]}})");
  check(succeeded(tested), "testsPassed on the recorded run: " + tested.dump());

  // 2. The file changes after the evidence: completion is refused until it is recorded again.
  std::ofstream(project / "src" / "login.c") << "int login(const char* password) { return password && *password; }\n";
  json::Value stale = mutate("tasks", "complete", R"({"id":")" + task + "\"}");
  check(code(stale) == "E_EVIDENCE_STALE", "changed file: stale evidence refused: " + stale.dump());
  check(stale.dump().find("src/login.c changed") != std::string::npos, "it says what changed: " + stale.dump());
  json::Value uncovered = mutate("tasks", "complete", R"({"id":")" + task + R"(","evidence":{"files":["src/login.c"]}})");
  check(code(uncovered) == "E_AC_COVERAGE_INCOMPLETE", "criterion 2 is neither covered nor waived: " + uncovered.dump());
  // Waiving a criterion under strict evidence is a person's act (issue 52): the agent is refused
  // and told what a person runs; the person waives it, and the agent's fresh evidence completes it.
  json::Value self_waived = mutate("tasks", "complete",
                                   R"({"id":")" + task + R"(","evidence":{"files":["src/login.c"]},"waive":[{"criterion":2,"reason":"wrong passwords are the next task's work"}]})");
  check(code(self_waived) == "E_MUTATION_DISABLED", "an agent does not waive a criterion: " + self_waived.dump());
  check(self_waived.dump().find("ct tasks evidence " + task + " --waive") != std::string::npos,
        "the refusal names what a person runs: " + self_waived.dump());
  check(succeeded(person({"tasks", "evidence", task, "--waive",
                          R"([{"criterion":2,"reason":"wrong passwords are the next task's work"}])"})),
        "a person waives criterion 2");
  json::Value done = mutate("tasks", "complete", R"({"id":")" + task + R"(","evidence":{"files":["src/login.c"]}})");
  check(succeeded(done), "fresh evidence and the person's waiver complete it: " + done.dump());
  json::Value shown = person({"show", task});
  check(shown["data"]["evidence"]["coverage"]["waived"].dump() == "[2]", "the waiver shows on the task: " + shown.dump());

  // 3. A commit rewritten away goes stale.
  std::ofstream(project / "src" / "logout.c") << "void logout(void) {}\n";
  git(project, git_env, {"add", "src/logout.c"});
  git(project, git_env, {"commit", "-q", "-m", "logout"});
  const std::string logout_commit = git(project, git_env, {"rev-parse", "HEAD"});
  json::Value logged = mutate("lifecycle", "gate.pass",
                              R"({"id":")" + other + R"(","gate":"implemented","evidence":{"commit":")" + logout_commit + "\"}}");
  check(succeeded(logged), "the logout commit is evidence: " + logged.dump());
  json::Value run2 = mutate("validate", "test.run", R"({"id":")" + other + "\"}");
  const std::string recorded2 = run2["data"]["recorded"].is_int() ? std::to_string(run2["data"]["recorded"].as_int()) : "0";
  check(succeeded(mutate("lifecycle", "gate.pass", R"({"id":")" + other + R"(","gate":"testsPassed","evidence":{"test":)" +
                                                      recorded2 + "}}")),
        "logout's tests pass");
  git(project, git_env, {"reset", "-q", "--hard", "HEAD~1"});
  json::Value rewritten = mutate("tasks", "complete", R"({"id":")" + other + "\"}");
  check(code(rewritten) == "E_EVIDENCE_STALE" && rewritten.dump().find("no longer reaches") != std::string::npos,
        "a commit rewritten away is stale: " + rewritten.dump());

  // 4. People approve what the agent proposes.
  json::Value proposed = mutate("tasks", "complete", R"({"id":")" + epic + R"(","intent":{"category":"checkpoint"}})");
  check(succeeded(proposed) && proposed["_meta"]["code"] == json::Value("E_PROPOSED"), "completing the epic is proposed: " +
                                                                                             proposed.dump());
  const std::string first_id = proposed["data"]["id"].is_string() ? proposed["data"]["id"].as_string() : "P001";
  json::Value self = mutate("system", "proposal.approve", R"({"id":")" + first_id + "\"}");
  check(code(self) == "E_MUTATION_DISABLED", "the agent cannot approve: " + self.dump());
  check(person({"show", epic})["data"]["status"] == json::Value("pending"), "nothing changed before approval");
  // An agent with a shell is no person: `ct approve` in its host's environment is refused, with or
  // without a person key that leaked into that environment (cli/person.h).
  std::vector<std::string> shell_env = env;
  shell_env.push_back("CLAUDECODE=1");
  CtCommand shell(ct, shell_env);
  json::Value by_shell = shell.run({"--project", project.string(), "approve", first_id, "--json"}).json;
  check(code(by_shell) == "E_MUTATION_DISABLED", "an agent's shell cannot approve: " + by_shell.dump());
  json::Value deletion = mutate("tasks", "delete", R"({"id":")" + other + "\"}");
  check(succeeded(deletion) && deletion["_meta"]["code"] == json::Value("E_PROPOSED"), "a deletion is proposed");
  const std::string second_id = deletion["data"]["id"].is_string() ? deletion["data"]["id"].as_string() : "P002";
  check(succeeded(mutate("session", "end", R"({"notes":"accounts done, waiting for approval"})")), "the agent ends its session");
  json::Value approved = person({"approve", first_id});
  check(succeeded(approved), "a person approves: " + approved.dump());
  check(person({"show", epic})["data"]["status"] == json::Value("done"), "the epic is done once approved");
  json::Value rejected = person({"reject", second_id, "logout still ships this sprint"});
  check(succeeded(rejected) && rejected["data"]["status"] == json::Value("rejected"), "a person rejects: " + rejected.dump());
  check(person({"show", other})["data"]["archived"] != json::Value(true), "the rejected deletion changed nothing");

  // 5. The trail holds evidence, intents and proposals, and still verifies; an epoch seals it.
  json::Value refines = person({"log", "--category", "refine"});
  check(refines["data"].size() == 1, "the intent is queryable: " + refines.dump());
  check(succeeded(person({"system", "epoch.seal", "sprint-1", "--summary", "accounts"})), "an epoch is sealed");
  json::Value audit = person({"validate", "audit", "--epoch", "sprint-1"});
  check(succeeded(audit) && audit["data"]["valid"] == json::Value(true) &&
            audit["data"]["epoch"]["valid"] == json::Value(true),
        "the chain and the epoch verify: " + audit.dump());

  if (failures > 0) {
    std::fprintf(stderr, "%d check(s) failed\n", failures);
    return 1;
  }
  std::printf("ok: evidence checked against a real repository and test command, stale evidence refused, a criterion "
              "waived, proposals approved and rejected by a person, the trail and its epoch verified\n");
  return 0;
}
