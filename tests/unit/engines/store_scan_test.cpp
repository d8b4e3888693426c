// The consistency scans (Store::scan): every kind runs on the SQLite backend, whole-store and
// narrowed, and the task rules come back one row per broken rule with their details.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <set>
#include <string>

#include "engines/store/sqlite/sqlite_store.h"
#include "unit/temp_dir.h"
#include "unit/test_support.h"

namespace ct {
namespace {

namespace fs = std::filesystem;

constexpr ScanKind kEveryScan[] = {
    ScanKind::TaskRules,          ScanKind::MissingDependency,   ScanKind::DependencyEdges,
    ScanKind::OrphanSearchRows,   ScanKind::MissingSearchTerms,  ScanKind::FocusMissingTask,    ScanKind::FocusMissingSession,
    ScanKind::FocusEndedSession,  ScanKind::FocusNotActive,      ScanKind::SharedClaims,
    ScanKind::SessionsWithSeveralTasks, ScanKind::IdCounter,     ScanKind::SessionStatus,
    ScanKind::SessionEndedAt,     ScanKind::IntegrityQuick,      ScanKind::IntegrityFull,
    ScanKind::ForeignKeys,        ScanKind::CrowdedParents,      ScanKind::ActiveSessions,
    ScanKind::ParentRows,         ScanKind::LiveChildren,        ScanKind::DependencyRows,
    ScanKind::SelfReachable,      ScanKind::TaskExists,          ScanKind::MemoryTotal,
};

void add(Store& store, const std::string& title, const std::string& parent = "") {
  REQUIRE(store.begin(TxKind::Write));
  auto id = store.allocate_task_id();
  REQUIRE(id);
  Task task;
  task.id = *id;
  task.title = title;
  task.parent = parent;
  task.position = 1;
  task.created_at = task.updated_at = 1'700'000'000'000;
  REQUIRE(store.insert_task(task));
  REQUIRE(store.commit());
}

std::vector<DiagnosticRow> scan(Store& store, ScanKind kind, ScanScope scope = {}) {
  REQUIRE(store.begin(TxKind::Read));
  auto rows = store.scan(kind, scope);
  store.rollback();
  REQUIRE(rows.has_value());
  return *rows;
}

TEST_CASE("every consistency scan runs on a healthy store and finds nothing wrong", "[store][scan]") {
  test::TempDir dir;
  auto store = test::create_store(dir.path() / "tasks.db");
  add(*store, "An epic of work");
  add(*store, "A task under it", "T001");
  for (ScanKind kind : kEveryScan) {
    INFO("scan " << static_cast<int>(kind));
    // The threshold: a sibling limit for CrowdedParents, "the future starts here" for TaskRules.
    const std::int64_t number = kind == ScanKind::TaskRules ? 2'000'000'000'000 : 100;
    auto whole = scan(*store, kind, {"", number});
    auto one = scan(*store, kind, {"T002", number});
    switch (kind) {
      case ScanKind::ParentRows:
        CHECK(whole.size() == 2);
        CHECK(one == std::vector<DiagnosticRow>{{"T002", "T001", "task", "0"}, {"T001", "", "task", "0"}});
        break;
      case ScanKind::ActiveSessions:
      case ScanKind::LiveChildren:
        REQUIRE(whole.size() == 1);
        CHECK(whole[0][0] == "0");
        break;
      case ScanKind::TaskExists:
        CHECK(one == std::vector<DiagnosticRow>{{"1"}});
        break;
      default:
        CHECK(whole.empty());
        CHECK(one.empty());
    }
  }
  CHECK(scan(*store, ScanKind::LiveChildren, {"T001"}) == std::vector<DiagnosticRow>{{"1"}});
  CHECK(scan(*store, ScanKind::TaskExists, {"T009"}).empty());
}

TEST_CASE("the task-rules scan reports one row per broken rule, with its details", "[store][scan]") {
  test::TempDir dir;
  fs::path file = dir.path() / "tasks.db";
  {
    auto store = test::create_store(file);
    add(*store, "Fine task");
    add(*store, "Broken task");
  }
  // Labels that are not a list: PostgreSQL's search column reads them as JSON, so there they are a
  // JSON string (text that is no JSON at all cannot be stored).
  const std::string labels = test::on_postgresql() ? "'\"oops\"'" : "'oops'";
  test::run_sql(file, "UPDATE tasks SET status = 'doing', labels = " + labels +
                          ", title = 'x', completed_at = 5 WHERE id = 'T002'");
  auto store = test::create_store(file);
  auto rows = scan(*store, ScanKind::TaskRules, {"", 2'000'000'000'000});
  std::set<std::string> rules;
  for (const auto& row : rows) {
    CHECK(row[0] == "T002");
    rules.insert(row[1]);
    auto rule = std::find_if(task_rules().begin(), task_rules().end(), [&](const TaskRule& r) { return r.name == row[1]; });
    REQUIRE(rule != task_rules().end());
    CHECK(row.size() == 2 + static_cast<std::size_t>(rule->details));
    if (row[1] == "invalid-value:status") CHECK(row[2] == "doing");
    if (row[1] == "title") CHECK(row[2] == "1");
  }
  CHECK(rules == std::set<std::string>{"invalid-value:status", "malformed-list:labels", "title", "timestamp-order"});
  // Narrowed to the healthy task: nothing.
  CHECK(scan(*store, ScanKind::TaskRules, {"T001", 2'000'000'000'000}).empty());
  // A clock before the task's timestamps makes them lie in the future.
  auto future = scan(*store, ScanKind::TaskRules, {"T001", 1'000});
  REQUIRE(future.size() == 1);
  CHECK(future[0] == DiagnosticRow{"T001", "future-timestamp", "createdAt"});
}

TEST_CASE("the crowded-parents scan takes its limit from the scope", "[store][scan]") {
  test::TempDir dir;
  auto store = test::create_store(dir.path() / "tasks.db");
  add(*store, "An epic of work");
  for (int i = 0; i < 3; ++i) add(*store, "Child number " + std::to_string(i), "T001");
  CHECK(scan(*store, ScanKind::CrowdedParents, {"", 3}).empty());
  CHECK(scan(*store, ScanKind::CrowdedParents, {"", 2}) == std::vector<DiagnosticRow>{{"T001", "3"}});
}

}  // namespace
}  // namespace ct
