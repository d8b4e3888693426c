// The release domain: releases in the store, the changelog merged into CHANGELOG.md, and
// ship / tag / rollback against real temporary git repositories with a local bare remote.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <fstream>
#include <regex>
#include <sstream>

#include "gateway/mcp_syntax.h"
#include "engines/rules/release_engine.h"
#include "engines/store/sqlite/sqlite_store.h"
#include "engines/adapters/subprocess.h"
#include "unit/git_repo.h"
#include "unit/test_support.h"

using namespace ct;
using ct::test::code_of;

namespace {

std::string read(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::ostringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

void write(const std::filesystem::path& file, std::string_view text) {
  std::ofstream out(file, std::ios::binary);
  out << text;
}

using test::git;
using test::git_ok;
using test::isolate_git;

/// The project as a git repository with one commit on main and a bare remote "origin".
struct GitProject {
  test::Project p;
  test::TempDir remote_dir;

  GitProject() {
    git(p.dir(), {"init", "-q", "-b", "main"});
    git(p.dir(), {"config", "user.name", "Release Tester"});
    git(p.dir(), {"config", "user.email", "tester@example.com"});
    write(p.dir() / ".gitignore", ".cleo/\n");
    write(p.dir() / "VERSION", "0.9.0\n");
    git(p.dir(), {"add", ".gitignore", "VERSION"});
    git(p.dir(), {"commit", "-q", "-m", "initial"});
    git(remote_dir.path(), {"init", "-q", "--bare", "-b", "main"});
    git(p.dir(), {"remote", "add", "origin", remote_dir.path().string()});
    git(p.dir(), {"push", "-q", "origin", "main"});
  }
  const std::filesystem::path& dir() const { return p.dir(); }
  std::string head() { return git(dir(), {"rev-parse", "HEAD"}); }
  bool local_tag(const std::string& tag) { return git_ok(dir(), {"rev-parse", "-q", "--verify", "refs/tags/" + tag}); }
  bool remote_tag(const std::string& tag) {
    return git_ok(remote_dir.path(), {"rev-parse", "-q", "--verify", "refs/tags/" + tag});
  }
};

/// T001 feature (done), T002 bug (done), T003 still pending; release 1.0.0 holds all three.
void seed_release(test::Project& p) {
  p.add(R"({"title":"Add login page","labels":["feature"]})");
  p.add(R"({"title":"Fix crash on empty title","labels":["bug"]})");
  p.add(R"({"title":"Not finished yet"})");
  REQUIRE(p.mutate("tasks", "complete", R"({"id":"T001"})").success);
  REQUIRE(p.mutate("tasks", "complete", R"({"id":"T002"})").success);
  REQUIRE(p.mutate("release", "create", R"({"version":"1.0.0","notes":"First stable release"})").success);
  REQUIRE(p.mutate("release", "plan", R"({"version":"1.0.0","add":["T001","T002","T003"]})").success);
}

}  // namespace

TEST_CASE("semantic versions are validated and normalised", "[release]") {
  CHECK(normalize_semver("1.2.3") == "1.2.3");
  CHECK(normalize_semver("v1.2.3") == "1.2.3");
  CHECK(normalize_semver("2.0.0-rc.1+build.5") == "2.0.0-rc.1+build.5");
  CHECK_FALSE(normalize_semver("1.2"));
  CHECK_FALSE(normalize_semver("01.2.3"));
  CHECK_FALSE(normalize_semver("1.2.3-"));
  CHECK_FALSE(normalize_semver("1.2.3-01"));
  CHECK_FALSE(normalize_semver("1.2.3 "));
}

TEST_CASE("merge_changelog replaces only the version's section, byte for byte", "[release]") {
  const std::string before =
      "# Changelog\r\n\nIntro text.\n\n## [1.1.0] - 2025-12-01\n\n- old entry\n\n## [1.0.0] - 2025-01-01\n\n- "
      "first\n\n\n## 0.9.0\ntrailing without newline";
  // Replacing the middle section keeps everything before and after it.
  std::string merged = merge_changelog(before, "1.0.0", "## [1.0.0] - 2026-01-01\n\n- new\n");
  CHECK(merged ==
        "# Changelog\r\n\nIntro text.\n\n## [1.1.0] - 2025-12-01\n\n- old entry\n\n## [1.0.0] - 2026-01-01\n\n- "
        "new\n\n## 0.9.0\ntrailing without newline");
  // A new version goes before the first heading (newest first).
  std::string inserted = merge_changelog(before, "1.2.0", "## [1.2.0] - 2026-02-01\n\n- next\n");
  CHECK(inserted.starts_with("# Changelog\r\n\nIntro text.\n\n## [1.2.0] - 2026-02-01\n\n- next\n\n## [1.1.0]"));
  CHECK(inserted.substr(inserted.find("## [1.1.0]")) == before.substr(before.find("## [1.1.0]")));
  // 1.0.0 is not 1.0.0-rc.1 or 11.0.0.
  std::string similar = "## [1.0.0-rc.1]\n\n- rc\n\n## [11.0.0]\n- big\n";
  CHECK(merge_changelog(similar, "1.0.0", "## [1.0.0] - x\n") == "## [1.0.0] - x\n\n" + similar);
  // The last section runs to the end of the file.
  CHECK(merge_changelog("# C\n\n## v2.0.0\nold\n", "2.0.0", "## [2.0.0] - y\nnew\n") == "# C\n\n## [2.0.0] - y\nnew\n");
  CHECK(merge_changelog("", "1.0.0", "## [1.0.0] - z\n") == "# Changelog\n\n## [1.0.0] - z\n");
  CHECK(merge_changelog("# Changelog", "1.0.0", "## [1.0.0] - z\n") == "# Changelog\n\n## [1.0.0] - z\n");
}

TEST_CASE("changelog_section finds a version's section and nothing else", "[release]") {
  const std::string text = "# Changelog\n\n## [1.1.0] - 2025-12-01\n\n- old\n\n## v1.0.0\n- first\n";
  CHECK(changelog_section(text, "1.1.0") == "## [1.1.0] - 2025-12-01\n\n- old\n\n");
  CHECK(changelog_section(text, "1.0.0") == "## v1.0.0\n- first\n");
  CHECK_FALSE(changelog_section(text, "1.0"));
  CHECK_FALSE(changelog_section("## [1.0.0-rc.1]\n", "1.0.0"));
  CHECK_FALSE(changelog_section("", "1.0.0"));
}

TEST_CASE("bump_version_text sets the version field of each format, as a whole token", "[release]") {
  auto bumped = [](std::string_view file, std::string_view text) {
    auto result = bump_version_text(file, text, "1.0.0");
    INFO(file << ": " << (result ? "" : result.error().message));
    REQUIRE(result);
    return result->value_or("(unchanged)");
  };
  auto refused = [](std::string_view file, std::string_view text, std::string_view next = "1.0.0") {
    auto result = bump_version_text(file, text, next);
    REQUIRE_FALSE(result);
    CHECK(result.error().code == ErrorCode::Validation);
    CHECK(result.error().message.starts_with("release.versionFile " + std::string(file)));
    return result.error().message;
  };
  // A bare VERSION file, and any file holding exactly one version as a word of its own.
  CHECK(bumped("VERSION", "0.9.0\n") == "1.0.0\n");
  CHECK(bumped("VERSION", "v0.9.0") == "v1.0.0");
  CHECK(bumped("src/version.h", "#define DEMO_VERSION \"0.9.0-rc.1\"  /* demo-2.0.0.tar.gz, x1.2.3 */\n") ==
        "#define DEMO_VERSION \"1.0.0\"  /* demo-2.0.0.tar.gz, x1.2.3 */\n");
  CHECK(bumped("VERSION", "1.0.0\n") == "(unchanged)");
  CHECK(refused("VERSION", "no version here").find("holds no version string") != std::string::npos);
  CHECK(refused("VERSION", "0.9").find("holds no version string") != std::string::npos);
  CHECK(refused("notes.txt", "0.9.0 and 0.9.0").find("holds 2 version strings (0.9.0 on line 1, 0.9.0 on line 1)") !=
        std::string::npos);

  // package.json (any JSON): the top-level "version" only.
  CHECK(bumped("package.json", R"({"dep":"0.9.0","nested":{"version":"0.9.0"},"version" : "0.9.0"})") ==
        R"({"dep":"0.9.0","nested":{"version":"0.9.0"},"version" : "1.0.0"})");
  CHECK(refused("package.json", R"({"version":"0.9.0","version":"0.9.1"})").find("2 version fields") != std::string::npos);
  CHECK(refused("package.json", R"({"version":1})").find("literal string") != std::string::npos);
  CHECK(refused("package.json", R"(["0.9.0"])").find("not a JSON object") != std::string::npos);

  // TOML: [project], [tool.poetry], [package], [workspace.package]; every other version is text.
  const std::string pyproject =
      "# version = \"0.0.1\"\n[build-system]\nrequires = [\n  \"setuptools>=61.0.0\",  # [project]\n  \"wheel\",\n]\n"
      "\n[project]\nname = 'demo'\ndescription = \"\"\"\n[tool.poetry]\nversion = \"0.0.2\"\n\"\"\"\n"
      "version = \"0.9.0\"\nurls = { version = \"0.9.0\" }\n";
  std::string expected = pyproject;
  expected.replace(expected.find("\nversion = \"0.9.0\"") + 12, 5, "1.0.0");
  CHECK(bumped("pyproject.toml", pyproject) == expected);
  CHECK(bumped("Cargo.toml", "[package]\nversion='0.9.0'\n[dependencies]\nserde = { version = \"0.9.0\" }\n") ==
        "[package]\nversion='1.0.0'\n[dependencies]\nserde = { version = \"0.9.0\" }\n");
  CHECK(bumped("Cargo.toml", "[workspace.package]\nversion = \"0.9.0\"\n[package]\nversion.workspace = true\n") ==
        "[workspace.package]\nversion = \"1.0.0\"\n[package]\nversion.workspace = true\n");
  CHECK(bumped("pyproject.toml", "project.version = \"0.9.0\"\n") == "project.version = \"1.0.0\"\n");
  CHECK(refused("pyproject.toml", "[project]\ndynamic = [\"version\"]\n").find("has no version field") !=
        std::string::npos);
  CHECK(refused("Cargo.toml", "[package]\nversion = { workspace = true }\n").find("literal string") != std::string::npos);
  CHECK(refused("pyproject.toml", "[project\nversion = \"0.9.0\"\n").find("cannot be read as TOML (line 1)") !=
        std::string::npos);
  CHECK(refused("pyproject.toml", "[project]\nversion = \"0.9.0\"\n[tool.poetry]\nversion = \"0.9.0\"\n")
            .find("has 2 version fields ([project] version on line 2, [tool.poetry] version on line 4)") !=
        std::string::npos);
  // Deep nesting is refused, never a deep recursion.
  CHECK(refused("pyproject.toml", "x = " + std::string(100000, '[') + "\n").find("cannot be read") != std::string::npos);

  // CMake: project(… VERSION …), not cmake_minimum_required, a comment or a string.
  CHECK(bumped("CMakeLists.txt",
               "cmake_minimum_required(VERSION 3.20.0)\n#[[ project(x VERSION 0.1.0) ]]\nmessage(\"project(y VERSION "
               "0.2.0)\")\nPROJECT(demo\n  VERSION \"0.9.0\"\n  LANGUAGES CXX)\n") ==
        "cmake_minimum_required(VERSION 3.20.0)\n#[[ project(x VERSION 0.1.0) ]]\nmessage(\"project(y VERSION "
        "0.2.0)\")\nPROJECT(demo\n  VERSION \"1.0.0\"\n  LANGUAGES CXX)\n");
  CHECK(refused("CMakeLists.txt", "project(demo VERSION 0.9.0)\n", "1.0.0-rc.1").find("numbers only") !=
        std::string::npos);
  CHECK(refused("CMakeLists.txt", "project(demo VERSION ${V})\n").find("literal string") != std::string::npos);
  CHECK(refused("cmake/demo.cmake", "project(demo)\n").find("has no version field") != std::string::npos);
}

TEST_CASE("is_semver agrees with the version param's pattern, and a long text is no danger", "[release]") {
  const std::regex pattern{std::string(kSemverPattern), std::regex::ECMAScript};
  for (std::string text : {"1.2.3", "v1.2.3", "0.0.0", "10.20.30", "1.0.0-alpha", "1.0.0-alpha.1", "1.0.0-0.3.7",
                           "1.0.0-x.7.z.92", "1.0.0-x-y-z.--", "1.0.0+20130313144700", "1.0.0-beta+exp.sha.5114f85",
                           "1.0.0+21AF26D3----117B344092BD", "1.2", "1.2.3.4", "01.2.3", "1.02.3", "1.2.03", "1.2.3-",
                           "1.2.3-01", "1.2.3+", "1.2.3-a..b", "1.2.3+a..b", "1.2.3 ", " 1.2.3", "a.b.c", "1.2.3-a_b",
                           "vv1.2.3", "", "-1.2.3", "1.2.3-0a", "1.2.3-00a"}) {
    INFO(text);
    const bool expected = std::regex_match(text, pattern);
    CHECK(normalize_semver(text).has_value() == expected);
  }
  const std::string huge = "1.2.3-" + std::string(1'000'000, 'a');
  CHECK(is_semver(huge));
  CHECK_FALSE(is_semver(huge + "."));
  CHECK(bump_version_text("VERSION", std::string(1'000'000, '1') + ".0.0", "1.0.0"));
}

TEST_CASE("releases are created, planned, listed and shown", "[release]") {
  test::Project p;
  seed_release(p);
  Envelope repeat = p.mutate("release", "create", R"({"version":"v1.0.0"})");
  CHECK(code_of(repeat) == "E_ALREADY_EXISTS");

  Envelope show = p.query("release", "show", R"({"version":"1.0.0"})");
  REQUIRE(show.success);
  CHECK(show.data["status"].as_string() == "active");
  CHECK(show.data["tasks"].size() == 3);
  CHECK(show.data["tasks"].as_array()[1]["title"].as_string() == "Fix crash on empty title");
  CHECK(show.data["notes"].as_string() == "First stable release");

  CHECK(code_of(p.mutate("release", "plan", R"({"version":"1.0.0","add":["T001"]})")) == "E_NO_CHANGE");
  Envelope unknown = p.mutate("release", "plan", R"({"version":"1.0.0","add":["T999"]})");
  CHECK(code_of(unknown) == "E_NOT_FOUND");
  CHECK(p.query("release", "show", R"({"version":"1.0.0"})").data["tasks"].size() == 3);  // nothing half-done

  Envelope removed = p.mutate("release", "plan", R"({"version":"1.0.0","remove":["T001","T002","T003"]})");
  REQUIRE(removed.success);
  CHECK(removed.data["status"].as_string() == "planned");

  REQUIRE(p.mutate("release", "create", R"({"version":"1.1.0-beta.1"})").success);
  Envelope listed = p.query("release", "list");
  REQUIRE(listed.success);
  CHECK(listed.data.size() == 2);

  CHECK(code_of(p.query("release", "show", R"({"version":"9.9.9"})")) == "E_NOT_FOUND");
  CHECK(code_of(p.mutate("release", "create", R"({"version":"1.0"})")) == "E_VALIDATION");
  test::Project empty;
  CHECK(code_of(empty.query("release", "list")) == "E_NO_DATA");
}

TEST_CASE("release.changelog renders done tasks and writes only its section", "[release]") {
  test::Project p;
  seed_release(p);
  Envelope preview = p.mutate("release", "changelog", R"({"version":"1.0.0"})");
  REQUIRE(preview.success);
  const std::string markdown = preview.data["markdown"].as_string();
  CHECK(markdown ==
        "## [1.0.0] - Unreleased\n\nFirst stable release\n\n### Features\n\n- Add login page (T001)\n\n### Fixes\n\n- "
        "Fix crash on empty title (T002)\n");
  CHECK_FALSE(std::filesystem::exists(p.dir() / "CHANGELOG.md"));

  const std::string other = "# Changelog\n\nKeep this.\n\n## [0.9.0] - 2025-06-01\n\n- Older  entry   \n";
  write(p.dir() / "CHANGELOG.md", other);
  Envelope written = p.mutate("release", "changelog", R"({"version":"1.0.0","write":true})");
  REQUIRE(written.success);
  CHECK(written.data["written"].as_bool());
  CHECK(read(p.dir() / "CHANGELOG.md") == "# Changelog\n\nKeep this.\n\n" + markdown + "\n## [0.9.0] - 2025-06-01\n\n- Older  entry   \n");

  Envelope again = p.mutate("release", "changelog", R"({"version":"1.0.0","write":true})");
  CHECK(code_of(again) == "E_NO_CHANGE");
  CHECK(code_of(p.mutate("release", "changelog", R"({"version":"2.0.0"})")) == "E_NOT_FOUND");
}

TEST_CASE("release.ship dryRun lists every step with its argv and changes nothing", "[release][git]") {
  GitProject g;
  seed_release(g.p);
  REQUIRE(g.p.mutate_as_person("system", "config.set", R"({"key":"release.versionFile","value":"VERSION"})").success);
  REQUIRE(g.p.mutate_as_person("system", "config.set", R"({"key":"release.gates","value":"[[\"true\"]]"})").success);
  const std::string head = g.head();
  Envelope dry = g.p.mutate("release", "ship", R"({"version":"1.0.0","push":true,"dryRun":true})");
  INFO(to_json(dry, McpAdvice(registry())));
  REQUIRE(dry.success);
  CHECK(dry.data["dryRun"].as_bool());
  CHECK(dry.data["branch"].as_string() == "main");
  std::vector<std::string> names;
  for (const auto& step : dry.data["steps"].as_array()) names.push_back(step["step"].as_string());
  CHECK(names == std::vector<std::string>{"gate", "changelog", "versionFile", "add", "commit", "tag", "push", "pushTag"});
  const auto& steps = dry.data["steps"].as_array();
  CHECK(steps[0]["argv"] == test::parse_json(R"(["true"])"));
  CHECK(steps[4]["argv"] == test::parse_json(R"(["git","commit","-m","Release v1.0.0","--","CHANGELOG.md","VERSION"])"));
  CHECK(steps[5]["argv"] == test::parse_json(R"(["git","tag","-a","v1.0.0","-m","Release 1.0.0"])"));
  CHECK(steps[5]["undo"] == test::parse_json(R"(["git","tag","-d","v1.0.0"])"));
  CHECK(steps[7]["argv"] == test::parse_json(R"(["git","push","origin","refs/tags/v1.0.0"])"));
  // Nothing happened: no commit, no tag, no changelog, version file as it was, release not shipped.
  CHECK(g.head() == head);
  CHECK_FALSE(g.local_tag("v1.0.0"));
  CHECK_FALSE(std::filesystem::exists(g.dir() / "CHANGELOG.md"));
  CHECK(read(g.dir() / "VERSION") == "0.9.0\n");
  CHECK(g.p.query("release", "show", R"({"version":"1.0.0"})").data["status"].as_string() == "active");
}

TEST_CASE("release.ship commits, tags and pushes; rollback removes the tag here and on the remote", "[release][git]") {
  GitProject g;
  seed_release(g.p);
  REQUIRE(g.p.mutate_as_person("system", "config.set", R"({"key":"release.versionFile","value":"VERSION"})").success);
  write(g.dir() / "unrelated.txt", "staged but not part of the release\n");
  git(g.dir(), {"add", "unrelated.txt"});
  const std::string before = g.head();

  Envelope shipped = g.p.mutate("release", "ship", R"({"version":"1.0.0","push":true})");
  INFO(to_json(shipped, McpAdvice(registry())));
  REQUIRE(shipped.success);
  CHECK(shipped.data["status"].as_string() == "released");
  CHECK(shipped.data["pushed"].as_bool());
  const std::string commit = shipped.data["commit"].as_string();
  CHECK(commit == g.head());
  CHECK(git(g.dir(), {"rev-parse", "HEAD~1"}) == before);
  CHECK(git(g.dir(), {"cat-file", "-t", "v1.0.0"}) == "tag");  // annotated
  CHECK(g.remote_tag("v1.0.0"));
  CHECK(git(g.remote_dir.path(), {"rev-parse", "main"}) == commit);
  CHECK(read(g.dir() / "VERSION") == "1.0.0\n");
  CHECK(read(g.dir() / "CHANGELOG.md").find("## [1.0.0] - 2026-01-01") != std::string::npos);
  // Only the release's files are in its commit; the unrelated staged file stays staged.
  CHECK(git(g.dir(), {"show", "--name-only", "--format=", "HEAD"}) == "CHANGELOG.md\nVERSION");
  CHECK(git(g.dir(), {"diff", "--cached", "--name-only"}) == "unrelated.txt");

  Envelope show = g.p.query("release", "show", R"({"version":"1.0.0"})");
  CHECK(show.data["tag"].as_string() == "v1.0.0");
  CHECK(show.data["commit"].as_string() == commit);
  CHECK(show.data["remote"].as_string() == "origin");
  CHECK(code_of(g.p.mutate("release", "ship", R"({"version":"1.0.0"})")) == "E_VALIDATION");
  CHECK(code_of(g.p.mutate("release", "plan", R"({"version":"1.0.0","remove":["T003"]})")) == "E_VALIDATION");

  Envelope rolled = g.p.mutate("release", "rollback", R"({"version":"1.0.0","reason":"broken build"})");
  INFO(to_json(rolled, McpAdvice(registry())));
  REQUIRE(rolled.success);
  CHECK(rolled.data["status"].as_string() == "active");
  CHECK(rolled.data["removedRemote"].as_bool());
  CHECK_FALSE(g.local_tag("v1.0.0"));
  CHECK_FALSE(g.remote_tag("v1.0.0"));
  REQUIRE(rolled.warnings.size() == 1);
  CHECK(test::warnings_of(rolled)[0].find(commit.substr(0, 12)) != std::string::npos);
  // The undo of the tag deletion re-creates it on the release commit.
  CHECK(rolled.data["steps"].as_array()[1]["undo"] ==
        json::Value::array_of(std::vector<std::string>{"git", "tag", "-a", "-m", "Release 1.0.0", "v1.0.0", commit}));
  Envelope after = g.p.query("release", "show", R"({"version":"1.0.0"})");
  CHECK(after.data["status"].as_string() == "active");
  CHECK_FALSE(after.data.find("tag"));
  CHECK(code_of(g.p.mutate("release", "rollback", R"({"version":"1.0.0","reason":"again"})")) == "E_NO_CHANGE");
  // The audit trail keeps the reason.
  Envelope log = g.p.query("system", "log", R"({"limit":2})");
  INFO(to_json(log, McpAdvice(registry())));
  CHECK(to_json(log, McpAdvice(registry())).find("broken build") != std::string::npos);
}

TEST_CASE("a failing gate stops release.ship before anything changes", "[release][git]") {
  GitProject g;
  seed_release(g.p);
  REQUIRE(g.p.mutate_as_person("system", "config.set", R"({"key":"release.gates","value":"[[\"true\"],[\"false\"]]"})").success);
  const std::string head = g.head();
  Envelope failed = g.p.mutate("release", "ship", R"({"version":"1.0.0"})");
  REQUIRE_FALSE(failed.success);
  CHECK(code_of(failed) == "E_VALIDATION");
  CHECK(failed.error->details["failedStep"]["argv"] == test::parse_json(R"(["false"])"));
  CHECK(failed.error->details["done"].size() == 1);  // the first gate, which needs no undo
  CHECK(g.head() == head);
  CHECK_FALSE(g.local_tag("v1.0.0"));
  CHECK_FALSE(std::filesystem::exists(g.dir() / "CHANGELOG.md"));
  CHECK(g.p.query("release", "show", R"({"version":"1.0.0"})").data["status"].as_string() == "active");
}

TEST_CASE("a failing push reports the steps done and how to undo each", "[release][git]") {
  GitProject g;
  seed_release(g.p);
  REQUIRE(g.p.mutate_as_person("system", "config.set", R"({"key":"release.remote","value":"nowhere"})").success);
  const std::string head = g.head();
  Envelope failed = g.p.mutate("release", "ship", R"({"version":"1.0.0","push":true})");
  REQUIRE_FALSE(failed.success);
  CHECK(code_of(failed) == "E_ENGINE_FAILED");
  CHECK(failed.error->details["failedStep"]["step"].as_string() == "push");
  CHECK_FALSE(failed.error->details["stderr"].as_string().empty());
  const auto& done = failed.error->details["done"].as_array();
  REQUIRE(done.size() == 4);  // newest first: tag, commit, add, changelog
  CHECK(done[0]["step"].as_string() == "tag");
  CHECK(done[0]["undo"] == test::parse_json(R"(["git","tag","-d","v1.0.0"])"));
  CHECK(done[1]["step"].as_string() == "commit");
  CHECK(done[1]["undo"] == json::Value::array_of(std::vector<std::string>{"git", "reset", "--soft", head}));
  CHECK(done[3]["step"].as_string() == "changelog");
  // The steps before the failure did happen (and the store says the release is not shipped).
  CHECK(g.local_tag("v1.0.0"));
  CHECK(g.p.query("release", "show", R"({"version":"1.0.0"})").data["status"].as_string() == "active");
  // Following the undo list brings the repository back.
  git(g.dir(), {"tag", "-d", "v1.0.0"});
  git(g.dir(), {"reset", "--soft", head});
  CHECK(g.head() == head);
}

TEST_CASE("release.tag makes the annotated tag once", "[release][git]") {
  GitProject g;
  REQUIRE(g.p.mutate("release", "create", R"({"version":"0.9.0"})").success);
  Envelope tagged = g.p.mutate("release", "tag", R"({"version":"0.9.0"})");
  INFO(to_json(tagged, McpAdvice(registry())));
  REQUIRE(tagged.success);
  CHECK(tagged.data["commit"].as_string() == g.head());
  CHECK(git(g.dir(), {"cat-file", "-t", "v0.9.0"}) == "tag");
  CHECK(code_of(g.p.mutate("release", "tag", R"({"version":"0.9.0"})")) == "E_NO_CHANGE");
  CHECK(g.p.query("release", "show", R"({"version":"0.9.0"})").data["tag"].as_string() == "v0.9.0");
  // Not pushed: rollback removes only the local tag.
  Envelope rolled = g.p.mutate("release", "rollback", R"({"version":"0.9.0","reason":"wrong commit"})");
  REQUIRE(rolled.success);
  CHECK_FALSE(rolled.data["removedRemote"].as_bool());
  CHECK_FALSE(g.local_tag("v0.9.0"));
}

TEST_CASE("git operations outside a git work tree are unavailable, with release.changelog as the alternative",
          "[release][git]") {
  isolate_git();
  test::Project p;
  seed_release(p);
  for (const char* op : {"ship", "tag"}) {
    Envelope e = p.mutate("release", op, R"({"version":"1.0.0"})");
    CHECK(code_of(e) == "E_CAPABILITY_UNAVAILABLE");
  }
  Envelope dry = p.mutate("release", "ship", R"({"version":"1.0.0","dryRun":true})");
  REQUIRE(dry.error);
  CHECK(dry.error->code == ErrorCode::CapabilityUnavailable);
  REQUIRE(dry.error->alternatives.size() == 1);
  CHECK(dry.error->alternatives[0].operation == "release.changelog");
  // The native changelog still works there.
  CHECK(p.mutate("release", "changelog", R"({"version":"1.0.0","write":true})").success);
}

TEST_CASE("a commit without a git identity fails with the fix", "[release][git]") {
  GitProject g;
  seed_release(g.p);
  git(g.dir(), {"config", "--unset", "user.name"});
  git(g.dir(), {"config", "--unset", "user.email"});
  git(g.dir(), {"config", "user.useConfigOnly", "true"});
  Envelope failed = g.p.mutate("release", "ship", R"({"version":"1.0.0"})");
  REQUIRE_FALSE(failed.success);
  CHECK(code_of(failed) == "E_ENGINE_FAILED");
  CHECK(mcp_text(failed.error->fix, registry()).find("git config user.name") != std::string::npos);
}

TEST_CASE("a schema-4 store is backed up, then upgraded with the releases table (and later steps)", "[release][migrate][sqlite]") {
  test::Project p;
  p.add(R"({"title":"Survives the upgrade"})");
  const auto db = p.dir() / ".cleo" / "tasks.db";
  test::downgrade_store(db, 4);
  REQUIRE(inspect_sqlite_file(db, false)->schema_version == 4);
  RouterOptions options;
  Router fresh(registry(), Workspace::open(p.dir()), options, std::make_unique<FixedClock>(*parse_iso8601("2026-01-02T00:00:00Z")));
  Envelope created = fresh.dispatch({Gateway::Mutate, "release", "create", test::parse_json(R"({"version":"1.0.0"})")});
  INFO(to_json(created, McpAdvice(registry())));
  REQUIRE(created.success);
  CHECK(inspect_sqlite_file(db, false)->schema_version == sqlite_schema_version());
  std::vector<std::string> copies;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(p.dir() / ".cleo" / "backups"))
    if (entry.path().filename().string().find("pre-migrate-v4") != std::string::npos) copies.push_back(entry.path());
  REQUIRE(copies.size() == 1);
  CHECK(inspect_sqlite_file(copies.front(), false)->schema_version == 4);
  CHECK(fresh.dispatch({Gateway::Query, "tasks", "exists", test::parse_json(R"({"id":"T001"})")}).success);
  auto steps = sqlite_migrations();
  CHECK(steps[4].version == 5);
  CHECK(steps[4].description.find("releases") != std::string::npos);
}

TEST_CASE("release config keys validate their values", "[release]") {
  Config config;
  CHECK(config.get("release.gates") == json::Value::array());
  CHECK(config.set("release.gates", test::parse_json(R"([["make","test"],["npm","run","lint"]])")));
  CHECK_FALSE(config.set("release.gates", test::parse_json(R"(["make test"])")));
  CHECK_FALSE(config.set("release.gates", test::parse_json(R"([[]])")));
  CHECK_FALSE(config.set("release.gates", test::parse_json(R"([["make",""]])")));
  CHECK(config.get_int("release.timeoutSeconds") == 600);
  CHECK(config.get_string("release.remote") == "origin");
}

// -- Hardening round 3 (issue 30): the version field, retries after a partial ship, the user's own
// edits, notes with headings, and paths that lead outside the project. --------------------------

namespace {

/// Commits `files` (path → content) on top of HEAD.
void commit_files(GitProject& g, const std::vector<std::pair<std::string, std::string>>& files) {
  std::vector<std::string> add = {"add", "--"};
  for (const auto& [path, content] : files) {
    std::filesystem::create_directories((g.dir() / path).parent_path());
    write(g.dir() / path, content);
    add.push_back(path);
  }
  git(g.dir(), add);
  git(g.dir(), {"commit", "-q", "-m", "files"});
}

void forget_identity(GitProject& g) {
  git(g.dir(), {"config", "--unset", "user.name"});
  git(g.dir(), {"config", "--unset", "user.email"});
  git(g.dir(), {"config", "user.useConfigOnly", "true"});
}

void restore_identity(GitProject& g) {
  git(g.dir(), {"config", "user.name", "Release Tester"});
  git(g.dir(), {"config", "user.email", "tester@example.com"});
}

/// Runs the undo argv of each step in error.details.done, in the order given (newest first).
void run_undos(GitProject& g, const Envelope& failed) {
  for (const auto& step : failed.error->details["done"].as_array()) {
    if (!step["undo"].is_array()) continue;
    ProcessSpec spec;
    for (const auto& word : step["undo"].as_array()) spec.argv.push_back(word.as_string());
    spec.cwd = g.dir();
    spec.env = git_environment();
    auto ran = run_process(spec);
    REQUIRE(ran);
    INFO("undo of " << step["step"].as_string() << ": " << ran->err);
    REQUIRE(ran->ok());
  }
}

std::size_t count_of(std::string_view text, std::string_view what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string_view::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

}  // namespace

TEST_CASE("release.ship bumps the version field of each format, never a version that looks like it",
          "[release][git]") {
  struct Case {
    std::string file, before, after;
  };
  const std::vector<Case> cases = {
      {"pyproject.toml",
       "[build-system]\nrequires = [\"setuptools>=61.0.0\", \"wheel\"]\nbuild-backend = \"setuptools.build_meta\"\n\n"
       "[project]\nname = \"demo\"\nversion = \"0.9.0\"  # the version\ndependencies = [\"requests>=0.9.0\"]\n",
       "[build-system]\nrequires = [\"setuptools>=61.0.0\", \"wheel\"]\nbuild-backend = \"setuptools.build_meta\"\n\n"
       "[project]\nname = \"demo\"\nversion = \"1.0.0\"  # the version\ndependencies = [\"requests>=0.9.0\"]\n"},
      {"package.json",
       "{\n  \"name\": \"demo\",\n  \"engines\": {\"node\": \">=0.9.0\"},\n  \"dependencies\": {\"version\": \"0.9.0\"},\n"
       "  \"version\": \"0.9.0\"\n}\n",
       "{\n  \"name\": \"demo\",\n  \"engines\": {\"node\": \">=0.9.0\"},\n  \"dependencies\": {\"version\": \"0.9.0\"},\n"
       "  \"version\": \"1.0.0\"\n}\n"},
      {"Cargo.toml",
       "[package]\nname = \"demo\"\nrust-version = \"1.70.0\"\nversion = \"0.9.0\"\n\n[dependencies]\nserde = { version = "
       "\"0.9.0\" }\n",
       "[package]\nname = \"demo\"\nrust-version = \"1.70.0\"\nversion = \"1.0.0\"\n\n[dependencies]\nserde = { version = "
       "\"0.9.0\" }\n"},
      {"CMakeLists.txt",
       "cmake_minimum_required(VERSION 3.20.0)\n# project(old VERSION 0.1.0)\nproject(demo VERSION 0.9.0 LANGUAGES CXX)\n",
       "cmake_minimum_required(VERSION 3.20.0)\n# project(old VERSION 0.1.0)\nproject(demo VERSION 1.0.0 LANGUAGES CXX)\n"},
      {"VERSION", "0.9.0\n", "1.0.0\n"},
  };
  for (const auto& c : cases) {
    INFO(c.file);
    GitProject g;
    seed_release(g.p);
    if (c.file != "VERSION") commit_files(g, {{c.file, c.before}});
    REQUIRE(g.p.mutate_as_person("system", "config.set", R"({"key":"release.versionFile","value":")" + c.file + R"("})").success);
    Envelope shipped = g.p.mutate("release", "ship", R"({"version":"1.0.0"})");
    INFO(to_json(shipped, McpAdvice(registry())));
    REQUIRE(shipped.success);
    CHECK(read(g.dir() / c.file) == c.after);
    CHECK(git(g.dir(), {"show", "HEAD:" + c.file}) + "\n" == c.after);
  }
}

TEST_CASE("release.ship refuses a version file whose version field is missing or ambiguous, before anything runs",
          "[release][git]") {
  struct Case {
    std::string file, text, says;
  };
  const std::vector<Case> cases = {
      {"pyproject.toml",
       "[build-system]\nrequires = [\"setuptools>=61.0.0\"]\n\n[project]\nname = \"demo\"\ndynamic = [\"version\"]\n",
       "no version field"},
      {"pyproject.toml", "[project]\nversion = \"0.9.0\"\n\n[tool.poetry]\nversion = \"0.9.0\"\n", "2 version fields"},
      {"package.json", "{\"name\": \"demo\", \"dependencies\": {\"version\": \"0.9.0\"}}\n", "no version field"},
      {"CMakeLists.txt", "cmake_minimum_required(VERSION 3.20.0)\nproject(demo LANGUAGES CXX)\n", "no version field"},
      {"version.txt", "demo 0.9.0, built with lib 2.0.0\n", "2 version strings"},
      {"VERSION", "unknown\n", "no version"},
  };
  for (const auto& c : cases) {
    INFO(c.file << ": " << c.text);
    GitProject g;
    seed_release(g.p);
    commit_files(g, {{c.file, c.text}});
    REQUIRE(g.p.mutate_as_person("system", "config.set", R"({"key":"release.versionFile","value":")" + c.file + R"("})").success);
    const std::string head = g.head();
    for (const char* params : {R"({"version":"1.0.0","dryRun":true})", R"({"version":"1.0.0"})"}) {
      Envelope refused = g.p.mutate("release", "ship", params);
      INFO(to_json(refused, McpAdvice(registry())));
      REQUIRE_FALSE(refused.success);
      CHECK(code_of(refused) == "E_VALIDATION");
      CHECK(refused.error->message.find(c.says) != std::string::npos);
      CHECK_FALSE(refused.error->fix.empty());
    }
    CHECK(read(g.dir() / c.file) == c.text);
    CHECK_FALSE(std::filesystem::exists(g.dir() / "CHANGELOG.md"));
    CHECK(g.head() == head);
    CHECK_FALSE(g.local_tag("v1.0.0"));
  }
}

TEST_CASE("a ship that stopped at its commit is finished by the retry, never reported released without it",
          "[release][git]") {
  GitProject g;
  seed_release(g.p);
  REQUIRE(g.p.mutate_as_person("system", "config.set", R"({"key":"release.versionFile","value":"VERSION"})").success);
  const std::string before = g.head();
  forget_identity(g);
  Envelope first = g.p.mutate("release", "ship", R"({"version":"1.0.0"})");
  REQUIRE_FALSE(first.success);
  CHECK(first.error->details["failedStep"]["step"].as_string() == "commit");
  // The retry still needs the commit: it fails the same way, and nothing claims a release.
  Envelope retry = g.p.mutate("release", "ship", R"({"version":"1.0.0"})");
  INFO(to_json(retry, McpAdvice(registry())));
  REQUIRE_FALSE(retry.success);
  CHECK(code_of(retry) == "E_ENGINE_FAILED");
  CHECK(retry.error->details["failedStep"]["step"].as_string() == "commit");
  CHECK(g.head() == before);
  CHECK_FALSE(g.local_tag("v1.0.0"));
  CHECK(g.p.query("release", "show", R"({"version":"1.0.0"})").data["status"].as_string() == "active");
  // The plan of a retry is what is left to do: the files hold the release already, so only
  // add, commit and tag remain.
  Envelope dry = g.p.mutate("release", "ship", R"({"version":"1.0.0","dryRun":true})");
  REQUIRE(dry.success);
  std::vector<std::string> names;
  for (const auto& step : dry.data["steps"].as_array()) names.push_back(step["step"].as_string());
  CHECK(names == std::vector<std::string>{"add", "commit", "tag"});

  restore_identity(g);
  Envelope shipped = g.p.mutate("release", "ship", R"({"version":"1.0.0"})");
  INFO(to_json(shipped, McpAdvice(registry())));
  REQUIRE(shipped.success);
  CHECK(git(g.dir(), {"rev-parse", "HEAD~1"}) == before);
  CHECK(shipped.data["commit"].as_string() == g.head());
  CHECK(git(g.dir(), {"show", "--name-only", "--format=", "HEAD"}) == "CHANGELOG.md\nVERSION");
  CHECK(git(g.dir(), {"status", "--porcelain"}).empty());
}

TEST_CASE("release.ship never folds the user's uncommitted edits into its commit", "[release][git]") {
  GitProject g;
  seed_release(g.p);
  const std::string changelog = "# Changelog\n\n## [0.9.0] - 2025-06-01\n\n- Older entry\n";
  commit_files(g, {{"CHANGELOG.md", changelog}, {"src.txt", "code\n"}});
  REQUIRE(g.p.mutate_as_person("system", "config.set", R"({"key":"release.versionFile","value":"VERSION"})").success);
  const std::string head = g.head();

  SECTION("an edit of CHANGELOG.md outside the release's section is refused, before anything runs") {
    const std::string edited = changelog + "- A note the user is still writing\n";
    write(g.dir() / "CHANGELOG.md", edited);
    Envelope refused = g.p.mutate("release", "ship", R"({"version":"1.0.0"})");
    INFO(to_json(refused, McpAdvice(registry())));
    REQUIRE_FALSE(refused.success);
    CHECK(code_of(refused) == "E_VALIDATION");
    CHECK(refused.error->message.find("CHANGELOG.md") != std::string::npos);
    CHECK(read(g.dir() / "CHANGELOG.md") == edited);
    CHECK(read(g.dir() / "VERSION") == "0.9.0\n");
    CHECK(g.head() == head);
    CHECK_FALSE(g.local_tag("v1.0.0"));
  }
  SECTION("an edit of the version file is refused") {
    write(g.dir() / "VERSION", "0.9.5\n");
    Envelope refused = g.p.mutate("release", "ship", R"({"version":"1.0.0"})");
    INFO(to_json(refused, McpAdvice(registry())));
    REQUIRE_FALSE(refused.success);
    CHECK(code_of(refused) == "E_VALIDATION");
    CHECK(refused.error->message.find("VERSION") != std::string::npos);
    CHECK(read(g.dir() / "VERSION") == "0.9.5\n");
    CHECK(read(g.dir() / "CHANGELOG.md") == changelog);
    CHECK(g.head() == head);
  }
  SECTION("a staged edit of CHANGELOG.md that the work tree no longer has is refused") {
    write(g.dir() / "CHANGELOG.md", changelog + "- staged only\n");
    git(g.dir(), {"add", "CHANGELOG.md"});
    write(g.dir() / "CHANGELOG.md", changelog);
    Envelope refused = g.p.mutate("release", "ship", R"({"version":"1.0.0"})");
    INFO(to_json(refused, McpAdvice(registry())));
    REQUIRE_FALSE(refused.success);
    CHECK(code_of(refused) == "E_VALIDATION");
    CHECK(g.head() == head);
  }
  SECTION("edits of other files are left as they are: not committed, not staged") {
    write(g.dir() / "src.txt", "code in progress\n");
    Envelope shipped = g.p.mutate("release", "ship", R"({"version":"1.0.0"})");
    INFO(to_json(shipped, McpAdvice(registry())));
    REQUIRE(shipped.success);
    CHECK(git(g.dir(), {"show", "--name-only", "--format=", "HEAD"}) == "CHANGELOG.md\nVERSION");
    CHECK(git(g.dir(), {"status", "--porcelain"}) == " M src.txt");
    CHECK(read(g.dir() / "src.txt") == "code in progress\n");
  }
  SECTION("the release's own section written before (release.changelog) is replaced, not refused") {
    REQUIRE(g.p.mutate("release", "changelog", R"({"version":"1.0.0","write":true})").success);
    Envelope shipped = g.p.mutate("release", "ship", R"({"version":"1.0.0"})");
    INFO(to_json(shipped, McpAdvice(registry())));
    REQUIRE(shipped.success);
    const std::string text = read(g.dir() / "CHANGELOG.md");
    CHECK(text.find("Unreleased") == std::string::npos);
    CHECK(count_of(text, "## [1.0.0]") == 1);
    CHECK(text.ends_with("## [0.9.0] - 2025-06-01\n\n- Older entry\n"));
  }
}

TEST_CASE("the undo of each file step restores the file as it was before that step", "[release][git]") {
  GitProject g;
  seed_release(g.p);
  commit_files(g, {{"CHANGELOG.md", "# Changelog\n\n## [0.9.0] - 2025-06-01\n\n- Older entry\n"}});
  REQUIRE(g.p.mutate_as_person("system", "config.set", R"({"key":"release.versionFile","value":"VERSION"})").success);
  // The user previewed the release's section and polished it by hand: not committed yet.
  REQUIRE(g.p.mutate("release", "changelog", R"({"version":"1.0.0","write":true})").success);
  std::string polished = read(g.dir() / "CHANGELOG.md");
  polished.replace(polished.find("First stable release"), 20, "Our first stable release, polished");
  write(g.dir() / "CHANGELOG.md", polished);
  const std::string head = g.head();

  forget_identity(g);
  Envelope failed = g.p.mutate("release", "ship", R"({"version":"1.0.0"})");
  INFO(to_json(failed, McpAdvice(registry())));
  REQUIRE_FALSE(failed.success);
  CHECK(failed.error->details["failedStep"]["step"].as_string() == "commit");
  CHECK(read(g.dir() / "CHANGELOG.md") != polished);
  run_undos(g, failed);
  CHECK(read(g.dir() / "CHANGELOG.md") == polished);
  CHECK(read(g.dir() / "VERSION") == "0.9.0\n");
  CHECK(git(g.dir(), {"diff", "--cached", "--name-only"}).empty());
  CHECK(g.head() == head);
}

TEST_CASE("release notes with headings of their own survive a rollback and a second ship", "[release][git]") {
  const std::string notes = "Highlights below.\n\n## Highlights\n\n- faster\n\n## [2.0.0] is next\n";
  const std::string section = render_changelog_section(
      Release{.version = "1.0.0", .notes = notes}, {}, "2026-01-01");
  // The section is one section: nothing in the notes ends it early.
  CHECK(changelog_section(section, "1.0.0") == section);
  CHECK(changelog_section("# C\n\n" + section + "\n## [0.9.0]\n- old\n", "1.0.0") == section + "\n");
  const std::string once = merge_changelog("# C\n\n## [0.9.0]\n- old\n", "1.0.0", section);
  CHECK(merge_changelog(once, "1.0.0", section) == once);

  GitProject g;
  seed_release(g.p);
  REQUIRE(g.p.mutate("release", "create", R"({"version":"1.1.0","notes":"Intro.\n\n## Highlights\n\n- one"})").success);
  REQUIRE(g.p.mutate("release", "plan", R"({"version":"1.1.0","add":["T001"]})").success);
  REQUIRE(g.p.mutate("release", "ship", R"({"version":"1.1.0"})").success);
  const std::string shipped = read(g.dir() / "CHANGELOG.md");
  const std::string commit = g.head();
  REQUIRE(g.p.mutate("release", "rollback", R"({"version":"1.1.0","reason":"re-ship"})").success);
  Envelope again = g.p.mutate("release", "ship", R"({"version":"1.1.0"})");
  INFO(to_json(again, McpAdvice(registry())));
  REQUIRE(again.success);
  CHECK(read(g.dir() / "CHANGELOG.md") == shipped);
  CHECK(count_of(shipped, "## Highlights") == 1);
  CHECK(g.head() == commit);  // nothing new to commit: the tag goes on the release commit
}

TEST_CASE("release files that lead outside the project are refused before anything is written", "[release][git]") {
  GitProject g;
  seed_release(g.p);
  test::TempDir outside;
  write(outside.path() / "victim.txt", "0.9.0\n");
  const std::string head = g.head();

  SECTION("a relative path out of the project") {
    const std::string relative = std::filesystem::relative(outside.path() / "victim.txt", g.dir()).string();
    REQUIRE(relative.starts_with(".."));
    // (Should config.set itself refuse such a value one day, the file is just as safe.)
    if (!g.p.mutate_as_person("system", "config.set", R"({"key":"release.versionFile","value":")" + relative + R"("})").success)
      return;
  }
  SECTION("a symlinked parent directory") {
    std::filesystem::create_directory_symlink(outside.path(), g.dir() / "docs");
    REQUIRE(g.p.mutate_as_person("system", "config.set", R"({"key":"release.versionFile","value":"docs/victim.txt"})").success);
  }
  SECTION("CHANGELOG.md a symlink to a file outside") {
    std::filesystem::create_symlink(outside.path() / "victim.txt", g.dir() / "CHANGELOG.md");
    // release.changelog does not write through it either (nor replace the link).
    Envelope written = g.p.mutate("release", "changelog", R"({"version":"1.0.0","write":true})");
    INFO(to_json(written, McpAdvice(registry())));
    CHECK(code_of(written) == "E_VALIDATION");
    CHECK(std::filesystem::is_symlink(g.dir() / "CHANGELOG.md"));
  }
  for (const char* params : {R"({"version":"1.0.0","dryRun":true})", R"({"version":"1.0.0"})"}) {
    Envelope refused = g.p.mutate("release", "ship", params);
    INFO(to_json(refused, McpAdvice(registry())));
    REQUIRE_FALSE(refused.success);
    CHECK(code_of(refused) == "E_VALIDATION");
    CHECK(refused.error->details["failedStep"].is_null());
  }
  CHECK(read(outside.path() / "victim.txt") == "0.9.0\n");
  CHECK(g.head() == head);
  CHECK_FALSE(g.local_tag("v1.0.0"));
}

TEST_CASE("a release file git ignores is refused before anything is written", "[release][git]") {
  GitProject g;
  seed_release(g.p);
  commit_files(g, {{".gitignore", ".cleo/\nCHANGELOG.md\n"}});
  const std::string head = g.head();
  Envelope refused = g.p.mutate("release", "ship", R"({"version":"1.0.0"})");
  INFO(to_json(refused, McpAdvice(registry())));
  REQUIRE_FALSE(refused.success);
  CHECK(code_of(refused) == "E_VALIDATION");
  CHECK(refused.error->message.find("ignored by git") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(g.dir() / "CHANGELOG.md"));
  CHECK(g.head() == head);
}

TEST_CASE("check_release_file accepts only files inside the project, reached without a symbolic link", "[release]") {
  test::TempDir root, outside;
  std::filesystem::create_directories(root.path() / "docs");
  write(root.path() / "docs" / "VERSION", "1.0.0\n");
  write(outside.path() / "VERSION", "1.0.0\n");
  std::filesystem::create_directory_symlink(outside.path(), root.path() / "away");
  std::filesystem::create_directory_symlink(root.path() / "docs", root.path() / "alias");
  std::filesystem::create_symlink(root.path() / "docs" / "VERSION", root.path() / "LINK");
  for (const char* good : {"VERSION", "docs/VERSION", "./docs/../docs/VERSION", "new/FILE"}) {
    INFO(good);
    CHECK(check_release_file(root.path(), good, "release.versionFile"));
  }
  for (std::string bad : {std::string("../VERSION"), std::string("docs/../../VERSION"), (outside.path() / "VERSION").string(),
                          std::string("away/VERSION"), std::string("alias/VERSION"), std::string("LINK"),
                          std::string(".git/config"), std::string(""), std::string("."), std::string("a\0b", 3)}) {
    INFO(bad);
    auto refused = check_release_file(root.path(), bad, "release.versionFile");
    REQUIRE_FALSE(refused);
    CHECK(refused.error().code == ErrorCode::Validation);
    CHECK(refused.error().message.find("nothing was written") != std::string::npos);
  }
}
