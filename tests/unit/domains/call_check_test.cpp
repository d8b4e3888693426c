// Suggested calls: the check that each names a registered operation whose params pass its
// validation (under tests it runs on every call an edge writes: gateway/mcp_syntax_test.cpp),
// and that every operation a layer below the edges may suggest is registered.
#include <catch2/catch.hpp>

#include <algorithm>

#include "gateway/product.h"
#include "domains/call_check.h"
#include "engines/rules/protocol.h"

using namespace ct;

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
  // The product also checks it when it starts, under tests (gateway/product.h).
  CHECK(unknown_suggested_operations(registry()).empty());
  const std::vector<std::string_view> unknown = unknown_suggested_operations(Registry());
  CHECK(std::find(unknown.begin(), unknown.end(), std::string_view("tasks.show")) != unknown.end());
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
