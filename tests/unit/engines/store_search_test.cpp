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

/// Up to `most` words picked from `words` (the randomized search tests' text).
std::string random_words(std::mt19937& random, const std::vector<std::string>& words, int most) {
  std::string text;
  const int count = std::uniform_int_distribution<int>(0, most)(random);
  for (int i = 0; i < count; ++i) text += (i ? " " : "") + words[random() % words.size()];
  return text;
}

/// A task of random words: title and description, sometimes a label and notes, archived or done.
Task random_task(const std::string& id, std::mt19937& random, const std::vector<std::string>& words) {
  Task task = make_task(id, "Task " + random_words(random, words, 3));
  task.description = random_words(random, words, 6);
  if (random() % 3 == 0) task.labels = {words[random() % words.size()]};
  if (random() % 4 == 0) task.notes = {{1, random_words(random, words, 4)}, {2, random_words(random, words, 2)}};
  task.archived = random() % 7 == 0;
  if (random() % 5 == 0) task.status = TaskStatus::Done;
  return task;
}

using Ids = std::vector<std::string>;

/// Two runs of the same queries (`per_query` answers each) answered alike, and most found something.
template <typename Answer, typename Queries>
void check_same_answers(const std::vector<Answer>& first, const std::vector<Answer>& second, const Queries& queries,
                        std::size_t per_query) {
  REQUIRE(first.size() == second.size());
  std::size_t found = 0;
  for (std::size_t i = 0; i < first.size(); ++i) {
    INFO("query \"" << queries[i / per_query].first << "\"");
    CHECK(first[i] == second[i]);
    found += first[i].hits.empty() ? 0 : 1;
  }
  CHECK(found > first.size() / 2);  // the queries do find things
}

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

TEST_CASE("tasks noted for the index are found and scored as indexed ones", "[engines][search][sqlite]") {
  // The index is written behind the tasks: a write notes the task (tasks_fts_tail) and every 32
  // notes are folded in. A search reads the noted tasks from their rows; this checks that it
  // answers exactly what the index answers once they are folded: the same tasks, in the same
  // order, with the same scores to the bit, and the same counts.
  TempDir dir;
  const fs::path db = dir.path() / "tasks.db";
  std::mt19937 random(20261127);
  const std::vector<std::string> words = {"parser", "parse",  "cache",  "deploy", "docs", "café",
                                          "token",  "tokens", "search", "INDEX",  "fold", "Zürich", "Task"};
  auto some_words = [&](int most) { return random_words(random, words, most); };
  {
    auto store = test::create_store(db);
    for (int n = 1; n <= 90; ++n) {
      char id[8];
      std::snprintf(id, sizeof id, "T%03d", n);
      REQUIRE(store->insert_task(random_task(id, random, words)));
    }
    // Changes to folded tasks: their index rows are now behind their text.
    for (const char* id : {"T003", "T010", "T020", "T033", "T050"}) {
      Task task = **store->get_task(id);
      task.title = "Changed " + some_words(3);
      task.notes.push_back({9, "fold " + some_words(2)});
      REQUIRE(store->update_task(task));
    }
    REQUIRE(store->delete_task("T007"));
    REQUIRE(store->delete_task("T089"));
  }
  CHECK(test::sqlite_number(db, "SELECT count(*) FROM tasks_fts_tail") > 0);

  std::vector<std::pair<std::string, TaskFilter>> queries;
  TaskFilter include;
  include.archived = ArchivedFilter::Include;
  TaskFilter only;
  only.archived = ArchivedFilter::Only;
  TaskFilter done;
  done.statuses = {TaskStatus::Done};
  for (const auto& word : words) {
    for (const TaskFilter& filter : {TaskFilter{}, include, only, done}) queries.emplace_back(word, filter);
    queries.emplace_back(word.substr(0, 3), TaskFilter{});
    queries.emplace_back(word + " " + words[random() % words.size()], TaskFilter{});
  }
  queries.emplace_back("T003", TaskFilter{});  // an exact id among the noted tasks
  queries.emplace_back("T004", include);
  struct Answer {
    std::vector<std::pair<std::string, double>> hits;
    std::int64_t count = 0;
    bool operator==(const Answer&) const = default;
  };
  auto answers = [&] {
    auto store = test::create_store(db);
    std::vector<Answer> out;
    for (const auto& [text, filter] : queries) {
      for (std::int64_t limit : {3, 50}) {
        Answer answer;
        auto hits = store->search(text, filter, limit);
        INFO(text << ": " << (hits ? std::string() : hits.error().message));
        REQUIRE(hits);
        for (const auto& hit : *hits) answer.hits.emplace_back(hit.task.id, hit.score);
        auto count = store->count_matches(text, filter);
        REQUIRE(count);
        answer.count = *count;
        out.push_back(std::move(answer));
      }
    }
    return out;
  };
  const auto noted = answers();
  test::run_sql(db, test::kFoldSearchIndex);
  REQUIRE(test::sqlite_number(db, "SELECT count(*) FROM tasks_fts_tail") == 0);
  const auto folded = answers();
  check_same_answers(noted, folded, queries, 2);
}

TEST_CASE_METHOD(SearchFixture, "a write folds the noted tasks into the index every 32", "[engines][search][sqlite]") {
  const fs::path db = dir.path() / "tasks.db";
  auto waiting = [&] { return test::sqlite_number(db, "SELECT count(*) FROM tasks_fts_tail"); };
  auto indexed = [&] { return test::sqlite_number(db, "SELECT count(*) FROM tasks_fts"); };
  for (int n = 1; n <= 31; ++n) insert(make_task("T" + std::to_string(100 + n), "Batch task"));
  CHECK(waiting() == 31);
  CHECK(indexed() == 0);
  CHECK(find("batch").size() == 31);
  insert(make_task("T132", "Batch task"));
  CHECK(waiting() == 0);
  CHECK(indexed() == 32);
  CHECK(find("batch").size() == 32);
  // A change to an indexed task is noted; its stale index row is not searched meanwhile.
  Task task = **store->get_task("T101");
  task.title = "Renamed";
  REQUIRE(store->update_task(task));
  CHECK(waiting() == 1);
  CHECK(find("batch").size() == 31);
  CHECK(find("renamed") == Ids{"T101"});
  REQUIRE(store->delete_task("T101"));
  CHECK(waiting() == 0);
  CHECK(find("renamed").empty());
}

TEST_CASE_METHOD(SearchFixture, "a search in a transaction sees the transaction's own writes", "[engines][search]") {
  // SQLite remembers its scan of the tasks waiting for the index for one transaction; a write in
  // between must not leave it stale.
  insert(make_task("T001", "Alpha task"));
  REQUIRE(store->begin(TxKind::Write));
  CHECK(find("alpha") == Ids{"T001"});
  CHECK(*store->count_matches("alpha", {}) == 1);
  Task task = **store->get_task("T001");
  task.title = "Beta task";
  REQUIRE(store->update_task(task));
  CHECK(find("alpha").empty());
  CHECK(*store->count_matches("alpha", {}) == 0);
  CHECK(find("beta") == Ids{"T001"});
  insert(make_task("T002", "Beta again"));
  CHECK(*store->count_matches("beta", {}) == 2);
  REQUIRE(store->commit());
  CHECK(find("beta").size() == 2);
}

TEST_CASE_METHOD(SearchFixture, "a noted task is matched with the index's case folding", "[engines][search]") {
  // Noted tasks are first tested on their lowered ASCII text, eight bytes at a time.
  insert(make_task("T001", "THE ABCDEFGHIJKLMNOPQRSTUVWXYZ Alphabet"));
  Task edges = make_task("T002", "Edges A@Z[a`z{ and more");
  edges.labels = {"Quoted\"Label"};
  edges.description = "C:\\Users\\ZOE and é";
  insert(edges);
  CHECK(find("abcdefghijklmnopqrstuvwxyz") == Ids{"T001"});
  CHECK(find("ABCDEFGHIJKLMNOPQRSTUVWXYZ") == Ids{"T001"});
  CHECK(find("alphabet the") == Ids{"T001"});
  CHECK(find("mnopq").empty());  // a prefix, not a substring
  CHECK(find("edges z") == Ids{"T002"});
  CHECK(find("label quoted") == Ids{"T002"});
  CHECK(find("zoe users") == Ids{"T002"});
  CHECK(find("e edges") == Ids{"T002"});
}

TEST_CASE_METHOD(SearchFixture, "both backends rank the newest matches and count them up to the window",
                 "[engines][search]") {
  auto id = [](std::int64_t n) {
    char out[16];
    std::snprintf(out, sizeof out, "T%03lld", static_cast<long long>(n));
    return std::string(out);
  };
  // The oldest task matches best, then come more matches than the window ranks.
  insert(make_task("T001", "Needle needle needle"));
  const std::int64_t last = kSearchRankWindow + 2;  // T002 … are the weaker matches
  for (std::int64_t n = 2; n <= last; ++n) {
    Task task = make_task(id(n), "Haystack " + std::to_string(n));
    task.description = "a needle";
    insert(task);
  }
  auto count = store->count_matches("needle", {});
  REQUIRE(count);
  CHECK(*count == last);  // count_matches still counts every match
  CHECK(find("T001", {}, 3).front() == "T001");  // an exact id, whatever its age
  CHECK(find("needle", {}, -1).front() == "T001");  // every match ranked
  // Equal scores come oldest first, among the newest 1000: T001 and T002 are outside it.
  const std::int64_t oldest_ranked = last - kSearchRankWindow + 1;
  CHECK(find("needle", {}, 3) == Ids{id(oldest_ranked), id(oldest_ranked + 1), id(oldest_ranked + 2)});
  CHECK(find("needle haystack", {}, 3).front() == id(oldest_ranked));
  // A page further on reads the window as far as the page goes: the same order, continued.
  auto deep = find("needle", {}, kSearchRankWindow + 1);
  REQUIRE(std::ssize(deep) == kSearchRankWindow + 1);
  CHECK(deep.front() == "T001");  // the window widened to the page reaches the best, oldest match
  CHECK(deep[1] == id(2));

  // What the search counted on its way: the window's matches, "at least" when it filled.
  SearchCount counted;
  REQUIRE(store->search("needle", {}, 3, &counted));
  CHECK(counted.at_least);
  CHECK(counted.matched == kSearchRankWindow);
  REQUIRE(store->search("needle", {}, kSearchRankWindow + 5, &counted));
  CHECK_FALSE(counted.at_least);  // the window widened to the page holds every match
  CHECK(counted.matched == last);
  REQUIRE(store->search("needle", {}, -1, &counted));
  CHECK_FALSE(counted.at_least);  // every match ranked is every match counted
  CHECK(counted.matched == last);
  REQUIRE(store->search("haystack 1000", {}, 3, &counted));
  CHECK_FALSE(counted.at_least);
  CHECK(counted.matched == 1);
  // An exact id the words do not match is one more; one they match is not counted twice.
  REQUIRE(store->search("T001", {}, 3, &counted));
  CHECK_FALSE(counted.at_least);
  CHECK(counted.matched == 1);
  Task named = make_task(id(last + 1), "About t002 and more");
  insert(named);
  REQUIRE(store->search("T002", {}, 3, &counted));
  CHECK(counted.matched == 2);  // T002 itself and the task whose words say t002
  REQUIRE(store->search("nothing matches this", {}, 3, &counted));
  CHECK(counted.matched == 0);
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

namespace {

/// A search's answer to compare: the hits with their scores to the bit, and what it counted.
struct Answer {
  std::vector<std::pair<std::string, double>> hits;
  std::int64_t matched = 0;
  bool at_least = false;
  bool operator==(const Answer&) const = default;
};

Answer answer_of(Store& store, std::string_view text, const TaskFilter& filter, std::int64_t limit) {
  Answer answer;
  SearchCount counted;
  auto hits = store.search(text, filter, limit, &counted);
  INFO(text << ": " << (hits ? std::string() : hits.error().message));
  REQUIRE(hits);
  for (const auto& hit : *hits) answer.hits.emplace_back(hit.task.id, hit.score);
  answer.matched = counted.matched;
  answer.at_least = counted.at_least;
  return answer;
}

std::string task_id(std::int64_t n) {
  char out[16];
  std::snprintf(out, sizeof out, "T%03lld", static_cast<long long>(n));
  return out;
}

}  // namespace

TEST_CASE("a search asks for each word's whole terms and answers what the prefix answered", "[engines][search][sqlite]") {
  // Schema v16: tasks_fts_terms holds every term of the index, and a search asks FTS5 for the terms
  // that start with each word ("pa" → ("parse" OR "parser" OR …)) instead of the prefix ("pa"*).
  // With the row '' gone the store falls back to prefix queries: the same store answers both
  // ways, and every answer must be the same (hits, order, scores to the bit, counts).
  TempDir dir;
  const fs::path db = dir.path() / "tasks.db";
  std::mt19937 random(20261129);
  std::vector<std::string> words = {"parser", "parse",  "parsed", "cache", "cached", "café",   "cafeteria", "Zürich",
                                    "zurück", "Ärger",  "token",  "tokens", "T0042", "t00",   "naïve",     "Straße",
                                    "東京",   "東京都", "deploy", "docs"};
  for (int i = 0; i < 24; ++i) words.push_back("alpha" + std::to_string(i));  // one prefix, more than 16 terms
  auto some_words = [&](int most) { return random_words(random, words, most); };
  auto terms_hold_the_index = [&] {
    // Every term of the index is in tasks_fts_terms (a missed term would be a missed match).
    return test::sqlite_number(db, "SELECT count(*) FROM tasks_fts_terms WHERE term = ''") == 1 &&
           test::sqlite_number(db, "SELECT count(*) FROM (SELECT term FROM tasks_fts_terms_check EXCEPT "
                                   "SELECT term FROM tasks_fts_terms)") == 0;
  };
  std::vector<std::pair<std::string, TaskFilter>> queries;
  TaskFilter include;
  include.archived = ArchivedFilter::Include;
  TaskFilter done;
  done.statuses = {TaskStatus::Done};
  for (const auto& word : words) {
    queries.emplace_back(word, TaskFilter{});
    queries.emplace_back(word.substr(0, 2), TaskFilter{});
    queries.emplace_back(word.substr(0, 4), include);
    queries.emplace_back(word + " " + words[random() % words.size()], TaskFilter{});
    queries.emplace_back(word.substr(0, 3) + " " + words[random() % words.size()].substr(0, 3), done);
  }
  for (const char* text : {"a", "alpha", "alpha1", "T0042", "T004", "t00 parse", "nothing", "\"", "東", "stra"})
    queries.emplace_back(text, TaskFilter{});
  auto answers = [&] {
    auto store = test::create_store(db);
    std::vector<Answer> out;
    for (const auto& [text, filter] : queries)
      for (std::int64_t limit : {3, 40, -1}) out.push_back(answer_of(*store, text, filter, limit));
    return out;
  };
  auto both_ways = [&] {
    INFO("a fold, a change or a deletion kept tasks_fts_terms whole");
    test::run_sql(db, "CREATE TABLE IF NOT EXISTS tasks_fts_terms_check(term TEXT); DELETE FROM tasks_fts_terms_check; "
                      "CREATE VIRTUAL TABLE temp.v USING fts5vocab(main, tasks_fts, row); "
                      "INSERT INTO tasks_fts_terms_check SELECT term FROM temp.v");
    CHECK(terms_hold_the_index());
    const auto terms = answers();
    test::run_sql(db, "DELETE FROM tasks_fts_terms WHERE term = ''");
    check_same_answers(terms, answers(), queries, 3);
  };
  std::int64_t next = 1;
  {
    auto store = test::create_store(db);
    for (; next <= 150; ++next) {
      REQUIRE(store->insert_task(random_task(task_id(next), random, words)));
    }
  }
  both_ways();
  {
    // The row '' is gone: the next fold reads the whole vocabulary again. Changes bring new terms
    // (and leave old ones behind: a stale term matches nothing); deletions leave terms behind.
    auto store = test::create_store(db);
    for (int round = 0; round < 40; ++round) {
      const std::string id = task_id(1 + static_cast<std::int64_t>(random() % 150));
      auto task = store->get_task(id);
      REQUIRE(task);
      if (!*task) continue;
      Task changed = **task;
      changed.title = "Changed " + some_words(3) + " fresh" + std::to_string(round);
      changed.notes.push_back({9, "note " + some_words(2)});
      REQUIRE(store->update_task(changed));
    }
    for (int round = 0; round < 10; ++round) (void)store->delete_task(task_id(1 + static_cast<std::int64_t>(random() % 150)));
  }
  CHECK(test::sqlite_number(db, "SELECT count(*) FROM tasks_fts_terms WHERE term = ''") == 1);
  both_ways();
  {
    // Words the store has never held, written while the terms are kept one fold at a time.
    auto store = test::create_store(db);
    words.push_back("quokka");
    words.push_back("Quellcode");
    for (const std::int64_t last = next + 70; next <= last; ++next)
      REQUIRE(store->insert_task(make_task(task_id(next), "New " + some_words(3) + " quokka" + std::to_string(next % 5))));
  }
  queries.emplace_back("quokka", TaskFilter{});
  queries.emplace_back("quokka3", TaskFilter{});
  queries.emplace_back("qu", TaskFilter{});
  both_ways();
}

TEST_CASE("an index rebuilt by a restore or repair keeps its terms whole", "[engines][search][sqlite]") {
  TempDir dir;
  const fs::path db = dir.path() / "tasks.db";
  {
    auto store = test::create_store(db);
    for (std::int64_t n = 1; n <= 40; ++n)
      REQUIRE(store->insert_task(make_task(task_id(n), "Garnet " + std::to_string(n) + (n % 2 ? " topaz" : " opal"))));
  }
  // A fold written by hand (as an older ct or a tool could) leaves the terms behind: the store must
  // not trust them, and a search falls back to prefixes until a fold rebuilds them.
  test::run_sql(db, std::string("DELETE FROM tasks_fts_terms WHERE term = ''; "
                                "CREATE TEMP TABLE copied AS SELECT * FROM tasks WHERE num = 40; "
                                "UPDATE copied SET num = 41, id = 'T041', title = 'Peridot'; "
                                "INSERT INTO tasks SELECT * FROM copied; ") +
                        "INSERT INTO tasks_fts(rowid, title, description, labels, notes) SELECT num, title, '', '', '' "
                        "FROM tasks WHERE id = 'T041'");
  {
    auto store = test::create_store(db);
    auto hits = store->search("peri", {}, 10);
    REQUIRE(hits);
    REQUIRE(hits->size() == 1);
    CHECK(hits->front().task.id == "T041");
    for (std::int64_t n = 42; n <= 80; ++n) REQUIRE(store->insert_task(make_task(task_id(n), "Quartz " + std::to_string(n))));
  }
  CHECK(test::sqlite_number(db, "SELECT count(*) FROM tasks_fts_terms WHERE term IN ('', 'peridot', 'quartz', 'garnet')") == 4);
}

TEST_CASE("a common word's window is the same whichever way the store reads it", "[engines][search]") {
  // PostgreSQL reads a common word's window newest first over the last task numbers when the
  // newest tasks say the word is common ("common"), and falls back to every match when that does
  // not fill the window (the done ones) or for a rare word ("ancient"): each way must rank the
  // newest matches, and the answers must not change with the planner's statistics (ANALYZE).
  // On SQLite the same answers hold (there the terms decide, above).
  TempDir dir;
  const fs::path db = dir.path() / "tasks.db";
  auto store = test::create_store(db);
  std::mt19937 random(56);
  const std::int64_t last = 2 * kSearchRankWindow + 300;
  for (std::int64_t n = 1; n <= last; ++n) {
    Task task = make_task(task_id(n), std::string(n % 10 == 0 ? "Common common" : "Common") + " task " +
                                          (n % 3 == 0 ? "ember" : "slate") + (n <= 500 ? " ancient" : ""));
    if (n % 97 == 0) task.status = TaskStatus::Done;
    task.description = random() % 4 == 0 ? "common again" : "";
    REQUIRE(store->insert_task(task));
  }
  TaskFilter done;
  done.statuses = {TaskStatus::Done};
  const std::vector<std::pair<std::string, TaskFilter>> queries = {
      {"common", {}}, {"comm", {}},  {"common ember", {}}, {"common", done}, {"ancient", {}},
      {"slate", {}},  {"T005", {}}, {"T005 common", {}}, {"nothing", {}}};
  auto answers = [&] {
    std::vector<Answer> out;
    for (const auto& [text, filter] : queries)
      for (std::int64_t limit : {std::int64_t{5}, kSearchRankWindow + 10}) out.push_back(answer_of(*store, text, filter, limit));
    return out;
  };
  const auto before = answers();
  test::run_sql(db, "ANALYZE tasks");
  check_same_answers(before, answers(), queries, 2);
  // The window's semantics, whichever way: the newest kSearchRankWindow matches, "at least" once
  // it fills, and every match below it.
  CHECK(before[0].at_least);
  CHECK(before[0].matched == kSearchRankWindow);
  // Every task holds "common" and every tenth twice: ranked over every match, the page would be
  // the oldest of those (the lower number wins a tie); over the window, it is among the newest.
  REQUIRE(before[0].hits.size() == 5);
  for (const auto& [id, score] : before[0].hits) {
    INFO(id);
    CHECK(std::stoll(id.substr(1)) > last - kSearchRankWindow);
  }
  CHECK(before[3 * 2].matched == last / 97);  // the done ones: fewer than the window
  CHECK_FALSE(before[3 * 2].at_least);
  CHECK(before[4 * 2].matched == 500);
  CHECK(before[6 * 2].hits.front().first == "T005");  // an exact id, whatever its age
}

TEST_CASE("a page of the window is the best of the newest matches, as every match ranked says", "[engines][search]") {
  // The window's answer against its definition: rank every match (limit -1, a scope's search: its
  // own statement), keep the newest kSearchRankWindow of them (or the page's limit + 1, if more),
  // and the page is the first `limit` of those in the same order, with the same scores to the bit.
  // (Pages well within the window: near or past it, SQLite ranks the page's limit + 1 indexed
  // matches and the noted ones besides: the case above.)
  // Scores take few values here (a title says the word 1 to 4 times), so the page's last place is
  // a tie that the task number breaks; one word and two words (their ranks summed), a prefix, a
  // word in every other task (the window cut between matches), a status filter that leaves fewer
  // matches than the window, and a rare word (PostgreSQL reads the common words newest first and
  // the rest from every match: both ways are checked).
  TempDir dir;
  auto store = test::create_store(dir.path() / "tasks.db");
  const std::int64_t last = 2 * kSearchRankWindow + 300;
  for (std::int64_t n = 1; n <= last; ++n) {
    std::string title = "Task";
    for (std::int64_t i = 0; i <= n % 4; ++i) title += " alpha";
    Task task = make_task(task_id(n), title + (n % 3 == 0 ? " beta" : "") + (n % 2 == 0 ? " delta" : "") +
                                          (n % 40 == 0 ? " gamma" : ""));
    if (n % 5 == 0) task.description = "alpha again";
    if (n % 11 == 0) task.status = TaskStatus::Done;
    REQUIRE(store->insert_task(task));
  }
  TaskFilter done;
  done.statuses = {TaskStatus::Done};
  const std::vector<std::pair<std::string, TaskFilter>> queries = {
      {"alpha", {}}, {"alp", {}},   {"alpha beta", {}},  {"beta", {}},
      {"delta", {}}, {"delta alpha", {}}, {"alpha", done}, {"gamma", {}}, {"gamma alpha", {}}};
  for (const auto& [text, filter] : queries) {
    const Answer every = answer_of(*store, text, filter, -1);
    REQUIRE_FALSE(every.hits.empty());
    for (std::int64_t limit : {std::int64_t{1}, std::int64_t{9}, std::int64_t{400}}) {
      INFO(text << ", limit " << limit);
      const std::int64_t window = std::max(kSearchRankWindow, limit + 1);
      std::vector<std::int64_t> numbers;
      for (const auto& hit : every.hits) numbers.push_back(std::stoll(hit.first.substr(1)));
      std::sort(numbers.begin(), numbers.end(), std::greater<>());
      const std::int64_t oldest = numbers[std::min<std::size_t>(numbers.size(), window) - 1];
      Answer expected;
      for (const auto& hit : every.hits)
        if (std::ssize(expected.hits) < limit && std::stoll(hit.first.substr(1)) >= oldest) expected.hits.push_back(hit);
      expected.matched = std::min<std::int64_t>(std::ssize(every.hits), window);
      expected.at_least = std::ssize(every.hits) >= window;
      const Answer page = answer_of(*store, text, filter, limit);
      CHECK(page == expected);
    }
  }
}

}  // namespace ct
