// Project memory end to end (issue 34), with the real `ct` binary: a subagent on its own `ct mcp`
// records a convention while it works on one task; it is proposed, not served, and the subagent
// cannot verify it; a person verifies it with `ct memory verify`; the next subagent's spawn prompt
// carries it, with the call that declares it applied; that subagent declares it; the usage shows
// on the entry; then the file the convention is anchored to changes and the entry reads as stale:
// find leaves it out, the next prompt does not carry it, and a person's verify anchors it again.
//
//   ct_e2e_memory --ct build/release/ct        (exit 0 = passed, 1 = a check failed)
#include <cstdio>
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

namespace {

std::string text_of(const json::Value& value) { return value.is_string() ? value.as_string() : value.dump(); }

}  // namespace

int main(int argc, char** argv) {
  const std::string ct = e2e::ct_argument(argc, argv, "ct_e2e_memory");
  if (ct.empty()) return 2;
  auto sandbox = sandbox_or_complain("ct-e2e-memory");
  if (!sandbox) return 2;
  const auto project = sandbox->root() / "project";
  std::filesystem::create_directories(project / "src" / "billing");
  const auto ledger = project / "src" / "billing" / "ledger.cpp";
  std::ofstream(ledger) << "long cents;\n";
  const auto env = sandbox->env_for(project);
  CtCommand cli(ct, env);
  if (cli.run({"init", "--project", project.string()}).status.code != 0) {
    std::fprintf(stderr, "ct init failed\n");
    return 1;
  }
  auto person = e2e::person_in(cli, project);

  auto orchestrator = McpClient::start(ct, env);
  if (!orchestrator || !orchestrator->initialize()) {
    std::fprintf(stderr, "cannot start the orchestrator's ct mcp\n");
    return 1;
  }
  auto mutate = [](McpClient& client, std::string_view domain, std::string_view op, const std::string& params) {
    return client.call("cleo_mutate", domain, op, params);
  };
  auto query = [](McpClient& client, std::string_view domain, std::string_view op, const std::string& params) {
    return client.call("cleo_query", domain, op, params);
  };
  auto add = [&](const std::string& params) {
    json::Value added = mutate(*orchestrator, "tasks", "add", params);
    check(succeeded(added), "task added: " + added.dump());
    return added["data"]["id"].string_or_empty();
  };
  const std::string epic = add(R"({"title":"Move billing to the ledger","type":"epic"})");
  const std::string first = add(R"({"title":"Write ledger entries","parent":")" + epic +
                                R"(","files":["src/billing/ledger.cpp"],"labels":["billing"]})");
  const std::string second = add(R"({"title":"Refund through the ledger","parent":")" + epic +
                                 R"(","files":["src/billing/ledger.cpp"],"labels":["billing"]})");
  const std::string third = add(R"({"title":"Report ledger totals","parent":")" + epic +
                                R"(","files":["src/billing/ledger.cpp"],"labels":["billing"]})");

  // 1. The first subagent records a convention while it works: proposed, not served.
  auto writer = McpClient::start(ct, env);
  if (!writer || !writer->initialize()) {
    std::fprintf(stderr, "cannot start the first subagent's ct mcp\n");
    return 1;
  }
  check(succeeded(mutate(*writer, "session", "start", R"({"scope":"task:)" + first + R"(","focus":")" + first + "\"}")),
        "the first subagent binds its task");
  json::Value proposed = mutate(*writer, "memory", "observe",
                                R"({"kind":"convention","title":"Ledger amounts are integer cents, never floats",)"
                                R"("body":"Rounding errors cost real money; convert at the edges","files":["src/billing/ledger.cpp"]})");
  check(succeeded(proposed), "the convention is recorded: " + proposed.dump());
  const std::string id = text_of(proposed["data"]["id"]);
  check(proposed["data"]["status"] == json::Value("proposed"), "an agent's convention is proposed: " + proposed.dump());
  json::Value self = mutate(*writer, "memory", "verify", R"({"id":")" + id + "\"}");
  check(!succeeded(self) && self["error"]["code"] == json::Value("E_MUTATION_DISABLED"),
        "the agent that proposed it cannot verify it: " + self.dump());
  json::Value unserved = query(*orchestrator, "memory", "find", R"({"taskId":")" + second + "\"}");
  check(succeeded(unserved) && unserved["data"].as_array().empty(), "a proposed entry is not served: " + unserved.dump());
  check(succeeded(mutate(*writer, "tasks", "complete", R"({"id":")" + first + R"(","notes":"entries written"})")),
        "the first subagent finishes");
  // The agent's own shell is no person (issue 52): `ct memory verify` in its host's environment is
  // refused, even with the proposer's session the only active one.
  std::vector<std::string> shell_env = env;
  shell_env.push_back("CODEX_THREAD_ID=e2e");
  json::Value by_shell = CtCommand(ct, shell_env).run({"--project", project.string(), "memory", "verify", id, "--json"}).json;
  check(!succeeded(by_shell) && by_shell["error"]["code"] == json::Value("E_MUTATION_DISABLED"),
        "an agent's shell cannot verify it: " + by_shell.dump());
  check(succeeded(mutate(*writer, "session", "end", R"({"notes":"ledger entries done"})")), "the first subagent ends");

  // 2. A person verifies it.
  json::Value verified = person({"memory", "verify", id});
  check(succeeded(verified) && verified["data"]["status"] == json::Value("active"), "a person verifies it: " + verified.dump());

  // 3. The second subagent's prompt carries it, with the call that declares it applied.
  json::Value spawn = mutate(*orchestrator, "orchestrate", "spawn", R"({"id":")" + second + "\"}");
  check(succeeded(spawn), "spawn: " + spawn.dump());
  const std::string prompt = text_of(spawn["data"]["prompt"]);
  check(prompt.find("## What the project knows (memory)") != std::string::npos, "the prompt has a memory section");
  check(prompt.find(id + " [convention] \"Ledger amounts are integer cents, never floats\"") != std::string::npos,
        "the prompt carries the convention");
  check(prompt.find("memory', operation:'applied'") != std::string::npos, "the prompt asks to declare what was applied");
  check(spawn["data"]["tokens"].is_int() && spawn["data"]["tokens"].as_int() <= 2500, "the prompt stays within budget");

  // 4. The second subagent declares it applied; the entry shows the use.
  auto refunder = McpClient::start(ct, env);
  if (!refunder || !refunder->initialize()) {
    std::fprintf(stderr, "cannot start the second subagent's ct mcp\n");
    return 1;
  }
  check(succeeded(mutate(*refunder, "session", "start", R"({"scope":"task:)" + second + R"(","focus":")" + second + "\"}")),
        "the second subagent binds its task");
  json::Value briefing = query(*refunder, "session", "briefing", "{}");
  check(succeeded(briefing) && briefing["data"]["memory"].dump().find(id) != std::string::npos,
        "its briefing carries the convention: " + briefing.dump());
  json::Value applied = mutate(*refunder, "memory", "applied", R"({"ids":[")" + id + "\"]}");
  check(succeeded(applied), "it declares the convention applied: " + applied.dump());
  check(succeeded(mutate(*refunder, "tasks", "complete", R"({"id":")" + second + R"(","notes":"refunds in cents"})")),
        "the second subagent finishes");
  check(succeeded(mutate(*refunder, "session", "end", R"({"notes":"refunds done"})")), "the second subagent ends");
  json::Value shown = query(*orchestrator, "memory", "show", R"({"id":")" + id + "\"}");
  check(shown["data"]["usage"]["applied"] == json::Value(1), "the use is counted: " + shown.dump());
  check(shown["data"]["usage"]["recent"].dump().find(second) != std::string::npos, "in the second task's work");

  // 5. The file changes: the entry reads as stale and is no longer served.
  std::ofstream(ledger, std::ios::trunc) << "double amount;  // someone moved to floats\n";
  json::Value stale = query(*orchestrator, "memory", "show", R"({"id":")" + id + "\"}");
  check(stale["data"]["stale"]["file"] == json::Value("src/billing/ledger.cpp") &&
            stale["data"]["stale"]["what"] == json::Value("changed"),
        "the entry is stale: " + stale.dump());
  json::Value left_out = query(*orchestrator, "memory", "find", R"({"taskId":")" + third + "\"}");
  check(succeeded(left_out) && left_out["data"].as_array().empty(), "find leaves the stale entry out: " + left_out.dump());
  json::Value with_stale = query(*orchestrator, "memory", "find", R"({"taskId":")" + third + R"(","includeStale":true})");
  check(with_stale["data"].dump().find(id) != std::string::npos, "includeStale brings it back: " + with_stale.dump());
  json::Value later = mutate(*orchestrator, "orchestrate", "spawn", R"({"id":")" + third + "\"}");
  check(text_of(later["data"]["prompt"]).find(id + " [convention]") == std::string::npos,
        "the next prompt does not carry a stale entry");
  json::Value stats = query(*orchestrator, "memory", "stats", "{}");
  check(stats["data"]["stale"] == json::Value(1), "stats counts it stale: " + stats.dump());

  // 6. A person reviews the change and anchors the entry again.
  check(succeeded(person({"memory", "verify", id})), "a person re-verifies it");
  json::Value fresh = query(*orchestrator, "memory", "find", R"({"taskId":")" + third + "\"}");
  check(fresh["data"].dump().find(id) != std::string::npos, "served again after review: " + fresh.dump());

  if (failures > 0) {
    std::fprintf(stderr, "%d check(s) failed\n", failures);
    return 1;
  }
  std::printf("ok: memory recorded, proposed, verified, carried by a spawn prompt and a briefing, applied, gone "
              "stale and re-anchored\n");
  return 0;
}
