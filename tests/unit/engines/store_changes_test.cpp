// The store's change signal (Store::change_stamp, Store::wait_for_change): a commit of another
// connection moves the stamp; on PostgreSQL a waiter is told of it when it happens (LISTEN/NOTIFY),
// not when its time runs out, and neither a rolled-back write nor another store's commit wakes it;
// SQLite cannot be told and says so at once.
#include <catch2/catch.hpp>

#include <sys/eventfd.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <thread>

#include "unit/temp_dir.h"
#include "unit/test_support.h"

namespace ct {
namespace {

using namespace std::chrono_literals;
using Steady = std::chrono::steady_clock;

std::unique_ptr<Store> open_again(const std::filesystem::path& file) {
  auto store = test::backend_for(file)->open(StoreOptions{});
  if (!store) throw std::runtime_error("open_again: " + store.error().message);
  return std::move(*store);
}

void empty_write(Store& store) {
  REQUIRE(store.begin(TxKind::Write));
  REQUIRE(store.commit());
}

}  // namespace

TEST_CASE("store: a waiter is told of another connection's commit, and of nothing else", "[store][changes]") {
  test::TempDir dir;
  const auto file = dir.path() / "tasks.db";
  auto writer = test::create_store(file);
  auto watcher = open_again(file);

  Result<Waited> first = watcher->wait_for_change(0ms, -1);
  REQUIRE(first);
  if (!test::on_postgresql()) {
    CHECK(*first == Waited::Never);  // SQLite: live views read the stamp on their clock
    return;
  }
  CHECK(*first == Waited::Quiet);  // listening from now on; nothing committed yet
  const auto before = watcher->change_stamp();
  REQUIRE(before);

  // A commit while the watcher waits wakes it long before its timeout.
  const auto start = Steady::now();
  std::thread commit([&] {
    std::this_thread::sleep_for(50ms);
    empty_write(*writer);
  });
  Result<Waited> told = watcher->wait_for_change(20s, -1);
  commit.join();
  REQUIRE(told);
  CHECK(*told == Waited::Changed);
  CHECK(Steady::now() - start < 10s);
  const auto after = watcher->change_stamp();
  REQUIRE(after);
  CHECK(*after != *before);

  // A write that is rolled back tells nothing.
  REQUIRE(writer->begin(TxKind::Write));
  writer->rollback();
  Result<Waited> quiet = watcher->wait_for_change(300ms, -1);
  REQUIRE(quiet);
  CHECK(*quiet == Waited::Quiet);

  // Another store's commit (another schema on the same server) does not wake it.
  auto other = test::create_store(dir.path() / "other.db");
  empty_write(*other);
  quiet = watcher->wait_for_change(300ms, -1);
  REQUIRE(quiet);
  CHECK(*quiet == Waited::Quiet);

  // A commit made while the watcher was busy elsewhere is told at its next wait.
  empty_write(*writer);
  REQUIRE(watcher->change_stamp());  // a statement that may read the notification along
  told = watcher->wait_for_change(20s, -1);
  REQUIRE(told);
  CHECK(*told == Waited::Changed);

  // The interrupt ends a wait at once.
  const int bell = ::eventfd(0, EFD_CLOEXEC);
  REQUIRE(bell >= 0);
  const std::uint64_t one = 1;
  REQUIRE(::write(bell, &one, sizeof one) == sizeof one);
  const auto rung = Steady::now();
  quiet = watcher->wait_for_change(20s, bell);
  ::close(bell);
  REQUIRE(quiet);
  CHECK(*quiet == Waited::Quiet);
  CHECK(Steady::now() - rung < 10s);

  // Not inside a transaction.
  REQUIRE(watcher->begin(TxKind::Read));
  CHECK_FALSE(watcher->wait_for_change(0ms, -1));
  watcher->rollback();
}

}  // namespace ct
