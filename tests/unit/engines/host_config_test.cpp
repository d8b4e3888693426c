// engines/host_config: the textual edits of a host's MCP configuration (the parts of the format
// that used to break: inline TOML tables, quoted headers, CRLF, BOMs, huge numbers, merging into
// an existing entry), the diff, and edit_file's cycle on disk (a writer outside the lock).
#include "gateway/mcp_syntax.h"
#include "engines/adapters/host_config.h"

#include <catch2/catch.hpp>

#include <array>
#include <fstream>
#include <sstream>

#include "core/json_parse.h"
#include "unit/temp_dir.h"
#include "gateway/product.h"

namespace ct::host_config {
namespace {

namespace fs = std::filesystem;

constexpr std::array<std::string_view, 3> kTomlOwned = {"command", "args", "url"};
constexpr std::array<std::string_view, 4> kJsonOwned = {"type", "command", "args", "url"};
const std::vector<TomlKey> kStdio = {{"command", "\"ct\""}, {"args", "[\"mcp\"]"}};

json::Value entry(std::string_view text) { return json::parse(text).value(); }

std::string slurp(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

}  // namespace

TEST_CASE("TOML: a parent set as a value (inline table, array of tables) is refused with the fix", "[host_config]") {
  auto inline_parent = set_toml_table("mcp_servers = { a = { command = \"x\" } }\n", "mcp_servers.cleo", kStdio,
                                      kTomlOwned, "config.toml");
  REQUIRE_FALSE(inline_parent);
  CHECK(inline_parent.error().code == ErrorCode::Validation);
  CHECK(inline_parent.error().message ==
        "config.toml:1: mcp_servers is set here as a value (an inline table); mcp_servers.cleo cannot be added as a "
        "table beside it");
  CHECK(mcp_text(inline_parent.error().fix, registry()).find("cleo = { … } inside it by hand") != std::string::npos);
  auto array_parent = set_toml_table("[[mcp_servers]]\nname = \"a\"\n", "mcp_servers.cleo", kStdio, kTomlOwned, "c");
  REQUIRE_FALSE(array_parent);
  CHECK(array_parent.error().details["line"].as_int() == 1);
  // A sibling key that merely starts the same is no parent.
  auto sibling = set_toml_table("mcp_servers_note = 1\n", "mcp_servers.cleo", kStdio, kTomlOwned, "c");
  REQUIRE(sibling);
  CHECK(sibling->changed);
}

TEST_CASE("TOML: quoted keys with ] and = in headers and keys are read", "[host_config]") {
  const std::string before = "[\"weird]key\"]\n\"a=b\" = 1\n'c]d' = \"x\\\"=\"\n";
  auto edit = set_toml_table(before, "mcp_servers.cleo", kStdio, kTomlOwned, "c");
  REQUIRE(edit);
  CHECK(edit->text == before + "\n[mcp_servers.cleo]\ncommand = \"ct\"\nargs = [\"mcp\"]\n");
}

TEST_CASE("TOML and JSON: CRLF stays CRLF, a BOM stays first", "[host_config]") {
  auto toml = set_toml_table("[mcp_servers.cleo]\r\ncommand = \"old\"\r\nurl = \"x\"\r\n", "mcp_servers.cleo", kStdio,
                             kTomlOwned, "c");
  REQUIRE(toml);
  CHECK(toml->text == "[mcp_servers.cleo]\r\ncommand = \"ct\"\r\nargs = [\"mcp\"]\r\n");
  const std::string bom = "\xEF\xBB\xBF";
  auto toml_bom = set_toml_table(bom + "[mcp_servers.cleo]\ncommand = \"ct\"\nargs = [\"mcp\"]\n", "mcp_servers.cleo",
                                 kStdio, kTomlOwned, "c");
  REQUIRE(toml_bom);
  CHECK_FALSE(toml_bom->changed);
  auto json_bom = set_json_server(bom + "{}", "mcpServers", "cleo", entry(R"({"command":"ct"})"), kJsonOwned, "f");
  REQUIRE(json_bom);
  CHECK(json_bom->text.starts_with(bom + "{\n  \"mcpServers\": {"));
  CHECK(json::parse(json_bom->text.substr(3)).has_value());
  auto json_crlf = set_json_server("{\r\n}", "mcpServers", "cleo", entry(R"({"command":"ct"})"), kJsonOwned, "f");
  REQUIRE(json_crlf);
  CHECK(json_crlf->text.find('\n') == json_crlf->text.find("\r\n") + 1);
}

TEST_CASE("JSON: numbers beyond a double are valid and kept as written; bad ones are refused by name",
          "[host_config]") {
  const std::string before = "{\"n\": [1E400, -0.5e-999, 123456789012345678901234567890]}";
  auto edit = set_json_server(before, "mcpServers", "cleo", entry(R"({"command":"ct"})"), kJsonOwned, "f");
  REQUIRE(edit);
  CHECK(edit->text.starts_with("{\"n\": [1E400, -0.5e-999, 123456789012345678901234567890],\n"));
  for (std::string_view bad : {"{\"n\": 01}", "{\"n\": 1e}", "{\"n\": .5}", "{\"n\": 1.}"}) {
    INFO(bad);
    auto refused = set_json_server(bad, "mcpServers", "cleo", entry(R"({"command":"ct"})"), kJsonOwned, "f");
    REQUIRE_FALSE(refused);
    CHECK(refused.error().message.find("invalid value") != std::string::npos);
  }
}

TEST_CASE("JSON: an existing entry is merged member by member, comments and the user's members kept",
          "[host_config]") {
  const std::string before =
      "{\n  \"mcpServers\": {\n    \"cleo\": {\n      // launched by the wrapper\n      \"command\": \"wrap\",\n"
      "      \"env\": {\"T\": \"x\"}, // token\n      \"url\": \"http://old\",\n    },\n  },\n}\n";
  auto edit = set_json_server(before, "mcpServers", "cleo", entry(R"({"command":"ct","args":["mcp"]})"), kJsonOwned,
                              "f");
  REQUIRE(edit);
  CHECK(edit->text ==
        "{\n  \"mcpServers\": {\n    \"cleo\": {\n      // launched by the wrapper\n      \"command\": \"ct\",\n"
        "      \"env\": {\"T\": \"x\"},\n      \"args\": [\"mcp\"],\n    },\n  },\n}\n");
  // An entry written on one line gets its members on that line.
  auto one_line = set_json_server(R"({"mcpServers": {"cleo": {"command": "x", "cwd": "/w"}}})", "mcpServers", "cleo",
                                  entry(R"({"command":"ct","args":["mcp"]})"), kJsonOwned, "f");
  REQUIRE(one_line);
  CHECK(one_line->text == R"({"mcpServers": {"cleo": {"command": "ct", "cwd": "/w", "args": ["mcp"]}}})");
  // Only owned members and nothing of the user's: the entry is rewritten whole.
  auto owned_only = set_json_server(R"({"mcpServers": {"cleo": {"url": "x"}}})", "mcpServers", "cleo",
                                    entry(R"({"command":"ct"})"), kJsonOwned, "f");
  REQUIRE(owned_only);
  CHECK(json::parse(owned_only->text).value() == json::parse(R"({"mcpServers":{"cleo":{"command":"ct"}}})").value());
}

TEST_CASE("the diff marks a last line without a newline", "[host_config]") {
  CHECK(line_diff("{}", "{\n}\n", "f") == "--- f\n+++ f\n@@ -1,1 +1,2 @@\n-{}\n\\ No newline at end of file\n+{\n+}\n");
  CHECK(line_diff("a\nb", "a\nb\nc\n", "f") ==
        "--- f\n+++ f\n@@ -1,2 +1,3 @@\n a\n-b\n\\ No newline at end of file\n+b\n+c\n");
  CHECK(line_diff("a\nb\n", "a\nc", "f") == "--- f\n+++ f\n@@ -1,2 +1,2 @@\n a\n-b\n+c\n\\ No newline at end of file\n");
}

TEST_CASE("edit_file redoes an edit when another program changed the file meanwhile", "[host_config]") {
  test::TempDir dir;
  const fs::path file = dir.path() / "config.json";
  { std::ofstream(file) << "{\"a\": 1}\n"; }
  int calls = 0;
  Editor editor = [&](std::string_view text) -> Result<Edit> {
    if (++calls == 1) std::ofstream(file) << "{\"a\": 2}\n";  // the host writes while CLEO edits
    return set_json_server(text, "mcpServers", "cleo", entry(R"({"command":"ct"})"), kJsonOwned, "config.json");
  };
  auto done = edit_file(file, "config.json", editor, false, 0);
  REQUIRE(done);
  CHECK(calls == 2);
  CHECK(done->before == "{\"a\": 2}\n");
  const std::string text = slurp(file);
  CHECK(text.starts_with("{\"a\": 2,\n"));
  REQUIRE(done->backup);
  CHECK(slurp(*done->backup) == "{\"a\": 2}\n");

  // A file that never holds still is refused, and left to its writer.
  Editor restless = [&](std::string_view current) -> Result<Edit> {
    std::ofstream(file) << "{\"b\": " << ++calls << "}\n";
    return set_json_server(current, "mcpServers", "cleo", entry(R"({"command":"ct2"})"), kJsonOwned, "config.json");
  };
  auto refused = edit_file(file, "config.json", restless, false, 0);
  REQUIRE_FALSE(refused);
  CHECK(refused.error().code == ErrorCode::FileError);
  CHECK(refused.error().details["reason"].as_string() == "changing");
  CHECK(slurp(file).starts_with("{\"b\": "));
}

// ---- hooks ----------------------------------------------------------------------------------

/// The JSON of a text whose only comment is the line "  // the user's settings".
json::Value without_comment(std::string text) {
  const std::string comment = "  // the user's settings\n";
  if (auto at = text.find(comment); at != std::string::npos) text.erase(at, comment.size());
  return json::parse(text).value();
}

bool ours(const json::Value& item) {
  return item["command"].is_string() && item["command"].as_string().find(" briefing --hook ") != std::string::npos;
}

TEST_CASE("JSON hooks: CLEO's entry joins hooks.<event> once; the user's hooks and comments stay", "[host_config][hooks]") {
  const json::Value mine = entry(R"({"command":"ct briefing --hook x","timeout":30})");
  // A new file.
  auto created = set_json_hook("", "SessionStart", mine, ours, json::Value(), "s.json");
  REQUIRE(created);
  CHECK(json::parse(created->text).value() == entry(R"({"hooks":{"SessionStart":[{"command":"ct briefing --hook x","timeout":30}]}})"));

  // Beside the user's own: other keys, other events, a hook of theirs, comments outside the array.
  const std::string file = "{\n  // the user's settings\n  \"model\": \"opus\",\n  \"hooks\": {\n    \"Stop\": [],\n"
                           "    \"SessionStart\": [{\"command\": \"echo hi\"}]\n  }\n}\n";
  auto merged = set_json_hook(file, "SessionStart", mine, ours, json::Value(), "s.json");
  REQUIRE(merged);
  CHECK(merged->changed);
  CHECK(merged->text.starts_with("{\n  // the user's settings\n  \"model\": \"opus\",\n  \"hooks\": {\n    \"Stop\": [],\n"));
  CHECK(without_comment(merged->text)["hooks"]["SessionStart"] == entry(R"([{"command":"echo hi"},{"command":"ct briefing --hook x","timeout":30}])"));
  // Again: nothing changes.
  auto again = set_json_hook(merged->text, "SessionStart", mine, ours, json::Value(), "s.json");
  REQUIRE(again);
  CHECK_FALSE(again->changed);
  CHECK(again->text == merged->text);
  // A changed entry (another ct path) replaces CLEO's old one where it was; the user's stays.
  auto moved = set_json_hook(merged->text, "SessionStart", entry(R"({"command":"/opt/ct briefing --hook x","timeout":30})"),
                             ours, json::Value(), "s.json");
  REQUIRE(moved);
  CHECK(without_comment(moved->text)["hooks"]["SessionStart"] ==
        entry(R"([{"command":"echo hi"},{"command":"/opt/ct briefing --hook x","timeout":30}])"));
  // An event missing from an existing hooks object.
  auto other = set_json_hook(R"({"hooks":{"Stop":[]}})", "SessionStart", mine, ours, json::Value(), "s.json");
  REQUIRE(other);
  CHECK(json::parse(other->text).value() ==
        entry(R"({"hooks":{"Stop":[],"SessionStart":[{"command":"ct briefing --hook x","timeout":30}]}})"));
}

TEST_CASE("JSON hooks: required top-level members are added once; wrong shapes are refused by line", "[host_config][hooks]") {
  const json::Value mine = entry(R"({"command":"ct briefing --hook cursor"})");
  const json::Value top = entry(R"({"version":1})");
  auto fresh = set_json_hook("", "sessionStart", mine, ours, top, "hooks.json");
  REQUIRE(fresh);
  CHECK(json::parse(fresh->text).value() == entry(R"({"version":1,"hooks":{"sessionStart":[{"command":"ct briefing --hook cursor"}]}})"));
  auto kept = set_json_hook(R"({"version":2,"hooks":{}})", "sessionStart", mine, ours, top, "hooks.json");
  REQUIRE(kept);
  CHECK(json::parse(kept->text).value()["version"] == json::Value(2));  // never changed
  auto missing = set_json_hook(R"({"hooks":{}})", "sessionStart", mine, ours, top, "hooks.json");
  REQUIRE(missing);
  CHECK(json::parse(missing->text).value()["version"] == json::Value(1));

  auto not_object = set_json_hook("{\n  \"hooks\": []\n}", "SessionStart", mine, ours, json::Value(), "s.json");
  REQUIRE_FALSE(not_object);
  CHECK(not_object.error().code == ErrorCode::Validation);
  CHECK(not_object.error().message.find("s.json:2") != std::string::npos);
  auto not_array = set_json_hook(R"({"hooks":{"SessionStart":{}}})", "SessionStart", mine, ours, json::Value(), "s.json");
  REQUIRE_FALSE(not_array);
  CHECK(not_array.error().message.find("not an array") != std::string::npos);
  CHECK_FALSE(set_json_hook("{\"hooks\": ", "SessionStart", mine, ours, json::Value(), "s.json"));
  // A byte order mark stays first.
  auto bom = set_json_hook("\xEF\xBB\xBF{}", "SessionStart", mine, ours, json::Value(), "s.json");
  REQUIRE(bom);
  CHECK(bom->text.starts_with("\xEF\xBB\xBF{"));
}

}  // namespace ct::host_config
