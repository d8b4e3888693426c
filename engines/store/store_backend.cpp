// Naming a store's location (engines/store/store_backend.h).
#include <cstdlib>

#include "engines/store/store_backend.h"

#include "core/text.h"

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

namespace {

/// storage.url (engines/project/config.h declares the key): empty, or a store URL without a
/// password (config files get copied, shown and committed; the password belongs in ~/.pgpass or
/// PGPASSWORD).
std::string check_store_url(std::string_view text) {
  if (url_has_password(text)) return "must not hold a password: put it in ~/.pgpass or PGPASSWORD";
  if (!trim(text).empty() && !is_postgresql_url(text)) return "must be a postgresql:// URL (or empty for SQLite)";
  return "";
}

const bool kStoreUrlRegistered = register_config_rule({.key = "storage.url", .check = check_store_url});

}  // namespace

}  // namespace ct
