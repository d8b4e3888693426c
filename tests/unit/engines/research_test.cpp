// The research engine: the rules of a manifest entry and the reading of MANIFEST.jsonl lines.
#include "engines/rules/research.h"

#include <catch2/catch.hpp>

#include <fstream>

#include "core/json_parse.h"
#include "core/sha256.h"
#include "unit/temp_dir.h"

namespace ct {
namespace {

constexpr std::string_view kToday = "2026-01-01";

json::Value object(std::string_view text) {
  auto parsed = json::parse(text);
  REQUIRE(parsed);
  return *parsed;
}

constexpr std::string_view kGood =
    R"({"id":"T001-auth-options","file":"docs/auth.md","title":"Auth options","date":"2025-12-30",)"
    R"("status":"complete","agentType":"research","topics":["Auth","sessions"],)"
    R"("keyFindings":["OAuth fits","Sessions are simpler","Tokens expire"],"actionable":true,)"
    R"("needsFollowup":["ask security"],"linkedTasks":["T1","T002"],"confidence":0.75})";

/// The entry `text` with one field replaced (or removed when `value` is empty).
json::Value with(std::string_view field, std::string_view value) {
  json::Value out = object(kGood);
  if (value.empty()) out.erase(field);
  else out.set(field, object(value));
  return out;
}

Result<ResearchEntry> parse(const json::Value& value, const std::filesystem::path& root,
                            std::vector<std::string>* warnings = nullptr) {
  std::vector<std::string> ignored;
  return parse_research_entry(value, root, kToday, warnings ? *warnings : ignored, process_hasher());
}

std::string field_of(const Result<ResearchEntry>& result) {
  REQUIRE_FALSE(result);
  CHECK(result.error().code == ErrorCode::Validation);
  CHECK_FALSE(result.error().fix.empty());
  const json::Value* field = result.error().details.find("field");
  return field && field->is_string() ? field->as_string() : "";
}

}  // namespace

TEST_CASE("a complete research entry is parsed and normalised", "[research][engine]") {
  test::TempDir dir;
  std::vector<std::string> warnings;
  auto entry = parse(object(kGood), dir.path(), &warnings);
  REQUIRE(entry);
  CHECK(entry->id == "T001-auth-options");
  CHECK(entry->file == "docs/auth.md");
  CHECK(entry->status == ResearchStatus::Complete);
  CHECK(entry->topics == std::vector<std::string>{"auth", "sessions"});
  CHECK(entry->key_findings.size() == 3);
  CHECK(entry->actionable);
  CHECK(entry->linked_tasks == std::vector<std::string>{"T001", "T002"});
  REQUIRE(entry->confidence);
  CHECK(*entry->confidence == Approx(0.75));
  CHECK(entry->file_checksum.empty());  // no file
  REQUIRE(warnings.size() == 1);
  CHECK(warnings[0].find("docs/auth.md does not exist") != std::string::npos);

  // The original CLEO's snake_case names are read too; the date defaults to today; the file's
  // checksum is its SHA-256.
  std::filesystem::create_directories(dir.path() / "docs");
  std::ofstream(dir.path() / "docs" / "auth.md") << "# Auth\n";
  auto snake = parse(object(R"({"id":"t7-x","file":"./docs/../docs/auth.md","title":"Auth","status":"partial",)"
                            R"("agent_type":"Implementation","key_findings":["one"],"linked_tasks":["T0007"]})"),
                     dir.path(), &warnings);
  REQUIRE(snake);
  CHECK(snake->id == "T007-x");
  CHECK(snake->file == "docs/auth.md");
  CHECK(snake->date == kToday);
  CHECK(snake->agent_type == "implementation");
  CHECK(snake->linked_tasks == std::vector<std::string>{"T007"});
  CHECK(snake->file_checksum == sha256_hex("# Auth\n"));
  // One finding outside research is a warning, not an error.
  CHECK(warnings.back().find("keyFindings has 1 item") != std::string::npos);
}

TEST_CASE("each rule of an entry is an E_VALIDATION naming its field", "[research][engine]") {
  test::TempDir dir;
  CHECK(field_of(parse(with("id", ""), dir.path())) == "id");
  CHECK(field_of(parse(with("id", R"("auth-options")"), dir.path())) == "id");
  CHECK(field_of(parse(with("id", R"("T001-Auth_Options")"), dir.path())) == "id");
  CHECK(field_of(parse(with("id", "42"), dir.path())) == "id");
  CHECK(field_of(parse(with("title", ""), dir.path())) == "title");
  CHECK(field_of(parse(with("title", R"("two\nlines")"), dir.path())) == "title");
  CHECK(field_of(parse(with("status", R"("done")"), dir.path())) == "status");
  CHECK(field_of(parse(with("date", R"("2026-02-30")"), dir.path())) == "date");
  CHECK(field_of(parse(with("date", R"("yesterday")"), dir.path())) == "date");
  CHECK(field_of(parse(with("confidence", "1.5"), dir.path())) == "confidence");
  CHECK(field_of(parse(with("confidence", "-0.1"), dir.path())) == "confidence");
  CHECK(field_of(parse(with("confidence", R"("high")"), dir.path())) == "confidence");
  CHECK(field_of(parse(with("actionable", R"("yes")"), dir.path())) == "actionable");
  CHECK(field_of(parse(with("topics", R"("auth")"), dir.path())) == "topics");
  CHECK(field_of(parse(with("linkedTasks", R"(["auth"])"), dir.path())) == "linkedTasks");
  CHECK(field_of(parse(with("file", R"("../outside.md")"), dir.path())) == "file");
  CHECK(field_of(parse(with("file", R"("/etc/passwd")"), dir.path())) == "file");
  CHECK(field_of(parse(with("file", R"(".")"), dir.path())) == "file");
  // keyFindings: 3–7 for research.
  CHECK(field_of(parse(with("keyFindings", R"(["a","b"])"), dir.path())) == "keyFindings");
  CHECK(field_of(parse(with("keyFindings", R"(["1","2","3","4","5","6","7","8"])"), dir.path())) == "keyFindings");
  CHECK(parse(with("keyFindings", R"(["1","2","3","4","5","6","7"])"), dir.path()));
  // An unknown field is refused with the valid names and a did-you-mean.
  json::Value typo = object(kGood);
  typo.set("keyfinding", json::Value::array());
  auto refused = parse(typo, dir.path());
  CHECK(field_of(refused) == "keyfinding");
  CHECK(refused.error().details["didYouMean"].as_string() == "keyFindings");
  // An absolute path inside the project is stored relative to it.
  auto inside = parse(with("file", "\"" + (dir.path() / "out" / "x.md").string() + "\""), dir.path());
  REQUIRE(inside);
  CHECK(inside->file == "out/x.md");
}

TEST_CASE("entries compare by what the agent wrote, not by links or checksum", "[research][engine]") {
  test::TempDir dir;
  ResearchEntry a = *parse(object(kGood), dir.path());
  ResearchEntry b = a;
  b.linked_tasks.push_back("T009");
  b.file_checksum = "abc";
  CHECK(same_research_content(a, b));
  b.key_findings.back() = "Tokens never expire";
  CHECK_FALSE(same_research_content(a, b));
  // The manifest form round-trips.
  std::vector<std::string> warnings;
  auto again = parse_research_entry(research_manifest_json(a), dir.path(), kToday, warnings, process_hasher());
  REQUIRE(again);
  CHECK(same_research_content(a, *again));
}

TEST_CASE("manifest lines: only complete lines, numbered, with the bytes consumed", "[research][engine]") {
  auto chunk = split_manifest_lines("{\"a\":1}\n\n{\"b\":2}\r\n{\"c\":", 5);
  REQUIRE(chunk.lines.size() == 3);
  CHECK(chunk.lines[0].number == 5);
  CHECK(chunk.lines[0].text == "{\"a\":1}");
  CHECK(chunk.lines[1].text.empty());
  CHECK(chunk.lines[2].number == 7);
  CHECK(chunk.lines[2].text == "{\"b\":2}");  // a CR before the LF is dropped
  CHECK(chunk.consumed == 18);                // the half-written last line is left
  CHECK(split_manifest_lines("", 1).lines.empty());
  CHECK(split_manifest_lines("no newline yet", 1).consumed == 0);

  test::TempDir dir;
  std::vector<std::string> warnings;
  auto not_json = parse_manifest_line("{\"id\":", dir.path(), kToday, warnings, process_hasher());
  REQUIRE_FALSE(not_json);
  CHECK(not_json.error().message.starts_with("not JSON"));
  auto not_object = parse_manifest_line("[1,2]", dir.path(), kToday, warnings, process_hasher());
  REQUIRE_FALSE(not_object);
  CHECK(not_object.error().message == "not a JSON object");
  CHECK_FALSE(parse_manifest_line(std::string(kMaxManifestLine + 1, ' '), dir.path(), kToday, warnings, process_hasher()));
  CHECK(parse_manifest_line(kGood, dir.path(), kToday, warnings, process_hasher()));
}

TEST_CASE("project-relative paths stay inside the project", "[research][engine]") {
  std::filesystem::path root = "/work/project";
  CHECK(*project_relative_path("a/b.md", root, "file") == "a/b.md");
  CHECK(*project_relative_path("a/./c/../b.md", root, "file") == "a/b.md");
  CHECK(*project_relative_path("/work/project/a.md", root, "file") == "a.md");
  CHECK_FALSE(project_relative_path("", root, "file"));
  CHECK_FALSE(project_relative_path("a/../../b.md", root, "file"));
  CHECK_FALSE(project_relative_path("/work/other/a.md", root, "file"));
  CHECK(project_relative_path("..", root, "x").error().details["field"].as_string() == "x");
}

}  // namespace ct
