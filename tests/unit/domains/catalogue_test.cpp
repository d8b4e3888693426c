// The governed catalogue (issue 54, seed 004; engines/rules/catalogue.h): memory entries and
// skills with a version per recorded change, an owner, the seed's status flow mapped onto people's
// verification, review due dates by tier, a change log, a deterministic governance hash that leaves
// bodies out, an integrity check in validate.catalogue, skill use counted at spawn, and
// memory.review. Runs on both backends.
#include <catch2/catch.hpp>

#include "engines/rules/catalogue.h"
#include "gateway/mcp_syntax.h"
#include "unit/project_edits.h"
#include "unit/test_support.h"

using namespace ct;
using ct::test::code_of;

namespace {

MemoryEntry entry_of(std::string id, std::string kind, std::string title, std::string body = "") {
  MemoryEntry entry;
  entry.id = std::move(id);
  entry.kind = std::move(kind);
  entry.title = std::move(title);
  entry.body = std::move(body);
  entry.verified_by = "person:ann";
  entry.created_at = *parse_iso8601("2026-01-01T00:00:00Z");
  return entry;
}

}  // namespace

TEST_CASE("catalogue rules: the seed's statuses, tiers, review dates and a hash that leaves bodies out",
          "[catalogue]") {
  using namespace catalogue;
  MemoryEntry entry = entry_of("M001", "convention", "Errors are values");
  CHECK(status_of(entry) == "approved");
  entry.verified_by.clear();
  CHECK(status_of(entry) == "draft");
  entry.status = "proposed";
  CHECK(status_of(entry) == "review");
  entry.status = "retracted";
  CHECK(status_of(entry) == "deprecated");
  CHECK_FALSE(of(entry, std::nullopt).next_review_due);  // a deprecated entry is never due
  entry.status = "active";
  entry.verified_by = "person:ann";
  entry.verified_at = *parse_iso8601("2026-02-01T00:00:00Z");
  CHECK(tier_of("convention") == "P1");
  CHECK(tier_of("observation") == "P4");
  CHECK(format_iso8601(*of(entry, std::nullopt).next_review_due) == "2026-03-03T00:00:00Z");  // 30 days after

  // Deterministic and order-free; a body is not projected; each governed field is.
  MemoryEntry other = entry_of("M002", "learning", "The linker needs -ldl");
  const std::string hash = catalogue_hash({of(entry, std::nullopt), of(other, std::nullopt)});
  CHECK(hash.size() == 64);
  CHECK(catalogue_hash({of(other, std::nullopt), of(entry, std::nullopt)}) == hash);
  MemoryEntry body_only = entry;
  body_only.body = "a longer body";
  CHECK(catalogue_hash({of(body_only, std::nullopt), of(other, std::nullopt)}) == hash);
  CatalogueRow row{.subject = "M001", .version = 2, .owner = "claude"};
  CHECK(catalogue_hash({of(entry, row), of(other, std::nullopt)}) != hash);
  MemoryEntry retitled = entry;
  retitled.title = "Errors are values, always";
  CHECK(catalogue_hash({of(retitled, std::nullopt), of(other, std::nullopt)}) != hash);

  Skill builtin{.name = "task-executor", .description = "Implements a task", .source = "builtin"};
  Skill project{.name = "reviewer", .description = "Reviews", .source = "project"};
  CHECK(status_of(builtin) == "approved");
  CHECK(status_of(project) == "draft");
  CHECK(of(project, std::nullopt).id == "skill:reviewer");
  CHECK(skill_hash(project) != skill_hash(builtin));

  CHECK(change_summary(std::nullopt, entry) == "recorded (active)");
  CHECK(change_summary(entry, entry).empty());
  CHECK(change_summary(entry, retitled) == "title");
}

TEST_CASE("catalogue review: touched conventions listed, the ones a text contradicts first", "[catalogue]") {
  std::vector<MemoryEntry> conventions = {
      entry_of("M001", "convention", "Run the unit tests before every commit"),
      entry_of("M002", "decision", "Never log secrets", "Tokens and passwords never reach the log"),
      entry_of("M003", "convention", "Store writes go through the runner"),
      entry_of("M004", "convention", "Docs use British spelling")};
  conventions[2].files = {"engines/store/"};
  const auto touched = catalogue::review(
      "Plan: skip the unit tests and commit directly. Log the request secrets for debugging. Edit engines/store/x.cpp.",
      conventions);
  REQUIRE(touched.size() == 3);
  CHECK(touched[0].entry->id == "M001");
  CHECK(touched[0].may_break);
  CHECK(touched[0].words == std::vector<std::string>{"unit", "tests"});
  CHECK(touched[0].why == "the text negates 'unit', which M001 asks for");
  CHECK(touched[1].entry->id == "M002");
  CHECK(touched[1].may_break);
  CHECK(touched[1].words == std::vector<std::string>{"log", "secrets"});
  CHECK(touched[1].why == "the text asks for 'log', which M002 rules out");
  CHECK(touched[2].entry->id == "M003");
  CHECK_FALSE(touched[2].may_break);
  CHECK(touched[2].why == "names engines/store/");
  // A text that follows them breaks none; one that touches none lists none.
  for (const auto& touch : catalogue::review("Run the unit tests, then commit; never log secrets", conventions))
    CHECK_FALSE(touch.may_break);
  CHECK(catalogue::review("Rename the dashboard's colours", conventions).empty());
}

TEST_CASE("memory entries are governed: versions, owner, change log, review flow and due dates", "[catalogue]") {
  test::Project p;
  REQUIRE(p.mutate("session", "start", R"({"scope":"global","name":"writer","agent":"writer"})").success);
  REQUIRE(p.mutate("memory", "observe", R"({"kind":"convention","title":"Errors are values with stable codes"})").success);
  Envelope shown = p.query("memory", "show", R"({"id":"M001"})");
  REQUIRE(shown.success);
  json::Value governance = shown.data["governance"];
  CHECK(governance["version"] == json::Value(std::int64_t{1}));
  CHECK(governance["status"] == json::Value("review"));  // proposed: waits for a person
  CHECK(governance["tier"] == json::Value("P1"));
  CHECK(governance["nextReviewDue"].as_string().starts_with("2026-01-31T00:00"));  // 30 days after it was recorded
  CHECK(governance["owner"] == json::Value("writer"));
  REQUIRE(governance["changes"].size() == 1);
  CHECK(governance["changes"].as_array()[0]["summary"] == json::Value("recorded (proposed)"));

  // A person's verification approves it: version 2, its log says so.
  REQUIRE(p.mutate_as_person("memory", "verify", R"({"id":"M001"})").success);
  governance = p.query("memory", "show", R"({"id":"M001"})").data["governance"];
  CHECK(governance["version"] == json::Value(std::int64_t{2}));
  CHECK(governance["status"] == json::Value("approved"));
  CHECK(governance["changes"].as_array()[0]["summary"].as_string().find("status proposed→active") != std::string::npos);
  CHECK(governance["changes"].as_array()[0]["by"].as_string().rfind("person:", 0) == 0);
  const std::string owner = governance["owner"].as_string();

  // A person's edit is the next version; the owner stays.
  REQUIRE(p.mutate_as_person("memory", "update", R"({"id":"M001","body":"and stable exit codes"})").success);
  governance = p.query("memory", "show", R"({"id":"M001"})").data["governance"];
  CHECK(governance["version"] == json::Value(std::int64_t{3}));
  CHECK(governance["owner"] == json::Value(owner));
  CHECK(governance["changes"].as_array()[0]["summary"] == json::Value("body"));
  // Nothing changed: no new version.
  REQUIRE(p.mutate_as_person("memory", "update", R"({"id":"M001","body":"and stable exit codes"})").success);
  CHECK(p.query("memory", "show", R"({"id":"M001"})").data["governance"]["version"] == json::Value(std::int64_t{3}));

  // Retracted: deprecated, never due.
  REQUIRE(p.mutate("memory", "observe", R"({"kind":"learning","title":"The linker needs -ldl"})").success);
  REQUIRE(p.mutate_as_person("memory", "retract", R"({"id":"M002","reason":"no longer true"})").success);
  governance = p.query("memory", "show", R"({"id":"M002"})").data["governance"];
  CHECK(governance["status"] == json::Value("deprecated"));
  CHECK_FALSE(governance.contains("nextReviewDue"));

  // Due for review: nothing yet; 31 days on, the convention (P1, 30 days) is.
  REQUIRE(p.mutate("memory", "observe", R"({"kind":"observation","title":"The build takes four minutes"})").success);
  Envelope none = p.query("memory", "list", R"({"due":true})");
  REQUIRE(none.success);
  CHECK(none.data.size() == 0);
  auto later = std::make_shared<TimeMs>(*parse_iso8601("2026-02-01T00:00:00Z"));
  test::ClockedClient client(p, later);
  Envelope due = client.query("memory", "list", R"({"due":true})");
  REQUIRE(due.success);
  REQUIRE(due.data.size() == 1);
  CHECK(due.data.as_array()[0]["id"] == json::Value("M001"));
  *later = *parse_iso8601("2026-08-01T00:00:00Z");
  Envelope both = client.query("memory", "list", R"({"due":true,"kind":"observation"})");
  REQUIRE(both.data.size() == 1);
  CHECK(both.data.as_array()[0]["id"] == json::Value("M003"));
}

TEST_CASE("validate.catalogue: a deterministic governance hash, and stored hashes checked against the entries",
          "[catalogue]") {
  test::Project p;
  REQUIRE(p.mutate_as_person("memory", "observe", R"({"kind":"convention","title":"Errors are values"})").success);
  REQUIRE(p.mutate("memory", "observe", R"({"kind":"learning","title":"The linker needs -ldl"})").success);
  Envelope first = p.query("validate", "catalogue");
  INFO(to_json(first, McpAdvice(registry())));
  REQUIRE(first.success);
  const std::string hash = first.data["hash"].as_string();
  CHECK(hash.size() == 64);
  CHECK(first.data["byStatus"]["approved"].as_int() >= 2);  // the convention and the built-in skills
  CHECK(first.data["byStatus"]["draft"] == json::Value(std::int64_t{1}));
  CHECK(p.query("validate", "catalogue").data["hash"] == json::Value(hash));  // deterministic

  // A governed change is a new version: the hash moves.
  REQUIRE(p.mutate_as_person("memory", "update", R"({"id":"M002","body":"on Debian"})").success);
  const std::string changed = p.query("validate", "catalogue").data["hash"].as_string();
  CHECK(changed != hash);

  // A body changed behind the operations' back leaves the governance hash alone and breaks the
  // integrity check; so does a governance field.
  const auto db = p.dir() / ".cleo" / "tasks.db";
  test::run_sql(db, "UPDATE memory SET body = 'tampered' WHERE id = 'M002'");
  Envelope broken = p.query("validate", "catalogue");
  REQUIRE_FALSE(broken.success);
  CHECK(code_of(broken) == "E_VALIDATION");
  const json::Value& details = broken.error->details;
  CHECK(details["hash"] == json::Value(changed));
  REQUIRE(details["broken"].size() == 1);
  CHECK(details["broken"].as_array()[0]["id"] == json::Value("M002"));
  CHECK(details["broken"].as_array()[0]["what"] == json::Value("content"));
  test::run_sql(db, "UPDATE memory SET body = 'on Debian' WHERE id = 'M002'");
  REQUIRE(p.query("validate", "catalogue").success);
  test::run_sql(db, "UPDATE catalogue SET owner = 'mallory' WHERE subject = 'M001'");
  Envelope owner = p.query("validate", "catalogue");
  REQUIRE_FALSE(owner.success);
  CHECK(owner.error->details["broken"].as_array()[0]["what"] == json::Value("governance"));
}

TEST_CASE("skills are governed too: counted when a spawn injects them, the hot set, a changed file a new version",
          "[catalogue]") {
  test::Project p;
  p.add(R"({"title":"Write the parser","description":"Parse the config file"})");
  REQUIRE(p.mutate("orchestrate", "spawn", R"({"id":"T001"})").success);
  REQUIRE(p.mutate("orchestrate", "spawn", R"({"id":"T001"})").success);
  Envelope spawned = p.mutate("orchestrate", "spawn", R"({"id":"T001","skill":"validator"})");
  REQUIRE(spawned.success);
  CHECK_FALSE(spawned.data.contains("_catalogueSkill"));  // what the write step records is not replied
  Envelope report = p.query("validate", "catalogue");
  REQUIRE(report.success);
  REQUIRE(report.data["hot"].size() == 2);
  CHECK(report.data["hot"].as_array()[0]["used"] == json::Value(std::int64_t{2}));
  CHECK(report.data["hot"].as_array()[1]["skill"] == json::Value("validator"));
  CHECK(report.data["hot"].as_array()[1]["used"] == json::Value(std::int64_t{1}));

  // A project skill: draft, and its file changed since its last use is reported, then recorded
  // as version 2 by the next spawn.
  const auto skill_file = p.dir() / ".cleo" / "skills" / "parser-writer.md";
  std::filesystem::create_directories(skill_file.parent_path());
  test::write_file(skill_file, "---\nname: parser-writer\ndescription: Writes parsers\ntags: [parser]\n---\nWrite it.\n");
  REQUIRE(p.mutate("orchestrate", "spawn", R"({"id":"T001","skill":"parser-writer"})").success);
  test::write_file(skill_file, "---\nname: parser-writer\ndescription: Writes parsers\ntags: [parser]\n---\nWrite it well.\n");
  Envelope changed = p.query("validate", "catalogue");
  REQUIRE(changed.success);
  REQUIRE(changed.data["changed"].size() == 1);
  CHECK(changed.data["changed"].as_array()[0]["id"] == json::Value("skill:parser-writer"));
  CHECK(changed.data["byStatus"]["draft"] == json::Value(std::int64_t{1}));
  REQUIRE(p.mutate("orchestrate", "spawn", R"({"id":"T001","skill":"parser-writer"})").success);
  Envelope after = p.query("validate", "catalogue");
  CHECK_FALSE(after.data.contains("changed"));
}

TEST_CASE("memory.review checks a plan against the conventions people verified, not agents' drafts", "[catalogue]") {
  test::Project p;
  REQUIRE(p.mutate_as_person("memory", "observe", R"({"kind":"convention","title":"Run the unit tests before every commit"})").success);
  // An agent's unverified decision is not a verified convention: it is not checked.
  REQUIRE(p.mutate("memory", "observe", R"({"kind":"learning","title":"Commit the unit tests separately"})").success);
  Envelope review = p.query("memory", "review", R"({"text":"Skip the unit tests and commit directly"})");
  INFO(to_json(review, McpAdvice(registry())));
  REQUIRE(review.success);
  CHECK(review.data["checked"] == json::Value(std::int64_t{1}));
  REQUIRE(review.data["mayBreak"].size() == 1);
  CHECK(review.data["mayBreak"].as_array()[0]["id"] == json::Value("M001"));
  CHECK(review.data["touches"].size() == 0);
  Envelope fine = p.query("memory", "review", R"({"text":"Run the unit tests, then commit"})");
  CHECK(fine.data["mayBreak"].size() == 0);
  CHECK(fine.data["touches"].size() == 1);
  CHECK(code_of(p.query("memory", "review", R"({})")) == "E_INVALID_PARAMS");
}
