// Which backend holds a project's store (engines/store_backend.h).
#include <cstdlib>

#include "engines/store_backend.h"

namespace ct {

bool is_postgresql_url(std::string_view target) {
  if (target.starts_with("postgresql://") || target.starts_with("postgres://")) return true;
  // libpq's key=value form: "host=db dbname=cleo user=ann"
  return target.find('=') != std::string_view::npos &&
         (target.find("host=") != std::string_view::npos || target.find("dbname=") != std::string_view::npos);
}

bool url_has_password(std::string_view url) {
  if (url.find("password=") != std::string_view::npos || url.find("password =") != std::string_view::npos) return true;
  auto scheme = url.find("://");
  if (scheme == std::string_view::npos) return false;
  auto at = url.find('@', scheme + 3);
  auto slash = url.find('/', scheme + 3);
  if (at == std::string_view::npos || (slash != std::string_view::npos && slash < at)) return false;
  auto colon = url.find(':', scheme + 3);
  return colon != std::string_view::npos && colon < at;
}

std::unique_ptr<StoreBackend> project_store(const Project& project) {
  std::string url;
  std::string schema;
  if (const char* env = std::getenv("CLEO_DATABASE_URL"); env != nullptr && *env != '\0') url = env;
  if (const char* env = std::getenv("CLEO_DATABASE_SCHEMA"); env != nullptr && *env != '\0') schema = env;
  if (url.empty() || schema.empty()) {
    // A project without a config (before init) has the defaults: the embedded store.
    if (auto config = Config::load(project.config_path())) {
      if (url.empty()) url = config->get_string("storage.url");
      if (schema.empty()) schema = config->get_string("storage.schema");
    }
  }
  if (!url.empty() && is_postgresql_url(url))
    return postgresql_store_backend(std::move(url), schema.empty() ? std::string(kDefaultStoreSchema) : schema);
  return sqlite_store_backend(project.db_path());
}

}  // namespace ct
