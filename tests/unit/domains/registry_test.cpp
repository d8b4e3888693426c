#include <catch2/catch.hpp>
#include <regex>
#include <set>

#include "core/json_parse.h"
#include "domains/params.h"
#include "domains/registry.h"
#include "gateway/product.h"

using namespace ct;

TEST_CASE("every registered operation is well formed", "[registry]") {
  const Registry& r = registry();
  REQUIRE(!r.operations().empty());
  std::set<std::string> names;
  for (const auto& spec : r.operations()) {
    INFO(spec.full_name());
    CHECK(names.insert(spec.full_name()).second);
    CHECK(std::regex_match(std::string(spec.name), std::regex("^[a-z][a-zA-Z.]*$")));
    CHECK(!spec.summary.empty());
    CHECK(spec.summary.size() <= 70);  // one line at help level 1
    CHECK(!spec.returns.empty());
    CHECK(!spec.examples.empty());
    CHECK((static_cast<bool>(spec.handler) || static_cast<bool>(spec.external)));
    std::set<std::string> params;
    for (const auto& p : spec.params) {
      INFO(p.name);
      CHECK(params.insert(std::string(p.name)).second);
      CHECK(!p.description.empty());
      CHECK(p.name != "meta");  // router-level
      if (p.type == ParamType::Enum) CHECK(!p.choices.empty());
      if (!p.default_json.empty()) {
        auto parsed = json::parse(p.default_json);
        REQUIRE(parsed);
        // The default itself must pass the param's own validation.
        OperationSpec probe{.domain = spec.domain, .name = spec.name, .params = {p}};
        json::Value raw = json::Value::object();
        raw.set(p.name, *parsed);
        CHECK(Params::validate(probe, raw).has_value());
      }
      if (!p.pattern.empty()) CHECK_NOTHROW(std::regex(std::string(p.pattern)));
    }
    // Every example is a valid call: documentation cannot drift from validation.
    for (const auto& example : spec.examples) {
      INFO(example.params_json);
      auto parsed = json::parse(example.params_json);
      REQUIRE(parsed);
      auto validated = Params::validate(spec, *parsed);
      if (!validated) FAIL(validated.error().message);
    }
    // Shortcuts are unique CLI verbs.
  }
  std::set<std::string> shortcuts;
  for (const auto& spec : r.operations())
    if (!spec.shortcut.empty()) CHECK(shortcuts.insert(std::string(spec.shortcut)).second);
}

TEST_CASE("the tasks domain has the operations of docs/architecture.md §5 (analyze comes later)", "[registry]") {
  const Registry& r = registry();
  for (auto name : {"show", "list", "find", "exists", "tree", "next", "deps", "blockers", "stats", "history",
                    "current", "relates", "export"}) {
    INFO(name);
    const auto* spec = r.find("tasks", name);
    REQUIRE(spec);
    CHECK(spec->gateway == Gateway::Query);
  }
  for (auto name : {"add", "update", "complete", "delete", "archive", "restore", "reopen", "reparent", "promote",
                    "reorder", "start", "stop", "relate", "import"}) {
    INFO(name);
    const auto* spec = r.find("tasks", name);
    REQUIRE(spec);
    CHECK(spec->gateway == Gateway::Mutate);
  }
  CHECK(r.find("system", "init"));
  CHECK(r.find("system", "version"));
}

TEST_CASE("the dashboard may run the task, memory and proposal mutations its page offers, no others", "[registry]") {
  std::vector<std::string> runs;
  for (const auto& spec : registry().operations())
    if (spec.dashboard) {
      INFO(spec.full_name());
      CHECK((spec.domain == "tasks" || spec.domain == "memory" || spec.name.starts_with("proposal.") ||
             spec.full_name() == "session.send"));
      CHECK(spec.gateway == Gateway::Mutate);
      runs.push_back(spec.full_name());
    }
  CHECK(runs == std::vector<std::string>{"tasks.add", "tasks.update", "tasks.complete", "tasks.reopen", "tasks.start",
                                         "tasks.stop", "session.send", "system.proposal.approve",
                                         "system.proposal.reject", "memory.retract", "memory.verify"});
}

TEST_CASE("domain lists follow the canonical order and the gateway", "[registry]") {
  const Registry& r = registry();
  auto all = r.domains();
  REQUIRE(all.size() >= 3);
  CHECK(all[0] == "tasks");
  CHECK(all[1] == "session");
  CHECK(all[2] == "system");
  auto query = r.domains(Gateway::Query);
  CHECK(std::find(query.begin(), query.end(), "tasks") != query.end());
}
