// What a person types (issue 17): several ids and ranges, +label and -label, the `ct ready` and
// `ct blocked` views, and times that say how long ago.
#include <catch2/catch.hpp>

#include "cli/args.h"
#include "cli/command_tree.h"
#include "cli/render.h"
#include "core/json_parse.h"
#include "gateway/product.h"

namespace {

using ct::json::Value;
using ct::cli::InputSource;
using ct::cli::parse_operation_args;

const ct::OperationSpec& op(std::string_view domain, std::string_view name) {
  const ct::OperationSpec* spec = ct::registry().find(domain, name);
  REQUIRE(spec);
  return *spec;
}

Value parse(std::string_view domain, std::string_view name, const std::vector<std::string>& args) {
  auto parsed = parse_operation_args(op(domain, name), args, InputSource{});
  INFO((parsed ? std::string() : parsed.error().message));
  REQUIRE(parsed);
  return *parsed;
}

TEST_CASE("task id ranges expand in order and stay bounded", "[cli][people]") {
  using ct::cli::expand_task_ids;
  auto ids = [](std::string_view word) { return expand_task_ids(word).value().value(); };
  CHECK(ids("T3..T5") == std::vector<std::string>{"T003", "T004", "T005"});
  CHECK(ids("7..8") == std::vector<std::string>{"T007", "T008"});
  CHECK(ids("t12") == std::vector<std::string>{"T012"});
  CHECK_FALSE(expand_task_ids("api").value().has_value());
  CHECK_FALSE(expand_task_ids("T3..x").value().has_value());
  CHECK_FALSE(expand_task_ids("T5..T3").has_value());
  CHECK_FALSE(expand_task_ids("T1..T101").has_value());
  CHECK(expand_task_ids("T1..T100").value()->size() == 100);
}

TEST_CASE("several ids and ranges become ids for a bulk operation", "[cli][people]") {
  CHECK(parse("tasks", "complete", {"T3", "T4", "T7..T8"}) == ct::json::parse(R"({"ids":["T003","T004","T007","T008"]})").value());
  CHECK(parse("tasks", "complete", {"T3..T4"}) == ct::json::parse(R"({"ids":["T003","T004"]})").value());
  // One id stays id: the reply keeps its single-task shape.
  CHECK(parse("tasks", "complete", {"T3"}) == ct::json::parse(R"({"id":"T3"})").value());
  CHECK(parse("tasks", "update", {"T1", "T2", "--priority", "high"}) ==
        ct::json::parse(R"({"priority":"high","ids":["T001","T002"]})").value());
  // Not a bulk operation: a second id is an unexpected argument.
  CHECK_FALSE(parse_operation_args(op("tasks", "start"), {"T1", "T2"}, InputSource{}));
  auto backwards = parse_operation_args(op("tasks", "complete"), {"T5..T3"}, InputSource{});
  REQUIRE_FALSE(backwards);
  CHECK(backwards.error().message.find("backwards") != std::string::npos);
}

TEST_CASE("+label adds and -label takes off", "[cli][people]") {
  CHECK(parse("tasks", "update", {"T1", "+api", "-ui"}) == ct::json::parse(R"({"id":"T1","labels":["api","-ui"]})").value());
  CHECK(parse("tasks", "update", {"T1", "--labels", "db", "+api"}) ==
        ct::json::parse(R"({"id":"T1","labels":["db","api"]})").value());
  // Adding: +label after the title; the title's own words stay the title.
  CHECK(parse("tasks", "add", {"Fix", "the", "login", "+auth"}) ==
        ct::json::parse(R"({"title":"Fix the login","labels":["auth"]})").value());
  // A task cannot be created without a label, so -word is not taken as one there.
  CHECK_FALSE(parse_operation_args(op("tasks", "add"), {"Fix it", "-ui"}, InputSource{}));
}

TEST_CASE("ct ready and ct blocked are tasks.list with readiness set", "[cli][people]") {
  auto ready = ct::cli::find_route(ct::registry(), {"ready"});
  REQUIRE(ready.spec);
  CHECK(ready.spec->full_name() == "tasks.list");
  CHECK(ready.preset["readiness"].as_string() == "ready");
  auto blocked = ct::cli::find_route(ct::registry(), {"blocked", "--label", "api"});
  REQUIRE(blocked.spec);
  CHECK(blocked.preset["readiness"].as_string() == "blocked");
  auto typo = ct::cli::find_route(ct::registry(), {"blokced"});
  REQUIRE(typo.error);
  CHECK(typo.error->details["didYouMean"].as_string() == "blocked");
}

TEST_CASE("relative times", "[cli][people]") {
  using ct::cli::relative_time;
  const std::int64_t now = 1'800'000'000'000;
  constexpr std::int64_t kMinute = 60'000, kHour = 60 * kMinute, kDay = 24 * kHour;
  CHECK(relative_time(now - 10'000, now) == "just now");
  CHECK(relative_time(now - 5 * kMinute, now) == "5m ago");
  CHECK(relative_time(now - 90 * kMinute, now) == "90m ago");
  CHECK(relative_time(now - 3 * kHour, now) == "3h ago");
  CHECK(relative_time(now - 36 * kHour, now) == "36h ago");
  CHECK(relative_time(now - 3 * kDay, now) == "3d ago");
  CHECK(relative_time(now - 20 * kDay, now) == "2w ago");
  CHECK(relative_time(now - 90 * kDay, now) == "3mo ago");
  CHECK(relative_time(now - 800 * kDay, now) == "2y ago");
  CHECK(relative_time(now + 3 * kDay, now) == "in 3d");
}

}  // namespace
