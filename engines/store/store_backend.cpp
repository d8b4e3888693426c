// Naming a store's location (engines/store/store_backend.h).
#include <atomic>
#include <cstdlib>

#include "engines/store/store_backend.h"

#include "core/text.h"

namespace ct {

std::string redact_url(std::string_view url) {
  std::string out(url);
  if (auto scheme = out.find("://"); scheme != std::string::npos) {
    // postgresql://user:secret@host/db → postgresql://user@host/db
    auto at = out.find('@', scheme + 3);
    auto slash = out.find('/', scheme + 3);
    if (at != std::string::npos && (slash == std::string::npos || at < slash)) {
      auto colon = out.find(':', scheme + 3);
      if (colon != std::string::npos && colon < at) out.erase(colon, at - colon);
    }
    // ?password=… in the query string
    for (auto pos = out.find("password="); pos != std::string::npos; pos = out.find("password=", pos + 1)) {
      auto end = out.find('&', pos);
      out.replace(pos + 9, (end == std::string::npos ? out.size() : end) - pos - 9, "***");
    }
    return out;
  }
  // key=value form: password=secret or password='se cret'
  for (auto pos = out.find("password"); pos != std::string::npos; pos = out.find("password", pos + 1)) {
    auto eq = out.find_first_not_of(' ', pos + 8);
    if (eq == std::string::npos || out[eq] != '=') continue;
    auto start = out.find_first_not_of(' ', eq + 1);
    if (start == std::string::npos) break;
    std::size_t end = start;
    if (out[start] == '\'') {
      end = start + 1;
      while (end < out.size() && out[end] != '\'') end += out[end] == '\\' ? 2 : 1;
      end = std::min(out.size(), end + 1);
    } else {
      while (end < out.size() && out[end] != ' ') ++end;
    }
    out.replace(start, end - start, "***");
  }
  return out;
}


std::string postgresql_location(std::string_view url, std::string_view schema) {
  return redact_url(url) + " (schema " + std::string(schema) + ")";
}

namespace {

// Written once, while the module loads (under the opener's lock); read by every thread that opens
// a store, hence atomic.
std::atomic<PostgresqlBackendFactory> provided_factory{nullptr};

}  // namespace

void provide_postgresql_backend(PostgresqlBackendFactory factory) { provided_factory.store(factory); }

PostgresqlBackendFactory provided_postgresql_backend() { return provided_factory.load(); }

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
