// Every error carries a fix in the caller's own syntax: MCP calls for agents, `ct` command lines for
// people. The router gives a fix to every failure that has none (fallback_fix); here every error
// code of the table is walked through it for every operation, and every fix must read as a ct
// command line on the terminal.
#include <catch2/catch.hpp>

#include <string>

#include "cli/usage.h"
#include "cli/render.h"
#include "gateway/mcp_syntax.h"
#include "gateway/product.h"
#include "domains/remedies.h"
#include "domains/router.h"
#include "unit/test_support.h"

using namespace ct;

namespace {

bool mentions_mcp(std::string_view text) {
  return text.find("cleo_query") != std::string_view::npos || text.find("cleo_mutate") != std::string_view::npos ||
         text.find("{domain:") != std::string_view::npos;
}

/// Whether `text` shows a `ct` command line other than as what a person runs (a remedy that only
/// a person may take, such as raising a key only people set: the agent is told who runs it).
bool shell_command_for_agents(std::string_view text) {
  constexpr std::string_view person = "a person runs ";
  for (auto at = text.find("`ct "); at != std::string_view::npos; at = text.find("`ct ", at + 1))
    if (at < person.size() || text.substr(at - person.size(), person.size()) != person) return true;
  return false;
}

}  // namespace

TEST_CASE("every error code has a fix for every operation, in MCP syntax that ct translates", "[cli][errors]") {
  const Registry& operations = registry();
  for (const auto& info : error_table()) {
    if (is_success_note(info.code)) continue;
    for (const auto& spec : operations.operations()) {
      Advice fix = fallback_fix(info.code, spec, "T005");
      std::string wire = mcp_text(fix, operations);
      INFO(info.name << " for " << spec.full_name() << ": " << wire);
      REQUIRE_FALSE(fix.empty());
      CHECK_FALSE(shell_command_for_agents(wire));  // agents get MCP syntax, never a shell command to run
      CHECK_FALSE(mentions_mcp(cli::advice_for_people(fix, operations)));
    }
  }
}

TEST_CASE("the errors the sweep found without a fix, or with the wrong one, now carry the right one",
          "[cli][errors]") {
  test::Project p;
  p.add(R"({"title":"Epic","type":"epic"})");
  p.add(R"({"title":"First child","parent":"T001"})");
  p.add(R"({"title":"Second child","parent":"T001","depends":["T002"]})");
  auto fix_of = [](const Envelope& e) {
    REQUIRE(e.error);
    INFO(to_json(e, McpAdvice(registry())));
    CHECK_FALSE(e.error->fix.empty());
    CHECK_FALSE(mentions_mcp(cli::advice_for_people(e.error->fix, registry())));
    return mcp_text(e.error->fix, registry());
  };
  // A dependency cycle: the fix drops the link that closes it.
  auto cycle = p.mutate("tasks", "update", R"({"id":"T002","depends":["T003"]})");
  CHECK(test::code_of(cycle) == "E_CIRCULAR_REFERENCE");
  CHECK(fix_of(cycle) == "T003 already waits on T002: leave it out — cleo_mutate {domain:'tasks', operation:'update', "
                         "params:{id:'T002', depends:[], mode:'replace'}}");
  // Archiving a parent with open children.
  REQUIRE(p.mutate("tasks", "complete", R"({"id":"T001"})").success);  // done, with open children
  auto archive = p.mutate("tasks", "archive", R"({"id":"T001"})");
  CHECK(test::code_of(archive) == "E_HAS_CHILDREN");
  CHECK(fix_of(archive).find("operation:'list', params:{parent:'T001'") != std::string::npos);
  // An operation that does not exist, under a word callers use: the right operation and its call.
  auto get = p.query("tasks", "view", R"({"id":"T002"})");
  CHECK(test::code_of(get) == "E_INVALID_OPERATION");
  CHECK(get.error->details["didYouMean"].as_string() == "show");
  CHECK(fix_of(get).find("operation:'show'") != std::string::npos);
  CHECK(p.mutate("tasks", "done", R"({"id":"T002"})").error->details["didYouMean"].as_string() == "complete");
  // The CLI shows it as a command line.
  CHECK(cli::advice_for_people(get.error->fix, registry()).starts_with("ct show"));
}
