// The PostgreSQL backend's connection: one libpq connection, statements prepared once per
// connection and cached by their text, parameters sent as text, results read through Rows, and
// the one mapping from a server error (SQLSTATE) to our error codes. Internal to the PostgreSQL
// backend (engines/pg_*).
#pragma once

#include <libpq-fe.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/error.h"
#include "core/text.h"
#include "engines/store/sql_query.h"
#include "engines/store/store_backend.h"

namespace ct::pg {

using ct::redact_url;  // engines/store/store_backend.h

/// The rows of one statement's result. Columns are read as text, as libpq delivers them.
class Rows {
 public:
  Rows() = default;
  explicit Rows(PGresult* result) : result_(result, &PQclear) {}

  int size() const { return result_ ? PQntuples(result_.get()) : 0; }
  bool empty() const { return size() == 0; }
  bool is_null(int row, int column) const { return PQgetisnull(result_.get(), row, column) != 0; }
  std::string_view text(int row, int column) const {
    return {PQgetvalue(result_.get(), row, column),
            static_cast<std::size_t>(PQgetlength(result_.get(), row, column))};
  }
  std::int64_t integer(int row, int column) const;
  double real(int row, int column) const;
  std::optional<std::int64_t> optional_int(int row, int column) const {
    if (is_null(row, column)) return std::nullopt;
    return integer(row, column);
  }
  std::optional<double> optional_real(int row, int column) const {
    if (is_null(row, column)) return std::nullopt;
    return real(row, column);
  }
  const PGresult* get() const { return result_.get(); }
  /// Rows changed by an INSERT, UPDATE or DELETE.
  std::int64_t affected() const;

 private:
  std::shared_ptr<PGresult> result_;
};

/// E_STORE_UNAVAILABLE (retryable): the server at `location` (never a password) is down, restarting
/// or unreachable.
Error unavailable(std::string_view location, std::string message);

/// What the SQLSTATE of a failed statement means to us.
Error server_error(std::string_view sqlstate, std::string_view message, std::string_view what,
                   std::string_view location);

class Connection {
 public:
  /// Connects (libpq's URL or key=value form), sets UTF-8, the schema search path and how long a
  /// statement waits for a lock. A server that is down, restarting or unreachable:
  /// E_STORE_UNAVAILABLE; a refused user or database: E_FILE_ERROR — both naming the server (never
  /// the password), with the fix.
  static Result<std::unique_ptr<Connection>> open(const std::string& url, const std::string& schema,
                                                  int lock_timeout_ms);
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  /// Runs one statement with its values (sent as text), prepared on first use and cached by its
  /// text. Its placeholders are $1, $2, … or the roles' ?1, ?2, … (engines/store/sql_runner.h),
  /// written as $N when it is prepared.
  Result<Rows> query(std::string_view sql, std::span<const sql::Value> args, std::string_view what);
  Result<Rows> query(std::string_view sql, std::string_view what) { return query(sql, {}, what); }
  /// Runs SQL text (several statements, no parameters) without preparing it: schema steps and
  /// transaction control.
  Result<void> exec(std::string_view sql, std::string_view what) {
    CT_TRY(script(sql, what));
    return {};
  }
  /// exec(), answering the rows of the last statement: several statements in one round trip.
  Result<Rows> script(std::string_view sql, std::string_view what);
  /// Opens a transaction by `statements` (no values; the writers' lock is among a write's), sent
  /// with the transaction's first statement in one round trip (libpq's pipeline mode), not on their
  /// own: every transaction is a round trip shorter, and a write holds its lock a round trip less.
  /// Their failure (the lock not granted in time: E_LOCK_TIMEOUT) is the failure of that statement
  /// and of every one after it, until the transaction is rolled back.
  /// `timed`: the round trip that sends them is added to opening_ms() (a write's: the lock's wait).
  void begin_with_next(std::vector<std::string> statements, bool timed = false);
  /// The time of every round trip that sent timed opening statements, in all (ms).
  double opening_ms() const { return opening_ms_; }
  /// Whether the opening statements wait for the first statement (nothing was sent yet).
  bool begin_pending() const { return !begin_.empty(); }
  /// The rows the last opening statement answered, sending the opening statements now (one round
  /// trip) when they still wait.
  Result<Rows> begun();
  /// Reads the transaction makes next, in this order (sql::Runner::read_ahead): sent with the next
  /// statement query() sends, after it and after the opening and deferred statements (a write's:
  /// under its lock), in the same round trip. query() then answers each of them from that, without
  /// a round trip, as long as it is asked for them in that order (one not asked for is skipped);
  /// anything else — another statement, a deferred one, a script, the transaction's end — forgets
  /// them. A failure among them is the failure of the query() that sent them. Outside a
  /// transaction nothing is kept (a failure would be no part of the statement that sent them).
  void read_ahead(std::span<const sql::Runner::StatementRef> statements);
  /// Forgets the opening and deferred statements not sent yet (a rollback: the server has nothing
  /// to undo of them) and a failure of the opening ones.
  void drop_unsent() {
    begin_.clear();
    deferred_.clear();
    begin_failure_.reset();
    forget_ahead();
  }
  /// The failure of the opening statements, if they failed.
  const std::optional<Error>& begin_failure() const { return begin_failure_; }
  /// ROLLBACK sent without waiting for its answer, which is read before the connection's next use:
  /// a read transaction ends while its caller goes on.
  void rollback_unanswered();
  /// Keeps a statement whose answer nobody reads (the audit trail's append, the last write of a
  /// write transaction; a task's update) to be sent with the next one: query() in the same round
  /// trip as its own statement, script() first, and commit() in the same round trip as COMMIT — a
  /// round trip fewer under the writers' lock. A failure of it is the failure of what sends it:
  /// `instead` when the statement divides by zero (22012, its way to refuse: `1 / count(*)` of
  /// the rows it changed), else the server's error. Outside a transaction nothing would send it:
  /// it is sent now, and its failure is the answer.
  [[nodiscard]] Result<void> defer(std::string_view sql, std::span<const sql::Value> args, std::string_view what,
                                   std::optional<Error> instead = std::nullopt);
  /// Forgets the statements deferred and not sent (a rollback).
  void drop_deferred() { deferred_.clear(); }
  /// COMMIT, after the statements deferred, in one round trip (libpq's pipeline mode).
  Result<void> commit(std::string_view what);
  /// Whether a transaction is open (or failed and not yet rolled back), or opening statements wait.
  bool in_transaction();
  /// Whether the open transaction failed (a statement failed; only a rollback ends it).
  bool transaction_failed();
  /// The connection broke (server restart, network): reconnects once, outside a transaction;
  /// E_STORE_UNAVAILABLE while the server does not answer.
  Result<void> ensure_connected();
  /// LISTENs on `channel` from now on, again after a reconnect (outside a transaction).
  Result<void> listen(const std::string& channel);
  /// Waits until a notification on a channel this connection listens on arrives whose payload is
  /// `payload`, at most `timeout`, or until `interrupt` (a descriptor, -1 for none) is readable.
  /// True when such a notification came (one already read by an earlier statement counts); false
  /// on the timeout or the interrupt. Outside a transaction.
  Result<bool> wait_notification(std::string_view payload, std::chrono::milliseconds timeout, int interrupt);
  /// "ann@db:5432/cleo" — for messages.
  const std::string& location() const { return location_; }
  const std::string& schema() const { return schema_; }
  PGconn* raw() { return conn_; }

 private:
  Connection(PGconn* conn, std::string url, std::string schema, int lock_timeout_ms);
  Result<void> configure();
  /// A new session on the same URL (prepared statements and deferred ones gone), configured.
  Result<void> reconnect();
  Error failure(const PGresult* result, std::string_view what) const;
  /// The name of `sql` prepared on this connection (prepared now if new); nullopt past the cache's bound.
  Result<std::optional<std::string>> prepared(std::string_view sql, int count, std::string_view what);
  /// Runs one statement whose values are text (nullopt: NULL).
  Result<Rows> run(std::string_view sql, const std::vector<std::optional<std::string>>& values, std::string_view what);
  Result<void> send_deferred();
  /// Reads the answer of a statement sent without waiting for it (rollback_unanswered()).
  void settle();
  /// One statement of a pipeline; `values` null for one without values (sent unprepared).
  struct Step {
    std::string_view sql;
    const std::vector<std::optional<std::string>>* values = nullptr;
    std::string_view what;
    Rows* into = nullptr;  // where its rows go, if anyone reads them
    const std::optional<Error>* instead = nullptr;  // its failure on 22012 (defer())
  };
  /// Sends `steps` in one round trip (pipeline mode) and reads every answer: the first failure is
  /// the result (the steps after it were skipped; the transaction is then failed), and a failure
  /// among the first `opening` steps is kept (begin_failure_).
  Result<void> pipeline(std::span<const Step> steps, std::size_t opening);
  /// The opening statements (begin_with_next()), the deferred ones, `last` and the reads ahead in
  /// one pipeline.
  Result<void> send_with_unsent(Step last);
  /// pipeline(), its time added to opening_ms() when it sends timed opening statements.
  Result<void> send_pipeline(std::span<const Step> steps, std::size_t opening);

  struct Deferred {
    std::string sql;
    std::vector<std::optional<std::string>> values;
    std::string what;
    std::optional<Error> instead;
  };

  PGconn* conn_;
  std::string url_;  // as given (PQping asks the server behind it whether it is up)
  std::string schema_;
  int lock_timeout_ms_;
  std::string location_;
  std::unordered_map<std::string, std::string, StringHash, std::equal_to<>> prepared_;  // SQL text → statement name
  std::vector<std::string> channels_;  // LISTENed on; again after a reconnect
  std::vector<Deferred> deferred_;     // defer()'s statements, not sent yet
  std::vector<std::string> begin_;     // begin_with_next()'s statements, not sent yet
  void forget_ahead() {
    ahead_.clear();
    ahead_sent_ = false;
  }
  /// The rows of read_ahead()'s statement that is this one (the ones before it skipped), or
  /// nullopt (then every one is forgotten). Only once they were sent.
  std::optional<Rows> answer_ahead(std::string_view sql, const std::vector<std::optional<std::string>>& values);
  struct Ahead {
    std::string sql;
    std::vector<std::optional<std::string>> values;
    std::string what;
    Rows rows;
  };
  std::vector<Ahead> ahead_;  // read_ahead()'s statements, to send or sent, in order
  bool ahead_sent_ = false;   // sent: their rows answer query()
  Rows begun_;                         // the answer of the last of them, once sent
  std::optional<Error> begin_failure_;
  bool unanswered_ = false;            // a statement's answer waits to be read (settle())
  bool opening_timed_ = false;
  double opening_ms_ = 0;
};

/// A text[] literal ({"a","b",NULL}) for one array parameter: a whole list in one statement.
std::string text_array(const std::vector<std::optional<std::string>>& items);
std::string text_array(const std::vector<std::string>& items);

/// An identifier quoted for SQL ("my schema" → "\"my schema\"").
std::string quote_identifier(std::string_view name);

}  // namespace ct::pg
