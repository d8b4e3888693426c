// The backend seam (engines/store/store_backend.h) as the SQLite backend implements it: what domains/
// see of a project's store before and instead of opening it.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include "engines/store/open/open_store.h"
#include "unit/temp_dir.h"

namespace ct {
namespace {

namespace fs = std::filesystem;

Project project_in(const fs::path& root) {
  fs::create_directories(root / ".cleo");
  return Project{root};
}

TEST_CASE("a project's store: missing, created, inspected, copied", "[store][backend]") {
  test::TempDir dir;
  Project project = project_in(dir.path());
  auto store = project_store(project);
  CHECK(store->kind() == "sqlite");
  CHECK(store->location() == project.db_path().string());

  // Nothing there yet.
  CHECK(store->inspect(false).error().code == ErrorCode::NotFound);
  CHECK(store->open(StoreOptions{}).error().code == ErrorCode::NotInitialized);

  REQUIRE(store->open(StoreOptions{.create = true}));
  auto info = store->inspect(true);
  REQUIRE(info);
  CHECK(info->schema_version == store_schema_version());
  CHECK(info->tables > 0);
  CHECK(info->problems.empty());
  REQUIRE(!store->migrations().empty());
  CHECK(store->migrations().back().version == store_schema_version());

  // A copy is a backup file: readable, and opened as a store of this schema.
  fs::path copy = dir.path() / "copy.db";
  REQUIRE(store->copy_to(copy));
  CHECK(inspect_backup_file(copy, true)->schema_version == store_schema_version());
  CHECK(open_backup_file(copy));

  auto health = store->health();
  REQUIRE(health.size() == 1);
  CHECK(health[0].name == "wal");
  CHECK(health[0].status == "ok");
}

TEST_CASE("an empty store is erased; a damaged one is replaced by a backup and kept aside", "[store][backend]") {
  test::TempDir dir;
  Project project = project_in(dir.path());
  auto store = project_store(project);
  std::ofstream(project.db_path()).flush();  // an interrupted init: an empty file
  auto empty = store->inspect(false);
  REQUIRE(empty);
  CHECK(empty->tables == 0);
  store->erase_empty();
  CHECK(!fs::exists(project.db_path()));

  // A good backup, then the live store damaged beyond opening.
  REQUIRE(store->open(StoreOptions{.create = true}));
  fs::path backup = dir.path() / "good.db";
  REQUIRE(store->copy_to(backup));
  std::ofstream(project.db_path(), std::ios::trunc) << "not a database at all, just text";
  CHECK(!store->open(StoreOptions{}));

  auto aside = store->replace_with_backup(backup, project.cleo_dir() / "damaged", 1'767'225'600'000);
  REQUIRE(aside);
  CHECK(!aside->empty());
  CHECK(fs::exists(project.cleo_dir() / "damaged" / *aside));
  CHECK(!fs::exists(backup));  // it took the store's place
  CHECK(store->open(StoreOptions{}));
}

}  // namespace
}  // namespace ct
