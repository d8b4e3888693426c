// The PostgreSQL backend's store class and the helpers its parts share. Internal to the backend:
// the roles are written once over its sql::Runner (engines/store/sql_runner.h); what is
// PostgreSQL's own is defined by part, as the SQLite backend's is cut — pg_store.cpp (transactions,
// the runner, opening and migrating), pg_tasks.cpp (the next-task walk, and the writes made in one
// statement), pg_search.cpp (tsvector search of tasks and research), pg_maintenance.cpp
// (consistency scans, repairs, integrity, backups), pg_dump.cpp (dumps and loads) and pg_backend.cpp
// (the StoreBackend).
//
// How it keeps SQLite's guarantees on a server many machines share:
//  - begin(Write) opens a READ COMMITTED transaction that first takes the row lock of
//    meta.change_stamp (bumping it), sent with the transaction's first statement in one round trip
//    (Connection::begin_with_next; a read's BEGIN goes the same way): writers are serialised as SQLite's BEGIN IMMEDIATE does, waiting
//    at most storage.busyTimeoutMs (lock_timeout) before E_LOCK_TIMEOUT. The audit hash chain needs a
//    total order of mutations anyway, and every statement after the lock sees every earlier commit,
//    so id allocation, tasks.start's claim and the chain need no retry loop. The lock is held from
//    the transaction's first read to its commit (reads a write rests on must see every earlier
//    commit); what shortens it is fewer round trips inside: the audit row is sent with COMMIT in one
//    (Connection::defer).
//  - begin(Read) is REPEATABLE READ: one snapshot for the whole read, like a SQLite read
//    transaction (a read-only mode's dry run writes in it and rolls back).
//  - change_stamp() reads meta.change_stamp: it moves with every committed write transaction, and
//    each one notifies channel kChangesChannel with the schema's name at its commit, which
//    wait_for_change() LISTENs for: live views learn of a commit when it happens, not on a clock.
//  - Task rows have the SQLite backend's columns (engines/store/store_rows.h), JSON list columns as text,
//    and a generated tsvector column `search` (title A, labels B, description C, notes D) under a
//    GIN index. Every text column is COLLATE "C", so ordering is byte order, as in SQLite.
#pragma once

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/error.h"
#include "core/file_read.h"
#include "core/json_parse.h"
#include "core/text.h"
#include "engines/store/audit_chain.h"
#include "engines/store/postgres/pg_connection.h"
#include "engines/store/store.h"
#include "engines/store/store_backend.h"
#include "engines/store/store_dump.h"
#include "engines/store/store_rows.h"

namespace ct::pg {

/// The channel every write transaction notifies at its commit (payload: the store's schema).
inline constexpr std::string_view kChangesChannel = "cleo_changes";

/// Whether task t has an unfinished child (an epic's work is its children). OFFSET 0 keeps the
/// planner from turning it into a hashed subplan that reads every open task first (14 ms for
/// tasks.next at 100k tasks, 1.4 ms as a probe of the parent index per candidate).
inline constexpr std::string_view kOpenChildren =
    "EXISTS (SELECT 1 FROM tasks c WHERE c.parent = t.id AND c.archived = 0"
    " AND c.status IN ('pending', 'active', 'blocked') OFFSET 0)";

/// PostgreSQL's words for the shared queries (engines/store/sql_query.h): NULL parents first as
/// SQLite sorts them, the title and topics case-folded on ASCII letters only, as SQLite folds.
inline constexpr sql::Dialect kDialect{
    .has_label = "t.labels::jsonb ? ({}::text)",
    .open_children = kOpenChildren,
    .has_topic = "EXISTS (SELECT 1 FROM jsonb_array_elements_text(r.topics::jsonb) AS j(value) "
                 "WHERE lower(j.value COLLATE \"C\") = lower({}::text COLLATE \"C\"))",
    .roots_first = " NULLS FIRST",
    .roots_last = " NULLS LAST",
    .title_key = "lower(t.title)",
    .ordered_join = "JOIN",
    .list_items = "(SELECT e.value, e.n - 1 AS pos FROM jsonb_array_elements_text(CAST({} AS jsonb)) "
                  "WITH ORDINALITY AS e(value, n))",
    .linked_tasks = "(SELECT coalesce(json_agg(l.task_id ORDER BY l.position)::text, '[]') FROM research_links l "
                    "WHERE l.research_id = r.id)",
    .find_text = "strpos",
    .intent_category = "(intent::jsonb->>'category')",
    .intent_confidence = "(intent::jsonb->>'confidence')::float8",
    .intent_has_tag = "jsonb_exists(intent::jsonb->'tags', {})",
    .change_order = "ord",
};

/// The schema (PostgreSQL DDL) of store_schema_version(), and its steps as system.migrate lists them.
/// It needs fold(text) first: fold_function_sql() creates it, taking accents off through the
/// unaccent extension in `unaccent_schema`, or (a server without it) returning the text unchanged.
std::string_view schema_sql();
std::string fold_function_sql(const std::optional<std::string>& unaccent_schema);
std::vector<MigrationStep> schema_steps();
/// The SQL of each step after the first, for a store made before it.
struct SchemaUpgrade {
  std::int64_t version;
  std::string sql;
};
std::vector<SchemaUpgrade> schema_upgrades();

class PgStore final : public Store {
 public:
  /// Backups are written and read through `backups` (SQLite files, engines/store/store_dump.h).
  PgStore(std::unique_ptr<Connection> db, bool read_only, const BackupFiles& backups)
      : db_(std::move(db)), read_only_(read_only), backups_(backups) {}
  ~PgStore() override;

  // -- transactions ---------------------------------------------------------------------------
  Result<void> begin(TxKind kind) override;
  double lock_waited_ms() const override { return db_->opening_ms(); }
  Result<void> commit() override;
  void rollback() override;
  bool in_transaction() const override;
  Result<void> savepoint(std::string_view name) override;
  Result<void> rollback_to(std::string_view name) override;
  Result<void> release(std::string_view name) override;

  Result<std::int64_t> schema_version() override;
  Result<std::int64_t> change_stamp() override;
  Result<Waited> wait_for_change(std::chrono::milliseconds timeout, int interrupt) override;

  // -- what PostgreSQL does its own way ----------------------------------------------------------
  Result<std::vector<ReadyCandidate>> top_ready(const ReadyScoring& scoring) override;
  Result<std::vector<SearchHit>> search(std::string_view text, const TaskFilter& filter,
                                          std::int64_t limit, SearchCount* count = nullptr) override;
  Result<std::int64_t> count_matches(std::string_view text, const TaskFilter& filter) override;
  Result<std::vector<ResearchEntry>> search_research(std::string_view text, ArchivedFilter archived,
                                                     std::int64_t limit) override;
  Result<std::int64_t> count_research_matches(std::string_view text, ArchivedFilter archived) override;
  // One statement (one round trip) each where the shared code takes several: tasks by id, a task
  // with its dependency edges (and the id counter), the audit row with its changes.
  Result<std::vector<Task>> get_tasks(const std::vector<std::string>& ids) override;
  Result<void> insert_task(const Task& task) override;
  Result<void> update_task(const Task& task) override;
  Result<std::int64_t> append_audit(const AuditEntry& entry) override;

  // -- the roles' SQL (engines/store/sql_runner.h) ------------------------------------------
  class Runner final : public sql::Runner {
   public:
    explicit Runner(PgStore& store) : sql::Runner(kDialect), store_(store) {}
    using sql::Runner::run;
    Result<void> run(std::string_view sql, std::span<const sql::Value> args, std::string_view what,
                     sql::RowFn on_row) override;
    /// A failed statement fails the whole transaction here: the body runs as it is.
    Result<void> atomically(sql::FunctionRef<Result<void>()> body) override { return body(); }
    std::int64_t changes() const override { return changes_; }
    /// Sent with the next statement (Connection::read_ahead): a round trip each saved.
    bool reads_ahead() const override { return true; }
    void read_ahead(std::span<const StatementRef> statements) override { store_.db_->read_ahead(statements); }

   private:
    PgStore& store_;
    std::int64_t changes_ = 0;
  };
  sql::Runner& sql_runner() override { return runner_; }

  // -- diagnostics ----------------------------------------------------------------------------
  Result<std::vector<DiagnosticRow>> scan(ScanKind kind, const ScanScope& scope) override;
  Result<DerivedRepair> rebuild_derived() override;
  Result<std::vector<std::string>> integrity_problems() override;
  Result<void> backup_to(const std::filesystem::path& file) override;

  // -- restore --------------------------------------------------------------------------------
  Result<void> replace_contents_from(const std::filesystem::path& file) override;
  Result<void> dump(DumpSink& sink) override;
  Result<void> load(const DumpSource& source) override;

  Connection& connection() { return *db_; }

 private:
  // -- plumbing (pg_store.cpp) ----------------------------------------------------------------
  Result<Rows> query(std::string_view sql, std::span<const sql::Value> args, std::string_view what) {
    return db_->query(sql, args, what);
  }
  Result<Rows> query(std::string_view sql, std::string_view what) { return db_->query(sql, what); }
  Result<std::int64_t> meta_int(std::string_view key);

  std::unique_ptr<Connection> db_;
  bool read_only_ = false;
  const BackupFiles& backups_;
  /// The audit trail's last row (seq, hash) in this write transaction: read with the write lock
  /// and kept by append_audit(); nullopt when the trail holds no row or it is not known (then
  /// append_audit() asks). load() forgets it.
  std::optional<std::pair<std::int64_t, std::string>> audit_tail_;
  /// The tail is the answer of begin(Write)'s last statement (Connection::begun()), not read yet.
  bool tail_in_begun_ = false;
  TxKind kind_ = TxKind::Read;  // of the open transaction
  /// Held while a write transaction is open: no file is read for a caller meanwhile (core/file_read.h).
  std::optional<WriteLockMark> write_lock_;
  // Tasks this connection inserted since its last ANALYZE, and in the open transaction: commit()
  // analyses the tasks after kAnalyzeAfterInserts (a rollback takes its own back).
  static constexpr std::int64_t kAnalyzeAfterInserts = 1000;
  std::int64_t inserted_ = 0;
  std::int64_t inserted_in_transaction_ = 0;
  Runner runner_{*this};
};

/// The schema version a store's meta holds; nullopt when the schema holds no store (no meta table).
Result<std::optional<std::int64_t>> stored_version(Connection& db);

/// Opens (creating or migrating) the PostgreSQL store at `url` in `schema`.
Result<std::unique_ptr<Store>> open_pg_store(const std::string& url, const std::string& schema,
                                             const StoreOptions& options, const BackupFiles& backups);

}  // namespace ct::pg
