// The issues domain: diagnostics (nothing private in them), templates, and issues.create against a
// fake `gh` (tests/fixtures/programs/gh/gh) that records its argv: filed when gh is there and
// authenticated, otherwise the report and the exact command; gh's failures and timeouts as errors.
// PATH, HOME and the fake's switches are set per test (minimal_environment passes PATH, HOME and
// CLEO_* on to the child); nothing here reaches the real $HOME, a real gh or the network.
#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>

#include "unit/core/env_guard.h"
#include "unit/test_support.h"

using namespace ct;
using ct::test::code_of;
using ct::testing::EnvGuard;

namespace {

namespace fs = std::filesystem;

const fs::path kFakeGhDir = fs::path(CT_FIXTURES_DIR) / "programs" / "gh";

std::string read_file(const fs::path& file) {
  std::ifstream in(file);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

/// The argv of each recorded gh call.
std::vector<std::vector<std::string>> gh_calls(const fs::path& log) {
  std::vector<std::vector<std::string>> calls;
  std::istringstream in(read_file(log));
  std::string line;
  while (std::getline(in, line)) {
    if (line == "argv:") calls.emplace_back();
    else if (!calls.empty()) calls.back().push_back(line);
  }
  return calls;
}

constexpr std::string_view kBug = R"({"type":"bug","title":"tasks.next skips blocked parents","body":"It broke."})";

}  // namespace

TEST_CASE("issues.templates: bug, feature and help skeletons", "[issues]") {
  test::Project p;
  Envelope all = p.query("issues", "templates");
  REQUIRE(all.success);
  REQUIRE(all.data.as_array().size() == 3);
  CHECK(all.data.as_array()[0]["type"].as_string() == "bug");
  CHECK(all.data.as_array()[1]["label"].as_string() == "enhancement");
  Envelope bug = p.query("issues", "templates", R"({"type":"bug"})");
  REQUIRE(bug.success);
  CHECK(bug.data["body"].as_string().find("## Steps to reproduce") != std::string::npos);
  CHECK(code_of(p.query("issues", "templates", R"({"type":"bugs"})")) == "E_VALIDATION");
}

TEST_CASE("issues.diagnostics: version, platform, changed config, recent errors; nothing private", "[issues]") {
  test::Project p;
  EnvGuard home("HOME", p.dir().parent_path().string());
  REQUIRE(p.mutate_as_person("system", "config.set", R"({"key":"backup.keep","value":"3"})").success);
  REQUIRE(p.mutate_as_person("system", "config.set",
                             R"({"key":"validate.testCommand","value":"ctest --token=secret-value"})").success);
  CHECK_FALSE(p.mutate("tasks", "complete", R"({"id":"T404"})").success);  // an audited failure

  Envelope d = p.query("issues", "diagnostics");
  REQUIRE(d.success);
  CHECK(d.data["version"].is_string());
  CHECK(d.data["platform"]["os"].is_string());
  CHECK(d.data["project"]["store"].as_string() == "ok");
  CHECK(d.data["project"]["location"].as_string() == "~/" + p.dir().filename().string());
  CHECK(d.data["config"]["backup.keep"].as_int() == 3);
  CHECK(d.data["config"]["validate.testCommand"].as_string() == "(set)");
  CHECK_FALSE(d.data["config"].contains("hierarchy.maxDepth"));  // defaults are not listed
  REQUIRE(d.data["recentErrors"].as_array().size() == 1);
  CHECK(d.data["recentErrors"].as_array()[0]["operation"].as_string() == "tasks.complete");
  CHECK(d.data["recentErrors"].as_array()[0]["code"].as_string() == "E_NOT_FOUND");
  CHECK_FALSE(d.data.contains("capabilities"));  // no resolver given to this router
  const std::string text = d.data.dump();
  CHECK(text.find("secret-value") == std::string::npos);
  CHECK(text.find(p.dir().string()) == std::string::npos);
}

TEST_CASE("issues.diagnostics: a project outside $HOME has no location", "[issues]") {
  test::Project p;
  EnvGuard home("HOME", "/nonexistent-home-for-tests");
  Envelope d = p.query("issues", "diagnostics");
  REQUIRE(d.success);
  CHECK_FALSE(d.data["project"].contains("location"));
  CHECK(d.data.dump().find(p.dir().string()) == std::string::npos);
}

TEST_CASE("issues.create dryRun renders the report and the command and runs nothing", "[issues]") {
  test::Project p;
  EnvGuard path("PATH", kFakeGhDir.string() + ":/usr/bin:/bin");
  EnvGuard log("CLEO_FAKE_GH_LOG", (p.dir() / "gh.log").string());
  Envelope e = p.mutate("issues", "create",
                        R"({"type":"feature","title":"Export to CSV","body":"## The proposal\n\nCSV.","repo":"owner/repo","dryRun":true})");
  REQUIRE(e.success);
  CHECK(e.data["dryRun"].as_bool());
  CHECK_FALSE(e.data["filed"].as_bool());
  CHECK(e.data["label"].as_string() == "enhancement");
  const auto& argv = e.data["command"].as_array();
  REQUIRE(argv.size() == 11);
  CHECK(argv[0].as_string() == "gh");
  CHECK(argv[4].as_string() == "Export to CSV");
  CHECK(argv[6].as_string() == "enhancement");
  CHECK(argv[8].as_string() == e.data["body"].as_string());
  CHECK(argv[10].as_string() == "owner/repo");
  CHECK(e.data["body"].as_string().find("## Diagnostics") != std::string::npos);
  CHECK(e.data["commandText"].as_string().starts_with("gh issue create --title 'Export to CSV' --label enhancement --body '"));
  CHECK_FALSE(fs::exists(p.dir() / "gh.log"));  // gh never ran
  // Dry runs are not audited.
  CHECK(p.query("system", "log", R"({"operation":"issues.create"})").data.as_array().empty());
}

TEST_CASE("issues.create files through gh when it is there and authenticated", "[issues]") {
  test::Project p;
  EnvGuard path("PATH", kFakeGhDir.string() + ":/usr/bin:/bin");
  EnvGuard log("CLEO_FAKE_GH_LOG", (p.dir() / "gh.log").string());
  EnvGuard auth("CLEO_FAKE_GH_AUTH", "ok");
  EnvGuard mode("CLEO_FAKE_GH_MODE", std::nullopt);
  Envelope e = p.mutate("issues", "create",
                        R"({"type":"bug","title":"tasks.next skips blocked parents","body":"It broke.","diagnostics":false})");
  REQUIRE(e.success);
  CHECK(e.data["filed"].as_bool());
  CHECK(e.data["url"].as_string() == "https://github.com/owner/repo/issues/42");
  CHECK(e.warnings.empty());

  auto calls = gh_calls(p.dir() / "gh.log");
  REQUIRE(calls.size() == 2);
  CHECK(calls[0] == std::vector<std::string>{"auth", "status"});
  CHECK(calls[1] == std::vector<std::string>{"issue", "create", "--title", "tasks.next skips blocked parents",
                                             "--label", "bug", "--body", "It broke.",
                                             ""});  // the report ends with a newline: the log's last line is empty
  // The filing is audited.
  Envelope audit = p.query("system", "log", R"({"operation":"issues.create","detail":"full"})");
  REQUIRE(audit.data.as_array().size() == 1);
  CHECK(audit.data.as_array()[0]["changes"].as_array()[0]["after"].as_string() == "https://github.com/owner/repo/issues/42");
}

TEST_CASE("issues.create without gh, or with gh logged out, returns the report and the command", "[issues]") {
  test::Project p;
  EnvGuard log("CLEO_FAKE_GH_LOG", (p.dir() / "gh.log").string());
  SECTION("gh is not on PATH") {
    EnvGuard path("PATH", (p.dir() / "empty-bin").string());
    Envelope e = p.mutate("issues", "create", kBug);
    REQUIRE(e.success);
    CHECK_FALSE(e.data["filed"].as_bool());
    REQUIRE(e.warnings.size() == 1);
    CHECK(test::warnings_of(e)[0].find("gh (the GitHub CLI) is not on PATH") != std::string::npos);
    CHECK(e.data["command"].as_array()[0].as_string() == "gh");
    CHECK(e.data["commandText"].as_string().starts_with("gh issue create"));
  }
  SECTION("gh is not authenticated") {
    EnvGuard path("PATH", kFakeGhDir.string() + ":/usr/bin:/bin");
    EnvGuard auth("CLEO_FAKE_GH_AUTH", "fail");
    Envelope e = p.mutate("issues", "create", kBug);
    REQUIRE(e.success);
    CHECK_FALSE(e.data["filed"].as_bool());
    REQUIRE(e.warnings.size() == 1);
    CHECK(test::warnings_of(e)[0].find("not authenticated") != std::string::npos);
    CHECK(test::warnings_of(e)[0].find("gh auth login") != std::string::npos);
    auto calls = gh_calls(p.dir() / "gh.log");
    REQUIRE(calls.size() == 1);  // only `gh auth status`
    CHECK(calls[0] == std::vector<std::string>{"auth", "status"});
  }
}

TEST_CASE("issues.create: gh failing is E_ENGINE_FAILED with its stderr, hanging is E_TIMEOUT", "[issues]") {
  test::Project p;
  EnvGuard path("PATH", kFakeGhDir.string() + ":/usr/bin:/bin");
  EnvGuard auth("CLEO_FAKE_GH_AUTH", "ok");
  SECTION("failure") {
    EnvGuard mode("CLEO_FAKE_GH_MODE", "fail");
    Envelope e = p.mutate("issues", "create", kBug);
    REQUIRE_FALSE(e.success);
    CHECK(code_of(e) == "E_ENGINE_FAILED");
    CHECK(e.error->details["stderr"].as_string().find("'bug' not found") != std::string::npos);
    CHECK(e.error->details["commandText"].as_string().starts_with("gh issue create"));
    CHECK_FALSE(e.error->fix.empty());
  }
  SECTION("timeout") {
    REQUIRE(p.mutate("system", "config.set", R"({"key":"issues.ghTimeoutSeconds","value":"1"})").success);
    EnvGuard mode("CLEO_FAKE_GH_MODE", "hang");
    Envelope e = p.mutate("issues", "create", kBug);
    REQUIRE_FALSE(e.success);
    CHECK(code_of(e) == "E_TIMEOUT");
  }
  SECTION("success without a URL is filed, with a warning") {
    EnvGuard mode("CLEO_FAKE_GH_MODE", "quiet");
    Envelope e = p.mutate("issues", "create", kBug);
    REQUIRE(e.success);
    CHECK(e.data["filed"].as_bool());
    CHECK_FALSE(e.data.contains("url"));
    CHECK(e.warnings.size() == 1);
  }
}

TEST_CASE("issues.create validates its params before anything runs", "[issues]") {
  test::Project p;
  CHECK(code_of(p.mutate("issues", "create", R"({"type":"bug","title":"ok title","body":"x","repo":"not a repo"})")) ==
        "E_VALIDATION");
  CHECK(code_of(p.mutate("issues", "create", R"({"type":"question","title":"ok title","body":"x"})")) ==
        "E_VALIDATION");
  CHECK(code_of(p.mutate("issues", "create", R"({"type":"bug","title":"two\nlines","body":"x"})")) ==
        "E_VALIDATION");
}
