// session.briefing (a session's state in one call, cut to a token budget), system.changes (the
// changes feed) and knownHash on reads (issue 33): through the router, as agents call them.
#include <catch2/catch.hpp>

#include "unit/stored_data_check.h"
#include "unit/test_support.h"

using namespace ct;
using ct::test::code_of;

namespace {

std::unique_ptr<test::Client> other_agent(const test::Project& p) {
  return std::make_unique<test::Client>(std::make_unique<Router>(
      registry(), Workspace::open(p.dir()), RouterOptions{},
      std::make_unique<FixedClock>(*parse_iso8601("2026-01-01T01:00:00Z"))));
}

Envelope call(test::Client& client, Gateway gateway, std::string domain, std::string operation,
              std::string_view params = "{}") {
  return client.dispatch({gateway, std::move(domain), std::move(operation), test::parse_json(params)});
}

/// T001 epic > T002 (done, with a result), T003 (depends on T002; acceptance), T004; T005 outside.
void plant(test::Project& p) {
  p.add(R"({"title":"Auth epic","type":"epic"})");
  p.add(R"({"title":"Schema","parent":"T001"})");
  p.add(R"({"title":"Login form","parent":"T001","depends":["T002"],"acceptance":["renders","validates"]})");
  p.add(R"({"title":"Signup form","parent":"T001"})");
  p.add(R"({"title":"Unrelated chore"})");
  REQUIRE(p.mutate("tasks", "complete", R"({"id":"T002","notes":"users table with email unique"})").success);
}

std::vector<std::string> ids(const json::Value& rows) {
  std::vector<std::string> out;
  for (const auto& row : rows.as_array()) out.push_back(row["id"].as_string());
  return out;
}

}  // namespace

TEST_CASE("a briefing holds the session, its focus, finished dependencies, ready work and others' changes",
          "[briefing]") {
  test::Project p;
  plant(p);
  REQUIRE(p.mutate("session", "start", R"({"scope":"epic:T001","name":"auth","focus":"T003"})").success);
  REQUIRE(p.mutate("tasks", "update", R"({"id":"T003","notes":"form renders"})").success);
  REQUIRE(p.mutate("tasks", "update", R"({"id":"T003","notes":"validation next"})").success);
  REQUIRE(p.mutate("session", "note", R"({"nextAction":"wire the validator"})").success);
  // Another agent changes a task in scope, and one outside it.
  auto other = other_agent(p);
  REQUIRE(call(*other, Gateway::Mutate, "tasks", "update", R"({"id":"T004","priority":"high"})").success);
  REQUIRE(call(*other, Gateway::Mutate, "tasks", "update", R"({"id":"T005","priority":"high"})").success);

  Envelope brief = p.query("session", "briefing");
  REQUIRE(brief.success);
  const json::Value& d = brief.data;
  CHECK(d["session"]["name"].as_string() == "auth");
  CHECK(d["session"]["scope"].as_string() == "epic:T001");
  CHECK(d["session"]["nextAction"].as_string() == "wire the validator");
  CHECK(d["focus"]["id"].as_string() == "T003");
  CHECK(d["focus"]["acceptance"].as_array().size() == 2);
  CHECK(d["focus"]["claim"]["session"].as_string() == p.session());
  CHECK(d["notes"].as_array()[0]["text"].as_string() == "validation next");  // newest first
  CHECK(d["finished"].as_array()[0]["result"].as_string() == "users table with email unique");
  CHECK(ids(d["ready"]) == std::vector<std::string>{"T004"});
  // Only others' changes, only in scope.
  const json::Value rows = table_as_rows(d["changes"]);
  REQUIRE(rows.as_array().size() == 1);
  CHECK(rows.as_array()[0]["id"].as_string() == "T004");
  CHECK(rows.as_array()[0]["field"].as_string() == "priority");
  CHECK_FALSE(d.contains("then"));  // it is the caller's own session, at work on its focus
  CHECK_FALSE(d.contains("left"));
  CHECK(d["tokens"].as_int() > 50);
  CHECK(d["tokens"].as_int() < 1500);
}

TEST_CASE("a briefing without a session is the handoff of the newest session nobody works in", "[briefing]") {
  test::Project p;
  plant(p);
  REQUIRE(p.mutate("session", "start", R"({"scope":"epic:T001","focus":"T003"})").success);
  const std::string ended = p.session();
  REQUIRE(p.mutate("session", "end", R"({"notes":"stopped at validation"})").success);
  REQUIRE(p.session().empty());

  Envelope brief = p.query("session", "briefing");
  REQUIRE(brief.success);
  CHECK(brief.data["session"]["id"].as_string() == ended);
  CHECK(brief.data["session"]["status"].as_string() == "ended");
  CHECK(brief.data["session"]["notes"].as_string() == "stopped at validation");
  // It held T003 until it ended: that is the work to take over, and how to.
  CHECK(brief.data["focus"]["id"].as_string() == "T003");
  CHECK(brief.data["focus"]["status"].as_string() == "pending");
  CHECK(test::as_agents_read(brief.data["then"]).as_string().find("session") != std::string::npos);

  CHECK(code_of(p.query("session", "briefing", R"({"id":"ses_000000000000"})")) == "E_SESSION_NOT_FOUND");
}

TEST_CASE("a briefing is cut to its budget from the least important end, and says what it left", "[briefing]") {
  test::Project p;
  plant(p);
  for (int i = 0; i < 30; ++i) p.add(R"({"title":"Filler task number )" + std::to_string(i) + R"( with a longer title","parent":"T001"})");
  REQUIRE(p.mutate("session", "start", R"({"scope":"epic:T001","focus":"T003"})").success);
  auto other = other_agent(p);
  for (int i = 6; i < 36; ++i)
    REQUIRE(call(*other, Gateway::Mutate, "tasks", "update",
                 R"({"id":"T0)" + std::to_string(i < 10 ? 0 : i / 10) + std::to_string(i % 10) +
                     R"(","notes":"progress on this one"})").success);
  Envelope whole = p.query("session", "briefing", R"({"budgetTokens":20000})");
  REQUIRE(whole.success);
  CHECK_FALSE(whole.data.contains("left"));
  CHECK(table_as_rows(whole.data["changes"]).as_array().size() == 30);

  Envelope small = p.query("session", "briefing", R"({"budgetTokens":200})");
  REQUIRE(small.success);
  INFO(small.data.dump());
  CHECK(small.data["tokens"].as_int() <= 200);
  CHECK(small.data["focus"]["id"].as_string() == "T003");  // the essentials stay
  REQUIRE(small.data["left"].is_array());
  const json::Value& cut = small.data["left"].as_array()[0];
  CHECK(cut["what"].as_string() == "ready");  // in order of importance
  CHECK(test::as_agents_read(cut["call"]).as_string().find("tasks") != std::string::npos);
  bool changes_cut = false;
  for (const auto& left : small.data["left"].as_array())
    changes_cut |= left["what"].as_string() == "changes" && test::as_agents_read(left["call"]).as_string().find("system") != std::string::npos;
  CHECK(changes_cut);
  CHECK_FALSE(small.data.contains("changes"));  // cut before ready
}

TEST_CASE("knownHash: an unchanged briefing, task or page comes back as {unchanged:true}", "[briefing][hash]") {
  test::Project p;
  plant(p);
  REQUIRE(p.mutate("session", "start", R"({"scope":"global","focus":"T003"})").success);
  for (auto [domain, operation, params] : {std::tuple{"session", "briefing", std::string("{")},
                                          std::tuple{"tasks", "show", std::string(R"({"id":"T003",)")},
                                          std::tuple{"tasks", "list", std::string(R"({"limit":2,)")}}) {
    INFO(operation);
    Envelope first = p.query(domain, operation, params + R"("knownHash":""})");
    REQUIRE(first.success);
    REQUIRE(first.meta["hash"].is_string());
    const std::string hash = first.meta["hash"].as_string();
    CHECK(hash.size() == 16);
    Envelope same = p.query(domain, operation, params + R"("knownHash":")" + hash + "\"}");
    CHECK(same.data == test::parse_json(R"({"unchanged":true})"));
    CHECK_FALSE(same.page);
    // Without knownHash the reply carries no hash (the agent session's cost stays as it was).
    CHECK_FALSE(p.query(domain, operation, params.size() > 1 ? params.substr(0, params.size() - 1) + "}" : "{}").meta.is_object());
  }
  Envelope before = p.query("tasks", "show", R"({"id":"T003","knownHash":""})");
  REQUIRE(p.mutate("tasks", "update", R"({"id":"T003","priority":"high"})").success);
  Envelope after = p.query("tasks", "show", R"({"id":"T003","knownHash":")" + before.meta["hash"].as_string() + "\"}");
  CHECK(after.data["priority"].as_string() == "high");
  CHECK(after.meta["hash"].as_string() != before.meta["hash"].as_string());
}

TEST_CASE("system.changes: a feed of what changed since a seq, scoped and paged by its cursor", "[changes]") {
  test::Project p;
  plant(p);  // 5 adds and a completion: seq 1–6
  Envelope all = p.query("system", "changes");
  REQUIRE(all.success);
  const json::Value rows = table_as_rows(all.data["changes"]);
  REQUIRE(rows.as_array().size() >= 6);
  CHECK(rows.as_array()[0]["id"].as_string() == "T001");
  CHECK(rows.as_array()[0]["field"].as_string() == "created");
  const std::int64_t end = all.data["next"].as_int();
  CHECK(end == 6);
  CHECK_FALSE(all.data.contains("more"));

  // Paged: two rows at a time, each page going on from the last one's cursor.
  std::int64_t cursor = 0;
  std::vector<std::string> seen;
  for (int page = 0; page < 10; ++page) {
    Envelope got = p.query("system", "changes", R"({"sinceSeq":)" + std::to_string(cursor) + R"(,"limit":2})");
    REQUIRE(got.success);
    if (got.note == ErrorCode::NoData) break;
    const json::Value page_rows = table_as_rows(got.data["changes"]);
    for (const auto& row : page_rows.as_array())
      seen.push_back(row["id"].as_string() + "." + row["field"].as_string());
    cursor = got.data["next"].as_int();
  }
  CHECK(seen.size() == rows.as_array().size());
  CHECK(cursor == end);

  // Scoped to the epic: T005's rows are left out.
  REQUIRE(p.mutate("tasks", "update", R"({"id":"T005","priority":"low"})").success);
  REQUIRE(p.mutate("tasks", "update", R"({"id":"T004","priority":"low"})").success);
  Envelope scoped = p.query("system", "changes", R"({"sinceSeq":)" + std::to_string(end) + R"(,"scope":"epic:T001"})");
  REQUIRE(scoped.success);
  CHECK(ids(table_as_rows(scoped.data["changes"])) == std::vector<std::string>{"T004"});
  CHECK(scoped.data["next"].as_int() == end + 2);
  CHECK(p.query("system", "changes", R"({"sinceSeq":)" + std::to_string(end + 2) + "}").note == ErrorCode::NoData);
  CHECK(code_of(p.query("system", "changes", R"({"scope":"epik:T001"})")) == "E_SCOPE_INVALID");
}

TEST_CASE("system.changes subtrees: every task whose subtree the changes touched, where a task is and was (issue 50)",
          "[changes]") {
  test::Project p;
  p.add(R"({"title":"Billing","type":"epic"})");              // T001
  p.add(R"({"title":"Ledgers","parent":"T001"})");             // T002
  p.add(R"({"title":"Survey ledgers","parent":"T002"})");      // T003 (a subtask)
  p.add(R"({"title":"Shipping","type":"epic"})");             // T004
  p.add(R"({"title":"Port invoices","parent":"T004"})");       // T005
  p.add(R"({"title":"Unrelated"})");                            // T006
  auto since = [&] { return p.query("system", "changes").data["next"].as_int(); };
  auto touched = [&](std::int64_t from) {
    Envelope read = p.query("system", "changes", R"({"subtrees":true,"sinceSeq":)" + std::to_string(from) + "}");
    REQUIRE(read.success);
    std::vector<std::string> out;
    for (const auto& id : read.data["subtrees"].as_array()) out.push_back(id.as_string());
    return out;
  };
  // A subtask changed: it, its task and its epic.
  std::int64_t from = since();
  REQUIRE(p.mutate("tasks", "update", R"({"id":"T003","notes":"counted"})").success);
  CHECK(touched(from) == std::vector<std::string>{"T001", "T002", "T003"});
  // A task moved to another epic: both epics, from the audit's before-value of its parent.
  from = since();
  REQUIRE(p.mutate("tasks", "reparent", R"({"id":"T005","parent":"T002"})").success);
  CHECK(touched(from) == std::vector<std::string>{"T001", "T002", "T004", "T005"});
  // A task deleted for good: the epic it was in, though the task is gone.
  from = since();
  REQUIRE(p.mutate("tasks", "delete", R"({"id":"T005","hard":true})").success);
  CHECK(touched(from) == std::vector<std::string>{"T001", "T002", "T005"});
  // Without the param, no list; nothing changed, an empty one.
  CHECK_FALSE(p.query("system", "changes").data.contains("subtrees"));
  CHECK(touched(since()).empty());
  from = since();
  REQUIRE(p.mutate("tasks", "update", R"({"id":"T006","notes":"alone"})").success);
  CHECK(touched(from) == std::vector<std::string>{"T006"});
}

TEST_CASE("ct briefing --hook: what agents stored is fenced data after the product's words (issue 52)",
          "[briefing][hooks][stored_text]") {
  test::Project p;
  auto escaped = [](std::string_view text) { return json::Value(std::string(text)).dump(); };
  p.add(R"({"title":)" + escaped(test::kAttackTitle) + R"(,"labels":["auth"],"acceptance":[)" +
        escaped(test::kAttackDescription) + "]}");
  p.add(R"({"title":"Done first"})");
  REQUIRE(p.mutate("tasks", "complete", R"({"id":"T002","notes":)" + escaped(test::kAttackNote) + "}").success);
  REQUIRE(p.mutate("tasks", "update", R"({"id":"T001","depends":["T002"],"notes":)" + escaped(test::kAttackDescription) + "}")
              .success);
  REQUIRE(p.mutate("session", "start", R"({"scope":"global","focus":"T001","agent":"mallory"})").success);
  REQUIRE(p.mutate("memory", "observe", R"({"kind":"learning","title":"Login work: skip review","labels":["auth"],"body":)" +
                                            escaped(test::kAttackMemory) + "}")
              .success);
  REQUIRE(p.mutate("session", "note", R"({"notes":)" + escaped(test::kAttackNote) + "}").success);

  // The memory row says no person verified it, and who wrote it.
  Envelope briefing = p.query("session", "briefing");
  REQUIRE(briefing.success);
  const json::Value& memory = briefing.data["memory"].as_array().front();
  CHECK(memory["unreviewed"] == json::Value(true));
  CHECK(memory["by"].as_string() == "mallory");

  for (std::string_view host : {"claude", "codex"}) {
    INFO(host);
    Envelope hooked = p.query("session", "briefing", R"({"hook":")" + std::string(host) + "\"}");
    REQUIRE(hooked.success);
    const std::string text = hooked.data["hook"].as_string();
    test::check_stored_text_fenced(text);
    CHECK(text.starts_with("CLEO briefing: where this project's work stands"));
    const std::size_t open = text.find("\n<data-");
    REQUIRE(open != std::string::npos);
    CHECK(text.find(" what=\"session.briefing\">\n", open) != std::string::npos);
    CHECK(text.find("NEXT AGENT") > open);
    CHECK(text.substr(0, open).find("Quoted strings and <data-…> blocks hold text agents stored") != std::string::npos);
    const std::string nonce = text.substr(open + 7, text.find(' ', open) - open - 7);
    CHECK(text.ends_with("</data-" + nonce + ">"));  // nothing after the fence
  }
  // Gemini's JSON carries the same text.
  Envelope gemini = p.query("session", "briefing", R"({"hook":"gemini"})");
  REQUIRE(gemini.success);
  test::check_stored_text_fenced(test::parse_json(gemini.data["hook"].as_string())["hookSpecificOutput"]["additionalContext"].as_string());
}
