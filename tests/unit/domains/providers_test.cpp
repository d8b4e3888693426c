// providers domain: the host table, the textual config edits (JSON, JSONC, TOML), install with
// its backup, dry run, idempotence and refusals, detect, and providers.inject. Every user-scope
// file lives in a temporary HOME given to the router (never the real one).
#include <catch2/catch.hpp>

#include <sys/stat.h>

#include <fstream>
#include <map>
#include <sstream>

#include "gateway/mcp_syntax.h"
#include "unit/core/env_guard.h"
#include "domains/providers/providers.h"
#include "engines/adapters/host_config.h"
#include "engines/adapters/subprocess.h"
#include "unit/domains/provider_files.h"
#include "unit/test_support.h"

using namespace ct;
using ct::test::backups_of;
using ct::test::code_of;
using ct::test::slurp;
using ct::test::spit;
namespace fs = std::filesystem;

namespace {

/// A router for a project with a temporary HOME; `person`: the CLI (may leave the project).
class HomeProject {
 public:
  explicit HomeProject(bool person) {
    fs::create_directories(home_.path());
    RouterOptions options;
    options.home = home_.path();
    if (person) caller_.principal = test::test_person();
    router_ = std::make_unique<Router>(registry(), Workspace::open(project_.dir()), options,
                                       std::make_unique<FixedClock>(*parse_iso8601("2026-01-01T00:00:00Z")));
  }
  Envelope query(std::string domain, std::string operation, std::string_view params = "{}") {
    return router_->dispatch({Gateway::Query, std::move(domain), std::move(operation), test::parse_json(params), caller_});
  }
  Envelope mutate(std::string domain, std::string operation, std::string_view params = "{}") {
    return router_->dispatch({Gateway::Mutate, std::move(domain), std::move(operation), test::parse_json(params), caller_});
  }
  const fs::path& dir() const { return project_.dir(); }
  const fs::path& home() const { return home_.path(); }
  test::Project& project() { return project_; }

 private:
  test::Project project_;
  test::TempDir home_;
  Caller caller_;
  std::unique_ptr<Router> router_;
};

json::Value stdio_entry(std::string_view host) {
  return providers::json_entry(*providers::find(host), providers::ServerLaunch{});
}

}  // namespace

TEST_CASE("the host table: every host has its files, and the entries have each host's shape", "[providers]") {
  REQUIRE(providers::ids() == std::vector<std::string>{"claude", "codex", "cursor", "gemini", "windsurf", "vscode", "opencode"});
  for (const auto& p : providers::all()) {
    INFO(p.id);
    CHECK(!p.binaries.empty());
    CHECK(!p.instruction_files.empty());
    CHECK((p.inject_target == "CLAUDE.md" || p.inject_target == "AGENTS.md" || p.inject_target == "GEMINI.md"));
    CHECK(!p.user_config.empty());
  }
  CHECK(stdio_entry("claude") == test::parse_json(R"({"command":"ct","args":["mcp"]})"));
  CHECK(stdio_entry("vscode") == test::parse_json(R"({"type":"stdio","command":"ct","args":["mcp"]})"));
  CHECK(stdio_entry("opencode") == test::parse_json(R"({"type":"local","command":["ct","mcp"],"enabled":true})"));
  providers::ServerLaunch http{.transport = providers::Transport::Http, .url = "http://h/mcp"};
  CHECK(providers::json_entry(*providers::find("gemini"), http) == test::parse_json(R"({"httpUrl":"http://h/mcp"})"));
  CHECK(providers::json_entry(*providers::find("windsurf"), http) == test::parse_json(R"({"serverUrl":"http://h/mcp"})"));
  CHECK(providers::snippet(*providers::find("codex"), providers::ServerLaunch{}) ==
        "[mcp_servers.cleo]\ncommand = \"ct\"\nargs = [\"mcp\"]\n");
}

TEST_CASE("JSON merge keeps the other entries, their order and the file's indentation", "[providers][host_config]") {
  const std::string before =
      "{\n    \"zeta\": 1,\n    \"mcpServers\": {\n        \"other\": {\"command\": \"x\"}\n    },\n    \"alpha\": true\n}\n";
  auto edit = host_config::set_json_server(before, "mcpServers", "cleo", stdio_entry("claude"), providers::json_owned_keys(), ".mcp.json");
  REQUIRE(edit);
  CHECK(edit->changed);
  CHECK(edit->text ==
        "{\n    \"zeta\": 1,\n    \"mcpServers\": {\n        \"other\": {\"command\": \"x\"},\n"
        "        \"cleo\": {\n            \"command\": \"ct\",\n            \"args\": [\"mcp\"]\n        }\n    },\n"
        "    \"alpha\": true\n}\n");
  // The result is JSON with every original member, in order, plus cleo.
  auto parsed = json::parse(edit->text);
  REQUIRE(parsed);
  std::vector<std::string> keys;
  for (const auto& [key, value] : parsed->as_object()) keys.push_back(key);
  CHECK(keys == std::vector<std::string>{"zeta", "mcpServers", "alpha"});
  CHECK((*parsed)["mcpServers"]["other"]["command"].as_string() == "x");

  // Again: nothing to do.
  auto again = host_config::set_json_server(edit->text, "mcpServers", "cleo", stdio_entry("claude"), providers::json_owned_keys(), ".mcp.json");
  REQUIRE(again);
  CHECK_FALSE(again->changed);
  CHECK(again->text == edit->text);

  // A missing servers key is added as the last member; an empty file becomes a document.
  auto added = host_config::set_json_server("{\"theme\": \"dark\"}\n", "servers", "cleo", stdio_entry("vscode"), providers::json_owned_keys(), "f");
  REQUIRE(added);
  CHECK(added->text == "{\"theme\": \"dark\",\n  \"servers\": {\n    \"cleo\": {\n      \"type\": \"stdio\",\n"
                       "      \"command\": \"ct\",\n      \"args\": [\"mcp\"]\n    }\n  }\n}\n");
  auto fresh = host_config::set_json_server("", "mcpServers", "cleo", stdio_entry("claude"), providers::json_owned_keys(), "f");
  REQUIRE(fresh);
  CHECK(json::parse(fresh->text).value() == test::parse_json(R"({"mcpServers":{"cleo":{"command":"ct","args":["mcp"]}}})"));
}

TEST_CASE("JSONC merge keeps comments and trailing commas; a changed entry is replaced in place", "[providers][host_config]") {
  const std::string before =
      "// VS Code MCP servers\n{\n  \"servers\": {\n    /* the GitHub one */\n    \"github\": {\"url\": \"https://x\"}, // keep\n"
      "  },\n  \"inputs\": [],\n}\n";
  auto edit = host_config::set_json_server(before, "servers", "cleo", stdio_entry("vscode"), providers::json_owned_keys(), ".vscode/mcp.json");
  REQUIRE(edit);
  CHECK(edit->text.starts_with("// VS Code MCP servers\n"));
  CHECK(edit->text.find("/* the GitHub one */") != std::string::npos);
  CHECK(edit->text.find("\"github\": {\"url\": \"https://x\"}, // keep\n    \"cleo\": {") != std::string::npos);
  CHECK(edit->text.find("\"args\": [\"mcp\"]\n    },\n  },\n  \"inputs\": [],\n}\n") != std::string::npos);

  // A different entry (another transport) replaces only the cleo value.
  providers::ServerLaunch http{.transport = providers::Transport::Http, .url = "http://127.0.0.1:9/mcp"};
  auto replaced = host_config::set_json_server(edit->text, "servers", "cleo",
                                               providers::json_entry(*providers::find("vscode"), http), providers::json_owned_keys(), "f");
  REQUIRE(replaced);
  CHECK(replaced->changed);
  CHECK(replaced->text.find("// keep") != std::string::npos);
  CHECK(replaced->text.find("\"cleo\": {\n      \"type\": \"http\",\n      \"url\": \"http://127.0.0.1:9/mcp\"\n    },") !=
        std::string::npos);
  CHECK(replaced->text.find("command") == std::string::npos);

  // CRLF files get CRLF lines.
  auto crlf = host_config::set_json_server("{\r\n  \"a\": 1\r\n}\r\n", "mcpServers", "cleo", stdio_entry("claude"), providers::json_owned_keys(), "f");
  REQUIRE(crlf);
  CHECK(crlf->text.find("\n") == crlf->text.find("\r\n") + 1);
  CHECK(crlf->text.find("\"mcpServers\": {\r\n") != std::string::npos);
}

TEST_CASE("invalid JSON is refused with its line", "[providers][host_config]") {
  auto bad = host_config::set_json_server("{\n  \"a\": 1\n  \"b\": 2\n}\n", "mcpServers", "cleo", stdio_entry("claude"), providers::json_owned_keys(), "x.json");
  REQUIRE_FALSE(bad);
  CHECK(bad.error().code == ErrorCode::Validation);
  CHECK(bad.error().message.starts_with("x.json:3: "));
  CHECK(bad.error().details["line"].as_int() == 3);
  CHECK_FALSE(host_config::set_json_server("[1]", "mcpServers", "cleo", stdio_entry("claude"), providers::json_owned_keys(), "x"));
  CHECK_FALSE(host_config::set_json_server("{\"mcpServers\": []}", "mcpServers", "cleo", stdio_entry("claude"), providers::json_owned_keys(), "x"));
  CHECK_FALSE(host_config::set_json_server("{/* open", "mcpServers", "cleo", stdio_entry("claude"), providers::json_owned_keys(), "x"));
}

TEST_CASE("TOML: [mcp_servers.cleo] is edited in place, the rest of the file kept", "[providers][host_config]") {
  const providers::Provider& codex = *providers::find("codex");
  auto owned = providers::toml_owned_keys(codex);
  const std::string before =
      "# my Codex config\nmodel = \"o3\"\n\n[mcp_servers.other]\ncommand = \"x\"\n\n"
      "[mcp_servers.cleo]\ncommand = \"old\"  # was here\nenv = { A = \"1\" }\n\n[profiles.fast]\nmodel = \"mini\"\n";
  auto edit = host_config::set_toml_table(before, "mcp_servers.cleo", providers::toml_keys(codex, {}), owned, "config.toml");
  REQUIRE(edit);
  CHECK(edit->text ==
        "# my Codex config\nmodel = \"o3\"\n\n[mcp_servers.other]\ncommand = \"x\"\n\n"
        "[mcp_servers.cleo]\ncommand = \"ct\"\nenv = { A = \"1\" }\nargs = [\"mcp\"]\n\n[profiles.fast]\nmodel = \"mini\"\n");
  auto again = host_config::set_toml_table(edit->text, "mcp_servers.cleo", providers::toml_keys(codex, {}), owned, "f");
  REQUIRE(again);
  CHECK_FALSE(again->changed);
  // Same value spelled otherwise (multi-line array, trailing comma): unchanged.
  auto spelled = host_config::set_toml_table("[mcp_servers.cleo]\ncommand = \"ct\"\nargs = [\n  \"mcp\",\n]\n",
                                             "mcp_servers.cleo", providers::toml_keys(codex, {}), owned, "f");
  REQUIRE(spelled);
  CHECK_FALSE(spelled->changed);
  // Switching to HTTP drops command and args.
  providers::ServerLaunch http{.transport = providers::Transport::Http, .url = "http://h/mcp"};
  auto switched = host_config::set_toml_table(edit->text, "mcp_servers.cleo", providers::toml_keys(codex, http), owned, "f");
  REQUIRE(switched);
  CHECK(switched->text.find("[mcp_servers.cleo]\nenv = { A = \"1\" }\nurl = \"http://h/mcp\"\n\n[profiles.fast]") !=
        std::string::npos);
  // A new table goes at the end after a blank line.
  auto appended = host_config::set_toml_table("model = \"o3\"", "mcp_servers.cleo", providers::toml_keys(codex, {}), owned, "f");
  REQUIRE(appended);
  CHECK(appended->text == "model = \"o3\"\n\n[mcp_servers.cleo]\ncommand = \"ct\"\nargs = [\"mcp\"]\n");
}

TEST_CASE("TOML: invalid lines and tables defined another way are refused", "[providers][host_config]") {
  const providers::Provider& codex = *providers::find("codex");
  auto owned = providers::toml_owned_keys(codex);
  auto bad = host_config::set_toml_table("a = 1\nthis is not toml\n", "mcp_servers.cleo", providers::toml_keys(codex, {}), owned, "c.toml");
  REQUIRE_FALSE(bad);
  CHECK(bad.error().code == ErrorCode::Validation);
  CHECK(bad.error().details["line"].as_int() == 2);
  CHECK_FALSE(host_config::set_toml_table("a = [1,\n", "mcp_servers.cleo", providers::toml_keys(codex, {}), owned, "c"));
  auto inline_table = host_config::set_toml_table("[mcp_servers]\ncleo = { command = \"ct\" }\n", "mcp_servers.cleo",
                                                  providers::toml_keys(codex, {}), owned, "c");
  REQUIRE_FALSE(inline_table);
  CHECK(inline_table.error().details["line"].as_int() == 2);
  CHECK_FALSE(host_config::set_toml_table("mcp_servers.cleo.command = \"x\"\n", "mcp_servers.cleo",
                                          providers::toml_keys(codex, {}), owned, "c"));
}

TEST_CASE("the diff shows the changed lines with context", "[providers][host_config]") {
  CHECK(host_config::line_diff("a\nb\n", "a\nb\n", "f").empty());
  CHECK(host_config::line_diff("a\nb\nc\nd\ne\n", "a\nb\nc\nX\ne\n", "f") ==
        "--- f\n+++ f\n@@ -2,4 +2,4 @@\n b\n c\n-d\n+X\n e\n");
  CHECK(host_config::line_diff("", "x\n", "f") == "--- f\n+++ f\n@@ -0,0 +1,1 @@\n+x\n");
}

TEST_CASE("providers.install: project file merged, backup first, idempotent, dry run writes nothing", "[providers]") {
  HomeProject p(/*person=*/false);
  const fs::path file = p.dir() / ".mcp.json";
  const std::string original = "{\n  \"mcpServers\": {\n    \"other\": {\"command\": \"x\"}\n  }\n}\n";
  spit(file, original);

  auto dry = p.mutate("providers", "install", R"({"provider":"claude","dryRun":true})");
  REQUIRE(dry.success);
  CHECK(dry.data["action"].as_string() == "would be updated");
  CHECK(dry.data["diff"].as_string().find("+    \"cleo\": {") != std::string::npos);
  CHECK(slurp(file) == original);
  CHECK(backups_of(file).empty());

  auto done = p.mutate("providers", "install", R"({"provider":"claude"})");
  REQUIRE(done.success);
  CHECK(done.data["action"].as_string() == "updated");
  CHECK(done.data["file"].as_string() == ".mcp.json");
  auto written = json::parse(slurp(file));
  REQUIRE(written);
  CHECK((*written)["mcpServers"]["other"]["command"].as_string() == "x");
  CHECK((*written)["mcpServers"]["cleo"] == test::parse_json(R"({"command":"ct","args":["mcp"]})"));
  auto backups = backups_of(file);
  REQUIRE(backups.size() == 1);
  CHECK(slurp(backups.front()) == original);
  CHECK(done.data["backup"].as_string() == backups.front().filename().string());

  auto repeat = p.mutate("providers", "install", R"({"provider":"claude"})");
  CHECK(code_of(repeat) == "E_NO_CHANGE");
  CHECK(repeat.data["action"].as_string() == "unchanged");
  CHECK(backups_of(file).size() == 1);

  // A new file is created (no backup: there was nothing).
  auto created = p.mutate("providers", "install", R"({"provider":"opencode"})");
  REQUIRE(created.success);
  CHECK(created.data["action"].as_string() == "created");
  CHECK_FALSE(created.data.contains("backup"));
  CHECK(json::parse(slurp(p.dir() / "opencode.json")).value()["mcp"]["cleo"]["type"].as_string() == "local");
}

TEST_CASE("providers.install: an invalid file is refused and left untouched", "[providers]") {
  HomeProject p(false);
  const fs::path file = p.dir() / ".cursor" / "mcp.json";
  const std::string broken = "{\n  \"mcpServers\": {\n    \"a\": {,}\n  }\n}\n";
  spit(file, broken);
  auto refused = p.mutate("providers", "install", R"({"provider":"cursor"})");
  CHECK(code_of(refused) == "E_VALIDATION");
  CHECK(refused.error->message.starts_with(".cursor/mcp.json:3: "));
  CHECK(slurp(file) == broken);
  CHECK(backups_of(file).empty());
  // A folder where the file should be.
  fs::create_directories(p.dir() / ".vscode" / "mcp.json");
  CHECK(code_of(p.mutate("providers", "install", R"({"provider":"vscode"})")) == "E_FILE_ERROR");
  // Hosts without a file for a scope, and url or tokenEnv without http.
  auto no_project = p.mutate("providers", "install", R"({"provider":"windsurf","scope":"project"})");
  CHECK(code_of(no_project) == "E_INVALID_INPUT");
  CHECK(mcp_text(no_project.error->fix, registry()).find("\"scope\":\"user\"") != std::string::npos);
  CHECK(code_of(p.mutate("providers", "install", R"({"provider":"claude","url":"http://x/mcp"})")) == "E_INVALID_PARAMS");
  auto token_stdio = p.mutate("providers", "install", R"({"provider":"claude","tokenEnv":"CLEO_SERVE_TOKEN"})");
  CHECK(code_of(token_stdio) == "E_INVALID_PARAMS");
  CHECK(token_stdio.error->details["field"].as_string() == "tokenEnv");
  CHECK(code_of(p.mutate("providers", "install",
                         R"({"provider":"claude","transport":"http","tokenEnv":"X}; rm -rf"})")) == "E_VALIDATION");
  CHECK(code_of(p.mutate("providers", "install", R"({"provider":"nope"})")) == "E_VALIDATION");
}

TEST_CASE("providers.install: user scope writes into HOME for a person, never for an agent", "[providers]") {
  SECTION("an agent (MCP) without security.allowOutsideProject is refused, even for a dry run") {
    HomeProject agent(false);
    for (std::string_view params : {R"({"provider":"codex","scope":"user"})", R"({"provider":"codex","scope":"user","dryRun":true})"}) {
      auto refused = agent.mutate("providers", "install", params);
      CHECK(code_of(refused) == "E_INVALID_INPUT");
      CHECK(refused.error->details["field"].as_string() == "scope");
      // Its fix says who can let agents do it: a person, not the agent itself.
      CHECK(mcp_text(refused.error->fix, registry()).find("a person runs `ct config set security.allowOutsideProject true`") !=
            std::string::npos);
    }
    CHECK_FALSE(fs::exists(agent.home() / ".codex"));
    // The project may allow it, when a person says so; the agent cannot.
    CHECK(code_of(agent.mutate("system", "config.set", R"({"key":"security.allowOutsideProject","value":"true"})")) ==
          "E_MUTATION_DISABLED");
    REQUIRE(agent.project().mutate_as_person("system", "config.set",
                                             R"({"key":"security.allowOutsideProject","value":"true"})").success);
    CHECK(agent.mutate("providers", "install", R"({"provider":"codex","scope":"user"})").success);
    CHECK(fs::exists(agent.home() / ".codex" / "config.toml"));
  }
  SECTION("a person: TOML kept, backup beside it, HTTP switch") {
    HomeProject person(true);
    const fs::path file = person.home() / ".codex" / "config.toml";
    spit(file, "model = \"o3\"\n");
    auto done = person.mutate("providers", "install", R"({"provider":"codex","scope":"user"})");
    REQUIRE(done.success);
    CHECK(done.data["file"].as_string() == "~/.codex/config.toml");
    // In the user's own file: the installed ct's absolute path, when the running program has one beside it.
    auto installed = installed_program("ct");
    const std::string command = providers::default_command(true, installed ? std::optional(installed->string()) : std::nullopt);
    CHECK(slurp(file) == "model = \"o3\"\n\n[mcp_servers.cleo]\ncommand = " + host_config::toml_string(command) +
                             "\nargs = [\"mcp\"]\n");
    CHECK(backups_of(file).size() == 1);
    auto http = person.mutate("providers", "install", R"({"provider":"codex","scope":"user","transport":"http"})");
    REQUIRE(http.success);
    CHECK(slurp(file) == "model = \"o3\"\n\n[mcp_servers.cleo]\nurl = \"http://127.0.0.1:8808/mcp\"\n");
    CHECK(backups_of(file).size() == 2);
    auto windsurf = person.mutate("providers", "install", R"({"provider":"windsurf","scope":"user"})");
    REQUIRE(windsurf.success);
    CHECK(fs::exists(person.home() / ".codeium" / "windsurf" / "mcp_config.json"));
  }
}

TEST_CASE("providers.install: a symlinked parent folder that leads outside the project is refused", "[providers]") {
  test::TempDir elsewhere;
  SECTION("an agent: refused, nothing written outside") {
    HomeProject agent(/*person=*/false);
    fs::create_directory_symlink(elsewhere.path(), agent.dir() / ".vscode");
    for (std::string_view params : {R"({"provider":"vscode"})", R"({"provider":"vscode","dryRun":true})"}) {
      auto refused = agent.mutate("providers", "install", params);
      CHECK(code_of(refused) == "E_INVALID_INPUT");
      CHECK(refused.error->message.find(".vscode/mcp.json leads outside the project") != std::string::npos);
    }
    CHECK(fs::is_empty(elsewhere.path()));
    // Deeper: a link two folders up from the file (Cursor's .cursor/ holding a link is the same).
    fs::create_directories(elsewhere.path() / "g");
    fs::create_directory_symlink(elsewhere.path() / "g", agent.dir() / ".gemini");
    CHECK(code_of(agent.mutate("providers", "install", R"({"provider":"gemini"})")) == "E_INVALID_INPUT");
    CHECK(fs::is_empty(elsewhere.path() / "g"));
  }
  SECTION("a link that stays inside the project is followed") {
    HomeProject agent(false);
    fs::create_directories(agent.dir() / "shared" / "vscode");
    fs::create_directory_symlink(agent.dir() / "shared" / "vscode", agent.dir() / ".vscode");
    REQUIRE(agent.mutate("providers", "install", R"({"provider":"vscode"})").success);
    CHECK(fs::exists(agent.dir() / "shared" / "vscode" / "mcp.json"));
  }
  SECTION("a person may write through it") {
    HomeProject person(true);
    fs::create_directory_symlink(elsewhere.path(), person.dir() / ".vscode");
    REQUIRE(person.mutate("providers", "install", R"({"provider":"vscode"})").success);
    CHECK(fs::exists(elsewhere.path() / "mcp.json"));
  }
}

TEST_CASE("providers.install: Codex in the project's .codex/config.toml, with what a trusted project needs", "[providers]") {
  HomeProject agent(false);
  auto done = agent.mutate("providers", "install", R"({"provider":"codex"})");
  REQUIRE(done.success);
  CHECK(done.data["scope"].as_string() == "project");
  CHECK(done.data["file"].as_string() == ".codex/config.toml");
  CHECK(slurp(agent.dir() / ".codex" / "config.toml") == "[mcp_servers.cleo]\ncommand = \"ct\"\nargs = [\"mcp\"]\n");
  const std::string note = done.data["note"].as_string();
  CHECK(note.find("trust the project") != std::string::npos);
  CHECK(note.find("check: codex mcp list") != std::string::npos);
  CHECK_FALSE(fs::exists(agent.home() / ".codex"));
}

TEST_CASE("providers.install: the command is portable in a project, the installed ct's path in a user's file", "[providers]") {
  CHECK(providers::default_command(false, "/opt/cleo/bin/ct") == "ct");
  CHECK(providers::default_command(true, "/opt/cleo/bin/ct") == "/opt/cleo/bin/ct");
  CHECK(providers::default_command(true, std::nullopt) == "ct");
  HomeProject p(false);
  auto done = p.mutate("providers", "install", R"({"provider":"claude"})");
  REQUIRE(done.success);
  CHECK(json::parse(slurp(p.dir() / ".mcp.json")).value()["mcpServers"]["cleo"]["command"].as_string() == "ct");
  // The note says the entry waits for approval, that ct must be on the host's PATH, and how to check.
  const std::string note = done.data["note"].as_string();
  CHECK(note.find("pending until you approve it") != std::string::npos);
  CHECK(note.find("`ct` must be on the PATH") != std::string::npos);
  CHECK(note.find("check: claude mcp list") != std::string::npos);
  // An explicit command wins in either scope.
  HomeProject person(true);
  auto user = person.mutate("providers", "install", R"({"provider":"gemini","scope":"user","command":"/usr/local/bin/ct"})");
  REQUIRE(user.success);
  CHECK(json::parse(slurp(person.home() / ".gemini" / "settings.json")).value()["mcpServers"]["cleo"]["command"].as_string() ==
        "/usr/local/bin/ct");
  const std::string user_note = user.data["note"].as_string();
  CHECK(user_note.find("trust the folder") == std::string::npos);  // no approval for the user's own file
  CHECK(user_note.find("check: gemini mcp list") != std::string::npos);
}

TEST_CASE("providers.install: a server with a token gets a header naming the variable, never the token", "[providers]") {
  // Each host's own reference to an environment variable, verified in its loader.
  const std::map<std::string, std::string> header = {
      {"claude", "Bearer ${CLEO_SERVE_TOKEN}"}, {"cursor", "Bearer ${env:CLEO_SERVE_TOKEN}"},
      {"gemini", "Bearer ${CLEO_SERVE_TOKEN}"}, {"windsurf", "Bearer ${env:CLEO_SERVE_TOKEN}"},
      {"vscode", "Bearer ${env:CLEO_SERVE_TOKEN}"}, {"opencode", "Bearer {env:CLEO_SERVE_TOKEN}"}};
  providers::ServerLaunch http{.transport = providers::Transport::Http, .url = "http://h/mcp", .token_env = "CLEO_SERVE_TOKEN"};
  for (const auto& [id, value] : header) {
    INFO(id);
    const auto& provider = *providers::find(id);
    REQUIRE(providers::check_launch(provider, http));
    CHECK(providers::json_entry(provider, http)["headers"]["Authorization"].as_string() == value);
  }
  CHECK(providers::snippet(*providers::find("codex"), http) ==
        "[mcp_servers.cleo]\nurl = \"http://h/mcp\"\nbearer_token_env_var = \"CLEO_SERVE_TOKEN\"\n");
  // A host that cannot reference a variable is refused rather than given the secret.
  providers::Provider plain = *providers::find("cursor");
  plain.token_env = "";
  auto refused = providers::check_launch(plain, http);
  REQUIRE_FALSE(refused);
  CHECK(refused.error().code == ErrorCode::InvalidInput);
  CHECK(refused.error().details["field"].as_string() == "tokenEnv");
  CHECK(providers::check_launch(plain, providers::ServerLaunch{.transport = providers::Transport::Http, .url = "http://h/mcp"}));

  HomeProject person(true);
  auto claude = person.mutate("providers", "install",
                              R"({"provider":"claude","transport":"http","tokenEnv":"CLEO_SERVE_TOKEN"})");
  REQUIRE(claude.success);
  CHECK(json::parse(slurp(person.dir() / ".mcp.json")).value()["mcpServers"]["cleo"] ==
        test::parse_json(R"({"type":"http","url":"http://127.0.0.1:8808/mcp",)"
                         R"("headers":{"Authorization":"Bearer ${CLEO_SERVE_TOKEN}"}})"));
  CHECK(claude.data["note"].as_string().find("needs CLEO_SERVE_TOKEN set") != std::string::npos);
  // Codex: the key names the variable; dropping the token drops the key CLEO wrote.
  const fs::path codex = person.home() / ".codex" / "config.toml";
  REQUIRE(person.mutate("providers", "install",
                        R"({"provider":"codex","scope":"user","transport":"http","tokenEnv":"MY_TOKEN"})").success);
  CHECK(slurp(codex) == "[mcp_servers.cleo]\nurl = \"http://127.0.0.1:8808/mcp\"\nbearer_token_env_var = \"MY_TOKEN\"\n");
  REQUIRE(person.mutate("providers", "install", R"({"provider":"codex","scope":"user","transport":"http"})").success);
  CHECK(slurp(codex) == "[mcp_servers.cleo]\nurl = \"http://127.0.0.1:8808/mcp\"\n");
}

TEST_CASE("providers.detect: a program on PATH and folders in the project and home", "[providers]") {
  HomeProject p(true);
  test::TempDir bin;
  const fs::path fake = bin.path() / "gemini";
  spit(fake, "#!/bin/sh\nexit 0\n");
  ::chmod(fake.c_str(), 0755);
  spit(bin.path() / "codex", "not executable");
  ct::testing::EnvGuard path("PATH", bin.path().string());
  fs::create_directories(p.dir() / ".cursor");
  fs::create_directories(p.home() / ".codeium" / "windsurf");

  auto found = p.query("providers", "detect");
  REQUIRE(found.success);
  CHECK(found.data["detected"] == test::parse_json(R"(["cursor","gemini","windsurf"])"));
  for (const auto& row : found.data["providers"].as_array()) {
    const std::string& id = row["id"].as_string();
    if (id == "gemini") CHECK(row["programs"].as_array().front()["path"].as_string() == fake.string());
    if (id == "cursor") CHECK(row["project"].as_bool());
    if (id == "windsurf") CHECK(row["home"].as_bool());
    if (id == "codex") CHECK_FALSE(row["detected"].as_bool());
  }
}

TEST_CASE("providers.list and show come from the table", "[providers]") {
  HomeProject p(false);
  auto all = p.query("providers", "list");
  REQUIRE(all.success);
  CHECK(all.data.size() == providers::all().size());
  auto codex = p.query("providers", "show", R"({"provider":"codex"})");
  REQUIRE(codex.success);
  CHECK(codex.data["configFormat"].as_string() == "toml");
  CHECK(codex.data["userConfig"].as_string() == "~/.codex/config.toml");
  CHECK(codex.data["projectConfig"].as_string() == ".codex/config.toml");
  auto windsurf = p.query("providers", "show", R"({"provider":"windsurf"})");
  REQUIRE(windsurf.success);
  CHECK(windsurf.data["projectConfig"].is_null());
  CHECK(codex.data["headless"] == test::parse_json(R"(["codex","exec"])"));
  CHECK(codex.data["entries"]["http"].as_string() == "[mcp_servers.cleo]\nurl = \"http://127.0.0.1:8808/mcp\"\n");
}

TEST_CASE("providers.inject writes the host's instruction file through system.inject's mechanism", "[providers]") {
  HomeProject p(false);
  auto dry = p.mutate("providers", "inject", R"({"provider":"gemini","dryRun":true})");
  REQUIRE(dry.success);
  CHECK(dry.data["file"].as_string() == "GEMINI.md");
  CHECK_FALSE(fs::exists(p.dir() / "GEMINI.md"));
  auto done = p.mutate("providers", "inject", R"({"provider":"gemini"})");
  REQUIRE(done.success);
  CHECK(done.data["action"].as_string() == "created");
  CHECK(slurp(p.dir() / "GEMINI.md").find("<!-- CLEO:START -->") != std::string::npos);
  CHECK(code_of(p.mutate("providers", "inject", R"({"provider":"gemini"})")) == "E_NO_CHANGE");
  // Cursor reads AGENTS.md.
  auto cursor = p.mutate("providers", "inject", R"({"provider":"cursor"})");
  REQUIRE(cursor.success);
  CHECK(cursor.data["file"].as_string() == "AGENTS.md");
  // Malformed markers: refused, file untouched.
  spit(p.dir() / "CLAUDE.md", "<!-- CLEO:START -->\nno end\n");
  CHECK(code_of(p.mutate("providers", "inject", R"({"provider":"claude"})")) == "E_VALIDATION");
  CHECK(slurp(p.dir() / "CLAUDE.md") == "<!-- CLEO:START -->\nno end\n");
}

TEST_CASE("providers.install hooks: each host's session-start hook runs ct briefing; merged, idempotent, dry run",
          "[providers][hooks]") {
  HomeProject p(/*person=*/false);
  REQUIRE(p.project().mutate("session", "start", R"({"scope":"global","name":"hooked"})").success);
  // Claude Code: the user's own settings and hooks stay.
  spit(p.dir() / ".claude" / "settings.json",
       R"x({"permissions": {"allow": ["Bash(ls)"]}, "hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": "echo hi"}]}]}})x");
  Envelope dry = p.mutate("providers", "install", R"({"provider":"claude","hooks":true,"dryRun":true})");
  REQUIRE(dry.success);
  CHECK(dry.data["hooks"]["action"].as_string() == "would be updated");
  CHECK(slurp(p.dir() / ".claude" / "settings.json").find("briefing") == std::string::npos);  // nothing written

  Envelope done = p.mutate("providers", "install", R"({"provider":"claude","hooks":true})");
  REQUIRE(done.success);
  CHECK(done.data["file"].as_string() == ".mcp.json");
  CHECK(done.data["hooks"]["file"].as_string() == ".claude/settings.json");
  CHECK(done.data["hooks"]["backup"].is_string());
  json::Value settings = test::parse_json(slurp(p.dir() / ".claude" / "settings.json"));
  CHECK(settings["permissions"]["allow"].as_array().size() == 1);
  REQUIRE(settings["hooks"]["SessionStart"].as_array().size() == 2);
  const json::Value& ours = settings["hooks"]["SessionStart"].as_array()[1];
  // No matcher: it runs at every session start the host has, Claude Code's "fork" too (issue 50
  // item 16; "startup|resume|clear|compact" skipped a forked session).
  CHECK_FALSE(ours.contains("matcher"));
  for (const auto& provider : providers::all())
    if (provider.hook) CHECK_FALSE(providers::hook_entry(provider, "ct").contains("matcher"));
  CHECK(ours["hooks"].as_array()[0]["command"].as_string() == "ct briefing --hook claude");
  Envelope again = p.mutate("providers", "install", R"({"provider":"claude","hooks":true})");
  REQUIRE(again.success);
  CHECK(again.note == ErrorCode::NoChange);
  CHECK(again.data["hooks"]["action"].as_string() == "unchanged");

  // Gemini CLI, Codex and Cursor: their own files and shapes.
  REQUIRE(p.mutate("providers", "install", R"({"provider":"gemini","hooks":true})").success);
  json::Value gemini = test::parse_json(slurp(p.dir() / ".gemini" / "settings.json"));
  CHECK(gemini["mcpServers"]["cleo"]["command"].as_string() == "ct");  // beside the server entry
  CHECK(gemini["hooks"]["SessionStart"].as_array()[0]["hooks"].as_array()[0]["timeout"] == json::Value(30000));
  REQUIRE(p.mutate("providers", "install", R"({"provider":"codex","hooks":true})").success);
  CHECK(test::parse_json(slurp(p.dir() / ".codex" / "hooks.json"))["hooks"]["SessionStart"].as_array().size() == 1);
  REQUIRE(p.mutate("providers", "install", R"({"provider":"cursor","hooks":true})").success);
  json::Value cursor = test::parse_json(slurp(p.dir() / ".cursor" / "hooks.json"));
  CHECK(cursor["version"] == json::Value(1));
  CHECK(cursor["hooks"]["sessionStart"].as_array()[0]["command"].as_string() == "ct briefing --hook cursor");

  // A host without such a hook says why, and writes nothing.
  Envelope none = p.mutate("providers", "install", R"({"provider":"opencode","hooks":true})");
  CHECK(code_of(none) == "E_INVALID_INPUT");
  CHECK(none.error->message.find("plug-in") != std::string::npos);
  CHECK_FALSE(fs::exists(p.dir() / "opencode.json"));
  Envelope shown = p.query("providers", "show", R"({"provider":"opencode"})");
  CHECK(shown.data["hook"]["supported"] == json::Value(false));
  CHECK(p.query("providers", "show", R"({"provider":"claude"})").data["hook"]["event"].as_string() == "SessionStart");
}

TEST_CASE("providers hooks: the command line runs a ct under any path in the host's shell (issue 50 item 13)",
          "[providers][hooks]") {
  // A `ct` under a folder with a space, a quote and a $ (macOS's "Application Support" has the
  // space): each hook host runs its command through a POSIX shell (providers.cpp), so the line must
  // run that program with exactly the words briefing --hook <id>, in sh (dash here), bash and zsh.
  test::TempDir dir;
  const fs::path folder = dir.path() / "Application Support" / "it's $HOME";
  fs::create_directories(folder);
  const fs::path program = folder / "ct";
  spit(program, "#!/bin/sh\nprintf '%s|' \"$0\" \"$@\"\n");
  fs::permissions(program, fs::perms::owner_all);
  std::vector<std::string> shells;
  for (std::string_view shell : {"sh", "bash", "zsh"})
    if (auto found = find_program(shell, minimal_environment())) shells.push_back(found->string());
  REQUIRE_FALSE(shells.empty());
  for (const auto& provider : providers::all()) {
    if (!provider.hook) continue;
    // The entry providers.install writes, still recognised as CLEO's.
    const json::Value entry = providers::hook_entry(provider, program.string());
    const json::Value& run = provider.hook->grouped ? entry["hooks"].as_array()[0] : entry;
    const std::string line = run["command"].as_string();
    CHECK(providers::is_cleo_hook(entry));
    for (const auto& shell : shells) {
      INFO(std::string(provider.id) + " through " + shell + ": " + line);
      auto ran = run_process({.argv = {shell, "-c", line}, .env = minimal_environment()});
      REQUIRE(ran);
      CHECK(ran->exit_code == 0);
      CHECK(ran->out == program.string() + "|briefing|--hook|" + std::string(provider.id) + "|");
    }
  }
  // The portable command stays as people read it.
  CHECK(providers::hook_entry(*providers::find("claude"), "ct")["hooks"].as_array()[0]["command"].as_string() ==
        "ct briefing --hook claude");
}

TEST_CASE("providers: a command the host's loader would rewrite is refused (issue 50 item 13)", "[providers]") {
  // Claude Code, Cursor, VS Code and Windsurf replace ${…} in their files; Gemini CLI $VAR too;
  // opencode {env:…}; Codex nothing. A path holding one would be run from somewhere else.
  auto refused = [](std::string_view host, std::string command, std::vector<std::string> args = {"mcp"}) {
    providers::ServerLaunch launch;
    launch.command = std::move(command);
    launch.args = std::move(args);
    auto checked = providers::check_launch(*providers::find(host), launch);
    return checked ? std::string() : checked.error().details["field"].as_string();
  };
  CHECK(refused("claude", "/opt/${x}/ct") == "command");
  CHECK(refused("claude", "/opt/$x/ct").empty());  // Claude Code expands only ${…}
  CHECK(refused("gemini", "/opt/$x/ct") == "command");
  CHECK(refused("gemini", "/opt/a$/ct").empty());  // a $ before nothing stays as written
  CHECK(refused("cursor", "ct", {"mcp", "--project", "/w/${userHome}"}) == "args");
  CHECK(refused("vscode", "/opt/${x}/ct") == "command");
  CHECK(refused("opencode", "/opt/{env:X}/ct") == "command");
  CHECK(refused("codex", "/opt/${x}/ct").empty());
  // providers.install refuses it before writing anything.
  HomeProject p(/*person=*/true);
  Envelope e = p.mutate("providers", "install", R"({"provider":"claude","command":"/opt/${HOME}/ct"})");
  CHECK(code_of(e) == "E_INVALID_INPUT");
  CHECK(e.error->message.find("Claude Code replaces '${") != std::string::npos);
  CHECK_FALSE(fs::exists(p.dir() / ".mcp.json"));
}

TEST_CASE("ct briefing --hook: the briefing in each host's format", "[providers][hooks][briefing]") {
  test::Project p;
  p.add(R"({"title":"Hooked task"})");
  REQUIRE(p.mutate("session", "start", R"({"scope":"global","focus":"T001"})").success);
  auto hooked = [&](std::string_view host) {
    Envelope e = p.query("session", "briefing", R"({"hook":")" + std::string(host) + "\"}");
    REQUIRE(e.success);
    return e.data["hook"].as_string();
  };
  const std::string claude = hooked("claude");
  CHECK(claude.starts_with("CLEO briefing"));
  CHECK(claude.find("\"T001\"") != std::string::npos);
  CHECK(hooked("codex") == claude);  // plain stdout too
  json::Value gemini = test::parse_json(hooked("gemini"));
  CHECK(gemini["hookSpecificOutput"]["hookEventName"].as_string() == "SessionStart");
  CHECK(gemini["hookSpecificOutput"]["additionalContext"].as_string() == claude);
  json::Value cursor = test::parse_json(hooked("cursor"));
  CHECK(cursor["additional_context"].as_string() == claude);
  CHECK(cursor["continue"] == json::Value(true));
  CHECK(code_of(p.query("session", "briefing", R"({"hook":"opencode"})")) == "E_VALIDATION");  // not a choice
}
