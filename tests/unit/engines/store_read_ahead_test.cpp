// Reads a call announces before it makes them (TaskStore::expect, over sql::Runner::read_ahead): on
// PostgreSQL they go with the next statement in one round trip and are answered from it; SQLite
// ignores the hint. What must hold on both backends: every read answers what it answers without
// the hint — in the announced order, with one of them skipped, after another statement or a write
// between, inside a savepoint, outside a transaction — and a failure among them is the failure it
// would have been.
#include <catch2/catch.hpp>

#include <string>

#include "unit/make_task.h"
#include "unit/temp_dir.h"
#include "unit/test_support.h"

namespace ct {
namespace {

using test::make_task;

/// What show reads of task `id`, in show's order: its title, who holds it, its thread's size, its links.
struct Seen {
  std::string title = "(none)";
  std::string holder = "(none)";
  std::int64_t thread = -1;
  std::vector<std::string> links;
  bool operator==(const Seen&) const = default;
};

Seen read_all(Store& store, const std::string& id) {
  Seen out;
  auto task = store.get_task(id);
  REQUIRE(task);
  if (*task) out.title = (*task)->title;
  auto claim = store.claim_on(id);
  REQUIRE(claim);
  if (*claim) out.holder = (*claim)->session;
  auto thread = store.thread_size("task", id);
  REQUIRE(thread);
  out.thread = *thread;
  auto links = store.task_links(id);
  REQUIRE(links);
  for (const auto& link : *links) out.links.push_back(link.key);
  return out;
}

void expect_all(Store& store, const std::string& id) {
  store.expect({{ExpectedRead::Task, id}, {ExpectedRead::Claim, id}, {ExpectedRead::TaskThreadSize, id},
                {ExpectedRead::TaskLinks, id}});
}

/// T001 held by a session, with two messages and a tracker link; T002 bare.
std::unique_ptr<Store> seeded(const std::filesystem::path& file) {
  auto store = test::create_store(file);
  REQUIRE(store->begin(TxKind::Write));
  Task held = make_task("T001", "Held");
  held.status = TaskStatus::Active;
  REQUIRE(store->insert_task(held));
  REQUIRE(store->insert_task(make_task("T002", "Bare")));
  Session session;
  session.id = "ses_0123456789ab";
  session.scope = "global";
  session.agent = "ann";
  session.created_at = session.updated_at = 1'700'000'000'000;
  REQUIRE(store->insert_session(session));
  REQUIRE(store->set_focus(session.id, std::string("T001")));
  for (const char* body : {"one", "two"}) {
    Message message;
    message.at = 1'700'000'000'000;
    message.to_kind = "task";
    message.to_ref = "T001";
    message.body = body;
    message.from_principal = "agent:ann";
    REQUIRE(store->add_message(message, {}));
  }
  TrackerLink link;
  link.tracker = "github";
  link.repository = "o/r";
  link.external_id = "I_1";
  link.task_id = "T001";
  link.key = "o/r#1";
  link.number = 1;
  REQUIRE(store->put_link(link));
  REQUIRE(store->commit());
  return store;
}

}  // namespace

TEST_CASE("store: reads expected by a call answer as they would without", "[store][readahead]") {
  test::TempDir dir;
  auto store = seeded(dir.path() / "tasks.db");
  REQUIRE(store->begin(TxKind::Read));
  const Seen plain_held = read_all(*store, "T001");
  const Seen plain_bare = read_all(*store, "T002");
  const Seen plain_missing = read_all(*store, "T404");
  store->rollback();
  CHECK(plain_held.holder == "ses_0123456789ab");
  CHECK(plain_held.thread == 2);
  CHECK(plain_held.links == std::vector<std::string>{"o/r#1"});

  for (const auto kind : {TxKind::Read, TxKind::Write}) {
    SECTION(kind == TxKind::Read ? "in a read" : "in a write") {
      REQUIRE(store->begin(kind));
      SECTION("in the order announced") {
        expect_all(*store, "T001");
        CHECK(read_all(*store, "T001") == plain_held);
        expect_all(*store, "T002");
        CHECK(read_all(*store, "T002") == plain_bare);
        expect_all(*store, "T404");
        CHECK(read_all(*store, "T404") == plain_missing);
      }
      SECTION("one of them not made") {
        expect_all(*store, "T001");
        auto task = store->get_task("T001");
        REQUIRE(task);
        CHECK((*task)->title == "Held");
        // The claim is not read: the thread and the links answer as they would.
        auto thread = store->thread_size("task", "T001");
        REQUIRE(thread);
        CHECK(*thread == 2);
        auto links = store->task_links("T001");
        REQUIRE(links);
        CHECK(links->size() == 1);
      }
      SECTION("another statement first, then them") {
        expect_all(*store, "T001");
        CHECK(read_all(*store, "T002") == plain_bare);  // sends them; not theirs: forgets them
        CHECK(read_all(*store, "T001") == plain_held);
      }
      SECTION("another of the same statement between") {
        expect_all(*store, "T001");
        auto task = store->get_task("T001");
        REQUIRE(task);
        auto other = store->get_task("T002");  // not the next of them: they are forgotten
        REQUIRE(other);
        CHECK((*other)->title == "Bare");
        CHECK(read_all(*store, "T001") == plain_held);
      }
      SECTION("expected twice, the first never read") {
        expect_all(*store, "T002");
        expect_all(*store, "T001");
        CHECK(read_all(*store, "T001") == plain_held);
      }
      SECTION("inside a savepoint") {
        REQUIRE(store->savepoint("probe"));
        expect_all(*store, "T001");
        CHECK(read_all(*store, "T001") == plain_held);
        expect_all(*store, "T001");
        REQUIRE(store->rollback_to("probe"));  // forgets them
        CHECK(read_all(*store, "T001") == plain_held);
      }
      store->rollback();
    }
  }
}

TEST_CASE("store: reads expected by a write see its writes", "[store][readahead]") {
  test::TempDir dir;
  auto store = seeded(dir.path() / "tasks.db");
  REQUIRE(store->begin(TxKind::Write));
  SECTION("a write announced before them, made first") {
    Task changed = make_task("T002", "Changed");
    REQUIRE(store->update_task(changed));  // deferred on PostgreSQL: sent before them
    expect_all(*store, "T002");
    CHECK(read_all(*store, "T002").title == "Changed");
  }
  SECTION("a write between them") {
    expect_all(*store, "T001");
    auto task = store->get_task("T001");
    REQUIRE(task);
    REQUIRE(store->set_focus("ses_0123456789ab", std::optional<std::string>()));  // forgets them
    auto claim = store->claim_on("T001");
    REQUIRE(claim);
    CHECK(!claim->has_value());
    auto thread = store->thread_size("task", "T001");
    REQUIRE(thread);
    CHECK(*thread == 2);
  }
  SECTION("an update deferred after them") {
    expect_all(*store, "T002");
    REQUIRE(store->update_task(make_task("T002", "Changed")));  // forgets them
    CHECK(read_all(*store, "T002").title == "Changed");
  }
  REQUIRE(store->commit());
}

TEST_CASE("store: a failure with expected reads is the failure it was", "[store][readahead]") {
  test::TempDir dir;
  auto store = seeded(dir.path() / "tasks.db");
  SECTION("the statement that sends them fails") {
    REQUIRE(store->begin(TxKind::Write));
    expect_all(*store, "T001");
    auto again = store->insert_task(make_task("T002", "Twice"));  // the id is taken
    CHECK(!again);
    store->rollback();
  }
  SECTION("an update of a missing task sent with them") {
    REQUIRE(store->begin(TxKind::Write));
    // Refused now (SQLite), or by the statement that sends it with them (PostgreSQL's deferred update).
    auto updated = store->update_task(make_task("T404", "Nobody"));
    expect_all(*store, "T001");
    auto task = store->get_task("T001");
    REQUIRE((!updated || !task));
    CHECK((!updated ? updated.error() : task.error()).code == ErrorCode::NotFound);
    store->rollback();
  }
  // The store goes on as before.
  REQUIRE(store->begin(TxKind::Read));
  expect_all(*store, "T001");
  Seen seen = read_all(*store, "T001");
  store->rollback();
  CHECK(seen.title == "Held");
  CHECK(seen.thread == 2);
}

TEST_CASE("store: reads expected outside a transaction are made as they come", "[store][readahead]") {
  test::TempDir dir;
  auto store = seeded(dir.path() / "tasks.db");
  expect_all(*store, "T001");
  const Seen first = read_all(*store, "T001");
  CHECK(first.title == "Held");
  CHECK(first.holder == "ses_0123456789ab");
  CHECK(first.thread == 2);
  // What another connection writes meanwhile is read (nothing was read before it was asked for).
  expect_all(*store, "T002");
  auto other = test::create_store(dir.path() / "tasks.db");
  REQUIRE(other->begin(TxKind::Write));
  REQUIRE(other->update_task(make_task("T002", "Changed by the other")));
  REQUIRE(other->commit());
  CHECK(read_all(*store, "T002").title == "Changed by the other");
}

}  // namespace ct
