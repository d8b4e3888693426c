// The planner's statistics after a bulk write: on PostgreSQL, a connection that inserted 1,000 tasks
// (an import, a tracker's first sync page by page) analyses them when it commits, instead of
// leaving the planner with an empty table's statistics until autovacuum comes by (tasks.next took
// 0.7 s at 2,000 tasks meanwhile); fewer inserts, or a rolled-back transaction's, do not.
#include <catch2/catch.hpp>

#include <libpq-fe.h>

#include <cstdio>
#include <string>

#include "unit/temp_dir.h"
#include "unit/test_support.h"

namespace ct {
namespace {

/// pg_class.reltuples of the store's tasks table: -1 until the table is first analysed (or vacuumed).
double estimated_tasks(const std::filesystem::path& file) {
  PGconn* conn = PQconnectdb(test::pg_url().c_str());
  const std::string sql = "SELECT c.reltuples FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
                          "WHERE n.nspname = '" + test::pg_schema(file) + "' AND c.relname = 'tasks'";
  PGresult* result = PQexec(conn, sql.c_str());
  const double value = PQresultStatus(result) == PGRES_TUPLES_OK && PQntuples(result) == 1
                           ? std::stod(PQgetvalue(result, 0, 0)) : -2;
  PQclear(result);
  PQfinish(conn);
  return value;
}

void insert(Store& store, int from, int count, bool keep) {
  REQUIRE(store.begin(TxKind::Write));
  for (int i = from; i < from + count; ++i) {
    Task task;
    char id[16];
    std::snprintf(id, sizeof id, "T%03d", i);
    task.id = id;
    task.title = "Bulk task " + std::to_string(i);
    task.position = i;
    task.created_at = task.updated_at = 1'700'000'000'000;
    auto inserted = store.insert_task(task);
    INFO(task.id << ": " << (inserted ? std::string() : inserted.error().message));
    REQUIRE(inserted);
  }
  if (keep) REQUIRE(store.commit());
  else store.rollback();
}

}  // namespace

TEST_CASE("store: PostgreSQL analyses the tasks after a bulk insert", "[store][statistics]") {
  if (!test::on_postgresql()) {
    SUCCEED("SQLite plans this store's queries without statistics; the postgresql label runs this");
    return;
  }
  test::TempDir dir;
  const auto file = dir.path() / "tasks.db";
  auto store = test::create_store(file);
  test::run_sql(file, "ALTER TABLE tasks SET (autovacuum_enabled = false)");  // only ct analyses it here
  CHECK(estimated_tasks(file) < 0);  // never analysed

  insert(*store, 1, 600, true);
  insert(*store, 601, 600, false);  // rolled back: does not count
  CHECK(estimated_tasks(file) < 0);

  insert(*store, 601, 500, true);  // 1,100 kept in all, over two transactions
  CHECK(estimated_tasks(file) > 1000);
}

}  // namespace ct
