// Suggested calls: how the envelope writes them, and the check that each names a registered
// operation whose params pass its validation. Under tests the check runs on every call an edge
// writes (the unit suite and the transcripts), so a fix that would not run stops the run.
#include <catch2/catch.hpp>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <sys/wait.h>
#include <unistd.h>

#include "disclosure/product.h"
#include "domains/call_text.h"
#include "engines/rules/protocol.h"

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

TEST_CASE("a suggested call must name a registered operation whose params validate", "[calls]") {
  const Registry& operations = registry();
  CHECK(check_call(*call("tasks.show", {{"id", "T001"}}).only_call(), operations));
  CHECK(check_call(*call("system.restore").only_call(), operations));
  // Placeholders stand for a valid value of their param.
  CHECK(check_call(*call("tasks.reparent", {{"id", "…"}, {"parent", "…"}}).only_call(), operations));
  CHECK(check_call(*call("release.changelog", {{"version", "…"}}).only_call(), operations));
  CHECK(check_call(*call("lifecycle.skip", {{"id", "T1"}, {"stage", "research"}, {"reason", "<why, 10+ characters>"}})
                        .only_call(),
                   operations));

  auto refused = [&](const Advice& advice) {
    auto checked = check_call(*advice.only_call(), operations);
    INFO(advice.plain_text());
    REQUIRE_FALSE(checked);
    return checked.error().message;
  };
  // call() takes only declared names (core/suggested_operations.h); a Call may name anything.
  CHECK(refused(Advice(Call{"tasks.shwo", json::Value(json::Value::Object{{"id", "T001"}})}))
            .find("no operation tasks.shwo") != std::string::npos);
  CHECK(refused(call("tasks.show", {{"task", "T001"}})).find("task") != std::string::npos);        // unknown param
  CHECK(refused(call("tasks.show", {{"id", "not an id"}})).find("id") != std::string::npos);       // bad task id
  CHECK(refused(call("tasks.list", {{"status", "sleeping"}})).find("status") != std::string::npos);  // no such choice
  CHECK(refused(call("tasks.show")).find("id") != std::string::npos);                              // a required param
}

TEST_CASE("every operation a layer below the edges may suggest is registered", "[calls]") {
  // The product also checks it when it starts, under tests (disclosure/product.h).
  CHECK(unknown_suggested_operations(registry()).empty());
  const std::vector<std::string_view> unknown = unknown_suggested_operations(Registry());
  CHECK(std::find(unknown.begin(), unknown.end(), std::string_view("tasks.show")) != unknown.end());
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

TEST_CASE("every protocol rule's fix names calls that would run", "[calls][protocol]") {
  const Registry& operations = registry();
  for (const auto& protocol : protocols()) {
    for (const auto& rule : protocol.rules) {
      Advice fix = rule.fix;
      fix.substitute("{entryId}", "T001-topic").substitute("{id}", "T001");
      for (const auto& part : fix.parts()) {
        if (!part.call) continue;
        INFO(rule.id << ": " << part.call->operation << " " << part.call->params.dump());
        CHECK(check_call(*part.call, operations));
      }
    }
  }
}
