// Other trackers' records as tasks.import records (issue 17): the format told from the fields,
// text fitted to the task's limits without losing any, labels made valid, and the report of
// what went where and what has no place here.
#include <catch2/catch.hpp>

#include "core/json_parse.h"
#include "core/text.h"
#include "gateway/product.h"
#include "domains/tasks/import_formats.h"

namespace ct::tasks {
namespace {

constexpr TimeMs kNow = 1'800'000'000'000;  // 2027-01-15

const OperationSpec& add_spec() { return *registry().find("tasks", "add"); }

json::Value parsed(std::string_view text) {
  auto value = json::parse(text);
  REQUIRE(value);
  return std::move(*value);
}

TEST_CASE("the format is told from the records' fields", "[import]") {
  CHECK(detect_format(parsed(R"([{"uuid":"a","description":"Buy milk","status":"pending"}])")) == "taskwarrior");
  CHECK(detect_format(parsed(R"([{"id":"bd-1","title":"x","status":"open"}])")) == "beads");
  CHECK(detect_format(parsed(R"([{"id":"bd-1","title":"x","issue_type":"bug"}])")) == "beads");
  CHECK(detect_format(parsed(R"([{"id":"T1","title":"Imported task","status":"pending"}])")) == "cleo");
  CHECK(detect_format(parsed(R"([])")) == "cleo");
}

TEST_CASE("tasks.export's own records pass through untouched", "[import]") {
  auto file = read_foreign(parsed(R"({"tasks":[{"id":"T1","title":"Imported task"}]})"), "auto", add_spec(), kNow);
  REQUIRE(file);
  CHECK(file->format == "cleo");
  CHECK(file->records == parsed(R"([{"id":"T1","title":"Imported task"}])"));
  CHECK(file->mapped.empty());
}

TEST_CASE("long and multi-line titles keep their whole text in the description", "[import]") {
  std::string long_title(250, 'x');
  auto file = read_foreign(parsed(R"([{"uuid":"a","description":")" + long_title + R"("}])"), "taskwarrior", add_spec(), kNow);
  REQUIRE(file);
  const json::Value& record = file->records.as_array().front();
  CHECK(utf8_length(record["title"].as_string()) == 200);
  CHECK(record["description"].as_string() == long_title);
  REQUIRE(file->warnings.size() == 1);

  auto lines = read_foreign(parsed(R"([{"id":"bd-1","title":"First line\nsecond","description":"More","status":"open"}])"),
                            "beads", add_spec(), kNow);
  REQUIRE(lines);
  const json::Value& beads = lines->records.as_array().front();
  CHECK(beads["title"].as_string() == "First line");
  CHECK(beads["description"].as_string() == "First line\nsecond\n\nMore");
}

TEST_CASE("labels are made valid; epics under a parent become tasks", "[import]") {
  auto file = read_foreign(parsed(R"([{"id":"bd-1","title":"Parent issue","status":"open","issue_type":"epic"},
                                      {"id":"bd-1.1","title":"Child epic","status":"open","issue_type":"epic",
                                       "labels":["Needs Review","--x","ok"],"priority":"P4"}])"),
                           "auto", add_spec(), kNow);
  REQUIRE(file);
  const json::Value& child = file->records.as_array()[1];
  CHECK(child["parent"].as_string() == "bd-1");
  CHECK_FALSE(child.contains("type"));
  CHECK(child["priority"].as_string() == "low");
  CHECK(child["labels"] == parsed(R"(["backlog","needs-review","x","ok","epic"])"));
  CHECK(file->records.as_array()[0]["type"].as_string() == "epic");
}

TEST_CASE("the report counts what has no place here; derived fields are not losses", "[import]") {
  auto file = read_foreign(parsed(R"([{"uuid":"a","description":"One task","urgency":3,"id":4,"due":"20260101T000000Z"},
                                      {"uuid":"b","description":"Two tasks","due":"20260101T000000Z","estimate":"2h"}])"),
                           "auto", add_spec(), kNow);
  REQUIRE(file);
  CHECK(file->unmapped == parsed(R"({"due":2,"estimate":1})"));
  CHECK(file->mapped["description"].as_string() == "title");
}

TEST_CASE("a tombstone is cancelled with its reason; a future note time is dropped", "[import]") {
  auto file = read_foreign(parsed(R"([{"id":"bd-9","title":"Gone issue","status":"tombstone","close_reason":"dup",
                                       "comments":[{"text":"later","created_at":"2099-01-01T00:00:00Z"}]}])"),
                           "beads", add_spec(), kNow);
  REQUIRE(file);
  const json::Value& record = file->records.as_array().front();
  CHECK(record["status"].as_string() == "cancelled");
  CHECK(record["cancellationReason"].as_string() == "dup");
  CHECK_FALSE(record["notes"].as_array().front().contains("at"));
}

TEST_CASE("anything but records is refused", "[import]") {
  auto file = read_foreign(parsed(R"({"nothing":1})"), "auto", add_spec(), kNow);
  REQUIRE_FALSE(file);
  CHECK(file.error().code == ErrorCode::InvalidParams);
}

}  // namespace
}  // namespace ct::tasks
