#include "engines/store/postgres/pg_connection.h"

#include <poll.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>

namespace ct::pg {

std::int64_t Rows::integer(int row, int column) const {
  std::string_view value = text(row, column);
  std::int64_t out = 0;
  // Booleans come back as "t"/"f" when a query returns one.
  if (value == "t") return 1;
  std::from_chars(value.data(), value.data() + value.size(), out);
  return out;
}

double Rows::real(int row, int column) const {
  std::string value(text(row, column));
  return std::strtod(value.c_str(), nullptr);
}

std::int64_t Rows::affected() const {
  if (!result_) return 0;
  const char* tuples = PQcmdTuples(result_.get());
  return tuples == nullptr || *tuples == '\0' ? 0 : std::strtoll(tuples, nullptr, 10);
}

Error unavailable(std::string_view location, std::string message) {
  return Error(ErrorCode::StoreUnavailable, std::move(message))
      .with_fix("retry in a few seconds: the PostgreSQL server at " + std::string(location) +
                " is down, restarting or unreachable; if it stays so, start it or check the network to it")
      .with_detail("server", std::string(location));
}

Error server_error(std::string_view sqlstate, std::string_view message, std::string_view what,
                   std::string_view location) {
  std::string text = std::string(what) + ": " + std::string(message) + " (PostgreSQL " + std::string(location) + ")";
  // 55P03 lock_not_available (lock_timeout), 40001 serialization_failure, 40P01 deadlock_detected,
  // 57014 query_canceled (statement_timeout): another writer held what this one needed.
  if (sqlstate == "55P03" || sqlstate == "40001" || sqlstate == "40P01" || sqlstate == "57014")
    return Error(ErrorCode::LockTimeout, "the store is locked by another writer; retry")
        .with_fix("retry the call; if it keeps happening, a person runs `ct config set storage.busyTimeoutMs 15000` "
                  "in a terminal (agents cannot set storage.busyTimeoutMs)")
        .with_detail("postgresql", std::string(sqlstate));
  // 08 connection_exception (the connection broke), 57P01 admin_shutdown, 57P02 crash_shutdown,
  // 57P03 cannot_connect_now (starting up, in recovery), 57P05 idle_session_timeout, 53300
  // too_many_connections: the server is down, restarting or full for now — the next call
  // reconnects.
  if (sqlstate.starts_with("08") || sqlstate == "57P01" || sqlstate == "57P02" || sqlstate == "57P03" ||
      sqlstate == "57P05" || sqlstate == "53300")
    return unavailable(location, std::move(text)).with_detail("postgresql", std::string(sqlstate));
  if (sqlstate == "57P04")  // database_dropped
    return Error(ErrorCode::FileError, std::move(text))
        .with_fix("the database of storage.url / CLEO_DATABASE_URL was dropped: restore it, or point storage.url at "
                  "another one");
  if (sqlstate == "53100")
    return Error(ErrorCode::FileError, std::string(what) + ": the database server's disk is full (" +
                                           std::string(location) + ")")
        .with_fix("free disk space on the PostgreSQL server and retry");
  if (sqlstate == "25006" || sqlstate == "42501")
    return Error(ErrorCode::FileError, std::move(text))
        .with_fix("connect as a role that may write the store's schema (storage.url)")
        .with_detail("readOnly", true);
  if (sqlstate == "28000" || sqlstate == "28P01" || sqlstate == "3D000")
    return Error(ErrorCode::FileError, std::move(text))
        .with_fix("check the user, database and password of storage.url / CLEO_DATABASE_URL (a password belongs in "
                  "~/.pgpass or PGPASSWORD, not in the project's config)");
  return Error(ErrorCode::Internal, std::move(text)).with_detail("postgresql", std::string(sqlstate));
}

std::string text_array(const std::vector<std::optional<std::string>>& items) {
  std::string out = "{";
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out += ',';
    if (!items[i]) {
      out += "NULL";
      continue;
    }
    out += '"';
    for (char c : *items[i]) {
      if (c == '"' || c == '\\') out += '\\';
      out += c;
    }
    out += '"';
  }
  out += '}';
  return out;
}

std::string text_array(const std::vector<std::string>& items) {
  return text_array(std::vector<std::optional<std::string>>(items.begin(), items.end()));
}

std::string quote_identifier(std::string_view name) {
  std::string out = "\"";
  for (char c : name) {
    if (c == '"') out += '"';
    out += c;
  }
  out += '"';
  return out;
}

namespace {

std::string describe(PGconn* conn) {
  std::string out;
  if (const char* user = PQuser(conn); user && *user) out = std::string(user) + "@";
  const char* host = PQhost(conn);
  out += host && *host ? host : "localhost";
  if (const char* port = PQport(conn); port && *port) out += ":" + std::string(port);
  if (const char* db = PQdb(conn); db && *db) out += "/" + std::string(db);
  return out;
}

// libpq's messages end with a newline.
std::string trimmed(const char* message) {
  std::string out = message ? message : "";
  while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
  return out;
}

/// Why a connection could not be made, in our terms. libpq gives no SQLSTATE for it; asking the
/// server whether it accepts connections at all (PQping: no credentials needed) tells an outage —
/// no answer, or a server starting up or shutting down — from a refusal of this user or database.
Error connect_failure(const std::string& url, PGconn* conn, std::string what) {
  std::string message = std::move(what) + ": " + trimmed(PQerrorMessage(conn));
  std::string where = describe(conn);
  switch (PQping(url.c_str())) {
    case PQPING_NO_RESPONSE:
    case PQPING_REJECT:
      return unavailable(where, std::move(message));
    default:
      return Error(ErrorCode::FileError, std::move(message))
          .with_fix("check that storage.url / CLEO_DATABASE_URL names a user and database the server at " + where +
                    " accepts (a password belongs in ~/.pgpass or PGPASSWORD)")
          .with_detail("server", where);
  }
}

}  // namespace

Result<std::unique_ptr<Connection>> Connection::open(const std::string& url, const std::string& schema,
                                                     int lock_timeout_ms) {
  PGconn* conn = PQconnectdb(url.c_str());
  if (conn == nullptr)
    return fail(Error(ErrorCode::FileError, "cannot connect to PostgreSQL: out of memory"));
  if (PQstatus(conn) != CONNECTION_OK) {
    Error error = connect_failure(url, conn, "cannot connect to the PostgreSQL store at " + redact_url(url));
    PQfinish(conn);
    return fail(std::move(error));
  }
  std::unique_ptr<Connection> connection(new Connection(conn, url, schema, lock_timeout_ms));
  CT_TRY(connection->configure());
  return connection;
}

Connection::Connection(PGconn* conn, std::string url, std::string schema, int lock_timeout_ms)
    : conn_(conn), url_(std::move(url)), schema_(std::move(schema)), lock_timeout_ms_(lock_timeout_ms),
      location_(describe(conn)) {}

Connection::~Connection() { PQfinish(conn_); }

Result<void> Connection::configure() {
  // Notices (e.g. "schema already exists, skipping") are not for the agent's terminal.
  PQsetNoticeProcessor(conn_, [](void*, const char*) {}, nullptr);
  std::string setup = "SET client_encoding = 'UTF8'; SET client_min_messages = warning; SET search_path = " +
                      quote_identifier(schema_) + "; SET lock_timeout = " + std::to_string(std::max(1, lock_timeout_ms_)) +
                      "; SET idle_in_transaction_session_timeout = 600000";
  for (const auto& channel : channels_) setup += "; LISTEN " + quote_identifier(channel);
  return exec(setup, "cannot configure the PostgreSQL connection");
}

Result<void> Connection::listen(const std::string& channel) {
  settle();
  if (std::ranges::find(channels_, channel) != channels_.end()) return {};
  CT_TRY(exec("LISTEN " + quote_identifier(channel), "cannot listen for the store's changes"));
  channels_.push_back(channel);
  return {};
}

Result<bool> Connection::wait_notification(std::string_view payload, std::chrono::milliseconds timeout,
                                           int interrupt) {
  // Notifications that came with the results of earlier statements wait in libpq already.
  auto drained = [&] {
    bool matched = false;
    while (PGnotify* notice = PQnotifies(conn_)) {
      if (notice->extra != nullptr && payload == notice->extra) matched = true;
      PQfreemem(notice);
    }
    return matched;
  };
  settle();
  if (drained()) return true;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return false;
    pollfd fds[2] = {{PQsocket(conn_), POLLIN, 0}, {interrupt, POLLIN, 0}};
    const int ready = ::poll(fds, interrupt >= 0 ? 2 : 1, static_cast<int>(left.count()));
    if (ready < 0) {
      if (errno == EINTR) continue;
      return fail(ErrorCode::Internal, std::string("cannot wait for the store's changes: ") + std::strerror(errno));
    }
    if (interrupt >= 0 && (fds[1].revents & (POLLIN | POLLHUP | POLLERR)) != 0) return false;
    if ((fds[0].revents & (POLLIN | POLLHUP | POLLERR)) != 0) {
      if (PQconsumeInput(conn_) == 0) {
        std::string message = trimmed(PQerrorMessage(conn_));
        return fail(unavailable(location_, "lost the connection to the PostgreSQL store at " + location_ + ": " + message));
      }
      if (drained()) return true;  // a notification of another schema's store: wait on
    }
  }
}

Error Connection::failure(const PGresult* result, std::string_view what) const {
  const char* state = result ? PQresultErrorField(result, PG_DIAG_SQLSTATE) : nullptr;
  std::string message = trimmed(result ? PQresultErrorMessage(result) : nullptr);
  if (message.empty()) message = trimmed(PQerrorMessage(conn_));
  // No SQLSTATE: the connection itself failed (08006 connection_failure).
  if (state == nullptr || PQstatus(conn_) == CONNECTION_BAD) state = "08006";
  return server_error(state, message, what, location_);
}

bool Connection::in_transaction() {
  if (!begin_.empty()) return true;
  settle();
  auto status = PQtransactionStatus(conn_);
  return status == PQTRANS_INTRANS || status == PQTRANS_INERROR || status == PQTRANS_ACTIVE;
}

bool Connection::transaction_failed() {
  if (begin_failure_) return true;
  settle();
  return PQtransactionStatus(conn_) == PQTRANS_INERROR;
}

Result<void> Connection::ensure_connected() {
  settle();
  if (PQstatus(conn_) == CONNECTION_OK) return {};
  return reconnect();
}

void Connection::settle() {
  if (!unanswered_) return;
  unanswered_ = false;
  // Every result up to the end of the statement (a broken connection ends it too: the next use
  // finds the connection bad and reconnects).
  while (PGresult* result = PQgetResult(conn_)) PQclear(result);
}

void Connection::rollback_unanswered() {
  settle();
  if (PQsendQuery(conn_, "ROLLBACK") != 0) {
    unanswered_ = true;
    return;
  }
  (void)exec("ROLLBACK", "cannot roll back");  // not sent: the usual way (it says why, unread)
}

Result<void> Connection::reconnect() {
  unanswered_ = false;  // what was sent went with the old session
  PQreset(conn_);
  prepared_.clear();  // prepared statements die with the session
  drop_unsent();      // and the transaction they were for
  if (PQstatus(conn_) != CONNECTION_OK)
    return fail(connect_failure(url_, conn_, "lost the connection to the PostgreSQL store at " + location_));
  return configure();
}

namespace {

/// Every value as text (nullopt is NULL); numbers are written out here.
std::vector<std::optional<std::string>> as_text(std::span<const sql::Value> args) {
  std::vector<std::optional<std::string>> out(args.size());
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (const auto* text = std::get_if<std::string>(&args[i])) {
      out[i] = *text;
    } else if (const auto* number = std::get_if<std::int64_t>(&args[i])) {
      out[i] = std::to_string(*number);
    } else if (const auto* real = std::get_if<double>(&args[i])) {
      char buffer[32];
      std::snprintf(buffer, sizeof buffer, "%.17g", *real);
      out[i] = buffer;
    }
  }
  return out;
}

std::vector<const char*> pointers(const std::vector<std::optional<std::string>>& values) {
  std::vector<const char*> out(values.size(), nullptr);
  for (std::size_t i = 0; i < values.size(); ++i)
    if (values[i]) out[i] = values[i]->c_str();
  return out;
}

bool succeeded(const PGresult* result) {
  const auto status = PQresultStatus(result);
  return status == PGRES_TUPLES_OK || status == PGRES_COMMAND_OK;
}

/// The SQLSTATE a deferred statement refuses with (division_by_zero, Connection::defer()): told as
/// the error it stands for.
constexpr std::string_view kRefusalState = "22012";

bool refused(const PGresult* result, const std::optional<Error>* instead) {
  if (instead == nullptr || !*instead || result == nullptr) return false;
  const char* state = PQresultErrorField(result, PG_DIAG_SQLSTATE);
  return state != nullptr && std::string_view(state) == kRefusalState;
}

}  // namespace

Result<std::optional<std::string>> Connection::prepared(std::string_view sql, int count, std::string_view what) {
  // Statements are prepared once per connection; SQL built from many distinct filters stops being
  // cached past a bound, so that a long-lived server's session does not grow without end.
  constexpr std::size_t kMaxPrepared = 1000;
  auto found = prepared_.find(sql);
  if (found != prepared_.end()) return std::optional<std::string>(found->second);
  if (prepared_.size() >= kMaxPrepared) return std::optional<std::string>();
  std::string name = "ct" + std::to_string(prepared_.size() + 1);
  Rows made(PQprepare(conn_, name.c_str(), sql::dollar_placeholders(sql).c_str(), count, nullptr));
  // Not kept on failure: the caller sees the error, and a retry prepares again.
  if (PQresultStatus(made.get()) != PGRES_COMMAND_OK) return fail(failure(made.get(), what));
  prepared_.emplace(std::string(sql), name);
  return std::optional<std::string>(std::move(name));
}

Result<Rows> Connection::run(std::string_view sql, const std::vector<std::optional<std::string>>& values,
                             std::string_view what) {
  const int count = static_cast<int>(values.size());
  const std::vector<const char*> texts = pointers(values);
  CT_TRY_ASSIGN(std::optional<std::string> name, prepared(sql, count, what));
  PGresult* result = name ? PQexecPrepared(conn_, name->c_str(), count, texts.data(), nullptr, nullptr, 0)
                          : PQexecParams(conn_, sql::dollar_placeholders(sql).c_str(), count, nullptr, texts.data(),
                                         nullptr, nullptr, 0);
  Rows rows(result);
  if (!succeeded(result)) return fail(failure(result, what));
  return rows;
}

Result<Rows> Connection::query(std::string_view sql, std::span<const sql::Value> args, std::string_view what) {
  if (begin_failure_) return fail(*begin_failure_);
  settle();
  const std::vector<std::optional<std::string>> values = as_text(args);
  if (ahead_sent_) {
    // Read ahead, nothing else sent since: the same statement answers the same.
    if (auto rows = answer_ahead(sql, values)) return std::move(*rows);
  }
  if (begin_.empty() && deferred_.empty() && ahead_.empty()) return run(sql, values, what);
  // The opening and deferred statements, and the reads ahead, in the same round trip as this one.
  Rows rows;
  CT_TRY(send_with_unsent({sql, &values, what, &rows}));
  return rows;
}

std::optional<Rows> Connection::answer_ahead(std::string_view sql, const std::vector<std::optional<std::string>>& values) {
  for (std::size_t i = 0; i < ahead_.size(); ++i) {
    if (ahead_[i].sql != sql || ahead_[i].values != values) continue;
    Rows rows = std::move(ahead_[i].rows);
    ahead_.erase(ahead_.begin(), ahead_.begin() + static_cast<std::ptrdiff_t>(i) + 1);
    if (ahead_.empty()) ahead_sent_ = false;
    return rows;
  }
  forget_ahead();  // another statement: what they read may be what it changes
  return std::nullopt;
}

Result<void> Connection::defer(std::string_view sql, std::span<const sql::Value> args, std::string_view what,
                               std::optional<Error> instead) {
  forget_ahead();  // a write before the reads: they would read what it changes
  deferred_.push_back({std::string(sql), as_text(args), std::string(what), std::move(instead)});
  if (in_transaction()) return {};
  return send_deferred();  // autocommit: nothing else would send it
}

void Connection::read_ahead(std::span<const sql::Runner::StatementRef> statements) {
  if (ahead_sent_) forget_ahead();  // the reads announced before, sent and not asked for
  if (!in_transaction()) return;
  for (const auto& statement : statements)
    ahead_.push_back({std::string(statement.sql), as_text(statement.args), std::string(statement.what), Rows()});
}

void Connection::begin_with_next(std::vector<std::string> statements, bool timed) {
  settle();
  opening_timed_ = timed;
  forget_ahead();
  begin_ = std::move(statements);
  begun_ = Rows();
  begin_failure_.reset();
}

Result<Rows> Connection::begun() {
  if (begin_failure_) return fail(*begin_failure_);
  if (begin_.empty()) return begun_;
  settle();
  // Alone (one round trip): the rows of the last, which is what a caller asks for.
  forget_ahead();
  std::string script;
  for (const auto& statement : begin_) script += (script.empty() ? "" : "; ") + statement;
  begin_.clear();
  const auto sent = std::chrono::steady_clock::now();
  Rows result(PQexec(conn_, script.c_str()));
  if (opening_timed_)
    opening_ms_ += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - sent).count();
  auto status = PQresultStatus(result.get());
  if (status != PGRES_TUPLES_OK && status != PGRES_COMMAND_OK) {
    begin_failure_ = failure(result.get(), "cannot begin a transaction");
    return fail(*begin_failure_);
  }
  begun_ = result;
  return begun_;
}

Result<void> Connection::send_deferred() {
  // Taken out first: a failure leaves nothing to send again (the transaction failed with it).
  std::vector<Deferred> pending = std::move(deferred_);
  deferred_.clear();
  for (const auto& statement : pending) {
    if (!statement.instead) {
      CT_TRY(run(statement.sql, statement.values, statement.what));
      continue;
    }
    // Alone, so that its refusal is told as what it stands for.
    const Step step{statement.sql, &statement.values, statement.what, nullptr, &statement.instead};
    CT_TRY(pipeline(std::span<const Step>(&step, 1), 0));
  }
  return {};
}

Result<void> Connection::send_with_unsent(Step last) {
  // Taken out first: a failure leaves nothing to send again (the transaction failed with it).
  std::vector<std::string> opening = std::move(begin_);
  begin_.clear();
  std::vector<Deferred> pending = std::move(deferred_);
  deferred_.clear();
  std::vector<Step> steps;
  for (std::size_t i = 0; i < opening.size(); ++i)
    steps.push_back({opening[i], nullptr, "cannot begin a transaction", i + 1 == opening.size() ? &begun_ : nullptr});
  for (const auto& statement : pending)
    steps.push_back({statement.sql, &statement.values, statement.what, nullptr, &statement.instead});
  // The reads ahead go after everything written before them and after `last` (the caller runs them
  // next), a write's after its lock; `last`, when it is the first of them, is sent once.
  const bool last_ahead = !ahead_.empty() && !ahead_sent_ && ahead_.front().sql == last.sql &&
                          last.values != nullptr && ahead_.front().values == *last.values;
  if (!last_ahead) steps.push_back(last);
  if (!ahead_.empty() && !ahead_sent_) {
    ahead_sent_ = true;
    for (auto& ahead : ahead_) steps.push_back({ahead.sql, &ahead.values, ahead.what, &ahead.rows});
  } else {
    forget_ahead();
  }
  auto sent = send_pipeline(steps, opening.size());
  if (!sent) {
    forget_ahead();  // they answer nothing: the transaction failed
    return sent;
  }
  if (last_ahead) {
    // Answered as the first of them: its rows are the caller's, the others' wait for their turn.
    if (last.into) *last.into = std::move(ahead_.front().rows);
    ahead_.erase(ahead_.begin());
    if (ahead_.empty()) ahead_sent_ = false;
  }
  return sent;
}

Result<void> Connection::send_pipeline(std::span<const Step> steps, std::size_t opening) {
  if (opening == 0 || !opening_timed_) return pipeline(steps, opening);
  const auto sent = std::chrono::steady_clock::now();
  auto done = pipeline(steps, opening);
  opening_ms_ += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - sent).count();
  return done;
}

Result<void> Connection::pipeline(std::span<const Step> steps, std::size_t opening) {
  // Prepared before the pipeline (once per connection), so that it holds only executions.
  std::vector<std::optional<std::string>> names;
  for (const auto& step : steps) {
    if (!step.values) {
      names.emplace_back();
      continue;
    }
    CT_TRY_ASSIGN(std::optional<std::string> name, prepared(step.sql, static_cast<int>(step.values->size()), step.what));
    names.push_back(std::move(name));
  }
  if (PQenterPipelineMode(conn_) == 0) {
    // One by one, as a connection without pipelines must.
    static const std::vector<std::optional<std::string>> none;
    for (std::size_t i = 0; i < steps.size(); ++i) {
      auto rows = run(steps[i].sql, steps[i].values ? *steps[i].values : none, steps[i].what);
      if (!rows && steps[i].instead && *steps[i].instead &&
          rows.error().details["postgresql"] == json::Value(kRefusalState))
        rows = fail(**steps[i].instead);
      if (!rows) {
        if (i < opening) begin_failure_ = rows.error();
        return fail(std::move(rows.error()));
      }
      if (steps[i].into) *steps[i].into = std::move(*rows);
    }
    return {};
  }
  bool sent = true;
  for (std::size_t i = 0; i < steps.size() && sent; ++i) {
    const int count = steps[i].values ? static_cast<int>(steps[i].values->size()) : 0;
    const std::vector<const char*> texts = steps[i].values ? pointers(*steps[i].values) : std::vector<const char*>();
    sent = names[i] ? PQsendQueryPrepared(conn_, names[i]->c_str(), count, texts.data(), nullptr, nullptr, 0) != 0
                    : PQsendQueryParams(conn_, sql::dollar_placeholders(steps[i].sql).c_str(), count, nullptr,
                                        texts.data(), nullptr, nullptr, 0) != 0;
  }
  sent = sent && PQpipelineSync(conn_) != 0;
  // Every result up to the sync is read, whatever failed: the connection leaves pipeline mode idle.
  // The first failure is the answer (the statements after it were skipped; the transaction is
  // then in error, and the store rolls it back).
  std::optional<Error> first;
  for (std::size_t i = 0; sent && i < steps.size(); ++i) {
    while (PGresult* raw = PQgetResult(conn_)) {
      Rows result(raw);
      if (succeeded(raw)) {
        if (steps[i].into) *steps[i].into = result;
      } else if (!first && PQresultStatus(raw) != PGRES_PIPELINE_ABORTED) {
        first = refused(raw, steps[i].instead) ? **steps[i].instead : failure(raw, steps[i].what);
        if (i < opening) begin_failure_ = first;
      }
    }
  }
  if (sent) {
    Rows sync(PQgetResult(conn_));  // PGRES_PIPELINE_SYNC
  } else if (!first) {
    first = failure(nullptr, steps.back().what);
  }
  if (PQexitPipelineMode(conn_) == 0) {
    // Results were left unread (a send failed half-way: the connection is broken): start over on
    // a fresh session rather than stay in pipeline mode, where no other statement runs.
    const Error broken = failure(nullptr, steps.back().what);
    (void)reconnect();
    if (!first) first = broken;
  }
  if (first) return fail(std::move(*first));
  return {};
}

Result<void> Connection::commit(std::string_view what) {
  if (begin_failure_) return fail(*begin_failure_);
  settle();
  forget_ahead();
  if (begin_.empty() && deferred_.empty()) return exec("COMMIT", what);
  // The opening statements (a transaction that ran nothing else) and the deferred ones with COMMIT.
  return send_with_unsent({"COMMIT", nullptr, what, nullptr});
}

Result<Rows> Connection::script(std::string_view sql, std::string_view what) {
  if (begin_failure_) return fail(*begin_failure_);
  settle();
  forget_ahead();
  if (!begin_.empty()) CT_TRY(begun());
  CT_TRY(send_deferred());
  std::string text(sql);
  Rows result(PQexec(conn_, text.c_str()));
  auto status = PQresultStatus(result.get());
  if (status != PGRES_TUPLES_OK && status != PGRES_COMMAND_OK) return fail(failure(result.get(), what));
  return result;
}

}  // namespace ct::pg
