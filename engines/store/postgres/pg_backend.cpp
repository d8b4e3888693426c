// The PostgreSQL implementation of engines/store/store_backend.h, for a project whose store
// store_location() finds on a PostgreSQL server; its backups are SQLite files (the BackupFiles the
// opener hands it).
#include "engines/store/postgres/pg_store.h"
#include "engines/store/postgres/pg_store_impl.h"

namespace ct::pg {
namespace {

class PgBackend final : public StoreBackend {
 public:
  PgBackend(std::string url, std::string schema, const BackupFiles& backups)
      : url_(std::move(url)), schema_(std::move(schema)), backups_(backups) {}

  std::string_view kind() const override { return "postgresql"; }
  std::string location() const override { return postgresql_location(url_, schema_); }
  Result<std::unique_ptr<Store>> open(const StoreOptions& options) const override {
    return open_pg_store(url_, schema_, options, backups_);
  }
  std::vector<MigrationStep> migrations() const override { return schema_steps(); }

  Result<StoreInfo> inspect(bool check) const override {
    CT_TRY_ASSIGN(std::unique_ptr<Connection> db, Connection::open(url_, schema_, 5000));
    CT_TRY_ASSIGN(Rows tables, db->query("SELECT count(*) FROM pg_tables WHERE schemaname = $1",
                                         sql::values(schema_), "cannot read the store's schema"));
    StoreInfo info;
    info.tables = tables.integer(0, 0);
    if (info.tables == 0)
      return fail(Error(ErrorCode::NotFound, "no CLEO store in schema " + schema_ + " of " + db->location()));
    CT_TRY_ASSIGN(std::optional<std::int64_t> version, stored_version(*db));
    info.schema_version = version.value_or(0);
    if (check && version) {
      StoreOptions options;
      options.read_only = true;
      options.upgrade = false;
      auto store = open_pg_store(url_, schema_, options, backups_);
      if (store) {
        CT_TRY_ASSIGN(info.problems, (*store)->integrity_problems());
      }
    }
    return info;
  }

  Result<void> copy_to(const std::filesystem::path& file) const override {
    StoreOptions options;
    options.read_only = true;
    options.upgrade = false;
    CT_TRY_ASSIGN(std::unique_ptr<Store> store, open_pg_store(url_, schema_, options, backups_));
    return store->backup_to(file);
  }

  void erase_empty() const override {
    auto db = Connection::open(url_, schema_, 5000);
    if (!db) return;
    auto tables = (*db)->query("SELECT count(*) FROM pg_tables WHERE schemaname = $1", sql::values(schema_),
                               "cannot read the store's schema");
    if (tables && tables->integer(0, 0) == 0)
      (void)(*db)->exec("DROP SCHEMA IF EXISTS " + quote_identifier(schema_), "cannot drop an empty schema");
  }

  std::vector<StoreHealth> health() const override {
    auto db = Connection::open(url_, schema_, 5000);
    if (!db) return {{"postgresql", "fail", db.error().message, db.error().fix}};
    auto version = (*db)->query("SELECT current_setting('server_version'), "
                                "(SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()), "
                                "current_setting('max_connections')",
                                "cannot read the server's state");
    if (!version) return {{"postgresql", "fail", version.error().message, version.error().fix}};
    const std::int64_t used = version->integer(0, 1);
    const std::int64_t limit = version->integer(0, 2);
    std::string detail = "server " + std::string(version->text(0, 0)) + " at " + (*db)->location() + ", " +
                         std::to_string(used) + " of " + std::to_string(limit) + " connections";
    if (limit > 0 && used * 10 > limit * 9)
      return {{"postgresql", "warn", detail, "raise max_connections, or put a connection pooler in front"}};
    return {{"postgresql", "ok", detail, ""}};
  }

  // The schema moves aside under a dated name (never dropped); a new one is created and filled from
  // the backup file, in one transaction for the fill.
  Result<std::string> replace_with_backup(const std::filesystem::path& copy, const std::filesystem::path&,
                                          TimeMs now) const override {
    CT_TRY_ASSIGN(std::unique_ptr<Connection> db, Connection::open(url_, schema_, 5000));
    CT_TRY_ASSIGN(Rows present, db->query("SELECT count(*) FROM pg_namespace WHERE nspname = $1", sql::values(schema_),
                                          "cannot read the store's schema"));
    std::string aside;
    if (present.integer(0, 0) > 0) {
      aside = schema_ + "_damaged_" + std::to_string(now);
      CT_TRY(db->exec("ALTER SCHEMA " + quote_identifier(schema_) + " RENAME TO " + quote_identifier(aside),
                      "cannot move the damaged store aside"));
    }
    StoreOptions options;
    options.create = true;
    CT_TRY_ASSIGN(std::unique_ptr<Store> store, open_pg_store(url_, schema_, options, backups_));
    CT_TRY(store->begin(TxKind::Write));
    auto replaced = store->replace_contents_from(copy);
    if (!replaced) {
      store->rollback();
      return fail(std::move(replaced.error()));
    }
    CT_TRY(store->commit());
    std::error_code ec;
    std::filesystem::remove(copy, ec);
    return aside;
  }

 private:
  std::string url_;
  std::string schema_;
  const BackupFiles& backups_;
};

}  // namespace

}  // namespace ct::pg

namespace ct {

std::unique_ptr<StoreBackend> postgresql_store_backend(std::string url, std::string schema, const BackupFiles& backups) {
  return std::make_unique<pg::PgBackend>(std::move(url), std::move(schema), backups);
}

namespace {

// The opener (engines/store/open/) finds the backend here, whether a program links this library
// in (the tests) or ct loads it as the module libct_postgres.so on first use.
[[maybe_unused]] const bool kProvided = (provide_postgresql_backend(&postgresql_store_backend), true);

}  // namespace

}  // namespace ct
