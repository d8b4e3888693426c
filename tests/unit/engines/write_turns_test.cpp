// The writers' turn among processes (engines/store/sqlite/write_turns.h): other processes are
// forked children that take the turn, or hold a write, and wait to be told what to do next.
#include "engines/store/sqlite/write_turns.h"

#include "engines/store/sqlite/sqlite_store.h"

#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <atomic>
#include <string>
#include <thread>

#include "unit/temp_dir.h"
#include "unit/test_support.h"

using namespace ct;
using test::TempDir;
using namespace ct::sqlite;
using namespace std::chrono_literals;

namespace {

/// A child process that runs `hold` (which tells the parent through `ready` once it holds what it
/// holds), then waits for the parent's word and runs `then`. Catch is not used in the child: its
/// exit code says whether its steps went well.
class Holder {
 public:
  Holder(std::function<bool()> hold, std::function<void()> then) {
    REQUIRE(::pipe(ready_) == 0);
    REQUIRE(::pipe(go_) == 0);
    pid_ = ::fork();
    REQUIRE(pid_ >= 0);
    if (pid_ == 0) {
      ::close(ready_[0]);
      ::close(go_[1]);
      const bool held = hold();
      char byte = held ? 'y' : 'n';
      (void)!::write(ready_[1], &byte, 1);
      if (!held) ::_exit(2);
      (void)!::read(go_[0], &byte, 1);
      then();
      ::_exit(0);
    }
    ::close(ready_[1]);
    ::close(go_[0]);
    char byte = 0;
    REQUIRE(::read(ready_[0], &byte, 1) == 1);
    REQUIRE(byte == 'y');
  }
  /// Lets the child go on, and waits for its end; its exit status.
  int finish() {
    char byte = 'g';
    (void)!::write(go_[1], &byte, 1);
    int status = 0;
    ::waitpid(pid_, &status, 0);
    ::close(ready_[0]);
    ::close(go_[1]);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }

 private:
  int ready_[2]{};
  int go_[2]{};
  pid_t pid_ = -1;
};

/// Commits `count` tasks of ~3 KB each (a few WAL frames each) through `store`.
void write_tasks(Store& store, int count, int first = 0) {
  const std::string text(3000, 'x');
  for (int i = first; i < first + count; ++i) {
    REQUIRE(store.begin(TxKind::Write));
    auto id = store.allocate_task_id();
    REQUIRE(id);
    Task task;
    task.id = *id;
    task.title = "task " + std::to_string(i);
    task.description = text;
    task.position = i + 1;
    task.created_at = task.updated_at = 1'700'000'000'000;
    REQUIRE(store.insert_task(task));
    REQUIRE(store.commit());
  }
}

}  // namespace

TEST_CASE("the processes' turn: another process waits for it, gives up after its wait, and takes it from a holder that died",
          "[engines][store][sqlite]") {
  TempDir dir;
  const auto database = dir.path() / "tasks.db";
  auto turn = SharedTurn::open(database);
  REQUIRE(turn);
  CHECK(std::filesystem::is_regular_file(dir.path() / "tasks.db-turn"));

  SECTION("a holder that dies holding it") {
    std::unique_ptr<SharedTurn> child_turn;  // mapped until the child's end, as a store keeps it
    Holder holder(
        [&] {
          child_turn = SharedTurn::open(database);
          return child_turn && child_turn->take(5s) == SharedTurn::Taken::yes;
        },
        [] { /* ends holding it */ });
    CHECK(turn->take(50ms) == SharedTurn::Taken::busy);
    CHECK(holder.finish() == 0);
    // The child ended without giving it back: it died holding it, which hands it on.
    CHECK(turn->take(5s) == SharedTurn::Taken::yes);
    turn->give_back();
  }
  SECTION("a holder that gives it back before it ends") {
    std::unique_ptr<SharedTurn> child_turn;
    Holder holder(
        [&] {
          child_turn = SharedTurn::open(database);
          return child_turn && child_turn->take(5s) == SharedTurn::Taken::yes;
        },
        [&] {
          child_turn->give_back();
          ::usleep(200'000);  // still alive, not holding it
        });
    CHECK(turn->take(50ms) == SharedTurn::Taken::busy);
    CHECK(holder.finish() == 0);
    CHECK(turn->take(5s) == SharedTurn::Taken::yes);
    // Held here now: a new process waits for this one.
    Holder waiter([&] { return SharedTurn::open(database)->take(50ms) == SharedTurn::Taken::busy; }, [] {});
    CHECK(waiter.finish() == 0);
    turn->give_back();
  }
}

TEST_CASE("the processes' turn is made afresh from a file another boot or layout left", "[engines][store][sqlite]") {
  TempDir dir;
  const auto database = dir.path() / "tasks.db";
  {
    std::ofstream junk(dir.path() / "tasks.db-turn", std::ios::binary);
    junk << std::string(4096, '\xff');  // a mutex that looks held by someone long gone
  }
  auto turn = SharedTurn::open(database);
  REQUIRE(turn);
  CHECK(turn->take(1s) == SharedTurn::Taken::yes);
  turn->give_back();
  // One that cannot be had at all (here a directory in its place) is no turn: null, and the store's
  // writers meet SQLite's lock alone.
  TempDir other;
  std::filesystem::create_directory(other.path() / "tasks.db-turn");
  CHECK_FALSE(SharedTurn::open(other.path() / "tasks.db"));
  auto store = test::create_store(other.path() / "tasks.db");
  REQUIRE(store->begin(TxKind::Write));
  REQUIRE(store->commit());
}

TEST_CASE("only a project's store has a turn file: a file of one process's own (a backup being written) has none",
          "[engines][store][sqlite]") {
  TempDir dir;
  SqliteOptions options;
  options.create = true;
  auto own = open_sqlite_store(dir.path() / "backup.db", options);
  REQUIRE(own);
  REQUIRE((*own)->begin(TxKind::Write));
  REQUIRE((*own)->commit());
  CHECK_FALSE(std::filesystem::exists(dir.path() / "backup.db-turn"));
  auto project = test::create_store(dir.path() / "tasks.db");
  REQUIRE(project->begin(TxKind::Write));
  REQUIRE(project->commit());
  CHECK(std::filesystem::exists(dir.path() / "tasks.db-turn"));
}

TEST_CASE("a writer of another process holds the turn: a store's write waits for it, or ends in E_LOCK_TIMEOUT",
          "[engines][store][sqlite]") {
  TempDir dir;
  const auto file = dir.path() / "tasks.db";
  (void)test::create_store(file);
  std::unique_ptr<Store> child_store;
  auto hold_a_write = [&] {
    child_store = test::create_store(file);
    return child_store->begin(TxKind::Write).has_value();
  };
  SECTION("the wait ends when the other write does") {
    Holder holder(hold_a_write, [&] {
      ::usleep(100'000);
      if (!child_store->commit()) ::_exit(3);
    });
    auto store = test::create_store(file, 10000);
    CHECK(std::filesystem::is_regular_file(dir.path() / "tasks.db-turn"));
    // Told to go on first, so that this writer is already waiting when the other one commits.
    std::thread go([&] { CHECK(holder.finish() == 0); });
    auto begun = store->begin(TxKind::Write);
    go.join();
    REQUIRE(begun);
    REQUIRE(store->commit());
  }
  SECTION("a wait longer than the busy timeout is E_LOCK_TIMEOUT, and keeps no turn") {
    Holder holder(hold_a_write, [&] { child_store->rollback(); });
    auto store = test::create_store(file, 100);
    auto blocked = store->begin(TxKind::Write);
    REQUIRE_FALSE(blocked);
    CHECK(blocked.error().code == ErrorCode::LockTimeout);
    CHECK_FALSE(store->in_transaction());
    CHECK(holder.finish() == 0);
    REQUIRE(store->begin(TxKind::Write));
    REQUIRE(store->commit());
  }
}

TEST_CASE("a long-lived writer checkpoints the WAL at SQLite's threshold, after its turn", "[engines][store][sqlite]") {
  TempDir dir;
  const auto file = dir.path() / "tasks.db";
  auto store = test::create_store(file);
  write_tasks(*store, 1000);  // ~4,000 frames: without a checkpoint the WAL would hold them all (16 MB)
  const auto wal = std::filesystem::file_size(dir.path() / "tasks.db-wal");
  CHECK(wal < 6u * 1024 * 1024);
}

TEST_CASE("readers that never all stop do not make the WAL grow without end", "[engines][store][sqlite]") {
  TempDir dir;
  const auto file = dir.path() / "tasks.db";
  auto store = test::create_store(file);
  // Another connection reads over and over, each read on the snapshot of its start: a passive
  // checkpoint never reaches the WAL's end while one of them is open. (A reader that is never out
  // of a transaction holds its read mark for good: SQLite's RESTART never gets it.)
  std::atomic<bool> stop{false};
  std::atomic<int> reads{0};
  std::vector<std::thread> readers;
  for (int r = 0; r < 4; ++r)
    readers.emplace_back([&] {
      sqlite3* db = nullptr;
      if (sqlite3_open_v2(file.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) return;
      while (!stop) {
        sqlite3_exec(db, "BEGIN; SELECT max(num) FROM tasks;", nullptr, nullptr, nullptr);
        ::usleep(300);
        sqlite3_exec(db, "COMMIT", nullptr, nullptr, nullptr);
        ++reads;
        ::usleep(300);  // an agent between its calls
      }
      sqlite3_close(db);
    });
  write_tasks(*store, 7500);  // ~30,000 frames: 120 MB of WAL if it never started over
  stop = true;
  for (auto& reader : readers) reader.join();
  CHECK(reads > 0);
  CHECK(std::filesystem::file_size(dir.path() / "tasks.db-wal") < 28u * 1024 * 1024);  // 4,000 frames, and three restarts that met a reader
}

TEST_CASE("a reader that outlasts the WAL's restart keeps the WAL, and writes go on", "[engines][store][sqlite]") {
  TempDir dir;
  const auto file = dir.path() / "tasks.db";
  auto store = test::create_store(file);
  write_tasks(*store, 10);
  // An export's read: one snapshot held across all the writes below.
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open_v2(file.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK);
  REQUIRE(sqlite3_exec(db, "BEGIN; SELECT count(*) FROM tasks;", nullptr, nullptr, nullptr) == SQLITE_OK);
  write_tasks(*store, 2000, 10);  // past the restart twice: each try gives up after its short wait
  sqlite3_stmt* count = nullptr;
  REQUIRE(sqlite3_prepare_v2(db, "SELECT count(*) FROM tasks", -1, &count, nullptr) == SQLITE_OK);
  REQUIRE(sqlite3_step(count) == SQLITE_ROW);
  CHECK(sqlite3_column_int(count, 0) == 10);  // its snapshot, whole
  sqlite3_finalize(count);
  sqlite3_exec(db, "COMMIT", nullptr, nullptr, nullptr);
  sqlite3_close(db);
  REQUIRE(store->begin(TxKind::Read));
  auto tasks = store->list_tasks(TaskQuery{});
  REQUIRE(tasks);
  CHECK(tasks->size() == 2010u);
  store->rollback();
}
