// The session tree (issue 54, seed 002): a parent session delegates an intent and a scope to a
// child another agent resumes; the child's end reaches the parent as a report and a message; the
// parent reads its children, their reports and their writes as a tree; only the parent's caller
// or a person acts for a child. Runs on both backends.
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
      R"({"scope":"custom:T002","parent":")" + parent + R"(","intent":"build the login form","paths":["src/login/"]})"));
  const std::string kid = child.data["id"].as_string();
  CHECK(child.data["parent"] == json::Value(parent));
  CHECK(child.data["status"] == json::Value("suspended"));
  CHECK(f.a.client->session() == parent);  // the parent's caller stays where it was

  // The child's agent resumes it and learns what it was delegated.
  Envelope resumed = must(f.b.mutate("session", "resume", R"({"id":")" + kid + "\"}"));
  CHECK(resumed.data["delegated"]["parent"] == json::Value(parent));
  CHECK(resumed.data["delegated"]["intent"] == json::Value("build the login form"));
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
  CHECK(row["intent"] == json::Value("build the login form"));
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
  Envelope stolen = f.b.mutate("session", "start", R"({"scope":"custom:T002","parent":")" + parent + R"(","intent":"x"})");
  CHECK(code_of(stolen) == ErrorCode::SessionOwned);
  // The child's scope stays inside the parent's.
  Envelope outside = f.a.mutate("session", "start", R"({"scope":"custom:T003","parent":")" + parent + R"(","intent":"x"})");
  CHECK(code_of(outside) == ErrorCode::TaskNotInScope);
  CHECK(outside.error->details["outside"] == json::Value::array_of(std::vector<std::string>{"T003"}));
  CHECK(code_of(f.a.mutate("session", "start", R"({"scope":"global","parent":")" + parent + R"(","intent":"x"})")) ==
        ErrorCode::TaskNotInScope);
  // A child needs an intent; intent and paths need a parent; a child claims nothing at start.
  CHECK(code_of(f.a.mutate("session", "start", R"({"scope":"custom:T002","parent":")" + parent + "\"}")) ==
        ErrorCode::InvalidParams);
  CHECK(code_of(f.a.mutate("session", "start", R"({"scope":"custom:T002","intent":"x"})")) == ErrorCode::InvalidParams);
  CHECK(code_of(f.a.mutate("session", "start", R"({"scope":"custom:T002","parent":")" + parent +
                                                   R"(","intent":"x","focus":"T002"})")) == ErrorCode::InvalidParams);
  CHECK(code_of(f.a.mutate("session", "start", R"({"scope":"custom:T002","parent":"ses_000000000000","intent":"x"})")) ==
        ErrorCode::SessionNotFound);

  Envelope made = must(f.a.mutate("session", "start",
      R"({"scope":"custom:T002","parent":")" + parent + R"(","intent":"login","paths":["src/login/"]})"));
  const std::string kid = made.data["id"].as_string();
  must(f.b.mutate("session", "resume", R"({"id":")" + kid + "\"}"));
  // A grandchild gets no more of the tree than its parent was delegated.
  Envelope wider = f.b.mutate("session", "start",
      R"({"scope":"custom:T002","parent":")" + kid + R"(","intent":"tests","paths":["src/"]})");
  CHECK(code_of(wider) == ErrorCode::Validation);
  must(f.b.mutate("session", "start", R"({"scope":"custom:T002","parent":")" + kid +
                                         R"(","intent":"tests","paths":["src/login/test_*.cpp"]})"));

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
                                                        R"(","intent":"again"})")) == ErrorCode::Validation);
}
