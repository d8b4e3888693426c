// An orchestrator drives an epic of 30 tasks to completion over MCP, as an agent would: it plans
// the epic, calls orchestrate.startup, then in rounds asks orchestrate.ready, builds each task's
// prompt with orchestrate.spawn (checked for every section the subagent needs, and against the
// prompt budget), and hands it to a "subagent" — a `ct mcp` server of its own that binds a
// task-scoped session, claims the task, completes it with a result note and ends the session.
// Checked along the way: no task is handed out before its dependencies are done, no two tasks of
// a round share a file, a dependency's result reaches its dependents' prompts, the skill follows
// the labels, and at the end the epic is complete and startup asks for direction.
//
//   ct_e2e_orchestration --ct build/release/ct        (exit 0 = passed, 1 = a check failed)
#include <cstdio>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "e2e/e2e.h"
#include "support/ct_client.h"
#include "support/sandbox.h"

using namespace ct;
using namespace ct::testing;
using ct::e2e::check;
using ct::e2e::failures;

namespace {

/// The prompt budget orchestrate.spawn is held to (estimated o200k tokens, help level 1).
constexpr std::int64_t kPromptBudget = 2500;

struct Planned {
  std::string title;
  std::vector<int> depends;  // indices into the plan
  std::vector<std::string> labels;
  std::vector<std::string> files;
};

/// 30 tasks in 6 layers; later layers depend on earlier ones; two tasks of the first layer touch
/// the same file (one of them must wait a round).
std::vector<Planned> plan() {
  std::vector<Planned> tasks;
  for (int i = 0; i < 30; ++i) {
    Planned task;
    int layer = i / 5;
    task.title = "Step " + std::to_string(i + 1) + " of the billing rewrite";
    if (layer > 0) {
      task.depends.push_back(i - 5);
      if (i % 5 == 0 && layer > 1) task.depends.push_back(i - 9);
    }
    if (i % 7 == 3) task.labels = {"docs"};
    if (i % 7 == 5) task.labels = {"testing"};
    task.files = {"src/billing/part" + std::to_string(i) + ".cpp"};
    tasks.push_back(std::move(task));
  }
  tasks[1].files = {"src/billing/shared.cpp"};
  tasks[2].files = {"src/billing/shared.cpp"};
  return tasks;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string ct = e2e::ct_argument(argc, argv, "ct_e2e_orchestration");
  if (ct.empty()) return 2;
  auto sandbox = sandbox_or_complain("ct-e2e-orch");
  if (!sandbox) return 2;
  const auto project = sandbox->root() / "project";
  std::filesystem::create_directories(project);
  const auto env = sandbox->env_for(project);
  CtCommand cli(ct, env);
  if (cli.run({"init", "--project", project.string()}).status.code != 0) {
    std::fprintf(stderr, "ct init failed\n");
    return 1;
  }

  auto orchestrator = McpClient::start(ct, env);
  if (!orchestrator || !orchestrator->initialize()) {
    std::fprintf(stderr, "cannot start the orchestrator's ct mcp\n");
    return 1;
  }
  auto mutate = [&](McpClient& client, std::string_view domain, std::string_view op, const std::string& params) {
    return client.call("cleo_mutate", domain, op, params);
  };
  auto query = [&](McpClient& client, std::string_view domain, std::string_view op, const std::string& params) {
    return client.call("cleo_query", domain, op, params);
  };

  // Plan: the epic and its 30 tasks.
  json::Value epic = mutate(*orchestrator, "tasks", "add",
                            R"({"title":"Rewrite billing","type":"epic","description":"Move billing to the new ledger"})");
  check(succeeded(epic), "epic created: " + epic.dump());
  const std::string epic_id = epic["data"]["id"].as_string();
  std::vector<Planned> tasks = plan();
  std::vector<std::string> ids;
  for (const auto& task : tasks) {
    json::Value params = json::Value::object();
    params.set("title", task.title);
    params.set("parent", epic_id);
    params.set("description", "Part of the billing rewrite: " + task.title);
    params.set("acceptance", json::Value::array_of(std::vector<std::string>{"tests pass", "reviewed"}));
    std::vector<std::string> depends;
    for (int d : task.depends) depends.push_back(ids[static_cast<std::size_t>(d)]);
    if (!depends.empty()) params.set("depends", json::Value::array_of(depends));
    if (!task.labels.empty()) params.set("labels", json::Value::array_of(task.labels));
    params.set("files", json::Value::array_of(task.files));
    json::Value added = mutate(*orchestrator, "tasks", "add", params.dump());
    check(succeeded(added), "task added: " + added.dump());
    ids.push_back(added["data"]["id"].as_string());
  }
  std::map<std::string, std::size_t> index;
  for (std::size_t i = 0; i < ids.size(); ++i) index[ids[i]] = i;

  json::Value analysis = query(*orchestrator, "orchestrate", "analyze", R"({"epicId":")" + epic_id + R"("})");
  check(succeeded(analysis), "analyze: " + analysis.dump());
  check(analysis["data"]["waves"].as_array().size() == 6, "six waves: " + analysis["data"]["waves"].dump());
  check(analysis["data"]["criticalPath"]["length"].as_int() == 6, "critical path of 6");

  json::Value startup = mutate(*orchestrator, "orchestrate", "startup", R"({"epicId":")" + epic_id + R"("})");
  check(succeeded(startup), "startup: " + startup.dump());
  check(startup["data"]["decision"] == json::Value("create_and_spawn"), "startup decides create_and_spawn");

  std::set<std::string> done;
  std::map<std::string, std::string> results;  // task → the result note its subagent left
  int rounds = 0;
  std::int64_t largest_prompt = 0;
  for (; rounds < 40 && done.size() < ids.size(); ++rounds) {
    json::Value ready = query(*orchestrator, "orchestrate", "ready", R"({"epicId":")" + epic_id + R"("})");
    check(succeeded(ready), "ready: " + ready.dump());
    const auto& round = ready["data"]["tasks"].as_array();
    check(!round.empty(), "round " + std::to_string(rounds) + " has ready tasks");
    if (round.empty()) break;
    std::set<std::string> files_this_round;
    for (const auto& row : round) {
      const std::string id = row["id"].as_string();
      const Planned& planned = tasks[index[id]];
      for (int d : planned.depends)
        check(done.contains(ids[static_cast<std::size_t>(d)]), id + " handed out after its dependencies");
      for (const auto& file : planned.files)
        check(files_this_round.insert(file).second, id + " shares no file with a task of its round");

      json::Value spawn = mutate(*orchestrator, "orchestrate", "spawn", R"({"id":")" + id + R"("})");
      check(succeeded(spawn), "spawn " + id + ": " + spawn.dump());
      const std::string prompt = spawn["data"]["prompt"].is_string() ? spawn["data"]["prompt"].as_string() : "";
      for (const std::string& section : std::vector<std::string>{"## Task " + id, "### Acceptance criteria", "### Files", "## Context",
                                        "- Parent " + epic_id, "## Skill: ", "### Subagent contract",
                                        "## CLEO reference (help level 1)", R"("scope":"task:)" + id + "\""})
        check(prompt.find(section) != std::string::npos, id + "'s prompt has '" + section + "'");
      for (int d : planned.depends) {
        const std::string& dep = ids[static_cast<std::size_t>(d)];
        check(prompt.find("## Finished dependencies") != std::string::npos, id + "'s prompt lists its dependencies");
        check(prompt.find(results[dep]) != std::string::npos, id + "'s prompt carries the result of " + dep);
      }
      const std::int64_t tokens = spawn["data"]["tokens"].is_int() ? spawn["data"]["tokens"].as_int() : 0;
      largest_prompt = std::max(largest_prompt, tokens);
      check(tokens > 0 && tokens <= kPromptBudget, id + "'s prompt within budget: " + std::to_string(tokens));
      const std::string skill = spawn["data"]["skill"].is_string() ? spawn["data"]["skill"].as_string() : "";
      const std::string expected = planned.labels.empty()            ? "task-executor"
                                   : planned.labels[0] == "docs"     ? "documenter"
                                                                     : "test-writer";
      check(skill == expected, id + " gets skill " + expected + ", not " + skill);

      // The subagent: its own connection, a task-scoped session, the claim, the result, the end.
      auto subagent = McpClient::start(ct, env);
      if (!subagent || !subagent->initialize()) {
        check(false, "subagent for " + id + " starts");
        continue;
      }
      json::Value session = mutate(*subagent, "session", "start",
                                   R"({"scope":"task:)" + id + R"(","focus":")" + id + R"("})");
      check(succeeded(session), id + ": subagent session.start: " + session.dump());
      const std::string result = "result of " + id + ": ledger adapter " + std::to_string(index[id]) + " in place";
      json::Value complete = mutate(*subagent, "tasks", "complete",
                                    R"({"id":")" + id + R"(","notes":")" + result + R"("})");
      check(succeeded(complete), id + ": complete: " + complete.dump());
      json::Value end = mutate(*subagent, "session", "end", R"({"note":"done"})");
      check(succeeded(end), id + ": session.end: " + end.dump());
      results[id] = result;
      done.insert(id);
    }
    json::Value status = query(*orchestrator, "orchestrate", "status", R"({"epicId":")" + epic_id + R"("})");
    check(succeeded(status), "status: " + status.dump());
  }
  check(done.size() == ids.size(), "every task done (" + std::to_string(done.size()) + " of 30)");
  // Six waves, and one round more for the task that waited on a shared file.
  check(rounds == 7, "7 rounds, not " + std::to_string(rounds));

  json::Value status = query(*orchestrator, "orchestrate", "status", R"({"epicId":")" + epic_id + R"("})");
  check(status["data"]["complete"] == json::Value(true), "the epic is complete: " + status.dump());
  json::Value next = query(*orchestrator, "orchestrate", "next", R"({"epicId":")" + epic_id + R"("})");
  check(next["data"]["reason"].is_string(), "next says why nothing is left: " + next.dump());
  json::Value again = mutate(*orchestrator, "orchestrate", "startup", R"({"epicId":")" + epic_id + R"("})");
  check(again["data"]["decision"] == json::Value("spawn_followup"),
        "startup on the orchestrator's own session, nothing in focus: " + again.dump());
  json::Value context = query(*orchestrator, "orchestrate", "context", R"({"tokens":170000})");
  check(context["data"]["status"] == json::Value("critical"), "context at 85% is critical: " + context.dump());

  // A fresh orchestrator with its session ended: nothing left, so it asks for direction.
  check(succeeded(mutate(*orchestrator, "session", "end", R"({"note":"epic finished"})")), "orchestrator ends");
  auto fresh = McpClient::start(ct, env);
  if (fresh && fresh->initialize()) {
    json::Value last = mutate(*fresh, "orchestrate", "startup", R"({"epicId":")" + epic_id + R"("})");
    check(last["data"]["decision"] == json::Value("request_direction"), "request_direction at the end: " + last.dump());
  } else {
    check(false, "fresh orchestrator starts");
  }
  std::printf("orchestrated %zu tasks in %d rounds; largest prompt %lld estimated tokens (budget %lld)\n", done.size(),
              rounds, static_cast<long long>(largest_prompt), static_cast<long long>(kPromptBudget));
  if (failures) sandbox->keep();
  return failures == 0 ? 0 : 1;
}
