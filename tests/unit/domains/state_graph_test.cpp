// Seed 002, the agent state graph (issue 54), on both backends. The session tree: a parent session
// delegates an intent and a scope to a child another agent resumes; the child's end reaches the
// parent as a report and a message; the parent reads its children, their reports and their writes
// as a tree; only the parent's caller or a person acts for a child. Plans as named branches of the
// graph: found by name from any session, resting on the tasks they name anywhere in the graph, and
// their rebase's conflicts — {path, base, ours, theirs} per field — settled one by one with
// plan.resolve (ours, theirs or a value) before they are rebased and committed.
#include <catch2/catch.hpp>

#include "gateway/mcp_syntax.h"
#include "unit/test_support.h"

using namespace ct;

namespace {

ErrorCode code_of(const Envelope& e) { return e.error ? e.error->code : ErrorCode::Internal; }

Envelope must(Envelope e) {
  INFO(to_json(e, McpAdvice(registry())));
  REQUIRE(e.success);
  return e;
}

json::Value task(test::Project& p, const std::string& id) { return must(p.query("tasks", "show", R"({"id":")" + id + "\"}")).data; }

}  // namespace

TEST_CASE("session tree: a parent delegates to a child that reports back", "[sessiontree]") {
  test::Fleet f;
  f.p.add(R"({"title":"Auth","type":"epic"})");
  f.p.add(R"({"title":"Login form","parent":"T001"})");
  f.p.add(R"({"title":"Signup form","parent":"T001"})");
  f.p.add(R"({"title":"Elsewhere"})");
  // a (claude) works on the epic and delegates T002 to a child for b (codex).
  must(f.a.mutate("session", "start", R"({"scope":"epic:T001","name":"lead"})"));
  const std::string parent = f.a.client->session();
  Envelope child = must(f.a.mutate("session", "start",
      R"({"scope":"custom:T002","parent":")" + parent + R"(","goal":"build the login form","paths":["src/login/"]})"));
  const std::string kid = child.data["id"].as_string();
  CHECK_FALSE(child.data.contains("parent"));  // the caller's own words are not echoed
  CHECK(child.data["status"] == json::Value("suspended"));
  CHECK(f.a.client->session() == parent);  // the parent's caller stays where it was

  // The child's agent resumes it and learns what it was delegated.
  Envelope resumed = must(f.b.mutate("session", "resume", R"({"id":")" + kid + "\"}"));
  CHECK(resumed.data["delegated"]["parent"] == json::Value(parent));
  CHECK(resumed.data["delegated"]["goal"] == json::Value("build the login form"));
  CHECK(resumed.data["delegated"]["paths"] == json::Value::array_of(std::vector<std::string>{"src/login/"}));
  CHECK(resumed.data["nextAction"] == json::Value("build the login form"));
  must(f.b.mutate("tasks", "start", R"({"id":"T002"})"));
  must(f.b.mutate("tasks", "update", R"({"id":"T002","notes":"form and validation in"})"));

  // The tree as session.list shows it.
  Envelope listed = must(f.a.query("session", "list"));
  bool named_parent = false;
  for (const auto& row : listed.data.as_array())
    if (row["id"] == json::Value(kid)) named_parent = row["parent"] == json::Value(parent);
  CHECK(named_parent);

  // b ends the child: its notes are its report, in the parent's inbox and on the tree.
  must(f.b.mutate("session", "end", R"({"notes":"login form done; signup shares its validator"})"));
  Envelope shown = must(f.a.query("session", "show", R"({"id":")" + parent + "\"}"));
  REQUIRE(shown.data["children"].size() == 1);
  const json::Value& row = shown.data["children"].as_array().front();
  CHECK(row["id"] == json::Value(kid));
  CHECK(row["status"] == json::Value("ended"));
  CHECK(row["agent"] == json::Value("codex"));
  CHECK(row["goal"] == json::Value("build the login form"));
  CHECK(row["report"] == json::Value("login form done; signup shares its validator"));
  CHECK(row["writes"].as_int() >= 3);  // resume, start, update, end
  Envelope inbox = must(f.a.query("session", "inbox"));
  REQUIRE(inbox.data["messages"].size() >= 1);
  const std::string body = inbox.data["messages"].as_array().back()["body"].as_string();
  CHECK(body.find(kid + " ended (build the login form): login form done") == 0);
  Envelope kid_shown = must(f.a.query("session", "show", R"({"id":")" + kid + "\"}"));
  CHECK(kid_shown.data["delegated"]["report"] == json::Value("login form done; signup shares its validator"));

  // The parent's history with its children's writes, each row naming its session.
  Envelope history = must(f.a.query("session", "history", R"({"id":")" + parent + R"(","children":true})"));
  bool childs_update = false;
  for (const auto& entry : history.data.as_array())
    if (entry["session"] == json::Value(kid) && entry["operation"] == json::Value("tasks.update")) childs_update = true;
  CHECK(childs_update);
  Envelope own = must(f.a.query("session", "history", R"({"id":")" + parent + "\"}"));
  for (const auto& entry : own.data.as_array()) CHECK_FALSE(entry.contains("session"));

  // The briefing of the parent shows its children.
  Envelope briefed = must(f.a.query("session", "briefing", R"({"id":")" + parent + "\"}"));
  REQUIRE(briefed.data["children"].size() == 1);
  CHECK(briefed.data["children"].as_array().front()["report"].as_string().starts_with("login form done"));
}

TEST_CASE("session tree: who may delegate and act for a child, and within what", "[sessiontree]") {
  test::Fleet f;
  f.p.add(R"({"title":"Auth","type":"epic"})");
  f.p.add(R"({"title":"Login form","parent":"T001"})");
  f.p.add(R"({"title":"Elsewhere"})");
  must(f.a.mutate("session", "start", R"({"scope":"epic:T001"})"));
  const std::string parent = f.a.client->session();

  // Only the parent's caller delegates from it (b is another connection); a person may.
  Envelope stolen = f.b.mutate("session", "start", R"({"scope":"custom:T002","parent":")" + parent + R"(","goal":"x"})");
  CHECK(code_of(stolen) == ErrorCode::SessionOwned);
  // The child's scope stays inside the parent's.
  Envelope outside = f.a.mutate("session", "start", R"({"scope":"custom:T003","parent":")" + parent + R"(","goal":"x"})");
  CHECK(code_of(outside) == ErrorCode::TaskNotInScope);
  CHECK(outside.error->details["outside"] == json::Value::array_of(std::vector<std::string>{"T003"}));
  CHECK(code_of(f.a.mutate("session", "start", R"({"scope":"global","parent":")" + parent + R"(","goal":"x"})")) ==
        ErrorCode::TaskNotInScope);
  // A child needs an intent; intent and paths need a parent; a child claims nothing at start.
  CHECK(code_of(f.a.mutate("session", "start", R"({"scope":"custom:T002","parent":")" + parent + "\"}")) ==
        ErrorCode::InvalidParams);
  CHECK(code_of(f.a.mutate("session", "start", R"({"scope":"custom:T002","goal":"x"})")) == ErrorCode::InvalidParams);
  CHECK(code_of(f.a.mutate("session", "start", R"({"scope":"custom:T002","parent":")" + parent +
                                                   R"(","goal":"x","focus":"T002"})")) == ErrorCode::InvalidParams);
  CHECK(code_of(f.a.mutate("session", "start", R"({"scope":"custom:T002","parent":"ses_000000000000","goal":"x"})")) ==
        ErrorCode::SessionNotFound);

  Envelope made = must(f.a.mutate("session", "start",
      R"({"scope":"custom:T002","parent":")" + parent + R"(","goal":"login","paths":["src/login/"]})"));
  const std::string kid = made.data["id"].as_string();
  must(f.b.mutate("session", "resume", R"({"id":")" + kid + "\"}"));
  // A grandchild gets no more of the tree than its parent was delegated.
  Envelope wider = f.b.mutate("session", "start",
      R"({"scope":"custom:T002","parent":")" + kid + R"(","goal":"tests","paths":["src/"]})");
  CHECK(code_of(wider) == ErrorCode::Validation);
  must(f.b.mutate("session", "start", R"({"scope":"custom:T002","parent":")" + kid +
                                         R"(","goal":"tests","paths":["src/login/test_*.cpp"]})"));

  // The parent's caller acts for the child b now owns; a third caller does not.
  test::ClockedClient third{f.p, f.time, Principal::agent("stdio:cccc", "connection"), "gemini"};
  CHECK(code_of(third.mutate("session", "note", R"({"id":")" + kid + R"(","notes":"mine now"})")) == ErrorCode::SessionOwned);
  must(f.a.mutate("session", "note", R"({"id":")" + kid + R"(","nextAction":"wrap up, the release is near"})"));
  must(f.a.mutate("session", "end", R"({"id":")" + kid + R"(","notes":"stopped by the lead"})"));
  Envelope shown = must(f.a.query("session", "show", R"({"id":")" + parent + "\"}"));
  CHECK(shown.data["children"].as_array().front()["report"] == json::Value("stopped by the lead"));
  // A live session delegates; an ended one does not.
  must(f.a.mutate("session", "end", R"({"id":")" + parent + "\"}"));
  CHECK(code_of(f.person.mutate("session", "start", R"({"scope":"custom:T002","parent":")" + parent +
                                                        R"(","goal":"again"})")) == ErrorCode::Validation);
}

TEST_CASE("plan branches: named, across the graph, conflicts settled field by field", "[planbranch]") {
  test::Project p;
  p.add(R"({"title":"Cache layer","priority":"low"})");
  p.add(R"({"title":"Metrics","priority":"low"})");
  p.add(R"({"title":"Docs","priority":"low","labels":["docs"]})");
  Envelope begun = must(p.mutate("plan", "begin", R"({"label":"tune","name":"agents/planner/tune"})"));
  CHECK(begun.data["plan"] == json::Value("PL001"));
  // One open plan a name; the name is the plan's id for every call.
  Envelope taken = p.mutate("plan", "begin", R"({"label":"again","name":"agents/planner/tune"})");
  CHECK(code_of(taken) == ErrorCode::Validation);
  CHECK(taken.error->details["plan"] == json::Value("PL001"));
  CHECK(code_of(p.mutate("plan", "begin", R"({"label":"bad","name":"Agents planner"})")) == ErrorCode::Validation);
  must(p.mutate("plan", "apply", R"j({"plan":"agents/planner/tune","ops":[
      {"operation":"tasks.update","params":{"id":"T001","title":"Cache layer (LRU)","priority":"high"}},
      {"operation":"tasks.update","params":{"id":"T002","title":"Metrics v2"}},
      {"operation":"tasks.update","params":{"id":"T003","priority":"medium"}}]})j"));
  Envelope listed = must(p.query("plan", "list"));
  CHECK(listed.data.as_array().front()["name"] == json::Value("agents/planner/tune"));
  CHECK(code_of(p.query("plan", "diff", R"({"plans":["agents/nobody"]})")) == ErrorCode::NotFound);

  // Another agent changes three of the fields the plan changes, and one it does not.
  must(p.mutate("tasks", "update", R"j({"id":"T001","title":"Cache layer (ARC)"})j"));
  must(p.mutate("tasks", "update", R"j({"id":"T002","title":"Metrics (OpenTelemetry)"})j"));
  must(p.mutate("tasks", "update", R"({"id":"T003","priority":"critical","labels":["user"]})"));
  Envelope conflict = p.mutate("plan", "rebase", R"({"plan":"agents/planner/tune"})");
  REQUIRE(code_of(conflict) == ErrorCode::ConcurrentModification);
  const json::Value& conflicts = conflict.error->details["conflicts"];
  REQUIRE(conflicts.size() == 3);
  std::map<std::string, json::Value> by_path;
  for (const auto& row : conflicts.as_array()) by_path[row["path"].as_string()] = row;
  REQUIRE(by_path.contains("T001.title"));
  CHECK(by_path["T001.title"]["base"] == json::Value("Cache layer"));
  CHECK(by_path["T001.title"]["ours"] == json::Value("Cache layer (LRU)"));
  CHECK(by_path["T001.title"]["theirs"] == json::Value("Cache layer (ARC)"));
  CHECK(by_path.contains("T002.title"));
  CHECK(by_path.contains("T003.priority"));
  CHECK(to_json(conflict, McpAdvice(registry())).find("operation:'resolve'") != std::string::npos);

  // Field by field: ours, theirs, a value of the agent's own.
  Envelope ours = must(p.mutate("plan", "resolve", R"({"plan":"agents/planner/tune","path":"T001.title","take":"ours"})"));
  CHECK(ours.data["conflicts"].size() == 2);
  CHECK(code_of(p.mutate("plan", "resolve", R"({"plan":"PL001","path":"T001.title","take":"ours"})")) == ErrorCode::NotFound);
  CHECK(code_of(p.mutate("plan", "resolve", R"({"plan":"PL001","path":"T002.title","take":"value"})")) ==
        ErrorCode::InvalidParams);
  CHECK(code_of(p.mutate("plan", "resolve", R"({"plan":"PL001","path":"T002.title","take":"theirs","value":"x"})")) ==
        ErrorCode::InvalidParams);
  Envelope theirs = must(p.mutate("plan", "resolve", R"({"plan":"PL001","path":"T002.title","take":"theirs"})"));
  CHECK(theirs.data["conflicts"] == json::Value::array_of(std::vector<std::string>{"T003.priority"}));
  Envelope value = must(p.mutate("plan", "resolve", R"({"plan":"PL001","path":"T003.priority","take":"value","value":"high"})"));
  CHECK(value.data["conflicts"].empty());
  // Settled: the rebase takes the rest in, the commit makes it.
  Envelope rebased = must(p.mutate("plan", "rebase", R"({"plan":"agents/planner/tune"})"));
  CHECK_FALSE(rebased.data.contains("overwrites"));
  must(p.mutate("plan", "commit", R"({"plan":"agents/planner/tune"})"));
  CHECK(task(p, "T001")["title"] == json::Value("Cache layer (LRU)"));
  CHECK(task(p, "T001")["priority"] == json::Value("high"));
  CHECK(task(p, "T002")["title"] == json::Value("Metrics (OpenTelemetry)"));
  CHECK(task(p, "T003")["priority"] == json::Value("high"));
  CHECK(task(p, "T003")["labels"] == json::Value::array_of(std::vector<std::string>{"docs", "user"}));

  // The name is free again once its plan is committed; the committed one is still found by it
  // until then.
  Envelope shown = must(p.query("plan", "diff", R"({"plans":["agents/planner/tune"]})"));
  CHECK(shown.data.as_array().front()["status"] == json::Value("committed"));
  Envelope again = must(p.mutate("plan", "begin", R"({"label":"next round","name":"agents/planner/tune"})"));
  CHECK(again.data["plan"] == json::Value("PL002"));
  CHECK(must(p.query("plan", "diff", R"({"plans":["agents/planner/tune"]})")).data.as_array().front()["id"] ==
        json::Value("PL002"));
}

TEST_CASE("plan branches: a resolved field changed again conflicts again; a committed plan resolves nothing",
          "[planbranch]") {
  test::Project p;
  p.add(R"({"title":"One"})");
  must(p.mutate("plan", "begin", R"({"label":"retitle","name":"retitle"})"));
  must(p.mutate("plan", "apply", R"({"plan":"retitle","ops":[{"operation":"tasks.update","params":{"id":"T001","title":"Plan"}}]})"));
  must(p.mutate("tasks", "update", R"({"id":"T001","title":"Theirs"})"));
  must(p.mutate("plan", "resolve", R"({"plan":"retitle","path":"T001.title","take":"ours"})"));
  // Their second change after the resolution is a conflict of its own.
  must(p.mutate("tasks", "update", R"({"id":"T001","title":"Theirs again"})"));
  Envelope conflict = p.mutate("plan", "rebase", R"({"plan":"retitle"})");
  REQUIRE(code_of(conflict) == ErrorCode::ConcurrentModification);
  CHECK(conflict.error->details["conflicts"].as_array().front()["base"] == json::Value("Theirs"));
  must(p.mutate("plan", "resolve", R"({"plan":"retitle","path":"T001.title","take":"theirs"})"));
  must(p.mutate("plan", "rebase", R"({"plan":"retitle"})"));
  must(p.mutate("plan", "commit", R"({"plan":"retitle"})"));
  CHECK(task(p, "T001")["title"] == json::Value("Theirs again"));
  CHECK(code_of(p.mutate("plan", "resolve", R"({"plan":"retitle","path":"T001.title","take":"ours"})")) == ErrorCode::Validation);
}
