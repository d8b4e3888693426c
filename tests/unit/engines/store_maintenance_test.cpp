// The store's housekeeping: period statistics, audit compaction and archives, idempotency expiry,
// replacing the contents from another database, and inspecting database files.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <map>

#include "engines/store/audit_chain.h"
#include "engines/store/sqlite/sqlite_store.h"
#include "unit/temp_dir.h"
#include "unit/test_support.h"

namespace ct {
namespace {

namespace fs = std::filesystem;
using test::TempDir;

constexpr TimeMs kHour = 3600 * 1000;
constexpr TimeMs kDay = 24 * kHour;
constexpr TimeMs kT0 = 1'767'225'600'000;  // 2026-01-01T00:00:00Z

/// A task created at `created`, done at `completed` (when given); started at `started` per the
/// audit trail (when given).
void add_task(Store& store, TimeMs created, std::optional<TimeMs> completed, std::optional<TimeMs> started = {}) {
  REQUIRE(store.begin(TxKind::Write));
  auto id = store.allocate_task_id();
  REQUIRE(id);
  Task task;
  task.id = *id;
  task.title = "Task " + *id;
  task.position = 1;
  task.created_at = created;
  task.updated_at = completed.value_or(created);
  if (completed) {
    task.status = TaskStatus::Done;
    task.completed_at = completed;
  }
  REQUIRE(store.insert_task(task));
  if (started) {
    AuditEntry start;
    start.at = *started;
    start.operation = "tasks.start";
    start.task_id = *id;
    start.outcome = "ok";
    start.changes.push_back({*id, "status", json::Value("pending"), json::Value("active")});
    REQUIRE(store.append_audit(start));
  }
  REQUIRE(store.commit());
}

void append(Store& store, TimeMs at, std::string operation) {
  REQUIRE(store.begin(TxKind::Write));
  AuditEntry entry;
  entry.at = at;
  entry.operation = std::move(operation);
  entry.outcome = "ok";
  entry.params.set("n", at);
  entry.changes.push_back({"T001", "title", json::Value("before"), json::Value("after")});
  REQUIRE(store.append_audit(entry));
  REQUIRE(store.commit());
}

}  // namespace

TEST_CASE("period_stats counts and ranks durations in SQL", "[engines][store][stats]") {
  TempDir dir;
  auto store = test::create_store(dir.path() / "tasks.db");
  // Day 0: five tasks created; cycle times 1, 2, 3, 4 and 10 hours, all completed on day 0.
  for (TimeMs hours : {1, 2, 3, 4, 10}) add_task(*store, kT0, kT0 + hours * kHour);
  // Day 1: one created and still open, one completed with a recorded start 2 h before.
  add_task(*store, kT0 + kDay, std::nullopt);
  add_task(*store, kT0 + kDay, kT0 + kDay + 5 * kHour, kT0 + kDay + 3 * kHour);
  // Outside the periods asked for.
  add_task(*store, kT0 - kDay, kT0 - kDay + kHour);

  REQUIRE(store->begin(TxKind::Read));
  auto stats = store->period_stats({{kT0, kT0 + kDay}, {kT0 + kDay, kT0 + 2 * kDay}});
  store->rollback();
  REQUIRE(stats);
  REQUIRE(stats->size() == 3);
  const auto& day0 = (*stats)[0];
  CHECK(day0.created == 5);
  CHECK(day0.completed == 5);
  CHECK(day0.cycle_p50 == 3 * kHour);   // nearest rank: the 3rd of 5
  CHECK(day0.cycle_p90 == 10 * kHour);  // the 5th of 5
  CHECK(day0.started == 0);
  CHECK(!day0.work_p50);
  const auto& day1 = (*stats)[1];
  CHECK(day1.created == 2);
  CHECK(day1.completed == 1);
  CHECK(day1.cycle_p50 == 5 * kHour);
  CHECK(day1.started == 1);
  CHECK(day1.work_p50 == 2 * kHour);
  CHECK(day1.work_p90 == 2 * kHour);
  const auto& all = (*stats)[2];
  CHECK(all.created == 7);
  CHECK(all.completed == 6);
  CHECK(all.cycle_p50 == 3 * kHour);   // 1 2 3 | 4 5 10: the 3rd of 6
  CHECK(all.cycle_p90 == 10 * kHour);  // the 6th of 6
  CHECK(all.started == 1);

  REQUIRE(store->begin(TxKind::Read));
  auto none = store->period_stats({});
  store->rollback();
  REQUIRE(none);
  CHECK(none->size() == 1);
  CHECK((*none)[0].created == 0);
}

TEST_CASE("audit compaction: archive, anchor, and a chain that continues", "[engines][store][audit]") {
  TempDir dir;
  auto store = test::create_store(dir.path() / "tasks.db");
  for (int i = 0; i < 5; ++i) append(*store, kT0 + i * kDay, "tasks.update");

  REQUIRE(store->begin(TxKind::Write));
  auto upto = store->last_audit_seq_before(kT0 + 3 * kDay);
  REQUIRE(upto);
  CHECK(*upto == 3);
  auto anchor_before = store->audit_anchor();
  REQUIRE(anchor_before);
  CHECK(!*anchor_before);
  fs::path archive = dir.path() / "archive" / "audit-1-3.jsonl";
  auto written = write_audit_archive(*store, archive, std::nullopt, *upto);
  REQUIRE(written);
  CHECK(written->rows == 3);
  CHECK(written->from == 1);
  CHECK(written->to == 3);
  auto removed = store->compact_audit({3, written->last_hash, "audit-1-3.jsonl"});
  REQUIRE(removed);
  CHECK(*removed == 3);
  REQUIRE(store->commit());

  auto verified = verify_audit_archive(archive);
  REQUIRE(verified);
  CHECK(verified->rows == 3);
  CHECK(verified->last_hash == written->last_hash);
  CHECK(!verified->first_broken);

  REQUIRE(store->begin(TxKind::Read));
  auto chain = verify_audit_chain(*store);
  auto anchor = store->audit_anchor();
  store->rollback();
  REQUIRE(chain);
  CHECK(chain->rows == 2);
  CHECK(chain->anchor == 3);
  CHECK(!chain->first_broken);
  REQUIRE(anchor);
  REQUIRE(*anchor);
  CHECK((*anchor)->archive == "audit-1-3.jsonl");

  // Everything compacted: the next row still continues the sequence and the chain.
  REQUIRE(store->begin(TxKind::Write));
  fs::path rest = dir.path() / "archive" / "audit-4-5.jsonl";
  auto second = write_audit_archive(*store, rest, *anchor, 5);
  REQUIRE(second);
  CHECK(second->previous == written->last_hash);
  REQUIRE(store->compact_audit({5, second->last_hash, "audit-4-5.jsonl"}));
  REQUIRE(store->commit());
  append(*store, kT0 + 10 * kDay, "tasks.add");
  REQUIRE(store->begin(TxKind::Read));
  AuditQuery query;
  auto rows = store->read_audit(query);
  auto after = verify_audit_chain(*store);
  store->rollback();
  REQUIRE(rows);
  REQUIRE(rows->size() == 1);
  CHECK(rows->front().seq == 6);
  REQUIRE(after);
  CHECK(!after->first_broken);

  // Nothing to archive: no file.
  REQUIRE(store->begin(TxKind::Read));
  auto empty = write_audit_archive(*store, dir.path() / "archive" / "none.jsonl", std::nullopt, 0);
  store->rollback();
  REQUIRE(empty);
  CHECK(empty->rows == 0);
  CHECK(!fs::exists(dir.path() / "archive" / "none.jsonl"));

  // A truncated or rewritten archive is caught.
  std::ofstream(dir.path() / "archive" / "bad.jsonl") << "{\"cleoAuditArchive\":1,\"previous\":\"\"}\n{\"seq\":1}\n";
  CHECK(!verify_audit_archive(dir.path() / "archive" / "bad.jsonl"));
}

TEST_CASE("idempotency keys expire by age", "[engines][store][gc]") {
  TempDir dir;
  auto store = test::create_store(dir.path() / "tasks.db");
  REQUIRE(store->begin(TxKind::Write));
  REQUIRE(store->remember_idempotent({"old", "tasks.add", "{}", "{}", kT0}, 0));
  REQUIRE(store->remember_idempotent({"new", "tasks.add", "{}", "{}", kT0 + 2 * kDay}, 0));
  auto counted = store->expire_idempotent(kT0 + kDay, true);
  REQUIRE(counted);
  CHECK(*counted == 1);
  CHECK(store->find_idempotent("old").value().has_value());
  auto removed = store->expire_idempotent(kT0 + kDay, false);
  REQUIRE(removed);
  CHECK(*removed == 1);
  CHECK(!store->find_idempotent("old").value().has_value());
  CHECK(store->find_idempotent("new").value().has_value());
  REQUIRE(store->commit());
}

TEST_CASE("replace_contents_from copies every table and never lowers the id counter", "[engines][store][restore]") {
  TempDir dir;
  auto live = test::create_store(dir.path() / "live.db");
  add_task(*live, kT0, std::nullopt);
  REQUIRE(live->begin(TxKind::Read));
  auto counts_one = live->counts();
  live->rollback();
  REQUIRE(counts_one);
  CHECK(counts_one->tasks == 1);

  fs::path copy = dir.path() / "copy.db";
  REQUIRE(test::backend_for(dir.path() / "live.db")->copy_to(copy));
  auto info = inspect_backup_file(copy, true);
  REQUIRE(info);
  CHECK(info->schema_version == store_schema_version());
  CHECK(info->problems.empty());
  CHECK(!fs::exists(dir.path() / "live.db-journal"));

  // The live store moves on: more tasks, a start in the audit trail.
  add_task(*live, kT0, std::nullopt, kT0 + kHour);
  add_task(*live, kT0, std::nullopt);
  REQUIRE(live->begin(TxKind::Write));
  REQUIRE(live->replace_contents_from(copy));
  auto counts = live->counts();
  REQUIRE(counts);
  CHECK(counts->tasks == 1);
  CHECK(counts->audit_rows == 0);
  auto next = live->allocate_task_id();
  REQUIRE(next);
  CHECK(*next == "T004");  // T002 and T003 were handed out before the restore
  REQUIRE(live->commit());
  REQUIRE(live->begin(TxKind::Read));
  auto hits = live->search("Task", TaskFilter{}, 10);
  REQUIRE(hits);
  REQUIRE(hits->size() == 1);
  CHECK(hits->front().task.id == "T001");
  auto problems = live->integrity_problems();
  live->rollback();
  REQUIRE(problems);
  CHECK(problems->empty());

  // Outside a transaction it refuses.
  CHECK(!live->replace_contents_from(copy));
}

/// A whole dump held as text: per table, its rows as "column=value" lines (NULL as "column∅"), so
/// that dumps of two backends compare whatever order each gives a table's columns.
class HeldDump final : public DumpSink {
 public:
  Result<void> table(std::string_view name, const std::vector<std::string>& columns) override {
    current_ = &tables[std::string(name)];
    columns_ = columns;
    return {};
  }
  Result<void> row(std::span<const std::optional<std::string_view>> values) override {
    std::map<std::string, std::string> row;
    for (std::size_t i = 0; i < values.size(); ++i)
      row[columns_[i]] = values[i] ? "=" + std::string(*values[i]) : std::string("∅");
    std::string line;
    for (const auto& [column, value] : row) line += column + value + "\n";
    current_->push_back(line);
    return {};
  }
  std::map<std::string, std::vector<std::string>> tables;

 private:
  std::vector<std::string>* current_ = nullptr;
  std::vector<std::string> columns_;
};

HeldDump dump_of(Store& store) {
  HeldDump held;
  REQUIRE(store.begin(TxKind::Read));
  REQUIRE(store.dump(held));
  store.rollback();
  return held;
}

void load_into(Store& target, Store& source) {
  REQUIRE(target.begin(TxKind::Write));
  REQUIRE(source.begin(TxKind::Read));
  REQUIRE(target.load([&](DumpSink& sink) { return source.dump(sink); }));
  source.rollback();
  REQUIRE(target.commit());
}

TEST_CASE("a store's dump loads into a store of the other backend and back, row for row", "[engines][store][dump]") {
  // The store under test (PostgreSQL in the postgresql label's run) and an SQLite store: the seam's
  // dump and load copy one into the other with neither knowing the other's backend.
  TempDir dir;
  auto live = test::create_store(dir.path() / "live.db");
  add_task(*live, kT0, std::nullopt, kT0 + kHour);
  add_task(*live, kT0, kT0 + kDay);
  append(*live, kT0 + 2 * kHour, "tasks.update");
  REQUIRE(live->begin(TxKind::Write));
  Session session;
  session.id = "session_1";
  session.scope = "global";
  session.created_at = session.updated_at = kT0;
  REQUIRE(live->insert_session(session));
  REQUIRE(live->set_focus("session_1", std::string("T001")));
  ResearchEntry entry;
  entry.id = "R001";
  entry.file = "notes.md";
  entry.title = "Caching layers compared";
  entry.date = "2026-01-02";
  entry.agent_type = "research";
  entry.topics = {"cache"};
  entry.confidence = 0.75;
  entry.linked_tasks = {"T001"};
  entry.created_at = entry.updated_at = kT0;
  REQUIRE(live->put_research(entry));
  REQUIRE(live->commit());
  const HeldDump original = dump_of(*live);
  CHECK(original.tables.at("tasks").size() == 2);
  CHECK(original.tables.at("audit").size() == 2);

  SqliteOptions options;
  options.create = true;
  auto sqlite = open_sqlite_store(dir.path() / "copy.db", options);
  REQUIRE(sqlite);
  load_into(**sqlite, *live);
  CHECK(dump_of(**sqlite).tables == original.tables);

  // Back into a new store of the backend under test, over rows it already holds: they go.
  auto again = test::create_store(dir.path() / "again.db");
  add_task(*again, kT0, std::nullopt);
  add_task(*again, kT0, std::nullopt);
  add_task(*again, kT0, std::nullopt);
  load_into(*again, **sqlite);
  CHECK(dump_of(*again).tables.at("tasks") == original.tables.at("tasks"));
  REQUIRE(again->begin(TxKind::Write));
  auto next = again->allocate_task_id();
  REQUIRE(next);
  CHECK(*next == "T004");  // its own ids stay spent: the counter keeps the higher
  auto hits = again->search("task", TaskFilter{}, 10);
  REQUIRE(hits);
  CHECK(hits->size() == 2);  // the search index follows the loaded rows: T003 is gone from it
  auto found = again->search_research("caching", ArchivedFilter::Exclude, 10);
  REQUIRE(found);
  REQUIRE(found->size() == 1);
  again->rollback();

  // A source that pushes no table changes nothing; outside a transaction both refuse.
  REQUIRE(again->begin(TxKind::Write));
  REQUIRE(again->load([](DumpSink&) -> Result<void> { return {}; }));
  REQUIRE(again->commit());
  CHECK(dump_of(*again).tables.at("tasks") == original.tables.at("tasks"));
  HeldDump ignored;
  CHECK(!again->dump(ignored));
  CHECK(!again->load([](DumpSink&) -> Result<void> { return {}; }));
}

TEST_CASE("inspect_sqlite_file and copy_sqlite_database refuse what is not a database", "[engines][store]") {
  TempDir dir;
  CHECK(inspect_sqlite_file(dir.path() / "missing.db", false).error().code == ErrorCode::NotFound);
  std::ofstream(dir.path() / "text.db") << "hello, this is plain text and certainly not SQLite";
  auto text = inspect_sqlite_file(dir.path() / "text.db", true);
  REQUIRE(!text);
  CHECK(text.error().code == ErrorCode::FileError);
  auto copied = copy_sqlite_database(dir.path() / "text.db", dir.path() / "out.db");
  REQUIRE(!copied);
  CHECK(copied.error().code == ErrorCode::FileError);
  CHECK(!fs::exists(dir.path() / "out.db"));

  auto steps = sqlite_migrations();
  REQUIRE(!steps.empty());
  CHECK(steps.front().version == 1);
  CHECK(steps.back().version == sqlite_schema_version());
  for (const auto& step : steps) CHECK(!step.description.empty());
}

TEST_CASE("the active sessions a call may adopt: ids and owners, the most recently updated first, at most the limit",
          "[engines][store][sessions]") {
  // What every `ct` command that names no session asks (domains/pipeline.h: adopt_session), on
  // both backends: ended and archived sessions are never among them.
  TempDir dir;
  auto store = test::create_store(dir.path() / "sessions.db");
  REQUIRE(store->begin(TxKind::Write));
  auto add = [&](std::string id, TimeMs updated, std::string owner, SessionStatus status,
                 std::optional<TimeMs> archived) {
    Session session;
    session.id = std::move(id);
    session.scope = "global";
    session.created_at = kT0;
    session.updated_at = updated;
    session.owner = std::move(owner);
    session.status = status;
    if (status != SessionStatus::Active) session.ended_at = updated;
    session.archived_at = archived;
    REQUIRE(store->insert_session(session));
  };
  add("session_old", kT0, "", SessionStatus::Active, std::nullopt);
  add("session_new", kT0 + 2 * kHour, "agent:a", SessionStatus::Active, std::nullopt);
  add("session_ended", kT0 + 3 * kHour, "agent:a", SessionStatus::Ended, std::nullopt);
  add("session_archived", kT0 + 4 * kHour, "", SessionStatus::Active, kT0 + 4 * kHour);
  REQUIRE(store->commit());

  auto active = store->active_sessions(5);
  REQUIRE(active);
  REQUIRE(active->size() == 2);
  CHECK((*active)[0].id == "session_new");
  CHECK((*active)[0].owner == "agent:a");
  CHECK((*active)[1].id == "session_old");
  CHECK((*active)[1].owner.empty());
  // The same sessions, in the same order, as the full listing gives them.
  SessionQuery query;
  query.statuses = {SessionStatus::Active};
  auto listed = store->list_sessions(query);
  REQUIRE(listed);
  REQUIRE(listed->size() == active->size());
  for (std::size_t i = 0; i < listed->size(); ++i) CHECK((*listed)[i].id == (*active)[i].id);
  auto first = store->active_sessions(1);
  REQUIRE(first);
  REQUIRE(first->size() == 1);
  CHECK(first->front().id == "session_new");
}

}  // namespace ct
