// The task rules of docs/architecture.md §4, exercised through the router as an agent would call them.
#include <catch2/catch.hpp>
#include <algorithm>
#include <fstream>
#include <set>

#include "gateway/mcp_syntax.h"
#include "unit/test_support.h"
#include "gateway/product.h"

using namespace ct;
using ct::test::code_of;

TEST_CASE("ids are allocated in order and never reused", "[tasks][ids]") {
  test::Project p;
  CHECK(p.add(R"({"title":"First task"})") == "T001");
  CHECK(p.add(R"({"title":"Second task"})") == "T002");
  REQUIRE(p.mutate("tasks", "delete", R"({"id":"T002","hard":true})").success);
  CHECK(p.add(R"({"title":"Third task"})") == "T003");
  CHECK(code_of(p.query("tasks", "show", R"({"id":"T002"})")) == "E_NOT_FOUND");
}

TEST_CASE("add returns the compact form; full on request", "[tasks][add]") {
  test::Project p;
  auto e = p.mutate("tasks", "add", R"({"title":"Write docs","priority":"high"})");
  REQUIRE(e.success);
  CHECK(to_json(e, McpAdvice(registry())) == R"({"success":true,"data":{"id":"T001"}})");  // what the caller sent is not echoed
  auto full = p.mutate("tasks", "add", R"({"title":"Write more docs","detail":"full","labels":["Docs"]})");
  CHECK(full.data.contains("createdAt"));
  CHECK_FALSE(full.data.contains("updatedAt"));  // only when it differs from createdAt
  CHECK(full.data["labels"].as_array()[0].as_string() == "docs");  // stored lowercase
  CHECK(full.data["version"].as_int() == 1);
}

TEST_CASE("hierarchy: parent, depth, subtasks, sibling limit, type inference", "[tasks][hierarchy]") {
  test::Project p;
  std::string epic = p.add(R"({"title":"Epic one","type":"epic"})");
  std::string task = p.add(R"({"title":"Task under epic","parent":"T001"})");
  std::string sub = p.add(R"({"title":"Subtask","parent":"T002"})");
  CHECK(p.query("tasks", "show", R"({"id":"T002"})").data["type"].as_string() == "task");
  CHECK(p.query("tasks", "show", R"({"id":"T003"})").data["type"].as_string() == "subtask");
  auto too_deep = p.mutate("tasks", "add", R"({"title":"Too deep","parent":"T003"})");
  CHECK(code_of(too_deep) == "E_DEPTH_EXCEEDED");
  CHECK(too_deep.exit_code() == 11);
  auto missing = p.mutate("tasks", "add", R"({"title":"Orphan","parent":"T999"})");
  CHECK(code_of(missing) == "E_PARENT_NOT_FOUND");
  CHECK(missing.exit_code() == 10);
  // A subtask at depth 1 still cannot have children.
  p.add(R"({"title":"Root task"})");
  p.add(R"({"title":"Explicit subtask","parent":"T004","type":"subtask"})");
  auto under_sub = p.mutate("tasks", "add", R"({"title":"Child of subtask","parent":"T005"})");
  CHECK(code_of(under_sub) == "E_INVALID_PARENT_TYPE");
  CHECK(under_sub.exit_code() == 13);
  CHECK(code_of(p.mutate("tasks", "add", R"({"title":"Epic child","parent":"T001","type":"epic"})")) == "E_VALIDATION");
  CHECK(code_of(p.mutate("tasks", "add", R"({"title":"Lonely subtask","type":"subtask"})")) == "E_VALIDATION");
  (void)epic; (void)task; (void)sub;
}

TEST_CASE("sibling limit from config", "[tasks][hierarchy]") {
  test::Project p;
  p.write_config(R"({"hierarchy":{"maxSiblings":2}})");
  // Config is read when a router opens the store: use a new router.
  RouterOptions options;
  Router router(registry(), Workspace::open(p.dir()), options, std::make_unique<FixedClock>(0));
  auto add = [&](std::string_view params) {
    return router.dispatch({Gateway::Mutate, "tasks", "add", test::parse_json(params)});
  };
  REQUIRE(add(R"({"title":"Parent task"})").success);
  REQUIRE(add(R"({"title":"Child one","parent":"T001"})").success);
  REQUIRE(add(R"({"title":"Child two","parent":"T001"})").success);
  auto third = add(R"({"title":"Child three","parent":"T001"})");
  CHECK(code_of(third) == "E_SIBLING_LIMIT");
  CHECK(third.exit_code() == 12);
  // Done children do not count.
  REQUIRE(router.dispatch({Gateway::Mutate, "tasks", "complete", test::parse_json(R"({"id":"T002"})")}).success);
  CHECK(add(R"({"title":"Child three","parent":"T001"})").success);
}

TEST_CASE("dependencies must exist and form no cycle", "[tasks][deps]") {
  test::Project p;
  p.add(R"({"title":"Task A"})");
  p.add(R"({"title":"Task B","depends":["T001"]})");
  p.add(R"({"title":"Task C","depends":["T002"]})");
  auto missing = p.mutate("tasks", "add", R"({"title":"Task D","depends":["T404"]})");
  CHECK(code_of(missing) == "E_NOT_FOUND");
  auto self = p.mutate("tasks", "update", R"({"id":"T001","depends":["T001"]})");
  CHECK(code_of(self) == "E_CIRCULAR_REFERENCE");
  auto cycle = p.mutate("tasks", "update", R"({"id":"T001","depends":["T003"]})");
  CHECK(code_of(cycle) == "E_CIRCULAR_REFERENCE");
  CHECK(cycle.exit_code() == 14);
  CHECK(cycle.error->message.find("T001 → T003 → T002 → T001") != std::string::npos);
  auto deps = p.query("tasks", "deps", R"({"id":"T003"})");
  REQUIRE(deps.success);
  CHECK(deps.data["upstream"].size() == 2);
  CHECK(deps.data["upstream"].as_array()[1]["distance"].as_int() == 2);
  CHECK(p.query("tasks", "deps", R"({"id":"T001","direction":"downstream"})").data["downstream"].size() == 2);
  auto blockers = p.query("tasks", "blockers", R"({"id":"T002"})");
  CHECK(blockers.data["blocked"].as_bool());
  CHECK(blockers.data["blockers"].as_array()[0]["id"].as_string() == "T001");
}

TEST_CASE("status transitions and their side effects", "[tasks][status]") {
  test::Project p;
  p.add(R"({"title":"Task A"})");
  p.add(R"({"title":"Task B","depends":["T001"]})");
  auto blocked = p.mutate("tasks", "update", R"({"id":"T001","status":"blocked"})");
  CHECK(code_of(blocked) == "E_VALIDATION");  // needs blockedBy
  REQUIRE(p.mutate("tasks", "update", R"({"id":"T001","blockedBy":"waiting on design"})").success);
  CHECK(p.query("tasks", "show", R"({"id":"T001"})").data["status"].as_string() == "blocked");
  CHECK(code_of(p.mutate("tasks", "update", R"({"id":"T001","status":"done"})")) == "E_VALIDATION");
  auto done = p.mutate("tasks", "complete", R"({"id":"T001","notes":"shipped"})");
  REQUIRE(done.success);
  CHECK(to_json(done, McpAdvice(registry())) == R"({"success":true,"data":{"unblocked":["T002"]}})");
  auto shown = p.query("tasks", "show", R"({"id":"T001"})").data;
  CHECK_FALSE(shown.contains("blockedBy"));
  CHECK(shown["notes"].size() == 1);
  CHECK(shown.contains("completedAt"));
  CHECK(shown["updatedAt"].as_string() == shown["completedAt"].as_string());
  // done → only reopen
  CHECK(code_of(p.mutate("tasks", "update", R"({"id":"T001","title":"Renamed"})")) == "E_TASK_COMPLETED");
  CHECK(p.mutate("tasks", "update", R"({"id":"T001","labels":["later"]})").success);
  auto reopened = p.mutate("tasks", "reopen", R"({"id":"T001"})");
  REQUIRE(reopened.success);
  CHECK(reopened.data["status"].as_string() == "pending");
  CHECK(reopened.data["completedAt"].is_null());
  CHECK(code_of(p.mutate("tasks", "reopen", R"({"id":"T002"})")) == "E_NO_CHANGE");
}

TEST_CASE("update: append vs replace, no change, notes append-only, ifVersion", "[tasks][update]") {
  test::Project p;
  p.add(R"({"title":"Task A","labels":["one"]})");
  auto appended = p.mutate("tasks", "update", R"({"id":"T001","labels":["two"]})");
  REQUIRE(appended.success);
  CHECK(to_json(appended, McpAdvice(registry())) == R"({"success":true,"data":{"labels":["one","two"],"version":2}})");
  auto replaced = p.mutate("tasks", "update", R"({"id":"T001","labels":["three"],"mode":"replace"})");
  CHECK(to_json(replaced, McpAdvice(registry())) == R"({"success":true,"data":{"version":3}})");  // the id and the list it sent
  auto same = p.mutate("tasks", "update", R"({"id":"T001","labels":["three"],"mode":"replace"})");
  CHECK(code_of(same) == "E_NO_CHANGE");
  CHECK(same.data["version"].as_int() == 3);
  auto noted = p.mutate("tasks", "update", R"({"id":"T001","notes":"first"})");
  CHECK(to_json(noted, McpAdvice(registry())) == R"({"success":true,"data":{"version":4}})");  // the note is not echoed
  p.mutate("tasks", "update", R"({"id":"T001","notes":"second"})");
  auto notes = p.query("tasks", "show", R"({"id":"T001"})").data["notes"];
  REQUIRE(notes.size() == 2);
  CHECK(notes.as_array()[0]["text"].as_string() == "first");
  auto stale = p.mutate("tasks", "update", R"({"id":"T001","priority":"high","ifVersion":2})");
  CHECK(code_of(stale) == "E_CONCURRENT_MODIFICATION");
  CHECK(stale.exit_code() == 21);
  CHECK(stale.error->retryable());
  CHECK(stale.error->details["actual"].as_int() == 5);
  CHECK(p.mutate("tasks", "update", R"({"id":"T001","priority":"high","ifVersion":5})").success);
  CHECK(code_of(p.mutate("tasks", "update", R"({"id":"T001","title":"Same","description":"same"})")) ==
        "E_VALIDATION");
}

TEST_CASE("delete is safe by default; hard delete is explicit", "[tasks][delete]") {
  test::Project p;
  p.add(R"({"title":"Parent task"})");
  p.add(R"({"title":"Child task","parent":"T001"})");
  p.add(R"({"title":"Dependent task","depends":["T001"]})");
  auto blocked = p.mutate("tasks", "delete", R"({"id":"T001"})");
  CHECK(code_of(blocked) == "E_HAS_CHILDREN");
  CHECK(blocked.exit_code() == 16);
  auto cascade = p.mutate("tasks", "delete", R"({"id":"T001","children":"cascade","reason":"out of scope"})");
  REQUIRE(cascade.success);
  CHECK(cascade.data["archived"].as_bool());
  CHECK(cascade.data["affected"].as_array()[0].as_string() == "T002");
  CHECK_FALSE(cascade.warnings.empty());  // T003 depended on it
  auto shown = p.query("tasks", "show", R"({"id":"T001"})").data;
  CHECK(shown["status"].as_string() == "cancelled");
  CHECK(shown["cancellationReason"].as_string() == "out of scope");
  CHECK(shown["archived"].as_bool());
  CHECK(p.query("tasks", "list").data.size() == 1);  // archived tasks leave the list
  CHECK(code_of(p.mutate("tasks", "update", R"({"id":"T001","notes":"x"})")) == "E_VALIDATION");
  // A cancelled dependency no longer blocks.
  CHECK(p.query("tasks", "next").data.as_array()[0]["id"].as_string() == "T003");
  auto restored = p.mutate("tasks", "restore", R"({"id":"T001"})");
  REQUIRE(restored.success);
  CHECK(p.query("tasks", "show", R"({"id":"T001"})").data["status"].as_string() == "pending");
  // hard delete with dependents needs force
  auto hard = p.mutate("tasks", "delete", R"({"id":"T001","hard":true,"children":"orphan"})");
  CHECK(code_of(hard) == "E_HAS_DEPENDENTS");
  auto forced = p.mutate("tasks", "delete", R"({"id":"T001","hard":true,"force":true,"children":"orphan"})");
  REQUIRE(forced.success);
  CHECK(forced.data["deleted"].as_bool());
  CHECK_FALSE(p.query("tasks", "show", R"({"id":"T003"})").data.contains("depends"));
  // history survives a hard delete
  CHECK(p.query("tasks", "history", R"({"id":"T001"})").data.size() >= 3);
}

TEST_CASE("archive and restore", "[tasks][archive]") {
  test::Project p;
  p.add(R"({"title":"Task A"})");
  p.add(R"({"title":"Task B"})");
  CHECK(code_of(p.mutate("tasks", "archive", R"({"id":"T001"})")) == "E_VALIDATION");
  p.mutate("tasks", "complete", R"({"id":"T001"})");
  auto archived = p.mutate("tasks", "archive", R"({"all":true})");
  REQUIRE(archived.success);
  CHECK(archived.data["count"].as_int() == 1);
  CHECK(p.query("tasks", "list", R"({"archived":"only"})").data.size() == 1);
  CHECK(table_as_rows(p.query("tasks", "find", R"({"query":"Task A"})").data).size() == 0);
  CHECK(table_as_rows(p.query("tasks", "find", R"({"query":"Task A","includeArchived":true})").data).size() == 1);
  auto restored = p.mutate("tasks", "restore", R"({"id":"T001"})");
  REQUIRE(restored.success);
  CHECK(p.query("tasks", "show", R"({"id":"T001"})").data["status"].as_string() == "done");
  CHECK(code_of(p.mutate("tasks", "archive", R"({})")) == "E_INVALID_PARAMS");
}

TEST_CASE("focus: start, current, stop; one active task per session", "[tasks][focus]") {
  test::Project p;
  p.add(R"({"title":"Task A"})");
  p.add(R"({"title":"Task B"})");
  p.add(R"({"title":"Task C","depends":["T001"]})");
  CHECK(code_of(p.query("tasks", "current")) == "E_NO_DATA");
  REQUIRE(p.mutate("tasks", "start", R"({"id":"T001"})").success);
  auto second = p.mutate("tasks", "start", R"({"id":"T002"})");
  REQUIRE(second.success);
  CHECK(second.data["previous"].as_string() == "T001");
  CHECK(p.query("tasks", "show", R"({"id":"T001"})").data["status"].as_string() == "pending");
  CHECK(p.query("tasks", "list", R"({"status":["active"]})").data.size() == 1);
  CHECK(p.query("tasks", "current").data["id"].as_string() == "T002");
  CHECK(code_of(p.mutate("tasks", "start", R"({"id":"T002"})")) == "E_NO_CHANGE");
  auto waiting = p.mutate("tasks", "start", R"({"id":"T003"})");
  CHECK(code_of(waiting) == "E_VALIDATION");
  CHECK(waiting.error->details["waitingOn"].as_array()[0].as_string() == "T001");
  auto stopped = p.mutate("tasks", "stop");
  CHECK(stopped.data["id"].as_string() == "T002");
  CHECK(stopped.data["status"].as_string() == "pending");
  CHECK(code_of(p.mutate("tasks", "stop")) == "E_NO_CHANGE");
  p.mutate("tasks", "start", R"({"id":"T002"})");
  p.mutate("tasks", "complete", R"({"id":"T002"})");
  CHECK(code_of(p.query("tasks", "current")) == "E_NO_DATA");  // completing clears the focus
  CHECK(code_of(p.mutate("tasks", "start", R"({"id":"T002"})")) == "E_TASK_COMPLETED");
}

TEST_CASE("next: ready tasks scored by priority, phase and leaf; ties by position", "[tasks][next]") {
  test::Project p;
  p.add(R"({"title":"Low task","priority":"low"})");
  p.add(R"({"title":"High parent","priority":"high"})");
  p.add(R"({"title":"High child","priority":"high","parent":"T002"})");
  p.add(R"({"title":"Critical but waiting","priority":"critical","depends":["T001"]})");
  p.add(R"({"title":"Medium one"})");
  p.add(R"({"title":"Medium two"})");
  auto next = p.query("tasks", "next", R"({"count":5,"explain":true})");
  REQUIRE(next.success);
  auto rows = next.data.as_array();
  REQUIRE(rows.size() == 5);
  CHECK(rows[0]["id"].as_string() == "T003");  // high + leaf (85) beats the high parent (75)
  CHECK(rows[0]["score"].as_int() == 85);
  CHECK(rows[1]["id"].as_string() == "T002");
  CHECK(rows[2]["id"].as_string() == "T005");  // medium: position 3 among roots
  CHECK(rows[3]["id"].as_string() == "T006");
  CHECK(rows[4]["id"].as_string() == "T001");
  CHECK(rows[0]["reasons"].size() == 2);
  CHECK_FALSE(p.query("tasks", "next").data.as_array()[0].contains("reasons"));
}

TEST_CASE("find ranks an exact id first and searches labels and notes", "[tasks][find]") {
  test::Project p;
  p.add(R"({"title":"Login page","description":"OAuth flow for T002"})");
  p.add(R"({"title":"Billing","labels":["payments"],"notes":"ask about oauth"})");
  auto by_id = table_as_rows(p.query("tasks", "find", R"({"query":"T002"})").data);
  REQUIRE(by_id.size() >= 1);
  CHECK(by_id.as_array()[0]["id"].as_string() == "T002");
  CHECK(table_as_rows(p.query("tasks", "find", R"({"query":"payments"})").data).as_array()[0]["id"].as_string() == "T002");
  auto oauth = table_as_rows(p.query("tasks", "find", R"({"query":"oauth"})").data).as_array();
  REQUIRE(oauth.size() == 2);
  CHECK(oauth[0]["id"].as_string() == "T001");  // description beats a note
  CHECK(table_as_rows(p.query("tasks", "find", R"({"query":"logi"})").data).size() == 1);  // prefix
  auto none = p.query("tasks", "find", R"({"query":"zebra"})");
  CHECK(none.success);
  CHECK(code_of(none) == "E_NO_DATA");
  auto sql = p.query("tasks", "find", R"({"query":"'; DROP TABLE tasks; --"})");
  CHECK(sql.success);
  CHECK(p.query("tasks", "list").data.size() == 2);
}

TEST_CASE("find's page counts the matches up to the ranking window, then says at least", "[tasks][find]") {
  test::Project p;
  // 1,002 tasks carry "needle" (three batches), one more says "thread".
  for (int from = 1; from <= 1002; from += 500) {
    std::string ops = "[";
    for (int n = from; n < std::min(from + 500, 1003); ++n)
      ops += std::string(n == from ? "" : ",") + R"({"operation":"tasks.add","params":{"title":"Needle )" +
             std::to_string(n) + R"("}})";
    REQUIRE(p.mutate("tasks", "batch", R"({"ops":)" + ops + "]}").success);
  }
  p.add(R"({"title":"Thread and needle, needle"})");  // T1003: the best needle
  p.add(R"({"title":"Thread alone"})");       // T1004
  auto many = p.query("tasks", "find", R"({"query":"needle","limit":5})");
  REQUIRE(many.page);
  CHECK(many.page->total == 1000);
  CHECK(many.page->total_at_least);
  CHECK(many.page->has_more());
  const std::string wire = to_json(many, McpAdvice(registry()));
  CHECK(wire.find(R"("page":{"totalAtLeast":1000,"hasMore":true,"nextOffset":5})") != std::string::npos);
  CHECK(wire.find(R"("total":)") == std::string::npos);
  auto rows = table_as_rows(many.data).as_array();
  REQUIRE(rows.size() == 5);
  CHECK(rows[0]["id"].as_string() == "T1003");  // two hits outrank one
  // Equal scores oldest first, among the newest 1,000 matches: T004 … T1003.
  CHECK(rows[1]["id"].as_string() == "T004");
  CHECK(rows[4]["id"].as_string() == "T007");
  // A page within the window: the same order, continued, and still "at least".
  auto next = p.query("tasks", "find", R"({"query":"needle","limit":5,"offset":5})");
  REQUIRE(next.page);
  CHECK(next.page->total_at_least);
  CHECK(table_as_rows(next.data).as_array()[0]["id"].as_string() == "T008");
  // Fewer matches than the window: counted exactly, said as "total".
  auto few = p.query("tasks", "find", R"({"query":"thread","limit":1})");
  REQUIRE(few.page);
  CHECK(few.page->total == 2);
  CHECK_FALSE(few.page->total_at_least);
  CHECK(to_json(few, McpAdvice(registry())).find(R"("page":{"total":2,"hasMore":true,"nextOffset":1})") !=
        std::string::npos);
  // A page past the window reads that far: exact at the end of the matches.
  auto last = p.query("tasks", "find", R"({"query":"needle","limit":10,"offset":1000})");
  REQUIRE(last.page);
  CHECK(table_as_rows(last.data).size() == 3);
  CHECK_FALSE(last.page->has_more());
  CHECK(last.page->total == 1003);
  CHECK_FALSE(last.page->total_at_least);
}

TEST_CASE("find narrows by status, epic and label like list", "[tasks][find]") {
  test::Project p;
  p.add(R"({"title":"Search epic","type":"epic"})");                              // T001
  p.add(R"({"title":"Search in the epic","parent":"T001","labels":["api"]})");  // T002
  p.add(R"({"title":"Search in the epic too","parent":"T001"})");               // T003
  p.add(R"({"title":"Search elsewhere","labels":["api"]})");                    // T004
  p.mutate("tasks", "complete", R"({"id":"T003"})");
  auto ids = [&](std::string_view params) {
    std::vector<std::string> out;
    json::Value rows = table_as_rows(p.query("tasks", "find", params).data);
    for (const auto& row : rows.as_array()) out.push_back(row["id"].as_string());
    std::sort(out.begin(), out.end());
    return out;
  };
  using V = std::vector<std::string>;
  CHECK(ids(R"({"query":"search","under":"T001"})") == V{"T002", "T003"});
  CHECK(ids(R"({"query":"search","label":["api"]})") == V{"T002", "T004"});
  CHECK(ids(R"({"query":"search","under":"T001","label":["api"]})") == V{"T002"});
  CHECK(ids(R"({"query":"search","under":"T001","status":["done"]})") == V{"T003"});
  // The count behind a cut page honours the filters too.
  auto page = p.query("tasks", "find", R"({"query":"search","label":["api"],"limit":1})");
  REQUIRE(page.page);
  CHECK(page.page->total == 2);
}

TEST_CASE("text is stored verbatim: SQL-looking and unicode strings", "[tasks][input]") {
  test::Project p;
  std::string title = R"(Robert'); DROP TABLE tasks;-- \"quoted\" 日本語 🚀)";
  json::Value params = json::Value::object();
  params.set("title", title);
  auto added = p.router().dispatch({Gateway::Mutate, "tasks", "add", params});
  REQUIRE(added.success);
  CHECK(p.query("tasks", "show", R"({"id":"T001"})").data["title"].as_string() == title);
  json::Value long_title = json::Value::object();
  long_title.set("title", std::string(201, 'x'));
  CHECK(code_of(p.router().dispatch({Gateway::Mutate, "tasks", "add", long_title})) == "E_VALIDATION");
  json::Value newline = json::Value::object();
  newline.set("title", "two\nlines");  // a title is one line
  CHECK(code_of(p.router().dispatch({Gateway::Mutate, "tasks", "add", newline})) == "E_VALIDATION");
  json::Value blank = json::Value::object();
  blank.set("title", "     ");  // trimmed before the length check
  auto refused = p.router().dispatch({Gateway::Mutate, "tasks", "add", blank});
  CHECK(code_of(refused) == "E_VALIDATION");
  CHECK(refused.error->message.find("at least 3 characters, got 0") != std::string::npos);
  json::Value padded = json::Value::object();
  padded.set("title", "  Padded title \t");
  REQUIRE(p.router().dispatch({Gateway::Mutate, "tasks", "add", padded}).success);
  CHECK(p.query("tasks", "show", R"({"id":"T002"})").data["title"].as_string() == "Padded title");
  json::Value wipe = json::Value::object();
  wipe.set("id", "T001");
  wipe.set("title", "    ");
  CHECK(code_of(p.router().dispatch({Gateway::Mutate, "tasks", "update", wipe})) == "E_VALIDATION");
  CHECK(p.query("tasks", "show", R"({"id":"T001"})").data["title"].as_string() == title);
}

TEST_CASE("list filters, sorts and paginates with hasMore", "[tasks][list]") {
  test::Project p;
  for (int i = 1; i <= 7; ++i)
    p.add(R"({"title":"Task number )" + std::to_string(i) + R"(","priority":")" + (i % 2 ? "low" : "high") + R"("})");
  auto page = p.query("tasks", "list", R"({"limit":3})");
  REQUIRE(page.page);
  CHECK(page.data.size() == 3);
  json::Value wire = to_value(page, McpAdvice(registry()));
  CHECK(wire["_meta"]["page"]["total"].as_int() == 7);
  CHECK(wire["_meta"]["page"]["hasMore"].as_bool());
  CHECK(wire["_meta"]["page"]["nextOffset"].as_int() == 3);
  auto last = p.query("tasks", "list", R"({"limit":3,"offset":6})");
  CHECK(last.data.size() == 1);
  CHECK_FALSE(to_value(last, McpAdvice(registry()))["_meta"]["page"]["hasMore"].as_bool());
  auto high = p.query("tasks", "list", R"({"priority":"high"})");
  CHECK(high.data.size() == 3);
  CHECK_FALSE(high.page);  // everything fit: no paging noise
  auto sorted = p.query("tasks", "list", R"({"sort":"priority"})").data.as_array();
  CHECK(sorted[0]["priority"].as_string() == "high");
  auto desc = p.query("tasks", "list", R"({"sort":"id","order":"desc"})").data.as_array();
  CHECK(desc[0]["id"].as_string() == "T007");
  auto full = p.query("tasks", "list", R"({"detail":"full","limit":1})").data.as_array();
  CHECK(full[0].contains("createdAt"));
}

TEST_CASE("tree, reparent, promote, reorder", "[tasks][hierarchy]") {
  test::Project p;
  p.add(R"({"title":"Epic A","type":"epic"})");
  p.add(R"({"title":"Task one","parent":"T001"})");
  p.add(R"({"title":"Task two","parent":"T001"})");
  p.add(R"({"title":"Loose task"})");
  auto tree = p.query("tasks", "tree").data.as_array();
  REQUIRE(tree.size() == 2);
  CHECK(tree[0]["children"].size() == 2);
  auto moved = p.mutate("tasks", "reparent", R"({"id":"T004","parent":"T002"})");
  REQUIRE(moved.success);
  CHECK_FALSE(moved.data.contains("parent"));  // the parent it sent
  CHECK(moved.data["type"].as_string() == "subtask");  // derived
  CHECK(code_of(p.mutate("tasks", "reparent", R"({"id":"T001","parent":"T004"})")) == "E_CIRCULAR_REFERENCE");
  CHECK(code_of(p.mutate("tasks", "reparent", R"({"id":"T002","parent":"T003"})")) == "E_DEPTH_EXCEEDED");
  auto promoted = p.mutate("tasks", "promote", R"({"id":"T004"})");
  REQUIRE(promoted.success);
  CHECK(promoted.data["parent"].is_null());
  CHECK(promoted.data["type"].as_string() == "task");
  auto reordered = p.mutate("tasks", "reorder", R"({"id":"T003","position":1})");
  REQUIRE(reordered.success);
  auto children = p.query("tasks", "list", R"({"parent":"T001"})").data.as_array();
  CHECK(children[0]["id"].as_string() == "T003");
  CHECK(code_of(p.mutate("tasks", "reorder", R"({"id":"T003","position":1})")) == "E_NO_CHANGE");
}

TEST_CASE("every mutation is audited with before/after; history is newest first", "[tasks][audit]") {
  test::Project p;
  p.add(R"({"title":"Task A"})");
  p.mutate("tasks", "update", R"({"id":"T001","priority":"high","reason":"customer asked"})");
  p.mutate("tasks", "complete", R"({"id":"T001"})");
  auto history = p.query("tasks", "history", R"({"id":"T001"})").data.as_array();
  REQUIRE(history.size() == 3);
  CHECK(history[0]["operation"].as_string() == "tasks.complete");
  CHECK(history[1]["operation"].as_string() == "tasks.update");
  CHECK(history[1]["reason"].as_string() == "customer asked");
  auto change = history[1]["changes"].as_array()[0];
  CHECK(change["field"].as_string() == "priority");
  CHECK(change["before"].as_string() == "medium");
  CHECK(change["after"].as_string() == "high");
  CHECK(history[2]["operation"].as_string() == "tasks.add");
  auto blame = p.query("tasks", "history", R"({"id":"T001","field":"priority"})").data.as_array();
  REQUIRE(blame.size() == 1);
  // A failed mutation leaves a trace too.
  p.mutate("tasks", "update", R"({"id":"T001","title":"Renamed"})");
  auto after_fail = p.query("tasks", "history", R"({"id":"T001"})").data.as_array();
  CHECK(after_fail[0]["outcome"].as_string() == "E_TASK_COMPLETED");
}

TEST_CASE("export and import round trip with id remapping and dry run", "[tasks][import]") {
  test::Project source;
  source.add(R"({"title":"Epic","type":"epic"})");
  source.add(R"({"title":"Child","parent":"T001","labels":["x"],"notes":"kept"})");
  source.add(R"({"title":"Sibling","parent":"T001","depends":["T002"]})");
  source.mutate("tasks", "complete", R"({"id":"T002"})");
  auto exported = source.query("tasks", "export", R"({"id":"T001"})");
  REQUIRE(exported.success);
  CHECK(exported.data["count"].as_int() == 3);

  test::Project target;
  target.add(R"({"title":"Existing task"})");
  json::Value params = json::Value::object();
  params.set("tasks", exported.data);
  params.set("dryRun", true);
  auto dry = target.router().dispatch({Gateway::Mutate, "tasks", "import", params});
  REQUIRE(dry.success);
  CHECK(dry.data["dryRun"].as_bool());
  CHECK(dry.data["idMap"]["T001"].as_string() == "T002");
  CHECK(target.query("tasks", "list").data.size() == 1);  // nothing written
  params.erase("dryRun");
  auto real = target.router().dispatch({Gateway::Mutate, "tasks", "import", params});
  REQUIRE(real.success);
  CHECK(real.data["imported"].as_int() == 3);
  auto sibling = target.query("tasks", "show", R"({"id":"T004"})").data;
  CHECK(sibling["parent"].as_string() == "T002");
  CHECK(sibling["depends"].as_array()[0].as_string() == "T003");
  auto child = target.query("tasks", "show", R"({"id":"T003"})").data;
  CHECK(child["status"].as_string() == "done");
  CHECK(child["notes"].as_array()[0]["text"].as_string() == "kept");
  CHECK(code_of(target.mutate("tasks", "import", R"({"tasks":{"nope":1}})")) == "E_INVALID_PARAMS");
}

TEST_CASE("imported records pass the validation of tasks.add, each reported", "[tasks][import]") {
  test::Project p;
  // NUL, ESC and BEL, an empty and a 300-character title, a label with a space, an unknown
  // priority: each refused with its record and field, and nothing is stored.
  std::string long_title(300, 'x');
  std::string records = R"({"tasks":[)"
                        R"({"id":"A1","title":"nul \u0000 inside"},)"
                        R"({"id":"A2","title":"escape \u001b[31m red \u0007"},)"
                        R"({"id":"A3","title":"   "},)"
                        R"({"id":"A4","title":")" + long_title + R"("},)"
                        R"({"id":"A5","title":"Spaced label","labels":["has space"]},)"
                        R"({"id":"A6","title":"Urgent one","priority":"urgent"},)"
                        R"({"id":"A7","title":"Good record","notes":[{"at":"2025-12-31T00:00:00Z","text":"old note"}]},)"
                        R"({"id":"A8","title":"Bad note","notes":["bell \u0007"]},)"
                        R"({"id":"A9","title":"Bad status","status":"finished"})"
                        R"(]})";
  auto refused = p.mutate("tasks", "import", records);
  REQUIRE(code_of(refused) == "E_VALIDATION");
  CHECK(refused.error->details["invalid"].as_int() == 8);
  const auto& listed = refused.error->details["records"].as_array();
  REQUIRE(listed.size() == 8);
  auto field_of = [&](std::size_t i) { return listed[i]["field"].as_string(); };
  CHECK(listed[0]["id"].as_string() == "A1");
  CHECK(field_of(0) == "title");
  CHECK(listed[1]["message"].as_string().find("control characters") != std::string::npos);
  CHECK(listed[2]["message"].as_string().find("at least 3 characters, got 0") != std::string::npos);
  CHECK(listed[3]["message"].as_string().find("at most 200") != std::string::npos);
  CHECK(field_of(4) == "labels[0]");
  CHECK(field_of(5) == "priority");
  CHECK(field_of(6) == "notes[0]");
  CHECK(field_of(7) == "status");
  CHECK(p.query("tasks", "list").data.empty());  // nothing stored

  // skipInvalid imports the valid record and lists the others.
  std::string skipping = records;
  skipping.insert(skipping.size() - 1, R"(,"skipInvalid":true)");
  auto partial = p.mutate("tasks", "import", skipping);
  REQUIRE(partial.success);
  CHECK(partial.data["imported"].as_int() == 1);
  CHECK(partial.data["skipped"].size() == 8);
  auto kept = p.query("tasks", "show", R"({"id":"T001"})").data;
  CHECK(kept["title"].as_string() == "Good record");
  CHECK(kept["notes"].as_array()[0]["at"].as_string() == "2025-12-31T00:00:00Z");
}

TEST_CASE("an import's cycles and duplicate ids are named by the file's records, never by rolled-back ids",
          "[tasks][import]") {
  // Issue 30 item 13: cycles and self-dependencies were reported with the ids the import was
  // about to give (T002, T003 …, which never exist: the import is rolled back); two records with
  // one id imported silently, every reference bound to the last one.
  test::Project p;
  p.add(R"({"title":"Existing task"})");
  auto ids_outside_the_store = [&](const Envelope& e) {
    std::string text = e.error->message + " " + mcp_text(e.error->fix, registry()) + " " + e.error->details.dump();
    for (std::string id : {"T002", "T003", "T004", "T005"}) {
      INFO(id << " in " << text);
      CHECK(text.find(id) == std::string::npos);
    }
  };
  auto self = p.mutate("tasks", "import", R"({"tasks":[{"id":"A","title":"First one"},)"
                                          R"({"id":"B","title":"Waits on itself","depends":["B"]}]})");
  INFO(to_json(self, McpAdvice(registry())));
  REQUIRE(code_of(self) == "E_CIRCULAR_REFERENCE");
  CHECK(self.error->message == "tasks: tasks[1] (B) depends on itself");
  CHECK(self.error->details["records"].as_array()[0].as_int() == 1);
  ids_outside_the_store(self);

  auto cycle = p.mutate("tasks", "import", R"({"tasks":[{"id":"A","title":"First one","depends":["C"]},)"
                                           R"({"id":"B","title":"Second one","depends":["A"]},)"
                                           R"({"id":"C","title":"Third one","depends":["B"]}],"dryRun":true})");
  INFO(to_json(cycle, McpAdvice(registry())));
  REQUIRE(code_of(cycle) == "E_CIRCULAR_REFERENCE");
  CHECK(cycle.error->message ==
        "tasks: the dependencies in the file form a cycle: tasks[0] (A) → tasks[2] (C) → tasks[1] (B) → tasks[0] (A)");
  CHECK(cycle.error->details["cycle"].dump() == R"(["A","C","B","A"])");
  CHECK(cycle.error->details["records"].dump() == "[0,2,1,0]");
  ids_outside_the_store(cycle);

  auto loop = p.mutate("tasks", "import", R"({"tasks":[{"id":"A","title":"First one","parent":"B"},)"
                                          R"({"id":"B","title":"Second one","parent":"A"}]})");
  REQUIRE(code_of(loop) == "E_CIRCULAR_REFERENCE");
  CHECK(loop.error->message == "tasks: the parent links in the file form a loop: tasks[0] (A) → tasks[1] (B) → tasks[0] (A)");

  auto twice = p.mutate("tasks", "import", R"({"tasks":[{"id":"A","title":"First one"},)"
                                           R"({"id":"B","title":"Second one","depends":["A"]},)"
                                           R"({"id":"A","title":"Another first"}],"skipInvalid":true})");
  INFO(to_json(twice, McpAdvice(registry())));
  REQUIRE(code_of(twice) == "E_INVALID_PARAMS");
  CHECK(twice.error->message == "tasks: tasks[0] (A) and tasks[2] (A) have the same id; references to A would be ambiguous");
  CHECK(twice.error->details["records"].dump() == R"([{"index":0,"id":"A"},{"index":2,"id":"A"}])");
  CHECK(p.query("tasks", "list").data.size() == 1);  // nothing was imported

  // What the task engine refuses while writing names the record too, not the id it would have had.
  REQUIRE(p.mutate("system", "config.set", R"({"key":"hierarchy.maxSiblings","value":1})").success);
  auto full = p.mutate("tasks", "import", R"({"tasks":[{"id":"E","title":"The epic","type":"epic"},)"
                                          R"({"id":"K1","title":"First child","parent":"E"},)"
                                          R"({"id":"K2","title":"Second child","parent":"E"}]})");
  INFO(to_json(full, McpAdvice(registry())));
  REQUIRE(code_of(full) == "E_SIBLING_LIMIT");
  CHECK(full.error->message.starts_with("tasks[2] (K2): tasks[0] (E) already has 1 open children"));
  ids_outside_the_store(full);
}

TEST_CASE("an import's dependencies land whatever the file's order: chains both ways, statuses after, every id mapped",
          "[tasks][import]") {
  // Issue 56: the dependencies are given dependents first (so that the engine's cycle search
  // stops at once), and the reply's idMap is built without a scan per id. What lands is as before.
  test::Project p;
  p.add(R"({"title":"Existing task"})");
  constexpr int kSteps = 150;
  json::Value::Array records;
  // F0 ← F1 ← … (each depends on the one before it, listed after it), and R0 ← R1 ← … listed the
  // other way round (each dependent before its dependency). F5 and R5 are done, F7 cancelled.
  for (int i = 0; i < kSteps; ++i) {
    json::Value record = json::Value::object();
    record.set("id", "F" + std::to_string(i));
    record.set("title", "Forward step " + std::to_string(i));
    if (i > 0) record.set("depends", json::Value::array_of(std::vector<std::string>{"F" + std::to_string(i - 1)}));
    if (i == 5) record.set("status", "done");
    if (i == 7) record.set("status", "cancelled");
    records.push_back(std::move(record));
  }
  for (int i = kSteps - 1; i >= 0; --i) {
    json::Value record = json::Value::object();
    record.set("id", "R" + std::to_string(i));
    record.set("title", "Reverse step " + std::to_string(i));
    if (i > 0) record.set("depends", json::Value::array_of(std::vector<std::string>{"R" + std::to_string(i - 1), "F0"}));
    if (i == 5) record.set("status", "done");
    records.push_back(std::move(record));
  }
  json::Value params = json::Value::object();
  params.set("tasks", json::Value(std::move(records)));
  auto imported = p.router().dispatch({Gateway::Mutate, "tasks", "import", params});
  INFO(to_json(imported, McpAdvice(registry())).substr(0, 2000));
  REQUIRE(imported.success);
  CHECK(imported.data["imported"].as_int() == 2 * kSteps);
  const json::Value& id_map = imported.data["idMap"];
  REQUIRE(id_map.size() == 2 * kSteps);
  // The file's ids in their sorted order, each once, each to the id its record was placed with.
  for (std::size_t i = 1; i < id_map.as_object().size(); ++i)
    CHECK(id_map.as_object()[i - 1].first < id_map.as_object()[i].first);
  CHECK(id_map["F0"].as_string() == "T002");
  CHECK(id_map["F149"].as_string() == "T151");
  CHECK(id_map["R149"].as_string() == "T152");
  CHECK(id_map["R0"].as_string() == "T301");
  for (int i = 1; i < kSteps; ++i) {
    auto forward = p.query("tasks", "show", R"({"id":")" + id_map["F" + std::to_string(i)].as_string() + R"("})").data;
    INFO("F" << i);
    CHECK(forward["depends"].dump() == "[\"" + id_map["F" + std::to_string(i - 1)].as_string() + "\"]");
    auto reverse = p.query("tasks", "show", R"({"id":")" + id_map["R" + std::to_string(i)].as_string() + R"("})").data;
    CHECK(reverse["depends"].dump() ==
          "[\"" + id_map["R" + std::to_string(i - 1)].as_string() + "\",\"" + id_map["F0"].as_string() + "\"]");
  }
  auto status_of = [&](const std::string& file_id) {
    return p.query("tasks", "show", R"({"id":")" + id_map[file_id].as_string() + R"("})").data["status"].as_string();
  };
  CHECK(status_of("F5") == "done");
  CHECK(status_of("R5") == "done");
  CHECK(status_of("F7") == "cancelled");
  CHECK(status_of("F8") == "pending");

  // The engine still finds a cycle an edge would close, with its whole way: R0 → … → R149.
  const std::string first = id_map["R0"].as_string(), last = id_map["R149"].as_string();
  auto cycle = p.mutate("tasks", "update", R"({"id":")" + first + R"(","depends":[")" + last + R"("]})");
  REQUIRE(code_of(cycle) == "E_CIRCULAR_REFERENCE");
  const json::Value& way = cycle.error->details["cycle"];
  REQUIRE(way.size() == kSteps + 1);
  CHECK(way.as_array().front().as_string() == first);
  CHECK(way.as_array()[1].as_string() == last);
  CHECK(way.as_array()[2].as_string() == id_map["R148"].as_string());
  CHECK(way.as_array().back().as_string() == first);

  // One change: undo takes every imported task back.
  REQUIRE(p.mutate("tasks", "undo", "{}").success);
  CHECK(p.query("tasks", "list").data.size() == 1);
  // The ids were taken from the counter in one block, never to be given again: the next is T302.
  auto next = p.mutate("tasks", "add", R"({"title":"After the import"})");
  REQUIRE(next.success);
  CHECK(next.data["id"].as_string() == "T302");
}

TEST_CASE("stats count by status", "[tasks][stats]") {
  test::Project p;
  p.add(R"({"title":"Task A"})");
  p.add(R"({"title":"Task B"})");
  p.mutate("tasks", "complete", R"({"id":"T001"})");
  auto stats = p.query("tasks", "stats").data;
  CHECK(stats["total"].as_int() == 2);
  CHECK(stats["done"].as_int() == 1);
  CHECK(stats["percentDone"].as_int() == 50);
  CHECK(p.query("tasks", "exists", R"({"id":"T001"})").data["exists"].as_bool());
  CHECK(code_of(p.query("tasks", "exists", R"({"id":"T050"})")) == "E_NO_DATA");
}

TEST_CASE("find follows imports, changes and undo across the search index's folds", "[tasks][find]") {
  // Issue 56: SQLite asks its index for each word's whole terms (tasks_fts_terms), kept by every
  // fold; PostgreSQL reads its generated vectors. Either way a word is found in what an import
  // wrote, a change's new words are found and its old ones are not, and an undo brings them back.
  test::Project p;
  auto ids_found = [&](std::string_view query) {
    std::set<std::string> ids;
    const json::Value rows = table_as_rows(p.query("tasks", "find", R"({"limit":100,"query":")" + std::string(query) + "\"}").data);
    for (const auto& row : rows.as_array())
      ids.insert(row["id"].as_string());
    return ids;
  };
  std::string records = "[";
  for (int n = 1; n <= 40; ++n)
    records += std::string(n > 1 ? "," : "") + R"({"title":"Kiwi crate )" + std::to_string(n) +
               (n % 4 == 0 ? R"( Ωmega Zürichsee"})" : R"( kiwifruit"})");
  REQUIRE(p.mutate("tasks", "import", R"({"tasks":)" + records + "]}").success);
  CHECK(ids_found("kiwi").size() == 40);
  CHECK(ids_found("kiwif").size() == 30);
  CHECK(ids_found("ωmeg").size() == 10);
  CHECK(ids_found("zurich").size() == 10);  // folded as the index folds it
  REQUIRE(p.mutate("tasks", "update", R"({"id":"T004","title":"Papaya special"})").success);
  for (int n = 0; n < 35; ++n) p.add(R"({"title":"Filler number )" + std::to_string(n) + R"("})");  // folds
  CHECK(ids_found("papaya") == std::set<std::string>{"T004"});
  CHECK(ids_found("ωmega").size() == 9);
  CHECK(ids_found("kiwi").size() == 39);
  Envelope log = p.query("system", "log", R"({"operation":"tasks.update","limit":1})");
  REQUIRE(log.data.size() == 1);
  REQUIRE(p.mutate_as_person("tasks", "undo", R"({"seq":)" + std::to_string(log.data.as_array()[0]["seq"].as_int()) + "}")
              .success);
  for (int n = 0; n < 35; ++n) p.add(R"({"title":"More filler )" + std::to_string(n) + R"("})");  // folds again
  CHECK(ids_found("papaya").empty());
  CHECK(ids_found("kiwi").size() == 40);
  CHECK(ids_found("T004") == std::set<std::string>{"T004"});  // an exact id
  CHECK(ids_found("ωmega zür").size() == 10);
}
