// Store URLs: which backend a URL names, passwords kept out of config files and messages.
#include <catch2/catch.hpp>

#include "engines/config.h"
#include "engines/pg_connection.h"
#include "engines/store_backend.h"

namespace ct {

TEST_CASE("a store URL names PostgreSQL or a file", "[store][url]") {
  CHECK(is_postgresql_url("postgresql://ann@db.example/team"));
  CHECK(is_postgresql_url("postgres://db/team"));
  CHECK(is_postgresql_url("host=db dbname=team user=ann"));
  CHECK_FALSE(is_postgresql_url("sqlite"));
  CHECK_FALSE(is_postgresql_url("copies/tasks.db"));
  CHECK_FALSE(is_postgresql_url("a=b.db"));
}

TEST_CASE("passwords are found, and masked in what is shown", "[store][url]") {
  CHECK(url_has_password("postgresql://ann:hunter2@db/team"));
  CHECK(url_has_password("postgresql://db/team?password=hunter2"));
  CHECK(url_has_password("host=db password=hunter2"));
  CHECK_FALSE(url_has_password("postgresql://ann@db:5432/team"));
  CHECK_FALSE(url_has_password("postgresql:///postgres?host=/tmp/socket&port=5432"));

  CHECK(pg::redact_url("postgresql://ann:hunter2@db/team") == "postgresql://ann@db/team");
  CHECK(pg::redact_url("postgresql://db/team?sslmode=require&password=hunter2&x=1") ==
        "postgresql://db/team?sslmode=require&password=***&x=1");
  CHECK(pg::redact_url("host=db password='hun ter2' dbname=team") == "host=db password=*** dbname=team");
  CHECK(pg::redact_url("postgresql://ann@db:5432/team") == "postgresql://ann@db:5432/team");
}

TEST_CASE("storage.url refuses a password without echoing it", "[store][url][config]") {
  Config config;
  auto refused = config.set("storage.url", json::Value("postgresql://ann:hunter2@db/team"));
  REQUIRE_FALSE(refused);
  CHECK(refused.error().message.find("hunter2") == std::string::npos);
  CHECK(refused.error().message.find("pgpass") != std::string::npos);
  CHECK_FALSE(config.set("storage.url", json::Value("/var/lib/tasks.db")));
  CHECK(config.set("storage.url", json::Value("postgresql://ann@db/team")));
  CHECK(config.set("storage.url", json::Value("")));
}

TEST_CASE("an unreachable server is E_FILE_ERROR naming it, not the password", "[store][url]") {
  auto backend = postgresql_store_backend("postgresql://ann:hunter2@/none?host=/nonexistent-ct-socket&connect_timeout=1",
                                          "cleo");
  CHECK(backend->location().find("hunter2") == std::string::npos);
  auto opened = backend->open(StoreOptions{});
  REQUIRE_FALSE(opened);
  CHECK(opened.error().code == ErrorCode::FileError);
  CHECK(opened.error().message.find("hunter2") == std::string::npos);
  CHECK(!opened.error().fix.empty());
  auto health = backend->health();
  REQUIRE(health.size() == 1);
  CHECK(health[0].status == "fail");
}

}  // namespace ct
