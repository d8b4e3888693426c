// Atomic batches and plans (issue 36): placeholders, all-or-nothing runs audited as one row that
// undo takes back whole, dry runs; plans staged apart from the store, compared, committed,
// refused when what they rest on moved, rebased, discarded. Runs on both backends.
#include <catch2/catch.hpp>

#include <map>
#include <random>

#include "gateway/mcp_syntax.h"
#include "unit/test_support.h"

using namespace ct;

namespace {

ErrorCode code_of(const Envelope& e) { return e.error ? e.error->code : ErrorCode::Internal; }

const json::Value& at(const json::Value& array, std::size_t i) { return array.as_array().at(i); }

Envelope must(Envelope e) {
  INFO(to_json(e, McpAdvice(registry())));
  REQUIRE(e.success);
  return e;
}

std::vector<std::string> list_ids(test::Project& p, std::string_view params = R"({"limit":100})") {
  Envelope listed = must(p.query("tasks", "list", params));
  std::vector<std::string> ids;
  if (listed.data.is_array())
    for (const auto& row : listed.data.as_array()) ids.push_back(row["id"].as_string());
  return ids;
}

std::int64_t audit_rows(test::Project& p) {
  Envelope log = must(p.query("system", "log", R"({"limit":500})"));
  return static_cast<std::int64_t>(log.data.size());
}

std::string begin_plan(test::Project& p, std::string_view params) {
  Envelope begun = must(p.mutate("plan", "begin", params));
  return begun.data["plan"].as_string();
}

}  // namespace

TEST_CASE("a builder of an error moved into itself keeps its message", "[plan][error]") {
  Error error(ErrorCode::NotFound, "Task T009 not found");
  error = std::move(error).with_detail("id", "T009");
  CHECK(error.message == "Task T009 not found");
  CHECK(error.details["id"] == json::Value("T009"));
  error = std::move(error).with_fix("look again").with_choices("tsks", {"tasks"});
  CHECK(error.message.starts_with("Task T009 not found"));
  CHECK(error.details["didYouMean"] == json::Value("tasks"));
}

TEST_CASE("a bulk call that fails on a later task says why (its message is kept)", "[plan][bulk]") {
  test::Project p;
  p.add(R"({"title":"One"})");
  Envelope failed = p.mutate("tasks", "update", R"({"ids":["T001","T404"],"priority":"high"})");
  REQUIRE_FALSE(failed.success);
  CHECK(failed.error->message.find("T404") != std::string::npos);
  CHECK(failed.error->message.find("not found") != std::string::npos);
}

TEST_CASE("tasks.batch: placeholders, one audit row, undo takes it back whole", "[plan][batch]") {
  test::Project p;
  p.add(R"({"title":"Epic","type":"epic"})");
  const auto rows_before = audit_rows(p);
  Envelope ran = must(p.mutate("tasks", "batch", R"({"ops":[
      {"operation":"tasks.add","params":{"title":"Service API","parent":"T001"}},
      {"operation":"add","params":{"title":"User interface","parent":"T001","depends":["$1"]}},
      {"operation":"tasks.update","params":{"id":"$1","priority":"high"}},
      {"operation":"tasks.relate","params":{"id":"$2","target":"$1","type":"relates-to"}}]})"));
  const auto& results = ran.data["results"];
  REQUIRE(results.size() == 4);
  CHECK(at(results, 0)["id"] == json::Value("T002"));
  CHECK(at(results, 1)["id"] == json::Value("T003"));
  CHECK(at(results, 2)["op"] == json::Value(3));
  CHECK(at(results, 2)["id"] == json::Value("T002"));
  Envelope ui = must(p.query("tasks", "show", R"({"id":"T003"})"));
  CHECK(ui.data["depends"] == test::parse_json(R"(["T002"])"));
  CHECK(must(p.query("tasks", "show", R"({"id":"T002"})")).data["priority"] == json::Value("high"));
  // One row for the whole batch, naming what the placeholders became.
  CHECK(audit_rows(p) == rows_before + 1);
  Envelope log = must(p.query("system", "log", R"({"limit":1,"detail":"full"})"));
  CHECK(at(log.data, 0)["operation"] == json::Value("tasks.batch"));

  Envelope undone = must(p.mutate("tasks", "undo"));
  CHECK(undone.data["operation"] == json::Value("tasks.batch"));
  CHECK(list_ids(p) == std::vector<std::string>{"T001"});
}

TEST_CASE("a sessionless tasks.batch advises against it once, not once per op (issue 50)", "[plan][batch]") {
  test::Project p;
  p.write_config(R"({"session":{"enforcement":"advisory"}})");
  // Sessions are in use (another agent's): a write outside one is advised against, once.
  REQUIRE(p.mutate("session", "start", R"({"scope":"global","name":"someone else"})").success);
  p.set_session("");
  std::string ops = "[";
  for (int i = 1; i <= 8; ++i) ops += std::string(i > 1 ? "," : "") + R"({"operation":"tasks.add","params":{"title":"Task number )" + std::to_string(i) + R"("}})";
  ops += "]";
  Envelope ran = must(p.mutate("tasks", "batch", R"({"ops":)" + ops + "}"));
  REQUIRE_FALSE(ran.warnings.empty());
  std::size_t about_sessions = 0;
  for (const auto& warning : test::warnings_of(ran)) about_sessions += warning.find("no session") != std::string::npos ? 1 : 0;
  CHECK(about_sessions == 1);
}

TEST_CASE("tasks.batch is all or nothing; a dry run answers its changes and writes nothing", "[plan][batch]") {
  test::Project p;
  p.add(R"({"title":"Kept"})");
  Envelope failed = p.mutate("tasks", "batch", R"({"ops":[
      {"operation":"tasks.add","params":{"title":"Made then taken back"}},
      {"operation":"tasks.update","params":{"id":"T001","title":"Changed then taken back"}},
      {"operation":"tasks.add","params":{"title":"Orphan","parent":"T999"}}]})");
  REQUIRE_FALSE(failed.success);
  CHECK(code_of(failed) == ErrorCode::ParentNotFound);
  CHECK(failed.error->details["op"] == json::Value(3));
  CHECK(failed.error->message.find("op 3 (tasks.add)") == 0);
  CHECK(failed.error->message.find("nothing was changed") != std::string::npos);
  CHECK(list_ids(p) == std::vector<std::string>{"T001"});
  CHECK(must(p.query("tasks", "show", R"({"id":"T001"})")).data["title"] == json::Value("Kept"));

  const auto rows_before = audit_rows(p);
  Envelope dry = must(p.mutate("tasks", "batch", R"({"dryRun":true,"ops":[
      {"operation":"tasks.add","params":{"title":"Would be"}},
      {"operation":"tasks.update","params":{"id":"T001","priority":"critical"}}]})"));
  CHECK(dry.data["results"].size() == 2);
  REQUIRE(dry.data["changes"].is_array());
  bool saw_priority = false;
  for (const auto& change : dry.data["changes"].as_array())
    saw_priority = saw_priority || (change["id"] == json::Value("T001") && change["field"] == json::Value("priority"));
  CHECK(saw_priority);
  CHECK(list_ids(p) == std::vector<std::string>{"T001"});
  CHECK(audit_rows(p) == rows_before);
}

TEST_CASE("tasks.batch refuses what it cannot run, naming the op", "[plan][batch]") {
  test::Project p;
  p.add(R"({"title":"One"})");
  Envelope unknown = p.mutate("tasks", "batch", R"({"ops":[{"operation":"tasks.ad","params":{"title":"Extra task"}}]})");
  CHECK(code_of(unknown) == ErrorCode::InvalidParams);
  CHECK(unknown.error->details["didYouMean"] == json::Value("tasks.add"));
  CHECK(unknown.error->details["op"] == json::Value(1));
  Envelope claim = p.mutate("tasks", "batch", R"({"ops":[{"operation":"tasks.start","params":{"id":"T001"}}]})");
  CHECK(code_of(claim) == ErrorCode::InvalidParams);
  Envelope ahead = p.mutate("tasks", "batch", R"({"ops":[{"operation":"tasks.update","params":{"id":"$2","title":"Extra task"}},
      {"operation":"tasks.add","params":{"title":"Other task"}}]})");
  CHECK(code_of(ahead) == ErrorCode::InvalidParams);
  CHECK(ahead.error->message.find("later") != std::string::npos);
  Envelope bulk = p.mutate("tasks", "batch", R"({"ops":[{"operation":"tasks.update","params":{"ids":["T001"],"title":"Extra task"}}]})");
  CHECK(code_of(bulk) == ErrorCode::InvalidParams);
  Envelope shape = p.mutate("tasks", "batch", R"({"ops":[{"op":"tasks.add"}]})");
  CHECK(code_of(shape) == ErrorCode::InvalidParams);
  Envelope empty = p.mutate("tasks", "batch", R"({"ops":[]})");
  CHECK(code_of(empty) == ErrorCode::InvalidParams);
  std::string many = R"({"ops":[)";
  for (int i = 0; i < 501; ++i) many += std::string(i ? "," : "") + R"({"operation":"tasks.add","params":{"title":"Many task"}})";
  many += "]}";
  Envelope too_many = p.mutate("tasks", "batch", many);
  CHECK(code_of(too_many) == ErrorCode::Validation);
  CHECK(too_many.error->details["max"] == json::Value(500));
  // An op that checks its task before the transaction cannot name one the batch makes.
  Envelope checked = p.mutate("tasks", "batch", R"({"ops":[{"operation":"tasks.add","params":{"title":"New"}},
      {"operation":"tasks.complete","params":{"id":"$1"}}]})");
  CHECK(code_of(checked) == ErrorCode::InvalidParams);
  CHECK(list_ids(p) == std::vector<std::string>{"T001"});
  // Completing an existing task inside a batch runs its checks first.
  Envelope done = must(p.mutate("tasks", "batch", R"({"ops":[{"operation":"tasks.add","params":{"title":"Next"}},
      {"operation":"tasks.complete","params":{"id":"T001"}}]})"));
  CHECK(must(p.query("tasks", "show", R"({"id":"T001"})")).data["status"] == json::Value("done"));
}

TEST_CASE("an op approval.required names refuses an agent's batch", "[plan][batch][approval]") {
  test::Project p;
  p.add(R"({"title":"Guarded"})");
  Envelope set = p.mutate_as_person("system", "config.set", R"({"key":"approval.required","value":"[\"tasks.delete\"]"})");
  INFO(to_json(set, McpAdvice(registry())));
  REQUIRE(set.success);
  Envelope refused = p.mutate("tasks", "batch", R"({"ops":[{"operation":"tasks.add","params":{"title":"Extra task"}},
      {"operation":"tasks.delete","params":{"id":"T001"}}]})");
  CHECK(code_of(refused) == ErrorCode::MutationDisabled);
  CHECK(refused.error->details["rule"] == json::Value("tasks.delete"));
  CHECK(list_ids(p) == std::vector<std::string>{"T001"});
}

TEST_CASE("plans: staged apart, compared, committed at once, undone whole", "[plan]") {
  test::Project p;
  p.add(R"({"title":"Epic","type":"epic"})");
  p.add(R"({"title":"Existing step","parent":"T001"})");
  const std::string a = begin_plan(p, R"({"label":"by layer","epicId":"T001"})");
  CHECK(a == "PL001");
  Envelope applied = must(p.mutate("plan", "apply", R"({"plan":"PL001","ops":[
      {"operation":"tasks.add","params":{"title":"Schema","parent":"T001"}},
      {"operation":"tasks.add","params":{"title":"Service API","parent":"T001","depends":["$1"]}}]})"));
  CHECK(applied.data["ops"] == json::Value(2));
  CHECK(applied.data["from"] == json::Value(1));
  applied = must(p.mutate("plan", "apply", R"({"plan":"PL001","ops":[
      {"operation":"tasks.add","params":{"title":"User interface","parent":"T001","depends":["$2"]}},
      {"operation":"tasks.update","params":{"id":"T002","depends":["$3"]}}]})"));
  CHECK(applied.data["from"] == json::Value(3));
  // Nothing is visible to others yet.
  CHECK(list_ids(p) == std::vector<std::string>{"T001", "T002"});

  const std::string b = begin_plan(p, R"({"label":"one task","epicId":"T001"})");
  must(p.mutate("plan", "apply", R"({"plan":"PL002","ops":[{"operation":"tasks.add","params":{"title":"Everything","parent":"T001"}}]})"));

  Envelope diff = must(p.query("plan", "diff", R"({"plans":["PL001","PL002"]})"));
  REQUIRE(diff.data.size() == 2);
  const auto& first = at(diff.data, 0);
  CHECK(first["adds"] == json::Value(3));
  CHECK(first["changes"] == json::Value(1));
  CHECK(first["before"]["waves"] == json::Value(1));
  CHECK(first["after"]["waves"] == json::Value(4));  // $1 → $2 → $3 → T002
  CHECK(first["after"]["critical"] == test::parse_json(R"(["$1","$2","$3","T002"])"));
  CHECK(first["after"]["next"] == json::Value("$1"));
  CHECK(first["before"]["next"] == json::Value("T002"));
  CHECK(at(diff.data, 1)["after"]["parallelism"] == json::Value(2));
  CHECK_FALSE(first.contains("added"));
  Envelope full = must(p.query("plan", "diff", R"({"plans":["PL001"],"detail":"full"})"));
  REQUIRE(at(full.data, 0)["added"].size() == 3);
  CHECK(at(at(full.data, 0)["added"], 1)["depends"] == test::parse_json(R"(["$1"])"));
  CHECK(at(at(full.data, 0)["after"]["waveIds"], 0) == test::parse_json(R"(["$1"])"));
  // The diff took everything back.
  CHECK(list_ids(p) == std::vector<std::string>{"T001", "T002"});

  const auto rows_before = audit_rows(p);
  Envelope committed = must(p.mutate("plan", "commit", R"({"plan":"PL001","reason":"layers it is"})"));
  CHECK(committed.data["ids"] == test::parse_json(R"(["T003","T004","T005","T002"])"));
  CHECK(must(p.query("tasks", "show", R"({"id":"T002"})")).data["depends"] == test::parse_json(R"(["T005"])"));
  CHECK(audit_rows(p) == rows_before + 1);
  Envelope again = p.mutate("plan", "commit", R"({"plan":"PL001"})");
  CHECK(code_of(again) == ErrorCode::Validation);
  CHECK(again.error->details["status"] == json::Value("committed"));

  // The other plan rests on the epic's subtree, which moved: refused, listing what moved.
  Envelope refused = p.mutate("plan", "commit", R"({"plan":"PL002"})");
  REQUIRE_FALSE(refused.success);
  CHECK(code_of(refused) == ErrorCode::ConcurrentModification);
  CHECK(refused.error->details["moved"].size() == 4);  // three added, T002 changed
  CHECK(to_json(refused, McpAdvice(registry())).find("operation:'rebase'") != std::string::npos);
  Envelope rebased = must(p.mutate("plan", "rebase", R"({"plan":"PL002"})"));
  CHECK(rebased.data["moved"].size() == 4);
  CHECK(p.mutate("plan", "rebase", R"({"plan":"PL002"})").note == ErrorCode::NoChange);
  must(p.mutate("plan", "commit", R"({"plan":"PL002"})"));
  CHECK(list_ids(p).size() == 6);

  // Undo takes the last plan back whole, then the first.
  must(p.mutate("tasks", "undo"));
  CHECK(list_ids(p).size() == 5);
  Envelope undone = must(p.mutate("tasks", "undo"));
  CHECK(undone.data["operation"] == json::Value("plan.commit"));
  CHECK(list_ids(p) == std::vector<std::string>{"T001", "T002"});
  CHECK(must(p.query("tasks", "show", R"({"id":"T002"})")).data["depends"].empty());
  // Both plans are open again: each may be rebased and committed anew.
  CHECK(must(p.query("plan", "list")).data.size() == 2);
  REQUIRE_FALSE(undone.warnings.empty());
  (void)b;
}

TEST_CASE("plans: what does not apply is not staged; conflicts rebase cannot take in", "[plan]") {
  test::Project p;
  p.add(R"({"title":"Shared"})");
  const std::string id = begin_plan(p, R"({"label":"retitle"})");
  Envelope bad = p.mutate("plan", "apply", R"({"plan":"PL001","ops":[{"operation":"tasks.add","params":{"title":"Extra task"}},
      {"operation":"tasks.update","params":{"id":"T404","title":"Other task"}}]})");
  CHECK(code_of(bad) == ErrorCode::NotFound);
  CHECK(bad.error->details["op"] == json::Value(2));
  CHECK(bad.error->message.find("nothing was staged") != std::string::npos);
  CHECK(at(must(p.query("plan", "list")).data, 0)["ops"] == json::Value(0));
  Envelope evidence = p.mutate("plan", "apply", R"({"plan":"PL001","ops":[{"operation":"tasks.complete","params":{"id":"T001"}}]})");
  CHECK(code_of(evidence) == ErrorCode::InvalidParams);
  Envelope empty_commit = p.mutate("plan", "commit", R"({"plan":"PL001"})");
  CHECK(code_of(empty_commit) == ErrorCode::Validation);

  must(p.mutate("plan", "apply", R"({"plan":"PL001","ops":[{"operation":"tasks.update","params":{"id":"T001","title":"Plan's title"}}]})"));
  must(p.mutate("tasks", "update", R"({"id":"T001","title":"Someone else's title"})"));
  Envelope conflict = p.mutate("plan", "rebase", R"({"plan":"PL001"})");
  CHECK(code_of(conflict) == ErrorCode::ConcurrentModification);
  CHECK(conflict.error->details["conflicts"].as_array().front()["field"] == json::Value("title"));
  Envelope forced = must(p.mutate("plan", "rebase", R"({"plan":"PL001","force":true})"));
  REQUIRE_FALSE(forced.warnings.empty());
  must(p.mutate("plan", "commit", R"({"plan":"PL001"})"));
  CHECK(must(p.query("tasks", "show", R"({"id":"T001"})")).data["title"] == json::Value("Plan's title"));

  CHECK(code_of(p.mutate("plan", "apply", R"({"plan":"PL404","ops":[{"operation":"tasks.add","params":{"title":"Extra task"}}]})")) ==
        ErrorCode::NotFound);
  const std::string other = begin_plan(p, R"({"label":"dropped"})");
  must(p.mutate("plan", "discard", R"({"plan":"PL002","why":"not needed"})"));
  CHECK(p.mutate("plan", "discard", R"({"plan":"PL002"})").note == ErrorCode::NoChange);
  CHECK(code_of(p.mutate("plan", "apply", R"({"plan":"PL002","ops":[{"operation":"tasks.add","params":{"title":"Extra task"}}]})")) ==
        ErrorCode::Validation);
  CHECK(p.query("plan", "list").note == ErrorCode::NoData);
  Envelope all = must(p.query("plan", "list", R"({"status":"all"})"));
  REQUIRE(all.data.size() == 2);
  CHECK(at(all.data, 0)["status"] == json::Value("discarded"));
  CHECK(at(all.data, 1)["status"] == json::Value("committed"));
  Envelope shown = must(p.query("plan", "diff", R"({"plans":["PL002"]})"));
  CHECK(at(shown.data, 0)["outcome"]["reason"] == json::Value("not needed"));
  (void)id;
  (void)other;
}

// --- issue 50: one limit per concept, placeholders in task ids only, conflicts per field ---------

namespace {

/// `count` ops of tasks.add, each a task of its own, as a JSON array's items.
std::string many_adds(int count, std::string_view prefix) {
  std::string ops;
  for (int i = 0; i < count; ++i)
    ops += std::string(i ? "," : "") + R"({"operation":"tasks.add","params":{"title":")" + std::string(prefix) + " " +
           std::to_string(i + 1) + R"("}})";
  return ops;
}

/// Stored plan `number`'s column `column` set behind the store's back (a plan staged by an older ct,
/// which kept no watermark: schema v17's `since` is cleared with it).
void set_plan_column(test::Project& p, int number, std::string_view column, std::string_view json) {
  test::run_sql(p.dir() / ".cleo" / "tasks.db", "UPDATE plans SET " + std::string(column) + " = '" + std::string(json) +
                                                    "', since = NULL WHERE num = " + std::to_string(number));
}

}  // namespace

TEST_CASE("issue 50: a plan of more ops than one call sends is diffed, extended, rebased and committed",
          "[plan][issue50]") {
  test::Project p;
  p.add(R"({"title":"Existing work"})");
  begin_plan(p, R"({"label":"a big decomposition"})");
  must(p.mutate("plan", "apply", R"({"plan":"PL001","ops":[)" + many_adds(500, "Step") + "]}"));
  Envelope grown = must(p.mutate("plan", "apply", R"({"plan":"PL001","ops":[)" + many_adds(100, "More") + "]}"));
  CHECK(grown.data["ops"] == json::Value(600));
  // Read back under the plan's own limit, not a call's: every operation on it still works.
  Envelope diff = must(p.query("plan", "diff", R"({"plans":["PL001"]})"));
  CHECK_FALSE(at(diff.data, 0).contains("error"));
  CHECK(at(diff.data, 0)["adds"] == json::Value(600));
  Envelope more = must(p.mutate("plan", "apply", R"({"plan":"PL001","ops":[{"operation":"tasks.update","params":{"id":"$600","priority":"high"}}]})"));
  CHECK(more.data["ops"] == json::Value(601));
  CHECK(p.mutate("plan", "rebase", R"({"plan":"PL001"})").note == ErrorCode::NoChange);
  Envelope committed = must(p.mutate("plan", "commit", R"({"plan":"PL001"})"));
  REQUIRE(committed.data["ids"].size() == 601);
  CHECK(must(p.query("tasks", "show", R"({"id":"T601"})")).data["priority"] == json::Value("high"));
  // The plan's limit is checked where it is built: 2000 ops, each call at most 500.
  begin_plan(p, R"({"label":"too big"})");
  for (int call = 0; call < 4; ++call)
    must(p.mutate("plan", "apply", R"({"plan":"PL002","ops":[)" + many_adds(500, "Bulk") + "]}"));
  Envelope over = p.mutate("plan", "apply", R"({"plan":"PL002","ops":[)" + many_adds(1, "Extra") + "]}");
  CHECK(code_of(over) == ErrorCode::Validation);
  CHECK(over.error->details["max"] == json::Value(2000));
  Envelope call_over = p.mutate("plan", "apply", R"({"plan":"PL002","ops":[)" + many_adds(501, "Extra") + "]}");
  CHECK(code_of(call_over) == ErrorCode::Validation);
  CHECK(call_over.error->details["max"] == json::Value(500));
}

TEST_CASE("issue 50: a plan that cannot be read answers why — rebase never calls it unchanged", "[plan][issue50]") {
  test::Project p;
  p.add(R"({"title":"Existing work"})");
  begin_plan(p, R"({"label":"stale"})");
  must(p.mutate("plan", "apply", R"({"plan":"PL001","ops":[{"operation":"tasks.update","params":{"id":"T001","priority":"high"}}]})"));
  // A plan holding an op this ct does not batch (as an older or newer ct might have left it).
  set_plan_column(p, 1, "ops", R"([{"operation":"tasks.start","params":{"id":"T001"}}])");
  Envelope rebased = p.mutate("plan", "rebase", R"({"plan":"PL001"})");
  REQUIRE_FALSE(rebased.success);
  CHECK(code_of(rebased) == ErrorCode::InvalidParams);
  CHECK(rebased.error->message.find("PL001 cannot be read") == 0);
  CHECK(rebased.error->details["op"] == json::Value(1));
  CHECK(code_of(p.mutate("plan", "commit", R"({"plan":"PL001"})")) == ErrorCode::InvalidParams);
  // diff shows it with why, beside the others.
  Envelope diff = must(p.query("plan", "diff", R"({"plans":["PL001"]})"));
  CHECK(at(diff.data, 0)["error"]["code"] == json::Value("E_INVALID_PARAMS"));
}

TEST_CASE("issue 50: \"$N\" is a placeholder only in a task id param; anywhere else it is the text itself",
          "[plan][batch][issue50]") {
  test::Project p;
  Envelope ran = must(p.mutate("tasks", "batch", R"({"ops":[
      {"operation":"tasks.add","params":{"title":"Price list"}},
      {"operation":"tasks.add","params":{"title":"Invoice","description":"$1","acceptance":["$1","costs $2"],
                                         "depends":["$1"],"notes":"$3"}},
      {"operation":"tasks.update","params":{"taskId":"$2","notes":"$2"}}]})"));
  const json::Value invoice = must(p.query("tasks", "show", R"({"id":"T002"})")).data;
  CHECK(invoice["description"] == json::Value("$1"));
  CHECK(invoice["acceptance"] == test::parse_json(R"(["$1","costs $2"])"));
  CHECK(invoice["depends"] == test::parse_json(R"(["T001"])"));
  REQUIRE(invoice["notes"].size() == 2);
  CHECK(invoice["notes"].as_array()[0]["text"] == json::Value("$3"));  // names no op: still not an error
  CHECK(invoice["notes"].as_array()[1]["text"] == json::Value("$2"));
  CHECK(at(ran.data["results"], 2)["id"] == json::Value("T002"));  // taskId, the original's name of id
  // The audit row says what each placeholder became: only the ones that were placeholders.
  Envelope log = must(p.query("system", "log", R"({"limit":1,"detail":"full"})"));
  CHECK(at(log.data, 0)["params"]["placeholders"] == test::parse_json(R"({"$1":"T001","$2":"T002"})"));

  // A plan stages and commits the same way.
  begin_plan(p, R"({"label":"literal text"})");
  must(p.mutate("plan", "apply", R"({"plan":"PL001","ops":[{"operation":"tasks.add","params":{"title":"Budget"}},
      {"operation":"tasks.update","params":{"id":"T001","notes":"$1","depends":["$1"]}}]})"));
  must(p.mutate("plan", "commit", R"({"plan":"PL001"})"));
  const json::Value price = must(p.query("tasks", "show", R"({"id":"T001"})")).data;
  CHECK(price["notes"].as_array().back()["text"] == json::Value("$1"));
  CHECK(price["depends"] == test::parse_json(R"(["T003"])"));
}

TEST_CASE("issue 50: plan conflicts are per field — another field's change is taken in, not overwritten",
          "[plan][issue50]") {
  test::Project p;
  p.add(R"({"title":"Shared","priority":"medium","labels":["one"]})");
  begin_plan(p, R"({"label":"priorities"})");
  must(p.mutate("plan", "apply", R"({"plan":"PL001","ops":[
      {"operation":"tasks.update","params":{"id":"T001","priority":"high","notes":"the plan's note","labels":["two"]}}]})"));
  // Another agent changes the title, adds a note and a label of its own.
  must(p.mutate("tasks", "update", R"({"id":"T001","title":"Someone else's title","notes":"their note","labels":["three"]})"));
  CHECK(code_of(p.mutate("plan", "commit", R"({"plan":"PL001"})")) == ErrorCode::ConcurrentModification);
  Envelope rebased = must(p.mutate("plan", "rebase", R"({"plan":"PL001"})"));
  CHECK(rebased.warnings.empty());
  CHECK_FALSE(rebased.data.contains("overwrites"));
  must(p.mutate("plan", "commit", R"({"plan":"PL001"})"));
  const json::Value task = must(p.query("tasks", "show", R"({"id":"T001"})")).data;
  CHECK(task["title"] == json::Value("Someone else's title"));
  CHECK(task["priority"] == json::Value("high"));
  CHECK(task["labels"] == test::parse_json(R"(["one","three","two"])"));
  std::vector<std::string> notes;
  for (const auto& note : task["notes"].as_array()) notes.push_back(note["text"].as_string());
  CHECK(notes == std::vector<std::string>{"their note", "the plan's note"});
}

TEST_CASE("issue 50: a field both changed is a conflict with base, ours and theirs; force overwrites exactly it",
          "[plan][issue50]") {
  test::Project p;
  p.add(R"({"title":"Shared","priority":"medium"})");
  begin_plan(p, R"({"label":"retitle"})");
  must(p.mutate("plan", "apply", R"({"plan":"PL001","ops":[{"operation":"tasks.update","params":{"id":"T001","title":"Plan's title"}}]})"));
  must(p.mutate("tasks", "update", R"({"id":"T001","title":"Someone else's title","priority":"low"})"));
  Envelope conflict = p.mutate("plan", "rebase", R"({"plan":"PL001"})");
  REQUIRE_FALSE(conflict.success);
  CHECK(code_of(conflict) == ErrorCode::ConcurrentModification);
  CHECK(conflict.error->details["conflicts"] == test::parse_json(R"([{"path":"T001.title","id":"T001","field":"title","base":"Shared",
      "ours":"Plan's title","theirs":"Someone else's title"}])"));
  CHECK(conflict.error->message.find("T001.title") != std::string::npos);
  CHECK(conflict.error->message.find("priority") == std::string::npos);
  Envelope forced = must(p.mutate("plan", "rebase", R"({"plan":"PL001","force":true})"));
  REQUIRE(forced.warnings.size() == 1);
  CHECK(test::warnings_of(forced).front() == "forced: T001.title 'Someone else's title' overwritten with 'Plan's title'");
  CHECK(forced.data["overwrites"].size() == 1);
  must(p.mutate("plan", "commit", R"({"plan":"PL001"})"));
  const json::Value task = must(p.query("tasks", "show", R"({"id":"T001"})")).data;
  CHECK(task["title"] == json::Value("Plan's title"));
  CHECK(task["priority"] == json::Value("low"));  // theirs: the plan never changed it, and force did not either
}

TEST_CASE("issue 50: a plan staged before per-field bases is still read, rebased and committed", "[plan][issue50]") {
  test::Project p;
  p.add(R"({"title":"Shared","priority":"medium"})");
  p.add(R"({"title":"Untouched"})");
  begin_plan(p, R"({"label":"old plan"})");
  must(p.mutate("plan", "apply", R"({"plan":"PL001","ops":[{"operation":"tasks.update","params":{"id":"T001","priority":"high"}}]})"));
  // The base an older ct stored: the versions of the tasks now and the ids its ops change, no fields.
  auto store_legacy_base = [&] {
    json::Value versions = json::Value::object();
    for (std::string id : {"T001", "T002"})
      versions.set(id, must(p.query("tasks", "show", R"({"id":")" + id + R"("})")).data["version"]);
    json::Value base = json::Value::object();
    base.set("versions", std::move(versions));
    base.set("changes", test::parse_json(R"(["T001"])"));
    set_plan_column(p, 1, "base", base.dump());
  };
  store_legacy_base();
  must(p.mutate("tasks", "update", R"({"id":"T002","priority":"low"})"));  // moved, but the plan does not change it
  Envelope taken_in = must(p.mutate("plan", "rebase", R"({"plan":"PL001"})"));
  CHECK(taken_in.data["moved"].size() == 1);
  // Its own task moved: nothing tells which field, so each field the plan changes there is named.
  store_legacy_base();
  must(p.mutate("tasks", "update", R"({"id":"T001","title":"Someone else's title"})"));
  Envelope conflict = p.mutate("plan", "rebase", R"({"plan":"PL001"})");
  REQUIRE_FALSE(conflict.success);
  CHECK(code_of(conflict) == ErrorCode::ConcurrentModification);
  const json::Value& first = conflict.error->details["conflicts"].as_array().front();
  CHECK(first["id"] == json::Value("T001"));
  CHECK(first["field"] == json::Value("priority"));
  CHECK_FALSE(first.contains("base"));
  CHECK(conflict.error->message.find("a field without a base") != std::string::npos);
  must(p.mutate("plan", "rebase", R"({"plan":"PL001","force":true})"));
  must(p.mutate("plan", "commit", R"({"plan":"PL001"})"));
  const json::Value task = must(p.query("tasks", "show", R"({"id":"T001"})")).data;
  CHECK(task["priority"] == json::Value("high"));
  CHECK(task["title"] == json::Value("Someone else's title"));
}

namespace {

/// `value` with each "$N" a plan's diff names a task it makes by spelled as the task its commit made.
json::Value committed_names(const json::Value& value, const json::Value& ids) {
  if (value.is_string() && value.as_string().starts_with("$"))
    return at(ids, static_cast<std::size_t>(std::stoi(value.as_string().substr(1)) - 1));
  if (value.is_array()) {
    json::Value out = json::Value::array();
    for (const auto& item : value.as_array()) out.push_back(committed_names(item, ids));
    return out;
  }
  if (value.is_object()) {
    json::Value out = json::Value::object();
    for (const auto& [key, item] : value.as_object()) out.set(key, committed_names(item, ids));
    return out;
  }
  return value;
}

/// Stages `ops` in a plan on `epic` (none: the whole project), takes its diff's graph after, commits
/// it, and checks that graph is the one a fresh read of the store then gives (the next plan's
/// before; and that plan, of no ops, leaves it as it is).
void check_diff_after_is_commit(test::Project& p, const std::string& epic, const std::string& ops) {
  const std::string begin = epic.empty() ? R"({"label":"staged"})" : R"({"label":"staged","epicId":")" + epic + R"("})";
  const std::string plan = begin_plan(p, begin);
  must(p.mutate("plan", "apply", R"({"plan":")" + plan + R"(","ops":)" + ops + "}"));
  Envelope diff = must(p.query("plan", "diff", R"({"plans":[")" + plan + R"("],"detail":"full"})"));
  const json::Value after = at(diff.data, 0)["after"];
  Envelope committed = must(p.mutate("plan", "commit", R"({"plan":")" + plan + R"("})"));
  const std::string fresh = begin_plan(p, begin);
  Envelope read = must(p.query("plan", "diff", R"({"plans":[")" + fresh + R"("],"detail":"full"})"));
  const json::Value now = at(read.data, 0)["before"];
  INFO("staged: " << after.dump() << "\nread:   " << now.dump());
  CHECK(committed_names(after, committed.data["ids"]) == now);
  CHECK(at(read.data, 0)["after"] == now);
  must(p.mutate("plan", "discard", R"({"plan":")" + fresh + R"("})"));
}

}  // namespace

TEST_CASE("issue 56: plan.diff's graph after is the graph its commit leaves, the touched tasks read again",
          "[plan][issue56]") {
  test::Project p;
  p.add(R"({"title":"Epic","type":"epic"})");                               // T001
  p.add(R"({"title":"Schema","parent":"T001"})");                           // T002
  p.add(R"({"title":"Service","parent":"T001","depends":["T002"]})");       // T003
  p.add(R"({"title":"Service part","parent":"T003"})");                     // T004
  p.add(R"({"title":"Interface","parent":"T001","depends":["T003"]})");     // T005
  p.add(R"({"title":"Elsewhere"})");                                        // T006
  p.add(R"({"title":"Other epic","type":"epic"})");                         // T007
  p.add(R"({"title":"Other step","parent":"T007"})");                       // T008

  SECTION("adds nested under new tasks, dependencies on the subtree and outside it, updates, statuses, reorders") {
    check_diff_after_is_commit(p, "T001", R"([
        {"operation":"tasks.add","params":{"title":"Storage","parent":"T001","depends":["T002"]}},
        {"operation":"tasks.add","params":{"title":"Storage part","parent":"$1","depends":["T006"]}},
        {"operation":"tasks.update","params":{"id":"T005","depends":["$2"],"priority":"high"}},
        {"operation":"tasks.reorder","params":{"id":"T005","position":1}},
        {"operation":"tasks.update","params":{"id":"T002","status":"blocked","blockedBy":"a review"}},
        {"operation":"tasks.update","params":{"id":"T006","status":"active"}},
        {"operation":"tasks.add","params":{"title":"Last","parent":"T003"}}])");
    // Again on the store that commit left: a task moved within the subtree, one moved in, one deleted.
    check_diff_after_is_commit(p, "T001", R"([
        {"operation":"tasks.reparent","params":{"id":"T005","parent":"T003"}},
        {"operation":"tasks.reparent","params":{"id":"T008","parent":"T001"}}])");
    check_diff_after_is_commit(p, "T001", R"([{"operation":"tasks.delete","params":{"id":"T004"}}])");
    check_diff_after_is_commit(p, "T001", R"([{"operation":"tasks.reparent","params":{"id":"T005","parent":"T007"}}])");
  }
  SECTION("the whole project, when the plan names no epic") {
    check_diff_after_is_commit(p, "", R"([
        {"operation":"tasks.add","params":{"title":"Root","depends":["T006"]}},
        {"operation":"tasks.add","params":{"title":"Under it","parent":"$1"}},
        {"operation":"tasks.reparent","params":{"id":"T008","parent":"T001"}},
        {"operation":"tasks.delete","params":{"id":"T004"}},
        {"operation":"tasks.reorder","params":{"id":"T007","position":1}}])");
  }
}

// --- issue 56: plan.begin rests on a watermark of the audit trail, not a copy of its epic ---------

namespace {

/// What an older ct stored at plan.begin: the version of every task of the epic's subtree (the epic
/// with it), read from the store now.
json::Value subtree_snapshot(test::Project& p, const std::string& epic) {
  auto store = project_store(ct::Project{p.dir()})->open(StoreOptions{});
  REQUIRE(store);
  REQUIRE((*store)->begin(TxKind::Read));
  json::Value versions = json::Value::object();
  auto root = (*store)->get_task(epic);
  REQUIRE(root);
  REQUIRE(*root);
  versions.set(epic, (**root).version);
  auto below = (*store)->subtree_versions(epic);
  REQUIRE(below);
  for (const auto& task : *below) versions.set(task.id, task.version);
  (*store)->rollback();
  return versions;
}

/// Plan `id` as the store holds it.
Plan stored_plan(test::Project& p, const std::string& id) {
  auto store = project_store(ct::Project{p.dir()})->open(StoreOptions{});
  REQUIRE(store);
  REQUIRE((*store)->begin(TxKind::Read));
  auto plan = (*store)->get_plan(id);
  (*store)->rollback();
  REQUIRE(plan);
  REQUIRE(*plan);
  return **plan;
}

/// plan.diff's `moved` of `plan` ([] when nothing moved).
json::Value moved_of(test::Project& p, const std::string& plan) {
  Envelope diff = must(p.query("plan", "diff", R"({"plans":[")" + plan + R"("]})"));
  const json::Value& row = at(diff.data, 0);
  return row.contains("moved") ? row["moved"] : json::Value::array();
}

}  // namespace

TEST_CASE("issue 56: plan.begin reads no subtree; what moved since its watermark is what its snapshot says",
          "[plan][issue56]") {
  test::Project p;
  p.add(R"({"title":"Epic","type":"epic"})");                // T001
  p.add(R"({"title":"Other epic","type":"epic"})");          // T002
  p.add(R"({"title":"Step one","parent":"T001"})");          // T003
  p.add(R"({"title":"Step two","parent":"T001"})");          // T004
  p.add(R"({"title":"Step two part","parent":"T004"})");     // T005
  p.add(R"({"title":"Step three","parent":"T001"})");        // T006
  p.add(R"({"title":"Other step","parent":"T002"})");        // T007
  p.add(R"({"title":"Other step part","parent":"T007"})");   // T008
  p.add(R"({"title":"Loose task"})");                        // T009
  const std::string ops = R"({"ops":[{"operation":"tasks.update","params":{"id":"T009","priority":"high"}},
      {"operation":"tasks.update","params":{"id":"T003","priority":"low"}}]})";
  const std::string snapshot = subtree_snapshot(p, "T001").dump();
  // A: this ct's plan, on the watermark. B: the same plan as an older ct kept it, on a snapshot.
  const std::string a = begin_plan(p, R"({"label":"watermark","epicId":"T001"})");
  const std::string b = begin_plan(p, R"({"label":"snapshot","epicId":"T001"})");
  CHECK(stored_plan(p, a).since.has_value());
  CHECK(stored_plan(p, a).base["versions"].empty());  // nothing of the subtree copied at begin
  for (const auto& plan : {a, b})
    must(p.mutate("plan", "apply", R"({"plan":")" + plan + "\"," + ops.substr(1)));
  {
    Plan staged = stored_plan(p, b);
    json::Value versions = test::parse_json(snapshot);
    for (const auto& [id, version] : staged.base["versions"].as_object())
      if (!versions.contains(id)) versions.set(id, version);
    json::Value base = staged.base;
    base.set("versions", std::move(versions));
    set_plan_column(p, 2, "base", base.dump());
  }
  CHECK_FALSE(stored_plan(p, b).since.has_value());
  CHECK(moved_of(p, a).empty());
  CHECK(moved_of(p, b).empty());

  SECTION("each kind of move, named") {
    must(p.mutate("tasks", "update", R"({"id":"T004","title":"Step two, renamed"})"));         // changed
    p.add(R"({"title":"Step four","parent":"T001"})");                                       // T010 added
    must(p.mutate("tasks", "reparent", R"({"id":"T007","parent":"T001"})"));                  // moved in, with T008
    must(p.mutate("tasks", "reparent", R"({"id":"T006","parent":"T002"})"));                  // moved out
    must(p.mutate("tasks", "delete", R"({"id":"T005","hard":true,"force":true})"));           // gone
    must(p.mutate("tasks", "update", R"({"id":"T009","title":"Loose task, renamed"})"));      // named, changed
    must(p.mutate("tasks", "reorder", R"({"id":"T003","position":3})"));                      // siblings renumbered
    const json::Value moved = moved_of(p, a);
    CHECK(moved == moved_of(p, b));
    std::map<std::string, json::Value> by_id;
    for (const auto& row : moved.as_array()) by_id[row["id"].as_string()] = row;
    CHECK(by_id.at("T004")["now"].as_int() == by_id.at("T004")["was"].as_int() + 1);
    CHECK(by_id.at("T010")["was"].is_null());
    CHECK(by_id.at("T007")["was"].is_null());
    CHECK(by_id.at("T008")["was"].is_null());  // moved in with its parent, itself unchanged
    CHECK(by_id.at("T006")["now"].is_int());   // moved out: still there, at another version
    CHECK(by_id.at("T005")["now"].is_null());
    CHECK(by_id.at("T009")["was"].is_int());
    CHECK(by_id.contains("T003"));             // the reorder is its own change
    CHECK_FALSE(by_id.contains("T002"));
    // commit refuses naming the same; rebase takes them in and rests on a new watermark.
    Envelope refused = p.mutate("plan", "commit", R"({"plan":")" + a + R"("})");
    REQUIRE_FALSE(refused.success);
    CHECK(code_of(refused) == ErrorCode::ConcurrentModification);
    CHECK(refused.error->details["moved"] == moved);
    Envelope old_refused = p.mutate("plan", "commit", R"({"plan":")" + b + R"("})");
    CHECK(old_refused.error->details["moved"] == moved);
    Envelope rebased = must(p.mutate("plan", "rebase", R"({"plan":")" + b + R"(","force":true})"));
    CHECK(rebased.data["moved"] == moved);
    CHECK(stored_plan(p, b).since.has_value());  // the snapshot gave way to a watermark
    CHECK(moved_of(p, b).empty());
    must(p.mutate("plan", "commit", R"({"plan":")" + b + R"("})"));
  }

  SECTION("random writes, undos and restores: both forms answer the same after each") {
    std::mt19937 random(56);
    auto pick = [&](std::vector<std::string> from) { return from[random() % from.size()]; };
    int compared = 0, added = 0, gone = 0;
    for (int step = 0; step < 60; ++step) {
      std::vector<std::string> ids;
      for (int n = 3; n <= 9 + step; ++n) ids.push_back("T" + std::string(n < 10 ? "00" : n < 100 ? "0" : "") + std::to_string(n));
      const std::string id = pick(ids);
      const std::string parent = pick({"T001", "T002", "T003", "T004", "T007", ""});
      switch (random() % 9) {
        case 0: (void)p.mutate("tasks", "add", R"({"title":"Task of step )" + std::to_string(step) + R"(")" +
                                                     (parent.empty() ? "" : R"(,"parent":")" + parent + "\"") + "}"); break;
        case 1: (void)p.mutate("tasks", "update", R"({"id":")" + id + R"(","title":"Retitled at )" + std::to_string(step) + R"("})"); break;
        case 2: (void)p.mutate("tasks", "reparent", R"({"id":")" + id + R"(","parent":")" + parent + R"("})"); break;
        case 3: (void)p.mutate("tasks", "delete", R"({"id":")" + id + R"("})"); break;
        case 4: {  // among the tasks the plans began on, so that some they rest on go
          const std::string first = pick({"T003", "T005", "T006", "T008", "T009"});
          (void)p.mutate("tasks", "delete", R"({"id":")" + first + R"(","hard":true,"force":true})");
          break;
        }
        case 5: (void)p.mutate("tasks", "restore", R"({"id":")" + id + R"("})"); break;
        case 6: (void)p.mutate("tasks", "reorder", R"({"id":")" + id + R"(","position":1})"); break;
        case 7: (void)p.mutate("tasks", "undo"); break;
        default: (void)p.mutate("tasks", "update", R"({"id":")" + id + R"(","notes":["note at )" + std::to_string(step) + R"("]})"); break;
      }
      const json::Value moved = moved_of(p, a);
      INFO("step " << step << ": watermark " << moved.dump());
      CHECK(moved == moved_of(p, b));
      ++compared;
      for (const auto& row : moved.as_array()) {
        added += row["was"].is_null() ? 1 : 0;
        gone += row["now"].is_null() ? 1 : 0;
      }
    }
    CHECK(compared == 60);
    CHECK(added > 0);  // the run moved tasks in and out, not only versions
    CHECK(gone > 0);
  }
}

TEST_CASE("issue 56: system.gc keeps the audit rows an open plan rests on", "[plan][issue56][gc]") {
  test::Project p;
  p.add(R"({"title":"Epic","type":"epic"})");
  p.add(R"({"title":"Step one","parent":"T001"})");
  must(p.mutate_as_person("system", "config.set", R"({"key":"audit.retentionDays","value":7})"));
  const std::string plan = begin_plan(p, R"({"label":"held","epicId":"T001"})");
  must(p.mutate("plan", "apply", R"({"plan":")" + plan + R"(","ops":[{"operation":"tasks.add","params":{"title":"Step two","parent":"T001"}}]})"));
  must(p.mutate("tasks", "update", R"({"id":"T002","title":"Step one, renamed"})"));
  const std::int64_t since = *stored_plan(p, plan).since;
  // A month on, every row is past the retention: those after the plan's watermark stay.
  Router later(registry(), Workspace::open(p.dir()), RouterOptions{},
               std::make_unique<FixedClock>(*parse_iso8601("2026-02-01T00:00:00Z")));
  auto call = [&](Gateway gateway, std::string domain, std::string operation, std::string_view params = "{}") {
    return later.dispatch({gateway, std::move(domain), std::move(operation), test::parse_json(params)});
  };
  Envelope gc = must(call(Gateway::Mutate, "system", "gc"));
  CHECK(gc.data["audit"]["heldBy"] == json::Value(plan));
  CHECK(gc.data["audit"]["to"] == json::Value(since));
  Envelope refused = call(Gateway::Mutate, "plan", "commit", R"({"plan":")" + plan + R"("})");
  REQUIRE_FALSE(refused.success);
  CHECK(code_of(refused) == ErrorCode::ConcurrentModification);
  CHECK(refused.error->details["moved"].size() == 1);  // T002's change, still read
  must(call(Gateway::Mutate, "plan", "discard", R"({"plan":")" + plan + R"("})"));
  Envelope after = must(call(Gateway::Mutate, "system", "gc"));
  CHECK_FALSE(after.data["audit"].contains("heldBy"));
  CHECK(after.data["audit"]["rows"].as_int() > 0);
}
