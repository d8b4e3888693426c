// The PostgreSQL backend's store class and the query helpers its parts share. Internal to the
// backend: the class's members are defined by part, mirroring the SQLite backend's split —
// pg_store.cpp (connection, transactions, schema, the backend), pg_tasks.cpp (task rows, focus,
// sessions), pg_search.cpp (tsvector search of tasks and research), pg_audit.cpp (audit trail,
// idempotency keys, compliance), pg_records.cpp (releases, research, lifecycle) and
// pg_maintenance.cpp (consistency scans, derived data, dumps and loads, backups, statistics,
// compaction).
//
// How it keeps SQLite's guarantees on a server many machines share:
//  - begin(Write) opens a READ COMMITTED transaction and at once takes the row lock of
//    meta.change_stamp (bumping it): writers are serialised as SQLite's BEGIN IMMEDIATE does, waiting
//    at most storage.busyTimeoutMs (lock_timeout) before E_LOCK_TIMEOUT. The audit hash chain needs a
//    total order of mutations anyway, and every statement after the lock sees every earlier commit,
//    so id allocation, tasks.start's claim and the chain need no retry loop.
//  - begin(Read) is REPEATABLE READ: one snapshot for the whole read, like a SQLite read
//    transaction (a read-only mode's dry run writes in it and rolls back).
//  - change_stamp() reads meta.change_stamp: it moves with every committed write transaction.
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
};

using sql::archived_condition;

inline void append_filter(const TaskFilter& filter, bool with_statuses, std::string& where, Params& params) {
  sql::Where conditions{where, params};  // its "{}" is the next $n ("?" is an operator of jsonb)
  sql::append_task_filter(kDialect, filter, with_statuses, conditions);
}

inline std::string order_by(SortKey sort, bool descending) { return sql::task_order_by(kDialect, sort, descending); }

inline const std::string& select_tasks() {
  static const std::string sql = "SELECT " + std::string(kTaskColumns) + " FROM tasks t";
  return sql;
}

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
  Result<void> commit() override;
  void rollback() override;
  bool in_transaction() const override;
  Result<void> savepoint(std::string_view name) override;
  Result<void> rollback_to(std::string_view name) override;
  Result<void> release(std::string_view name) override;

  // -- tasks ----------------------------------------------------------------------------------
  Result<std::optional<Task>> get_task(std::string_view id) override;
  Result<std::vector<Task>> get_tasks(const std::vector<std::string>& ids) override;
  Result<std::vector<Task>> list_tasks(const TaskQuery& query) override;
  Result<std::int64_t> count_tasks(const TaskFilter& filter) override;
  Result<std::map<TaskStatus, std::int64_t>> count_by_status(const TaskFilter& filter) override;
  Result<std::string> allocate_task_id() override;
  Result<void> insert_task(const Task& task) override;
  Result<void> update_task(const Task& task) override;
  Result<void> delete_task(std::string_view id) override;
  Result<std::vector<std::string>> children_of(std::string_view id, bool include_archived) override;
  Result<std::vector<std::string>> dependents_of(std::string_view id) override;
  Result<std::int64_t> max_position(std::string_view parent) override;
  Result<std::vector<ReadyCandidate>> top_ready(const ReadyScoring& scoring) override;
  Result<std::vector<GraphTask>> graph_tasks(std::string_view root) override;
  Result<std::vector<SearchHit>> search(std::string_view text, const TaskFilter& filter,
                                        std::int64_t limit) override;
  Result<std::int64_t> count_matches(std::string_view text, const TaskFilter& filter) override;

  // -- focus ----------------------------------------------------------------------------------
  Result<std::optional<std::string>> get_focus(std::string_view session) override;
  Result<void> set_focus(std::string_view session, std::optional<std::string> task_id) override;
  Result<std::optional<Claim>> claim_on(std::string_view task_id) override;
  Result<std::vector<Claim>> claims() override;

  // -- sessions -------------------------------------------------------------------------------
  Result<void> insert_session(const Session& session) override;
  Result<void> update_session(const Session& session) override;
  Result<void> delete_session(std::string_view id) override;
  Result<std::optional<Session>> get_session(std::string_view id) override;
  Result<std::vector<Session>> list_sessions(const SessionQuery& query) override;
  Result<std::int64_t> count_sessions(const SessionQuery& query) override;

  // -- audit ----------------------------------------------------------------------------------
  Result<std::int64_t> append_audit(const AuditEntry& entry) override;
  Result<std::vector<AuditEntry>> read_audit(const AuditQuery& query) override;
  Result<std::optional<IdempotentCall>> find_idempotent(std::string_view key) override;
  Result<void> remember_idempotent(const IdempotentCall& call, TimeMs forget_before) override;
  Result<std::int64_t> schema_version() override;
  Result<std::int64_t> change_stamp() override;

  // -- compliance -----------------------------------------------------------------------------
  Result<std::int64_t> insert_compliance(const ComplianceRecord& record) override;
  Result<std::vector<ComplianceSummary>> compliance_summary(const ComplianceQuery& query) override;
  Result<std::vector<ComplianceRecord>> list_compliance(const ComplianceQuery& query) override;

  // -- releases -------------------------------------------------------------------------------
  Result<std::optional<Release>> get_release(std::string_view version) override;
  Result<std::vector<Release>> list_releases() override;
  Result<void> put_release(const Release& release) override;

  // -- research -------------------------------------------------------------------------------
  Result<std::optional<ResearchEntry>> get_research(std::string_view id) override;
  Result<std::vector<ResearchEntry>> list_research(const ResearchQuery& query) override;
  Result<std::int64_t> count_research(const ResearchQuery& query) override;
  Result<void> put_research(const ResearchEntry& entry) override;
  Result<std::vector<ResearchEntry>> search_research(std::string_view text, ArchivedFilter archived,
                                                     std::int64_t limit) override;
  Result<std::int64_t> count_research_matches(std::string_view text, ArchivedFilter archived) override;
  Result<std::vector<std::string>> research_for_task(std::string_view task_id) override;
  Result<ResearchStats> research_stats() override;
  Result<std::optional<ManifestCursor>> get_manifest_cursor(std::string_view file) override;
  Result<void> put_manifest_cursor(const ManifestCursor& cursor) override;

  // -- lifecycle ------------------------------------------------------------------------------
  Result<std::vector<LifecycleState>> lifecycle_states(std::string_view subject, LifecycleKind kind) override;
  Result<void> put_lifecycle(const LifecycleEvent& event) override;
  Result<std::vector<LifecycleEvent>> lifecycle_events(std::string_view subject, std::optional<LifecycleKind> kind,
                                                       std::int64_t limit, std::int64_t offset) override;
  Result<std::int64_t> count_lifecycle_events(std::string_view subject, std::optional<LifecycleKind> kind) override;

  // -- the shared roles' SQL (engines/store/sql_runner.h: memory, trust) ----------------------
  class Runner final : public sql::Runner {
   public:
    explicit Runner(PgStore& store) : store_(store) {}
    using sql::Runner::run;
    Result<void> run(std::string_view sql, std::span<const sql::Value> args, std::string_view what,
                     const std::function<void(const sql::Cursor&)>& on_row) override;

   private:
    PgStore& store_;
    std::unordered_map<std::string, std::string> translated_;  // ?N → $N, by the statement's text
  };
  sql::Runner& sql_runner() override { return runner_; }

  // -- diagnostics ----------------------------------------------------------------------------
  Result<std::vector<DiagnosticRow>> scan(ScanKind kind, const ScanScope& scope) override;
  Result<DerivedRepair> rebuild_derived() override;
  Result<std::vector<std::string>> integrity_problems() override;
  Result<void> backup_to(const std::filesystem::path& file) override;

  // -- housekeeping ---------------------------------------------------------------------------
  Result<StoreCounts> counts() override;
  Result<std::vector<PeriodStats>> period_stats(const std::vector<StatsPeriod>& periods) override;
  Result<std::optional<AuditAnchor>> audit_anchor() override;
  Result<std::int64_t> last_audit_seq_before(TimeMs before) override;
  Result<std::int64_t> compact_audit(const AuditAnchor& anchor) override;
  Result<std::int64_t> expire_idempotent(TimeMs before, bool count_only) override;
  Result<void> replace_contents_from(const std::filesystem::path& file) override;
  Result<void> dump(DumpSink& sink) override;
  Result<void> load(const DumpSource& source) override;

  Connection& connection() { return *db_; }

 private:
  // -- plumbing (pg_store.cpp) ----------------------------------------------------------------
  Result<Rows> query(std::string_view sql, const Params& params, std::string_view what) {
    return db_->query(sql, params, what);
  }
  Result<Rows> query(std::string_view sql, std::string_view what) { return db_->query(sql, Params{}, what); }
  Result<std::vector<Task>> collect_tasks(std::string_view sql, const Params& params, std::string_view what);
  Result<std::int64_t> meta_int(std::string_view key);

  std::unique_ptr<Connection> db_;
  bool read_only_ = false;
  const BackupFiles& backups_;
  /// The audit trail's last row (seq, hash) in this write transaction: read with the write lock
  /// and kept by append_audit(); nullopt when the trail holds no row or it is not known (then
  /// append_audit() asks). load() forgets it.
  std::optional<std::pair<std::int64_t, std::string>> audit_tail_;
  /// Held while a write transaction is open: no file is read for a caller meanwhile (core/file_read.h).
  std::optional<WriteLockMark> write_lock_;
  Runner runner_{*this};
};

/// Opens (creating or migrating) the PostgreSQL store at `url` in `schema`.
Result<std::unique_ptr<Store>> open_pg_store(const std::string& url, const std::string& schema,
                                             const StoreOptions& options, const BackupFiles& backups);

}  // namespace ct::pg
