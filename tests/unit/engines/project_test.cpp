#include "gateway/mcp_syntax.h"
#include "engines/project/project.h"

#include <catch2/catch.hpp>

#include "engines/project/config.h"
#include "unit/temp_dir.h"
#include "gateway/product.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>

namespace ct {
namespace {

namespace fs = std::filesystem;

using test::TempDir;

/// Changes the working directory for one test and restores it.
struct CwdGuard {
  fs::path saved = fs::current_path();
  explicit CwdGuard(const fs::path& dir) { fs::current_path(dir); }
  ~CwdGuard() {
    std::error_code ec;
    fs::current_path(saved, ec);
  }
  CwdGuard(const CwdGuard&) = delete;
  CwdGuard& operator=(const CwdGuard&) = delete;
};

/// Sets (or unsets, with nullptr) CLEO_ROOT for one test and restores the previous value.
struct CleoRootGuard {
  std::optional<std::string> saved;
  explicit CleoRootGuard(const char* value) {
    if (const char* old = std::getenv("CLEO_ROOT")) saved = old;
    if (value != nullptr) setenv("CLEO_ROOT", value, 1);
    else unsetenv("CLEO_ROOT");
  }
  ~CleoRootGuard() {
    if (saved) setenv("CLEO_ROOT", saved->c_str(), 1);
    else unsetenv("CLEO_ROOT");
  }
  CleoRootGuard(const CleoRootGuard&) = delete;
  CleoRootGuard& operator=(const CleoRootGuard&) = delete;
};

/// Sets (or unsets, with nullptr) an environment variable for one test and restores it.
struct EnvGuard {
  std::string name;
  std::optional<std::string> saved;
  EnvGuard(std::string variable, const char* value) : name(std::move(variable)) {
    if (const char* old = std::getenv(name.c_str())) saved = old;
    if (value != nullptr) setenv(name.c_str(), value, 1);
    else unsetenv(name.c_str());
  }
  ~EnvGuard() {
    if (saved) setenv(name.c_str(), saved->c_str(), 1);
    else unsetenv(name.c_str());
  }
  EnvGuard(const EnvGuard&) = delete;
  EnvGuard& operator=(const EnvGuard&) = delete;
};

void make_project(const fs::path& root) {
  fs::create_directories(root / ".cleo");
  std::ofstream(root / ".cleo" / "tasks.db") << "";
}

}  // namespace

TEST_CASE("find_project walks up from a subdirectory", "[engines][project]") {
  TempDir dir;
  CleoRootGuard env(nullptr);
  make_project(dir.path());
  auto nested = dir.path() / "src" / "deep" / "er";
  fs::create_directories(nested);
  CwdGuard cwd(nested);

  auto project = find_project(std::nullopt);
  REQUIRE(project);
  CHECK(project->root == dir.path());
  CHECK(project->db_path() == dir.path() / ".cleo" / "tasks.db");
  CHECK(project->config_path() == dir.path() / ".cleo" / "config.json");
  CHECK(init_target(std::nullopt) == nested);
}

TEST_CASE("find_project needs tasks.db inside .cleo", "[engines][project]") {
  TempDir dir;
  CleoRootGuard env(nullptr);
  fs::create_directories(dir.path() / "work" / ".cleo");  // a .cleo without a database does not count
  CwdGuard cwd(dir.path() / "work");
  auto project = find_project(std::nullopt);
  REQUIRE_FALSE(project);
  CHECK(project.error().code == ErrorCode::NotInitialized);
  CHECK(project.error().message.find((dir.path() / "work").string()) != std::string::npos);
  CHECK(mcp_text(project.error().fix, registry()).find("init") != std::string::npos);
}

TEST_CASE("find_project honours an explicit directory", "[engines][project]") {
  TempDir dir;
  CleoRootGuard env(nullptr);
  make_project(dir.path() / "a");
  fs::create_directories(dir.path() / "b");

  auto found = find_project(dir.path() / "a");
  REQUIRE(found);
  CHECK(found->root == dir.path() / "a");

  auto uninitialised = find_project(dir.path() / "b");
  REQUIRE_FALSE(uninitialised);
  CHECK(uninitialised.error().code == ErrorCode::NotInitialized);

  // An explicit directory is not searched upwards.
  fs::create_directories(dir.path() / "a" / "sub");
  auto below = find_project(dir.path() / "a" / "sub");
  REQUIRE_FALSE(below);
  CHECK(below.error().code == ErrorCode::NotInitialized);

  auto missing = find_project(dir.path() / "nope");
  REQUIRE_FALSE(missing);
  CHECK(missing.error().code == ErrorCode::FileError);

  CHECK(init_target(dir.path() / "b") == dir.path() / "b");
}

TEST_CASE("find_project honours CLEO_ROOT", "[engines][project]") {
  TempDir dir;
  make_project(dir.path() / "root");
  fs::create_directories(dir.path() / "elsewhere");
  CwdGuard cwd(dir.path() / "elsewhere");
  {
    CleoRootGuard env((dir.path() / "root").c_str());
    auto project = find_project(std::nullopt);
    REQUIRE(project);
    CHECK(project->root == dir.path() / "root");
    CHECK(init_target(std::nullopt) == dir.path() / "root");
    // --project wins over CLEO_ROOT.
    auto explicit_project = find_project(dir.path() / "elsewhere");
    REQUIRE_FALSE(explicit_project);
  }
  {
    CleoRootGuard env((dir.path() / "missing").c_str());
    auto project = find_project(std::nullopt);
    REQUIRE_FALSE(project);
    CHECK(project.error().code == ErrorCode::FileError);
  }
  {
    CleoRootGuard env(nullptr);
    CHECK(init_target(std::nullopt) == dir.path() / "elsewhere");
  }
}

TEST_CASE("lies_within follows every symlink on the way: parent folders, dangling links, loops", "[engines][project]") {
  TempDir dir;
  const fs::path root = dir.path() / "project";
  const fs::path outside = dir.path() / "elsewhere";
  fs::create_directories(root / "docs");
  fs::create_directories(outside);
  CHECK(lies_within(root / "docs" / "a.md", root));
  CHECK(lies_within(root / "new" / "folder" / "b.json", root));  // not there yet: as written
  CHECK_FALSE(lies_within(root, root));
  CHECK_FALSE(lies_within(root / ".." / "elsewhere" / "c", root));
  // A parent folder that is a link out (the last component is an ordinary name).
  fs::create_directory_symlink(outside, root / ".vscode");
  CHECK_FALSE(lies_within(root / ".vscode" / "mcp.json", root));
  CHECK(resolve_links(root / ".vscode" / "mcp.json") == resolve_links(outside / "mcp.json"));
  // A relative link to a folder inside, and `..` taken after the link, as the kernel does.
  fs::create_directory_symlink("docs", root / "d");
  CHECK(lies_within(root / "d" / "x", root));
  fs::create_directories(outside / "deep");
  fs::create_directory_symlink(outside / "deep", root / "deep");
  CHECK_FALSE(lies_within(root / "deep" / ".." / "x", root));
  // A dangling link counts where it points.
  fs::create_symlink(outside / "missing.json", root / "dangling.json");
  CHECK_FALSE(lies_within(root / "dangling.json", root));
  fs::create_symlink("docs/missing.json", root / "dangling-in.json");
  CHECK(lies_within(root / "dangling-in.json", root));
  // A loop resolves to nothing, and so lies nowhere.
  fs::create_symlink(root / "loop-b", root / "loop-a");
  fs::create_symlink(root / "loop-a", root / "loop-b");
  CHECK_FALSE(resolve_links(root / "loop-a" / "x"));
  CHECK_FALSE(lies_within(root / "loop-a" / "x", root));
  // The root itself reached through a link.
  fs::create_directory_symlink(root, dir.path() / "alias");
  CHECK(lies_within(dir.path() / "alias" / "docs" / "a.md", root));
  CHECK(lies_within(root / "docs" / "a.md", dir.path() / "alias"));
}

}  // namespace ct

namespace ct {

TEST_CASE("one function says where a project's store is: the environment, then the config, else SQLite",
          "[engines][project]") {
  EnvGuard url("CLEO_DATABASE_URL", nullptr);
  EnvGuard schema("CLEO_DATABASE_SCHEMA", nullptr);
  CHECK(store_location(nullptr).url.empty());
  Config config;
  CHECK(store_location(&config).url.empty());
  REQUIRE(config.set("storage.url", json::Value("postgresql://ann@db/team")));
  REQUIRE(config.set("storage.schema", json::Value("ours")));
  CHECK(store_location(&config).url == "postgresql://ann@db/team");
  CHECK(store_location(&config).schema == "ours");
  {
    EnvGuard env_url("CLEO_DATABASE_URL", "host=other dbname=cleo");
    CHECK(store_location(&config).url == "host=other dbname=cleo");
    CHECK(store_location(&config).schema == "ours");
    CHECK(store_location(nullptr).schema == "cleo");
  }
  {
    // What does not name a server is no server, from the environment as from the config.
    EnvGuard env_url("CLEO_DATABASE_URL", "copies/tasks.db");
    CHECK(store_location(nullptr).url.empty());
  }

  // A .cleo/ whose config names a server is a project without tasks.db; one naming none is not.
  TempDir dir;
  CleoRootGuard root(nullptr);
  fs::create_directories(dir.path() / ".cleo");
  REQUIRE(config.save(dir.path() / ".cleo" / "config.json"));
  CHECK(find_project(dir.path()));
  REQUIRE(config.set("storage.url", json::Value("")));
  REQUIRE(config.save(dir.path() / ".cleo" / "config.json"));
  CHECK_FALSE(find_project(dir.path()));
}

}  // namespace ct
