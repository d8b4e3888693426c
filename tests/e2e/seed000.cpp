// Seed 000 (rules and attestation, issue 54) end to end over MCP with the real `ct` binary, the
// seed's cycle in this product's terms: a person keeps a workflow and a rule in memory (H2
// sections and list items: the constraints); an agent on its own `ct mcp` binds its session with
// its host's thread id (memsetup → session.start hostSession), finds what applies to its task
// (memdisc/memload → memory.find, constraint ids included, also when it already read the entry
// and only its hash comes back), attests a constraint with a wrong id and is answered with the
// retry contract (memref's unknown_constraint → E_CONSTRAINT_UNKNOWN, retryable,
// details.validConstraints), retries with a valid id, and closes the turn with a report
// (agentreport → memory.turn reported); a second turn is rejected (agentrejected → memory.turn
// rejected). The person then reads the attestation with the host's id, the trail, and the counts.
//
//   ct_e2e_seed000 --ct build/release/ct [--postgresql URL]   (exit 0 = passed, 1 = a check failed)
#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

#include "e2e/e2e.h"
#include "support/ct_client.h"
#include "support/sandbox.h"

using namespace ct;
using namespace ct::testing;
using ct::e2e::check;
using ct::e2e::contains;
using ct::e2e::failures;
using ct::e2e::text_of;

int main(int argc, char** argv) {
  const std::string ct = e2e::ct_argument(argc, argv, "ct_e2e_seed000");
  if (ct.empty()) return 2;
  const std::string pg_url = e2e::postgresql_argument(argc, argv);
  auto sandbox = sandbox_or_complain("ct-e2e-seed000");
  if (!sandbox) return 2;
  const auto project = sandbox->root() / "project";
  std::filesystem::create_directories(project);
  std::vector<std::string> env = sandbox->env_for(project);
  e2e::use_postgresql(env, pg_url, "e2e_seed000");
  CtCommand cli(ct, env);
  if (CtRun init = cli.run({"init", "--project", project.string(), "--json"}); init.status.code != 0) {
    std::fprintf(stderr, "ct init failed: %s\n", init.out.c_str());
    sandbox->keep();
    return 1;
  }
  auto person = e2e::person_in(cli, project);

  // 0. A person keeps the rules: a workflow with steps, and a rule, both about billing.
  json::Value task = person({"add", "Refund through the ledger", "--labels", "billing"});
  check(succeeded(task), "the task is added: " + task.dump());
  const std::string task_id = text_of(task["data"]["id"]);
  json::Value workflow = person({"memory", "observe", "--kind", "convention", "--title", "Billing change workflow",
                                 "--labels", "billing", "--body",
                                 "## Steps\n- Write the ledger entry first\n- Then move the money\n"
                                 "## Review\nA second agent reads every refund."});
  check(succeeded(workflow), "the workflow is kept: " + workflow.dump());
  const std::string workflow_id = text_of(workflow["data"]["id"]);
  json::Value rule = person({"memory", "observe", "--kind", "convention", "--title", "Billing amounts rule",
                             "--labels", "billing", "--body", "## Money\n- Amounts are integer cents, never floats"});
  check(succeeded(rule), "the rule is kept: " + rule.dump());
  const std::string rule_id = text_of(rule["data"]["id"]);

  auto agent = McpClient::start(ct, env);
  if (!agent || !agent->initialize()) {
    std::fprintf(stderr, "cannot start the agent's ct mcp\n");
    sandbox->keep();
    return 1;
  }
  auto mutate = e2e::calls_of(*agent, "cleo_mutate");
  auto query = e2e::calls_of(*agent, "cleo_query");

  // 1. memsetup: the session binds the host's own thread id (data; who calls stays the transport's).
  json::Value started = mutate("session", "start",
                               R"({"scope":"global","focus":")" + task_id + R"(","hostSession":"codex-thread-5e1f"})");
  check(succeeded(started), "the agent binds its session with its host's thread id: " + started.dump());
  const std::string session_id = text_of(started["data"]["id"]);

  // 2. memdisc + memload: what applies to the task, with the constraints to attest.
  json::Value found = query("memory", "find", R"({"taskId":")" + task_id + "\"}");
  check(succeeded(found) && found["data"].as_array().size() == 2, "both entries apply: " + found.dump());
  std::string workflow_hash;
  for (const auto& row : found["data"].as_array())
    if (text_of(row["id"]) == workflow_id) {
      workflow_hash = text_of(row["hash"]);
      check(row["constraints"].dump() == "[\"" + workflow_id + "#Steps\",\"" + workflow_id + "#Steps/1\",\"" +
                                             workflow_id + "#Steps/2\",\"" + workflow_id + "#Review\"]",
            "the workflow's constraints come with it: " + row.dump());
    }
  check(!workflow_hash.empty(), "the workflow is found");
  // Delta loading: the workflow it already read comes back as unchanged, its constraint ids still there.
  json::Value delta = query("memory", "find", R"({"taskId":")" + task_id + R"(","knownHashes":[")" + workflow_hash + "\"]}");
  bool unchanged_with_ids = false;
  for (const auto& row : delta["data"].as_array())
    if (text_of(row["id"]) == workflow_id)
      unchanged_with_ids = row["unchanged"] == json::Value(true) && row.find("body") == nullptr &&
                           contains(row["constraints"].dump(), workflow_id + "#Steps/2");
  check(unchanged_with_ids, "an unchanged entry keeps its constraint ids: " + delta.dump());

  // 3. memref with an invented id: refused with the retry contract.
  json::Value wrong = mutate("memory", "applied", R"({"ids":[")" + workflow_id + R"(#Step 2"]})");
  check(!succeeded(wrong) && wrong["error"]["code"] == json::Value("E_CONSTRAINT_UNKNOWN") &&
            wrong["error"]["retryable"] == json::Value(true) && wrong["error"]["exitCode"] == json::Value(89),
        "an invalid constraint id is retryable: " + wrong.dump());
  const json::Value& valid = wrong["error"]["details"]["validConstraints"];
  check(valid.is_array() && valid.as_array().size() == 4 && valid.as_array()[2]["text"] == json::Value("Then move the money"),
        "the valid constraints come with it: " + wrong.dump());
  check(contains(text_of(wrong["error"]["fix"]), "operation:'applied'"), "its fix is the call again: " + wrong.dump());
  // The agent retries with ids copied from validConstraints (and the rule's, from find).
  const std::string step = text_of(valid.as_array()[2]["id"]);
  json::Value applied = mutate("memory", "applied", R"({"ids":[")" + step + R"(",")" + rule_id + R"(#Money/1"]})");
  check(succeeded(applied) && applied["data"]["taskId"] == json::Value(task_id),
        "the retry attests two constraints: " + applied.dump());

  // 4. agentreport: the turn ends with a report.
  json::Value reported = mutate("memory", "turn", R"({"outcome":"reported","summary":"refund written ledger first"})");
  check(succeeded(reported) && reported["data"]["turn"] == json::Value(1), "the turn is reported: " + reported.dump());
  json::Value no_summary = mutate("memory", "turn", R"({"outcome":"reported"})");
  check(!succeeded(no_summary) && no_summary["error"]["code"] == json::Value("E_INVALID_PARAMS"),
        "a report needs its summary: " + no_summary.dump());
  // 5. agentrejected: the next turn's output broke a loaded rule.
  json::Value rejected = mutate("memory", "turn", R"({"outcome":"rejected","summary":"used a float for the fee"})");
  check(succeeded(rejected) && rejected["data"]["turn"] == json::Value(2), "the turn is rejected: " + rejected.dump());

  // 6. The person reads what happened: each attestation with its constraint and the host's thread id.
  json::Value shown = person({"memory", "show", workflow_id});
  const json::Value& recent = shown["data"]["usage"]["recent"];
  check(recent.is_array() && recent.as_array().size() == 1 && recent.as_array()[0]["constraint"] == json::Value("Steps/2") &&
            recent.as_array()[0]["hostSession"] == json::Value("codex-thread-5e1f"),
        "the attestation names the constraint and the host's thread: " + shown.dump());
  check(contains(shown["data"]["constraints"].dump(), "\"textHash\""), "show gives each constraint whole: " + shown.dump());
  json::Value stats = person({"memory", "stats"});
  check(stats["data"]["constraintsApplied"] == json::Value(2) && stats["data"]["turns"]["reported"] == json::Value(1) &&
            stats["data"]["turns"]["rejected"] == json::Value(1),
        "stats counts constraints and turns: " + stats.dump());
  json::Value trail = person({"system", "log", "--operation", "memory.turn"});
  std::size_t kept = 0;  // the refused report is in the trail too, with its outcome
  if (trail["data"].is_array())
    for (const auto& row : trail["data"].as_array()) kept += row.find("outcome") == nullptr ? 1 : 0;
  check(succeeded(trail) && kept == 2, "both turns are in the trail: " + trail.dump());
  check(contains(trail["data"].dump(), session_id), "in the agent's session: " + trail.dump());
  json::Value applied_trail = person({"system", "log", "--operation", "memory.applied", "--detail", "full"});
  check(contains(applied_trail["data"].dump(), "codex-thread-5e1f"), "the trail keeps the host's id: " + applied_trail.dump());
  // The host's id is data: the writer in the trail is the agent's principal, not the host string.
  check(!contains(trail["data"].dump(), "person:"), "the turns were an agent's: " + trail.dump());

  if (failures > 0) {
    std::fprintf(stderr, "%d check(s) failed\n", failures);
    sandbox->keep();
    return 1;
  }
  std::printf("ok: seed 000 — bound, found with constraints (delta too), refused and retried, attested, reported, "
              "rejected, read back%s\n", pg_url.empty() ? "" : " on PostgreSQL");
  return 0;
}
