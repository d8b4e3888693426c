// The PostgreSQL store, part: transactions, the runner, plumbing, and opening (creating, migrating)
// a store in its schema.
#include "engines/store/postgres/pg_store.h"
#include "engines/store/postgres/pg_store_impl.h"

namespace ct::pg {

PgStore::~PgStore() {
  db_->drop_unsent();
  if (db_->in_transaction()) (void)db_->exec("ROLLBACK", "cannot roll back");
}

Result<void> PgStore::begin(TxKind kind) {
  if (in_transaction()) return fail(ErrorCode::Internal, "a transaction is already open on this store");
  CT_TRY(db_->ensure_connected());
  audit_tail_.reset();
  tail_in_begun_ = false;
  kind_ = kind;
  // BEGIN, and for a write the writers' lock, go with the transaction's first statement in one
  // round trip (Connection::begin_with_next): a read is a round trip shorter, and a write holds the
  // lock a round trip less. A writer that waits longer than lock_timeout for the lock gets
  // E_LOCK_TIMEOUT from that statement.
  // One snapshot for the whole read. Not READ ONLY: a dry run in read-only mode writes in a read
  // transaction and rolls back (without the writers' lock, since it keeps nothing).
  if (kind == TxKind::Read) {
    db_->begin_with_next({"BEGIN ISOLATION LEVEL REPEATABLE READ"});
    return {};
  }
  if (read_only_)
    return fail(Error(ErrorCode::FileError, "the PostgreSQL store at " + db_->location() +
                                                " is open read-only (--read-only); nothing was changed")
                    .with_fix("run without --read-only")
                    .with_detail("readOnly", true));
  // The writers' lock (pg_store_impl.h) waits at most lock_timeout, then E_LOCK_TIMEOUT. Under the
  // lock the audit trail's last row is stable: it comes along, so that append_audit() need not ask
  // for it — read by a statement of its own, whose snapshot is taken once the lock is held (a
  // subquery of the UPDATE would see the trail as it was before the wait, and two writers would
  // chain to the same row). The notification (kChangesChannel) is sent at the commit, and not at
  // all on a rollback.
  db_->begin_with_next({"BEGIN", "UPDATE meta SET value = (value::bigint + 1)::text WHERE key = 'change_stamp'",
                        "SELECT pg_notify('" + std::string(kChangesChannel) + "', current_schema())",
                        "SELECT seq, hash FROM audit ORDER BY seq DESC LIMIT 1"},
                       true);
  tail_in_begun_ = true;
  write_lock_.emplace();
  return {};
}

Result<void> PgStore::savepoint(std::string_view name) {
  if (!in_transaction()) return fail(ErrorCode::Internal, "a savepoint outside a transaction");
  return db_->exec("SAVEPOINT " + std::string(name), "cannot mark a savepoint");
}

Result<void> PgStore::rollback_to(std::string_view name) {
  // Audit rows written since are gone (one not yet sent was written since: the savepoint sent the
  // earlier ones): the trail's tail is read again when the next one is written.
  db_->drop_deferred();
  audit_tail_.reset();
  tail_in_begun_ = false;
  return db_->exec("ROLLBACK TO SAVEPOINT " + std::string(name) + "; RELEASE SAVEPOINT " + std::string(name),
                   "cannot go back to a savepoint");
}

Result<void> PgStore::release(std::string_view name) {
  return db_->exec("RELEASE SAVEPOINT " + std::string(name), "cannot release a savepoint");
}

Result<void> PgStore::commit() {
  if (!in_transaction()) return fail(ErrorCode::Internal, "commit without an open transaction");
  if (kind_ == TxKind::Read && db_->begin_pending()) {
    db_->drop_unsent();  // a read that read nothing: nothing was sent
    return {};
  }
  if (db_->transaction_failed()) {
    // The writers' lock not granted is the reason, whatever a caller did after it.
    std::optional<Error> why = db_->begin_failure();
    rollback();
    if (why) return fail(std::move(*why));
    return fail(ErrorCode::Internal, "commit after a failed statement: the transaction was rolled back");
  }
  auto result = db_->commit("cannot commit");  // with the audit row append_audit() deferred
  if (!result) rollback();  // which takes the transaction's inserts back from the count
  inserted_in_transaction_ = 0;
  write_lock_.reset();
  // Many new tasks (an import, a tracker's first sync, a page at a time) leave the planner's
  // statistics of an empty table: tasks.next then took 0.7 s at 2,000 tasks until autovacuum
  // analysed them, up to a minute later. Analysed at once, outside the transaction (it takes no
  // lock that writers or readers wait for); a failure only leaves that to autovacuum.
  if (result && inserted_ >= kAnalyzeAfterInserts) {
    inserted_ = 0;
    (void)db_->exec("ANALYZE tasks, task_deps", "cannot analyse the tasks");
  }
  return result;
}

void PgStore::rollback() {
  db_->drop_unsent();  // a transaction that sent nothing has nothing to roll back on the server
  write_lock_.reset();
  inserted_ -= inserted_in_transaction_;
  inserted_in_transaction_ = 0;
  if (!in_transaction()) return;
  // A read's ROLLBACK is not waited for: its answer is read at the connection's next use, while
  // the caller shapes its reply. A write's is (it ends the writers' lock, and it may fail).
  if (kind_ == TxKind::Read) {
    db_->rollback_unanswered();
    return;
  }
  (void)db_->exec("ROLLBACK", "cannot roll back");
}

bool PgStore::in_transaction() const { return db_->in_transaction(); }

namespace {

/// One row of a result, for the roles.
class Cursor final : public sql::Cursor {
 public:
  Cursor(const Rows& rows, int row) : rows_(rows), row_(row) {}
  std::string_view text(int column) const override { return rows_.text(row_, column); }
  std::int64_t integer(int column) const override { return rows_.integer(row_, column); }
  std::optional<std::int64_t> optional_int(int column) const override { return rows_.optional_int(row_, column); }
  double real(int column) const override { return rows_.real(row_, column); }
  std::optional<double> optional_real(int column) const override { return rows_.optional_real(row_, column); }
  bool is_null(int column) const override { return rows_.is_null(row_, column); }
  int columns() const override { return rows_.get() ? PQnfields(rows_.get()) : 0; }

 private:
  const Rows& rows_;
  int row_;
};

}  // namespace

Result<void> PgStore::Runner::run(std::string_view sql, std::span<const sql::Value> args, std::string_view what,
                                  sql::RowFn on_row) {
  CT_TRY_ASSIGN(Rows rows, store_.query(sql, args, what));
  changes_ = rows.affected();
  if (on_row)
    for (int i = 0; i < rows.size(); ++i) CT_TRY(on_row(Cursor(rows, i)));
  return {};
}

Result<std::int64_t> PgStore::meta_int(std::string_view key) {
  const sql::Value args[] = {sql::Value(key)};
  return runner_.integer("SELECT value::bigint FROM meta WHERE key = ?1", args, "cannot read the store's metadata");
}

Result<std::int64_t> PgStore::schema_version() { return meta_int("schema_version"); }

Result<std::int64_t> PgStore::change_stamp() {
  CT_TRY(db_->ensure_connected());
  return runner_.integer("SELECT value::bigint FROM meta WHERE key = 'change_stamp'", {},
                         "cannot read the store's change stamp");
}

Result<Waited> PgStore::wait_for_change(std::chrono::milliseconds timeout, int interrupt) {
  if (in_transaction()) return fail(ErrorCode::Internal, "waiting for changes inside a transaction");
  CT_TRY(db_->ensure_connected());
  CT_TRY(db_->listen(std::string(kChangesChannel)));
  CT_TRY_ASSIGN(bool told, db_->wait_notification(db_->schema(), timeout, interrupt));
  return told ? Waited::Changed : Waited::Quiet;
}

Result<std::optional<std::int64_t>> stored_version(Connection& db) {
  CT_TRY_ASSIGN(Rows exists, db.query("SELECT to_regclass(quote_ident(current_schema()) || '.meta') IS NOT NULL",
                                      "cannot read the store's schema"));
  if (exists.empty() || exists.text(0, 0) != "t") return std::optional<std::int64_t>();
  CT_TRY_ASSIGN(Rows rows, db.query("SELECT value::bigint FROM meta WHERE key = 'schema_version'",
                                    "cannot read the store's schema version"));
  return std::optional<std::int64_t>(rows.empty() ? 0 : rows.integer(0, 0));
}

namespace {

Error newer_schema(const Connection& db, std::int64_t version) {
  return Error(ErrorCode::FileError, "the PostgreSQL store at " + db.location() + " (schema " + db.schema() +
                                         ") was created by a newer ct (schema version " + std::to_string(version) +
                                         ", this binary knows " + std::to_string(store_schema_version()) +
                                         "); upgrade ct")
      .with_fix("install the latest ct and retry");
}

Error not_initialized(const Connection& db) {
  return Error(ErrorCode::NotInitialized, "no CLEO store in schema " + db.schema() + " of the PostgreSQL database " +
                                              db.location())
      .with_fix(call("system.init"));
}


// Where the unaccent extension is, creating it in `public` when the server has it and this role
// may (it is a trusted extension: a database owner may). nullopt: search keeps accents there.
Result<std::optional<std::string>> unaccent_schema(Connection& db) {
  static constexpr std::string_view kFind =
      "SELECT n.nspname FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'unaccent'";
  CT_TRY_ASSIGN(Rows found, db.query(kFind, "cannot read the server's extensions"));
  if (found.empty()) {
    // A failed CREATE would end the transaction: a savepoint keeps the migration going.
    CT_TRY(db.exec("SAVEPOINT unaccent", "cannot create a savepoint"));
    if (!db.exec("CREATE EXTENSION IF NOT EXISTS unaccent SCHEMA public", "cannot create the unaccent extension")) {
      CT_TRY(db.exec("ROLLBACK TO SAVEPOINT unaccent", "cannot roll back to a savepoint"));
    }
    CT_TRY(db.exec("RELEASE SAVEPOINT unaccent", "cannot release a savepoint"));
    CT_TRY_ASSIGN(found, db.query(kFind, "cannot read the server's extensions"));
  }
  if (found.empty()) return std::optional<std::string>();
  return std::optional<std::string>(std::string(found.text(0, 0)));
}

// Creates the schema, or runs the steps it misses, in one transaction under an advisory lock on
// the schema's name: two processes initialising at once create it once.
Result<void> create_or_migrate(Connection& db, bool create) {
  CT_TRY(db.exec("BEGIN", "cannot begin the schema migration"));
  auto body = [&]() -> Result<void> {
    CT_TRY(db.query("SELECT pg_advisory_xact_lock(hashtext('cleo-schema:' || $1))", sql::values(db.schema()),
                    "cannot lock the schema for migration"));
    CT_TRY(db.exec("CREATE SCHEMA IF NOT EXISTS " + quote_identifier(db.schema()), "cannot create the store's schema"));
    CT_TRY_ASSIGN(std::optional<std::int64_t> version, stored_version(db));
    if (!version) {
      if (!create) return fail(not_initialized(db));
      CT_TRY_ASSIGN(std::optional<std::string> unaccent, unaccent_schema(db));
      CT_TRY(db.exec(fold_function_sql(unaccent), "cannot create the store's search function"));
      CT_TRY(db.exec(schema_sql(), "cannot create the store's tables"));
      CT_TRY(db.query("INSERT INTO meta(key, value) VALUES('schema_version', $1)",
                      sql::values(store_schema_version()), "cannot record the schema version"));
      return {};
    }
    if (*version > store_schema_version()) return fail(newer_schema(db, *version));
    for (const auto& step : schema_upgrades())
      if (step.version > *version)
        CT_TRY(db.exec(step.sql, "cannot upgrade the store to schema version " + std::to_string(step.version)));
    CT_TRY(db.query("UPDATE meta SET value = $1 WHERE key = 'schema_version'", sql::values(store_schema_version()),
                    "cannot record the schema version"));
    return {};
  };
  auto result = body();
  if (!result) {
    (void)db.exec("ROLLBACK", "cannot roll back");
    return result;
  }
  return db.exec("COMMIT", "cannot commit the schema migration");
}

}  // namespace

Result<std::unique_ptr<Store>> open_pg_store(const std::string& url, const std::string& schema,
                                             const StoreOptions& options, const BackupFiles& backups) {
  CT_TRY_ASSIGN(std::unique_ptr<Connection> db, Connection::open(url, schema, options.busy_timeout_ms));
  CT_TRY_ASSIGN(std::optional<std::int64_t> version, stored_version(*db));
  if (!version && !options.create) return fail(not_initialized(*db));
  if (version && *version > store_schema_version()) return fail(newer_schema(*db, *version));
  if (!version || *version < store_schema_version()) {
    if (options.read_only || !options.upgrade)
      return fail(Error(ErrorCode::FileError, "the PostgreSQL store at " + db->location() + " has schema version " +
                                                  std::to_string(version.value_or(0)) +
                                                  " and needs an upgrade, which read-only mode does not make")
                      .with_fix("run one ct command without --read-only"));
    CT_TRY(create_or_migrate(*db, options.create));
  }
  return std::unique_ptr<Store>(std::make_unique<PgStore>(std::move(db), options.read_only, backups));
}

}  // namespace ct::pg
