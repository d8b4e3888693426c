// Claims with leases (engines/rules/claim_lease.h, issue 33): a claim lasts while its session shows
// life; once the lease has run out another session takes the task over (audited), tasks.next and
// orchestrate.ready offer it again, and a person can free a task at once (tasks.reclaim). Agents on
// routers with clocks of their own, as separate processes would be.
#include <catch2/catch.hpp>

#include <memory>

#include "gateway/mcp_syntax.h"
#include "unit/test_support.h"
#include "engines/rules/claim_lease.h"

using namespace ct;
using ct::test::code_of;

namespace {

constexpr TimeMs kMinute = 60'000;
const TimeMs kStart = *parse_iso8601("2026-01-01T00:00:00Z");

/// An agent on its own router with a clock of its own.
using Agent = test::LeaseAgent;

/// T001 epic > T002, T003; T004 on its own.
void plant(test::Project& p) {
  p.add(R"({"title":"Epic one","type":"epic"})");
  p.add(R"({"title":"Child one","parent":"T001"})");
  p.add(R"({"title":"Child two","parent":"T001"})");
  p.add(R"({"title":"Loose task"})");
}

}  // namespace

TEST_CASE("a lease ends at the session's last sign of life plus session.leaseSeconds", "[lease]") {
  Config config;
  REQUIRE(config.get_int("session.leaseSeconds") == 900);  // the default (docs/architecture.md §4)
  Claim claim{"T001", "ses_a", "", kStart};
  CHECK(lease_end(claim, config) == kStart + 15 * kMinute);
  CHECK_FALSE(lapsed(claim, config, kStart + 15 * kMinute - 1));
  CHECK(lapsed(claim, config, kStart + 15 * kMinute));
  CHECK(lapsed_by(claim, lapsed_before(config, kStart + 15 * kMinute)));  // the stores' test agrees
  CHECK_FALSE(lapsed_by(claim, lapsed_before(config, kStart + 15 * kMinute - 1)));
  CHECK(renewal_step(config) == 7 * kMinute + 30'000);

  // A session that is gone holds nothing; the sessionless focus (someone at the CLI) never lapses.
  CHECK(lapsed(Claim{"T001", "ses_gone", "", std::nullopt}, config, kStart));
  CHECK_FALSE(lapsed(Claim{"T001", "", "", std::nullopt}, config, kStart + 1000 * kMinute));
  CHECK_FALSE(lease_end(Claim{"T001", "", "", std::nullopt}, config));

  REQUIRE(config.set("session.leaseSeconds", json::Value(2)));
  CHECK(renewal_step(config) == 1000);
  REQUIRE(config.set("session.leaseSeconds", json::Value(0)));
  CHECK_FALSE(lease_end(claim, config));
  CHECK_FALSE(lapsed(claim, config, kStart + 100000 * kMinute));
  CHECK_FALSE(lapsed_before(config, kStart));
  CHECK_FALSE(renewal_step(config));
}

TEST_CASE("a silent holder's task is refused until its lease ends, then taken over and audited", "[lease][claim]") {
  test::Project p;
  plant(p);
  Agent a(p), b(p);
  const std::string first = a.start_session("first");
  const std::string second = b.start_session("second");
  REQUIRE(a.mutate("tasks", "start", R"({"id":"T002"})").success);

  b.at(14 * kMinute);
  Envelope early = b.mutate("tasks", "start", R"({"id":"T002"})");
  CHECK(code_of(early) == "E_TASK_CLAIMED");
  CHECK(early.error->details["holder"].as_string() == first);
  CHECK(early.error->details["leaseEnds"].as_string() == "2026-01-01T00:15:00Z");
  CHECK(early.error->message.find("until 2026-01-01T00:15:00Z") != std::string::npos);
  // The claim lapses by itself: the same call may succeed then, and the error says when (issue 50).
  CHECK(early.error->retryable());
  CHECK(early.error->retry_after_seconds == std::optional<std::int64_t>(60));
  CHECK(to_value(early, McpAdvice(registry()))["error"]["retryAfter"] == json::Value(60));
  // Freeing a live claim is a person's act (issue 52): no agent is offered tasks.reclaim.
  for (const auto& alternative : early.error->alternatives) CHECK(alternative.operation != "tasks.reclaim");
  Envelope freed_by_agent = b.mutate("tasks", "reclaim", R"({"id":"T002","reason":"mine now"})");
  CHECK(code_of(freed_by_agent) == "E_MUTATION_DISABLED");
  // The holder, shown with when its lease ends.
  Envelope shown = b.query("tasks", "show", R"({"id":"T002"})");
  REQUIRE(shown.success);
  CHECK(shown.data["claim"]["session"].as_string() == first);
  CHECK(shown.data["claim"]["leaseEnds"].as_string() == "2026-01-01T00:15:00Z");
  CHECK_FALSE(shown.data["claim"].contains("lapsed"));

  b.at(15 * kMinute);
  CHECK(b.query("tasks", "show", R"({"id":"T002"})").data["claim"]["lapsed"] == json::Value(true));
  Envelope taken = b.mutate("tasks", "start", R"({"id":"T002"})");
  REQUIRE(taken.success);
  CHECK(taken.data["takenOver"]["session"].as_string() == first);
  CHECK(b.query("tasks", "show", R"({"id":"T002"})").data["claim"]["session"].as_string() == second);
  CHECK(a.query("tasks", "current").data.is_null());  // the first session lost it

  // The audit row says whose it was.
  Envelope history = b.query("tasks", "history", R"({"id":"T002"})");
  REQUIRE(history.success);
  CHECK(history.data.dump().find(first) != std::string::npos);
  // The first agent, back, is told who holds it now.
  a.at(16 * kMinute);
  Envelope back = a.mutate("tasks", "start", R"({"id":"T002"})");
  CHECK(code_of(back) == "E_TASK_CLAIMED");
  CHECK(back.error->details["holder"].as_string() == second);
}

TEST_CASE("every call in a session renews its lease; writes at most once a renewal step", "[lease]") {
  test::Project p;
  plant(p);
  Agent a(p), b(p);
  const std::string first = a.start_session("first");
  b.start_session("second");
  REQUIRE(a.mutate("tasks", "start", R"({"id":"T002"})").success);

  auto updated = [&] { return b.query("session", "show", R"({"id":")" + first + "\"}").data["updatedAt"].as_string(); };
  // A read ten minutes on renews it: here from another process of the same agent (a router of
  // its own, as a `ct` call with CLEO_SESSION is), whose clock says so.
  Agent again(p);
  again.client->set_session(first);
  again.at(10 * kMinute);
  REQUIRE(again.query("tasks", "show", R"({"id":"T004"})").success);
  CHECK(updated() == "2026-01-01T00:10:00Z");
  // Reads within the renewal step (half the lease) write nothing, whether the
  // router remembers renewing it (the steady clock says it did a moment ago)…
  again.at(10 * kMinute + 30'000);
  REQUIRE(again.query("tasks", "list").success);
  CHECK(updated() == "2026-01-01T00:10:00Z");
  // …or reads the session's row to find out.
  Agent third(p);
  third.client->set_session(first);
  third.at(10 * kMinute + 30'000);
  REQUIRE(third.query("tasks", "list").success);
  CHECK(updated() == "2026-01-01T00:10:00Z");
  b.at(16 * kMinute);
  CHECK(code_of(b.mutate("tasks", "start", R"({"id":"T002"})")) == "E_TASK_CLAIMED");
  // A heartbeat says when the lease ends.
  a.at(20 * kMinute);
  Envelope beat = a.mutate("session", "heartbeat");
  REQUIRE(beat.success);
  CHECK(beat.data["leaseEnds"].as_string() == "2026-01-01T00:35:00Z");
  b.at(34 * kMinute);
  CHECK(code_of(b.mutate("tasks", "start", R"({"id":"T002"})")) == "E_TASK_CLAIMED");
  b.at(35 * kMinute);
  CHECK(b.mutate("tasks", "start", R"({"id":"T002"})").success);
}

TEST_CASE("a session the CLI adopted is not renewed by reads: a person looking keeps no claim alive", "[lease]") {
  test::Project p;
  plant(p);
  Agent a(p);
  const std::string first = a.start_session("agent");
  REQUIRE(a.mutate("tasks", "start", R"({"id":"T002"})").success);
  auto shared = std::make_shared<TimeMs>(kStart + 10 * kMinute);
  RouterOptions options;
  Router person(registry(), Workspace::open(p.dir()), options, std::make_unique<test::HandClock>(shared));
  Envelope looked = person.dispatch({Gateway::Query, "tasks", "list", json::Value(), {.adopt_only_active_session = true}});
  REQUIRE(looked.success);
  CHECK(a.query("session", "show").data["updatedAt"].as_string() == "2026-01-01T00:00:00Z");
}

TEST_CASE("lapsed claims are ready again for tasks.next, orchestrate.ready and the dashboard", "[lease]") {
  test::Project p;
  plant(p);
  Agent a(p), b(p);
  a.start_session("first");
  b.start_session("second");
  REQUIRE(a.mutate("tasks", "start", R"({"id":"T004"})").success);
  REQUIRE(a.mutate("tasks", "update", R"({"id":"T004","priority":"critical"})").success);

  auto next_ids = [&] {
    std::vector<std::string> ids;
    const Envelope next = b.query("tasks", "next", R"({"count":5})");
    for (const auto& row : next.data.as_array()) ids.push_back(row["id"].as_string());
    return ids;
  };
  auto ready_ids = [&] {
    std::vector<std::string> ids;
    Envelope ready = b.query("orchestrate", "ready", R"({"epicId":"T001"})");
    for (const auto& row : ready.data["tasks"].as_array()) ids.push_back(row["id"].as_string());
    return ids;
  };
  b.at(5 * kMinute);
  auto before = next_ids();
  CHECK(std::ranges::find(before, "T004") == before.end());
  Envelope dash = b.query("system", "dash");
  REQUIRE(dash.data["focus"].as_array().size() == 1);
  CHECK(dash.data["focus"].as_array()[0]["leaseEnds"].as_string() == "2026-01-01T00:15:00Z");
  CHECK_FALSE(dash.data["focus"].as_array()[0].contains("lapsed"));

  b.at(15 * kMinute);
  auto after = next_ids();
  REQUIRE_FALSE(after.empty());
  CHECK(after.front() == "T004");  // critical, and free again
  CHECK(b.query("system", "dash").data["focus"].as_array()[0]["lapsed"] == json::Value(true));
  Envelope listed = b.query("tasks", "list", R"({"status":["active"]})");
  REQUIRE(listed.data.as_array().size() == 1);
  CHECK(listed.data.as_array()[0]["claim"]["lapsed"] == json::Value(true));

  // Inside an epic: a lapsed child is ready for orchestrate.ready.
  REQUIRE(a.mutate("tasks", "stop").success);
  a.at(20 * kMinute);
  REQUIRE(a.mutate("tasks", "start", R"({"id":"T002"})").success);
  b.at(21 * kMinute);
  auto held = ready_ids();
  CHECK(std::ranges::find(held, "T002") == held.end());
  b.at(35 * kMinute);
  auto lapsed_ready = ready_ids();
  CHECK(std::ranges::find(lapsed_ready, "T002") != lapsed_ready.end());
}

TEST_CASE("leaseSeconds 0: claims never lapse", "[lease]") {
  test::Project p;
  plant(p);
  REQUIRE(p.mutate_as_person("system", "config.set", R"({"key":"session.leaseSeconds","value":0})").success);
  Agent a(p), b(p);
  a.start_session("first");
  b.start_session("second");
  REQUIRE(a.mutate("tasks", "start", R"({"id":"T002"})").success);
  b.at(30 * 24 * 60 * kMinute);
  Envelope refused = b.mutate("tasks", "start", R"({"id":"T002"})");
  CHECK(code_of(refused) == "E_TASK_CLAIMED");
  CHECK_FALSE(refused.error->details.contains("leaseEnds"));
  CHECK_FALSE(refused.error->retryable());  // a claim without a lease never lapses
  CHECK_FALSE(b.query("tasks", "show", R"({"id":"T002"})").data["claim"].contains("leaseEnds"));
}

TEST_CASE("tasks.reclaim: a person frees a task at once, with a reason on the record", "[lease][claim]") {
  test::Project p;
  plant(p);
  Agent a(p);
  const std::string first = a.start_session("first");
  REQUIRE(a.mutate("tasks", "start", R"({"id":"T002"})").success);

  CHECK(code_of(p.mutate_as_person("tasks", "reclaim", R"({"id":"T002"})")) == "E_INVALID_PARAMS");  // a reason
  Envelope freed = p.mutate_as_person("tasks", "reclaim", R"({"id":"T002","reason":"its agent crashed"})");
  REQUIRE(freed.success);
  CHECK(freed.data["from"]["session"].as_string() == first);
  Envelope shown = p.query("tasks", "show", R"({"id":"T002"})");
  CHECK(shown.data["status"].as_string() == "pending");
  CHECK_FALSE(shown.data.contains("claim"));
  Envelope log = p.query("system", "log", R"({"limit":1})");
  CHECK(log.data.dump().find("its agent crashed") != std::string::npos);
  // Nobody holds it now: nothing to do.
  Envelope again = p.mutate_as_person("tasks", "reclaim", R"({"id":"T002","reason":"again"})");
  REQUIRE(again.success);
  CHECK(again.note == ErrorCode::NoChange);
  CHECK(code_of(p.mutate_as_person("tasks", "reclaim", R"({"id":"T099","reason":"x"})")) == "E_NOT_FOUND");
}
