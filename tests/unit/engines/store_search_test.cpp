// Full-text search over the SQLite store (tasks.find).
#include <catch2/catch.hpp>

#include "unit/temp_dir.h"
#include "unit/test_support.h"

#include <algorithm>
#include <filesystem>
#include <random>
#include <string>

#include "engines/store/sqlite/sqlite_store.h"

namespace ct {
namespace {

namespace fs = std::filesystem;

using test::TempDir;

struct SearchFixture {
  TempDir dir;
  std::unique_ptr<Store> store;

  SearchFixture() { store = test::create_store(dir.path() / "tasks.db"); }

  void insert(Task task) {
    REQUIRE(store->insert_task(task));
  }

  std::vector<std::string> find(std::string_view text, const TaskFilter& filter = {}, std::int64_t limit = 50) {
    auto hits = store->search(text, filter, limit);
    REQUIRE(hits);
    std::vector<std::string> ids;
    for (const auto& hit : *hits) ids.push_back(hit.task.id);
    return ids;
  }
};

Task make_task(std::string id, std::string title) {
  Task task;
  task.id = std::move(id);
  task.title = std::move(title);
  task.position = 1;
  return task;
}

using Ids = std::vector<std::string>;

}  // namespace

TEST_CASE_METHOD(SearchFixture, "search matches words and prefixes", "[engines][search]") {
  insert(make_task("T001", "Implement authentication middleware"));
  insert(make_task("T002", "Write documentation"));
  Task three = make_task("T003", "Refactor the parser");
  three.description = "The authentication layer calls into it";
  insert(three);

  CHECK(find("documentation") == Ids{"T002"});
  CHECK(find("doc") == Ids{"T002"});
  CHECK(find("DOCUMENT") == Ids{"T002"});
  CHECK(find("auth middle") == Ids{"T001"});  // every word must match
  CHECK(find("authentication") == Ids{"T001", "T003"});  // title beats description
  CHECK(find("nothing-like-this").empty());
  CHECK(find("").empty());
  CHECK(find("  ,;!? ").empty());
}

TEST_CASE_METHOD(SearchFixture, "title matches rank above note matches", "[engines][search]") {
  Task noted = make_task("T001", "Unrelated title");
  noted.notes = {{1, "we should look at the cache later"}};
  insert(noted);
  insert(make_task("T002", "Cache invalidation"));
  auto hits = store->search("cache", {}, 10);
  REQUIRE(hits);
  REQUIRE(hits->size() == 2);
  CHECK((*hits)[0].task.id == "T002");
  CHECK((*hits)[0].score > (*hits)[1].score);
  CHECK((*hits)[1].score > 0);
}

TEST_CASE_METHOD(SearchFixture, "hits count, but a title hit outweighs a description repeating the word",
                 "[engines][search]") {
  Task repeated = make_task("T001", "Unrelated title");
  repeated.description = "widget widget widget widget widget widget widget widget";
  insert(repeated);
  insert(make_task("T002", "Widget polish"));
  insert(make_task("T003", "Widget frame, widget hinge"));
  Task both = make_task("T004", "Widget screws");
  both.description = "the widget needs four";
  insert(both);
  // Title hits weigh 10 and description hits 3, each column's count saturating as bm25's does.
  CHECK(find("widget") == Ids{"T003", "T004", "T002", "T001"});
  // Equal scores keep row order.
  insert(make_task("T005", "Widget polish"));
  CHECK(find("polish") == Ids{"T002", "T005"});
}

TEST_CASE_METHOD(SearchFixture, "labels, notes and unicode are searchable", "[engines][search]") {
  Task labelled = make_task("T001", "First");
  labelled.labels = {"frontend", "urgent-fix"};
  insert(labelled);
  Task noted = make_task("T002", "Second");
  noted.notes = {{1, "blocked on vendor"}, {2, "Café meeting notes"}};
  insert(noted);
  insert(make_task("T003", "日本語 テスト"));

  CHECK(find("frontend") == Ids{"T001"});
  CHECK(find("urgent") == Ids{"T001"});
  CHECK(find("vendor") == Ids{"T002"});
  CHECK(find("cafe") == Ids{"T002"});  // diacritics folded
  CHECK(find("CAFÉ") == Ids{"T002"});
  CHECK(find("日本語") == Ids{"T003"});
}

TEST_CASE_METHOD(SearchFixture, "an exact id match comes first", "[engines][search]") {
  insert(make_task("T001", "Alpha"));
  Task mentions = make_task("T002", "Follow-up to T001");
  insert(mentions);
  insert(make_task("T003", "Gamma"));

  auto hits = store->search("T001", {}, 10);
  REQUIRE(hits);
  REQUIRE(hits->size() == 2);
  CHECK((*hits)[0].task.id == "T001");
  CHECK((*hits)[1].task.id == "T002");
  CHECK((*hits)[0].score > (*hits)[1].score);

  CHECK(find("t1").front() == "T001");
  CHECK(find("3") == Ids{"T003"});
  CHECK(find("T001", {}, 1) == Ids{"T001"});

  // The exact match still has to pass the filter.
  TaskFilter done;
  done.statuses = {TaskStatus::Done};
  CHECK(find("T001", done).empty());
}

TEST_CASE_METHOD(SearchFixture, "filters apply to search", "[engines][search]") {
  Task a = make_task("T001", "Deploy service");
  a.labels = {"ops"};
  a.phase = "release";
  insert(a);
  Task b = make_task("T002", "Deploy docs");
  b.status = TaskStatus::Done;
  b.parent = "T001";
  b.type = TaskType::Subtask;
  b.priority = Priority::High;
  insert(b);
  Task c = make_task("T003", "Deploy archive");
  c.archived = true;
  insert(c);

  auto unfiltered = find("deploy");
  std::sort(unfiltered.begin(), unfiltered.end());
  CHECK(unfiltered == Ids{"T001", "T002"});  // archived tasks are left out by default
  TaskFilter filter;
  filter.archived = ArchivedFilter::Include;
  CHECK(find("deploy", filter).size() == 3);
  filter = {};
  filter.statuses = {TaskStatus::Done};
  CHECK(find("deploy", filter) == Ids{"T002"});
  filter = {};
  filter.parent = "";
  CHECK(find("deploy", filter) == Ids{"T001"});
  filter = {};
  filter.type = TaskType::Subtask;
  CHECK(find("deploy", filter) == Ids{"T002"});
  filter = {};
  filter.labels = {"ops"};
  CHECK(find("deploy", filter) == Ids{"T001"});
  filter = {};
  filter.phase = "release";
  CHECK(find("deploy", filter) == Ids{"T001"});
  filter = {};
  filter.priority = Priority::High;
  CHECK(find("deploy", filter) == Ids{"T002"});
  CHECK(find("deploy", {}, 1).size() == 1);
}

TEST_CASE_METHOD(SearchFixture, "the index follows updates and deletes", "[engines][search]") {
  insert(make_task("T001", "Old wording"));
  CHECK(find("old") == Ids{"T001"});

  Task task = **store->get_task("T001");
  task.title = "Fresh wording";
  task.labels = {"shiny"};
  task.notes = {{5, "appended remark"}};
  REQUIRE(store->update_task(task));
  CHECK(find("old").empty());
  CHECK(find("fresh") == Ids{"T001"});
  CHECK(find("shiny") == Ids{"T001"});
  CHECK(find("remark") == Ids{"T001"});

  // A status-only update leaves the text alone and the index still works.
  task = **store->get_task("T001");
  task.status = TaskStatus::Active;
  REQUIRE(store->update_task(task));
  CHECK(find("fresh") == Ids{"T001"});

  REQUIRE(store->delete_task("T001"));
  CHECK(find("fresh").empty());
  CHECK(find("T001").empty());
}

TEST_CASE_METHOD(SearchFixture, "hostile search text is harmless", "[engines][search]") {
  insert(make_task("T001", "Drop the table tasks"));
  for (std::string_view text :
       {"'; DROP TABLE tasks; --", "\"unbalanced", "title:drop", "drop OR", "NEAR(drop table)", "* ^ - +",
        "drop\" OR \"x", "a\"b\"*c", "\x01\x02", "NOT", "AND AND"}) {
    auto hits = store->search(text, {}, 10);
    REQUIRE(hits);
  }
  CHECK(find("'; DROP TABLE tasks; --") == Ids{"T001"});  // the words still match, nothing runs
  CHECK(store->get_task("T001")->has_value());
  CHECK(*store->count_tasks({}) == 1);
}

}  // namespace ct
