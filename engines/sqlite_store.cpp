// The embedded store: one SQLite connection in WAL mode, prepared statements cached for the
// connection's lifetime, the schema versioned in PRAGMA user_version and migrated forward on open,
// and an FTS5 index kept in step with the tasks table inside the caller's transaction.
#include "engines/sqlite_store.h"

#include "engines/audit_chain.h"
#include "engines/backups.h"
#include "engines/project.h"
#include "engines/sqlite_scans.h"
#include "engines/sqlite_rows.h"
#include "engines/sqlite_schema.h"
#include "engines/sqlite_statement.h"

#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <array>
#include <cstdint>
#include <fstream>
#include <functional>
#include <iterator>
#include <set>
#include <string>
#include <string_view>
#include <system_error>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <variant>
#include <vector>

#include "core/atomic_file.h"
#include "core/json_parse.h"
#include "core/log.h"
#include "core/text.h"

namespace ct {
namespace {

using namespace sqlite;  // the backend's own helpers (sqlite_statement.h, sqlite_rows.h)

bool is_file_error(int rc) {
  switch (rc & 0xff) {
    case SQLITE_IOERR:
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
    case SQLITE_FULL:
    case SQLITE_CANTOPEN:
    case SQLITE_READONLY:
    case SQLITE_PERM:
      return true;
    default:
      return false;
  }
}

/// A line of PRAGMA quick_check/integrity_check that names a problem ("ok" and the
/// "*** in database main ***" headings do not).
bool is_problem_line(std::string_view line) { return line != "ok" && !line.starts_with("*** in database"); }

bool is_lock_error(int rc) { return (rc & 0xff) == SQLITE_BUSY || (rc & 0xff) == SQLITE_LOCKED; }

/// The one mapping from an SQLite result code (and, for I/O errors, the operating system's errno
/// behind it) to our error codes.
Error sqlite_error(int rc, std::string_view detail, std::string_view what, const std::filesystem::path& file,
                   int system_errno = 0) {
  if (is_lock_error(rc)) {
    return Error(ErrorCode::LockTimeout, "database is locked by another writer; retry")
        .with_fix("retry the call; if it keeps happening raise storage.busyTimeoutMs")
        .with_detail("sqlite", std::string(detail));
  }
  std::string message = std::string(what) + ": " + std::string(detail) + " (" + file.string() + ")";
  // "disk I/O error" says little: the errno says a full disk or a read-only filesystem.
  if ((rc & 0xff) == SQLITE_IOERR || (rc & 0xff) == SQLITE_CANTOPEN || (rc & 0xff) == SQLITE_FULL) {
    if (system_errno == ENOSPC || system_errno == EDQUOT || (rc & 0xff) == SQLITE_FULL)
      return Error(ErrorCode::FileError, std::string(what) + ": the disk is full (" + file.string() + ")")
          .with_fix("free disk space on the volume holding " + file.parent_path().string() + " and retry");
    if (system_errno == EROFS)
      return Error(ErrorCode::FileError, std::string(what) + ": the filesystem is read-only (" + file.string() + ")")
          .with_fix("run with --read-only to read it, or on a writable copy");
  }
  if (is_file_error(rc)) {
    Error error(ErrorCode::FileError, std::move(message));
    switch (rc & 0xff) {
      case SQLITE_CORRUPT:
      case SQLITE_NOTADB:
        error.with_fix(std::string(kCorruptFix));
        break;
      case SQLITE_FULL:
        error.with_fix("free disk space on the volume holding " + file.parent_path().string() + " and retry");
        break;
      default:
        error.with_fix("check that " + file.string() + " and its directory exist and are readable and "
                       "writable by this user");
        break;
    }
    return error;
  }
  return Error(ErrorCode::Internal, std::move(message));
}

/// A WHERE clause under construction: conditions joined by AND, the values of their `?`
/// placeholders appended to `params` in order.
struct Conditions {
  std::string& where;
  std::vector<SqlValue>& params;

  void add(std::string_view condition) {
    where += where.empty() ? " WHERE " : " AND ";
    where += condition;
  }
  void add(std::string_view condition, SqlValue value) {
    add(condition);
    params.push_back(std::move(value));
  }
};

/// Whether task t has an unfinished child (an epic's work is its children). The parent index finds
/// them in one seek: `+c.status` keeps SQLite from probing tasks(status, archived, parent, …)
/// once per status instead (38 % more instructions for tasks.next).
constexpr std::string_view kOpenChildren =
    "EXISTS (SELECT 1 FROM tasks c WHERE c.parent = t.id AND c.archived = 0"
    " AND +c.status IN ('pending', 'active', 'blocked'))";

void append_filter(const TaskFilter& filter, bool with_statuses, std::string& where,
                   std::vector<SqlValue>& params) {
  Conditions conditions{where, params};
  if (with_statuses && !filter.statuses.empty()) {
    // Each distinct status once, in enum order: the SQL text (and so the cached statement) depends
    // only on which statuses are asked for.
    std::string clause = "t.status IN (";
    bool first = true;
    for (auto status : {TaskStatus::Pending, TaskStatus::Active, TaskStatus::Blocked, TaskStatus::Done,
                        TaskStatus::Cancelled}) {
      if (std::find(filter.statuses.begin(), filter.statuses.end(), status) == filter.statuses.end()) continue;
      clause += first ? "?" : ",?";
      first = false;
      params.emplace_back(std::string(to_string(status)));
    }
    clause += ')';
    conditions.add(clause);
  }
  if (filter.parent) {
    if (filter.parent->empty()) {
      conditions.add("t.parent IS NULL");
    } else {
      conditions.add("t.parent = ?", *filter.parent);
    }
  }
  if (filter.type) conditions.add("t.type = ?", std::string(to_string(*filter.type)));
  for (const auto& label : filter.labels)
    conditions.add("EXISTS (SELECT 1 FROM json_each(t.labels) AS l WHERE l.value = ?)", label);
  if (filter.under)
    conditions.add("t.id IN (WITH RECURSIVE below(id) AS (SELECT id FROM tasks WHERE parent = ?"
                   " UNION SELECT c.id FROM tasks c JOIN below b ON c.parent = b.id) SELECT id FROM below)",
                   *filter.under);
  constexpr std::string_view kWaiting =
      "EXISTS (SELECT 1 FROM task_deps d JOIN tasks u ON u.id = d.depends_on"
      " WHERE d.task_id = t.id AND u.status NOT IN ('done', 'cancelled'))";
  switch (filter.readiness) {
    case Readiness::Any: break;
    case Readiness::Ready:
      // As tasks.next sees it: nothing unfinished upstream, and an epic's work is its children.
      conditions.add("t.status = 'pending' AND NOT " + std::string(kWaiting) + " AND NOT (t.type = 'epic' AND " +
                     std::string(kOpenChildren) + ")");
      break;
    case Readiness::Blocked:
      conditions.add("(t.status = 'blocked' OR (t.status IN ('pending', 'active') AND " + std::string(kWaiting) + "))");
      break;
  }
  if (filter.phase) conditions.add("t.phase = ?", *filter.phase);
  if (filter.priority) conditions.add("t.priority = ?", std::string(to_string(*filter.priority)));
  switch (filter.archived) {
    case ArchivedFilter::Exclude: conditions.add("t.archived = 0"); break;
    case ArchivedFilter::Only: conditions.add("t.archived = 1"); break;
    case ArchivedFilter::Include: break;
  }
}

std::string order_by(SortKey sort, bool descending) {
  const char* dir = descending ? " DESC" : "";
  std::string out = " ORDER BY ";
  // The sort key takes the direction; ties are broken in tree order, oldest first, either way.
  auto key = [&](std::string_view expression) {
    out += expression;
    out += dir;
    out += ", ";
  };
  switch (sort) {
    case SortKey::Position:
      // NULL sorts first in SQLite, so root tasks lead; the (parent, position) index serves this.
      key("t.parent");
      key("t.position");
      break;
    case SortKey::Priority:
      // By rank, not by name: ascending is low → critical. The index tasks_status_rank (schema 8)
      // holds this very expression.
      key("CASE t.priority WHEN 'critical' THEN 4 WHEN 'high' THEN 3 WHEN 'medium' THEN 2 ELSE 1 END");
      out += "t.position, ";
      break;
    case SortKey::Created: key("t.created_at"); break;
    case SortKey::Updated: key("t.updated_at"); break;
    case SortKey::Title: key("t.title COLLATE NOCASE"); break;
    case SortKey::Status:
      key("CASE t.status WHEN 'pending' THEN 0 WHEN 'active' THEN 1 WHEN 'blocked' THEN 2 "
          "WHEN 'done' THEN 3 ELSE 4 END");
      break;
    case SortKey::Id: key("t.num"); break;
  }
  out += sort == SortKey::Position ? std::string("t.num") + dir : std::string("t.num");
  return out;
}

// Column order of every session SELECT; read_session() indexes by these.
constexpr std::string_view kSessionSelect =
    "SELECT id, name, scope, agent, status, note, next_action, created_at, updated_at, ended_at, archived_at "
    "FROM sessions";

Session read_session(const Statement& stmt) {
  Session session;
  session.id = stmt.text(0);
  session.name = stmt.text(1);
  session.scope = stmt.text(2);
  session.agent = stmt.text(3);
  session.status = parse_session_status(stmt.text(4)).value_or(SessionStatus::Ended);
  session.note = stmt.text(5);
  session.next_action = stmt.text(6);
  session.created_at = stmt.integer(7);
  session.updated_at = stmt.integer(8);
  session.ended_at = column_optional_int(stmt.get(), 9);
  session.archived_at = column_optional_int(stmt.get(), 10);
  return session;
}

/// Binds ?1…?11 in the column order of kSessionSelect.
void bind_session(Statement& stmt, const Session& session) {
  stmt.bind(1, session.id).bind(2, session.name).bind(3, session.scope).bind(4, session.agent);
  stmt.bind(5, to_string(session.status)).bind(6, session.note).bind(7, session.next_action);
  stmt.bind(8, session.created_at).bind(9, session.updated_at).bind(10, session.ended_at);
  stmt.bind(11, session.archived_at);
}

std::string session_where(const SessionQuery& query, std::vector<SqlValue>& params) {
  std::string where;
  Conditions conditions{where, params};
  if (!query.statuses.empty()) {
    std::string clause = "status IN (";
    for (std::size_t i = 0; i < query.statuses.size(); ++i) {
      clause += i == 0 ? "?" : ",?";
      params.emplace_back(std::string(to_string(query.statuses[i])));
    }
    conditions.add(clause + ")");
  }
  if (query.updated_before) conditions.add("updated_at < ?", *query.updated_before);
  if (query.ended_before) conditions.add("ended_at < ?", *query.ended_before);
  if (!query.include_archived) conditions.add("archived_at IS NULL");
  return where;
}

/// WHERE clause of a compliance query (alias c); `with_passed` also applies query.passed.
std::string compliance_where(const ComplianceQuery& query, bool with_passed, std::vector<SqlValue>& params) {
  std::string where;
  Conditions conditions{where, params};
  if (query.task_id) conditions.add("c.task_id = ?", *query.task_id);
  if (query.check) conditions.add("c.check_name = ?", *query.check);
  if (query.agent) conditions.add("c.agent = ?", *query.agent);
  if (query.since) conditions.add("c.at >= ?", static_cast<std::int64_t>(*query.since));
  if (with_passed && query.passed) conditions.add("c.passed = ?", std::int64_t{*query.passed ? 1 : 0});
  return where;
}

const std::string& select_tasks() {
  static const std::string sql = "SELECT " + std::string(kTaskColumns) + " FROM tasks t";
  return sql;
}

// ---------------------------------------------------------------------------------------------

/// PRAGMA user_version of a raw connection; nullopt when it cannot be read (not a database).
std::optional<std::int64_t> read_user_version(sqlite3* db) {
  sqlite3_stmt* stmt = nullptr;
  if (sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &stmt, nullptr) != SQLITE_OK) {
    sqlite3_finalize(stmt);
    return std::nullopt;
  }
  std::optional<std::int64_t> version;
  if (sqlite3_step(stmt) == SQLITE_ROW) version = sqlite3_column_int64(stmt, 0);
  sqlite3_finalize(stmt);
  return version;
}

/// Percent-encodes a path for an SQLite URI ("file:/a%3Fb?immutable=1").
std::string uri_path(const std::filesystem::path& file) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : file.string()) {
    if (c == '%' || c == '?' || c == '#' || c < 0x20 || c >= 0x7F) {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 0xF];
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

/// The marker beside a store that failed an integrity check: writes are refused while it exists.
std::filesystem::path damaged_marker(const std::filesystem::path& file) { return file.string() + ".damaged"; }

Error damaged_store_error(const std::filesystem::path& file, std::string_view why) {
  return Error(ErrorCode::FileError, file.string() + " failed an integrity check (" + std::string(why) +
                                         "); writes are refused so that nothing more is built on it")
      .with_fix(std::string(kCorruptFix))
      .with_detail("damaged", true);
}

class SqliteStore final : public Store {
 public:
  SqliteStore(sqlite3* db, std::filesystem::path file) : db_(db), file_(std::move(file)) {}

  ~SqliteStore() override {
    if (in_transaction()) sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
    for (auto& [sql, stmt] : statements_) sqlite3_finalize(stmt);
    if (tokenizer_ != nullptr && tokenizer_api_.xDelete != nullptr) tokenizer_api_.xDelete(tokenizer_);
    sqlite3_close_v2(db_);
  }

  SqliteStore(const SqliteStore&) = delete;
  SqliteStore& operator=(const SqliteStore&) = delete;

  Result<void> configure(const SqliteOptions& options) {
    sqlite3_extended_result_codes(db_, 1);
    sqlite3_busy_timeout(db_, std::max(0, options.busy_timeout_ms));
    read_only_ = options.read_only || sqlite3_db_readonly(db_, "main") == 1;
    // Read before anything can write: a file that is not a database, an empty one or a schema
    // whose version and tables disagree is reported without touching it (reads never write).
    CT_TRY_ASSIGN(std::int64_t version, checked_version(options.create));
    const bool upgrade = options.upgrade && !read_only_;
    if (upgrade) CT_TRY(exec("PRAGMA journal_mode=WAL", "cannot open the task database"));
    CT_TRY(exec("PRAGMA foreign_keys=ON", "cannot configure the task database"));
    // Reads through a memory map skip a read() per page: large stores get much cheaper lookups.
    CT_TRY(exec("PRAGMA mmap_size=268435456", "cannot configure the task database"));
    CT_TRY(exec(options.synchronous_full ? "PRAGMA synchronous=FULL" : "PRAGMA synchronous=NORMAL",
                "cannot configure the task database"));
    remember_identity();
    if (upgrade) return migrate(options, version);
    if (version < sqlite_schema_version())
      return fail(Error(ErrorCode::FileError, file_.string() + " has schema version " + std::to_string(version) +
                                                  " and needs an upgrade, which read-only mode does not make")
                      .with_fix("run one ct command without --read-only where the store is writable"));
    return {};
  }

  // -- transactions ---------------------------------------------------------------------------

  Result<void> begin(TxKind kind) override {
    if (in_transaction()) return fail(ErrorCode::Internal, "a transaction is already open on this store");
    CT_TRY(check_identity());
    if (kind == TxKind::Write) {
      if (read_only_)
        return fail(Error(ErrorCode::FileError, file_.string() + " is open read-only (--read-only, a read-only "
                                                                 "filesystem, or no write permission); nothing was changed")
                        .with_fix("run without --read-only, on a writable copy, or as a user who may write " +
                                  file_.parent_path().string())
                        .with_detail("readOnly", true));
      std::error_code ec;
      if (std::filesystem::exists(damaged_marker(file_), ec)) return fail(damaged_store_error(file_, damage_reason()));
    }
    return run(kind == TxKind::Write ? "BEGIN IMMEDIATE" : "BEGIN DEFERRED", "cannot begin a transaction");
  }

  Result<void> commit() override {
    if (!in_transaction()) return fail(ErrorCode::Internal, "commit without an open transaction");
    auto result = run("COMMIT", "cannot commit");
    if (!result) rollback();
    return result;
  }

  void rollback() override {
    if (!in_transaction()) return;
    // ROLLBACK can only fail when there is nothing to roll back; either way the connection ends
    // up in autocommit mode.
    sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
  }

  bool in_transaction() const override { return sqlite3_get_autocommit(db_) == 0; }

  // -- tasks ----------------------------------------------------------------------------------

  Result<std::optional<Task>> get_task(std::string_view id) override {
    static const std::string sql = select_tasks() + " WHERE t.id = ?1";
    CT_TRY_ASSIGN(sqlite3_stmt* raw, prepare(sql));
    Statement stmt(raw);
    stmt.bind(1, id);
    CT_TRY_ASSIGN(bool row, step(stmt, "cannot read a task"));
    if (!row) return std::optional<Task>();
    CT_TRY_ASSIGN(Task task, read_task(raw));
    return std::optional<Task>(std::move(task));
  }

  Result<std::vector<Task>> get_tasks(const std::vector<std::string>& ids) override {
    std::vector<Task> out;
    out.reserve(ids.size());
    for (const auto& id : ids) {
      CT_TRY_ASSIGN(std::optional<Task> task, get_task(id));
      if (task) out.push_back(std::move(*task));
    }
    return out;
  }

  Result<std::vector<Task>> list_tasks(const TaskQuery& query) override {
    std::vector<SqlValue> params;
    std::string where;
    append_filter(query.filter, true, where, params);
    std::string order = order_by(query.sort, query.descending);
    if (query.limit < 0 && query.offset <= 0) return collect_tasks(select_tasks() + where + order, params, "cannot list tasks");
    // A page: sort and cut on row numbers alone, then read the full rows of the page only
    // (sorting whole rows of a large table costs far more than sorting keys).
    std::string sql = "SELECT " + std::string(kTaskColumns) + " FROM (SELECT t.num AS page_num FROM tasks t" + where +
                      order + " LIMIT ? OFFSET ?) AS page CROSS JOIN tasks t ON t.num = page.page_num" + order;
    params.emplace_back(query.limit >= 0 ? query.limit : std::int64_t{-1});
    params.emplace_back(std::max<std::int64_t>(0, query.offset));
    return collect_tasks(sql, params, "cannot list tasks");
  }

  Result<std::int64_t> count_tasks(const TaskFilter& filter) override {
    std::vector<SqlValue> params;
    std::string where;
    append_filter(filter, true, where, params);
    CT_TRY_ASSIGN(sqlite3_stmt* raw, prepare("SELECT count(*) FROM tasks t" + where));
    Statement stmt(raw);
    stmt.bind_all(params);
    CT_TRY(step(stmt, "cannot count tasks"));
    return stmt.integer(0);
  }

  Result<std::map<TaskStatus, std::int64_t>> count_by_status(const TaskFilter& filter) override {
    std::vector<SqlValue> params;
    std::string where;
    append_filter(filter, false, where, params);
    CT_TRY_ASSIGN(sqlite3_stmt* raw, prepare("SELECT t.status, count(*) FROM tasks t" + where + " GROUP BY t.status"));
    Statement stmt(raw);
    stmt.bind_all(params);
    std::map<TaskStatus, std::int64_t> counts;
    for (auto status : {TaskStatus::Pending, TaskStatus::Active, TaskStatus::Blocked, TaskStatus::Done,
                        TaskStatus::Cancelled})
      counts[status] = 0;
    CT_TRY(for_each_row(stmt, "cannot count tasks", [&] {
      if (auto status = parse_status(stmt.text(0))) counts[*status] = stmt.integer(1);
    }));
    return counts;
  }

  Result<std::string> allocate_task_id() override {
    CT_TRY_ASSIGN(sqlite3_stmt* raw,
                  prepare("UPDATE meta SET value = CAST(CAST(value AS INTEGER) + 1 AS TEXT) "
                          "WHERE key = 'next_task_num' RETURNING CAST(value AS INTEGER) - 1"));
    Statement stmt(raw);
    CT_TRY_ASSIGN(bool row, step(stmt, "cannot allocate a task id"));
    if (!row) return fail(ErrorCode::Internal, "the task id counter is missing from the database");
    std::int64_t number = stmt.integer(0);
    CT_TRY(finish(stmt, "cannot allocate a task id"));
    return format_task_id(number);
  }

  Result<void> insert_task(const Task& task) override {
    auto number = parse_task_id(task.id);
    if (!number) return fail(ErrorCode::InvalidInput, "'" + task.id + "' is not a task id (T followed by digits)");
    return atomically([&]() -> Result<void> {
      static const std::string sql =
          "INSERT INTO tasks(num, id, title, description, status, priority, type, parent, position, "
          "depends, labels, acceptance, files, notes, relates, phase, size, blocked_by, created_at, "
          "updated_at, completed_at, cancelled_at, cancellation_reason, archived, archived_at, "
          "archive_reason, version) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, "
          "?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21, ?22, ?23, ?24, ?25, ?26, ?27)";
      CT_TRY_ASSIGN(sqlite3_stmt* raw, prepare(sql));
      {
        Statement stmt(raw);
        stmt.bind(1, *number).bind(2, task.id);
        bind_task_fields(stmt, task, 3);
        stmt.bind(27, task.version);
        int rc = sqlite3_step(raw);
        if ((rc & 0xff) == SQLITE_CONSTRAINT) {
          return fail(Error(ErrorCode::IdCollision, "task " + task.id + " already exists")
                          .with_fix("allocate a new id and retry"));
        }
        if (rc != SQLITE_DONE) return fail(error(rc, "cannot insert task " + task.id));
      }
      CT_TRY(write_edges(task, false));
      CT_TRY(write_index(*number, task, false));
      // Keep the counter ahead of every id ever stored (imports bring their own ids).
      CT_TRY_ASSIGN(sqlite3_stmt* bump,
                    prepare("UPDATE meta SET value = CAST(?1 + 1 AS TEXT) "
                            "WHERE key = 'next_task_num' AND CAST(value AS INTEGER) <= ?1"));
      Statement counter(bump);
      counter.bind(1, *number);
      return finish(counter, "cannot update the task id counter");
    });
  }

  Result<void> update_task(const Task& task) override {
    return atomically([&]() -> Result<void> {
      CT_TRY_ASSIGN(sqlite3_stmt* current_raw,
                    prepare("SELECT num, title, description, labels, notes, depends FROM tasks WHERE id = ?1"));
      std::int64_t number = 0;
      bool same_text = false;
      bool same_edges = false;
      {
        Statement current(current_raw);
        current.bind(1, task.id);
        CT_TRY_ASSIGN(bool row, step(current, "cannot read task " + task.id));
        if (!row) {
          return fail(Error(ErrorCode::NotFound, "Task " + task.id + " not found")
                          .with_fix("cleo_query {domain:'tasks', operation:'find', params:{query:'" + task.id + "'}}"));
        }
        number = current.integer(0);
        same_text = current.text(1) == task.title && current.text(2) == task.description &&
                    current.text(3) == encode_strings(task.labels) && current.text(4) == encode_notes(task.notes);
        same_edges = current.text(5) == encode_strings(task.depends);
      }
      static const std::string sql =
          "UPDATE tasks SET title = ?3, description = ?4, status = ?5, priority = ?6, type = ?7, "
          "parent = ?8, position = ?9, depends = ?10, labels = ?11, acceptance = ?12, files = ?13, "
          "notes = ?14, relates = ?15, phase = ?16, size = ?17, blocked_by = ?18, created_at = ?19, "
          "updated_at = ?20, completed_at = ?21, cancelled_at = ?22, cancellation_reason = ?23, "
          "archived = ?24, archived_at = ?25, archive_reason = ?26, "
          "version = ?27 WHERE num = ?1";
      CT_TRY_ASSIGN(sqlite3_stmt* raw, prepare(sql));
      {
        Statement stmt(raw);
        stmt.bind(1, number);
        bind_task_fields(stmt, task, 3);
        stmt.bind(27, task.version);
        CT_TRY(finish(stmt, "cannot update task " + task.id));
      }
      if (!same_edges) CT_TRY(write_edges(task, true));
      if (!same_text) CT_TRY(write_index(number, task, true));
      return {};
    });
  }

  Result<void> delete_task(std::string_view id) override {
    return atomically([&]() -> Result<void> {
      CT_TRY_ASSIGN(sqlite3_stmt* raw, prepare("DELETE FROM tasks WHERE id = ?1 RETURNING num"));
      std::int64_t number = 0;
      {
        Statement stmt(raw);
        stmt.bind(1, id);
        CT_TRY_ASSIGN(bool row, step(stmt, "cannot delete task " + std::string(id)));
        if (!row) return fail(ErrorCode::NotFound, "Task " + std::string(id) + " not found");
        number = stmt.integer(0);
        CT_TRY(finish(stmt, "cannot delete task " + std::string(id)));
      }
      CT_TRY_ASSIGN(sqlite3_stmt* edges_raw,
                    prepare("DELETE FROM task_deps WHERE task_id = ?1 OR depends_on = ?1"));
      {
        Statement edges(edges_raw);
        edges.bind(1, id);
        CT_TRY(finish(edges, "cannot delete dependency edges"));
      }
      CT_TRY_ASSIGN(sqlite3_stmt* index_raw, prepare("DELETE FROM tasks_fts WHERE rowid = ?1"));
      {
        Statement index(index_raw);
        index.bind(1, number);
        CT_TRY(finish(index, "cannot update the search index"));
      }
      for (const char* sql : {"DELETE FROM research_links WHERE task_id = ?1", "DELETE FROM lifecycle WHERE subject = ?1",
                              "DELETE FROM lifecycle_events WHERE subject = ?1"}) {
        CT_TRY_ASSIGN(sqlite3_stmt* raw_rows, prepare(sql));
        Statement rows(raw_rows);
        rows.bind(1, id);
        CT_TRY(finish(rows, "cannot delete the records of task " + std::string(id)));
      }
      return {};
    });
  }

  Result<std::vector<std::string>> children_of(std::string_view id, bool include_archived) override {
    CT_TRY_ASSIGN(sqlite3_stmt* raw,
                  prepare(include_archived
                              ? "SELECT id FROM tasks WHERE parent = ?1 ORDER BY position, num"
                              : "SELECT id FROM tasks WHERE parent = ?1 AND archived = 0 ORDER BY position, num"));
    Statement stmt(raw);
    stmt.bind(1, id);
    return collect_strings(stmt, "cannot list children");
  }

  Result<std::vector<std::string>> dependents_of(std::string_view id) override {
    CT_TRY_ASSIGN(sqlite3_stmt* raw,
                  prepare("SELECT d.task_id FROM task_deps d LEFT JOIN tasks t ON t.id = d.task_id "
                          "WHERE d.depends_on = ?1 ORDER BY t.num"));
    Statement stmt(raw);
    stmt.bind(1, id);
    return collect_strings(stmt, "cannot list dependents");
  }

  Result<std::int64_t> max_position(std::string_view parent) override {
    CT_TRY_ASSIGN(sqlite3_stmt* raw,
                  prepare(parent.empty() ? "SELECT coalesce(max(position), 0) FROM tasks WHERE parent IS NULL"
                                         : "SELECT coalesce(max(position), 0) FROM tasks WHERE parent = ?1"));
    Statement stmt(raw);
    if (!parent.empty()) stmt.bind(1, parent);
    CT_TRY(step(stmt, "cannot read positions"));
    return stmt.integer(0);
  }

  Result<std::vector<ReadyCandidate>> top_ready(const ReadyScoring& scoring) override {
    // The score takes few values (4 priorities × in phase or not × leaf or not), so walk the
    // groups from the best score down; each group is read in (position, created_at) order from
    // tasks_status_priority and stops after `limit` rows. Cost follows the rows returned (plus
    // the candidates a group skips because their dependencies are unfinished), not the store.
    struct Group {
      int score;
      int priority;
      int in_phase;  // 1, 0, or -1 = either (no phase bonus in play)
      int leaf;      // 1, 0, or -1 = either (no leaf bonus in play)
    };
    static constexpr std::array<std::string_view, 4> kPriorities = {"critical", "high", "medium", "low"};
    bool phase_matters = !scoring.phase.empty() && scoring.phase_bonus != 0;
    bool leaf_matters = scoring.leaf_bonus != 0;
    std::vector<Group> groups;
    for (int p = 0; p < 4; ++p)
      for (int in_phase : phase_matters ? std::vector<int>{1, 0} : std::vector<int>{-1})
        for (int leaf : leaf_matters ? std::vector<int>{1, 0} : std::vector<int>{-1})
          groups.push_back({scoring.priority_points[static_cast<std::size_t>(p)] +
                                (in_phase == 1 ? scoring.phase_bonus : 0) + (leaf == 1 ? scoring.leaf_bonus : 0),
                            p, in_phase, leaf});
    std::stable_sort(groups.begin(), groups.end(), [](const Group& a, const Group& b) { return a.score > b.score; });

    const std::string open_children(kOpenChildren);
    CT_TRY_ASSIGN(sqlite3_stmt* raw,
                  prepare("SELECT t.id, t.position, t.created_at, t.num FROM tasks t"
                          " WHERE t.status = 'pending' AND t.archived = 0 AND t.priority = ?1"
                          " AND (?2 < 0 OR (t.phase = ?3) = ?2)"
                          " AND (?4 < 0 OR NOT " + open_children + " = ?4)"
                          " AND NOT EXISTS (SELECT 1 FROM task_deps d JOIN tasks u ON u.id = d.depends_on"
                          "   WHERE d.task_id = t.id AND u.status NOT IN ('done', 'cancelled'))"
                          // tasks.start would refuse a task another caller holds.
                          " AND NOT EXISTS (SELECT 1 FROM focus f WHERE f.task_id = t.id)"
                          // An epic's work is its children: it is next only once they are finished.
                          " AND NOT (t.type = 'epic' AND " + open_children + ")"
                          " ORDER BY t.position, t.created_at, t.num LIMIT ?5"));
    struct Row {
      ReadyCandidate candidate;
      std::int64_t position, created_at, num;
    };
    std::vector<ReadyCandidate> out;
    for (std::size_t g = 0; g < groups.size() && static_cast<std::int64_t>(out.size()) < scoring.limit;) {
      // Groups with equal scores are merged by position, then age.
      std::vector<Row> level;
      std::size_t next = g;
      std::int64_t wanted = scoring.limit - static_cast<std::int64_t>(out.size());
      for (; next < groups.size() && groups[next].score == groups[g].score; ++next) {
        const Group& group = groups[next];
        Statement stmt(raw);
        stmt.bind(1, kPriorities[static_cast<std::size_t>(group.priority)]);
        stmt.bind(2, static_cast<std::int64_t>(group.in_phase));
        stmt.bind(3, scoring.phase);
        stmt.bind(4, static_cast<std::int64_t>(group.leaf));
        // Within a scope the rows outside it are skipped here, so the group is read to its end
        // (ids only; the scope is a set of live ids, not expressible as an index range).
        stmt.bind(5, scoring.within ? std::int64_t{-1} : wanted);
        std::int64_t kept = 0;
        CT_TRY(for_each_row(stmt, "cannot list ready tasks", [&] {
          if (kept >= wanted) return;
          std::string id(stmt.text(0));
          if (scoring.within && !scoring.within->contains(id)) return;
          ++kept;
          level.push_back({{std::move(id), group.score, group.leaf == 1, group.in_phase == 1},
                           stmt.integer(1), stmt.integer(2), stmt.integer(3)});
        }));
      }
      std::sort(level.begin(), level.end(), [](const Row& a, const Row& b) {
        if (a.position != b.position) return a.position < b.position;
        if (a.created_at != b.created_at) return a.created_at < b.created_at;
        return a.num < b.num;
      });
      for (auto& row : level) {
        if (static_cast<std::int64_t>(out.size()) >= scoring.limit) break;
        out.push_back(std::move(row.candidate));
      }
      g = next;
    }
    return out;
  }

  Result<std::vector<GraphTask>> graph_tasks(std::string_view root) override {
    // The subtree through the parent index (a recursive walk), or every unarchived task.
    CT_TRY_ASSIGN(sqlite3_stmt* raw,
                  prepare(root.empty()
                              ? "SELECT t.id, t.title, t.parent, t.status, t.priority, t.type, t.position, t.created_at,"
                                " t.updated_at, t.depends, t.labels, t.files FROM tasks t WHERE t.archived = 0"
                                " ORDER BY t.parent, t.position, t.num"
                              : "WITH RECURSIVE sub(id) AS (SELECT id FROM tasks WHERE parent = ?1 AND archived = 0"
                                "  UNION ALL SELECT c.id FROM tasks c JOIN sub ON c.parent = sub.id WHERE c.archived = 0)"
                                " SELECT t.id, t.title, t.parent, t.status, t.priority, t.type, t.position, t.created_at,"
                                " t.updated_at, t.depends, t.labels, t.files FROM sub JOIN tasks t ON t.id = sub.id"
                                " ORDER BY t.parent, t.position, t.num"));
    Statement stmt(raw);
    if (!root.empty()) stmt.bind(1, root);
    std::vector<GraphTask> out;
    Result<void> decoded;
    CT_TRY(for_each_row(stmt, "cannot read the task graph", [&] {
      if (!decoded) return;
      GraphTask task;
      task.id = stmt.text(0);
      task.title = stmt.text(1);
      task.parent = stmt.text(2);
      auto status = parse_status(stmt.text(3));
      auto priority = parse_priority(stmt.text(4));
      auto type = parse_type(stmt.text(5));
      if (!status || !priority || !type) {
        decoded = fail(corrupt_column(task.id, !status ? "status" : !priority ? "priority" : "type"));
        return;
      }
      task.status = *status;
      task.priority = *priority;
      task.type = *type;
      task.position = stmt.integer(6);
      task.created_at = stmt.integer(7);
      task.updated_at = stmt.integer(8);
      for (auto [column, target, field] : {std::tuple{9, &task.depends, "depends"}, std::tuple{10, &task.labels, "labels"},
                                            std::tuple{11, &task.files, "files"}}) {
        std::string_view text = stmt.text(column);
        if (text == "[]") continue;
        auto values = decode_strings(text, task.id, field);
        if (!values) {
          decoded = fail(std::move(values).error());
          return;
        }
        *target = std::move(*values);
      }
      out.push_back(std::move(task));
    }));
    CT_TRY(decoded);
    return out;
  }

  Result<std::vector<SearchHit>> search(std::string_view text, const TaskFilter& filter,
                                        std::int64_t limit) override {
    std::vector<SearchHit> hits;
    if (limit == 0) return hits;
    std::vector<std::string> tokens = tokenize(text);
    if (tokens.empty()) return hits;

    // An exact id goes first.
    CT_TRY_ASSIGN(std::optional<Task> exact, exact_id_match(text, filter));
    std::vector<SqlValue> params{match_expression(tokens)};
    std::string where;
    append_filter(filter, true, where, params);
    // Rank and cut on row numbers first; read full rows for the hits only.
    std::string inner = "SELECT tasks_fts.rowid AS hit_num, bm25(tasks_fts, 10.0, 3.0, 5.0, 1.0) AS rank_value "
                        "FROM tasks_fts";
    if (where.empty()) {
      inner += " WHERE tasks_fts MATCH ?";
    } else {
      // CROSS JOIN keeps the index outermost: with the filter outside, SQLite may walk the
      // filter's index and run the whole match once per task (1.8 s instead of 5 ms at 10k).
      inner += " CROSS JOIN tasks t ON t.num = tasks_fts.rowid WHERE tasks_fts MATCH ? AND " +
               where.substr(std::string_view(" WHERE ").size());
    }
    inner += " ORDER BY rank_value, hit_num";
    if (limit > 0) {
      inner += " LIMIT ?";
      // One extra row in case the exact id match is among them.
      params.emplace_back(limit + (exact ? 1 : 0));
    }
    std::string sql = "SELECT " + std::string(kTaskColumns) + ", hits.rank_value FROM (" + inner +
                      ") AS hits CROSS JOIN tasks t ON t.num = hits.hit_num ORDER BY hits.rank_value, t.num";
    CT_TRY_ASSIGN(sqlite3_stmt* raw, prepare(sql));
    Statement stmt(raw);
    stmt.bind_all(params);
    CT_TRY(for_each_row(stmt, "cannot search", [&]() -> Result<void> {
      if (exact && stmt.text(kId) == exact->id) return {};
      CT_TRY_ASSIGN(Task task, read_task(raw));
      hits.push_back(SearchHit{std::move(task), -stmt.real(kTaskColumnCount)});
      return {};
    }));
    if (exact) {
      double top = hits.empty() ? 1.0 : std::max(1.0, hits.front().score + 1.0);
      hits.insert(hits.begin(), SearchHit{std::move(*exact), top});
    }
    if (limit > 0 && std::ssize(hits) > limit) hits.resize(static_cast<std::size_t>(limit));
    return hits;
  }

  Result<std::int64_t> count_matches(std::string_view text, const TaskFilter& filter) override {
    std::vector<std::string> tokens = tokenize(text);
    if (tokens.empty()) return 0;
    std::vector<SqlValue> params{match_expression(tokens)};
    std::string where;
    append_filter(filter, true, where, params);
    std::string sql = "SELECT count(*) FROM tasks_fts";
    if (where.empty()) {
      sql += " WHERE tasks_fts MATCH ?";
    } else {
      sql += " CROSS JOIN tasks t ON t.num = tasks_fts.rowid WHERE tasks_fts MATCH ? AND " +  // as in search()
             where.substr(std::string_view(" WHERE ").size());
    }
    CT_TRY_ASSIGN(sqlite3_stmt* raw, prepare(sql));
    std::int64_t count = 0;
    {
      Statement stmt(raw);
      stmt.bind_all(params);
      CT_TRY(step(stmt, "cannot count search results"));
      count = stmt.integer(0);
    }
    // An exact id that the words do not match is one more result.
    CT_TRY_ASSIGN(std::optional<Task> exact, exact_id_match(text, filter));
    if (exact) {
      CT_TRY_ASSIGN(sqlite3_stmt* one, prepare("SELECT count(*) FROM tasks_fts WHERE tasks_fts MATCH ?1 AND rowid = "
                                               "(SELECT num FROM tasks WHERE id = ?2)"));
      Statement stmt(one);
      stmt.bind(1, std::get<std::string>(params.front())).bind(2, exact->id);
      CT_TRY(step(stmt, "cannot count search results"));
      if (stmt.integer(0) == 0) ++count;
    }
    return count;
  }

  // -- focus ----------------------------------------------------------------------------------

  Result<std::optional<std::string>> get_focus(std::string_view session) override {
    CT_TRY_ASSIGN(sqlite3_stmt* raw, prepare("SELECT task_id FROM focus WHERE session = ?1"));
    Statement stmt(raw);
    stmt.bind(1, session);
    CT_TRY_ASSIGN(bool row, step(stmt, "cannot read focus"));
    if (!row) return std::optional<std::string>();
    return std::optional<std::string>(std::string(stmt.text(0)));
  }

  Result<void> set_focus(std::string_view session, std::optional<std::string> task_id) override {
    if (!task_id) {
      CT_TRY_ASSIGN(sqlite3_stmt* raw, prepare("DELETE FROM focus WHERE session = ?1"));
      Statement stmt(raw);
      stmt.bind(1, session);
      return finish(stmt, "cannot clear focus");
    }
    CT_TRY_ASSIGN(sqlite3_stmt* raw,
                  prepare("INSERT INTO focus(session, task_id) VALUES(?1, ?2) "
                          "ON CONFLICT(session) DO UPDATE SET task_id = excluded.task_id"));
    Statement stmt(raw);
    stmt.bind(1, session).bind(2, *task_id);
    return finish(stmt, "cannot set focus");
  }

  Result<std::optional<std::string>> focus_holder(std::string_view task_id) override {
    CT_TRY_ASSIGN(sqlite3_stmt* raw, prepare("SELECT session FROM focus WHERE task_id = ?1"));
    Statement stmt(raw);
    stmt.bind(1, task_id);
    CT_TRY_ASSIGN(bool row, step(stmt, "cannot read focus"));
    if (!row) return std::optional<std::string>();
    return std::optional<std::string>(std::string(stmt.text(0)));
  }

  // -- sessions -------------------------------------------------------------------------------

  Result<void> insert_session(const Session& session) override {
    CT_TRY_ASSIGN(sqlite3_stmt* raw,
                  prepare("INSERT INTO sessions(id, name, scope, agent, status, note, next_action, created_at, "
                          "updated_at, ended_at, archived_at) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)"));
    Statement stmt(raw);
    bind_session(stmt, session);
    return finish(stmt, "cannot save the session");
  }

  Result<void> update_session(const Session& session) override {
    CT_TRY_ASSIGN(sqlite3_stmt* raw,
                  prepare("UPDATE sessions SET name = ?2, scope = ?3, agent = ?4, status = ?5, note = ?6, "
                          "next_action = ?7, created_at = ?8, updated_at = ?9, ended_at = ?10, archived_at = ?11 "
                          "WHERE id = ?1"));
    Statement stmt(raw);
    bind_session(stmt, session);
    return finish(stmt, "cannot save the session");
  }

  Result<std::optional<Session>> get_session(std::string_view id) override {
    CT_TRY_ASSIGN(sqlite3_stmt* raw, prepare(std::string(kSessionSelect) + " WHERE id = ?1"));
    Statement stmt(raw);
    stmt.bind(1, id);
    CT_TRY_ASSIGN(bool row, step(stmt, "cannot read the session"));
    if (!row) return std::optional<Session>();
    return std::optional<Session>(read_session(stmt));
  }

  Result<std::vector<Session>> list_sessions(const SessionQuery& query) override {
    std::vector<SqlValue> params;
    std::string sql = std::string(kSessionSelect) + session_where(query, params) +
                      " ORDER BY updated_at DESC, created_at DESC, id LIMIT ? OFFSET ?";
    params.emplace_back(query.limit);
    params.emplace_back(query.offset);
    CT_TRY_ASSIGN(sqlite3_stmt* raw, prepare(sql));
    Statement stmt(raw);
    stmt.bind_all(params);
    std::vector<Session> out;
    CT_TRY(for_each_row(stmt, "cannot list sessions", [&] { out.push_back(read_session(stmt)); }));
    return out;
  }

  Result<std::int64_t> count_sessions(const SessionQuery& query) override {
    std::vector<SqlValue> params;
    CT_TRY_ASSIGN(sqlite3_stmt* raw, prepare("SELECT count(*) FROM sessions" + session_where(query, params)));
    Statement stmt(raw);
    stmt.bind_all(params);
    CT_TRY_ASSIGN(bool row, step(stmt, "cannot count sessions"));
    return row ? stmt.integer(0) : 0;
  }

  // -- audit ----------------------------------------------------------------------------------

  Result<std::int64_t> append_audit(const AuditEntry& entry) override {
    std::int64_t seq = 0;
    auto result = atomically([&]() -> Result<void> {
      // Writers are serialised by the write transaction, so the last row is stable here.
      std::string previous;
      {
        CT_TRY_ASSIGN(sqlite3_stmt* raw, prepare("SELECT seq, hash FROM audit ORDER BY seq DESC LIMIT 1"));
        Statement stmt(raw);
        CT_TRY_ASSIGN(bool row, step(stmt, "cannot read the audit trail"));
        if (row) {
          seq = stmt.integer(0);
          previous = stmt.text(1);
        }
      }
      if (seq == 0) {
        // A compacted trail continues from its anchor (system.gc).
        CT_TRY_ASSIGN(std::optional<AuditAnchor> anchor, audit_anchor());
        if (anchor) {
          seq = anchor->seq;
          previous = anchor->hash;
        }
      }
      AuditEntry stored = entry;
      stored.seq = ++seq;
      if (stored.params.is_null()) stored.params = json::Value::object();
      std::string hash = audit_hash(previous, stored);
      CT_TRY_ASSIGN(sqlite3_stmt* raw,
                    prepare("INSERT INTO audit(seq, at, session, agent, operation, task_id, params, outcome, reason, "
                            "hash) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)"));
      {
        Statement stmt(raw);
        stmt.bind(1, seq).bind(2, static_cast<std::int64_t>(stored.at)).bind(3, stored.session);
        stmt.bind(4, stored.agent).bind(5, stored.operation).bind(6, stored.task_id);
        stmt.bind(7, stored.params.dump()).bind(8, stored.outcome).bind(9, stored.reason).bind(10, hash);
        CT_TRY(finish(stmt, "cannot append to the audit trail"));
      }
      if (entry.changes.empty()) return {};
      CT_TRY_ASSIGN(sqlite3_stmt* change_raw,
                    prepare("INSERT INTO audit_changes(seq, task_id, field, before, after) VALUES(?1, ?2, ?3, ?4, ?5)"));
      for (const auto& change : entry.changes) {
        Statement stmt(change_raw);
        stmt.bind(1, seq).bind(2, change.task_id).bind(3, change.field);
        if (change.before.is_null()) stmt.bind_null(4); else stmt.bind(4, change.before.dump());
        if (change.after.is_null()) stmt.bind_null(5); else stmt.bind(5, change.after.dump());
        CT_TRY(finish(stmt, "cannot append to the audit trail"));
      }
      return {};
    });
    if (!result) return std::unexpected(std::move(result.error()));
    return seq;
  }

  Result<std::vector<AuditEntry>> read_audit(const AuditQuery& query) override {
    std::string sql = "SELECT seq, at, session, agent, operation, task_id, params, outcome, reason, hash FROM audit";
    std::string changes_sql = "SELECT task_id, field, before, after FROM audit_changes WHERE seq = ?1";
    std::vector<SqlValue> params;
    std::vector<SqlValue> change_params;
    if (query.task_id && query.field) {
      sql += " WHERE seq IN (SELECT seq FROM audit_changes WHERE task_id = ? AND field = ?)";
      params = {*query.task_id, *query.field};
      changes_sql += " AND task_id = ?2 AND field = ?3";
      change_params = {*query.task_id, *query.field};
    } else if (query.task_id) {
      sql += " WHERE seq IN (SELECT seq FROM audit_changes WHERE task_id = ?1 "
             "UNION SELECT seq FROM audit WHERE task_id = ?1)";
      params = {*query.task_id};
      changes_sql += " AND task_id = ?2";
      change_params = {*query.task_id};
    } else if (query.field) {
      sql += " WHERE seq IN (SELECT seq FROM audit_changes WHERE field = ?)";
      params = {*query.field};
      changes_sql += " AND field = ?2";
      change_params = {*query.field};
    }
    // Further filters are ANDed; their placeholders follow the ones above.
    std::string where = params.empty() ? " WHERE " : " AND ";
    auto add_filter = [&](std::string_view condition, SqlValue value) {
      params.push_back(std::move(value));
      sql += where;
      sql += condition;
      sql += "?" + std::to_string(params.size());
      where = " AND ";
    };
    if (query.operation) add_filter("operation = ", *query.operation);
    if (query.session) add_filter("session = ", *query.session);
    if (query.agent) add_filter("agent = ", *query.agent);
    if (query.since) add_filter("at >= ", static_cast<std::int64_t>(*query.since));
    if (query.after_seq) add_filter("seq > ", *query.after_seq);
    changes_sql += " ORDER BY rowid";
    sql += query.ascending ? " ORDER BY seq" : " ORDER BY seq DESC";
    if (query.limit >= 0 || query.offset > 0) {
      // Numbered after the filter parameters: ?N picks the next free index.
      int next = static_cast<int>(params.size()) + 1;
      sql += " LIMIT ?" + std::to_string(next) + " OFFSET ?" + std::to_string(next + 1);
      params.emplace_back(query.limit >= 0 ? query.limit : std::int64_t{-1});
      params.emplace_back(std::max<std::int64_t>(0, query.offset));
    }

    std::vector<AuditEntry> entries;
    {
      CT_TRY_ASSIGN(sqlite3_stmt* raw, prepare(sql));
      Statement stmt(raw);
      stmt.bind_all(params);
      CT_TRY(for_each_row(stmt, "cannot read the audit trail", [&] {
        AuditEntry entry;
        entry.seq = stmt.integer(0);
        entry.at = stmt.integer(1);
        entry.session = stmt.text(2);
        entry.agent = stmt.text(3);
        entry.operation = stmt.text(4);
        entry.task_id = stmt.text(5);
        auto parsed = json::parse(stmt.text(6));
        entry.params = parsed && parsed->is_object() ? std::move(*parsed) : json::Value::object();
        entry.outcome = stmt.text(7);
        entry.reason = stmt.text(8);
        entry.hash = stmt.text(9);
        entries.push_back(std::move(entry));
      }));
    }
    CT_TRY_ASSIGN(sqlite3_stmt* change_raw, prepare(changes_sql));
    for (auto& entry : entries) {
      Statement stmt(change_raw);
      stmt.bind(1, entry.seq);
      stmt.bind_all(change_params, 2);
      CT_TRY(for_each_row(stmt, "cannot read the audit trail", [&] {
        FieldChange change;
        change.task_id = stmt.text(0);
        change.field = stmt.text(1);
        change.before = stmt.is_null(2) ? json::Value() : decode_json(stmt.text(2));
        change.after = stmt.is_null(3) ? json::Value() : decode_json(stmt.text(3));
        entry.changes.push_back(std::move(change));
      }));
    }
    return entries;
  }

  Result<std::optional<IdempotentCall>> find_idempotent(std::string_view key) override {
    CT_TRY_ASSIGN(sqlite3_stmt* raw, prepare("SELECT operation, params, reply, at FROM idempotency WHERE key = ?1"));
    Statement stmt(raw);
    stmt.bind(1, key);
    CT_TRY_ASSIGN(bool row, step(stmt, "cannot read idempotency keys"));
    if (!row) return std::optional<IdempotentCall>();
    return std::optional<IdempotentCall>(IdempotentCall{std::string(key), std::string(stmt.text(0)),
                                                        std::string(stmt.text(1)), std::string(stmt.text(2)),
                                                        stmt.integer(3)});
  }

  Result<void> remember_idempotent(const IdempotentCall& call, TimeMs forget_before) override {
    return atomically([&]() -> Result<void> {
      {
        CT_TRY_ASSIGN(sqlite3_stmt* raw, prepare("DELETE FROM idempotency WHERE at < ?1"));
        Statement stmt(raw);
        stmt.bind(1, static_cast<std::int64_t>(forget_before));
        CT_TRY(finish(stmt, "cannot expire idempotency keys"));
      }
      CT_TRY_ASSIGN(sqlite3_stmt* raw, prepare("INSERT OR REPLACE INTO idempotency(key, operation, params, reply, at) "
                                               "VALUES(?1, ?2, ?3, ?4, ?5)"));
      Statement stmt(raw);
      stmt.bind(1, call.key).bind(2, call.operation).bind(3, call.params).bind(4, call.reply);
      stmt.bind(5, static_cast<std::int64_t>(call.at));
      return finish(stmt, "cannot record the idempotency key");
    });
  }

  Result<std::int64_t> schema_version() override { return user_version(); }
  // PRAGMA data_version: changes when another connection commits; reads the WAL index only.
  Result<std::int64_t> change_stamp() override {
    CT_TRY_ASSIGN(sqlite3_stmt* raw, prepare("PRAGMA data_version"));
    Statement stmt(raw);
    CT_TRY_ASSIGN(bool row, step(stmt, "cannot read the database's change counter"));
    if (!row) return fail(ErrorCode::Internal, "PRAGMA data_version returned no row");
    return stmt.integer(0);
  }

  // -- compliance -----------------------------------------------------------------------------

  Result<std::int64_t> insert_compliance(const ComplianceRecord& record) override {
    CT_TRY_ASSIGN(sqlite3_stmt* raw,
                  prepare("INSERT INTO compliance(at, task_id, check_name, passed, score, details, session, agent) "
                          "VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8) RETURNING id"));
    Statement stmt(raw);
    stmt.bind(1, static_cast<std::int64_t>(record.at)).bind(2, record.task_id).bind(3, record.check);
    stmt.bind(4, std::int64_t{record.passed ? 1 : 0}).bind(5, record.score).bind(6, record.details);
    stmt.bind(7, record.session).bind(8, record.agent);
    CT_TRY_ASSIGN(bool row, step(stmt, "cannot record the compliance result"));
    if (!row) return fail(ErrorCode::Internal, "INSERT … RETURNING gave no row");
    std::int64_t id = stmt.integer(0);
    CT_TRY(finish(stmt, "cannot record the compliance result"));
    return id;
  }

  Result<std::vector<ComplianceSummary>> compliance_summary(const ComplianceQuery& query) override {
    std::vector<SqlValue> params;
    std::string where = compliance_where(query, false, params);
    const char* keys = query.group == ComplianceGroup::Check   ? "c.check_name, ''"
                       : query.group == ComplianceGroup::Agent ? "'', c.agent"
                                                               : "c.check_name, c.agent";
    const char* by = query.group == ComplianceGroup::Check   ? "c.check_name"
                     : query.group == ComplianceGroup::Agent ? "c.agent"
                                                             : "c.check_name, c.agent";
    // With max() the only min/max aggregate, SQLite takes the bare columns c.at and c.passed from
    // the row holding max(c.id): the group's latest result.
    std::string sql = std::string("SELECT ") + keys + ", count(*), sum(c.passed), avg(c.score), c.at, c.passed, " +
                      "max(c.id) FROM compliance c" + where + " GROUP BY " + by + " ORDER BY " + by;
    CT_TRY_ASSIGN(sqlite3_stmt* raw, prepare(sql));
    Statement stmt(raw);
    stmt.bind_all(params);
    std::vector<ComplianceSummary> out;
    CT_TRY(for_each_row(stmt, "cannot summarise compliance results", [&] {
      ComplianceSummary summary;
      summary.check = stmt.text(0);
      summary.agent = stmt.text(1);
      summary.runs = stmt.integer(2);
      summary.passed = stmt.integer(3);
      if (!stmt.is_null(4)) summary.average_score = stmt.real(4);
      summary.last_at = stmt.integer(5);
      summary.last_passed = stmt.integer(6) != 0;
      out.push_back(std::move(summary));
    }));
    return out;
  }

  Result<std::vector<ComplianceRecord>> list_compliance(const ComplianceQuery& query) override {
    std::vector<SqlValue> params;
    std::string sql = "SELECT c.id, c.at, c.task_id, c.check_name, c.passed, c.score, c.details, c.session, c.agent "
                      "FROM compliance c" + compliance_where(query, true, params) + " ORDER BY c.id DESC LIMIT ?";
    params.emplace_back(query.limit);
    CT_TRY_ASSIGN(sqlite3_stmt* raw, prepare(sql));
    Statement stmt(raw);
    stmt.bind_all(params);
    std::vector<ComplianceRecord> out;
    CT_TRY(for_each_row(stmt, "cannot read compliance results", [&] {
      ComplianceRecord record;
      record.id = stmt.integer(0);
      record.at = stmt.integer(1);
      record.task_id = stmt.text(2);
      record.check = stmt.text(3);
      record.passed = stmt.integer(4) != 0;
      record.score = column_optional_int(raw, 5);
      record.details = stmt.text(6);
      record.session = stmt.text(7);
      record.agent = stmt.text(8);
      out.push_back(std::move(record));
    }));
    return out;
  }

  // -- releases -------------------------------------------------------------------------------

  static constexpr std::string_view kReleaseSelect =
      "SELECT version, status, tasks, notes, created_at, updated_at, released_at, tag, commit_sha, pushed, remote "
      "FROM releases";

  Result<Release> read_release(Statement& stmt, sqlite3_stmt* raw) {
    Release release;
    release.version = stmt.text(0);
    auto status = parse_release_status(stmt.text(1));
    if (!status)
      return fail(Error(ErrorCode::FileError, "release " + release.version + " has an unknown status '" +
                                                  std::string(stmt.text(1)) + "'")
                      .with_fix(std::string(kCorruptFix)));
    release.status = *status;
    CT_TRY_ASSIGN(release.tasks, decode_strings(stmt.text(2), release.version, "tasks"));
    release.notes = stmt.text(3);
    release.created_at = stmt.integer(4);
    release.updated_at = stmt.integer(5);
    release.released_at = column_optional_int(raw, 6);
    release.tag = stmt.text(7);
    release.commit = stmt.text(8);
    release.pushed = stmt.integer(9) != 0;
    release.remote = stmt.text(10);
    return release;
  }

  Result<std::optional<Release>> get_release(std::string_view version) override {
    CT_TRY_ASSIGN(sqlite3_stmt* raw, prepare(std::string(kReleaseSelect) + " WHERE version = ?1"));
    Statement stmt(raw);
    stmt.bind(1, version);
    CT_TRY_ASSIGN(bool row, step(stmt, "cannot read the release"));
    if (!row) return std::optional<Release>();
    CT_TRY_ASSIGN(Release release, read_release(stmt, raw));
    return std::optional<Release>(std::move(release));
  }

  Result<std::vector<Release>> list_releases() override {
    CT_TRY_ASSIGN(sqlite3_stmt* raw, prepare(std::string(kReleaseSelect) + " ORDER BY created_at DESC, version DESC"));
    Statement stmt(raw);
    std::vector<Release> out;
    std::optional<Error> bad;
    CT_TRY(for_each_row(stmt, "cannot list releases", [&] {
      auto release = read_release(stmt, raw);
      if (release) out.push_back(std::move(*release));
      else if (!bad) bad = std::move(release.error());
    }));
    if (bad) return fail(std::move(*bad));
    return out;
  }

  Result<void> put_release(const Release& release) override {
    CT_TRY_ASSIGN(sqlite3_stmt* raw,
                  prepare("INSERT OR REPLACE INTO releases(version, status, tasks, notes, created_at, updated_at, "
                          "released_at, tag, commit_sha, pushed, remote) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)"));
    Statement stmt(raw);
    stmt.bind(1, release.version).bind(2, std::string(to_string(release.status))).bind(3, encode_strings(release.tasks));
    stmt.bind(4, release.notes).bind(5, static_cast<std::int64_t>(release.created_at));
    stmt.bind(6, static_cast<std::int64_t>(release.updated_at));
    std::optional<std::int64_t> released;
    if (release.released_at) released = static_cast<std::int64_t>(*release.released_at);
    stmt.bind(7, released).bind(8, release.tag).bind(9, release.commit);
    stmt.bind(10, std::int64_t{release.pushed ? 1 : 0}).bind(11, release.remote);
    return finish(stmt, "cannot save the release");
  }

  // -- research -------------------------------------------------------------------------------

  static constexpr std::string_view kResearchColumns =
      "r.id, r.file, r.title, r.date, r.status, r.agent_type, r.topics, r.key_findings, r.actionable, "
      "r.needs_followup, r.confidence, r.file_checksum, r.archived, r.archived_at, r.created_at, r.updated_at, "
      "(SELECT coalesce(json_group_array(task_id), '[]') FROM (SELECT task_id FROM research_links l "
      "WHERE l.research_id = r.id ORDER BY l.position))";

  static Error corrupt_research(std::string_view id, std::string_view column) {
    return Error(ErrorCode::FileError, "research entry " + std::string(id) + " holds unreadable " +
                                           std::string(column) + " data in the database")
        .with_fix(std::string(kCorruptFix));
  }

  Result<ResearchEntry> read_research(Statement& stmt) {
    ResearchEntry entry;
    entry.id = stmt.text(0);
    entry.file = stmt.text(1);
    entry.title = stmt.text(2);
    entry.date = stmt.text(3);
    auto status = parse_research_status(stmt.text(4));
    if (!status) return fail(corrupt_research(entry.id, "status"));
    entry.status = *status;
    entry.agent_type = stmt.text(5);
    CT_TRY_ASSIGN(entry.topics, decode_strings(stmt.text(6), entry.id, "topics"));
    CT_TRY_ASSIGN(entry.key_findings, decode_strings(stmt.text(7), entry.id, "key_findings"));
    entry.actionable = stmt.integer(8) != 0;
    CT_TRY_ASSIGN(entry.needs_followup, decode_strings(stmt.text(9), entry.id, "needs_followup"));
    if (!stmt.is_null(10)) entry.confidence = stmt.real(10);
    entry.file_checksum = stmt.text(11);
    entry.archived = stmt.integer(12) != 0;
    entry.archived_at = column_optional_int(stmt.get(), 13);
    entry.created_at = stmt.integer(14);
    entry.updated_at = stmt.integer(15);
    CT_TRY_ASSIGN(entry.linked_tasks, decode_strings(stmt.text(16), entry.id, "links"));
    return entry;
  }

  Result<std::vector<ResearchEntry>> read_research_rows(Statement& stmt, std::string_view what) {
    std::vector<ResearchEntry> out;
    CT_TRY(for_each_row(stmt, what, [&]() -> Result<void> {
      CT_TRY_ASSIGN(ResearchEntry entry, read_research(stmt));
      out.push_back(std::move(entry));
      return {};
    }));
    return out;
  }

  static void research_where(const ResearchQuery& query, std::string& where, std::vector<SqlValue>& params) {
    Conditions conditions{where, params};
    if (!query.statuses.empty()) {
      std::string clause = "r.status IN (";
      bool first = true;
      for (auto status : {ResearchStatus::Complete, ResearchStatus::Partial, ResearchStatus::Blocked}) {
        if (std::find(query.statuses.begin(), query.statuses.end(), status) == query.statuses.end()) continue;
        clause += first ? "?" : ",?";
        first = false;
        params.emplace_back(std::string(to_string(status)));
      }
      conditions.add(clause + ")");
    }
    if (query.agent_type) conditions.add("r.agent_type = ?", *query.agent_type);
    if (query.topic)
      conditions.add("EXISTS (SELECT 1 FROM json_each(r.topics) AS j WHERE lower(j.value) = lower(?))", *query.topic);
    if (query.task_id)
      conditions.add("EXISTS (SELECT 1 FROM research_links l WHERE l.research_id = r.id AND l.task_id = ?)",
                     *query.task_id);
    if (query.actionable) conditions.add(*query.actionable ? "r.actionable = 1" : "r.actionable = 0");
    if (query.needs_followup) conditions.add("r.needs_followup <> '[]'");
    if (query.date_before) conditions.add("r.date < ?", *query.date_before);
    switch (query.archived) {
      case ArchivedFilter::Exclude: conditions.add("r.archived = 0"); break;
      case ArchivedFilter::Only: conditions.add("r.archived = 1"); break;
      case ArchivedFilter::Include: break;
    }
  }

  Result<std::optional<ResearchEntry>> get_research(std::string_view id) override {
    CT_TRY_ASSIGN(sqlite3_stmt* raw,
                  prepare("SELECT " + std::string(kResearchColumns) + " FROM research r WHERE r.id = ?1"));
    Statement stmt(raw);
    stmt.bind(1, id);
    CT_TRY_ASSIGN(bool row, step(stmt, "cannot read the research entry"));
    if (!row) return std::optional<ResearchEntry>();
    CT_TRY_ASSIGN(ResearchEntry entry, read_research(stmt));
    return std::optional<ResearchEntry>(std::move(entry));
  }

  Result<std::vector<ResearchEntry>> list_research(const ResearchQuery& query) override {
    std::string where;
    std::vector<SqlValue> params;
    research_where(query, where, params);
    std::string sql = "SELECT " + std::string(kResearchColumns) + " FROM research r" + where +
                      " ORDER BY r.date DESC, r.id";
    if (query.limit >= 0 || query.offset > 0) {
      sql += " LIMIT ? OFFSET ?";
      params.emplace_back(query.limit);
      params.emplace_back(query.offset);
    }
    CT_TRY_ASSIGN(sqlite3_stmt* raw, prepare(sql));
    Statement stmt(raw);
    stmt.bind_all(params);
    return read_research_rows(stmt, "cannot list research entries");
  }

  Result<std::int64_t> count_research(const ResearchQuery& query) override {
    std::string where;
    std::vector<SqlValue> params;
    research_where(query, where, params);
    CT_TRY_ASSIGN(sqlite3_stmt* raw, prepare("SELECT count(*) FROM research r" + where));
    Statement stmt(raw);
    stmt.bind_all(params);
    CT_TRY(step(stmt, "cannot count research entries"));
    return stmt.integer(0);
  }

  Result<void> put_research(const ResearchEntry& entry) override {
    {
      CT_TRY_ASSIGN(sqlite3_stmt* raw,
                    prepare("INSERT INTO research(id, file, title, date, status, agent_type, topics, key_findings, "
                            "actionable, needs_followup, confidence, file_checksum, archived, archived_at, created_at, "
                            "updated_at) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16) "
                            "ON CONFLICT(id) DO UPDATE SET file = excluded.file, title = excluded.title, "
                            "date = excluded.date, status = excluded.status, agent_type = excluded.agent_type, "
                            "topics = excluded.topics, key_findings = excluded.key_findings, "
                            "actionable = excluded.actionable, needs_followup = excluded.needs_followup, "
                            "confidence = excluded.confidence, file_checksum = excluded.file_checksum, "
                            "archived = excluded.archived, archived_at = excluded.archived_at, "
                            "updated_at = excluded.updated_at"));
      Statement stmt(raw);
      stmt.bind(1, entry.id).bind(2, entry.file).bind(3, entry.title).bind(4, entry.date);
      stmt.bind(5, std::string(to_string(entry.status))).bind(6, entry.agent_type);
      stmt.bind(7, encode_strings(entry.topics)).bind(8, encode_strings(entry.key_findings));
      stmt.bind(9, std::int64_t{entry.actionable ? 1 : 0}).bind(10, encode_strings(entry.needs_followup));
      if (entry.confidence) sqlite3_bind_double(stmt.get(), 11, *entry.confidence);
      else stmt.bind_null(11);
      stmt.bind(12, entry.file_checksum).bind(13, std::int64_t{entry.archived ? 1 : 0});
      std::optional<std::int64_t> archived_at;
      if (entry.archived_at) archived_at = static_cast<std::int64_t>(*entry.archived_at);
      stmt.bind(14, archived_at).bind(15, static_cast<std::int64_t>(entry.created_at));
      stmt.bind(16, static_cast<std::int64_t>(entry.updated_at));
      CT_TRY(finish(stmt, "cannot save the research entry"));
    }
    std::int64_t number = 0;
    {
      CT_TRY_ASSIGN(sqlite3_stmt* raw, prepare("SELECT num FROM research WHERE id = ?1"));
      Statement stmt(raw);
      stmt.bind(1, entry.id);
      CT_TRY_ASSIGN(bool row, step(stmt, "cannot save the research entry"));
      if (!row) return fail(ErrorCode::Internal, "research entry " + entry.id + " vanished while it was saved");
      number = stmt.integer(0);
    }
    {
      CT_TRY_ASSIGN(sqlite3_stmt* raw, prepare("DELETE FROM research_fts WHERE rowid = ?1"));
      Statement stmt(raw);
      stmt.bind(1, number);
      CT_TRY(finish(stmt, "cannot update the research index"));
    }
    {
      CT_TRY_ASSIGN(sqlite3_stmt* raw,
                    prepare("INSERT INTO research_fts(rowid, title, topics, key_findings) VALUES(?1, ?2, ?3, ?4)"));
      Statement stmt(raw);
      std::string findings;
      for (const auto& finding : entry.key_findings) findings += (findings.empty() ? "" : "\n") + finding;
      stmt.bind(1, number).bind(2, entry.title).bind(3, join_labels(entry.topics)).bind(4, findings);
      CT_TRY(finish(stmt, "cannot update the research index"));
    }
    {
      CT_TRY_ASSIGN(sqlite3_stmt* raw, prepare("DELETE FROM research_links WHERE research_id = ?1"));
      Statement stmt(raw);
      stmt.bind(1, entry.id);
      CT_TRY(finish(stmt, "cannot save the research links"));
    }
    CT_TRY_ASSIGN(sqlite3_stmt* raw,
                  prepare("INSERT OR IGNORE INTO research_links(research_id, task_id, position) VALUES(?1, ?2, ?3)"));
    std::int64_t position = 0;
    for (const auto& task : entry.linked_tasks) {
      Statement stmt(raw);
      stmt.bind(1, entry.id).bind(2, task).bind(3, position++);
      CT_TRY(finish(stmt, "cannot save the research links"));
    }
    return {};
  }

  Result<std::vector<ResearchEntry>> search_research(std::string_view text, ArchivedFilter archived,
                                                     std::int64_t limit) override {
    std::vector<ResearchEntry> out;
    if (limit == 0) return out;
    std::vector<std::string> tokens = tokenize(text);
    if (tokens.empty()) return out;
    ResearchQuery filter;
    filter.archived = archived;
    std::string where;
    std::vector<SqlValue> params{match_expression(tokens)};
    research_where(filter, where, params);
    std::string sql = "SELECT " + std::string(kResearchColumns) +
                      " FROM research_fts CROSS JOIN research r ON r.num = research_fts.rowid WHERE research_fts MATCH ?" +
                      (where.empty() ? std::string() : " AND " + where.substr(std::string_view(" WHERE ").size())) +
                      " ORDER BY bm25(research_fts, 10.0, 5.0, 2.0), r.num";
    if (limit > 0) {
      sql += " LIMIT ?";
      params.emplace_back(limit);
    }
    CT_TRY_ASSIGN(sqlite3_stmt* raw, prepare(sql));
    Statement stmt(raw);
    stmt.bind_all(params);
    CT_TRY_ASSIGN(out, read_research_rows(stmt, "cannot search research entries"));
    // An exact id goes first.
    CT_TRY_ASSIGN(std::optional<ResearchEntry> exact, get_research(trim(text)));
    if (exact && (archived == ArchivedFilter::Include || exact->archived == (archived == ArchivedFilter::Only))) {
      std::erase_if(out, [&](const ResearchEntry& e) { return e.id == exact->id; });
      out.insert(out.begin(), std::move(*exact));
      if (limit > 0 && std::ssize(out) > limit) out.resize(static_cast<std::size_t>(limit));
    }
    return out;
  }

  Result<std::int64_t> count_research_matches(std::string_view text, ArchivedFilter archived) override {
    CT_TRY_ASSIGN(std::vector<ResearchEntry> all, search_research(text, archived, -1));
    return static_cast<std::int64_t>(all.size());
  }

  Result<std::vector<std::string>> research_for_task(std::string_view task_id) override {
    CT_TRY_ASSIGN(sqlite3_stmt* raw,
                  prepare("SELECT research_id FROM research_links WHERE task_id = ?1 ORDER BY research_id"));
    Statement stmt(raw);
    stmt.bind(1, task_id);
    std::vector<std::string> out;
    CT_TRY(for_each_row(stmt, "cannot read research links", [&] { out.emplace_back(stmt.text(0)); }));
    return out;
  }

  Result<ResearchStats> research_stats() override {
    ResearchStats stats;
    {
      CT_TRY_ASSIGN(sqlite3_stmt* raw,
                    prepare("SELECT count(*), coalesce(sum(archived), 0), "
                            "coalesce(sum(archived = 0 AND actionable = 1), 0), "
                            "coalesce(sum(archived = 0 AND needs_followup <> '[]'), 0), "
                            "coalesce(sum(archived = 0 AND EXISTS (SELECT 1 FROM research_links l "
                            "WHERE l.research_id = research.id)), 0), "
                            "avg(CASE WHEN archived = 0 THEN confidence END) FROM research"));
      Statement stmt(raw);
      CT_TRY(step(stmt, "cannot count research entries"));
      stats.total = stmt.integer(0);
      stats.archived = stmt.integer(1);
      stats.actionable = stmt.integer(2);
      stats.pending = stmt.integer(3);
      stats.linked = stmt.integer(4);
      if (!stmt.is_null(5)) stats.average_confidence = stmt.real(5);
    }
    for (auto [column, target] : {std::pair{"status", &stats.by_status}, std::pair{"agent_type", &stats.by_agent_type}}) {
      CT_TRY_ASSIGN(sqlite3_stmt* raw, prepare(std::string("SELECT ") + column + ", count(*) FROM research "
                                               "WHERE archived = 0 GROUP BY 1 ORDER BY 1"));
      Statement stmt(raw);
      CT_TRY(for_each_row(stmt, "cannot count research entries",
                          [&] { (*target)[std::string(stmt.text(0))] = stmt.integer(1); }));
    }
    return stats;
  }

  Result<std::optional<ManifestCursor>> get_manifest_cursor(std::string_view file) override {
    CT_TRY_ASSIGN(sqlite3_stmt* raw,
                  prepare("SELECT file, offset, lines, head_hash, synced_at FROM research_sync WHERE file = ?1"));
    Statement stmt(raw);
    stmt.bind(1, file);
    CT_TRY_ASSIGN(bool row, step(stmt, "cannot read the manifest cursor"));
    if (!row) return std::optional<ManifestCursor>();
    return std::optional<ManifestCursor>(ManifestCursor{std::string(stmt.text(0)), stmt.integer(1), stmt.integer(2),
                                                        std::string(stmt.text(3)), stmt.integer(4)});
  }

  Result<void> put_manifest_cursor(const ManifestCursor& cursor) override {
    CT_TRY_ASSIGN(sqlite3_stmt* raw, prepare("INSERT OR REPLACE INTO research_sync(file, offset, lines, head_hash, "
                                             "synced_at) VALUES(?1, ?2, ?3, ?4, ?5)"));
    Statement stmt(raw);
    stmt.bind(1, cursor.file).bind(2, cursor.offset).bind(3, cursor.lines).bind(4, cursor.head_hash);
    stmt.bind(5, static_cast<std::int64_t>(cursor.synced_at));
    return finish(stmt, "cannot save the manifest cursor");
  }

  // -- lifecycle ------------------------------------------------------------------------------

  static LifecycleKind parse_kind(std::string_view text) {
    return text == "gate" ? LifecycleKind::Gate : LifecycleKind::Stage;
  }

  Result<std::vector<LifecycleState>> lifecycle_states(std::string_view subject, LifecycleKind kind) override {
    CT_TRY_ASSIGN(sqlite3_stmt* raw, prepare("SELECT name, status, at, agent, session, notes, evidence FROM lifecycle "
                                             "WHERE subject = ?1 AND kind = ?2"));
    Statement stmt(raw);
    stmt.bind(1, subject).bind(2, to_string(kind));
    std::vector<LifecycleState> out;
    CT_TRY(for_each_row(stmt, "cannot read lifecycle states", [&] {
      out.push_back(LifecycleState{std::string(subject), kind, std::string(stmt.text(0)), std::string(stmt.text(1)),
                                   stmt.integer(2), std::string(stmt.text(3)), std::string(stmt.text(4)),
                                   std::string(stmt.text(5)), std::string(stmt.text(6))});
    }));
    return out;
  }

  Result<void> put_lifecycle(const LifecycleEvent& event) override {
    const LifecycleState& s = event.state;
    return atomically([&]() -> Result<void> {
      {
        CT_TRY_ASSIGN(sqlite3_stmt* raw, prepare("INSERT OR REPLACE INTO lifecycle(subject, kind, name, status, at, "
                                                 "agent, session, notes, evidence) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, "
                                                 "?8, ?9)"));
        Statement stmt(raw);
        stmt.bind(1, s.subject).bind(2, to_string(s.kind)).bind(3, s.name).bind(4, s.status);
        stmt.bind(5, static_cast<std::int64_t>(s.at)).bind(6, s.agent).bind(7, s.session).bind(8, s.notes);
        stmt.bind(9, s.evidence);
        CT_TRY(finish(stmt, "cannot save the lifecycle state"));
      }
      CT_TRY_ASSIGN(sqlite3_stmt* raw, prepare("INSERT INTO lifecycle_events(subject, kind, name, from_status, status, "
                                               "at, agent, session, notes, evidence, operation) VALUES(?1, ?2, ?3, ?4, "
                                               "?5, ?6, ?7, ?8, ?9, ?10, ?11)"));
      Statement stmt(raw);
      stmt.bind(1, s.subject).bind(2, to_string(s.kind)).bind(3, s.name).bind(4, event.from).bind(5, s.status);
      stmt.bind(6, static_cast<std::int64_t>(s.at)).bind(7, s.agent).bind(8, s.session).bind(9, s.notes);
      stmt.bind(10, s.evidence).bind(11, event.operation);
      return finish(stmt, "cannot save the lifecycle history");
    });
  }

  Result<std::vector<LifecycleEvent>> lifecycle_events(std::string_view subject, std::optional<LifecycleKind> kind,
                                                       std::int64_t limit, std::int64_t offset) override {
    CT_TRY_ASSIGN(sqlite3_stmt* raw,
                  prepare("SELECT seq, kind, name, from_status, status, at, agent, session, notes, evidence, operation "
                          "FROM lifecycle_events WHERE subject = ?1 AND (?2 = '' OR kind = ?2) "
                          "ORDER BY seq DESC LIMIT ?3 OFFSET ?4"));
    Statement stmt(raw);
    stmt.bind(1, subject).bind(2, kind ? to_string(*kind) : std::string_view()).bind(3, limit).bind(4, offset);
    std::vector<LifecycleEvent> out;
    CT_TRY(for_each_row(stmt, "cannot read the lifecycle history", [&] {
      LifecycleEvent event;
      event.seq = stmt.integer(0);
      event.state = LifecycleState{std::string(subject), parse_kind(stmt.text(1)), std::string(stmt.text(2)),
                                   std::string(stmt.text(4)), stmt.integer(5), std::string(stmt.text(6)),
                                   std::string(stmt.text(7)), std::string(stmt.text(8)), std::string(stmt.text(9))};
      event.from = std::string(stmt.text(3));
      event.operation = std::string(stmt.text(10));
      out.push_back(std::move(event));
    }));
    return out;
  }

  Result<std::int64_t> count_lifecycle_events(std::string_view subject, std::optional<LifecycleKind> kind) override {
    CT_TRY_ASSIGN(sqlite3_stmt* raw, prepare("SELECT count(*) FROM lifecycle_events WHERE subject = ?1 "
                                             "AND (?2 = '' OR kind = ?2)"));
    Statement stmt(raw);
    stmt.bind(1, subject).bind(2, kind ? to_string(*kind) : std::string_view());
    CT_TRY(step(stmt, "cannot count the lifecycle history"));
    return stmt.integer(0);
  }

  // -- diagnostics ----------------------------------------------------------------------------

  Result<std::vector<DiagnosticRow>> scan(ScanKind kind, const ScanScope& scope) override {
    const bool one = !scope.task.empty();
    CT_TRY_ASSIGN(sqlite3_stmt* raw, prepare(sqlite::scan_sql(kind, one)));
    if (!sqlite3_stmt_readonly(raw)) return fail(ErrorCode::Internal, "a consistency scan must not write");
    Statement stmt(raw);
    const int parameters = sqlite3_bind_parameter_count(raw);
    if (parameters >= 1) stmt.bind(1, scope.task);
    if (parameters >= 2) stmt.bind(2, std::to_string(scope.number));
    std::vector<DiagnosticRow> rows;
    const int columns = sqlite3_column_count(raw);
    CT_TRY(for_each_row(stmt, "cannot run a consistency check", [&] {
      DiagnosticRow out;
      out.reserve(static_cast<std::size_t>(columns));
      for (int c = 0; c < columns; ++c) out.emplace_back(stmt.text(c));
      rows.push_back(std::move(out));
    }));
    if (kind == ScanKind::IntegrityQuick || kind == ScanKind::IntegrityFull)
      std::erase_if(rows, [](const DiagnosticRow& row) { return row.empty() || row[0] == "ok"; });
    if (kind == ScanKind::TaskRules) return split_task_rules(rows);
    return rows;
  }

  /// The wide rows of the TaskRules query (the task, then per rule its flag and details) as one
  /// row per broken rule: (task, rule, details…).
  static std::vector<DiagnosticRow> split_task_rules(const std::vector<DiagnosticRow>& wide) {
    std::vector<DiagnosticRow> out;
    for (const auto& row : wide) {
      std::size_t column = 1;
      for (const auto& rule : task_rules()) {
        const auto details = static_cast<std::size_t>(rule.details);
        if (column + details >= row.size()) break;  // cannot happen: the query has every rule's columns
        if (row[column] == "1") {
          DiagnosticRow broken{row[0], std::string(rule.name)};
          broken.insert(broken.end(), row.begin() + static_cast<std::ptrdiff_t>(column + 1),
                        row.begin() + static_cast<std::ptrdiff_t>(column + 1 + details));
          out.push_back(std::move(broken));
        }
        column += 1 + details;
      }
    }
    return out;
  }

  Result<DerivedRepair> rebuild_derived() override {
    DerivedRepair repair;
    auto changes = [this](const char* sql, std::string_view what) -> Result<std::int64_t> {
      CT_TRY(exec(sql, what));
      return static_cast<std::int64_t>(sqlite3_changes64(db_));
    };
    CT_TRY(run("SAVEPOINT ct_rebuild", "cannot start a repair"));
    auto result = [&]() -> Result<void> {
      CT_TRY(exec("INSERT OR IGNORE INTO meta(key, value) VALUES('next_task_num', '1')", "cannot repair the task id counter"));
      CT_TRY_ASSIGN(repair.edges_removed,
                    changes("DELETE FROM task_deps WHERE NOT EXISTS (SELECT 1 FROM tasks t, json_each(t.depends) j "
                            "WHERE t.id = task_deps.task_id AND j.value = task_deps.depends_on)",
                            "cannot repair dependency edges"));
      CT_TRY_ASSIGN(repair.edges_added,
                    changes("INSERT OR IGNORE INTO task_deps(task_id, depends_on) SELECT t.id, j.value "
                            "FROM tasks t, json_each(t.depends) j WHERE json_valid(t.depends) AND j.type = 'text'",
                            "cannot repair dependency edges"));
      CT_TRY_ASSIGN(repair.index_removed,
                    changes("DELETE FROM tasks_fts WHERE rowid NOT IN (SELECT num FROM tasks)",
                            "cannot repair the search index"));
      // Labels joined by spaces and note texts by newlines, as write_index() does.
      CT_TRY_ASSIGN(repair.index_added,
                    changes("INSERT INTO tasks_fts(rowid, title, description, labels, notes) "
                            "SELECT t.num, t.title, t.description, "
                            "coalesce((SELECT group_concat(l.value, ' ') FROM json_each(t.labels) l), ''), "
                            "coalesce((SELECT group_concat(json_extract(n.value, '$.text'), char(10)) "
                            "FROM json_each(t.notes) n), '') "
                            "FROM tasks t WHERE t.num NOT IN (SELECT rowid FROM tasks_fts)",
                            "cannot repair the search index"));
      CT_TRY_ASSIGN(std::int64_t raised,
                    changes("UPDATE meta SET value = CAST((SELECT max(num) FROM tasks) + 1 AS TEXT) "
                            "WHERE key = 'next_task_num' AND CAST(value AS INTEGER) <= (SELECT max(num) FROM tasks)",
                            "cannot repair the task id counter"));
      repair.counter_raised = raised > 0;
      return {};
    }();
    if (!result) {
      sqlite3_exec(db_, "ROLLBACK TO ct_rebuild; RELEASE ct_rebuild", nullptr, nullptr, nullptr);
      return std::unexpected(std::move(result.error()));
    }
    CT_TRY(run("RELEASE ct_rebuild", "cannot finish a repair"));
    return repair;
  }

  Result<std::vector<std::string>> integrity_problems() override {
    auto problems = find_integrity_problems();
    if (!problems) return problems;
    // The verdict is kept beside the store: writes are refused while it stands (begin()), and a
    // clean check lifts it.
    if (!problems->empty()) {
      mark_damaged(problems->front());
    } else if (!read_only_) {
      std::error_code ec;
      std::filesystem::remove(damaged_marker(file_), ec);
    }
    return problems;
  }

  Result<std::vector<std::string>> find_integrity_problems() {
    std::vector<std::string> problems;
    CT_TRY_ASSIGN(sqlite3_stmt* raw, prepare("PRAGMA quick_check"));
    Statement stmt(raw);
    CT_TRY(for_each_row(stmt, "cannot check the database", [&] {
      if (is_problem_line(stmt.text(0))) problems.emplace_back(stmt.text(0));
    }));
    CT_TRY_ASSIGN(sqlite3_stmt* fk_raw, prepare("PRAGMA foreign_key_check"));
    Statement fk(fk_raw);
    CT_TRY(for_each_row(fk, "cannot check foreign keys", [&] {
      problems.push_back("foreign key violation in " + std::string(fk.text(0)) + " row " +
                         std::to_string(fk.integer(1)));
    }));
    return problems;
  }

  Result<void> backup_to(const std::filesystem::path& file) override {
    sqlite3* target = nullptr;
    int rc = sqlite3_open_v2(file.c_str(), &target, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr);
    if (rc != SQLITE_OK) {
      Error failure = sqlite_error(rc, target ? sqlite3_errmsg(target) : "cannot open", "cannot create the backup", file);
      sqlite3_close(target);
      return fail(std::move(failure));
    }
    sqlite3_backup* backup = sqlite3_backup_init(target, "main", db_, "main");
    if (!backup) {
      Error failure = sqlite_error(sqlite3_errcode(target), sqlite3_errmsg(target), "cannot start the backup", file);
      sqlite3_close(target);
      return fail(std::move(failure));
    }
    // All pages in one step: the source is read in one consistent snapshot.
    rc = sqlite3_backup_step(backup, -1);
    sqlite3_backup_finish(backup);
    auto discard = [&] {
      sqlite3_close(target);
      std::error_code ec;
      for (const char* suffix : {"", "-wal", "-shm", "-journal"}) std::filesystem::remove(file.string() + suffix, ec);
    };
    if (rc != SQLITE_DONE) {
      Error failure = sqlite_error(rc, sqlite3_errmsg(target), "cannot write the backup", file);
      discard();
      return fail(std::move(failure));
    }
    // A backup is only kept when it passes an integrity check: the copy holds the source's pages
    // as they are, so a damaged page of the store shows here (and marks the store damaged).
    std::vector<std::string> problems;
    sqlite3_stmt* check = nullptr;
    rc = sqlite3_prepare_v2(target, "PRAGMA quick_check", -1, &check, nullptr);
    if (rc == SQLITE_OK) {
      while ((rc = sqlite3_step(check)) == SQLITE_ROW) {
        std::string_view line = column_text(check, 0);
        if (is_problem_line(line)) problems.emplace_back(line);
      }
    }
    if (rc != SQLITE_DONE) problems.emplace_back(sqlite3_errmsg(target));
    sqlite3_finalize(check);
    if (!problems.empty()) {
      discard();
      mark_damaged(problems.front());
      return fail(std::move(damaged_store_error(file_, problems.front()).with_detail("backupKept", false)));
    }
    if (sqlite3_close(target) != SQLITE_OK) {
      discard();
      return fail(Error(ErrorCode::FileError, "cannot finish the backup " + file.string()));
    }
    return {};
  }

  // -- housekeeping (system.dash, stats, gc, restore) -----------------------------------------

  Result<StoreCounts> counts() override {
    CT_TRY_ASSIGN(sqlite3_stmt* raw, prepare("SELECT (SELECT count(*) FROM tasks), (SELECT count(*) FROM audit), "
                                             "(SELECT coalesce(max(seq), 0) FROM audit), (SELECT count(*) FROM sessions)"));
    Statement stmt(raw);
    CT_TRY_ASSIGN(bool row, step(stmt, "cannot count the store's rows"));
    StoreCounts out;
    if (!row) return out;
    out.tasks = stmt.integer(0);
    out.audit_rows = stmt.integer(1);
    out.last_audit_seq = stmt.integer(2);
    out.sessions = stmt.integer(3);
    return out;
  }

  Result<std::vector<PeriodStats>> period_stats(const std::vector<StatsPeriod>& periods) override {
    std::vector<PeriodStats> out(periods.size() + 1);
    if (periods.empty()) return out;
    // The periods as a table p(i, s, e); a row's period is found by one lookup in it, so each
    // query makes a single pass over the tasks of the whole span.
    std::string table = "WITH p(i, s, e) AS (VALUES ";
    std::vector<SqlValue> params;
    TimeMs first = periods.front().start;
    TimeMs last = periods.front().end;
    for (std::size_t i = 0; i < periods.size(); ++i) {
      if (i > 0) table += ", ";
      table += "(" + std::to_string(i) + ", ?" + std::to_string(2 * i + 1) + ", ?" + std::to_string(2 * i + 2) + ")";
      params.emplace_back(static_cast<std::int64_t>(periods[i].start));
      params.emplace_back(static_cast<std::int64_t>(periods[i].end));
      first = std::min(first, periods[i].start);
      last = std::max(last, periods[i].end);
    }
    table += ")";
    const std::string lo = "?" + std::to_string(params.size() + 1);
    const std::string hi = "?" + std::to_string(params.size() + 2);
    params.emplace_back(static_cast<std::int64_t>(first));
    params.emplace_back(static_cast<std::int64_t>(last));
    const std::size_t all = periods.size();
    auto slot = [&](std::int64_t bucket) -> PeriodStats* {
      if (bucket < 0) return &out[all];
      return static_cast<std::size_t>(bucket) < all ? &out[static_cast<std::size_t>(bucket)] : nullptr;
    };
    {
      std::string sql = table + " SELECT (SELECT i FROM p WHERE t.created_at >= p.s AND t.created_at < p.e) AS b, "
                                "count(*) FROM tasks t WHERE t.created_at >= " + lo + " AND t.created_at < " + hi +
                        " GROUP BY b";
      CT_TRY_ASSIGN(sqlite3_stmt* raw, prepare(sql));
      Statement stmt(raw);
      stmt.bind_all(params);
      CT_TRY(for_each_row(stmt, "cannot compute task statistics", [&] {
        if (stmt.is_null(0)) return;
        if (PeriodStats* stats = slot(stmt.integer(0))) stats->created += stmt.integer(1);
        out[all].created += stmt.integer(1);
      }));
    }
    // Completed tasks with their durations: created → completed, and first start → completed
    // where the audit trail still records the start (status set to active). Each duration kind
    // (k) is ranked within its period (b, and -1 for the whole span); nearest-rank percentiles.
    std::string sql =
        table +
        ", c AS MATERIALIZED (SELECT (SELECT i FROM p WHERE t.completed_at >= p.s AND t.completed_at < p.e) AS b, "
        "t.completed_at - t.created_at AS d, t.completed_at - (SELECT min(a.at) FROM audit_changes ch "
        "JOIN audit a ON a.seq = ch.seq WHERE ch.task_id = t.id AND ch.field = 'status' AND ch.after = '\"active\"' "
        "AND a.at <= t.completed_at) AS w FROM tasks t WHERE t.status = 'done' AND t.completed_at >= " + lo +
        " AND t.completed_at < " + hi +
        "), x AS (SELECT 0 AS k, b, d AS v FROM c UNION ALL SELECT 0, -1, d FROM c "
        "UNION ALL SELECT 1, b, w FROM c WHERE w IS NOT NULL UNION ALL SELECT 1, -1, w FROM c WHERE w IS NOT NULL), "
        "r AS (SELECT k, b, v, row_number() OVER (PARTITION BY k, b ORDER BY v) AS rn, "
        "count(*) OVER (PARTITION BY k, b) AS n FROM x) "
        "SELECT k, b, max(n), max(CASE WHEN rn = (n + 1) / 2 THEN v END), "
        "max(CASE WHEN rn = (9 * n + 9) / 10 THEN v END) FROM r GROUP BY k, b";
    CT_TRY_ASSIGN(sqlite3_stmt* raw, prepare(sql));
    Statement stmt(raw);
    stmt.bind_all(params);
    CT_TRY(for_each_row(stmt, "cannot compute task statistics", [&] {
      if (stmt.is_null(1)) return;
      PeriodStats* stats = slot(stmt.integer(1));
      if (!stats) return;
      if (stmt.integer(0) == 0) {
        stats->completed = stmt.integer(2);
        stats->cycle_p50 = column_optional_int(raw, 3);
        stats->cycle_p90 = column_optional_int(raw, 4);
      } else {
        stats->started = stmt.integer(2);
        stats->work_p50 = column_optional_int(raw, 3);
        stats->work_p90 = column_optional_int(raw, 4);
      }
    }));
    return out;
  }

  Result<std::optional<AuditAnchor>> audit_anchor() override {
    CT_TRY_ASSIGN(sqlite3_stmt* raw, prepare("SELECT value FROM meta WHERE key = 'audit_anchor'"));
    Statement stmt(raw);
    CT_TRY_ASSIGN(bool row, step(stmt, "cannot read the audit anchor"));
    if (!row) return std::optional<AuditAnchor>();
    auto value = json::parse(stmt.text(0));
    if (!value || !(*value)["seq"].is_int() || !(*value)["hash"].is_string())
      return fail(Error(ErrorCode::FileError, "the audit anchor in the meta table is unreadable")
                      .with_fix(std::string(kCorruptFix)));
    AuditAnchor anchor;
    anchor.seq = (*value)["seq"].as_int();
    anchor.hash = (*value)["hash"].as_string();
    if ((*value)["archive"].is_string()) anchor.archive = (*value)["archive"].as_string();
    return std::optional<AuditAnchor>(std::move(anchor));
  }

  Result<std::int64_t> last_audit_seq_before(TimeMs before) override {
    CT_TRY_ASSIGN(sqlite3_stmt* raw, prepare("SELECT coalesce(max(seq), 0) FROM audit WHERE at < ?1"));
    Statement stmt(raw);
    stmt.bind(1, static_cast<std::int64_t>(before));
    CT_TRY_ASSIGN(bool row, step(stmt, "cannot read the audit trail"));
    return row ? stmt.integer(0) : 0;
  }

  Result<std::int64_t> compact_audit(const AuditAnchor& anchor) override {
    std::int64_t removed = 0;
    auto result = atomically([&]() -> Result<void> {
      {
        CT_TRY_ASSIGN(sqlite3_stmt* raw, prepare("DELETE FROM audit_changes WHERE seq <= ?1"));
        Statement stmt(raw);
        stmt.bind(1, anchor.seq);
        CT_TRY(finish(stmt, "cannot compact the audit trail"));
      }
      {
        CT_TRY_ASSIGN(sqlite3_stmt* raw, prepare("DELETE FROM audit WHERE seq <= ?1"));
        Statement stmt(raw);
        stmt.bind(1, anchor.seq);
        CT_TRY(finish(stmt, "cannot compact the audit trail"));
        removed = sqlite3_changes64(db_);
      }
      std::string value;
      json::Writer writer(value);
      writer.begin_object().key("seq").value(anchor.seq).key("hash").value(anchor.hash);
      writer.key("archive").value(anchor.archive).end_object();
      CT_TRY_ASSIGN(sqlite3_stmt* raw, prepare("INSERT OR REPLACE INTO meta(key, value) VALUES('audit_anchor', ?1)"));
      Statement stmt(raw);
      stmt.bind(1, value);
      return finish(stmt, "cannot record the audit anchor");
    });
    if (!result) return std::unexpected(std::move(result.error()));
    return removed;
  }

  Result<std::int64_t> expire_idempotent(TimeMs before, bool count_only) override {
    std::int64_t count = 0;
    {
      CT_TRY_ASSIGN(sqlite3_stmt* raw, prepare("SELECT count(*) FROM idempotency WHERE at < ?1"));
      Statement stmt(raw);
      stmt.bind(1, static_cast<std::int64_t>(before));
      CT_TRY_ASSIGN(bool row, step(stmt, "cannot read idempotency keys"));
      count = row ? stmt.integer(0) : 0;
    }
    if (count_only || count == 0) return count;
    CT_TRY_ASSIGN(sqlite3_stmt* raw, prepare("DELETE FROM idempotency WHERE at < ?1"));
    Statement stmt(raw);
    stmt.bind(1, static_cast<std::int64_t>(before));
    CT_TRY(finish(stmt, "cannot expire idempotency keys"));
    return count;
  }

  Result<void> replace_contents_from(const std::filesystem::path& file) override {
    if (!in_transaction()) return fail(ErrorCode::Internal, "replace_contents_from needs a write transaction");
    sqlite3* source = nullptr;
    int rc = sqlite3_open_v2(file.c_str(), &source, SQLITE_OPEN_READONLY, nullptr);
    // Closes the source on every path out.
    std::unique_ptr<sqlite3, int (*)(sqlite3*)> source_guard(source, sqlite3_close_v2);
    if (rc != SQLITE_OK)
      return fail(sqlite_error(rc, source ? sqlite3_errmsg(source) : sqlite3_errstr(rc), "cannot open the backup", file));
    auto source_version = read_user_version(source);
    if (!source_version) return fail(sqlite_error(SQLITE_NOTADB, "cannot read its schema version", "cannot read the backup", file));
    if (*source_version != sqlite_schema_version())
      return fail(ErrorCode::Internal, "replace_contents_from needs schema version " +
                                           std::to_string(sqlite_schema_version()) + ", the source has " +
                                           std::to_string(*source_version));
    // The rows of child tables are replaced in any order; foreign keys are checked at commit.
    CT_TRY(exec("PRAGMA defer_foreign_keys = ON", "cannot restore"));
    CT_TRY_ASSIGN(std::int64_t next_id, meta_int("next_task_num"));

    struct TableInfo {
      std::string name;
      bool is_virtual = false;
      bool without_rowid = false;
    };
    std::vector<TableInfo> tables;
    {
      CT_TRY_ASSIGN(sqlite3_stmt* raw, prepare("SELECT name, sql FROM sqlite_schema WHERE type = 'table' "
                                               "AND name NOT LIKE 'sqlite_%' ORDER BY name"));
      Statement stmt(raw);
      CT_TRY(for_each_row(stmt, "cannot read the schema", [&] {
        std::string sql = to_lower_ascii(stmt.text(1));
        tables.push_back({std::string(stmt.text(0)), sql.starts_with("create virtual table"),
                          sql.find("without rowid") != std::string::npos});
      }));
    }
    // A virtual table's shadow tables (tasks_fts_data …) follow from its own rows.
    std::erase_if(tables, [&](const TableInfo& table) {
      return std::any_of(tables.begin(), tables.end(), [&](const TableInfo& v) {
        return v.is_virtual && table.name.size() > v.name.size() && table.name.starts_with(v.name + "_");
      });
    });
    for (const auto& table : tables) CT_TRY(copy_table(source, table.name, table.is_virtual, table.without_rowid, file));
    // Ids are never reused, not even the ones allocated after the backup was taken.
    CT_TRY_ASSIGN(sqlite3_stmt* raw, prepare("UPDATE meta SET value = CAST(max(CAST(value AS INTEGER), ?1) AS TEXT) "
                                             "WHERE key = 'next_task_num'"));
    Statement stmt(raw);
    stmt.bind(1, next_id);
    return finish(stmt, "cannot restore the task id counter");
  }

 private:
  // -- plumbing -------------------------------------------------------------------------------

  Error error(int rc, std::string_view what) const {
    Error out = sqlite_error(rc, sqlite3_errmsg(db_), what, file_, sqlite3_system_errno(db_));
    // SQLite met a damaged page: remember it, so that no write lands on a damaged store.
    if ((rc & 0xff) == SQLITE_CORRUPT || (rc & 0xff) == SQLITE_NOTADB) {
      mark_damaged(sqlite3_errmsg(db_));
      out.details.set("damaged", true);
    }
    return out;
  }

  /// Writes the damaged marker (best effort: a store that cannot be written cannot be harmed).
  void mark_damaged(std::string_view reason) const {
    if (read_only_) return;
    std::string text(reason.substr(0, 500));
    (void)write_file_atomically(damaged_marker(file_), text + "\n");
  }

  std::string damage_reason() const {
    std::ifstream in(damaged_marker(file_));
    std::string line;
    std::getline(in, line);
    line = std::string(trim(line)).substr(0, 500);
    return line.empty() ? "a damaged page" : line;
  }

  /// The file this connection opened; a store removed or replaced under a running process must
  /// not swallow writes into an unlinked file.
  void remember_identity() {
    struct stat st{};
    if (::stat(file_.c_str(), &st) == 0) {
      device_ = st.st_dev;
      inode_ = st.st_ino;
      size_ = st.st_size;
    }
  }

  Result<void> check_identity() {
    if (inode_ == 0) return {};
    struct stat st{};
    const bool exists = ::stat(file_.c_str(), &st) == 0;
    const bool same = exists && st.st_ino == inode_ && st.st_dev == device_ && st.st_size >= size_;
    // A file that is gone, replaced or truncated is left alone: closing this connection must not
    // checkpoint the WAL into it.
    if (!same) sqlite3_db_config(db_, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, nullptr);
    if (!exists)
      return fail(Error(ErrorCode::FileError, file_.string() + " was removed while this process had it open; "
                                                               "nothing was read or written")
                      .with_fix("cleo_mutate {domain:'system', operation:'restore'} brings a backup back (or "
                                "cleo_mutate {domain:'system', operation:'init'} starts a new store); then restart this "
                                "process")
                      .with_detail("storeRemoved", true));
    if (st.st_ino != inode_ || st.st_dev != device_)
      return fail(Error(ErrorCode::FileError, file_.string() + " was replaced (restored, or re-created) since this "
                                                               "process opened it")
                      .with_fix("retry: the store is opened again")
                      .with_detail("reopen", true));
    // ct never shrinks the file (no VACUUM): a smaller file was truncated by someone else, and
    // its pages must not be read through the memory map (SIGBUS). Read it afresh.
    if (st.st_size < size_)
      return fail(Error(ErrorCode::FileError, file_.string() + " was truncated since this process opened it")
                      .with_fix(std::string(kCorruptFix))
                      .with_detail("reopen", true));
    size_ = st.st_size;
    return {};
  }

  /// The cached statement for `sql`, prepared on first use.
  Result<sqlite3_stmt*> prepare(std::string_view sql) {
    if (auto found = statements_.find(sql); found != statements_.end()) return found->second;
    sqlite3_stmt* stmt = nullptr;
    int rc = sqlite3_prepare_v3(db_, sql.data(), static_cast<int>(sql.size()), SQLITE_PREPARE_PERSISTENT, &stmt,
                                nullptr);
    if (rc != SQLITE_OK) {
      sqlite3_finalize(stmt);
      return fail(error(rc, "cannot prepare a query"));
    }
    statements_.emplace(std::string(sql), stmt);
    return stmt;
  }

  /// Steps once: true on a row, false when done.
  Result<bool> step(Statement& stmt, std::string_view what) {
    int rc = sqlite3_step(stmt.get());
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    return fail(error(rc, what));
  }

  /// Steps through the remaining rows, calling `on_row()` on each. `on_row` returns void, or a
  /// Result<void> whose error ends the walk and is returned.
  template <typename OnRow>
  Result<void> for_each_row(Statement& stmt, std::string_view what, OnRow&& on_row) {
    while (true) {
      CT_TRY_ASSIGN(bool row, step(stmt, what));
      if (!row) return {};
      if constexpr (std::is_void_v<std::invoke_result_t<OnRow&>>) {
        on_row();
      } else {
        CT_TRY(on_row());
      }
    }
  }

  /// Steps to the end, ignoring rows (a RETURNING statement finishes its work here).
  Result<void> finish(Statement& stmt, std::string_view what) { return for_each_row(stmt, what, [] {}); }

  /// Runs a fixed statement (transaction control) from the cache.
  Result<void> run(std::string_view sql, std::string_view what) {
    CT_TRY_ASSIGN(sqlite3_stmt* raw, prepare(sql));
    Statement stmt(raw);
    return finish(stmt, what);
  }

  /// Runs one-off SQL (pragmas, migrations) without caching.
  Result<void> exec(const char* sql, std::string_view what) {
    int rc = sqlite3_exec(db_, sql, nullptr, nullptr, nullptr);
    if (rc != SQLITE_OK) return fail(error(rc, what));
    return {};
  }

  /// Makes a multi-statement write all-or-nothing, inside or outside the caller's transaction.
  template <typename Body>
  Result<void> atomically(Body&& body) {
    CT_TRY(run("SAVEPOINT ct_write", "cannot start a write"));
    auto result = body();
    if (!result) {
      sqlite3_exec(db_, "ROLLBACK TO ct_write; RELEASE ct_write", nullptr, nullptr, nullptr);
      return result;
    }
    auto released = run("RELEASE ct_write", "cannot finish a write");
    if (!released) sqlite3_exec(db_, "ROLLBACK TO ct_write; RELEASE ct_write", nullptr, nullptr, nullptr);
    return released;
  }

  Result<std::vector<Task>> collect_tasks(const std::string& sql, const std::vector<SqlValue>& params,
                                          std::string_view what) {
    CT_TRY_ASSIGN(sqlite3_stmt* raw, prepare(sql));
    Statement stmt(raw);
    stmt.bind_all(params);
    std::vector<Task> out;
    CT_TRY(for_each_row(stmt, what, [&]() -> Result<void> {
      CT_TRY_ASSIGN(Task task, read_task(raw));
      out.push_back(std::move(task));
      return {};
    }));
    return out;
  }

  Result<std::vector<std::string>> collect_strings(Statement& stmt, std::string_view what) {
    std::vector<std::string> out;
    CT_TRY(for_each_row(stmt, what, [&] { out.emplace_back(stmt.text(0)); }));
    return out;
  }

  static json::Value decode_json(std::string_view text) {
    auto parsed = json::parse(text);
    if (parsed) return std::move(*parsed);
    return json::Value(text);  // not JSON: keep the text rather than lose it
  }

  /// Binds the task's fields from title onwards to ?first … ?first+23.
  static void bind_task_fields(Statement& stmt, const Task& task, int first) {
    int i = first;
    stmt.bind(i++, task.title);
    stmt.bind(i++, task.description);
    stmt.bind(i++, to_string(task.status));
    stmt.bind(i++, to_string(task.priority));
    stmt.bind(i++, to_string(task.type));
    if (task.parent.empty()) stmt.bind_null(i++); else stmt.bind(i++, task.parent);
    stmt.bind(i++, task.position);
    stmt.bind(i++, encode_strings(task.depends));
    stmt.bind(i++, encode_strings(task.labels));
    stmt.bind(i++, encode_strings(task.acceptance));
    stmt.bind(i++, encode_strings(task.files));
    stmt.bind(i++, encode_notes(task.notes));
    stmt.bind(i++, encode_relations(task.relates));
    stmt.bind(i++, task.phase);
    stmt.bind(i++, to_string(task.size));
    stmt.bind(i++, task.blocked_by);
    stmt.bind(i++, static_cast<std::int64_t>(task.created_at));
    stmt.bind(i++, static_cast<std::int64_t>(task.updated_at));
    stmt.bind(i++, task.completed_at);
    stmt.bind(i++, task.cancelled_at);
    stmt.bind(i++, task.cancellation_reason);
    stmt.bind(i++, std::int64_t{task.archived ? 1 : 0});
    stmt.bind(i++, task.archived_at);
    stmt.bind(i++, task.archive_reason);
  }

  Result<void> write_edges(const Task& task, bool replace) {
    if (replace) {
      CT_TRY_ASSIGN(sqlite3_stmt* raw, prepare("DELETE FROM task_deps WHERE task_id = ?1"));
      Statement stmt(raw);
      stmt.bind(1, task.id);
      CT_TRY(finish(stmt, "cannot write dependency edges"));
    }
    if (task.depends.empty()) return {};
    CT_TRY_ASSIGN(sqlite3_stmt* raw, prepare("INSERT OR IGNORE INTO task_deps(task_id, depends_on) VALUES(?1, ?2)"));
    for (const auto& dependency : task.depends) {
      Statement stmt(raw);
      stmt.bind(1, task.id).bind(2, dependency);
      CT_TRY(finish(stmt, "cannot write dependency edges"));
    }
    return {};
  }

  Result<void> write_index(std::int64_t number, const Task& task, bool replace) {
    if (replace) {
      CT_TRY_ASSIGN(sqlite3_stmt* raw, prepare("DELETE FROM tasks_fts WHERE rowid = ?1"));
      Statement stmt(raw);
      stmt.bind(1, number);
      CT_TRY(finish(stmt, "cannot update the search index"));
    }
    CT_TRY_ASSIGN(sqlite3_stmt* raw,
                  prepare("INSERT INTO tasks_fts(rowid, title, description, labels, notes) VALUES(?1, ?2, ?3, ?4, ?5)"));
    Statement stmt(raw);
    stmt.bind(1, number).bind(2, task.title).bind(3, task.description);
    stmt.bind(4, join_labels(task.labels)).bind(5, join_notes(task.notes));
    return finish(stmt, "cannot update the search index");
  }

  /// Splits search text into the tokens the index holds, using FTS5's own unicode61 tokenizer
  /// (same folding and diacritics removal as the index), so "Café" finds "cafe".
  std::vector<std::string> tokenize(std::string_view text) {
    constexpr std::size_t kMaxText = 1000;
    constexpr std::size_t kMaxTokens = 32;
    if (text.size() > kMaxText) {
      std::size_t cut = kMaxText;
      while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;  // UTF-8 boundary
      text = text.substr(0, cut);
    }
    std::vector<std::string> tokens;
    if (load_tokenizer()) {
      auto on_token = [](void* context, int, const char* token, int length, int, int) -> int {
        auto* out = static_cast<std::vector<std::string>*>(context);
        if (length > 0 && out->size() < kMaxTokens) out->emplace_back(token, static_cast<std::size_t>(length));
        return SQLITE_OK;
      };
      tokenizer_api_.xTokenize(tokenizer_, &tokens, FTS5_TOKENIZE_QUERY, text.data(), static_cast<int>(text.size()),
                               on_token);
    } else {
      // Fallback: ASCII letters and digits (and any non-ASCII byte) form words.
      std::string current;
      for (char c : text) {
        auto byte = static_cast<unsigned char>(c);
        if (byte >= 0x80 || (byte >= '0' && byte <= '9') || (byte >= 'a' && byte <= 'z') ||
            (byte >= 'A' && byte <= 'Z')) {
          current += static_cast<char>(byte >= 'A' && byte <= 'Z' ? byte + 32 : byte);
        } else if (!current.empty()) {
          tokens.push_back(std::move(current));
          current.clear();
        }
      }
      if (!current.empty()) tokens.push_back(std::move(current));
      if (tokens.size() > kMaxTokens) tokens.resize(kMaxTokens);
    }
    // Duplicates add nothing to an AND query.
    std::vector<std::string> unique;
    for (auto& token : tokens)
      if (std::find(unique.begin(), unique.end(), token) == unique.end()) unique.push_back(std::move(token));
    return unique;
  }

  /// The FTS5 query for search words: each a quoted prefix ("word"*), all required.
  static std::string match_expression(const std::vector<std::string>& tokens) {
    std::string match;
    for (const auto& token : tokens) {
      if (!match.empty()) match += ' ';
      match += '"';
      for (char c : token) {
        if (c == '"') match += '"';
        match += c;
      }
      match += "\"*";
    }
    return match;
  }

  /// The task whose id the search text is (within the filter), which ranks first.
  Result<std::optional<Task>> exact_id_match(std::string_view text, const TaskFilter& filter) {
    auto id = normalize_task_id(trim(text));
    if (!id) return std::optional<Task>();
    std::vector<SqlValue> params{*id};
    std::string where = " WHERE t.id = ?";
    std::string rest;
    append_filter(filter, true, rest, params);
    if (!rest.empty()) where += " AND " + rest.substr(std::string_view(" WHERE ").size());
    CT_TRY_ASSIGN(std::vector<Task> found, collect_tasks(select_tasks() + where, params, "cannot search"));
    if (found.empty()) return std::optional<Task>();
    return std::optional<Task>(std::move(found.front()));
  }

  bool load_tokenizer() {
    if (tokenizer_ != nullptr) return true;
    if (tokenizer_failed_) return false;
    tokenizer_failed_ = true;
    fts5_api* api = nullptr;
    sqlite3_stmt* stmt = nullptr;
    if (sqlite3_prepare_v2(db_, "SELECT fts5(?1)", -1, &stmt, nullptr) == SQLITE_OK) {
      sqlite3_bind_pointer(stmt, 1, static_cast<void*>(&api), "fts5_api_ptr", nullptr);
      sqlite3_step(stmt);
    }
    sqlite3_finalize(stmt);
    if (api == nullptr || api->iVersion < 2) return false;
    void* user_data = nullptr;
    if (api->xFindTokenizer(api, "unicode61", &user_data, &tokenizer_api_) != SQLITE_OK) return false;
    const char* args[] = {"remove_diacritics", "2"};
    if (tokenizer_api_.xCreate(user_data, args, 2, &tokenizer_) != SQLITE_OK || tokenizer_ == nullptr) {
      tokenizer_ = nullptr;
      return false;
    }
    tokenizer_failed_ = false;
    return true;
  }

  Result<std::int64_t> user_version() {
    CT_TRY_ASSIGN(sqlite3_stmt* raw, prepare("PRAGMA user_version"));
    Statement stmt(raw);
    CT_TRY_ASSIGN(bool row, step(stmt, "cannot read the schema version"));
    if (!row) return fail(ErrorCode::Internal, "PRAGMA user_version returned no row");
    return stmt.integer(0);
  }

  Error newer_schema(std::int64_t version) const {
    return Error(ErrorCode::FileError,
                 file_.string() + " was created by a newer ct (schema version " + std::to_string(version) +
                     ", this binary knows " + std::to_string(sqlite_schema_version()) + "); upgrade ct")
        .with_fix("install the latest ct and retry");
  }

  /// Names of the store's tables (virtual tables' shadow tables included) and indexes.
  Result<std::set<std::string>> table_names() {
    CT_TRY_ASSIGN(sqlite3_stmt* raw, prepare("SELECT name FROM sqlite_schema WHERE type IN ('table', 'index')"));
    Statement stmt(raw);
    std::set<std::string> names;
    CT_TRY(for_each_row(stmt, "cannot read the schema", [&] { names.emplace(stmt.text(0)); }));
    return names;
  }

  Error inconsistent(std::string why) const {
    return Error(ErrorCode::FileError, file_.string() + " " + std::move(why) + "; ct neither migrates nor writes it")
        .with_fix(std::string(kCorruptFix))
        .with_detail("damaged", true);
  }

  /// The schema version, checked against what the file holds: a version the tables contradict
  /// (a tampered user_version) is refused once, clearly, before anything is written or backed up.
  Result<std::int64_t> checked_version(bool create) {
    auto version = user_version();
    if (!version) {
      const int rc = sqlite3_errcode(db_) & 0xff;
      if ((rc == SQLITE_CANTOPEN || rc == SQLITE_READONLY) && read_only_)
        // A WAL store is read through its -shm index; where the directory cannot be written that
        // file cannot be created (open_sqlite_store then reads the store as immutable).
        return fail(std::move(version.error()).with_detail("readOnlyDirectory", true));
      if (rc != SQLITE_NOTADB && rc != SQLITE_CORRUPT) return std::unexpected(std::move(version.error()));
      return fail(Error(ErrorCode::FileError, file_.string() + " is not a task database (" + version.error().message +
                                                  ")")
                      .with_fix(std::string(kCorruptFix))
                      .with_detail("damaged", true));
    }
    CT_TRY_ASSIGN(std::set<std::string> tables, table_names());
    const std::int64_t target = sqlite_schema_version();
    if (*version == 0 && tables.empty()) {
      if (create) return 0;
      std::error_code ec;
      const bool empty_file = std::filesystem::file_size(file_, ec) == 0;
      return fail(Error(ErrorCode::FileError,
                        file_.string() + (empty_file ? " is empty (truncated, or ct init was interrupted)"
                                                     : " holds no CLEO tables"))
                      .with_fix("cleo_mutate {domain:'system', operation:'restore'} brings back the newest good backup; "
                                "with no backup, cleo_mutate {domain:'system', operation:'init'} starts an empty store")
                      .with_detail("damaged", true));
    }
    if (*version > target) return fail(newer_schema(*version));
    // The version the tables show: the last step whose table exists, with every earlier one.
    std::int64_t shown = 0;
    bool consistent = true;
    for (const auto& migration : sqlite::schema_steps()) {
      const bool present = tables.contains(migration.creates);
      if (present && shown == migration.version - 1) shown = migration.version;
      consistent = consistent && present == (migration.version <= *version);
    }
    if (*version < 0 || !consistent) {
      return fail(inconsistent("says schema version " + std::to_string(*version) + " but holds the tables of version " +
                               std::to_string(shown))
                      .with_detail("schemaVersion", *version)
                      .with_detail("tablesOfVersion", shown));
    }
    return *version;
  }

  Result<void> migrate(const SqliteOptions& options, std::int64_t version) {
    const bool create = options.create;
    const std::int64_t target = sqlite_schema_version();
    if (version == target) return {};
    if (version == 0 && !create) {
      return fail(Error(ErrorCode::NotInitialized, file_.string() + " holds no CLEO task database")
                      .with_fix("cleo_mutate {domain:'system', operation:'init'}"));
    }
    CT_TRY(begin(TxKind::Write));
    auto result = [&]() -> Result<void> {
      // Another process may have migrated while we waited for the lock.
      CT_TRY_ASSIGN(std::int64_t current, user_version());
      if (current > target) return fail(newer_schema(current));
      if (current >= 1 && current < target && !options.migration_backups.empty()) {
        // Under the write lock, before the first step: the copy (read through a second
        // connection) is the store exactly as the previous version left it.
        CT_TRY(backup_before_migration(options, current));
      }
      for (const auto& migration : sqlite::schema_steps()) {
        if (migration.version <= current) continue;
        CT_TRY(exec(migration.sql,
                    "cannot upgrade the task database to schema version " + std::to_string(migration.version)));
      }
      if (current >= 1 && current < 2) CT_TRY(chain_existing_audit_rows());
      std::string pragma = "PRAGMA user_version = " + std::to_string(target);
      return exec(pragma.c_str(), "cannot record the schema version");
    }();
    if (!result) {
      rollback();
      return result;
    }
    return commit();
  }

  /// The pre-migration copy. A copy of this version already taken since the store last changed
  /// is reused: an upgrade that keeps failing (a full disk) must not pile up backups.
  Result<void> backup_before_migration(const SqliteOptions& options, std::int64_t current) {
    namespace fs = std::filesystem;
    const std::string note = "pre-migrate-v" + std::to_string(current);
    std::error_code ec;
    fs::create_directories(options.migration_backups, ec);
    const auto changed = fs::last_write_time(file_, ec);
    for (const auto& entry : fs::directory_iterator(options.migration_backups, ec)) {
      const std::string name = entry.path().filename().string();
      std::error_code time_ec;
      if (name.ends_with("-" + note + ".db") && !ec && entry.last_write_time(time_ec) >= changed && !time_ec) {
        log::warn("upgrading " + file_.string() + " from schema version " + std::to_string(current) +
                  "; the store as it was is already saved in " + entry.path().string());
        return {};
      }
    }
    const TimeMs now = options.clock ? options.clock->now() : SystemClock().now();
    auto copy = reserve_backup_path(options.migration_backups, now, note);
    const bool copied = copy && copy_sqlite_database(file_, *copy);
    if (copy && !copied) fs::remove(*copy, ec);
    if (!copied)
      return fail(Error(ErrorCode::FileError, "cannot back up " + file_.string() + " before upgrading its schema "
                                              "from version " + std::to_string(current) + "; nothing was changed")
                      .with_fix("check the free space and permissions of " + options.migration_backups.string() +
                                ", then run the command again"));
    log::warn("upgrading " + file_.string() + " from schema version " + std::to_string(current) + " to " +
              std::to_string(sqlite_schema_version()) + "; the store as it was is saved in " + copy->string());
    return {};
  }

  /// v1 → v2: rows written before the chain existed get their hashes, oldest first.
  Result<void> chain_existing_audit_rows() {
    std::string previous;
    AuditQuery query;
    query.ascending = true;
    query.limit = -1;
    CT_TRY_ASSIGN(std::vector<AuditEntry> rows, read_audit(query));
    CT_TRY_ASSIGN(sqlite3_stmt* raw, prepare("UPDATE audit SET hash = ?1 WHERE seq = ?2"));
    for (const auto& row : rows) {
      previous = audit_hash(previous, row);
      Statement stmt(raw);
      stmt.bind(1, previous).bind(2, row.seq);
      CT_TRY(finish(stmt, "cannot chain the audit trail"));
    }
    return {};
  }

  // -- housekeeping helpers -------------------------------------------------------------------

  Result<std::int64_t> meta_int(std::string_view key) {
    CT_TRY_ASSIGN(sqlite3_stmt* raw, prepare("SELECT CAST(value AS INTEGER) FROM meta WHERE key = ?1"));
    Statement stmt(raw);
    stmt.bind(1, key);
    CT_TRY_ASSIGN(bool row, step(stmt, "cannot read the meta table"));
    return row ? stmt.integer(0) : 0;
  }

  /// Replaces the rows of `table` with those of the same table in `source` (column by column,
  /// values bound as they are stored). Rowids are kept where they carry meaning (insertion
  /// order of audit changes, the search index's link to its task).
  Result<void> copy_table(sqlite3* source, const std::string& table, bool is_virtual, bool without_rowid,
                          const std::filesystem::path& file) {
    std::string quoted = "\"";
    for (char c : table) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
    quoted += "\"";
    std::vector<std::string> columns;
    bool integer_key = false;
    {
      std::string sql = "PRAGMA table_info(" + quoted + ")";
      CT_TRY_ASSIGN(sqlite3_stmt* raw, prepare(sql));
      Statement stmt(raw);
      int keys = 0;
      bool integer_first_key = false;
      CT_TRY(for_each_row(stmt, "cannot read the schema", [&] {
        columns.push_back("\"" + std::string(stmt.text(1)) + "\"");
        if (stmt.integer(5) > 0) {
          ++keys;
          integer_first_key = to_lower_ascii(stmt.text(2)) == "integer";
        }
      }));
      integer_key = keys == 1 && integer_first_key && !without_rowid;
    }
    if (columns.empty()) return {};
    if ((is_virtual || !without_rowid) && !integer_key) columns.insert(columns.begin(), "rowid");
    std::string list;
    std::string marks;
    for (std::size_t i = 0; i < columns.size(); ++i) {
      list += (i ? ", " : "") + columns[i];
      marks += (i ? ", ?" : "?") + std::to_string(i + 1);
    }
    std::string clear = "DELETE FROM " + quoted;
    CT_TRY(exec(clear.c_str(), "cannot restore " + table));

    sqlite3_stmt* select = nullptr;
    std::string select_sql = "SELECT " + list + " FROM " + quoted;
    int rc = sqlite3_prepare_v2(source, select_sql.c_str(), -1, &select, nullptr);
    std::unique_ptr<sqlite3_stmt, int (*)(sqlite3_stmt*)> select_guard(select, sqlite3_finalize);
    // A table the backup does not have (it cannot happen at the same schema version) stays empty.
    if (rc != SQLITE_OK) return fail(sqlite_error(rc, sqlite3_errmsg(source), "cannot read " + table + " from the backup", file));
    sqlite3_stmt* insert = nullptr;
    std::string insert_sql = "INSERT INTO " + quoted + "(" + list + ") VALUES(" + marks + ")";
    rc = sqlite3_prepare_v2(db_, insert_sql.c_str(), -1, &insert, nullptr);
    std::unique_ptr<sqlite3_stmt, int (*)(sqlite3_stmt*)> insert_guard(insert, sqlite3_finalize);
    if (rc != SQLITE_OK) return fail(error(rc, "cannot restore " + table));
    const int count = static_cast<int>(columns.size());
    while ((rc = sqlite3_step(select)) == SQLITE_ROW) {
      for (int i = 0; i < count; ++i) sqlite3_bind_value(insert, i + 1, sqlite3_column_value(select, i));
      int written = sqlite3_step(insert);
      sqlite3_reset(insert);
      if (written != SQLITE_DONE) return fail(error(written, "cannot restore " + table));
    }
    if (rc != SQLITE_DONE) return fail(sqlite_error(rc, sqlite3_errmsg(source), "cannot read " + table + " from the backup", file));
    return {};
  }

  sqlite3* db_;
  std::filesystem::path file_;
  bool read_only_ = false;
  dev_t device_ = 0;
  ino_t inode_ = 0;
  off_t size_ = 0;
  std::unordered_map<std::string, sqlite3_stmt*, StringHash, std::equal_to<>> statements_;
  fts5_tokenizer tokenizer_api_{};
  Fts5Tokenizer* tokenizer_ = nullptr;
  bool tokenizer_failed_ = false;
};

}  // namespace

std::int64_t sqlite_schema_version() { return sqlite::schema_steps().back().version; }

std::vector<MigrationStep> sqlite_migrations() {
  std::vector<MigrationStep> steps;
  for (const auto& migration : sqlite::schema_steps()) steps.push_back({migration.version, migration.description});
  return steps;
}

Result<SqliteFileInfo> inspect_sqlite_file(const std::filesystem::path& file, bool check) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(file, ec))
    return fail(Error(ErrorCode::NotFound, file.string() + " is not a file").with_fix("check the path"));
  sqlite3* db = nullptr;
  int rc = sqlite3_open_v2(file.c_str(), &db, SQLITE_OPEN_READONLY, nullptr);
  std::unique_ptr<sqlite3, int (*)(sqlite3*)> guard(db, sqlite3_close_v2);
  if (rc != SQLITE_OK) {
    Error error = sqlite_error(rc, db ? sqlite3_errmsg(db) : sqlite3_errstr(rc), "cannot open", file);
    error.code = ErrorCode::FileError;
    return fail(std::move(error));
  }
  auto version = read_user_version(db);
  if (!version) {
    return fail(Error(ErrorCode::FileError, file.string() + " is not a SQLite database (" + sqlite3_errmsg(db) + ")")
                    .with_fix("pick another file"));
  }
  SqliteFileInfo info;
  info.schema_version = *version;
  {
    sqlite3_stmt* count = nullptr;
    if (sqlite3_prepare_v2(db, "SELECT count(*) FROM sqlite_schema WHERE type = 'table'", -1, &count, nullptr) ==
            SQLITE_OK &&
        sqlite3_step(count) == SQLITE_ROW)
      info.tables = sqlite3_column_int64(count, 0);
    sqlite3_finalize(count);
  }
  if (!check) return info;
  sqlite3_stmt* stmt = nullptr;
  rc = sqlite3_prepare_v2(db, "PRAGMA quick_check", -1, &stmt, nullptr);
  std::unique_ptr<sqlite3_stmt, int (*)(sqlite3_stmt*)> stmt_guard(stmt, sqlite3_finalize);
  if (rc != SQLITE_OK) {
    info.problems.push_back(sqlite3_errmsg(db));
    return info;
  }
  while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
    std::string line = column_text(stmt, 0).empty() ? "" : std::string(column_text(stmt, 0));
    if (is_problem_line(line)) info.problems.push_back(std::move(line));
  }
  if (rc != SQLITE_DONE) info.problems.push_back(sqlite3_errmsg(db));
  return info;
}

Result<void> copy_sqlite_database(const std::filesystem::path& source, const std::filesystem::path& target) {
  // Opened read-write but query-only: a read-only connection to a WAL database would leave its
  // -wal and -shm files behind; this one removes them when it closes, and writes nothing.
  sqlite3* from = nullptr;
  int rc = sqlite3_open_v2(source.c_str(), &from, SQLITE_OPEN_READWRITE, nullptr);
  std::unique_ptr<sqlite3, int (*)(sqlite3*)> from_guard(from, sqlite3_close_v2);
  if (rc == SQLITE_OK) sqlite3_exec(from, "PRAGMA query_only = 1", nullptr, nullptr, nullptr);
  if (rc != SQLITE_OK) {
    Error error = sqlite_error(rc, from ? sqlite3_errmsg(from) : sqlite3_errstr(rc), "cannot open", source);
    error.code = ErrorCode::FileError;
    return fail(std::move(error));
  }
  sqlite3* to = nullptr;
  rc = sqlite3_open_v2(target.c_str(), &to, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr);
  std::unique_ptr<sqlite3, int (*)(sqlite3*)> to_guard(to, sqlite3_close_v2);
  if (rc != SQLITE_OK) {
    Error error = sqlite_error(rc, to ? sqlite3_errmsg(to) : sqlite3_errstr(rc), "cannot create", target);
    error.code = ErrorCode::FileError;
    return fail(std::move(error));
  }
  sqlite3_backup* backup = sqlite3_backup_init(to, "main", from, "main");
  if (!backup) {
    Error error = sqlite_error(sqlite3_errcode(to), sqlite3_errmsg(to), "cannot copy", source);
    error.code = ErrorCode::FileError;
    return fail(std::move(error));
  }
  rc = sqlite3_backup_step(backup, -1);
  sqlite3_backup_finish(backup);
  if (rc != SQLITE_DONE) {
    Error error = sqlite_error(rc, rc == SQLITE_NOTADB ? "not a database" : sqlite3_errmsg(to), "cannot copy", source);
    error.code = ErrorCode::FileError;
    to_guard.reset();
    std::error_code ec;
    std::filesystem::remove(target, ec);
    return fail(std::move(error));
  }
  return {};
}

Result<std::unique_ptr<Store>> open_sqlite_store(const std::filesystem::path& file, const SqliteOptions& options) {
  std::error_code ec;
  const auto status = std::filesystem::status(file, ec);
  const bool exists = std::filesystem::exists(status);
  if (!exists && !options.create) {
    return fail(Error(ErrorCode::NotInitialized, "no task database at " + file.string())
                    .with_fix("cleo_mutate {domain:'system', operation:'init'}"));
  }
  if (exists && std::filesystem::is_directory(status)) {
    return fail(Error(ErrorCode::FileError, file.string() + " is a directory, not a task database")
                    .with_fix("move " + file.string() + " aside, then cleo_mutate {domain:'system', operation:'init'}"));
  }
  if (!exists && file.has_parent_path()) {
    std::filesystem::create_directories(file.parent_path(), ec);
    if (ec) {
      return fail(Error(ErrorCode::FileError, "cannot create " + file.parent_path().string() + ": " + ec.message())
                      .with_fix("check the permissions of " + file.parent_path().string()));
    }
  }
  auto open = [&](const std::string& name, int flags) -> Result<std::unique_ptr<SqliteStore>> {
    sqlite3* db = nullptr;
    int rc = sqlite3_open_v2(name.c_str(), &db, flags | SQLITE_OPEN_NOMUTEX, nullptr);
    if (rc != SQLITE_OK) {
      std::string detail = db != nullptr ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
      const int system_errno = db != nullptr ? sqlite3_system_errno(db) : 0;
      sqlite3_close_v2(db);
      Error error = sqlite_error(rc, detail, "cannot open the task database", file, system_errno);
      if (error.code == ErrorCode::Internal) error.code = ErrorCode::FileError;
      return fail(std::move(error));
    }
    auto store = std::make_unique<SqliteStore>(db, file);
    CT_TRY(store->configure(options));
    return store;
  };
  auto store = open(file.string(), options.read_only ? SQLITE_OPEN_READONLY
                                                     : SQLITE_OPEN_READWRITE | (options.create ? SQLITE_OPEN_CREATE : 0));
  if (store) return std::unique_ptr<Store>(std::move(*store));
  // A store that cannot be written (read-only filesystem, permissions) is opened read-only, and
  // writes then fail saying so. Where its directory cannot be written, SQLite cannot create the
  // -shm index a WAL store is read through: the store is read as immutable — nobody can be
  // writing to a WAL store whose index nobody could create.
  if (store.error().details["readOnlyDirectory"] != json::Value(true)) return std::unexpected(std::move(store.error()));
  CT_TRY_ASSIGN(std::unique_ptr<SqliteStore> immutable,
                open("file:" + uri_path(std::filesystem::absolute(file, ec)) + "?immutable=1",
                     SQLITE_OPEN_READONLY | SQLITE_OPEN_URI));
  return std::unique_ptr<Store>(std::move(immutable));
}

}  // namespace ct
