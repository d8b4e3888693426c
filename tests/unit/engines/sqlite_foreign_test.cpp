// Another program's SQLite file read as rows (the original CLEO's tasks.db): never written, every
// read bounded, damage and foreign files said plainly.
#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>

#include <sqlite3.h>

#include "core/sha256.h"
#include "engines/store/sqlite/sqlite_foreign.h"
#include "unit/temp_dir.h"

namespace ct {
namespace {

void make_db(const std::filesystem::path& file, const std::string& sql) {
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open(file.c_str(), &db) == SQLITE_OK);
  char* error = nullptr;
  int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &error);
  INFO((error ? error : ""));
  sqlite3_free(error);
  sqlite3_close(db);
  REQUIRE(rc == SQLITE_OK);
}

std::string bytes_of(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

TEST_CASE("a foreign SQLite file is listed and read, and left as it was", "[sqlite][import]") {
  test::TempDir dir;
  const auto file = dir.path() / "tasks.db";
  make_db(file, "PRAGMA journal_mode = WAL; CREATE TABLE tasks(id TEXT PRIMARY KEY, title TEXT, n INTEGER, r REAL, b BLOB);"
                "INSERT INTO tasks VALUES('T001', 'First', 1, 0.5, x'00ff'), ('T002', NULL, 2, NULL, NULL);"
                "CREATE TABLE empty(a TEXT); CREATE VIRTUAL TABLE words USING fts5(text);");
  const std::string before = sha256_hex(bytes_of(file));

  auto listed = read_foreign_sqlite(file, {});
  REQUIRE(listed);
  const ForeignTable* tasks = listed->find("tasks");
  REQUIRE(tasks);
  CHECK(tasks->columns == std::vector<std::string>{"id", "title", "n", "r", "b"});
  CHECK(tasks->rows == 2);
  CHECK(tasks->records.empty());  // listed, not read
  CHECK(listed->find("empty"));
  CHECK_FALSE(listed->find("words"));  // a virtual table needs its module

  auto read = read_foreign_sqlite(file, {"tasks", "no_such_table"});
  REQUIRE(read);
  const json::Value& rows = read->find("tasks")->records;
  REQUIRE(rows.size() == 2);
  CHECK(rows.as_array()[0] == test::parse_json(R"({"id":"T001","title":"First","n":1,"r":0.5,"b":null})"));
  CHECK(rows.as_array()[1]["title"].is_null());
  CHECK(sha256_hex(bytes_of(file)) == before);
  // Nothing appears beside it either: no journal, and for a database in WAL mode no -wal or -shm.
  for (const char* other : {"tasks.db-journal", "tasks.db-wal", "tasks.db-shm"}) CHECK_FALSE(std::filesystem::exists(dir.path() / other));

  // A path with characters an SQLite URI gives a meaning reads the same.
  const auto odd = dir.path() / "a dir?with #odd%chars" / "tasks.db";
  std::filesystem::create_directories(odd.parent_path());
  std::filesystem::copy_file(file, odd);
  auto again = read_foreign_sqlite(odd, {"tasks"});
  REQUIRE(again);
  CHECK(again->find("tasks")->records.size() == 2);
}

TEST_CASE("a foreign SQLite file its program holds open is read with what it committed", "[sqlite][import]") {
  test::TempDir dir;
  const auto file = dir.path() / "tasks.db";
  sqlite3* writer = nullptr;
  REQUIRE(sqlite3_open(file.c_str(), &writer) == SQLITE_OK);
  REQUIRE(sqlite3_exec(writer, "PRAGMA journal_mode = WAL; PRAGMA wal_autocheckpoint = 0; CREATE TABLE t(v TEXT);"
                               "INSERT INTO t VALUES('committed, still in the -wal');",
                       nullptr, nullptr, nullptr) == SQLITE_OK);
  REQUIRE(std::filesystem::file_size(dir.path() / "tasks.db-wal") > 0);
  auto read = read_foreign_sqlite(file, {"t"});
  sqlite3_close(writer);
  REQUIRE(read);
  CHECK(read->find("t")->records == test::parse_json(R"([{"v":"committed, still in the -wal"}])"));
}

TEST_CASE("a foreign SQLite file past a limit is refused plainly", "[sqlite][import]") {
  test::TempDir dir;
  const auto file = dir.path() / "big.db";
  make_db(file, "CREATE TABLE t(v TEXT); INSERT INTO t VALUES('abc'), ('defgh'), (printf('%.3000c', 'x'));");

  ForeignReadLimits rows;
  rows.max_rows = 2;
  auto too_many = read_foreign_sqlite(file, {"t"}, rows);
  REQUIRE_FALSE(too_many);
  CHECK(too_many.error().code == ErrorCode::Validation);
  CHECK(too_many.error().message.find("3 rows") != std::string::npos);

  ForeignReadLimits value;
  value.max_value_bytes = 1024;
  auto too_big = read_foreign_sqlite(file, {"t"}, value);
  REQUIRE_FALSE(too_big);
  CHECK(too_big.error().code == ErrorCode::Validation);
  CHECK(too_big.error().message.find("1 KiB") != std::string::npos);

  ForeignReadLimits total;
  total.max_total_bytes = 2048;
  auto too_much = read_foreign_sqlite(file, {"t"}, total);
  REQUIRE_FALSE(too_much);
  CHECK(too_much.error().message.find("MiB of text") != std::string::npos);

  ForeignReadLimits tables;
  tables.max_tables = 0;
  CHECK_FALSE(read_foreign_sqlite(file, {}, tables));

  // Within the limits the same file reads.
  CHECK(read_foreign_sqlite(file, {"t"}));
}

TEST_CASE("what is not a SQLite database is said so", "[sqlite][import]") {
  test::TempDir dir;
  CHECK(read_foreign_sqlite(dir.path() / "missing.db", {}).error().code == ErrorCode::NotFound);
  const auto text = dir.path() / "tasks.db";
  std::ofstream(text) << "not a database, just words";
  auto refused = read_foreign_sqlite(text, {});
  REQUIRE_FALSE(refused);
  CHECK(refused.error().code == ErrorCode::FileError);
  CHECK(refused.error().message.find("is not a SQLite database") != std::string::npos);

  // A database whose pages were cut off after the header: damaged, not a crash.
  const auto cut = dir.path() / "cut.db";
  make_db(cut, "CREATE TABLE t(v TEXT); INSERT INTO t VALUES('abc');");
  std::string bytes = bytes_of(cut);
  std::ofstream(cut, std::ios::binary | std::ios::trunc) << bytes.substr(0, 120);
  CHECK_FALSE(read_foreign_sqlite(cut, {"t"}));
}

}  // namespace ct
