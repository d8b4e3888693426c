// Seed 001 (engineering memory) end to end (issue 54), with the real `ct` binary and universal-ctags:
// an agent on its own `ct mcp` records memory about one symbol (`RetryPolicy::backoff`), a folder
// and a convention that waits for a person (the seed's draft); it finds memory by symbol and by
// scope, compact with the count of the rest; coverage says which files and symbols under a path
// have live, stale or no memory. Then the code changes: another function's edit and a move leave
// the symbol's entry fresh, the folder's goes stale; an edit of the backoff itself makes its entry
// stale (find leaves it out, coverage shows it), and a person's verify anchors it again.
//
//   ct_e2e_seed001 --ct build/release/ct [--postgresql URL]   (exit 0 = passed, 1 = a check failed)
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
using ct::e2e::contains;
using ct::e2e::failures;
using ct::e2e::text_of;

namespace {

std::string retry_source(std::string_view before, std::string_view backoff, std::string_view helper) {
  return std::string(before) +
         "namespace net {\n"
         "class RetryPolicy {\n"
         " public:\n"
         "  int backoff(int attempt) const;\n"
         "  int jitter() const { return 3; }\n"
         "};\n"
         "\n"
         "int RetryPolicy::backoff(int attempt) const {\n"
         "  return " + std::string(backoff) + ";\n"
         "}\n"
         "}  // namespace net\n"
         "int helper() { return " + std::string(helper) + "; }\n";
}

/// The first row of a find's reply (null when none).
json::Value first(const json::Value& reply) {
  const json::Value& data = reply["data"];
  return data.is_array() && !data.as_array().empty() ? data.as_array().front() : json::Value();
}

/// The row of `file` in a coverage reply, and of `symbol` in it.
json::Value row_of(const json::Value& coverage, std::string_view file) {
  if (coverage["data"]["rows"].is_array())
    for (const auto& row : coverage["data"]["rows"].as_array())
      if (row["file"].string_or_empty() == file) return row;
  return json::Value();
}
json::Value symbol_of(const json::Value& row, std::string_view symbol) {
  if (row["symbols"].is_array())
    for (const auto& item : row["symbols"].as_array())
      if (item["name"].string_or_empty() == symbol) return item;
  return json::Value();
}

}  // namespace

int main(int argc, char** argv) {
  const std::string ct = e2e::ct_argument(argc, argv, "ct_e2e_seed001");
  if (ct.empty()) return 2;
  const std::string pg_url = e2e::postgresql_argument(argc, argv);
  auto sandbox = sandbox_or_complain("ct-e2e-seed001");
  if (!sandbox) return 2;
  const auto project = sandbox->root() / "project";
  std::filesystem::create_directories(project / "src" / "net");
  const auto retry = project / "src" / "net" / "retry.cpp";
  std::ofstream(retry) << retry_source("", "attempt * 2", "3");
  std::ofstream(project / "src" / "net" / "socket.cpp") << "int open_socket() { return 3; }\n";
  std::ofstream(project / "src" / "main.cpp") << "int main() { return 0; }\n";
  auto env = sandbox->env_for(project);
  e2e::use_postgresql(env, pg_url, "e2e_seed001");
  CtCommand cli(ct, env);
  if (cli.run({"init", "--project", project.string()}).status.code != 0) {
    std::fprintf(stderr, "ct init failed\n");
    return 1;
  }
  auto person = e2e::person_in(cli, project);
  auto agent = McpClient::start(ct, env);
  if (!agent || !agent->initialize()) {
    std::fprintf(stderr, "cannot start the agent's ct mcp\n");
    return 1;
  }
  auto mutate = e2e::calls_of(*agent, "cleo_mutate");
  auto query = e2e::calls_of(*agent, "cleo_query");

  json::Value task = mutate("tasks", "add", R"({"title":"Tune the retry backoff","files":["src/net/retry.cpp"]})");
  check(succeeded(task), "task added: " + task.dump());
  const std::string task_id = text_of(task["data"]["id"]);
  check(succeeded(mutate("session", "start", R"({"scope":"task:)" + task_id + R"(","focus":")" + task_id + "\"}")),
        "the agent binds its task");

  // 1. Memory about a symbol, a folder, and a convention for a person to approve (the seed's draft).
  json::Value symbol_entry = mutate("memory", "observe",
                                    R"({"kind":"learning","title":"Backoff doubles per attempt and is capped by the caller",)"
                                    R"("files":["src/net/retry.cpp#RetryPolicy::backoff"]})");
  check(succeeded(symbol_entry) && symbol_entry["data"]["anchoredFiles"] == json::Value(1),
        "a symbol's entry is anchored: " + symbol_entry.dump());
  const std::string backoff_id = text_of(symbol_entry["data"]["id"]);
  json::Value folder_entry = mutate("memory", "observe",
                                    R"({"kind":"learning","title":"Network code never blocks the event loop","files":["src/net/"]})");
  check(succeeded(folder_entry) && folder_entry["data"]["anchoredFiles"] == json::Value(1),
        "a folder's entry is anchored: " + folder_entry.dump());
  const std::string folder_id = text_of(folder_entry["data"]["id"]);
  json::Value draft = mutate("memory", "observe",
                             R"({"kind":"convention","title":"Every retry loop takes a RetryPolicy",)"
                             R"("files":["src/net/retry.cpp#RetryPolicy"]})");
  check(succeeded(draft) && draft["data"]["status"] == json::Value("proposed"),
        "an agent's convention is a draft (proposed) for a person: " + draft.dump());
  const std::string draft_id = text_of(draft["data"]["id"]);
  check(succeeded(person({"memory", "verify", draft_id})), "a person approves the draft");

  // 2. Found by symbol (its name alone, or qualified), and by the file.
  json::Value by_symbol = query("memory", "find", R"({"symbol":"backoff"})");
  check(succeeded(by_symbol) && first(by_symbol)["id"] == json::Value(backoff_id),
        "memory.find by symbol: " + by_symbol.dump());
  json::Value qualified = query("memory", "find", R"({"symbol":"net::RetryPolicy::backoff"})");
  check(first(qualified)["id"] == json::Value(backoff_id), "by its qualified name: " + qualified.dump());
  json::Value compact = query("memory", "find", R"({"files":["src/net/retry.cpp"],"limit":2})");
  check(succeeded(compact) && compact["data"].as_array().size() == 2 && !first(compact).contains("usage"),
        "a scoped find is compact, the best two: " + compact.dump());
  check(compact["_meta"]["page"]["total"] == json::Value(3) && compact["_meta"]["page"]["nextOffset"] == json::Value(2),
        "and says one more exists: " + compact.dump());
  json::Value full = query("memory", "find", R"({"symbol":"backoff","detail":"full"})");
  check(first(full).contains("usage") && first(full).contains("createdAt"), "full on request: " + full.dump());

  // 3. Coverage under src/: which files and symbols have memory.
  json::Value coverage = query("memory", "coverage", R"({"path":"src/","symbols":true})");
  check(succeeded(coverage), "coverage: " + coverage.dump());
  check(coverage["data"]["files"]["total"] == json::Value(3) && coverage["data"]["files"]["live"] == json::Value(2) &&
            coverage["data"]["files"]["none"] == json::Value(1),
        "src/main.cpp alone has no memory: " + coverage.dump());
  json::Value retry_row = row_of(coverage, "src/net/retry.cpp");
  check(symbol_of(retry_row, "net::RetryPolicy::backoff")["memory"] == json::Value("live"), "backoff is covered: " + retry_row.dump());
  check(symbol_of(retry_row, "net::RetryPolicy::jitter")["memory"] == json::Value("none"), "jitter is not: " + retry_row.dump());

  auto stale_of = [&](const std::string& id) { return query("memory", "show", R"({"id":")" + id + "\"}")["data"]["stale"]; };
  // 4. Another function changes and the backoff moves down: its entry holds; the folder's does not.
  std::ofstream(retry, std::ios::trunc) << retry_source("#include <cstdint>\n\n", "attempt * 2", "4");
  check(stale_of(backoff_id).is_null(), "an edit elsewhere and a move leave the symbol's entry fresh");
  json::Value folder_stale = stale_of(folder_id);
  check(folder_stale["file"] == json::Value("src/net/") && folder_stale["what"] == json::Value("changed"),
        "the folder's entry is stale: " + folder_stale.dump());
  check(succeeded(person({"memory", "verify", folder_id})), "a person re-verifies the folder's entry");

  // 5. The backoff itself changes: its entry is stale, left out of find, shown by coverage.
  std::ofstream(retry, std::ios::trunc) << retry_source("#include <cstdint>\n\n", "attempt * 3", "4");
  json::Value backoff_stale = stale_of(backoff_id);
  check(backoff_stale["file"] == json::Value("src/net/retry.cpp#RetryPolicy::backoff") &&
            backoff_stale["what"] == json::Value("changed"),
        "the symbol's entry is stale: " + backoff_stale.dump());
  json::Value left_out = query("memory", "find", R"({"symbol":"backoff"})");
  check(succeeded(left_out) && !contains(left_out["data"].dump(), backoff_id), "find leaves it out: " + left_out.dump());
  json::Value with_stale = query("memory", "find", R"({"symbol":"backoff","includeStale":true})");
  check(contains(with_stale["data"].dump(), backoff_id), "includeStale brings it back: " + with_stale.dump());
  json::Value after = query("memory", "coverage", R"({"path":"src/net/retry.cpp"})");
  json::Value backoff_row = symbol_of(row_of(after, "src/net/retry.cpp"), "RetryPolicy::backoff");
  check(backoff_row["memory"] == json::Value("stale"), "coverage shows the symbol stale: " + after.dump());
  check(stale_of(draft_id).is_null(), "the class's convention holds (the class's text is unchanged)");

  // 6. A person reviews the change and anchors it again.
  check(succeeded(person({"memory", "verify", backoff_id})), "a person re-verifies the symbol's entry");
  json::Value fresh = query("memory", "find", R"({"symbol":"backoff"})");
  check(first(fresh)["id"] == json::Value(backoff_id), "served again after review: " + fresh.dump());
  check(succeeded(mutate("session", "end", R"({"notes":"backoff tuned"})")), "the agent ends its session");

  if (failures > 0) {
    std::fprintf(stderr, "%d check(s) failed\n", failures);
    sandbox->keep();
    return 1;
  }
  std::printf("ok: seed 001 — memory by symbol and folder, found by symbol, compact with the rest counted, coverage, "
              "stale only when its symbol changed, re-anchored by a person\n");
  return 0;
}
