// tasks.undo (issue 17): taking a change back from the audit trail's before/after values — the
// caller's last command by default (a bulk command as a whole), walking back on repeat; refusing
// when later changes touched the same fields unless forced; itself audited, so undoing an undo
// redoes.
#include <catch2/catch.hpp>

#include "gateway/mcp_syntax.h"
#include "unit/test_support.h"

namespace ct {
namespace {

json::Value show(test::Project& p, std::string_view id) {
  Envelope shown = p.query("tasks", "show", std::string(R"({"id":")") + std::string(id) + "\"}");
  REQUIRE(shown.success);
  return shown.data;
}

bool exists(test::Project& p, std::string_view id) {
  return p.query("tasks", "show", std::string(R"({"id":")") + std::string(id) + "\"}").success;
}

std::vector<std::int64_t> undid(const Envelope& e) {
  std::vector<std::int64_t> seqs;
  for (const auto& seq : e.data["undid"].as_array()) seqs.push_back(seq.as_int());
  return seqs;
}

TEST_CASE("undo takes back the last change, and repeated undos walk back", "[tasks][undo]") {
  test::Project p;
  p.add(R"({"title":"First task","priority":"high"})");
  p.add(R"({"title":"Second task"})");
  REQUIRE(p.mutate("tasks", "update", R"({"id":"T001","priority":"low","labels":["docs"]})").success);
  REQUIRE(p.mutate("tasks", "complete", R"({"id":"T002"})").success);

  Envelope first = p.mutate("tasks", "undo");
  REQUIRE(first.success);
  CHECK(first.data["operation"].as_string() == "tasks.complete");
  CHECK(show(p, "T002")["status"].as_string() == "pending");
  CHECK_FALSE(show(p, "T002").contains("completedAt"));

  Envelope second = p.mutate("tasks", "undo");
  REQUIRE(second.success);
  CHECK(second.data["operation"].as_string() == "tasks.update");
  json::Value t1 = show(p, "T001");
  CHECK(t1["priority"].as_string() == "high");
  CHECK_FALSE(t1.contains("labels"));
  // Every undo is a new version, not a rewind of the row.
  CHECK(t1["version"].as_int() == 3);

  // The add is next: the task goes away.
  Envelope third = p.mutate("tasks", "undo");
  REQUIRE(third.success);
  CHECK(third.data["operation"].as_string() == "tasks.add");
  CHECK_FALSE(exists(p, "T002"));
  CHECK(third.data["changes"].as_array().front()["removed"] == json::Value(true));

  SECTION("undoing an undo redoes it") {
    Envelope log = p.query("system", "log", R"({"limit":1})");
    std::int64_t last = log.data.as_array().front()["seq"].as_int();
    Envelope redo = p.mutate("tasks", "undo", "{\"seq\":" + std::to_string(last) + "}");
    REQUIRE(redo.success);
    CHECK(exists(p, "T002"));
    CHECK(show(p, "T002")["title"].as_string() == "Second task");
  }
  SECTION("the audit chain stays intact") {
    Envelope audit = p.query("validate", "audit");
    REQUIRE(audit.success);
    CHECK(audit.data["valid"] == json::Value(true));
  }
}

TEST_CASE("undo refuses to overwrite later changes unless forced", "[tasks][undo]") {
  test::Project p;
  p.add(R"({"title":"First task"})");
  REQUIRE(p.mutate("tasks", "update", R"({"id":"T001","priority":"high"})").success);  // seq 2
  REQUIRE(p.mutate("tasks", "update", R"({"id":"T001","priority":"low"})").success);   // seq 3

  Envelope refused = p.mutate("tasks", "undo", R"({"seq":2})");
  REQUIRE_FALSE(refused.success);
  CHECK(refused.error->code == ErrorCode::ConcurrentModification);
  REQUIRE(refused.error->details["conflicts"].size() == 1);
  CHECK(refused.error->details["conflicts"].as_array().front()["seq"].as_int() == 3);
  CHECK(mcp_text(refused.error->fix, registry()).find("seq:3") != std::string::npos);
  CHECK(show(p, "T001")["priority"].as_string() == "low");

  SECTION("a dry run of the forced undo changes nothing") {
    Envelope dry = p.mutate("tasks", "undo", R"({"seq":2,"force":true,"dryRun":true})");
    REQUIRE(dry.success);
    CHECK(dry.data["changes"].as_array().front()["to"].as_string() == "medium");
    CHECK(show(p, "T001")["priority"].as_string() == "low");
  }
  SECTION("forced, it overwrites and says so") {
    Envelope forced = p.mutate("tasks", "undo", R"({"seq":2,"force":true})");
    REQUIRE(forced.success);
    CHECK(show(p, "T001")["priority"].as_string() == "medium");
    REQUIRE_FALSE(forced.warnings.empty());
    CHECK(test::warnings_of(forced).front().find("forced") != std::string::npos);
  }
  SECTION("once the later change is undone, the earlier one can be") {
    REQUIRE(p.mutate("tasks", "undo", R"({"seq":3})").success);
    Envelope earlier = p.mutate("tasks", "undo", R"({"seq":2})");
    REQUIRE(earlier.success);
    CHECK(show(p, "T001")["priority"].as_string() == "medium");
    // Done twice, it is refused: the row was undone already.
    Envelope again = p.mutate("tasks", "undo", R"({"seq":2})");
    REQUIRE_FALSE(again.success);
    CHECK(again.error->code == ErrorCode::Validation);
    CHECK(again.error->details["undoneBy"].is_int());
  }
}

TEST_CASE("undo takes a bulk command back as a whole", "[tasks][undo]") {
  test::Project p;
  for (const char* title : {"First task", "Second task", "Third task"}) p.add(std::string(R"({"title":")") + title + "\"}");
  REQUIRE(p.mutate("tasks", "complete", R"({"ids":["T001","T002","T003"]})").success);
  Envelope undone = p.mutate("tasks", "undo");
  REQUIRE(undone.success);
  CHECK(undid(undone).size() == 3);
  for (const char* id : {"T001", "T002", "T003"}) CHECK(show(p, id)["status"].as_string() == "pending");
}

TEST_CASE("a bulk command whose last task did not change is still one unit, and only its own", "[tasks][undo]") {
  test::Project p;
  p.add(R"({"title":"First task"})");
  p.add(R"({"title":"Second task","priority":"high"})");
  REQUIRE(p.mutate("tasks", "update", R"({"ids":["T001","T002"],"labels":["docs"]})").success);
  // The same ids again: T002 is high already, so only T001's row records a change.
  REQUIRE(p.mutate("tasks", "update", R"({"ids":["T001","T002"],"priority":"high"})").success);
  Envelope undone = p.mutate("tasks", "undo");
  REQUIRE(undone.success);
  CHECK(undid(undone).size() == 1);
  CHECK(show(p, "T001")["priority"].as_string() == "medium");
  // The command before it is untouched.
  CHECK(show(p, "T001")["labels"] == json::Value::array_of(std::vector<std::string>{"docs"}));
  CHECK(show(p, "T002")["labels"] == json::Value::array_of(std::vector<std::string>{"docs"}));
}

TEST_CASE("undo restores a hard-deleted task and the dependency lists it was dropped from", "[tasks][undo]") {
  test::Project p;
  p.add(R"({"title":"First task"})");
  p.add(R"({"title":"Second task","depends":["T001"]})");
  REQUIRE(p.mutate("tasks", "delete", R"({"id":"T001","hard":true,"force":true})").success);
  CHECK_FALSE(show(p, "T002").contains("depends"));

  Envelope undone = p.mutate("tasks", "undo");
  REQUIRE(undone.success);
  CHECK(show(p, "T001")["title"].as_string() == "First task");
  CHECK(show(p, "T002")["depends"] == json::Value::array_of(std::vector<std::string>{"T001"}));
  Envelope consistent = p.query("validate", "schema");
  REQUIRE(consistent.success);
}

TEST_CASE("undo of start puts the focus back; of an import takes every task back", "[tasks][undo]") {
  test::Project p;
  p.add(R"({"title":"First task"})");
  REQUIRE(p.mutate("tasks", "start", R"({"id":"T001"})").success);
  REQUIRE(p.mutate("tasks", "undo").success);
  CHECK(show(p, "T001")["status"].as_string() == "pending");
  CHECK(p.query("tasks", "current").data.is_null());

  Envelope imported = p.mutate("tasks", "import",
                               R"({"tasks":[{"id":"a","title":"Parent task"},{"id":"b","title":"Child task","parent":"a"},
                                            {"id":"c","title":"Later task","depends":["b"],"status":"done"}]})");
  REQUIRE(imported.success);
  Envelope undone = p.mutate("tasks", "undo");
  REQUIRE(undone.success);
  CHECK(undone.data["operation"].as_string() == "tasks.import");
  Envelope left = p.query("tasks", "list");
  CHECK(left.data.size() == 1);
}

TEST_CASE("undo refuses what it cannot take back", "[tasks][undo]") {
  test::Project p;
  Envelope nothing = p.mutate("tasks", "undo");
  REQUIRE_FALSE(nothing.success);
  CHECK(nothing.error->code == ErrorCode::NotFound);

  p.add(R"({"title":"First task"})");
  Envelope missing = p.mutate("tasks", "undo", R"({"seq":999})");
  REQUIRE_FALSE(missing.success);
  CHECK(missing.error->code == ErrorCode::NotFound);

  // A task created since a child was added under it cannot be taken back alone.
  p.add(R"({"title":"Second task"})");
  p.add(R"({"title":"Child task","parent":"T001"})");
  Envelope log = p.query("system", "log", R"({"limit":10,"operation":"tasks.add"})");
  REQUIRE(log.success);
  std::int64_t first_add = log.data.as_array().back()["seq"].as_int();
  Envelope refused = p.mutate("tasks", "undo", "{\"seq\":" + std::to_string(first_add) + ",\"force\":true}");
  REQUIRE_FALSE(refused.success);
  CHECK(refused.error->code == ErrorCode::HasDependents);
  CHECK(exists(p, "T001"));

  // Another domain's change.
  REQUIRE(p.mutate("session", "start", R"({"scope":"global"})").success);
  Envelope started = p.query("system", "log", R"({"limit":1,"operation":"session.start"})");
  REQUIRE(started.data.size() == 1);
  Envelope session_row = p.mutate("tasks", "undo", "{\"seq\":" + std::to_string(started.data.as_array().front()["seq"].as_int()) + "}");
  REQUIRE_FALSE(session_row.success);
  CHECK(session_row.error->code == ErrorCode::Validation);
  // In the session, the changes made outside it are not "my last change".
  Envelope in_session = p.mutate("tasks", "undo");
  REQUIRE_FALSE(in_session.success);
  CHECK(in_session.error->code == ErrorCode::NotFound);
}

}  // namespace
}  // namespace ct
