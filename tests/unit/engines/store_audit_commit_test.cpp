// The audit row a write transaction appends last: on PostgreSQL it is sent with COMMIT in one round
// trip (Connection::defer), so what must hold either way is tested on both backends — a row
// appended is read back in its own transaction, a rollback to a savepoint takes back the rows
// appended since (and only those), a rollback takes back all, and the chain verifies after.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include "engines/store/audit_chain.h"
#include "unit/temp_dir.h"
#include "unit/test_support.h"

namespace ct {
namespace {

AuditEntry entry(std::string operation, TimeMs at) {
  AuditEntry out;
  out.at = at;
  out.operation = std::move(operation);
  out.outcome = "ok";
  out.changes.push_back({"T001", "title", json::Value("before"), json::Value("after")});
  return out;
}

std::vector<std::string> operations(Store& store) {
  std::vector<std::string> out;
  auto rows = store.read_audit(AuditQuery{});
  REQUIRE(rows);
  for (const auto& row : *rows) out.push_back(row.operation);
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

TEST_CASE("store: the last audit row of a write commits, rolls back and chains as the others", "[store][audit]") {
  test::TempDir dir;
  auto store = test::create_store(dir.path() / "tasks.db");

  REQUIRE(store->begin(TxKind::Write));
  REQUIRE(store->append_audit(entry("kept.first", 1'700'000'000'000)));
  REQUIRE(store->savepoint("step"));
  REQUIRE(store->append_audit(entry("taken.back", 1'700'000'000'001)));
  REQUIRE(store->rollback_to("step"));
  auto second = store->append_audit(entry("kept.second", 1'700'000'000'002));
  REQUIRE(second);
  // Read back inside the transaction that appended it.
  CHECK(operations(*store) == std::vector<std::string>{"kept.first", "kept.second"});
  REQUIRE(store->commit());

  REQUIRE(store->begin(TxKind::Write));
  REQUIRE(store->append_audit(entry("rolled.back", 1'700'000'000'003)));
  store->rollback();

  REQUIRE(store->begin(TxKind::Write));
  auto third = store->append_audit(entry("kept.third", 1'700'000'000'004));
  REQUIRE(third);
  REQUIRE(store->commit());
  CHECK(*third == *second + 1);  // the rows taken back left no gap

  REQUIRE(store->begin(TxKind::Read));
  CHECK(operations(*store) == std::vector<std::string>{"kept.first", "kept.second", "kept.third"});
  auto report = verify_audit_chain(*store);
  REQUIRE(report);
  CHECK(report->rows == 3);
  CHECK_FALSE(report->first_broken);
  store->rollback();
}

}  // namespace ct
