// Suggested calls as agents read them: the MCP tools' syntax (gateway/mcp_syntax.h), and the
// check, under tests, that every call written names an operation whose params pass its validation.
#include <catch2/catch.hpp>

#include <csignal>
#include <cstdio>
#include <sys/wait.h>
#include <unistd.h>

#include "gateway/mcp_syntax.h"
#include "gateway/product.h"
#include "domains/call_check.h"

using namespace ct;

TEST_CASE("a call is written in the syntax of the tool its operation belongs to", "[calls]") {
  const Registry& operations = registry();
  CHECK(mcp_call(*call("tasks.show", {{"id", "T001"}}).only_call(), operations) ==
        "cleo_query {domain:'tasks', operation:'show', params:{id:'T001'}}");
  CHECK(mcp_text("read it again (" + call("tasks.show", {{"id", "T2"}}) + ") and retry", operations) ==
        "read it again (cleo_query {domain:'tasks', operation:'show', params:{id:'T2'}}) and retry");
  // No params, empty params, lists, numbers and booleans; a scalar param's value as JSON.
  CHECK(mcp_text(call("system.init"), operations) == "cleo_mutate {domain:'system', operation:'init'}");
  CHECK(mcp_text(call("tasks.stop", {}), operations) == "cleo_mutate {domain:'tasks', operation:'stop', params:{}}");
  CHECK(mcp_text(call("tasks.update", {{"id", "T2"}, {"depends", json::Value::Array{"T3", "T4"}}, {"mode", "replace"}}),
                 operations) ==
        "cleo_mutate {domain:'tasks', operation:'update', params:{id:'T2', depends:['T3', 'T4'], mode:'replace'}}");
  CHECK(mcp_text(call("system.config.set", {{"key", "backup.keep"}, {"value", "5"}}), operations) ==
        R"(cleo_mutate {domain:'system', operation:'config.set', params:{key:'backup.keep', value:"5"}})");
  CHECK(mcp_text(call("tasks.undo", {{"seq", 7}, {"force", true}}), operations) ==
        "cleo_mutate {domain:'tasks', operation:'undo', params:{seq:7, force:true}}");
  // A call made from an operation's example keeps the example's JSON.
  CHECK(mcp_text(operations.find("tasks", "show")->example_call(), operations).starts_with(
      R"(cleo_query {domain:'tasks', operation:'show', params:{"id":)"));
}

TEST_CASE("McpAdvice writes advice as agents read it, text alone as it is", "[calls]") {
  const McpAdvice agents(registry());
  CHECK(agents.write("retry in a few seconds") == json::Value("retry in a few seconds"));
  CHECK(agents.write(call("tasks.find", {{"query", "T9"}}) + " finds it") ==
        json::Value("cleo_query {domain:'tasks', operation:'find', params:{query:'T9'}} finds it"));
  // The product measures what agents receive with it.
  CHECK(registry().agent_writer().write(call("system.health")) ==
        json::Value("cleo_query {domain:'system', operation:'health'}"));
}

TEST_CASE("under tests, writing a call that would not run stops the process", "[calls]") {
  // The unit suite and the transcripts run with the check on (CLEO_CHECK_ERRORS, CLEO_TEST_MODE).
  REQUIRE(checking_contracts());
  pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    std::freopen("/dev/null", "w", stderr);
    (void)mcp_text("try " + call("tasks.show", {{"id", "not an id"}}), registry());
    _exit(0);
  }
  int status = 0;
  REQUIRE(waitpid(child, &status, 0) == child);
  CHECK(WIFSIGNALED(status));
  CHECK(WTERMSIG(status) == SIGABRT);
}
