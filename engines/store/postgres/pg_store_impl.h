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
#include <utility>
#include <vector>

#include "core/error.h"
#include "core/json_parse.h"
#include "core/text.h"
#include "engines/store/audit_chain.h"
#include "engines/store/postgres/pg_connection.h"
#include "engines/store/store.h"
#include "engines/store/store_backend.h"
#include "engines/store/store_dump.h"
#include "engines/store/store_rows.h"

namespace ct::pg {

/// A WHERE clause under construction: conditions joined by AND; values bound through `params`
/// (write the placeholder with params.next() before adding the value).
struct Conditions {
  std::string& where;
  Params& params;

  void add(std::string_view condition) {
    where += where.empty() ? " WHERE " : " AND ";
    where += condition;
  }
  /// `condition` holds "{}" once, replaced by the next placeholder bound to `value` (not "?", which
  /// is an operator of jsonb).
  template <typename Value>
  void add(std::string_view condition, const Value& value) {
    std::string text(condition);
    if (auto mark = text.find("{}"); mark != std::string::npos) text.replace(mark, 2, params.next());
    add(text);
    params.add(value);
  }
};

/// Whether task t has an unfinished child (an epic's work is its children). OFFSET 0 keeps the
/// planner from turning it into a hashed subplan that reads every open task first (14 ms for
/// tasks.next at 100k tasks, 1.4 ms as a probe of the parent index per candidate).
inline constexpr std::string_view kOpenChildren =
    "EXISTS (SELECT 1 FROM tasks c WHERE c.parent = t.id AND c.archived = 0"
    " AND c.status IN ('pending', 'active', 'blocked') OFFSET 0)";

inline std::optional<std::string_view> archived_condition(ArchivedFilter archived) {
  switch (archived) {
    case ArchivedFilter::Exclude: return "t.archived = 0";
    case ArchivedFilter::Only: return "t.archived = 1";
    case ArchivedFilter::Include: break;
  }
  return std::nullopt;
}

/// The filter's conditions on tasks t (PostgreSQL dialect of the SQLite backend's append_filter).
inline void append_filter(const TaskFilter& filter, bool with_statuses, std::string& where, Params& params) {
  Conditions conditions{where, params};
  if (with_statuses && !filter.statuses.empty()) {
    std::string clause = "t.status IN (";
    bool first = true;
    for (auto status : kTaskStatuses) {
      if (std::find(filter.statuses.begin(), filter.statuses.end(), status) == filter.statuses.end()) continue;
      clause += first ? "" : ",";
      clause += params.next();
      first = false;
      params.add(to_string(status));
    }
    clause += ')';
    conditions.add(clause);
  }
  if (filter.parent) {
    if (filter.parent->empty()) {
      conditions.add("t.parent IS NULL");
    } else {
      conditions.add("t.parent = {}", *filter.parent);
    }
  }
  if (filter.type) conditions.add("t.type = {}", to_string(*filter.type));
  for (const auto& label : filter.labels) conditions.add("t.labels::jsonb ? ({}::text)", label);
  if (filter.under)
    conditions.add("t.id IN (WITH RECURSIVE below(id) AS (SELECT id FROM tasks WHERE parent = {}"
                   " UNION SELECT c.id FROM tasks c JOIN below b ON c.parent = b.id) SELECT id FROM below)",
                   *filter.under);
  constexpr std::string_view kWaiting =
      "EXISTS (SELECT 1 FROM task_deps d JOIN tasks u ON u.id = d.depends_on"
      " WHERE d.task_id = t.id AND u.status NOT IN ('done', 'cancelled'))";
  switch (filter.readiness) {
    case Readiness::Any: break;
    case Readiness::Ready:
      conditions.add("t.status = 'pending' AND NOT " + std::string(kWaiting) + " AND NOT (t.type = 'epic' AND " +
                     std::string(kOpenChildren) + ")");
      break;
    case Readiness::Blocked:
      conditions.add("(t.status = 'blocked' OR (t.status IN ('pending', 'active') AND " + std::string(kWaiting) + "))");
      break;
  }
  if (filter.phase) conditions.add("t.phase = {}", *filter.phase);
  if (filter.priority) conditions.add("t.priority = {}", to_string(*filter.priority));
  if (auto archived = archived_condition(filter.archived)) conditions.add(*archived);
}

/// ORDER BY of a task list (the SQLite backend's order_by(), in this dialect: NULL parents first
/// as SQLite sorts them, the title case-folded).
inline std::string order_by(SortKey sort, bool descending) {
  const char* dir = descending ? " DESC" : "";
  std::string out = " ORDER BY ";
  auto key = [&](std::string_view expression, std::string_view nulls = "") {
    out += expression;
    out += dir;
    out += nulls;
    out += ", ";
  };
  switch (sort) {
    case SortKey::Position:
      key("t.parent", descending ? " NULLS LAST" : " NULLS FIRST");
      key("t.position");
      break;
    case SortKey::Priority:
      key("CASE t.priority WHEN 'critical' THEN 4 WHEN 'high' THEN 3 WHEN 'medium' THEN 2 ELSE 1 END");
      out += "t.position, ";
      break;
    case SortKey::Created: key("t.created_at"); break;
    case SortKey::Updated: key("t.updated_at"); break;
    case SortKey::Title: key("lower(t.title)"); break;
    case SortKey::Status:
      key("CASE t.status WHEN 'pending' THEN 0 WHEN 'active' THEN 1 WHEN 'blocked' THEN 2 "
          "WHEN 'done' THEN 3 ELSE 4 END");
      break;
    case SortKey::Id: key("t.num"); break;
  }
  out += sort == SortKey::Position ? std::string("t.num") + dir : std::string("t.num");
  return out;
}

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
  Result<std::optional<std::string>> focus_holder(std::string_view task_id) override;

  // -- sessions -------------------------------------------------------------------------------
  Result<void> insert_session(const Session& session) override;
  Result<void> update_session(const Session& session) override;
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

  Connection& connection() { return *db_; }

 private:
  // -- plumbing (pg_store.cpp) ----------------------------------------------------------------
  Result<Rows> query(std::string_view sql, const Params& params, std::string_view what) {
    return db_->query(sql, params, what);
  }
  Result<Rows> query(std::string_view sql, std::string_view what) { return db_->query(sql, Params{}, what); }
  Result<std::vector<Task>> collect_tasks(std::string_view sql, const Params& params, std::string_view what);
  Result<std::int64_t> meta_int(std::string_view key);
  // -- dumps and loads (pg_maintenance.cpp): backups through backups_ -------------------------
  /// Every row of every dumped table, pushed into `sink`; inside a transaction (one snapshot).
  Result<void> dump(DumpSink& sink);
  /// Replaces every row of every dumped table with the rows `source` pushes (write transaction;
  /// nothing changes before its first table); the id counter keeps the higher of the two.
  Result<void> load(const DumpSource& source);

  std::unique_ptr<Connection> db_;
  bool read_only_ = false;
  const BackupFiles& backups_;
  /// The audit trail's last row (seq, hash) in this write transaction: read with the write lock
  /// and kept by append_audit(); nullopt when the trail holds no row or it is not known (then
  /// append_audit() asks). load() forgets it.
  std::optional<std::pair<std::int64_t, std::string>> audit_tail_;
};

/// Opens (creating or migrating) the PostgreSQL store at `url` in `schema`.
Result<std::unique_ptr<Store>> open_pg_store(const std::string& url, const std::string& schema,
                                             const StoreOptions& options, const BackupFiles& backups);

}  // namespace ct::pg
