// Seed 002, the agent state graph, end to end (issue 54) with the real `ct` binary over MCP stdio:
// a lead agent works on an epic in its session and branches the graph into two named plans, which
// it compares side by side; it delegates one task and a path scope to a child session, which a
// subagent on a `ct mcp` connection of its own resumes, works in, and ends with a report; the
// report reaches the lead's inbox, and the lead reads its tree — the child, its report, its writes
// — in session.show, session.list, session.history and the briefing. The subagent's work moved a
// field the lead's plan changes too: the rebase names the conflict {path, base, ours, theirs}, the
// lead settles it field by field with plan.resolve, rebases and merges (plan.commit); the other
// branch is discarded. A third connection can neither delegate from the lead's session nor act for
// its child. Also on PostgreSQL (tests/CMakeLists.txt).
//
//   ct_e2e_seed002 --ct build/release/ct [--postgresql URL]   (exit 0 = passed, 1 = a check failed)
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
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

namespace {

/// Item `i` of an array; null when there is no such item.
const json::Value& item(const json::Value& array, std::size_t i) {
  static const json::Value kNone;
  return array.is_array() && i < array.as_array().size() ? array.as_array()[i] : kNone;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string ct = e2e::ct_argument(argc, argv, "ct_e2e_seed002");
  if (ct.empty()) return 2;
  const std::string pg_url = e2e::postgresql_argument(argc, argv);
  auto sandbox = sandbox_or_complain("ct-e2e-seed002");
  if (!sandbox) return 2;
  const auto project = sandbox->root() / "project";
  std::filesystem::create_directories(project);
  std::vector<std::string> env = sandbox->env_for(project);
  e2e::use_postgresql(env, pg_url, "e2e_seed002");
  CtCommand cli(ct, env);
  if (CtRun init = cli.run({"init", "--project", project.string(), "--json"}); init.status.code != 0) {
    std::fprintf(stderr, "ct init failed: %s\n", init.out.c_str());
    return 1;
  }
  // Agents have no person key.
  const std::vector<std::string> agent_env = e2e::without(env, {"CT_PERSON_KEY", "CT_PERSON_KEY_FILE"});
  auto connect = [&](const char* who) {
    auto client = McpClient::start(ct, agent_env);
    if (!client || !client->initialize()) {
      std::fprintf(stderr, "cannot start %s's ct mcp\n", who);
      std::exit(1);
    }
    return std::move(*client);
  };
  auto mutate = [](McpClient& client, std::string_view domain, std::string_view op, const std::string& params) {
    return client.call("cleo_mutate", domain, op, params);
  };
  auto query = [](McpClient& client, std::string_view domain, std::string_view op, const std::string& params) {
    return client.call("cleo_query", domain, op, params);
  };
  auto code = [](const json::Value& envelope) { return text_of(envelope["error"]["code"]); };

  McpClient lead = connect("the lead");
  auto add = [&](const std::string& params) {
    json::Value added = mutate(lead, "tasks", "add", params);
    check(succeeded(added), "task added: " + added.dump());
    return text_of(added["data"]["id"]);
  };
  const std::string epic = add(R"({"title":"Cluster network","type":"epic"})");
  const std::string dns = add(R"({"title":"DNS resolver","parent":")" + epic + "\"}");
  const std::string cni = add(R"({"title":"Pick a CNI","parent":")" + epic + "\"}");
  const std::string other = add(R"({"title":"Unrelated chore"})");

  // 1. The lead's session, and two named branches of the graph compared side by side.
  json::Value started = mutate(lead, "session", "start", R"({"scope":"epic:)" + epic + R"(","name":"lead"})");
  check(succeeded(started), "the lead starts its session: " + started.dump());
  const std::string parent = text_of(started["data"]["id"]);
  json::Value flannel = mutate(lead, "plan", "begin", R"({"label":"flannel","name":"agents/planner/flannel"})");
  json::Value calico = mutate(lead, "plan", "begin", R"({"label":"calico","name":"agents/planner/calico"})");
  check(succeeded(flannel) && succeeded(calico), "two named branches: " + flannel.dump() + calico.dump());
  check(succeeded(mutate(lead, "plan", "apply", R"({"plan":"agents/planner/flannel","ops":[)"
                                                R"({"operation":"tasks.update","params":{"id":")" + cni +
                                                R"(","title":"Adopt flannel","priority":"high"}},)"
                                                R"({"operation":"tasks.add","params":{"title":"Flannel config","parent":")" +
                                                epic + R"("}}]})")),
        "the flannel branch is staged");
  check(succeeded(mutate(lead, "plan", "apply", R"({"plan":"agents/planner/calico","ops":[)"
                                                R"({"operation":"tasks.update","params":{"id":")" + cni +
                                                R"(","title":"Adopt calico"}}]})")),
        "the calico branch is staged");
  json::Value compared = query(lead, "plan", "diff", R"({"plans":["agents/planner/flannel","agents/planner/calico"]})");
  check(succeeded(compared) && compared["data"].size() == 2, "plan.diff compares both: " + compared.dump());
  check(item(compared["data"], 0)["name"] == json::Value("agents/planner/flannel") &&
            item(compared["data"], 0)["adds"] == json::Value(1),
        "the flannel branch adds a task: " + compared.dump());
  check(item(compared["data"], 1)["adds"] == json::Value(0) && item(compared["data"], 1)["changes"] == json::Value(1),
        "the calico branch changes one: " + compared.dump());

  // 2. The lead delegates the DNS task and a path scope to a child session.
  json::Value outside = mutate(lead, "session", "start", R"({"scope":"custom:)" + other + R"(","parent":")" + parent +
                                                            R"(","goal":"x"})");
  check(code(outside) == "E_TASK_NOT_IN_SCOPE", "a child's scope stays inside its parent's: " + outside.dump());
  json::Value delegated = mutate(lead, "session", "start", R"({"scope":"custom:)" + dns + R"(","parent":")" + parent +
                                                              R"(","goal":"Set up the DNS resolver; name the CNI it needs",)"
                                                              R"("paths":["deploy/dns/"]})");
  check(succeeded(delegated) && delegated["data"]["status"] == json::Value("suspended"),
        "the child waits for its agent: " + delegated.dump());
  const std::string child = text_of(delegated["data"]["id"]);

  // 3. A subagent on its own connection resumes the child, works, and reports back by ending it.
  McpClient sub = connect("the subagent");
  json::Value resumed = mutate(sub, "session", "resume", R"({"id":")" + child + "\"}");
  check(succeeded(resumed) && resumed["data"]["delegated"]["parent"] == json::Value(parent) &&
            resumed["data"]["delegated"]["paths"].size() == 1,
        "the subagent learns its delegation: " + resumed.dump());
  check(succeeded(mutate(sub, "tasks", "start", R"({"id":")" + dns + "\"}")), "the subagent claims its task");
  check(succeeded(mutate(sub, "tasks", "update", R"({"id":")" + cni + R"j(","title":"Adopt cilium (DNS needs eBPF)"})j")),
        "the subagent retitles the CNI task the lead's branches change too");
  check(succeeded(mutate(sub, "tasks", "update", R"({"id":")" + dns + R"(","notes":"CoreDNS deployed"})")),
        "the subagent notes its progress");
  json::Value ended = mutate(sub, "session", "end", R"({"notes":"resolver up; it needs cilium, see the CNI task"})");
  check(succeeded(ended), "the subagent ends the child: " + ended.dump());

  // 4. The lead reads the tree: the report in its inbox, the child on show, list, history, briefing.
  json::Value inbox = query(lead, "session", "inbox", "{}");
  check(inbox["data"]["messages"].dump().find(child + " ended (Set up the DNS resolver") != std::string::npos &&
            inbox["data"]["messages"].dump().find("resolver up") != std::string::npos,
        "the report reaches the lead's inbox: " + inbox.dump());
  json::Value shown = query(lead, "session", "show", R"({"id":")" + parent + "\"}");
  const json::Value& kid = item(shown["data"]["children"], 0);
  check(kid["id"] == json::Value(child) && kid["status"] == json::Value("ended") &&
            text_of(kid["report"]).starts_with("resolver up") && kid["writes"].is_int() && kid["writes"].as_int() >= 3,
        "session.show lists the child with its report and writes: " + shown.dump());
  json::Value listed = query(lead, "session", "list", "{}");
  bool tree = false;
  for (const auto& row : listed["data"].as_array())
    if (row["id"] == json::Value(child)) tree = row["parent"] == json::Value(parent);
  check(tree, "session.list names the child's parent: " + listed.dump());
  json::Value history = query(lead, "session", "history", R"({"id":")" + parent + R"(","children":true})");
  check(history["data"].dump().find("\"session\":\"" + child + "\"") != std::string::npos,
        "the lead's history holds the child's writes: " + history.dump());
  json::Value briefing = query(lead, "session", "briefing", "{}");
  check(item(briefing["data"]["children"], 0)["id"] == json::Value(child), "the briefing shows the child: " + briefing.dump());

  // 5. Another caller neither delegates from the lead's session nor acts for its child.
  McpClient stranger = connect("a stranger");
  json::Value hijack = mutate(stranger, "session", "start", R"({"scope":"custom:)" + dns + R"(","parent":")" + parent +
                                                              R"(","goal":"mine"})");
  check(code(hijack) == "E_SESSION_OWNED", "a stranger cannot delegate from the lead's session: " + hijack.dump());
  json::Value meddle = mutate(stranger, "session", "note", R"({"id":")" + child + R"(","notes":"mine"})");
  check(code(meddle) == "E_SESSION_OWNED", "nor act for its child: " + meddle.dump());
  check(succeeded(mutate(lead, "session", "note", R"({"id":")" + child + R"(","nextAction":"pick up cilium"})")),
        "the lead acts for its child");

  // 6. The flannel branch conflicts per field with the subagent's change; settled field by field.
  json::Value rebase = mutate(lead, "plan", "rebase", R"({"plan":"agents/planner/flannel"})");
  const json::Value& conflict = item(rebase["error"]["details"]["conflicts"], 0);
  check(code(rebase) == "E_CONCURRENT_MODIFICATION" && conflict["path"] == json::Value(cni + ".title") &&
            conflict["base"] == json::Value("Pick a CNI") && conflict["ours"] == json::Value("Adopt flannel") &&
            conflict["theirs"] == json::Value("Adopt cilium (DNS needs eBPF)") &&
            rebase["error"]["details"]["conflicts"].size() == 1,
        "the rebase names one conflict {path, base, ours, theirs}: " + rebase.dump());
  json::Value resolved = mutate(lead, "plan", "resolve", R"({"plan":"agents/planner/flannel","path":")" + cni +
                                                             R"(.title","take":"theirs"})");
  check(succeeded(resolved) && resolved["data"]["conflicts"].empty(), "the lead keeps theirs: " + resolved.dump());
  check(succeeded(mutate(lead, "plan", "rebase", R"({"plan":"agents/planner/flannel"})")), "then the rebase goes through");
  json::Value merged = mutate(lead, "plan", "commit", R"({"plan":"agents/planner/flannel"})");
  check(succeeded(merged) && merged["data"]["ids"].size() == 3, "the branch is merged: " + merged.dump());
  json::Value cni_now = query(lead, "tasks", "show", R"({"id":")" + cni + "\"}");
  check(cni_now["data"]["title"] == json::Value("Adopt cilium (DNS needs eBPF)") &&
            cni_now["data"]["priority"] == json::Value("high"),
        "theirs kept for the title, ours for the priority: " + cni_now.dump());
  json::Value dropped = mutate(lead, "plan", "discard", R"({"plan":"agents/planner/calico","why":"cilium won"})");
  check(succeeded(dropped), "the other branch is discarded: " + dropped.dump());
  json::Value branches = query(lead, "plan", "list", R"({"status":"all"})");
  check(branches["data"].dump().find("agents/planner/calico") != std::string::npos,
        "the branches are kept by name: " + branches.dump());

  if (failures > 0) {
    std::fprintf(stderr, "%d check(s) failed\n", failures);
    return 1;
  }
  std::printf("ok: named branches compared, a child session delegated, resumed and reported, the tree read, a per-field "
              "conflict resolved and the branch merged\n");
  return 0;
}
