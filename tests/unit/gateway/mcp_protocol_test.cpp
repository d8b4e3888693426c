#include <catch2/catch.hpp>

#include "core/version.h"
#include "gateway/mcp_protocol.h"
#include "unit/test_support.h"
#include "disclosure/help_levels.h"
#include "gateway/product.h"
#include "gateway/server_commands.h"

using namespace ct;
using namespace ct::mcp;

namespace {

struct Fixture {
  test::Project project;
  Protocol protocol{registry(), ServerInfo{"cleo", std::string(product_version()), "level zero"}};
  Connection connection;

  std::optional<json::Value> send(std::string_view message) {
    Outcome outcome = protocol.handle(message, connection, project.router());
    if (!outcome.reply) return std::nullopt;
    return test::parse_json(*outcome.reply);
  }
  json::Value call(std::string_view tool, std::string_view arguments) {
    std::string message = R"({"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":")" +
                          std::string(tool) + R"(","arguments":)" + std::string(arguments) + "}}";
    return *send(message);
  }
};

}  // namespace

TEST_CASE("initialize negotiates the version and describes the server", "[mcp]") {
  Fixture f;
  auto reply = f.send(R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}})");
  REQUIRE(reply);
  CHECK((*reply)["id"].as_int() == 1);
  CHECK((*reply)["result"]["protocolVersion"].as_string() == "2025-06-18");
  CHECK((*reply)["result"]["serverInfo"]["name"].as_string() == "cleo");
  CHECK((*reply)["result"]["capabilities"].contains("tools"));
  CHECK((*reply)["result"]["instructions"].as_string() == "level zero");
  auto unknown = f.send(R"({"jsonrpc":"2.0","id":"a","method":"initialize","params":{"protocolVersion":"1999-01-01"}})");
  CHECK((*unknown)["id"].as_string() == "a");  // string ids stay strings
  CHECK((*unknown)["result"]["protocolVersion"].as_string() == "2025-11-25");
  auto missing = f.send(R"({"jsonrpc":"2.0","id":2,"method":"initialize","params":{}})");
  CHECK((*missing)["error"]["code"].as_int() == -32602);
}

TEST_CASE("JSON-RPC framing errors", "[mcp]") {
  Fixture f;
  auto parse = f.send("{not json");
  CHECK((*parse)["error"]["code"].as_int() == -32700);
  CHECK((*parse)["id"].is_null());
  CHECK((*f.send("42"))["error"]["code"].as_int() == -32600);
  CHECK((*f.send(R"({"id":1,"method":"ping"})"))["error"]["code"].as_int() == -32600);  // no jsonrpc
  CHECK((*f.send(R"({"jsonrpc":"2.0","id":1,"method":5})"))["error"]["code"].as_int() == -32600);
  CHECK((*f.send(R"({"jsonrpc":"2.0","id":{"x":1},"method":"ping"})"))["error"]["code"].as_int() == -32600);
  auto unknown = f.send(R"({"jsonrpc":"2.0","id":3,"method":"sampling/createMessage"})");
  CHECK((*unknown)["error"]["code"].as_int() == -32601);
  CHECK((*unknown)["id"].as_int() == 3);
  CHECK((*f.send(R"({"jsonrpc":"2.0","id":4,"method":"ping"})"))["result"] == json::Value::object());
}

TEST_CASE("notifications and responses are never answered", "[mcp]") {
  Fixture f;
  CHECK_FALSE(f.send(R"({"jsonrpc":"2.0","method":"notifications/initialized"})"));
  CHECK(f.connection.initialized);
  CHECK_FALSE(f.send(R"({"jsonrpc":"2.0","method":"notifications/whatever","params":{"x":1}})"));
  CHECK_FALSE(f.send(R"({"jsonrpc":"2.0","method":"tools/call"})"));
  CHECK_FALSE(f.send(R"({"jsonrpc":"2.0","id":9,"result":{}})"));
}

TEST_CASE("batches only for a 2025-03-26 session", "[mcp]") {
  Fixture f;
  Outcome refused_outcome = f.protocol.handle(R"([{"jsonrpc":"2.0","id":1,"method":"ping"}])", f.connection,
                                              f.project.router());
  CHECK(refused_outcome.kind == MessageKind::Invalid);  // HTTP answers it with 400
  auto refused = test::parse_json(*refused_outcome.reply);
  CHECK(refused["error"]["code"].as_int() == -32600);
  f.send(R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26"}})");
  auto batch = f.send(R"([{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/initialized"},{"jsonrpc":"2.0","id":2,"method":"ping"}])");
  REQUIRE(batch->is_array());
  CHECK(batch->size() == 2);
  CHECK((*f.send("[]"))["error"]["code"].as_int() == -32600);
}

TEST_CASE("tools/list: exactly two tools with registry-driven domain enums", "[mcp]") {
  Fixture f;
  auto reply = f.send(R"({"jsonrpc":"2.0","id":1,"method":"tools/list"})");
  const auto& tools = (*reply)["result"]["tools"].as_array();
  REQUIRE(tools.size() == 2);
  CHECK(tools[0]["name"].as_string() == "cleo_query");
  CHECK(tools[1]["name"].as_string() == "cleo_mutate");
  CHECK(tools[0]["annotations"]["readOnlyHint"].as_bool());
  CHECK(tools[1]["annotations"]["destructiveHint"].as_bool());
  CHECK_FALSE(tools[1]["annotations"].contains("readOnlyHint"));  // false unless said (MCP's default)
  CHECK(tools[0]["inputSchema"]["type"].as_string() == "object");
  auto domains = tools[0]["inputSchema"]["properties"]["domain"]["enum"];
  CHECK(domains == json::Value::array_of(registry().domains(Gateway::Query)));
  CHECK(f.protocol.tools_list_result().size() < 1100);  // small: 225 of the 250-token budget (tokens/disclosure)
}

TEST_CASE("tools/call returns the envelope as structuredContent and text", "[mcp]") {
  Fixture f;
  auto added = f.call("cleo_mutate", R"({"domain":"tasks","operation":"add","params":{"title":"From MCP"}})");
  const auto& result = added["result"];
  CHECK_FALSE(result["isError"].as_bool());
  CHECK(result["structuredContent"]["data"]["id"].as_string() == "T001");
  CHECK(result["content"].as_array()[0]["type"].as_string() == "text");
  CHECK(test::parse_json(result["content"].as_array()[0]["text"].as_string()) == result["structuredContent"]);
  auto missing = f.call("cleo_query", R"({"domain":"tasks","operation":"show","params":{"id":"T404"}})");
  CHECK(missing["result"]["isError"].as_bool());
  CHECK(missing["result"]["structuredContent"]["error"]["code"].as_string() == "E_NOT_FOUND");
  auto bad_args = f.call("cleo_query", R"({"operation":"show"})");
  CHECK(bad_args["result"]["isError"].as_bool());
  CHECK(bad_args["result"]["structuredContent"]["error"]["code"].as_string() == "E_INVALID_INPUT");
  auto stray = f.call("cleo_query", R"({"domain":"tasks","operation":"show","id":"T001"})");
  CHECK(stray["result"]["structuredContent"]["error"]["message"].as_string().find("inside params") !=
        std::string::npos);
  auto gateway = f.call("cleo_query", R"({"domain":"tasks","operation":"add","params":{"title":"nope"}})");
  CHECK(gateway["result"]["structuredContent"]["error"]["code"].as_string() == "E_INVALID_GATEWAY");
  auto unknown_tool = f.call("cleo_delete", R"({})");
  CHECK(unknown_tool["error"]["code"].as_int() == -32602);
  CHECK(unknown_tool["error"]["data"]["valid"].size() == 2);
}

TEST_CASE("the initialize instructions are help level 0", "[mcp]") {
  std::string text = server_info().instructions;
  auto level0 = disclosure::level0(registry());
  REQUIRE(level0);
  CHECK(text == *level0);
  for (const auto& domain : registry().domains()) CHECK(text.find(domain) != std::string::npos);
}

TEST_CASE("ids that are not 64-bit integers come back exactly as sent", "[mcp]") {
  Fixture f;
  auto raw = [&](std::string_view message) {
    Outcome outcome = f.protocol.handle(message, f.connection, f.project.router());
    REQUIRE(outcome.reply);
    return *outcome.reply;
  };
  // A double would print 18446744073709552000 (…616 after the round trip).
  CHECK(raw(R"({"jsonrpc":"2.0","id":18446744073709551615,"method":"ping"})") ==
        R"({"jsonrpc":"2.0","id":18446744073709551615,"result":{}})");
  CHECK(raw(R"({"jsonrpc":"2.0","id":1.50,"method":"ping"})") == R"({"jsonrpc":"2.0","id":1.50,"result":{}})");
  CHECK(raw(R"({"jsonrpc":"2.0","id":123456789012345678901234567890,"method":"ping"})")
            .starts_with(R"({"jsonrpc":"2.0","id":123456789012345678901234567890,"error":{"code":-32602,)"));
  // Notifications and responses holding such values get no reply; unparsable text gets -32700.
  CHECK_FALSE(f.protocol.handle(R"({"jsonrpc":"2.0","method":"x","params":{"n":1e999}})", f.connection,
                                f.project.router()).reply);
  CHECK_FALSE(f.protocol.handle(R"({"jsonrpc":"2.0","id":99999999999999999999,"result":{}})", f.connection,
                                f.project.router()).reply);
  CHECK(raw(R"({"jsonrpc":"2.0","id":2,"method":"ping","params":{"n":1e999})").find("-32700") != std::string::npos);
}

TEST_CASE("tools/list refuses a cursor it never issued", "[mcp]") {
  Fixture f;
  auto reply = f.send(R"({"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"cursor":"abc"}})");
  CHECK((*reply)["error"]["code"].as_int() == -32602);
  CHECK((*reply)["id"].as_int() == 1);
  auto plain = f.send(R"({"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}})");
  CHECK((*plain)["result"]["tools"].size() == 2);
}

TEST_CASE("the fuzzers' findings: repeated and escaped id keys, deep params with a big id", "[mcp]") {
  Fixture f;
  auto raw = [&](std::string_view message) {
    Outcome outcome = f.protocol.handle(message, f.connection, f.project.router());
    REQUIRE(outcome.reply);
    return *outcome.reply;
  };
  // parse() keeps the last of repeated keys; the echoed id is that one too.
  CHECK(raw(R"({"jsonrpc":"2.0","id":"a","id":1.5,"method":"ping"})") == R"({"jsonrpc":"2.0","id":1.5,"result":{}})");
  // An escaped "id" key is still the id, also for a message the parser cannot represent.
  CHECK(raw(R"({"jsonrpc":"2.0","\u0069d":1,"method":"ping","params":{"n":1e999}})").starts_with(R"({"jsonrpc":"2.0","id":1,"error":{"code":-32602)"));
  // Params nested deeper than parse() takes: refused with the request's own id.
  std::string deep = R"({"jsonrpc":"2.0","id":18446744073709551615,"method":"ping","params":{"x":)" + std::string(70, '[') + "1" +
                     std::string(70, ']') + "}}";
  CHECK(raw(deep).starts_with(R"({"jsonrpc":"2.0","id":18446744073709551615,"error":{"code":-32602)"));
}

