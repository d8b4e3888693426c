// Which backend holds a project's store (engines/store/open/open_store.h), and loading the
// PostgreSQL backend's module on first use.
#include "engines/store/open/open_store.h"

#include <cstdlib>

#include "engines/adapters/module.h"

namespace ct {
namespace {

/// The module's file name beside the program (a build tree) or in ../lib/cleo (an installed one).
constexpr std::string_view kModule = "libct_postgres.so";

/// Loads libct_postgres.so (the PostgreSQL backend with libpq), which registers itself
/// (provide_postgresql_backend). Once per process; "" on success, else why not.
const std::string& load_postgresql_module() {
  static const std::string failure = []() -> std::string {
    std::string why;
    if (load_module(kModule, why) == nullptr) return why;
    if (provided_postgresql_backend() != nullptr) return "";
    return std::string(kModule) + " did not register the PostgreSQL backend";
  }();
  return failure;
}

/// A PostgreSQL store this process cannot reach because the backend's module does not load: every
/// use says why, with the fix.
class UnloadedBackend final : public StoreBackend {
 public:
  UnloadedBackend(std::string url, std::string schema, std::string why)
      : url_(std::move(url)), schema_(std::move(schema)), why_(std::move(why)) {}
  std::string_view kind() const override { return "postgresql"; }
  std::string location() const override { return postgresql_location(url_, schema_); }
  Result<std::unique_ptr<Store>> open(const StoreOptions&) const override { return fail(error()); }
  std::vector<MigrationStep> migrations() const override { return {}; }
  Result<StoreInfo> inspect(bool) const override { return fail(error()); }
  Result<void> copy_to(const std::filesystem::path&) const override { return fail(error()); }
  void erase_empty() const override {}
  std::vector<StoreHealth> health() const override {
    return {{"postgresql", "fail", error().message, Advice(std::string(kFix))}};
  }
  Result<std::string> replace_with_backup(const std::filesystem::path&, const std::filesystem::path&,
                                          TimeMs) const override {
    return fail(error());
  }

 private:
  static constexpr std::string_view kFix =
      "install the PostgreSQL client library (Debian: libpq5) and keep libct_postgres.so beside ct, or "
      "point storage.url back at SQLite (ct config set storage.url '')";
  Error error() const {
    return Error(ErrorCode::FileError, "the PostgreSQL store at " + location() +
                                                  " cannot be used: its module does not load (" + why_ + ")")
        .with_fix(std::string(kFix));
  }

  std::string url_;
  std::string schema_;
  std::string why_;
};

std::unique_ptr<StoreBackend> store_of(const Project& project, const Config* config) {
  StoreLocation where = store_location(config);
  if (!where.url.empty()) return postgresql_store_backend(std::move(where.url), std::move(where.schema));
  return sqlite_store_backend(project.db_path());
}

}  // namespace

std::unique_ptr<StoreBackend> project_store(const Project& project, const Config& config) {
  return store_of(project, &config);
}

std::unique_ptr<StoreBackend> project_store(const Project& project) {
  // A project without a config (before init) has the defaults: the embedded store.
  auto config = Config::load(project.config_path());
  return store_of(project, config ? &*config : nullptr);
}

std::unique_ptr<StoreBackend> postgresql_store_backend(std::string url, std::string schema) {
  PostgresqlBackendFactory factory = provided_postgresql_backend();
  if (factory == nullptr) {
    const std::string& why = load_postgresql_module();  // once per process (a static's initialiser)
    factory = provided_postgresql_backend();
    if (factory == nullptr) return std::make_unique<UnloadedBackend>(std::move(url), std::move(schema), why);
  }
  return factory(std::move(url), std::move(schema), sqlite_backup_files());
}

}  // namespace ct
