// providers.install and the host's file on disk: nothing of the user's lost (their members of
// CLEO's entry, other writers' changes), exposed (private files' backups) or broken (inline TOML
// tables, read-only files, symlinks, BOMs, huge numbers, CRLF, a diff patch(1) applies). Every
// file lives in temporary directories (the project and a HOME of its own), never the real ones.
#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

#include "gateway/mcp_syntax.h"
#include "unit/domains/provider_files.h"
#include "unit/test_support.h"

using namespace ct;
using ct::test::backups_of;
using ct::test::code_of;
using ct::test::slurp;
using ct::test::spit;
namespace fs = std::filesystem;

namespace {

struct stat stat_of(const fs::path& path) {
  struct stat info {};
  REQUIRE(::stat(path.c_str(), &info) == 0);
  return info;
}

/// Whether python3's tomllib (the TOML 1.0 reference behaviour) reads `file`.
bool valid_toml(const fs::path& file) {
  const std::string command = "python3 -c 'import sys, tomllib; tomllib.load(open(sys.argv[1], \"rb\"))' '" +
                              file.string() + "' 2>/dev/null";
  return std::system(command.c_str()) == 0;
}

/// A project and a HOME of its own; routers on them as a person at the terminal would use (may
/// write outside the project), all with the same fixed clock second.
class Host {
 public:
  Host() { fs::create_directories(home_.path()); }
  std::unique_ptr<Router> router() const {
    RouterOptions options;
    options.home = home_.path();
    return std::make_unique<Router>(registry(), Workspace::open(project_.dir()), options,
                                    std::make_unique<FixedClock>(*parse_iso8601("2026-01-01T00:00:00Z"), 0));
  }
  Envelope install(std::string_view params) const {
    return router()->dispatch({Gateway::Mutate, "providers", "install", test::parse_json(params),
                               {.principal = test::test_person()}});
  }
  const fs::path& dir() const { return project_.dir(); }
  const fs::path& home() const { return home_.path(); }

 private:
  test::Project project_;
  test::TempDir home_;
};

}  // namespace

TEST_CASE("install into a TOML file whose mcp_servers is an inline table is refused, not broken", "[providers][files]") {
  Host host;
  const fs::path config = host.home() / ".codex" / "config.toml";
  const std::string inline_servers = "model = \"o3\"\nmcp_servers = { other = { command = \"x\" } }\n";
  spit(config, inline_servers);
  REQUIRE(valid_toml(config));
  auto refused = host.install(R"({"provider":"codex","scope":"user"})");
  REQUIRE_FALSE(refused.success);
  CHECK(code_of(refused) == "E_VALIDATION");
  CHECK(refused.error->message.find("~/.codex/config.toml:2: mcp_servers is set here as a value") != std::string::npos);
  CHECK(mcp_text(refused.error->fix, registry()).find("[mcp_servers.<name>]") != std::string::npos);
  CHECK(slurp(config) == inline_servers);
  CHECK(backups_of(config).empty());
  // The same again: refused again (never "unchanged").
  CHECK(code_of(host.install(R"({"provider":"codex","scope":"user"})")) == "E_VALIDATION");

  // [[mcp_servers]] (an array of tables): a [mcp_servers.cleo] would land inside its last element.
  spit(config, "[[mcp_servers]]\nname = \"x\"\n");
  REQUIRE(valid_toml(config));
  CHECK(code_of(host.install(R"({"provider":"codex","scope":"user"})")) == "E_VALIDATION");

  // A [mcp_servers] table holding other servers inline is fine: cleo gets its own table.
  spit(config, "[mcp_servers]\nother = { command = \"x\" }\n");
  REQUIRE(host.install(R"({"provider":"codex","scope":"user"})").success);
  CHECK(valid_toml(config));
  CHECK(slurp(config).find("[mcp_servers.cleo]\ncommand = \"ct\"") != std::string::npos);
}

TEST_CASE("install merges into an existing JSON entry: the user's env, cwd, disabled and timeout stay",
          "[providers][files]") {
  Host host;
  const fs::path config = host.dir() / ".mcp.json";
  spit(config,
       "{\n  \"mcpServers\": {\n    \"cleo\": {\n      \"command\": \"/old/ct\",\n      \"args\": [\"mcp\"],\n"
       "      \"env\": {\"CLEO_TOKEN\": \"secret\", \"BIG\": 1E400},\n      \"cwd\": \"/work\",\n"
       "      \"disabled\": false,\n      \"timeout\": 30000\n    }\n  }\n}\n");
  auto done = host.install(R"({"provider":"claude"})");
  REQUIRE(done.success);
  CHECK(slurp(config) ==
        "{\n  \"mcpServers\": {\n    \"cleo\": {\n      \"command\": \"ct\",\n      \"args\": [\"mcp\"],\n"
        "      \"env\": {\"CLEO_TOKEN\": \"secret\", \"BIG\": 1E400},\n      \"cwd\": \"/work\",\n"
        "      \"disabled\": false,\n      \"timeout\": 30000\n    }\n  }\n}\n");
  CHECK(code_of(host.install(R"({"provider":"claude"})")) == "E_NO_CHANGE");

  // Switching transport drops CLEO's own members (command, args) and keeps the user's.
  auto http = host.install(R"({"provider":"claude","transport":"http"})");
  REQUIRE(http.success);
  CHECK(slurp(config) ==
        "{\n  \"mcpServers\": {\n    \"cleo\": {\n      \"env\": {\"CLEO_TOKEN\": \"secret\", \"BIG\": 1E400},\n"
        "      \"cwd\": \"/work\",\n      \"disabled\": false,\n      \"timeout\": 30000,\n"
        "      \"type\": \"http\",\n      \"url\": \"http://127.0.0.1:8808/mcp\"\n    }\n  }\n}\n");
}

TEST_CASE("a backup keeps the original's mode and owner", "[providers][files]") {
  Host host;
  const fs::path config = host.home() / ".claude.json";
  spit(config, "{\"projects\": {}, \"oauthAccount\": \"private\"}\n");
  REQUIRE(::chmod(config.c_str(), 0600) == 0);
  const bool root = ::geteuid() == 0;
  if (root) REQUIRE(::chown(config.c_str(), 4321, 4322) == 0);
  auto done = host.install(R"({"provider":"claude","scope":"user"})");
  REQUIRE(done.success);
  auto backups = backups_of(config);
  REQUIRE(backups.size() == 1);
  CHECK(slurp(backups.front()) == "{\"projects\": {}, \"oauthAccount\": \"private\"}\n");
  for (const fs::path& file : {backups.front(), config}) {
    INFO(file);
    struct stat info = stat_of(file);
    CHECK((info.st_mode & 07777) == 0600);
    if (root) {
      CHECK(info.st_uid == 4321u);
      CHECK(info.st_gid == 4322u);
    }
  }
}

TEST_CASE("a read-only config is refused, on a dry run too, and left as it was", "[providers][files]") {
  Host host;
  const fs::path config = host.dir() / ".mcp.json";
  spit(config, "{\"mcpServers\": {}}\n");
  REQUIRE(::chmod(config.c_str(), 0444) == 0);
  for (std::string_view params : {R"({"provider":"claude","dryRun":true})", R"({"provider":"claude"})"}) {
    INFO(params);
    auto refused = host.install(params);
    REQUIRE_FALSE(refused.success);
    CHECK(code_of(refused) == "E_FILE_ERROR");
    CHECK(refused.error->message.find("is read-only (mode 0444)") != std::string::npos);
    CHECK(mcp_text(refused.error->fix, registry()).find("chmod u+w") != std::string::npos);
  }
  CHECK(slurp(config) == "{\"mcpServers\": {}}\n");
  CHECK((stat_of(config).st_mode & 07777) == 0444);
  CHECK(backups_of(config).empty());
}

TEST_CASE("a symlinked config is edited through the link; a dangling link or a loop is refused", "[providers][files]") {
  Host host;
  // ~/.claude.json -> dotfiles/claude.json: the target is edited, the link stays.
  const fs::path link = host.home() / ".claude.json";
  const fs::path real = host.home() / "dotfiles" / "claude.json";
  spit(real, "{}\n");
  fs::create_symlink("dotfiles/claude.json", link);
  REQUIRE(host.install(R"({"provider":"claude","scope":"user"})").success);
  CHECK(fs::is_symlink(fs::symlink_status(link)));
  CHECK(slurp(real).find("\"cleo\"") != std::string::npos);

  // A link to nothing.
  const fs::path dangling = host.home() / ".gemini" / "settings.json";
  fs::create_directories(dangling.parent_path());
  fs::create_symlink("../missing/settings.json", dangling);
  auto refused = host.install(R"({"provider":"gemini","scope":"user"})");
  REQUIRE_FALSE(refused.success);
  CHECK(code_of(refused) == "E_FILE_ERROR");
  CHECK(refused.error->message.find("which does not exist") != std::string::npos);
  CHECK(fs::is_symlink(fs::symlink_status(dangling)));
  CHECK_FALSE(fs::exists(host.home() / "missing"));

  // A loop of links.
  const fs::path loop = host.home() / ".cursor" / "mcp.json";
  fs::create_directories(loop.parent_path());
  fs::create_symlink("other.json", loop);
  fs::create_symlink("mcp.json", loop.parent_path() / "other.json");
  auto looped = host.install(R"({"provider":"cursor","scope":"user"})");
  REQUIRE_FALSE(looped.success);
  CHECK(code_of(looped) == "E_FILE_ERROR");
  CHECK(looped.error->message.find("loop") != std::string::npos);
  CHECK(fs::is_symlink(fs::symlink_status(loop)));
}

TEST_CASE("30 concurrent installs of one file all succeed, each applied to the one before", "[providers][files]") {
  Host host;
  const fs::path config = host.dir() / ".mcp.json";
  spit(config, "{\"mcpServers\": {}}\n");
  constexpr int kInstalls = 30;
  std::vector<std::unique_ptr<Router>> routers;
  for (int i = 0; i < kInstalls; ++i) routers.push_back(host.router());
  std::vector<std::string> failures(kInstalls);
  std::atomic<int> ready{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < kInstalls; ++i) {
    threads.emplace_back([&, i] {
      // Each one a different URL, so every install changes the file and takes a backup, all in
      // the same clock second.
      const std::string params = R"({"provider":"claude","transport":"http","url":"http://127.0.0.1:)" +
                                 std::to_string(9000 + i) + R"(/mcp"})";
      ++ready;
      while (ready < kInstalls) std::this_thread::yield();
      auto done = routers[static_cast<std::size_t>(i)]->dispatch(
          {Gateway::Mutate, "providers", "install", test::parse_json(params)});
      if (!done.success) failures[static_cast<std::size_t>(i)] = done.error->message;
    });
  }
  for (auto& thread : threads) thread.join();
  for (int i = 0; i < kInstalls; ++i) {
    INFO(i);
    CHECK(failures[static_cast<std::size_t>(i)].empty());
  }
  // 30 backups of 30 distinct states: the first file and 29 of the installs' results.
  auto backups = backups_of(config);
  CHECK(backups.size() == static_cast<std::size_t>(kInstalls));
  std::set<std::string> states;
  for (const auto& backup : backups) states.insert(slurp(backup));
  states.insert(slurp(config));
  CHECK(states.size() == static_cast<std::size_t>(kInstalls + 1));
  CHECK(json::parse(slurp(config)).has_value());
}

TEST_CASE("valid files that look odd are edited: a BOM, huge numbers, quoted TOML headers", "[providers][files]") {
  Host host;
  const std::string bom = "\xEF\xBB\xBF";
  const fs::path json_file = host.dir() / ".mcp.json";
  spit(json_file, bom + "{\"limits\": {\"max\": 1E400, \"id\": 123456789012345678901234567890}}\n");
  REQUIRE(host.install(R"({"provider":"claude"})").success);
  const std::string json_text = slurp(json_file);
  CHECK(json_text.starts_with(bom + "{\"limits\": {\"max\": 1E400, \"id\": 123456789012345678901234567890},"));
  CHECK(json_text.find("\"cleo\": {") != std::string::npos);

  const fs::path toml_file = host.home() / ".codex" / "config.toml";
  spit(toml_file, "[\"weird]key\"]\na = 1\n\n[mcp_servers.\"a=b\"]\ncommand = \"x\"\n");
  REQUIRE(valid_toml(toml_file));
  REQUIRE(host.install(R"({"provider":"codex","scope":"user"})").success);
  CHECK(valid_toml(toml_file));
  CHECK(slurp(toml_file).ends_with("[mcp_servers.cleo]\ncommand = \"ct\"\nargs = [\"mcp\"]\n"));

  spit(toml_file, bom + "model = \"o3\"\n");
  REQUIRE(host.install(R"({"provider":"codex","scope":"user"})").success);
  CHECK(slurp(toml_file) == bom + "model = \"o3\"\n\n[mcp_servers.cleo]\ncommand = \"ct\"\nargs = [\"mcp\"]\n");
}

TEST_CASE("a CRLF TOML file keeps CRLF on every line", "[providers][files]") {
  Host host;
  const fs::path config = host.home() / ".codex" / "config.toml";
  spit(config, "model = \"o3\"\r\n\r\n[mcp_servers.cleo]\r\ncommand = \"old\"  # mine\r\nenv = { A = \"1\" }\r\n");
  REQUIRE(host.install(R"({"provider":"codex","scope":"user"})").success);
  CHECK(slurp(config) ==
        "model = \"o3\"\r\n\r\n[mcp_servers.cleo]\r\ncommand = \"ct\"\r\nenv = { A = \"1\" }\r\nargs = [\"mcp\"]\r\n");
  CHECK(valid_toml(config));
}

TEST_CASE("the dry run's diff applies with patch(1), also to a file without a final newline", "[providers][files]") {
  for (const std::string& before : {std::string("{\"theme\": \"dark\"}"), std::string("{\"theme\": \"dark\"}\n"),
                                   std::string("{\n  \"a\": 1,\n  \"b\": 2,\n  \"c\": 3,\n  \"d\": 4\n}")}) {
    INFO(before);
    Host host;
    const fs::path config = host.dir() / ".mcp.json";
    spit(config, before);
    auto dry = host.install(R"({"provider":"claude","dryRun":true})");
    REQUIRE(dry.success);
    test::TempDir work;
    spit(work.path() / "file", before);
    spit(work.path() / "change.diff", dry.data["diff"].as_string());
    const std::string command = "patch --quiet --batch '" + (work.path() / "file").string() + "' '" +
                                (work.path() / "change.diff").string() + "' >/dev/null 2>&1";
    CHECK(std::system(command.c_str()) == 0);
    REQUIRE(host.install(R"({"provider":"claude"})").success);
    CHECK(slurp(work.path() / "file") == slurp(config));
  }
}
