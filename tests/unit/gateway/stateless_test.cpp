// The stateless revision (MCP 2026-07-28) in the protocol, independent of the transport:
// server/discover, per-request _meta, and the refusals a stateless request can get.
#include <catch2/catch.hpp>

#include "core/version.h"
#include "gateway/mcp_syntax.h"
#include "gateway/product.h"
#include "gateway/mcp_protocol.h"
#include "unit/test_support.h"

using namespace ct;
using namespace ct::mcp;

namespace {

constexpr std::string_view kMeta =
    R"("_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},)"
    R"("io.modelcontextprotocol/clientInfo":{"name":"stateless-test","version":"1"}})";

std::string request(std::string_view id, std::string_view method, std::string_view params_body = "") {
  std::string params = "{" + std::string(kMeta);
  if (!params_body.empty()) params += "," + std::string(params_body);
  params += "}";
  return R"({"jsonrpc":"2.0","id":)" + std::string(id) + R"(,"method":")" + std::string(method) +
         R"(","params":)" + params + "}";
}

struct Fixture {
  test::Project project;
  Protocol protocol{registry(), ServerInfo{"cleo", std::string(product_version()), "level zero"}};
  Connection connection;

  Outcome send(std::string_view message, const MirroredHeaders* headers = nullptr) {
    return protocol.handle(message, connection, project.router(), headers);
  }
  json::Value reply(std::string_view message, const MirroredHeaders* headers = nullptr) {
    Outcome outcome = send(message, headers);
    REQUIRE(outcome.reply);
    return test::parse_json(*outcome.reply);
  }
};

}  // namespace

TEST_CASE("stateless: server/discover describes the server without a handshake", "[mcp][stateless]") {
  Fixture f;
  Outcome outcome = f.send(request("\"d1\"", "server/discover"));
  CHECK(outcome.stateless);
  CHECK(outcome.error_code == 0);
  json::Value reply = test::parse_json(*outcome.reply);
  CHECK(reply["id"].as_string() == "d1");
  const json::Value& result = reply["result"];
  CHECK(result["resultType"].as_string() == "complete");
  CHECK(result["supportedVersions"] == test::parse_json(R"(["2026-07-28"])"));
  // Without a watcher or a runner: no subscriptions and no tasks extension to declare. Logging
  // is offered (a request's _meta asks for its log).
  CHECK(result["capabilities"] == test::parse_json(R"({"tools":{"listChanged":false},"prompts":{"listChanged":false},)"
                                                   R"("resources":{"listChanged":false},"completions":{},"logging":{}})"));
  CHECK(result["instructions"].as_string() == "level zero");
  CHECK(result["ttlMs"].as_int() == kCacheTtlMs);
  CHECK(result["cacheScope"].as_string() == "public");
  CHECK(result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"].as_string() == "cleo");
  CHECK(result["_meta"]["io.modelcontextprotocol/serverInfo"]["version"].as_string() == product_version());
  // Nothing of the connection changed: no version was negotiated, no client recorded.
  CHECK(f.connection.protocol_version.empty());
  CHECK(f.connection.client_name.empty());
  // clientInfo is optional (a SHOULD).
  json::Value bare = f.reply(R"({"jsonrpc":"2.0","id":2,"method":"server/discover","params":{"_meta":{)"
                             R"("io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}})");
  CHECK(bare["result"]["supportedVersions"].size() == 1);
}

TEST_CASE("stateless: server/discover gives a client the instructions initialize would", "[mcp][stateless]") {
  test::Project project;
  ServerInfo info{"cleo", std::string(product_version()), "level zero", {}};
  info.tailored_instructions = [](std::string_view client) -> std::optional<std::string> {
    if (client == "claude-code") return "see the CLEO block of CLAUDE.md";
    return std::nullopt;
  };
  Protocol protocol(registry(), info);
  Connection connection;
  auto discover = [&](std::string_view client) {
    std::string message = R"({"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{)"
                          R"("io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},)"
                          R"("io.modelcontextprotocol/clientInfo":{"name":")" + std::string(client) + R"(","version":"1"}}}})";
    return test::parse_json(*protocol.handle(message, connection, project.router()).reply)["result"];
  };
  json::Value tailored = discover("claude-code");
  CHECK(tailored["instructions"].as_string() == "see the CLEO block of CLAUDE.md");
  CHECK(tailored["cacheScope"].as_string() == "private");  // this client's own: no shared cache keeps it
  json::Value general = discover("another-host");
  CHECK(general["instructions"].as_string() == "level zero");
  CHECK(general["cacheScope"].as_string() == "public");
}

TEST_CASE("stateless: tools/list and tools/call with per-request _meta", "[mcp][stateless]") {
  Fixture f;
  json::Value listed = f.reply(request("1", "tools/list"));
  const json::Value& result = listed["result"];
  CHECK(result["resultType"].as_string() == "complete");
  CHECK(result["ttlMs"].as_int() == kCacheTtlMs);
  CHECK(result["cacheScope"].as_string() == "public");
  // The same tools as the handshake revisions list.
  CHECK(result["tools"] == test::parse_json(f.protocol.tools_list_result())["tools"]);
  CHECK(f.protocol.stateless_tools_list_result().size() < f.protocol.tools_list_result().size() + 80);

  json::Value added = f.reply(request(
      "2", "tools/call", R"("name":"cleo_mutate","arguments":{"domain":"tasks","operation":"add","params":{"title":"Stateless"}})"));
  CHECK(added["result"]["resultType"].as_string() == "complete");
  CHECK(added["result"]["isError"] == json::Value(false));
  CHECK(added["result"]["structuredContent"]["data"]["id"].as_string() == "T001");
  CHECK(added["result"]["_meta"]["io.modelcontextprotocol/serverInfo"]["name"].as_string() == "cleo");
  // The audit trail names the client from clientInfo.
  Envelope log = f.project.query("system", "log", R"({"limit":1})");
  CHECK(to_json(log, McpAdvice(registry())).find("stateless-test") != std::string::npos);

  // An error result is still a result (isError), not a JSON-RPC error.
  Outcome missing = f.send(request("3", "tools/call", R"("name":"cleo_query","arguments":{"domain":"tasks","operation":"show","params":{"id":"T404"}})"));
  CHECK(missing.error_code == 0);
  CHECK(test::parse_json(*missing.reply)["result"]["isError"] == json::Value(true));
}

TEST_CASE("stateless: a CLEO session is not carried from one request to the next", "[mcp][stateless]") {
  Fixture f;
  json::Value started = f.reply(request("1", "tools/call", R"("name":"cleo_mutate","arguments":{"domain":"session","operation":"start","params":{"scope":"global"}})"));
  std::string session = started["result"]["structuredContent"]["data"]["id"].as_string();
  CHECK_FALSE(session.empty());
  CHECK(f.connection.session.empty());
  json::Value status = f.reply(request("2", "tools/call", R"("name":"cleo_query","arguments":{"domain":"session","operation":"status"}})"));
  CHECK(status["result"]["structuredContent"]["data"].is_null());  // E_NO_DATA note: bound to nothing

  // Under strict enforcement a write needs the session: the call names it with sessionId.
  REQUIRE(f.project.mutate_as_person("system", "config.set", R"({"key":"session.enforcement","value":"strict"})").success);
  auto add = [&](std::string_view id, std::string_view extra) {
    return f.reply(request(id, "tools/call",
                           R"("name":"cleo_mutate","arguments":{"domain":"tasks","operation":"add","params":{"title":"In a session")" +
                               std::string(extra) + "}}"));
  };
  CHECK(add("4", "")["result"]["structuredContent"]["error"]["code"].as_string() == "E_SESSION_REQUIRED");
  json::Value named = add("5", R"(,"sessionId":")" + session + "\"");
  INFO(named.dump());
  CHECK(named["result"]["structuredContent"]["data"]["id"].as_string() == "T001");
  CHECK(add("6", R"(,"sessionId":"ses_nosuchsession")")["result"]["structuredContent"]["error"]["code"].as_string() ==
        "E_SESSION_NOT_FOUND");
  json::Value in_session = f.reply(request("7", "tools/call",
                                           R"("name":"cleo_query","arguments":{"domain":"session","operation":"status","params":{"sessionId":")" +
                                               session + R"("}})"));
  CHECK(in_session["result"]["structuredContent"]["data"]["id"].as_string() == session);
  CHECK(f.connection.session.empty());  // naming a session binds nothing
  Envelope log = f.project.query("system", "log", R"({"limit":1})");
  CHECK(to_json(log, McpAdvice(registry())).find(session) != std::string::npos);  // the write is audited in that session

  // The session is named explicitly instead.
  json::Value ended = f.reply(request("8", "tools/call",
                                      R"("name":"cleo_mutate","arguments":{"domain":"session","operation":"end","params":{"id":")" +
                                          session + R"("}})"));
  CHECK(ended["result"]["structuredContent"]["success"] == json::Value(true));
  CHECK(ended["result"]["structuredContent"]["data"] == json::Value::object());  // the id it sent is not echoed
}

TEST_CASE("stateless: missing or malformed _meta is -32602", "[mcp][stateless]") {
  Fixture f;
  auto code_of = [&](std::string_view message) {
    Outcome outcome = f.send(message);
    CHECK(outcome.stateless);
    json::Value reply = test::parse_json(*outcome.reply);
    CHECK(reply["error"]["code"].as_int() == outcome.error_code);
    return outcome.error_code;
  };
  // server/discover exists only in the stateless revision, so it needs _meta wherever it comes from.
  CHECK(code_of(R"({"jsonrpc":"2.0","id":1,"method":"server/discover"})") == -32602);
  CHECK(code_of(R"({"jsonrpc":"2.0","id":1,"method":"server/discover","params":{}})") == -32602);
  // A claim (the version key) with no capabilities, or a version that is not a string.
  CHECK(code_of(R"({"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}})") == -32602);
  CHECK(code_of(R"({"jsonrpc":"2.0","id":3,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":20260728,"io.modelcontextprotocol/clientCapabilities":{}}}})") == -32602);
  CHECK(code_of(R"({"jsonrpc":"2.0","id":4,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":[]}}})") == -32602);
  json::Value reply = f.reply(R"({"jsonrpc":"2.0","id":5,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/clientCapabilities":{}}}})");
  CHECK(reply["id"].as_int() == 5);
  CHECK(reply["error"]["data"]["missing"] == test::parse_json(R"(["io.modelcontextprotocol/protocolVersion"])"));
  CHECK(reply["error"]["message"].as_string().find("protocolVersion") != std::string::npos);
}

TEST_CASE("stateless: an unsupported version is -32022 with the supported ones", "[mcp][stateless]") {
  Fixture f;
  for (std::string_view version : {"2099-01-01", "v999.0.0", "2025-11-25"}) {
    std::string message = R"({"jsonrpc":"2.0","id":9,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":")" +
                          std::string(version) + R"(","io.modelcontextprotocol/clientCapabilities":{}}}})";
    Outcome outcome = f.send(message);
    CHECK(outcome.error_code == -32022);
    json::Value reply = test::parse_json(*outcome.reply);
    CHECK(reply["id"].as_int() == 9);
    CHECK(reply["error"]["data"]["supported"] == test::parse_json(R"(["2026-07-28"])"));
    CHECK(reply["error"]["data"]["requested"].as_string() == version);
  }
}

TEST_CASE("stateless: removed and unknown methods are -32601", "[mcp][stateless]") {
  Fixture f;  // a protocol without a resource watcher or a task runner: no subscriptions, no tasks
  for (std::string_view method : {"initialize", "ping", "logging/setLevel", "resources/subscribe", "resources/unsubscribe",
                                  "subscriptions/listen", "tasks/get", "tasks/result", "unknown/method"}) {
    Outcome outcome = f.send(request("\"m\"", method));
    INFO(method);
    CHECK(outcome.error_code == -32601);
    CHECK(test::parse_json(*outcome.reply)["id"].as_string() == "m");
  }
  // initialize with _meta is not the handshake: the connection negotiated nothing.
  CHECK(f.connection.protocol_version.empty());
  // …while the handshake itself still works on the same connection.
  json::Value init = f.reply(R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25"}})");
  CHECK(init["result"]["protocolVersion"].as_string() == "2025-11-25");
  CHECK(f.reply(R"({"jsonrpc":"2.0","id":2,"method":"ping"})")["result"] == json::Value::object());
  // A client asking initialize for the stateless revision is offered the latest handshake one.
  json::Value asked = f.reply(R"({"jsonrpc":"2.0","id":3,"method":"initialize","params":{"protocolVersion":"2026-07-28"}})");
  CHECK(asked["result"]["protocolVersion"].as_string() == "2025-11-25");
}

TEST_CASE("stateless: other refusals carry the request id and an error code", "[mcp][stateless]") {
  Fixture f;
  Outcome cursor = f.send(request("1", "tools/list", R"("cursor":"abc")"));
  CHECK(cursor.error_code == -32602);
  Outcome tool = f.send(request("2", "tools/call", R"("name":"nope","arguments":{})"));
  CHECK(tool.error_code == -32602);
  CHECK(test::parse_json(*tool.reply)["error"]["data"]["valid"].size() == 2);
  Outcome params = f.send(R"({"jsonrpc":"2.0","id":3,"method":"tools/list","params":[1]})",
                          nullptr);  // not a claim: answered as before
  CHECK_FALSE(params.stateless);
  // Notifications are never answered, and touch no connection.
  Outcome note = f.send(R"({"jsonrpc":"2.0","method":"notifications/initialized","params":{)" + std::string(kMeta) + "}}");
  CHECK_FALSE(note.reply);
  CHECK(note.kind == MessageKind::Notification);
  CHECK_FALSE(f.connection.initialized);
  // Batches do not exist in 2026-07-28: inside a (2025-03-26) batch a claiming request is refused.
  f.reply(R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26"}})");
  json::Value batch = f.reply("[" + request("4", "tools/list") + R"(,{"jsonrpc":"2.0","id":5,"method":"ping"}])");
  REQUIRE(batch.size() == 2);
  CHECK(batch.as_array()[0]["error"]["code"].as_int() == -32600);
  CHECK(batch.as_array()[1]["result"] == json::Value::object());
}

TEST_CASE("stateless: HTTP headers must mirror the body (-32020)", "[mcp][stateless]") {
  Fixture f;
  MirroredHeaders good{"2026-07-28", "tools/call", "cleo_query"};
  std::string call = request("1", "tools/call", R"("name":"cleo_query","arguments":{"domain":"tasks","operation":"list"})");
  CHECK(f.send(call, &good).error_code == 0);
  auto code_with = [&](MirroredHeaders headers, const std::string& message) { return f.send(message, &headers).error_code; };
  CHECK(code_with({std::nullopt, "tools/call", "cleo_query"}, call) == -32020);          // no version header
  CHECK(code_with({"2026-07-28", std::nullopt, "cleo_query"}, call) == -32020);          // no method header
  CHECK(code_with({"2026-07-28", "tools/call", std::nullopt}, call) == -32020);          // no name header
  CHECK(code_with({"2026-07-28", "tools/list", "cleo_query"}, call) == -32020);          // another method
  CHECK(code_with({"2026-07-28", "tools/call", "cleo_mutate"}, call) == -32020);         // another tool
  CHECK(code_with({"2026-07-28", "tools/call", "=?base64?Y2xlb19xdWVyeQ==?="}, call) == 0);  // cleo_query, encoded
  CHECK(code_with({"2026-07-28", "tools/call", "=?base64?!!!?="}, call) == -32020);
  CHECK(code_with({"2026-07-28", "tools/call", "cleo_query\x01"}, call) == -32020);      // a control character
  // The header names a stateless version the body does not: a mismatch, not an unsupported version.
  std::string other = R"({"jsonrpc":"2.0","id":7,"method":"server/discover","params":{"_meta":{)"
                      R"("io.modelcontextprotocol/protocolVersion":"v999.0.0","io.modelcontextprotocol/clientCapabilities":{}}}})";
  CHECK(code_with({"2026-07-28", "server/discover", std::nullopt}, other) == -32020);
  // Both say v999.0.0: they agree, and the version is refused.
  CHECK(code_with({"v999.0.0", "server/discover", std::nullopt}, other) == -32022);
  // The version header alone makes a request stateless: one with no _meta is -32602.
  CHECK(code_with({"2026-07-28", "server/discover", std::nullopt},
                  R"({"jsonrpc":"2.0","id":8,"method":"server/discover","params":{}})") == -32602);
  CHECK(code_with({"2026-07-28", "tools/list", std::nullopt}, R"({"jsonrpc":"2.0","id":8,"method":"ping"})") == -32602);
}

TEST_CASE("request meta: reading _meta and decoding header values", "[mcp][stateless]") {
  CHECK(claims_request_meta(test::parse_json(R"({"_meta":{"io.modelcontextprotocol/protocolVersion":null}})")));
  CHECK_FALSE(claims_request_meta(test::parse_json(R"({"_meta":{"progressToken":1}})")));
  CHECK_FALSE(claims_request_meta(json::Value()));
  auto meta = read_request_meta(test::parse_json(
      R"({"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"sampling":{}},)"
      R"("io.modelcontextprotocol/clientInfo":"not an object"}})"));
  REQUIRE(meta);
  CHECK(meta->protocol_version == "2026-07-28");
  CHECK(meta->client_name.empty());  // a malformed clientInfo is ignored, not refused
  CHECK(decode_header_value("plain") == "plain");
  CHECK(decode_header_value("=?base64?SGVsbG8sIOS4lueVjA==?=") == "Hello, \xe4\xb8\x96\xe7\x95\x8c");
  CHECK(decode_header_value("=?base64?IHBhZGRlZCA=?=") == " padded ");
  CHECK(decode_header_value("=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?=") == "=?base64?literal?=");
  CHECK_FALSE(decode_header_value("=?base64?abc?="));   // not a multiple of 4
  CHECK_FALSE(decode_header_value("=?base64?ab=c?="));  // a digit after padding
  CHECK(is_stateless_version("2026-07-28"));
  CHECK_FALSE(is_stateless_version("2025-11-25"));
  CHECK(is_handshake_version("2025-11-25"));
  CHECK_FALSE(is_handshake_version("2026-07-28"));
}
