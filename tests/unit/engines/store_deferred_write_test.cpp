// A task's update whose answer nobody reads: on PostgreSQL it is not sent on its own but with the
// transaction's next statement or its COMMIT, in one round trip (Connection::defer), and a task
// that is not there fails that statement or the commit as E_NOT_FOUND. What must hold either way
// is tested on both backends: the update is read back in its own transaction and kept at commit;
// an update of a missing task — alone, or between two others — fails the call with E_NOT_FOUND
// naming it, keeps nothing of the transaction, and leaves the store as usable as before.
#include <catch2/catch.hpp>

#include <string>

#include "unit/make_task.h"
#include "unit/temp_dir.h"
#include "unit/test_support.h"

namespace ct {
namespace {

using test::make_task;

std::string title_of(Store& store, const std::string& id) {
  REQUIRE(store.begin(TxKind::Read));
  auto task = store.get_task(id);
  store.rollback();
  REQUIRE(task);
  REQUIRE(task->has_value());
  return (*task)->title;
}

/// Runs `body` in a write transaction and commits it; the first failure, after a rollback.
template <typename Body>
Result<void> write(Store& store, Body body) {
  REQUIRE(store.begin(TxKind::Write));
  auto done = body();
  if (done) done = store.commit();
  if (!done && store.in_transaction()) store.rollback();
  return done;
}

}  // namespace

TEST_CASE("store: a task's update is read back in its transaction and kept at commit", "[store][deferred]") {
  test::TempDir dir;
  auto store = test::create_store(dir.path() / "tasks.db");
  REQUIRE(write(*store, [&]() -> Result<void> { return store->insert_task(make_task("T001", "First title")); }));

  REQUIRE(write(*store, [&]() -> Result<void> {
    Task changed = make_task("T001", "Second title");
    CT_TRY(store->update_task(changed));
    // Read back inside the transaction that changed it (the update goes first, with this read).
    CT_TRY_ASSIGN(std::optional<Task> read, store->get_task("T001"));
    CHECK(read);
    if (read) CHECK(read->title == "Second title");
    // Two updates in a row, the commit their only reader.
    changed.title = "Third title";
    CT_TRY(store->update_task(changed));
    changed.title = "Fourth title";
    return store->update_task(changed);
  }));
  CHECK(title_of(*store, "T001") == "Fourth title");
}

TEST_CASE("store: an update of a task that is not there fails with E_NOT_FOUND and keeps nothing",
          "[store][deferred]") {
  test::TempDir dir;
  auto store = test::create_store(dir.path() / "tasks.db");
  REQUIRE(write(*store, [&]() -> Result<void> {
    CT_TRY(store->insert_task(make_task("T001", "Kept one")));
    return store->insert_task(make_task("T002", "Kept two"));
  }));

  SECTION("alone before the commit") {
    auto outcome = write(*store, [&]() -> Result<void> {
      CT_TRY(store->update_task(make_task("T001", "Not kept one")));
      return store->update_task(make_task("T404", "Nowhere"));
    });
    REQUIRE_FALSE(outcome);
    CHECK(outcome.error().code == ErrorCode::NotFound);
    CHECK(outcome.error().message.find("T404") != std::string::npos);
  }
  SECTION("between two updates, before a read") {
    auto outcome = write(*store, [&]() -> Result<void> {
      CT_TRY(store->update_task(make_task("T001", "Not kept one")));
      CT_TRY(store->update_task(make_task("T404", "Nowhere")));
      CT_TRY(store->update_task(make_task("T002", "Not kept two")));
      CT_TRY_ASSIGN(std::optional<Task> read, store->get_task("T002"));
      (void)read;
      FAIL_CHECK("the read after a refused update answered");
      return {};
    });
    REQUIRE_FALSE(outcome);
    CHECK(outcome.error().code == ErrorCode::NotFound);
    CHECK(outcome.error().message.find("T404") != std::string::npos);
  }
  SECTION("after an audit row, rolled back to a savepoint") {
    // The refused update is taken back with its savepoint; what came before it is kept.
    REQUIRE(write(*store, [&]() -> Result<void> {
      CT_TRY(store->update_task(make_task("T001", "Kept after the savepoint")));
      CT_TRY(store->savepoint("step"));
      auto refused = [&]() -> Result<void> {
        CT_TRY(store->update_task(make_task("T404", "Nowhere")));
        return store->release("step");
      }();
      CHECK_FALSE(refused);
      if (!refused) CHECK(refused.error().code == ErrorCode::NotFound);
      CT_TRY(store->rollback_to("step"));
      return {};
    }));
    CHECK(title_of(*store, "T001") == "Kept after the savepoint");
    CHECK(title_of(*store, "T002") == "Kept two");
    return;
  }
  CHECK(title_of(*store, "T001") == "Kept one");
  CHECK(title_of(*store, "T002") == "Kept two");
  // The store goes on as before.
  REQUIRE(write(*store, [&]() -> Result<void> { return store->update_task(make_task("T002", "Changed later")); }));
  CHECK(title_of(*store, "T002") == "Changed later");
}

TEST_CASE("store: a task expected by a write reads as get_task reads it", "[store][deferred]") {
  // PostgreSQL reads it with the lock (TaskStore::expect) and answers the first get_task from
  // that; whatever comes between, get_task answers what is there now.
  test::TempDir dir;
  auto store = test::create_store(dir.path() / "tasks.db");
  REQUIRE(write(*store, [&]() -> Result<void> {
    CT_TRY(store->insert_task(make_task("T001", "First title")));
    return store->insert_task(make_task("T002", "Second title"));
  }));
  auto title_in = [&](const std::string& id) -> std::string {
    auto task = store->get_task(id);
    REQUIRE(task);
    return *task ? (*task)->title : "(none)";
  };
  // A write transaction that expects task `id`.
  auto expecting = [&](const std::string& id) {
    REQUIRE(store->begin(TxKind::Write));
    store->expect({{ExpectedRead::Task, id}});
  };

  SECTION("read first") {
    expecting("T001");
    CHECK(title_in("T001") == "First title");
    CHECK(title_in("T001") == "First title");
    REQUIRE(store->commit());
  }
  SECTION("another read first, then it") {
    expecting("T001");
    CHECK(title_in("T002") == "Second title");
    CHECK(title_in("T001") == "First title");
    REQUIRE(store->commit());
  }
  SECTION("changed before it is read") {
    expecting("T001");
    CHECK(title_in("T002") == "Second title");  // the opening statements go, the read with them
    REQUIRE(store->update_task(make_task("T001", "Changed first")));
    CHECK(title_in("T001") == "Changed first");
    REQUIRE(store->commit());
  }
  SECTION("changed by another writer while this one waited for the lock") {
    auto other = test::create_store(dir.path() / "tasks.db");
    REQUIRE(other->begin(TxKind::Write));
    REQUIRE(other->update_task(make_task("T001", "Changed by the other")));
    REQUIRE(other->get_task("T002"));  // the other holds the writers' lock from here
    REQUIRE(other->commit());
    expecting("T001");
    CHECK(title_in("T001") == "Changed by the other");
    REQUIRE(store->commit());
  }
  SECTION("a task that is not there") {
    expecting("T404");
    CHECK(title_in("T404") == "(none)");
    REQUIRE(store->commit());
  }
  SECTION("rolled back before it is read") {
    expecting("T001");
    store->rollback();
    REQUIRE(write(*store, [&]() -> Result<void> { return store->update_task(make_task("T001", "Changed later")); }));
    REQUIRE(store->begin(TxKind::Write));
    CHECK(title_in("T001") == "Changed later");
    REQUIRE(store->commit());
  }
}

TEST_CASE("store: an update outside a transaction is made at once", "[store][deferred]") {
  // Nothing else would send it: outside a transaction the update is not kept for later.
  test::TempDir dir;
  auto store = test::create_store(dir.path() / "tasks.db");
  REQUIRE(write(*store, [&]() -> Result<void> { return store->insert_task(make_task("T001", "First title")); }));
  REQUIRE(store->update_task(make_task("T001", "Changed at once")));
  {
    // Another connection sees it: it was committed, not kept waiting on this one.
    auto other = test::create_store(dir.path() / "tasks.db");
    CHECK(title_of(*other, "T001") == "Changed at once");
  }
  auto missing = store->update_task(make_task("T404", "Nowhere"));
  REQUIRE_FALSE(missing);
  CHECK(missing.error().code == ErrorCode::NotFound);
  CHECK(title_of(*store, "T001") == "Changed at once");
}

}  // namespace ct
