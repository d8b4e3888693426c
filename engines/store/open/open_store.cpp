// Which backend holds a project's store (engines/store/open/open_store.h).
#include "engines/store/open/open_store.h"

#include <cstdlib>

namespace ct {
namespace {

std::unique_ptr<StoreBackend> store_of(const Project& project, const Config* config) {
  std::string url;
  std::string schema;
  if (const char* env = std::getenv("CLEO_DATABASE_URL"); env != nullptr && *env != '\0') url = env;
  if (const char* env = std::getenv("CLEO_DATABASE_SCHEMA"); env != nullptr && *env != '\0') schema = env;
  if (config != nullptr) {
    if (url.empty()) url = config->get_string("storage.url");
    if (schema.empty()) schema = config->get_string("storage.schema");
  }
  if (!url.empty() && is_postgresql_url(url))
    return postgresql_store_backend(std::move(url), schema.empty() ? std::string(kDefaultStoreSchema) : schema);
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
  return postgresql_store_backend(std::move(url), std::move(schema), sqlite_backup_files());
}

}  // namespace ct
