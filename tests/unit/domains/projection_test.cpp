// Token-saving projections of list-like operations: `detail`, `fields`, and replies cut to
// output.maxReplyBytes with a continuation offset (domains/projection.h).
#include <catch2/catch.hpp>

#include <set>

#include "gateway/mcp_syntax.h"
#include "domains/projection.h"
#include "engines/store/task_json.h"
#include "unit/test_support.h"
#include "gateway/product.h"

namespace ct {
using test::code_of;

namespace {

std::set<std::string> keys_of(const json::Value& row) {
  std::set<std::string> keys;
  for (const auto& [key, value] : row.as_object()) keys.insert(key);
  return keys;
}

/// ids of the rows of a list reply, in order.
std::vector<std::string> ids_of(const Envelope& e) {
  std::vector<std::string> ids;
  const json::Value rows = table_as_rows(e.data);
  for (const auto& row : rows.as_array()) ids.push_back(row["id"].as_string());
  return ids;
}

void set_budget(test::Project& p, int bytes) {
  auto set = p.mutate("system", "config.set", R"({"key":"output.maxReplyBytes","value":")" + std::to_string(bytes) + "\"}");
  INFO(to_json(set, McpAdvice(registry())));
  REQUIRE(set.success);
}

}  // namespace

TEST_CASE("every list-like operation takes detail, fields and offset", "[projection][registry]") {
  std::set<std::string> list_like;
  for (const auto& spec : registry().operations()) {
    if (!spec.list_like()) continue;
    list_like.insert(spec.full_name());
    const ParamSpec* detail = spec.find_param("detail");
    const ParamSpec* fields = spec.find_param("fields");
    REQUIRE(detail);
    REQUIRE(fields);
    CHECK(spec.find_param("offset"));
    CHECK(detail->default_json == R"("compact")");
    CHECK(fields->item_type == ParamType::Enum);
    CHECK(fields->choices.size() == spec.row_fields.size());
  }
  CHECK(list_like == std::set<std::string>{"tasks.list", "tasks.find", "tasks.tree", "session.list", "system.log",
                                                "system.capabilities", "system.proposal.list", "skills.list", "skills.find",
                                                   "orchestrate.waves", "memory.find", "memory.list", "research.list", "research.find",
                                                   "research.pending", "lifecycle.history"});
  // show stays full by default.
  CHECK(registry().find("tasks", "show")->find_param("detail")->default_json == R"("full")");
}

TEST_CASE("detail: compact rows by default, every field with full", "[projection]") {
  test::Project p;
  p.add(R"({"title":"Login form","labels":["auth"],"description":"Email and password"})");
  auto compact = p.query("tasks", "list");
  REQUIRE(compact.success);
  CHECK(keys_of(compact.data.as_array()[0]) == std::set<std::string>{"id", "title", "status", "priority"});
  auto full = p.query("tasks", "list", R"({"detail":"full"})");
  CHECK(full.data.as_array()[0]["labels"].as_array()[0].as_string() == "auth");
  CHECK(full.data.as_array()[0].contains("createdAt"));

  auto found = table_as_rows(p.query("tasks", "find", R"({"query":"login"})").data).as_array();
  CHECK_FALSE(found[0].contains("description"));
  auto found_full = table_as_rows(p.query("tasks", "find", R"({"query":"login","detail":"full"})").data).as_array();
  CHECK(found_full[0]["description"].as_string() == "Email and password");

  auto tree_full = p.query("tasks", "tree", R"({"detail":"full"})").data.as_array();
  CHECK(tree_full[0].contains("version"));
  CHECK_FALSE(p.query("tasks", "tree").data.as_array()[0].contains("version"));

  auto log = p.query("system", "log").data.as_array();
  CHECK(log[0].contains("changed"));
  CHECK_FALSE(log[0].contains("params"));
  auto log_full = p.query("system", "log", R"({"detail":"full"})").data.as_array();
  CHECK(log_full[0]["params"]["title"].as_string() == "Login form");
  CHECK(log_full[0]["changes"].as_array()[0]["id"].as_string() == "T001");

  REQUIRE(p.mutate("session", "start", R"({"scope":"global","name":"work"})").success);
  auto sessions = p.query("session", "list").data.as_array();
  CHECK_FALSE(sessions[0].contains("createdAt"));
  CHECK(p.query("session", "list", R"({"detail":"full"})").data.as_array()[0].contains("createdAt"));
}

TEST_CASE("fields selects what each row carries", "[projection]") {
  test::Project p;
  p.add(R"({"title":"Epic","type":"epic"})");
  p.add(R"({"title":"Child","parent":"T001","labels":["ui"]})");
  auto list = p.query("tasks", "list", R"({"fields":["id","labels"]})");
  REQUIRE(list.success);
  auto rows = list.data.as_array();
  REQUIRE(rows.size() == 2);
  CHECK(keys_of(rows[0]) == std::set<std::string>{"id"});  // an empty field stays omitted
  CHECK(keys_of(rows[1]) == std::set<std::string>{"id", "labels"});
  // A field only a full row has, without asking for detail:'full'.
  auto versions = table_as_rows(p.query("tasks", "find", R"({"query":"child","fields":"id,version"})").data).as_array();
  CHECK(keys_of(versions[0]) == std::set<std::string>{"id", "version"});
  // Trees keep their shape: each node is projected, children stay.
  auto tree = p.query("tasks", "tree", R"({"fields":["title"]})").data.as_array();
  REQUIRE(tree.size() == 1);
  CHECK(keys_of(tree[0]) == std::set<std::string>{"title", "children"});
  CHECK(keys_of(tree[0]["children"].as_array()[0]) == std::set<std::string>{"title"});
  auto log = p.query("system", "log", R"({"fields":["operation"],"limit":1})").data.as_array();
  CHECK(keys_of(log[0]) == std::set<std::string>{"operation"});
  REQUIRE(p.mutate("session", "start", R"({"scope":"global"})").success);
  auto sessions = p.query("session", "list", R"({"fields":["scope","current"]})").data.as_array();
  CHECK(keys_of(sessions[0]) == std::set<std::string>{"scope", "current"});
}

TEST_CASE("an unknown field is refused with the valid names and a suggestion", "[projection]") {
  test::Project p;
  p.add(R"({"title":"A task"})");
  auto wrong = p.query("tasks", "list", R"({"fields":["id","titel"]})");
  REQUIRE_FALSE(wrong.success);
  CHECK(wrong.error->code == ErrorCode::Validation);
  CHECK(wrong.error->details["field"].as_string() == "fields[1]");
  CHECK(wrong.error->details["didYouMean"].as_string() == "title");
  // A list row's fields: a task's, waitingOn and claim.
  CHECK(wrong.error->details["valid"].as_array().size() == task_field_names().size() + 2);
  auto session_field = p.query("session", "list", R"({"fields":["focsu"]})");
  REQUIRE_FALSE(session_field.success);
  CHECK(session_field.error->details["didYouMean"].as_string() == "focus");
  CHECK(code_of(p.query("tasks", "list", R"({"fields":[]})")) == "E_VALIDATION");
  CHECK(code_of(p.query("tasks", "list", R"({"detail":"tiny"})")) == "E_VALIDATION");
}

TEST_CASE("a reply over output.maxReplyBytes is cut, says so, and continues at nextOffset", "[projection][budget]") {
  test::Project p;
  for (int i = 1; i <= 30; ++i)
    p.add(R"({"title":"A task with a fairly long title, number )" + std::to_string(i) + R"("})");
  set_budget(p, 1000);
  auto first = p.query("tasks", "list");
  REQUIRE(first.success);
  const auto kept = static_cast<std::int64_t>(first.data.size());
  CHECK(kept > 1);
  CHECK(kept < 30);
  CHECK(first.data.dump().size() <= 1000);
  json::Value wire = to_value(first, McpAdvice(registry()));
  CHECK(wire["_meta"]["page"]["total"].as_int() == 30);
  CHECK(wire["_meta"]["page"]["hasMore"].as_bool());
  CHECK(wire["_meta"]["page"]["nextOffset"].as_int() == kept);
  REQUIRE(first.warnings.size() == 1);
  CHECK(test::warnings_of(first)[0].find("output.maxReplyBytes") != std::string::npos);
  CHECK(test::warnings_of(first)[0].find("offset " + std::to_string(kept)) != std::string::npos);

  // Following nextOffset returns the rest, each task once, in order.
  std::vector<std::string> all = ids_of(first);
  std::int64_t offset = kept;
  for (int pages = 0; pages < 30 && offset < 30; ++pages) {
    auto next = p.query("tasks", "list", R"({"offset":)" + std::to_string(offset) + "}");
    REQUIRE(next.success);
    REQUIRE(next.data.size() > 0);
    for (auto& id : ids_of(next)) all.push_back(id);
    offset += static_cast<std::int64_t>(next.data.size());
    json::Value meta = to_value(next, McpAdvice(registry()))["_meta"];
    if (offset < 30) CHECK(meta["page"]["nextOffset"].as_int() == offset);
    else CHECK_FALSE(meta["page"]["hasMore"].as_bool());
  }
  REQUIRE(all.size() == 30);
  for (int i = 0; i < 30; ++i) CHECK(all[static_cast<std::size_t>(i)] == (i < 9 ? "T00" : "T0") + std::to_string(i + 1));

  // Fewer fields fit more rows; a reply that fits carries no page and no warning.
  auto ids_only = p.query("tasks", "list", R"({"fields":["id"]})");
  CHECK(ids_only.data.size() == 30);
  CHECK_FALSE(ids_only.page);
  CHECK(ids_only.warnings.empty());
}

TEST_CASE("a cut search or log has no total but a continuation", "[projection][budget]") {
  test::Project p;
  for (int i = 1; i <= 20; ++i)
    p.add(R"({"title":"Search target with padding words, item )" + std::to_string(i) + R"("})");
  set_budget(p, 1000);
  auto found = p.query("tasks", "find", R"({"query":"target","limit":20})");
  REQUIRE(found.success);
  const auto kept = static_cast<std::int64_t>(found.data["rows"].size());
  CHECK(kept < 20);
  json::Value page = to_value(found, McpAdvice(registry()))["_meta"]["page"];
  CHECK_FALSE(page.contains("total"));
  CHECK(page["hasMore"].as_bool());
  CHECK(page["nextOffset"].as_int() == kept);
  auto rest = p.query("tasks", "find", R"({"query":"target","limit":20,"offset":)" + std::to_string(kept) + "}");
  REQUIRE(rest.success);
  std::set<std::string> ids;
  for (auto& id : ids_of(found)) ids.insert(id);
  for (auto& id : ids_of(rest)) CHECK(ids.insert(id).second);  // no task twice

  auto log = p.query("system", "log", R"({"limit":20,"detail":"full"})");
  CHECK(log.data.size() < 20);
  REQUIRE(log.page);
  CHECK(log.page->has_more());
  CHECK(log.warnings.size() == 1);
}

TEST_CASE("projection helpers", "[projection]") {
  json::Value rows = json::Value::array();
  for (int i = 0; i < 3; ++i) {
    json::Value row = json::Value::object();
    row.set("id", "T00" + std::to_string(i));
    row.set("title", std::string(100, 'x'));
    rows.push_back(std::move(row));
  }
  CHECK(rows_within(rows, 100000, registry().agent_writer()) == 3);
  CHECK(rows_within(rows, 10, registry().agent_writer()) == 1);  // always one row: a caller makes progress
  CHECK(rows_within(rows, static_cast<std::int64_t>(rows.dump().size()), registry().agent_writer()) == 3);
  CHECK(rows_within(rows, static_cast<std::int64_t>(rows.dump().size()) - 1, registry().agent_writer()) == 2);
  std::vector<std::string> fields = {"id"};
  CHECK(select_fields(rows, fields).dump() == R"([{"id":"T000"},{"id":"T001"},{"id":"T002"}])");
}


TEST_CASE("rows as a table: each field named once, shared values once", "[projection][table]") {
  auto rows = json::parse(R"([{"id":"T003","title":"A","status":"pending","parent":"T001"},)"
                          R"({"id":"T008","title":"B","status":"pending","parent":"T001","labels":["x"]},)"
                          R"({"id":"T009","title":"C","status":"active","parent":"T001"}])").value();
  json::Value table = rows_as_table(rows);
  CHECK(table.dump() == R"({"columns":["id","title","status","labels"],"rows":[["T003","A","pending",null],)"
                        R"(["T008","B","pending",["x"]],["T009","C","active",null]],"every":{"parent":"T001"}})");
  CHECK(table_as_rows(table).dump() ==
        R"([{"id":"T003","title":"A","status":"pending","parent":"T001"},{"id":"T008","title":"B","status":"pending",)"
        R"("labels":["x"],"parent":"T001"},{"id":"T009","title":"C","status":"active","parent":"T001"}])");
  // One row shares nothing with another: no `every`.
  auto one = json::parse(R"([{"id":"T001","title":"A"}])").value();
  CHECK(rows_as_table(one).dump() == R"({"columns":["id","title"],"rows":[["T001","A"]]})");
  CHECK(rows_as_table(json::Value::array()).dump() == R"({"columns":[],"rows":[]})");
  // Not rows of objects: unchanged.
  auto scalars = json::parse(R"([1,2])").value();
  CHECK(rows_as_table(scalars) == scalars);
  CHECK(table_as_rows(scalars) == scalars);
}

TEST_CASE("tasks.find answers a table; detail full answers records", "[projection][table][tasks]") {
  test::Project p;
  p.add(R"({"title":"Epic","type":"epic"})");
  p.add(R"({"title":"Login form","parent":"T001","priority":"high"})");
  p.add(R"({"title":"Login API","parent":"T001"})");
  auto found = p.query("tasks", "find", R"({"query":"login"})");
  REQUIRE(found.success);
  CHECK(found.data["columns"].dump() == R"(["id","title","priority"])");
  CHECK(found.data["every"].dump() == R"({"status":"pending","parent":"T001"})");
  CHECK(found.data["rows"].size() == 2);
  auto full = p.query("tasks", "find", R"({"query":"login","detail":"full"})");
  CHECK(full.data.is_array());
  CHECK(full.data.as_array()[0].contains("createdAt"));
}

}  // namespace ct
