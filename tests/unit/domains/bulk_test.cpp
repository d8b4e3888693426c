// Several tasks in one call (issue 17): ids in place of id, one transaction, one audit row per
// task; taking labels, dependencies and links off; and the list filters behind `ct ready` and
// `ct blocked`.
#include <catch2/catch.hpp>

#include "unit/test_support.h"

namespace ct {
namespace {

std::vector<std::string> ids_of(const json::Value& rows) {
  std::vector<std::string> out;
  for (const auto& row : rows.as_array()) out.push_back(row["id"].as_string());
  return out;
}

std::int64_t audit_rows(test::Project& p) {
  Envelope log = p.query("system", "log", R"({"limit":500})");
  REQUIRE(log.success);
  return static_cast<std::int64_t>(log.data.size());
}

TEST_CASE("a bulk call changes every task named, in one transaction, audited per task", "[tasks][bulk]") {
  test::Project p;
  for (const char* title : {"First task", "Second task", "Third task"}) p.add(std::string(R"({"title":")") + title + "\"}");

  std::int64_t before = audit_rows(p);
  Envelope done = p.mutate("tasks", "complete", R"({"ids":["T1","T002","t3"],"notes":"shipped"})");
  REQUIRE(done.success);
  REQUIRE(done.data["results"].size() == 3);
  CHECK(ids_of(done.data["results"]) == std::vector<std::string>{"T001", "T002", "T003"});
  CHECK(audit_rows(p) == before + 3);
  for (const char* id : {"T001", "T002", "T003"}) {
    Envelope shown = p.query("tasks", "show", std::string(R"({"id":")") + id + "\"}");
    CHECK(shown.data["status"].as_string() == "done");
  }

  SECTION("all already done: a note, not an error") {
    Envelope again = p.mutate("tasks", "complete", R"({"ids":["T001","T002"]})");
    REQUIRE(again.success);
    REQUIRE(again.note);
    CHECK(*again.note == ErrorCode::NoChange);
  }
}

TEST_CASE("one failure in a bulk call changes nothing and names the task", "[tasks][bulk]") {
  test::Project p;
  p.add(R"({"title":"First task"})");
  p.add(R"({"title":"Second task"})");
  std::int64_t before = audit_rows(p);

  Envelope failed = p.mutate("tasks", "update", R"({"ids":["T001","T009","T002"],"priority":"high"})");
  REQUIRE_FALSE(failed.success);
  CHECK(failed.error->code == ErrorCode::NotFound);
  CHECK(failed.error->details["id"].as_string() == "T009");
  CHECK(failed.error->message.find("rolled back") != std::string::npos);
  // T001 was changed inside the transaction, then rolled back with it.
  CHECK(p.query("tasks", "show", R"({"id":"T001"})").data["priority"].as_string() == "medium");
  // Only the failed attempt is on record.
  CHECK(audit_rows(p) <= before + 1);
}

TEST_CASE("bulk ids are validated like id", "[tasks][bulk]") {
  test::Project p;
  p.add(R"({"title":"First task"})");
  Envelope both = p.mutate("tasks", "complete", R"({"id":"T001","ids":["T001"]})");
  REQUIRE_FALSE(both.success);
  CHECK(both.error->code == ErrorCode::InvalidParams);
  CHECK(both.error->details["field"].as_string() == "ids");

  Envelope empty = p.mutate("tasks", "complete", R"({"ids":[]})");
  REQUIRE_FALSE(empty.success);
  CHECK(empty.error->code == ErrorCode::Validation);

  Envelope bad = p.mutate("tasks", "complete", R"({"ids":["T001","nope"]})");
  REQUIRE_FALSE(bad.success);
  CHECK(bad.error->code == ErrorCode::Validation);

  // Repeats run once.
  Envelope twice = p.mutate("tasks", "complete", R"({"ids":["T001","T1"]})");
  REQUIRE(twice.success);
  CHECK(twice.data["results"].size() == 1);

  // An operation that is not bulk does not take ids.
  Envelope start = p.mutate("tasks", "start", R"({"ids":["T001"]})");
  REQUIRE_FALSE(start.success);
  CHECK(start.error->code == ErrorCode::InvalidParams);
}

TEST_CASE("a keyed bulk call is replayed only for the same tasks", "[tasks][bulk]") {
  test::Project p;
  p.add(R"({"title":"First task"})");
  p.add(R"({"title":"Second task"})");
  Envelope first = p.mutate("tasks", "update", R"({"ids":["T001"],"priority":"high","idempotencyKey":"k1"})");
  REQUIRE(first.success);
  Envelope other = p.mutate("tasks", "update", R"({"ids":["T001","T002"],"priority":"high","idempotencyKey":"k1"})");
  REQUIRE_FALSE(other.success);
  CHECK(other.error->details["field"].as_string() == "idempotencyKey");
}

TEST_CASE("labels, dependencies and links come off one at a time", "[tasks][update]") {
  test::Project p;
  p.add(R"({"title":"Upstream task"})");
  p.add(R"({"title":"Other upstream"})");
  p.add(R"({"title":"The task","labels":["api","ui","db"],"depends":["T001","T002"]})");

  Envelope mixed = p.mutate("tasks", "update", R"({"id":"T003","labels":["-ui","ops","-DB"]})");
  REQUIRE(mixed.success);
  CHECK(mixed.data["labels"].dump() == R"(["api","ops"])");

  Envelope dep = p.mutate("tasks", "update", R"({"id":"T003","depends":["T001"],"mode":"remove"})");
  REQUIRE(dep.success);
  CHECK(p.query("tasks", "show", R"({"id":"T003"})").data["depends"].dump() == R"(["T002"])");

  // Only "-label" may lead with a dash, and only in an update.
  CHECK_FALSE(p.mutate("tasks", "add", R"({"title":"Bad labels","labels":["-ui"]})").success);
  CHECK_FALSE(p.mutate("tasks", "update", R"({"id":"T003","labels":["--ui"]})").success);

  REQUIRE(p.mutate("tasks", "relate", R"({"id":"T003","target":"T001","type":"supersedes"})").success);
  Envelope unlinked = p.mutate("tasks", "relate", R"({"id":"T003","target":"T001","remove":true})");
  REQUIRE(unlinked.success);
  CHECK_FALSE(p.query("tasks", "show", R"({"id":"T003"})").data.contains("relates"));
  Envelope again = p.mutate("tasks", "relate", R"({"id":"T003","target":"T001","remove":true})");
  REQUIRE(again.success);
  REQUIRE(again.note);
  CHECK(*again.note == ErrorCode::NoChange);
}

TEST_CASE("list filters: ready, blocked, descendants, several labels", "[tasks][list]") {
  test::Project p;
  p.add(R"({"title":"Epic one","type":"epic"})");                                        // T001
  p.add(R"({"title":"Design it","parent":"T001","labels":["api"]})");                      // T002
  p.add(R"({"title":"Build it","parent":"T001","depends":["T002"],"labels":["api","be"]})");  // T003
  p.add(R"({"title":"Test it","parent":"T003"})");                                        // T004
  p.add(R"({"title":"Waits on vendor","status":"blocked","blockedBy":"vendor reply"})");  // T005
  p.add(R"({"title":"Loose end"})");                                                     // T006

  auto list = [&](std::string_view params) {
    Envelope e = p.query("tasks", "list", params);
    REQUIRE(e.success);
    return e.data.is_array() ? ids_of(e.data) : std::vector<std::string>{};
  };
  using Ids = std::vector<std::string>;
  // The epic waits on its open children; T003 on T002.
  CHECK(list(R"({"readiness":"ready","sort":"id"})") == Ids{"T002", "T004", "T006"});
  CHECK(list(R"({"readiness":"blocked","sort":"id"})") == Ids{"T003", "T005"});
  CHECK(list(R"({"under":"T001","sort":"id"})") == Ids{"T002", "T003", "T004"});
  CHECK(list(R"({"under":"T003"})") == Ids{"T004"});
  CHECK(list(R"({"label":["api","be"]})") == Ids{"T003"});
  CHECK(list(R"({"label":"api","sort":"id"})") == Ids{"T002", "T003"});
  CHECK(list(R"({"label":"API,BE"})") == Ids{"T003"});

  // Rows say what keeps a task from starting.
  Envelope blocked = p.query("tasks", "list", R"({"readiness":"blocked","sort":"id"})");
  CHECK(blocked.data.as_array()[0]["waitingOn"].dump() == R"(["T002"])");
  CHECK(blocked.data.as_array()[1]["blockedBy"].as_string() == "vendor reply");

  // Finishing the upstream task makes the waiting one ready.
  REQUIRE(p.mutate("tasks", "complete", R"({"id":"T002"})").success);
  CHECK(list(R"({"readiness":"ready","sort":"id"})") == Ids{"T003", "T004", "T006"});
  CHECK(list(R"({"readiness":"blocked"})") == Ids{"T005"});
  Envelope tree = p.query("tasks", "tree", R"({"id":"T001"})");
  REQUIRE(tree.success);
  CHECK(tree.data.as_array()[0]["children"].as_array()[1]["id"].as_string() == "T003");
  CHECK_FALSE(tree.data.as_array()[0]["children"].as_array()[1].contains("waitingOn"));
}

}  // namespace
}  // namespace ct
