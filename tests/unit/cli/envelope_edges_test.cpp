// Each edge writes the same envelope its own way (domains/envelope.h): the MCP tools' syntax
// (gateway/mcp_syntax.h), `ct` command lines (cli/usage.h: PeopleAdvice) and JSON parts for the
// dashboard's page — and a remembered reply is written again by whichever edge repeats the call.
#include <catch2/catch.hpp>

#include "cli/usage.h"
#include "core/json_parse.h"
#include "domains/envelope.h"
#include "unit/domains/advising_envelope.h"
#include "gateway/mcp_syntax.h"
#include "gateway/product.h"

using namespace ct;

using test::advising;

TEST_CASE("each edge writes the same envelope its own way", "[envelope]") {
  const Envelope envelope = advising();
  const std::string mcp = to_json(envelope, McpAdvice(registry()));
  CHECK(mcp == to_value(envelope, McpAdvice(registry())).dump());
  CHECK(mcp.find(R"("fix":"cleo_query {domain:'tasks', operation:'show', params:{id:'T001'}} shows it")") !=
        std::string::npos);
  CHECK(mcp.find(R"({"check":"db","fix":"cleo_query {domain:'system', operation:'health'}"})") != std::string::npos);
  CHECK(mcp.find(R"("warnings":["plain","reopen it: cleo_mutate {domain:'tasks', operation:'reopen', params:{id:'T001'}}"])") !=
        std::string::npos);
  CHECK(mcp.find("$advice") == std::string::npos);

  const std::string people = to_json(envelope, cli::PeopleAdvice(registry()));
  CHECK(people.find(R"("fix":"`ct show T001` shows it")") != std::string::npos);
  CHECK(people.find(R"("reopen it: `ct tasks reopen T001`")") != std::string::npos);
  CHECK(people.find("cleo_") == std::string::npos);

  const json::Value page = to_value(envelope, AdviceAsJson(registry()));
  CHECK(page["data"]["fix"].dump() == R"([{"operation":"tasks.show","params":{"id":"T001"}}," shows it"])");
  CHECK(page["_meta"]["warnings"].as_array().front() == json::Value("plain"));

  Envelope failed = failure(Error(ErrorCode::NotFound, "Task T9 not found").with_fix(call("tasks.find", {{"query", "T9"}})));
  CHECK(error_to_value(*failed.error, McpAdvice(registry()))["fix"] ==
        json::Value("cleo_query {domain:'tasks', operation:'find', params:{query:'T9'}}"));
  CHECK(to_value(failed, cli::PeopleAdvice(registry()))["error"]["fix"] == json::Value("ct find T9"));
}

TEST_CASE("a remembered reply is written by the edge that repeats the call", "[envelope]") {
  const Envelope envelope = advising();
  auto parsed = json::parse(to_json(envelope, AdviceAsValue(registry())));
  REQUIRE(parsed);
  Envelope replayed = envelope_from_value(*parsed);
  CHECK(to_json(replayed, cli::PeopleAdvice(registry())) == to_json(envelope, cli::PeopleAdvice(registry())));
}
