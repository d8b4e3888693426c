// Store URLs: which backend a URL names, passwords kept out of config files and messages.
#include <catch2/catch.hpp>

#include "gateway/mcp_syntax.h"
#include "engines/project/config.h"
#include "engines/store/postgres/pg_connection.h"
#include "engines/store/open/open_store.h"
#include "unit/test_support.h"

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

TEST_CASE("a server that is down is E_STORE_UNAVAILABLE, retryable, naming it but not the password",
          "[store][url]") {
  // Issue 30 item 14: an outage was E_FILE_ERROR with retryable false. A socket directory with no
  // server behind it stands for a server that is down or restarting.
  auto backend = postgresql_store_backend("postgresql://ann:hunter2@/none?host=/nonexistent-ct-socket&connect_timeout=1",
                                          "cleo");
  CHECK(backend->location().find("hunter2") == std::string::npos);
  auto opened = backend->open(StoreOptions{});
  REQUIRE_FALSE(opened);
  INFO(opened.error().message);
  CHECK(opened.error().code == ErrorCode::StoreUnavailable);
  CHECK(opened.error().retryable());
  CHECK(opened.error().exit_code() == 7);
  CHECK(opened.error().message.find("/nonexistent-ct-socket") != std::string::npos);
  CHECK(opened.error().details["server"].as_string().find("/nonexistent-ct-socket") != std::string::npos);
  CHECK(opened.error().message.find("hunter2") == std::string::npos);
  CHECK(mcp_text(opened.error().fix, registry()).find("hunter2") == std::string::npos);
  CHECK(mcp_text(opened.error().fix, registry()).starts_with("retry"));
  auto health = backend->health();
  REQUIRE(health.size() == 1);
  CHECK(health[0].status == "fail");
}

TEST_CASE("the SQLSTATEs of an outage are E_STORE_UNAVAILABLE; a dropped database or a refused login are not",
          "[store][url]") {
  for (std::string_view state : {"08006", "08001", "57P01", "57P02", "57P03", "57P05", "53300"}) {
    Error error = pg::server_error(state, "server closed the connection", "cannot read", "cleo@db:5432/team");
    INFO(state);
    CHECK(error.code == ErrorCode::StoreUnavailable);
    CHECK(error.retryable());
    CHECK(error.message.find("cleo@db:5432/team") != std::string::npos);
  }
  CHECK(pg::server_error("57P04", "database dropped", "x", "db").code == ErrorCode::FileError);
  CHECK(pg::server_error("28P01", "password authentication failed", "x", "db").code == ErrorCode::FileError);
  CHECK(pg::server_error("55P03", "lock", "x", "db").code == ErrorCode::LockTimeout);
}

TEST_CASE("a connection the server drops (a restart) is E_STORE_UNAVAILABLE, and the next call reconnects",
          "[store][url]") {
  if (!test::on_postgresql()) {
    SUCCEED("needs a PostgreSQL server (CT_TEST_PG_URL, the postgresql label)");
    return;
  }
  auto connection = pg::Connection::open(test::pg_url(), "public", 1000);
  REQUIRE(connection);
  auto pid = (*connection)->query("SELECT pg_backend_pid()", "backend pid");
  REQUIRE(pid);
  auto other = pg::Connection::open(test::pg_url(), "public", 1000);
  REQUIRE(other);
  // What a server restart does to every session: 57P01 admin_shutdown, then the socket closes.
  REQUIRE((*other)->query("SELECT pg_terminate_backend($1::int)", sql::values(pid->integer(0, 0)), "terminate"));
  auto dropped = (*connection)->query("SELECT 1", "cannot read the store");
  REQUIRE_FALSE(dropped);
  INFO(dropped.error().message);
  CHECK(dropped.error().code == ErrorCode::StoreUnavailable);
  CHECK(dropped.error().retryable());
  CHECK(dropped.error().message.find((*connection)->location()) != std::string::npos);
  REQUIRE((*connection)->ensure_connected());
  CHECK((*connection)->query("SELECT 1", "read again"));
}

}  // namespace ct
