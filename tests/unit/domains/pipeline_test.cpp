// The router's stages one at a time (domains/pipeline.h): each is a function of what the earlier
// ones produced, so it can be checked without a project or a whole dispatch.
#include <catch2/catch.hpp>

#include "gateway/mcp_syntax.h"
#include "domains/pipeline.h"
#include "engines/store/sqlite/sqlite_store.h"
#include "unit/test_support.h"

using namespace ct;
using ct::test::parse_json;

namespace {

OperationSpec mutation_spec() {
  OperationSpec spec;
  spec.domain = "demo";
  spec.name = "change";
  spec.gateway = Gateway::Mutate;
  spec.params = {ParamSpec{.name = "name", .type = ParamType::String, .required = true, .max = 8},
                 ParamSpec{.name = "dryRun", .type = ParamType::Bool, .default_json = "false", .dry_run = true}};
  return spec;
}

}  // namespace

TEST_CASE("route names the operation or says why not", "[pipeline]") {
  const Registry& registry = ct::registry();
  auto found = pipeline::route(registry, {Gateway::Query, "tasks", "show", json::Value()});
  REQUIRE(found);
  CHECK((*found)->full_name() == "tasks.show");
  auto alias = pipeline::route(registry, {Gateway::Query, "tasks", "view", json::Value()});
  REQUIRE_FALSE(alias);
  CHECK(alias.error().code == ErrorCode::InvalidOperation);
  CHECK(alias.error().details["didYouMean"].as_string() == "show");
  // The original CLEO's name runs (domains/original_names.h).
  auto original = pipeline::route(registry, {Gateway::Query, "tasks", "get", json::Value()});
  REQUIRE(original);
  CHECK((*original)->full_name() == "tasks.show");
  auto gateway = pipeline::route(registry, {Gateway::Mutate, "tasks", "show", json::Value()});
  REQUIRE_FALSE(gateway);
  CHECK(gateway.error().code == ErrorCode::InvalidGateway);
  auto domain = pipeline::route(registry, {Gateway::Query, "nope", "show", json::Value()});
  CHECK(domain.error().code == ErrorCode::InvalidDomain);
}

TEST_CASE("validate takes the common params out and marks dry runs from the spec", "[pipeline]") {
  OperationSpec spec = mutation_spec();
  auto call = pipeline::validate(spec, parse_json(R"({"name":"a","reason":"why","idempotencyKey":"k1","meta":true})"), false);
  REQUIRE(call);
  CHECK(call->common.reason == "why");
  CHECK(call->common.idempotency_key == "k1");
  CHECK(call->common.meta);
  CHECK(call->params_text == R"({"name":"a","dryRun":false})");
  CHECK_FALSE(call->dry_run);
  CHECK(call->writes());

  auto dry = pipeline::validate(spec, parse_json(R"({"name":"a","dryRun":true})"), false);
  REQUIRE(dry);
  CHECK(dry->dry_run);
  CHECK_FALSE(dry->writes());

  auto bad = pipeline::validate(spec, parse_json(R"({"name":"far too long"})"), false);
  REQUIRE_FALSE(bad);
  CHECK(bad.error().code == ErrorCode::Validation);
  auto bad_key = pipeline::validate(spec, parse_json(R"({"name":"a","idempotencyKey":""})"), false);
  CHECK(bad_key.error().code == ErrorCode::Validation);
}

TEST_CASE("read-only mode lets only dry runs of a mutation through", "[pipeline]") {
  OperationSpec spec = mutation_spec();
  auto refused = pipeline::validate(spec, parse_json(R"({"name":"a"})"), true);
  REQUIRE_FALSE(refused);
  CHECK(refused.error().code == ErrorCode::MutationDisabled);
  CHECK(mcp_text(refused.error().fix, registry()).find("dryRun: true") != std::string::npos);
  auto dry = pipeline::validate(spec, parse_json(R"({"name":"a","dryRun":true})"), true);
  REQUIRE(dry);
  CHECK(dry->read_only);
  CHECK_FALSE(dry->writes());
  OperationSpec no_dry_run = spec;
  no_dry_run.params.pop_back();
  CHECK(pipeline::validate(no_dry_run, parse_json(R"({"name":"a"})"), true).error().code == ErrorCode::MutationDisabled);
}

TEST_CASE("a transaction rolls back unless committed", "[pipeline]") {
  test::TempDir dir;
  SqliteOptions options;
  options.create = true;
  auto store = open_sqlite_store(dir.path() / "tasks.db", options);
  REQUIRE(store);
  Store& s = **store;
  auto count = [&] {
    REQUIRE(s.begin(TxKind::Read));
    auto rows = s.list_tasks(TaskQuery{});
    s.rollback();
    return rows ? rows->size() : std::size_t(999);
  };
  auto add = [&](std::string id) {
    Task task;
    task.id = id;
    task.title = "Task " + id;
    task.position = 1;
    task.created_at = task.updated_at = 1'700'000'000'000;
    return s.insert_task(task);
  };
  {
    REQUIRE(s.begin(TxKind::Write));
    pipeline::Transaction tx(&s);
    REQUIRE(add("T001"));
    CHECK(tx.open());
  }  // an early return: rolled back
  CHECK_FALSE(s.in_transaction());
  CHECK(count() == 0);
  {
    REQUIRE(s.begin(TxKind::Write));
    pipeline::Transaction tx(&s);
    REQUIRE(add("T002"));
    REQUIRE(tx.commit());
    CHECK_FALSE(tx.open());
    CHECK_FALSE(tx.commit());  // twice is a bug, answered as one
  }
  CHECK(count() == 1);
}

TEST_CASE("shape cuts list replies to the budget and keeps warnings in order", "[pipeline]") {
  const OperationSpec* list = ct::registry().find("tasks", "list");
  REQUIRE(list);
  auto call = pipeline::validate(*list, parse_json("{}"), false);
  REQUIRE(call);
  Reply reply;
  reply.data = json::Value::array();
  for (int i = 0; i < 200; ++i) {
    json::Value row = json::Value::object();
    row.set("id", "T" + std::to_string(1000 + i));
    row.set("title", std::string(60, 'x'));
    row.set("status", "pending");
    reply.data.push_back(std::move(row));
  }
  reply.warnings = {"first"};
  Envelope whole = pipeline::shape(*call, reply, {"second"}, -1, registry().agent_writer());
  CHECK(whole.data.as_array().size() == 200);
  CHECK(test::warnings_of(whole) == std::vector<std::string>{"first", "second"});
  Envelope cut = pipeline::shape(*call, reply, {}, 2000, registry().agent_writer());
  CHECK(cut.data.as_array().size() < 200);
  CHECK(cut.data.dump().size() <= 2000);
  REQUIRE(cut.page);
}
