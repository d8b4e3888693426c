// MCP's logging utility (gateway/mcp_logging.h; issue 50 item 16): off until the client asks for a
// level, what a call tells (warnings, slow calls, lock waits, the server's own failures), and the
// bounds — a burst, then a rate, and a size per message.
#include <catch2/catch.hpp>

#include <thread>

#include "core/version.h"
#include "gateway/mcp_syntax.h"
#include "gateway/mcp_logging.h"
#include "gateway/mcp_protocol.h"
#include "unit/test_support.h"

using namespace ct;
using namespace ct::mcp;

namespace {

LogEntry warning(std::string message) {
  json::Value data = json::Value::object();
  data.set("message", std::move(message));
  return {LogLevel::Warning, std::move(data)};
}

json::Value parsed(const std::string& notification) { return test::parse_json(notification); }

/// What a call tells the log: its warnings written as the reply writes them (the MCP tools' syntax).
std::vector<LogEntry> call_log(std::string_view operation, const Envelope& envelope) {
  return mcp::call_log(operation, envelope, McpAdvice(registry()));
}

}  // namespace

TEST_CASE("logging: levels by their MCP names", "[mcp][logging]") {
  CHECK(parse_log_level("debug") == LogLevel::Debug);
  CHECK(parse_log_level("emergency") == LogLevel::Emergency);
  CHECK_FALSE(parse_log_level("WARNING"));
  CHECK_FALSE(parse_log_level("warn"));
  CHECK(to_string(LogLevel::Notice) == "notice");
  CHECK(log_level_names() == "debug, info, notice, warning, error, critical, alert, emergency");
}

TEST_CASE("logging: nothing is sent until the client sets a level, then what is at or above it", "[mcp][logging]") {
  LogGate gate;
  CHECK_FALSE(gate.level());
  CHECK(gate.admit({warning("a")}).empty());  // off by default
  gate.set_level(LogLevel::Error);
  CHECK(gate.admit({warning("b")}).empty());  // below the level
  gate.set_level(LogLevel::Warning);
  auto sent = gate.admit({warning("c"), {LogLevel::Info, json::Value::object()}});
  REQUIRE(sent.size() == 1);
  json::Value message = parsed(sent[0]);
  CHECK(message["jsonrpc"].as_string() == "2.0");
  CHECK(message["method"].as_string() == "notifications/message");
  CHECK_FALSE(message.contains("id"));
  CHECK(message["params"]["level"].as_string() == "warning");
  CHECK(message["params"]["logger"].as_string() == "cleo");
  CHECK(message["params"]["data"]["message"].as_string() == "c");
}

TEST_CASE("logging: a burst, then a rate; what was dropped is said", "[mcp][logging]") {
  LogGate gate;
  gate.set_level(LogLevel::Debug);
  const auto start = LogGate::Clock::now();
  std::vector<LogEntry> many;
  for (int i = 0; i < 25; ++i) many.push_back(warning("w" + std::to_string(i)));
  auto first = gate.admit(many, start);
  CHECK(first.size() == kLogBurst);
  // A second later the budget has grown by kLogPerSecond: first the count of what was dropped.
  auto later = gate.admit({warning("next")}, start + std::chrono::seconds(1));
  REQUIRE(later.size() == 2);
  CHECK(parsed(later[0])["params"]["level"].as_string() == "notice");
  CHECK(parsed(later[0])["params"]["data"]["dropped"].as_int() == 15);
  CHECK(parsed(later[1])["params"]["data"]["message"].as_string() == "next");
  // The budget never grows past the burst, however long the pause.
  auto after_pause = gate.admit(many, start + std::chrono::hours(1));
  CHECK(after_pause.size() == kLogBurst);
}

TEST_CASE("logging: each message's data is bounded", "[mcp][logging]") {
  LogGate gate;
  gate.set_level(LogLevel::Debug);
  LogEntry huge = warning(std::string(10'000, 'x'));
  huge.data.set("extra", std::string(10'000, 'y'));
  auto sent = gate.admit({huge});
  REQUIRE(sent.size() == 1);
  json::Value data = parsed(sent[0])["params"]["data"];
  CHECK(data.dump().size() <= kMaxLogDataBytes);
  CHECK(data["truncated"] == json::Value(true));
  CHECK(data["message"].as_string().starts_with("xxx"));
  // A reply's warnings: at most five, each cut.
  Envelope many;
  for (int i = 0; i < 20; ++i) many.warnings.emplace_back(std::string(1000, 'w'));
  auto entries = call_log("tasks.list", many);
  REQUIRE(entries.size() == 1);
  CHECK(entries[0].data["warnings"].size() == 5);
  CHECK(log_notification(entries[0]).size() < kMaxLogDataBytes + 200);
}

TEST_CASE("logging: what a call tells — warnings, lock waits, slow calls, the server's own failures",
          "[mcp][logging]") {
  Envelope quiet;
  quiet.timing = {.total_ms = 40, .lock_wait_ms = 5};
  CHECK(call_log("tasks.add", quiet).empty());

  Envelope waited;
  waited.timing = {.total_ms = 1500, .lock_wait_ms = 1200};
  auto entries = call_log("tasks.add", waited);
  REQUIRE(entries.size() == 2);
  CHECK(entries[0].level == LogLevel::Notice);
  CHECK(entries[0].data["message"].as_string() ==
        "tasks.add waited 1.2 s for the store's write lock (another writer held it)");
  CHECK(entries[1].level == LogLevel::Notice);
  CHECK(entries[1].data["message"].as_string() == "tasks.add took 1.5 s");
  CHECK(entries[1].data["durationMs"].as_int() == 1500);

  Envelope gave_up = failure(Error(ErrorCode::LockTimeout, "database is locked by another writer; retry"));
  gave_up.timing = {.total_ms = 5010, .lock_wait_ms = 5000};
  entries = call_log("tasks.add", gave_up);
  REQUIRE(entries.size() == 2);
  CHECK(entries[0].level == LogLevel::Warning);
  CHECK(entries[0].data["message"].as_string().starts_with("tasks.add gave up after waiting 5.0 s"));

  Envelope broken = failure(Error(ErrorCode::Internal, "invariant broken"));
  entries = call_log("tasks.show", broken);
  REQUIRE(entries.size() == 1);
  CHECK(entries[0].level == LogLevel::Error);
  CHECK(entries[0].data["code"].as_string() == "E_INTERNAL");
  // The caller's own mistakes are in the reply its agent reads: no log.
  CHECK(call_log("tasks.show", failure(Error(ErrorCode::NotFound, "Task T9 not found"))).empty());
  CHECK(call_log("tasks.add", failure(Error(ErrorCode::Validation, "title too short"))).empty());
}

TEST_CASE("logging: a write that waited for another writer's lock is told, on the call's own log",
          "[mcp][logging][concurrency]") {
  test::Project project;
  Protocol protocol{registry(), ServerInfo{"cleo", std::string(product_version()), "level zero"}};
  Connection connection;
  auto send = [&](std::string_view message) { return protocol.handle(message, connection, project.router()); };
  REQUIRE(send(R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{}}})")
              .reply);
  REQUIRE(send(R"({"jsonrpc":"2.0","id":2,"method":"logging/setLevel","params":{"level":"notice"}})").reply);
  REQUIRE(send(R"({"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"cleo_query","arguments":{"domain":"tasks","operation":"list"}}})")
              .notifications.empty());
  // Another writer holds the store's write lock for a while.
  auto store = test::backend_for(project.dir() / ".cleo" / "tasks.db")->open(StoreOptions{.busy_timeout_ms = 5000});
  REQUIRE(store);
  REQUIRE((*store)->begin(TxKind::Write));
  REQUIRE((*store)->schema_version());  // PostgreSQL takes the lock with the first statement
  std::thread holder([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(400));
    (void)(*store)->commit();
  });
  Outcome outcome =
      send(R"({"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"cleo_mutate","arguments":{"domain":"tasks","operation":"add","params":{"title":"Waited for the lock"}}}})");
  holder.join();
  REQUIRE(outcome.reply);
  CHECK(test::parse_json(*outcome.reply)["result"]["structuredContent"]["success"] == json::Value(true));
  REQUIRE(outcome.notifications.size() == 1);
  json::Value notice = parsed(outcome.notifications[0]);
  CHECK(notice["params"]["level"].as_string() == "notice");
  CHECK(notice["params"]["data"]["operation"].as_string() == "tasks.add");
  CHECK(notice["params"]["data"]["message"].as_string().find("for the store's write lock") != std::string::npos);
}
