#include "gateway/mcp_syntax.h"
#include "engines/store/sqlite/sqlite_store.h"

#include <sqlite3.h>

#include <catch2/catch.hpp>

#include "engines/store/audit_chain.h"
#include "unit/make_task.h"
#include "unit/temp_dir.h"
#include "unit/test_support.h"

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace ct {
namespace {

namespace fs = std::filesystem;

using test::TempDir;

using test::make_task;

/// Allocates an id and inserts a task with it, in one write transaction.
std::string add(Store& store, std::string title, std::string parent = "", std::int64_t position = 0) {
  REQUIRE(store.begin(TxKind::Write));
  auto id = store.allocate_task_id();
  REQUIRE(id);
  Task task = make_task(*id, std::move(title), position);
  task.parent = std::move(parent);
  REQUIRE(store.insert_task(task));
  REQUIRE(store.commit());
  return *id;
}

std::vector<std::string> ids_of(const std::vector<Task>& tasks) {
  std::vector<std::string> ids;
  for (const auto& task : tasks) ids.push_back(task.id);
  return ids;
}

std::int64_t sqlite_user_version(const fs::path& file) {
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open_v2(file.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK);
  sqlite3_stmt* stmt = nullptr;
  REQUIRE(sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &stmt, nullptr) == SQLITE_OK);
  REQUIRE(sqlite3_step(stmt) == SQLITE_ROW);
  std::int64_t version = sqlite3_column_int64(stmt, 0);
  sqlite3_finalize(stmt);
  sqlite3_close(db);
  return version;
}

void set_user_version(const fs::path& file, std::int64_t version) {
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open_v2(file.c_str(), &db, SQLITE_OPEN_READWRITE, nullptr) == SQLITE_OK);
  std::string sql = "PRAGMA user_version = " + std::to_string(version);
  REQUIRE(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr) == SQLITE_OK);
  sqlite3_close(db);
}

}  // namespace

TEST_CASE("open creates the schema and records its version", "[engines][store][sqlite]") {
  TempDir dir;
  auto file = dir.path() / ".cleo" / "tasks.db";
  {
    auto store = test::create_store(file);
    auto version = store->schema_version();
    REQUIRE(version);
    CHECK(*version == sqlite_schema_version());
    CHECK(*version >= 1);
    add(*store, "First task");
  }
  CHECK(sqlite_user_version(file) == sqlite_schema_version());

  // Reopening without create keeps the data and does not re-run migrations (which would fail on
  // existing tables or reset the id counter).
  auto reopened = open_sqlite_store(file, SqliteOptions{});
  REQUIRE(reopened);
  auto first = (*reopened)->get_task("T001");
  REQUIRE(first);
  REQUIRE(first->has_value());
  CHECK((*first)->title == "First task");
  CHECK(add(**reopened, "Second task") == "T002");
}

TEST_CASE("a missing database is E_NOT_INITIALIZED", "[engines][store][sqlite]") {
  TempDir dir;
  auto store = open_sqlite_store(dir.path() / "tasks.db", SqliteOptions{});
  REQUIRE_FALSE(store);
  CHECK(store.error().code == ErrorCode::NotInitialized);
  CHECK_FALSE(store.error().fix.empty());
  CHECK_FALSE(fs::exists(dir.path() / "tasks.db"));
}

TEST_CASE("a file that is not a database is E_FILE_ERROR", "[engines][store][sqlite]") {
  TempDir dir;
  auto file = dir.path() / "tasks.db";
  {
    std::ofstream out(file, std::ios::binary);
    for (int i = 0; i < 200; ++i) out << "this is not an sqlite database, just some text\n";
  }
  for (bool create : {false, true}) {
    SqliteOptions options;
    options.create = create;
    auto store = open_sqlite_store(file, options);
    REQUIRE_FALSE(store);
    CHECK(store.error().code == ErrorCode::FileError);
    CHECK(store.error().message.find(file.string()) != std::string::npos);
    CHECK(mcp_text(store.error().fix, registry()).find("backup") != std::string::npos);
  }
}

TEST_CASE("a corrupted database is E_FILE_ERROR, never a crash", "[engines][store][sqlite]") {
  TempDir dir;
  auto file = dir.path() / "tasks.db";
  {
    auto store = test::create_store(file);
    REQUIRE(store->begin(TxKind::Write));
    bool inserted = true;
    for (int i = 1; i <= 300 && inserted; ++i) {
      Task task = make_task(format_task_id(i), "Task number " + std::to_string(i) + std::string(200, 'x'));
      inserted = store->insert_task(task).has_value();
    }
    REQUIRE(inserted);
    REQUIRE(store->commit());
  }
  // Fold the WAL into the main file, then overwrite everything after the first page.
  {
    sqlite3* db = nullptr;
    REQUIRE(sqlite3_open_v2(file.c_str(), &db, SQLITE_OPEN_READWRITE, nullptr) == SQLITE_OK);
    REQUIRE(sqlite3_exec(db, "PRAGMA wal_checkpoint(TRUNCATE)", nullptr, nullptr, nullptr) == SQLITE_OK);
    sqlite3_close(db);
  }
  auto size = fs::file_size(file);
  REQUIRE(size > 8192);
  {
    std::fstream out(file, std::ios::in | std::ios::out | std::ios::binary);
    out.seekp(4096);
    std::string garbage(size - 4096, '\xA5');
    out.write(garbage.data(), static_cast<std::streamsize>(garbage.size()));
  }
  auto store = open_sqlite_store(file, SqliteOptions{});
  if (!store) {
    CHECK(store.error().code == ErrorCode::FileError);
    return;
  }
  TaskQuery all;
  auto tasks = (*store)->list_tasks(all);
  REQUIRE_FALSE(tasks);
  CHECK(tasks.error().code == ErrorCode::FileError);
  CHECK(mcp_text(tasks.error().fix, registry()).find("backup") != std::string::npos);
}

TEST_CASE("a short-lived writer leaves a short WAL to the next process and checkpoints a long one",
          "[engines][store][sqlite]") {
  TempDir dir;
  auto file = dir.path() / ".cleo" / "tasks.db";
  const fs::path wal = file.string() + "-wal";
  test::create_store(file).reset();
  SqliteOptions options;
  options.short_lived = true;
  {
    auto store = open_sqlite_store(file, options);
    REQUIRE(store);
    add(**store, "Kept in the WAL");
  }
  // The commit stays in the WAL (nothing was checkpointed or deleted on close), and the next
  // connection reads it: from the WAL, whose index it rebuilds.
  REQUIRE(fs::exists(wal));
  const auto short_wal = fs::file_size(wal);
  CHECK(short_wal > 0);
  {
    auto reader = open_sqlite_store(file, options);
    REQUIRE(reader);
    auto task = (*reader)->get_task("T001");
    REQUIRE(task);
    REQUIRE(task->has_value());
    CHECK((*task)->title == "Kept in the WAL");
  }
  CHECK(fs::file_size(wal) == short_wal);  // a reader neither checkpoints nor deletes it

  // A writer that leaves the WAL past the limit checkpoints it into the database and truncates it.
  {
    auto store = open_sqlite_store(file, options);
    REQUIRE(store);
    const std::string long_text(4000, 'x');
    for (int i = 0; i < 200; ++i) add(**store, "Long " + std::to_string(i) + " " + long_text);
  }
  CHECK(fs::file_size(wal) == 0);
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open_v2(("file:" + file.string() + "?immutable=1").c_str(), &db,
                          SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, nullptr) == SQLITE_OK);
  sqlite3_stmt* stmt = nullptr;
  REQUIRE(sqlite3_prepare_v2(db, "SELECT count(*) FROM tasks", -1, &stmt, nullptr) == SQLITE_OK);
  REQUIRE(sqlite3_step(stmt) == SQLITE_ROW);
  CHECK(sqlite3_column_int64(stmt, 0) == 201);  // all of it in the database file itself
  sqlite3_finalize(stmt);
  sqlite3_close(db);

  // A long-lived connection (a server) checkpoints and deletes the WAL on close, as before.
  {
    auto store = open_sqlite_store(file, SqliteOptions{});
    REQUIRE(store);
    add(**store, "From a server");
  }
  CHECK_FALSE(fs::exists(wal));
}

TEST_CASE("an empty file is not a project until created, and reading it writes nothing", "[engines][store][sqlite]") {
  TempDir dir;
  auto file = dir.path() / "tasks.db";
  std::ofstream(file).close();
  auto plain = open_sqlite_store(file, SqliteOptions{});
  REQUIRE_FALSE(plain);
  CHECK(plain.error().code == ErrorCode::FileError);
  CHECK(plain.error().details["damaged"] == json::Value(true));
  CHECK(plain.error().message.find("is empty") != std::string::npos);
  CHECK(mcp_text(plain.error().fix, registry()).find("'restore'") != std::string::npos);
  CHECK(mcp_text(plain.error().fix, registry()).find("'init'") != std::string::npos);
  CHECK(std::filesystem::file_size(file) == 0);  // not even the WAL switch was written
  SqliteOptions create;
  create.create = true;
  auto created = open_sqlite_store(file, create);
  REQUIRE(created);
  CHECK(*(*created)->schema_version() == sqlite_schema_version());
}

TEST_CASE("a schema newer than this binary is E_FILE_ERROR", "[engines][store][sqlite]") {
  TempDir dir;
  auto file = dir.path() / "tasks.db";
  test::create_store(file).reset();
  set_user_version(file, sqlite_schema_version() + 1);
  auto store = open_sqlite_store(file, SqliteOptions{});
  REQUIRE_FALSE(store);
  CHECK(store.error().code == ErrorCode::FileError);
  CHECK(store.error().message.find("newer") != std::string::npos);
}

TEST_CASE("task ids count up and are never reused", "[engines][store]") {
  TempDir dir;
  auto store = test::create_store(dir.path() / "tasks.db");
  CHECK(add(*store, "Task one") == "T001");
  CHECK(add(*store, "Task two") == "T002");
  CHECK(add(*store, "Task three") == "T003");

  REQUIRE(store->begin(TxKind::Write));
  REQUIRE(store->delete_task("T003"));
  REQUIRE(store->commit());
  CHECK(add(*store, "Task four") == "T004");

  // An allocation rolls back with its transaction: nothing was ever stored under that id.
  REQUIRE(store->begin(TxKind::Write));
  REQUIRE(store->allocate_task_id());
  store->rollback();
  CHECK(add(*store, "Task five") == "T005");

  // An import with its own id moves the counter past it.
  REQUIRE(store->begin(TxKind::Write));
  REQUIRE(store->insert_task(make_task("T050", "Imported")));
  REQUIRE(store->commit());
  CHECK(add(*store, "After import") == "T051");

  // Inserting an existing id is E_ID_COLLISION and changes nothing.
  REQUIRE(store->begin(TxKind::Write));
  auto duplicate = store->insert_task(make_task("T001", "Duplicate"));
  REQUIRE_FALSE(duplicate);
  CHECK(duplicate.error().code == ErrorCode::IdCollision);
  store->rollback();
  CHECK((*store->get_task("T001"))->title == "Task one");
}

TEST_CASE("every task field round-trips verbatim", "[engines][store]") {
  TempDir dir;
  auto store = test::create_store(dir.path() / "tasks.db");
  Task task = make_task("T007", "Ünïcödé title — 日本語 🚀");
  task.description = "'; DROP TABLE tasks; -- \"quoted\" \\ backslash\nsecond line";
  task.status = TaskStatus::Blocked;
  task.priority = Priority::Critical;
  task.type = TaskType::Subtask;
  task.parent = "T002";
  task.position = 7;
  task.depends = {"T003", "T004"};
  task.labels = {"backend", "ünïcode", "with space"};
  task.acceptance = {"works", "is tested"};
  task.files = {"src/a.cpp", "docs/b.md"};
  task.notes = {{1'700'000'001'000, "first note"}, {1'700'000'002'000, "second \"note\"\n🙂"}};
  task.relates = {{"T009", "relates-to", "same area"}, {"T010", "supersedes", ""}};
  task.phase = "core";
  task.size = TaskSize::Large;
  task.blocked_by = "waiting on review";
  task.created_at = 1'700'000'000'123;
  task.updated_at = 1'700'000'005'456;
  task.completed_at = 1'700'000'006'000;
  task.cancelled_at = 1'700'000'007'000;
  task.cancellation_reason = "not needed";
  task.archived = true;
  task.archived_at = 1'700'000'008'000;
  task.archive_reason = "cleanup";
  task.version = 4;

  REQUIRE(store->begin(TxKind::Write));
  REQUIRE(store->insert_task(task));
  REQUIRE(store->commit());

  REQUIRE(store->begin(TxKind::Read));
  auto loaded = store->get_task("T007");
  REQUIRE(store->commit());
  REQUIRE(loaded);
  REQUIRE(loaded->has_value());
  const Task& got = **loaded;
  CHECK(got.id == task.id);
  CHECK(got.title == task.title);
  CHECK(got.description == task.description);
  CHECK(got.status == task.status);
  CHECK(got.priority == task.priority);
  CHECK(got.type == task.type);
  CHECK(got.parent == task.parent);
  CHECK(got.position == task.position);
  CHECK(got.depends == task.depends);
  CHECK(got.labels == task.labels);
  CHECK(got.acceptance == task.acceptance);
  CHECK(got.files == task.files);
  REQUIRE(got.notes.size() == 2);
  CHECK(got.notes[1].at == task.notes[1].at);
  CHECK(got.notes[1].text == task.notes[1].text);
  REQUIRE(got.relates.size() == 2);
  CHECK(got.relates[0].task_id == "T009");
  CHECK(got.relates[0].type == "relates-to");
  CHECK(got.relates[0].reason == "same area");
  CHECK(got.phase == task.phase);
  CHECK(got.size == task.size);
  CHECK(got.blocked_by == task.blocked_by);
  CHECK(got.created_at == task.created_at);
  CHECK(got.updated_at == task.updated_at);
  CHECK(got.completed_at == task.completed_at);
  CHECK(got.cancelled_at == task.cancelled_at);
  CHECK(got.cancellation_reason == task.cancellation_reason);
  CHECK(got.archived == task.archived);
  CHECK(got.archived_at == task.archived_at);
  CHECK(got.archive_reason == task.archive_reason);
  CHECK(got.version == task.version);

  // Defaults come back as defaults.
  REQUIRE(store->insert_task(make_task("T008", "Plain")));
  auto plain = store->get_task("T008");
  REQUIRE(plain);
  CHECK((*plain)->parent.empty());
  CHECK((*plain)->size == TaskSize::Unset);
  CHECK_FALSE((*plain)->completed_at.has_value());
  CHECK((*plain)->notes.empty());

  auto missing = store->get_task("T999");
  REQUIRE(missing);
  CHECK_FALSE(missing->has_value());

  auto both = store->get_tasks({"T008", "T999", "T007"});
  REQUIRE(both);
  CHECK(ids_of(*both) == std::vector<std::string>{"T008", "T007"});
}

TEST_CASE("update writes the whole record, version included", "[engines][store]") {
  TempDir dir;
  auto store = test::create_store(dir.path() / "tasks.db");
  add(*store, "Original title");

  REQUIRE(store->begin(TxKind::Write));
  Task task = **store->get_task("T001");
  CHECK(task.version == 1);
  task.title = "Changed title";
  task.status = TaskStatus::Done;
  task.completed_at = 1'700'000'100'000;
  task.version = 2;  // the engine bumps its copy
  REQUIRE(store->update_task(task));
  REQUIRE(store->commit());

  Task got = **store->get_task("T001");
  CHECK(got.title == "Changed title");
  CHECK(got.status == TaskStatus::Done);
  CHECK(got.completed_at == 1'700'000'100'000);
  CHECK(got.version == 2);

  // The store writes the version it is given: bumping is the engine's decision (reordering
  // siblings deliberately leaves their versions alone).
  got.position = 9;
  REQUIRE(store->update_task(got));
  CHECK((*store->get_task("T001"))->version == 2);
  CHECK((*store->get_task("T001"))->position == 9);

  auto missing = store->update_task(make_task("T404", "Nope"));
  REQUIRE_FALSE(missing);
  CHECK(missing.error().code == ErrorCode::NotFound);
}

TEST_CASE("a page of several statuses is the same slice of the whole sorted list", "[engines][store]") {
  // Pages over several statuses merge each status's best rows (schema-8 indexes); the whole list
  // (no limit) sorts every row. Both must agree, ties included.
  TempDir dir;
  auto store = test::create_store(dir.path() / "tasks.db");
  std::mt19937 rng(7);
  const TaskStatus kStatuses[] = {TaskStatus::Pending, TaskStatus::Active, TaskStatus::Blocked, TaskStatus::Done,
                                  TaskStatus::Cancelled};
  const Priority kPriorities[] = {Priority::Critical, Priority::High, Priority::Medium, Priority::Low};
  REQUIRE(store->begin(TxKind::Write));
  for (int i = 1; i <= 240; ++i) {
    Task task = make_task(format_task_id(i), "Task number " + std::to_string(i), 1 + static_cast<std::int64_t>(rng() % 7));
    if (i > 12) task.parent = format_task_id(1 + static_cast<int>(rng() % 12));
    task.status = kStatuses[rng() % 5];
    task.priority = kPriorities[rng() % 4];
    task.created_at = 1'700'000'000'000 + static_cast<std::int64_t>(rng() % 50) * 1000;  // many ties
    task.updated_at = task.created_at + static_cast<std::int64_t>(rng() % 20) * 1000;
    if (task.status == TaskStatus::Done) task.completed_at = task.updated_at;
    if (task.status == TaskStatus::Cancelled) task.cancelled_at = task.updated_at;
    if (task.status == TaskStatus::Blocked) task.blocked_by = "waiting";
    REQUIRE(store->insert_task(task));
  }
  REQUIRE(store->commit());
  REQUIRE(store->begin(TxKind::Read));
  for (SortKey sort : {SortKey::Position, SortKey::Priority, SortKey::Created, SortKey::Updated}) {
    for (bool descending : {false, true}) {
      for (const std::vector<TaskStatus>& statuses :
           {std::vector<TaskStatus>{}, {TaskStatus::Pending, TaskStatus::Active, TaskStatus::Blocked},
            {TaskStatus::Done, TaskStatus::Pending}}) {
        TaskQuery whole;
        whole.filter.statuses = statuses;
        whole.sort = sort;
        whole.descending = descending;
        auto all = store->list_tasks(whole);
        REQUIRE(all);
        for (auto [offset, limit] : {std::pair<std::int64_t, std::int64_t>{0, 10}, {7, 25}, {30, 50}, {0, 500}}) {
          INFO("sort " << static_cast<int>(sort) << (descending ? " desc" : " asc") << ", " << statuses.size()
                       << " statuses, offset " << offset << ", limit " << limit);
          TaskQuery page = whole;
          page.offset = offset;
          page.limit = limit;
          auto got = store->list_tasks(page);
          REQUIRE(got);
          std::vector<Task> want(all->begin() + std::min<std::ptrdiff_t>(offset, std::ssize(*all)),
                                 all->begin() + std::min<std::ptrdiff_t>(offset + limit, std::ssize(*all)));
          CHECK(ids_of(*got) == ids_of(want));
        }
      }
    }
  }
  store->rollback();
}

TEST_CASE("list filters, sorts and pages", "[engines][store]") {
  TempDir dir;
  auto store = test::create_store(dir.path() / "tasks.db");
  REQUIRE(store->begin(TxKind::Write));
  auto insert = [&](Task task) { REQUIRE(store->insert_task(task)); };
  Task epic = make_task("T001", "Epic", 1);
  epic.type = TaskType::Epic;
  epic.priority = Priority::Low;
  epic.created_at = 5;
  insert(epic);
  Task a = make_task("T002", "bravo", 2);
  a.parent = "T001";
  a.priority = Priority::High;
  a.labels = {"api", "backend"};
  a.phase = "core";
  a.created_at = 3;
  insert(a);
  Task b = make_task("T003", "Alpha", 1);
  b.parent = "T001";
  b.priority = Priority::Critical;
  b.status = TaskStatus::Done;
  b.labels = {"backend"};
  b.created_at = 4;
  insert(b);
  Task c = make_task("T004", "charlie", 2);
  c.status = TaskStatus::Active;
  c.created_at = 1;
  insert(c);
  Task archived = make_task("T005", "Delta archived", 3);
  archived.archived = true;
  archived.status = TaskStatus::Cancelled;
  archived.labels = {"api"};
  archived.created_at = 2;
  insert(archived);
  REQUIRE(store->commit());

  auto list = [&](TaskQuery query) {
    auto result = store->list_tasks(query);
    REQUIRE(result);
    return ids_of(*result);
  };
  using Ids = std::vector<std::string>;

  TaskQuery query;
  CHECK(list(query) == Ids{"T001", "T004", "T003", "T002"});  // roots first, then by parent/position
  query.descending = true;
  CHECK(list(query) == Ids{"T002", "T003", "T004", "T001"});

  query = {};
  query.filter.archived = ArchivedFilter::Include;
  CHECK(list(query).size() == 5);
  query.filter.archived = ArchivedFilter::Only;
  CHECK(list(query) == Ids{"T005"});

  query = {};
  query.filter.parent = "";
  CHECK(list(query) == Ids{"T001", "T004"});
  query.filter.parent = "T001";
  CHECK(list(query) == Ids{"T003", "T002"});

  query = {};
  query.filter.statuses = {TaskStatus::Done, TaskStatus::Active};
  CHECK(list(query) == Ids{"T004", "T003"});

  query = {};
  query.filter.labels = {"backend"};
  CHECK(list(query) == Ids{"T003", "T002"});
  query.filter.labels = {"api"};
  query.filter.archived = ArchivedFilter::Include;
  CHECK(list(query) == Ids{"T005", "T002"});
  query.filter.labels = {"'; DROP TABLE tasks; --"};
  CHECK(list(query).empty());

  query = {};
  query.filter.type = TaskType::Epic;
  CHECK(list(query) == Ids{"T001"});
  query = {};
  query.filter.phase = "core";
  CHECK(list(query) == Ids{"T002"});
  query = {};
  query.filter.priority = Priority::Critical;
  CHECK(list(query) == Ids{"T003"});

  query = {};
  query.sort = SortKey::Priority;  // by rank: ascending is low → critical
  CHECK(list(query) == Ids{"T001", "T004", "T002", "T003"});
  query.descending = true;
  CHECK(list(query) == Ids{"T003", "T002", "T004", "T001"});
  query.descending = false;
  query.sort = SortKey::Created;
  CHECK(list(query) == Ids{"T004", "T002", "T003", "T001"});
  query.sort = SortKey::Title;
  CHECK(list(query) == Ids{"T003", "T002", "T004", "T001"});
  query.sort = SortKey::Status;
  CHECK(list(query) == Ids{"T001", "T002", "T004", "T003"});
  query.sort = SortKey::Id;
  query.descending = true;
  CHECK(list(query) == Ids{"T004", "T003", "T002", "T001"});

  query = {};
  query.sort = SortKey::Id;
  query.limit = 2;
  CHECK(list(query) == Ids{"T001", "T002"});
  query.offset = 2;
  CHECK(list(query) == Ids{"T003", "T004"});
  query.offset = 3;
  CHECK(list(query) == Ids{"T004"});
  query.limit = -1;
  query.offset = 1;
  CHECK(list(query) == Ids{"T002", "T003", "T004"});

  TaskFilter filter;
  CHECK(*store->count_tasks(filter) == 4);
  filter.labels = {"backend"};
  CHECK(*store->count_tasks(filter) == 2);

  TaskFilter all;
  all.archived = ArchivedFilter::Include;
  all.statuses = {TaskStatus::Pending};  // ignored by count_by_status
  auto counts = store->count_by_status(all);
  REQUIRE(counts);
  CHECK(counts->at(TaskStatus::Pending) == 2);
  CHECK(counts->at(TaskStatus::Active) == 1);
  CHECK(counts->at(TaskStatus::Blocked) == 0);
  CHECK(counts->at(TaskStatus::Done) == 1);
  CHECK(counts->at(TaskStatus::Cancelled) == 1);
  TaskFilter children;
  children.parent = "T001";
  auto child_counts = store->count_by_status(children);
  REQUIRE(child_counts);
  CHECK(child_counts->at(TaskStatus::Pending) == 1);
  CHECK(child_counts->at(TaskStatus::Done) == 1);
  CHECK(child_counts->at(TaskStatus::Active) == 0);
}

TEST_CASE("children, dependents, positions and ready tasks", "[engines][store]") {
  TempDir dir;
  auto store = test::create_store(dir.path() / "tasks.db");
  REQUIRE(store->begin(TxKind::Write));
  REQUIRE(store->insert_task(make_task("T001", "Root one", 1)));
  REQUIRE(store->insert_task(make_task("T002", "Root two", 2)));
  Task child_b = make_task("T003", "Second child", 2);
  child_b.parent = "T001";
  REQUIRE(store->insert_task(child_b));
  Task child_a = make_task("T004", "First child", 1);
  child_a.parent = "T001";
  child_a.depends = {"T002"};
  REQUIRE(store->insert_task(child_a));
  Task child_archived = make_task("T005", "Archived child", 5);
  child_archived.parent = "T001";
  child_archived.archived = true;
  REQUIRE(store->insert_task(child_archived));
  Task waits = make_task("T006", "Waits on two", 3);
  waits.depends = {"T002", "T004"};
  REQUIRE(store->insert_task(waits));
  REQUIRE(store->commit());

  CHECK(*store->children_of("T001", false) == std::vector<std::string>{"T004", "T003"});
  CHECK(*store->children_of("T001", true) == std::vector<std::string>{"T004", "T003", "T005"});
  CHECK(store->children_of("T002", true)->empty());
  CHECK(*store->dependents_of("T002") == std::vector<std::string>{"T004", "T006"});
  CHECK(*store->dependents_of("T004") == std::vector<std::string>{"T006"});
  CHECK(*store->max_position("") == 3);
  CHECK(*store->max_position("T001") == 5);
  CHECK(*store->max_position("T006") == 0);

  // Equal points: tasks.next order falls back to position, then age.
  ReadyScoring flat;
  flat.priority_points = {1, 1, 1, 1};
  flat.limit = 100;
  auto ready = [&] {
    std::vector<std::string> ids;
    auto candidates = store->top_ready(flat);
    for (const auto& candidate : *candidates) ids.push_back(candidate.id);
    return ids;
  };
  CHECK(ready() == std::vector<std::string>{"T001", "T002", "T003"});
  // T001 has open children (T003, T004); the archived child does not count.
  ReadyScoring leafy = flat;
  leafy.leaf_bonus = 10;
  auto ranked = *store->top_ready(leafy);
  REQUIRE(ranked.size() == 3);
  CHECK(ranked[0].id == "T002");
  CHECK(ranked[0].leaf);
  CHECK(ranked[0].score == 11);
  CHECK(ranked[2].id == "T001");
  CHECK_FALSE(ranked[2].leaf);
  ReadyScoring limited = leafy;
  limited.limit = 1;
  CHECK(store->top_ready(limited)->size() == 1);

  // Completing T002 frees T004; T006 still waits on T004.
  Task two = **store->get_task("T002");
  two.status = TaskStatus::Done;
  REQUIRE(store->update_task(two));
  CHECK(ready() == std::vector<std::string>{"T001", "T004", "T003"});

  Task four = **store->get_task("T004");
  four.status = TaskStatus::Cancelled;
  REQUIRE(store->update_task(four));
  // Ties go by position (T003 is second among its siblings, T006 third among the roots).
  CHECK(ready() == std::vector<std::string>{"T001", "T003", "T006"});

  // Rewriting the dependency list rewrites the edges.
  Task six = **store->get_task("T006");
  six.depends = {"T001"};
  REQUIRE(store->update_task(six));
  CHECK(store->dependents_of("T004")->empty());
  CHECK(*store->dependents_of("T001") == std::vector<std::string>{"T006"});

  // Delete removes edges both ways, and the task's lifecycle records.
  LifecycleEvent gate;
  gate.state = LifecycleState{"T001", LifecycleKind::Gate, "implemented", "passed", 1, "coder"};
  gate.from = "pending";
  gate.operation = "lifecycle.gate.pass";
  REQUIRE(store->put_lifecycle(gate));
  REQUIRE(store->lifecycle_states("T001", LifecycleKind::Gate)->size() == 1);
  REQUIRE(*store->count_lifecycle_events("T001", std::nullopt) == 1);
  REQUIRE(store->delete_task("T001"));
  CHECK(store->dependents_of("T001")->empty());
  CHECK(store->lifecycle_states("T001", LifecycleKind::Gate)->empty());
  CHECK(*store->count_lifecycle_events("T001", std::nullopt) == 0);
  CHECK_FALSE(store->get_task("T001")->has_value());
  auto again = store->delete_task("T001");
  REQUIRE_FALSE(again);
  CHECK(again.error().code == ErrorCode::NotFound);
}

TEST_CASE("writers on threads of one process, each on its own connection, take turns and lose nothing",
          "[engines][store]") {
  TempDir dir;
  auto file = dir.path() / "tasks.db";
  (void)test::create_store(file);
  constexpr int kThreads = 4, kEach = 25;
  std::vector<std::unique_ptr<Store>> stores;
  for (int t = 0; t < kThreads; ++t) stores.push_back(test::create_store(file, 10000));
  std::atomic<int> committed{0};
  std::mutex failures_mutex;
  std::vector<std::string> failures;  // Catch's macros are not for other threads
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      Store& store = *stores[static_cast<std::size_t>(t)];
      for (int i = 0; i < kEach; ++i) {
        auto step = [&]() -> Result<void> {
          CT_TRY(store.begin(TxKind::Write));
          CT_TRY_ASSIGN(std::string id, store.allocate_task_id());
          CT_TRY(store.insert_task(make_task(id, "thread " + std::to_string(t) + " task " + std::to_string(i))));
          return store.commit();
        };
        if (auto done = step(); done) {
          ++committed;
        } else {
          store.rollback();
          std::lock_guard lock(failures_mutex);
          failures.push_back(done.error().message);
        }
      }
    });
  for (auto& thread : threads) thread.join();
  CHECK(failures.empty());
  CHECK(committed == kThreads * kEach);
  auto reader = test::create_store(file);
  REQUIRE(reader->begin(TxKind::Read));
  auto tasks = reader->list_tasks(TaskQuery{});
  REQUIRE(tasks);
  CHECK(tasks->size() == static_cast<std::size_t>(kThreads * kEach));
  std::set<std::string> ids;
  for (const auto& task : *tasks) ids.insert(task.id);
  CHECK(ids.size() == tasks->size());  // every allocated id once
  reader->rollback();
}

TEST_CASE("a writer that timed out keeps no turn; a writer that ended gives its turn back", "[engines][store][sqlite]") {
  TempDir dir;
  auto file = dir.path() / "tasks.db";
  auto first = test::create_store(file, 100);
  auto second = test::create_store(file, 100);
  REQUIRE(first->begin(TxKind::Write));
  auto blocked = second->begin(TxKind::Write);
  REQUIRE_FALSE(blocked);
  CHECK(blocked.error().code == ErrorCode::LockTimeout);
  CHECK(blocked.error().retryable());
  first->rollback();
  // The second store's failed wait left the turn free: the first writes again at once, and commits.
  REQUIRE(first->begin(TxKind::Write));
  REQUIRE(first->commit());
  // A failed BEGIN (another process holds SQLite's lock) gives the turn back too.
  sqlite3* other = nullptr;
  REQUIRE(sqlite3_open_v2(file.c_str(), &other, SQLITE_OPEN_READWRITE, nullptr) == SQLITE_OK);
  REQUIRE(sqlite3_exec(other, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr) == SQLITE_OK);
  auto locked = first->begin(TxKind::Write);
  REQUIRE_FALSE(locked);
  CHECK(locked.error().code == ErrorCode::LockTimeout);
  REQUIRE(sqlite3_exec(other, "ROLLBACK", nullptr, nullptr, nullptr) == SQLITE_OK);
  sqlite3_close(other);
  REQUIRE(second->begin(TxKind::Write));
  REQUIRE(second->commit());
  REQUIRE(first->begin(TxKind::Write));
  REQUIRE(first->commit());
}

TEST_CASE("a second writer times out with E_LOCK_TIMEOUT", "[engines][store]") {
  TempDir dir;
  auto file = dir.path() / "tasks.db";
  auto first = test::create_store(file);
  auto second = test::create_store(file, 100);
  REQUIRE(first->begin(TxKind::Write));
  REQUIRE(first->get_task("T001"));  // PostgreSQL takes the lock with the first statement
  CHECK(first->in_transaction());
  auto started = std::chrono::steady_clock::now();
  // SQLite waits in begin(); PostgreSQL with the transaction's first statement, which fails, and so
  // does every one after it, and the commit, with the same error.
  auto blocked = [&]() -> Result<void> {
    CT_TRY(second->begin(TxKind::Write));
    CT_TRY(second->get_task("T001"));
    return {};
  }();
  auto waited = std::chrono::steady_clock::now() - started;
  REQUIRE_FALSE(blocked);
  CHECK(blocked.error().code == ErrorCode::LockTimeout);
  CHECK(blocked.error().retryable());
  CHECK(waited >= std::chrono::milliseconds(50));
  if (second->in_transaction()) {
    auto again = second->allocate_task_id();
    REQUIRE_FALSE(again);
    CHECK(again.error().code == ErrorCode::LockTimeout);
    auto committed = second->commit();
    REQUIRE_FALSE(committed);
    CHECK(committed.error().code == ErrorCode::LockTimeout);
  }
  CHECK_FALSE(second->in_transaction());

  // Readers are not blocked by the writer (WAL).
  REQUIRE(second->begin(TxKind::Read));
  CHECK(second->get_task("T001"));
  REQUIRE(second->commit());

  first->rollback();
  CHECK_FALSE(first->in_transaction());
  REQUIRE(second->begin(TxKind::Write));
  REQUIRE(second->commit());
  first->rollback();  // a no-op outside a transaction
}

TEST_CASE("a writer that waited for the lock sees every commit before it: ids and the audit chain", "[engines][store]") {
  TempDir dir;
  auto file = dir.path() / "tasks.db";
  auto first = test::create_store(file);
  auto second = test::create_store(file);
  auto append = [](Store& store, const std::string& what) {
    AuditEntry entry;
    entry.at = 1;
    entry.operation = "tasks.add";
    entry.outcome = "ok";
    entry.reason = what;
    return store.append_audit(entry);
  };
  REQUIRE(first->begin(TxKind::Write));
  REQUIRE(append(*first, "before"));
  REQUIRE(first->commit());
  // The second writer asks for the lock while the first holds it, and gets it once the first
  // commits: what it allocates and chains to must be what the first wrote.
  REQUIRE(first->begin(TxKind::Write));
  auto first_id = first->allocate_task_id();
  REQUIRE(first_id);
  REQUIRE(append(*first, "first"));
  std::optional<std::string> second_id;
  std::string second_failed;  // Catch's assertions are not for other threads
  std::thread waiter([&] {
    auto run = [&]() -> Result<void> {
      CT_TRY(second->begin(TxKind::Write));
      CT_TRY_ASSIGN(second_id, second->allocate_task_id());
      CT_TRY(append(*second, "second"));
      return second->commit();
    };
    if (auto ran = run(); !ran) second_failed = ran.error().message;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  REQUIRE(first->commit());
  waiter.join();
  INFO(second_failed);
  REQUIRE(second_failed.empty());
  REQUIRE(second_id);
  CHECK(*second_id != *first_id);
  REQUIRE(first->begin(TxKind::Read));
  auto chain = verify_audit_chain(*first);
  first->rollback();
  REQUIRE(chain);
  CHECK(chain->rows == 3);
  CHECK_FALSE(chain->first_broken);
}

TEST_CASE("transactions: nested begin is refused and rollback discards", "[engines][store]") {
  TempDir dir;
  auto store = test::create_store(dir.path() / "tasks.db");
  REQUIRE(store->begin(TxKind::Write));
  auto nested = store->begin(TxKind::Read);
  REQUIRE_FALSE(nested);
  CHECK(nested.error().code == ErrorCode::Internal);
  REQUIRE(store->insert_task(make_task("T001", "Rolled back")));
  store->rollback();
  CHECK_FALSE(store->get_task("T001")->has_value());
  CHECK_FALSE(store->commit());
}

TEST_CASE("focus per session", "[engines][store]") {
  TempDir dir;
  auto store = test::create_store(dir.path() / "tasks.db");
  CHECK_FALSE(store->get_focus("")->has_value());
  REQUIRE(store->set_focus("", std::string("T001")));
  REQUIRE(store->set_focus("session-a", std::string("T002")));
  CHECK(**store->get_focus("") == "T001");
  CHECK(**store->get_focus("session-a") == "T002");
  REQUIRE(store->set_focus("", std::string("T003")));
  CHECK(**store->get_focus("") == "T003");
  REQUIRE(store->set_focus("", std::nullopt));
  CHECK_FALSE(store->get_focus("")->has_value());
  CHECK(**store->get_focus("session-a") == "T002");
}

TEST_CASE("audit trail append and read", "[engines][store]") {
  TempDir dir;
  auto store = test::create_store(dir.path() / "tasks.db");
  AuditEntry add_entry;
  add_entry.at = 1000;
  add_entry.session = "s1";
  add_entry.agent = "claude";
  add_entry.operation = "tasks.add";
  add_entry.task_id = "T001";
  add_entry.params = json::Value::object();
  add_entry.params.set("title", "Write docs");
  add_entry.outcome = "ok";
  add_entry.reason = "start the docs";
  add_entry.changes = {{"T001", "title", json::Value(), json::Value("Write docs")},
                       {"T001", "status", json::Value(), json::Value("pending")}};
  REQUIRE(store->begin(TxKind::Write));
  auto seq1 = store->append_audit(add_entry);
  REQUIRE(seq1);

  AuditEntry update;
  update.at = 2000;
  update.operation = "tasks.update";
  update.task_id = "T001";
  update.outcome = "ok";
  update.changes = {{"T001", "status", json::Value("pending"), json::Value("active")},
                    {"T002", "depends", json::Value::array(), json::Value::array_of(std::vector<std::string>{"T001"})}};
  auto seq2 = store->append_audit(update);
  REQUIRE(seq2);
  CHECK(*seq2 > *seq1);

  AuditEntry failed;
  failed.at = 3000;
  failed.operation = "tasks.delete";
  failed.task_id = "T009";
  failed.outcome = "E_NOT_FOUND";
  auto seq3 = store->append_audit(failed);
  REQUIRE(seq3);
  REQUIRE(store->commit());

  auto all = store->read_audit(AuditQuery{});
  REQUIRE(all);
  REQUIRE(all->size() == 3);
  CHECK((*all)[0].seq == *seq3);
  CHECK((*all)[0].outcome == "E_NOT_FOUND");
  CHECK((*all)[0].changes.empty());
  const AuditEntry& first = (*all)[2];
  CHECK(first.session == "s1");
  CHECK(first.agent == "claude");
  CHECK(first.reason == "start the docs");
  CHECK(first.params["title"].as_string() == "Write docs");
  REQUIRE(first.changes.size() == 2);
  CHECK(first.changes[0].field == "title");
  CHECK(first.changes[0].before.is_null());
  CHECK(first.changes[0].after == json::Value("Write docs"));

  AuditQuery for_task;
  for_task.task_id = "T001";
  auto task_rows = store->read_audit(for_task);
  REQUIRE(task_rows);
  REQUIRE(task_rows->size() == 2);
  CHECK((*task_rows)[0].seq == *seq2);
  REQUIRE((*task_rows)[0].changes.size() == 1);  // only the changes to T001
  CHECK((*task_rows)[0].changes[0].after == json::Value("active"));

  AuditQuery other;
  other.task_id = "T002";
  auto other_rows = store->read_audit(other);
  REQUIRE(other_rows);
  REQUIRE(other_rows->size() == 1);
  CHECK((*other_rows)[0].changes[0].after.as_array().size() == 1);

  AuditQuery subject_only;
  subject_only.task_id = "T009";  // no changes, but the subject of the row
  CHECK(store->read_audit(subject_only)->size() == 1);

  AuditQuery field;
  field.task_id = "T001";
  field.field = "status";
  auto status_rows = store->read_audit(field);
  REQUIRE(status_rows);
  REQUIRE(status_rows->size() == 2);
  for (const auto& row : *status_rows) {
    REQUIRE(row.changes.size() == 1);
    CHECK(row.changes[0].field == "status");
  }
  field.field = "title";
  CHECK(store->read_audit(field)->size() == 1);

  AuditQuery page;
  page.limit = 1;
  page.offset = 1;
  auto paged = store->read_audit(page);
  REQUIRE(paged);
  REQUIRE(paged->size() == 1);
  CHECK((*paged)[0].seq == *seq2);
}

}  // namespace ct
