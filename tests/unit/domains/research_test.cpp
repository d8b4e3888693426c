// The research domain: entries in the store, links in both directions, and research.sync reading
// MANIFEST.jsonl (idempotent, invalid lines by number, a half-written last line left, a shrunk file
// read again).
#include <catch2/catch.hpp>

#include <fstream>

#include "core/sha256.h"
#include "gateway/mcp_syntax.h"
#include "unit/test_support.h"

using namespace ct;
using ct::test::code_of;

namespace {

namespace fs = std::filesystem;

std::string entry(std::string_view id, std::string_view extra = "") {
  return std::string(R"({"id":")") + std::string(id) + R"(","file":"out/)" + std::string(id) +
         R"(.md","title":"About )" + std::string(id) + R"(","status":"complete",)"
         R"("keyFindings":["one finding","two findings","three findings"])" + std::string(extra) + "}";
}

fs::path manifest(const test::Project& p) { return p.dir() / ".cleo" / "agent-outputs" / "MANIFEST.jsonl"; }

void append(const test::Project& p, std::string_view text) {
  fs::create_directories(manifest(p).parent_path());
  std::ofstream out(manifest(p), std::ios::binary | std::ios::app);
  out << text;
}

}  // namespace

TEST_CASE("research.add validates, stores and answers a repeat with E_ALREADY_EXISTS", "[research]") {
  test::Project p;
  p.add(R"({"title":"Pick an auth scheme"})");
  fs::create_directories(p.dir() / "out");
  std::ofstream(p.dir() / "out" / "T001-auth.md") << "# Auth\n";
  auto added = p.mutate("research", "add", entry("T001-auth", R"(,"linkedTasks":["T1"],"confidence":"0.9","topics":["auth"])"));
  INFO(to_json(added, McpAdvice(registry())));
  REQUIRE(added.success);
  CHECK_FALSE(added.data.contains("id"));                                // as sent
  CHECK(added.data["linkedTasks"].as_array()[0].as_string() == "T001");  // canonical, not as sent ("T1")
  CHECK(added.warnings.empty());
  auto shown = p.query("research", "show", R"({"id":"T001-auth"})");
  REQUIRE(shown.success);
  CHECK(shown.data["fileChecksum"].as_string() == sha256_hex("# Auth\n"));
  CHECK(shown.data["confidence"].as_double() == Approx(0.9));
  CHECK(shown.data["createdAt"].as_string().starts_with("2026-01-01T"));

  auto again = p.mutate("research", "add", entry("T001-auth", R"(,"linkedTasks":["T1"],"confidence":"0.9","topics":["auth"])"));
  CHECK(again.success);
  CHECK(code_of(again) == "E_ALREADY_EXISTS");
  auto different = p.mutate("research", "add", entry("T001-auth", R"(,"title":"Something else")"));
  CHECK(code_of(different) == "E_VALIDATION");

  CHECK(code_of(p.mutate("research", "add", entry("T001-few", R"(,"keyFindings":["only one"])"))) == "E_VALIDATION");
  CHECK(code_of(p.mutate("research", "add", entry("T001-conf", R"(,"confidence":"2")"))) == "E_VALIDATION");
  CHECK(code_of(p.mutate("research", "add", entry("T001-out", R"(,"file":"../x.md")"))) == "E_VALIDATION");
  CHECK(code_of(p.mutate("research", "add", entry("T001-gone", R"(,"linkedTasks":["T404"])"))) == "E_NOT_FOUND");
  CHECK(code_of(p.mutate("research", "add", entry("T001-st", R"(,"status":"done")"))) == "E_VALIDATION");
  // Outside research a findings count outside 3–7 is a warning.
  auto impl = p.mutate("research", "add", entry("T001-impl", R"(,"agentType":"implementation","keyFindings":[])"));
  REQUIRE(impl.success);
  CHECK(impl.warnings.size() == 2);  // the file is missing too
  CHECK(code_of(p.query("research", "show", R"({"id":"T999-nothing"})")) == "E_NOT_FOUND");
  CHECK(code_of(p.query("research", "show", R"({"id":"not an id"})")) == "E_VALIDATION");
}

TEST_CASE("research.link and unlink change both sides; tasks.show lists the entries", "[research]") {
  test::Project p;
  p.add(R"({"title":"First task"})");
  p.add(R"({"title":"Second task"})");
  REQUIRE(p.mutate("research", "add", entry("T001-a")).success);
  REQUIRE(p.mutate("research", "add", entry("T001-b", R"(,"linkedTasks":["T002"])")).success);

  auto linked = p.mutate("research", "link", R"({"id":"T001-a","taskId":"T2"})");
  REQUIRE(linked.success);
  CHECK(linked.data["linkedTasks"].size() == 1);
  CHECK(code_of(p.mutate("research", "link", R"({"id":"T001-a","taskId":"T002"})")) == "E_NO_CHANGE");
  CHECK(code_of(p.mutate("research", "link", R"({"id":"T001-a","taskId":"T404"})")) == "E_NOT_FOUND");
  CHECK(code_of(p.mutate("research", "link", R"({"id":"T001-zz","taskId":"T002"})")) == "E_NOT_FOUND");

  auto task = p.query("tasks", "show", R"({"id":"T002"})");
  REQUIRE(task.success);
  REQUIRE(task.data["research"].size() == 2);
  CHECK(task.data["research"].as_array()[0].as_string() == "T001-a");
  CHECK(task.data["research"].as_array()[1].as_string() == "T001-b");
  CHECK_FALSE(p.query("tasks", "show", R"({"id":"T001"})").data.contains("research"));
  CHECK_FALSE(p.query("tasks", "show", R"({"id":"T002","detail":"compact"})").data.contains("research"));
  CHECK(p.query("research", "list", R"({"taskId":"T002"})").data.size() == 2);

  REQUIRE(p.mutate("research", "unlink", R"({"id":"T001-a","taskId":"T002"})").success);
  CHECK(code_of(p.mutate("research", "unlink", R"({"id":"T001-a","taskId":"T002"})")) == "E_NO_CHANGE");
  CHECK(p.query("tasks", "show", R"({"id":"T002"})").data["research"].size() == 1);
  CHECK_FALSE(p.query("research", "show", R"({"id":"T001-a"})").data.contains("linkedTasks"));
}

TEST_CASE("research list, find, pending, stats and archive", "[research]") {
  test::Project p;
  p.add(R"({"title":"A task"})");
  CHECK(code_of(p.query("research", "list")) == "E_NO_DATA");
  CHECK(code_of(p.query("research", "stats")) == "E_NO_DATA");
  REQUIRE(p.mutate("research", "add", entry("T001-old", R"(,"date":"2025-06-01","topics":["cache"])")).success);
  REQUIRE(p.mutate("research", "add",
                   entry("T001-new", R"(,"status":"partial","needsFollowup":["measure it"],"actionable":true)"))
              .success);
  auto listed = p.query("research", "list");
  REQUIRE(listed.data.size() == 2);
  CHECK(listed.data.as_array()[0]["id"].as_string() == "T001-new");  // newest date first
  CHECK_FALSE(listed.data.as_array()[0].contains("keyFindings"));     // compact
  CHECK(p.query("research", "list", R"({"detail":"full"})").data.as_array()[0]["keyFindings"].size() == 3);
  CHECK(p.query("research", "list", R"({"status":["partial"]})").data.size() == 1);
  CHECK(p.query("research", "list", R"({"topic":"CACHE"})").data.size() == 1);
  CHECK(p.query("research", "list", R"({"actionable":true})").data.size() == 1);
  auto paged = p.query("research", "list", R"({"limit":1})");
  REQUIRE(paged.page);
  CHECK(paged.page->total == 2);

  auto found = p.query("research", "find", R"({"query":"cach"})");
  REQUIRE(found.data.size() == 1);
  CHECK(found.data.as_array()[0]["id"].as_string() == "T001-old");
  CHECK(p.query("research", "find", R"({"query":"findings"})").data.size() == 2);
  CHECK(code_of(p.query("research", "find", R"({"query":"nothing-like-it"})")) == "E_NO_DATA");
  CHECK(p.query("research", "find", R"({"query":"T001-new"})").data.as_array()[0]["id"].as_string() == "T001-new");

  auto open = p.query("research", "pending");
  REQUIRE(open.data.size() == 1);
  CHECK(open.data.as_array()[0]["needsFollowup"].as_array()[0].as_string() == "measure it");

  auto counted = p.query("research", "stats");
  REQUIRE(counted.success);
  CHECK(counted.data["total"].as_int() == 2);
  CHECK(counted.data["byStatus"]["partial"].as_int() == 1);
  CHECK(counted.data["byAgentType"]["research"].as_int() == 2);
  CHECK(counted.data["pending"].as_int() == 1);

  auto dry = p.mutate("research", "archive", R"({"before":"2025-12-31","dryRun":true})");
  CHECK(dry.data["archived"].as_int() == 1);
  CHECK(p.query("research", "list").data.size() == 2);
  auto archived = p.mutate("research", "archive", R"({"before":"2025-12-31"})");
  REQUIRE(archived.success);
  CHECK(archived.data["ids"].as_array()[0].as_string() == "T001-old");
  CHECK(p.query("research", "list").data.size() == 1);
  CHECK(p.query("research", "list", R"({"archived":"only"})").data.size() == 1);
  CHECK(code_of(p.query("research", "find", R"({"query":"cache"})")) == "E_NO_DATA");
  CHECK(p.query("research", "find", R"({"query":"cache","includeArchived":true})").data.size() == 1);
  CHECK(code_of(p.mutate("research", "archive", R"({"before":"2025-12-31"})")) == "E_NO_CHANGE");
  CHECK(code_of(p.mutate("research", "archive", R"({"before":"last year"})")) == "E_VALIDATION");
}

TEST_CASE("research.sync imports new complete lines once, by line number", "[research][sync]") {
  test::Project p;
  p.add(R"({"title":"A task"})");
  auto none = p.mutate("research", "sync");
  CHECK(code_of(none) == "E_NO_DATA");

  append(p, entry("T001-one") + "\n" + "{not json\n" + "\n" + entry("T001-two", R"(,"linkedTasks":["T404"])") + "\n" +
                entry("T001-three") + "\n" + entry("T001-half").substr(0, 30));
  auto first = p.mutate("research", "sync");
  INFO(to_json(first, McpAdvice(registry())));
  REQUIRE(first.success);
  CHECK(first.data["imported"].as_int() == 2);
  CHECK(first.data["lines"].as_int() == 5);
  CHECK(first.data["partialBytes"].as_int() == 30);
  REQUIRE(first.data["invalid"].size() == 2);
  CHECK(first.data["invalid"].as_array()[0]["line"].as_int() == 2);
  CHECK(first.data["invalid"].as_array()[1]["line"].as_int() == 4);
  CHECK(first.data["invalid"].as_array()[1]["error"].as_string() == "Task T404 not found");
  CHECK(p.query("research", "show", R"({"id":"T001-three"})").success);
  CHECK(code_of(p.query("research", "show", R"({"id":"T001-half"})")) == "E_NOT_FOUND");

  // Nothing new: nothing imported twice.
  CHECK(code_of(p.mutate("research", "sync")) == "E_NO_CHANGE");
  // The half-written line is finished; line numbers continue.
  append(p, entry("T001-half").substr(30) + "\n" + entry("T001-one") + "\n" + entry("T001-one", R"(,"title":"Changed")") + "\n");
  auto second = p.mutate("research", "sync");
  INFO(to_json(second, McpAdvice(registry())));
  REQUIRE(second.success);
  CHECK(second.data["imported"].as_int() == 1);
  CHECK(second.data["ids"].as_array()[0].as_string() == "T001-half");
  CHECK(second.data["skipped"].as_int() == 1);
  REQUIRE(second.data["conflicts"].size() == 1);
  CHECK(second.data["conflicts"].as_array()[0]["line"].as_int() == 8);
  CHECK(p.query("research", "show", R"({"id":"T001-one"})").data["title"].as_string() == "About T001-one");
  CHECK(p.query("research", "stats").data["total"].as_int() == 3);

  // A dry run reports without importing or moving the cursor.
  append(p, entry("T001-dry") + "\n");
  auto dry = p.mutate("research", "sync", R"({"dryRun":true})");
  CHECK(dry.data["imported"].as_int() == 1);
  CHECK(code_of(p.query("research", "show", R"({"id":"T001-dry"})")) == "E_NOT_FOUND");
  CHECK(p.mutate("research", "sync").data["imported"].as_int() == 1);
}

TEST_CASE("research.sync reads a shrunk or replaced manifest again from the start", "[research][sync]") {
  test::Project p;
  append(p, entry("T001-a") + "\n" + entry("T001-b") + "\n");
  REQUIRE(p.mutate("research", "sync").data["imported"].as_int() == 2);
  // Rotated: a new, shorter file.
  fs::remove(manifest(p));
  append(p, entry("T001-c") + "\n");
  auto rotated = p.mutate("research", "sync");
  INFO(to_json(rotated, McpAdvice(registry())));
  CHECK(rotated.data["rescanned"].as_bool());
  CHECK(rotated.data["imported"].as_int() == 1);
  CHECK(rotated.data["lines"].as_int() == 1);
  // Replaced by a longer file with a different head: read again, known ids skipped.
  fs::remove(manifest(p));
  append(p, entry("T001-b") + "\n" + entry("T001-a") + "\n" + entry("T001-d") + "\n");
  auto replaced = p.mutate("research", "sync");
  INFO(to_json(replaced, McpAdvice(registry())));
  CHECK(replaced.data["rescanned"].as_bool());
  CHECK(replaced.data["imported"].as_int() == 1);
  CHECK(replaced.data["skipped"].as_int() == 2);
  CHECK(p.query("research", "stats").data["total"].as_int() == 4);
}

TEST_CASE("research.sync refuses a manifest it cannot read and a path outside the project", "[research][sync]") {
  test::Project p;
  fs::create_directories(manifest(p));  // a directory where the file should be
  CHECK(code_of(p.mutate("research", "sync")) == "E_FILE_ERROR");
  CHECK(code_of(p.mutate("system", "config.set", R"({"key":"research.manifestFile","value":"../x.jsonl"})")) ==
        "E_INVALID_INPUT");
  REQUIRE(p.mutate("system", "config.set", R"({"key":"research.manifestFile","value":"agents/M.jsonl"})").success);
  fs::create_directories(p.dir() / "agents");
  std::ofstream(p.dir() / "agents" / "M.jsonl") << entry("T001-x") << "\n";
  CHECK(p.mutate("research", "sync").data["file"].as_string() == "agents/M.jsonl");
}

TEST_CASE("research.inject renders the output protocol with the project's manifest", "[research]") {
  test::Project p;
  p.add(R"({"title":"A task"})");
  auto block = p.mutate("research", "inject", R"({"taskId":"T001"})");
  INFO(to_json(block, McpAdvice(registry())));
  REQUIRE(block.success);
  const std::string text = block.data["text"].as_string();
  CHECK(text.find(".cleo/agent-outputs/MANIFEST.jsonl") != std::string::npos);
  CHECK(text.find("\"id\":\"T001-topic-slug\"") != std::string::npos);
  CHECK(text.find("research.sync") != std::string::npos);
  CHECK(text.find("{{") == std::string::npos);
  CHECK(block.data["tokens"].as_int() < 600);
  auto impl = p.mutate("research", "inject", R"({"protocol":"implementation"})");
  REQUIRE(impl.success);
  CHECK(impl.data["text"].as_string().find("\"agentType\":\"implementation\"") != std::string::npos);
  CHECK(code_of(p.mutate("research", "inject", R"({"taskId":"T404"})")) == "E_NOT_FOUND");
  CHECK(code_of(p.mutate("research", "inject", R"({"protocol":"dancing"})")) == "E_VALIDATION");
}
