// ct-synthetic-help: what an agent would be handed once the registry holds more operations than
// today. Grows the product's registry to N operations (default: 12 more than today) with operations of the kind
// later issues add, spread over the existing domains and split between the overview tiers in the
// same proportion as the operations already registered, then prints, as one JSON object:
//   {"operations": N, "added": [names], "level0": text, "level1": text, "toolsList": text}
// budgets.mjs counts their tokens against issue 13's budgets (level 0 < 250, level 1 <= 900,
// tools/list <= 250): help that scales is proven before the operations exist.
//   ct-synthetic-help [--operations N]
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "core/json.h"
#include "disclosure/help_levels.h"
#include "gateway/product.h"
#include "gateway/server_commands.h"
#include "gateway/mcp_protocol.h"

namespace {

struct Candidate {
  std::string_view domain, name;
  ct::Gateway gateway;
  std::string_view summary;
};

// Plausible additions, each in a domain that exists today (the enums keep their twelve names).
constexpr Candidate kCandidates[] = {
    {"tasks", "split", ct::Gateway::Mutate, "Split a task into subtasks that share its parent and labels"},
    {"session", "handoff", ct::Gateway::Mutate, "Hand the session and its focus to another agent"},
    {"release", "verify", ct::Gateway::Query, "Check that a release's tasks are done and its tag exists"},
    {"research", "compare", ct::Gateway::Query, "Compare two research entries finding by finding"},
    {"skills", "update", ct::Gateway::Mutate, "Update an installed skill from its source"},
    {"issues", "list", ct::Gateway::Query, "List the issues filed from this project"},
    {"lifecycle", "summary", ct::Gateway::Query, "Where every epic stands in the lifecycle"},
    {"orchestrate", "cancel", ct::Gateway::Mutate, "Stop a running subagent and put its task back"},
    {"providers", "remove", ct::Gateway::Mutate, "Remove CLEO from a provider's configuration"},
    {"validate", "history", ct::Gateway::Query, "Past validation results of a task or the project"},
    {"system", "doctor", ct::Gateway::Query, "Diagnose the installation and suggest fixes"},
    {"tasks", "merge", ct::Gateway::Mutate, "Merge a duplicate task into another, keeping notes"},
};

int usage() {
  std::fprintf(stderr, "usage: ct-synthetic-help [--operations N]   (N: from today's count to %zu more)\n",
               std::size(kCandidates));
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  ct::Registry grown = ct::registry();
  const std::size_t today = grown.operations().size();
  std::size_t wanted = today + std::size(kCandidates);
  if (argc == 3 && std::string_view(argv[1]) == "--operations") {
    char* end = nullptr;
    wanted = std::strtoul(argv[2], &end, 10);
    if (*end != '\0') return usage();
  } else if (argc != 1) {
    return usage();
  }
  if (wanted < today || wanted - today > std::size(kCandidates)) return usage();

  // Tier 2 operations are named on level 1's `also:` lines, the others get a line each: keep the
  // registry's own mix, so the added ones cost what the next real ones will.
  std::size_t advanced = 0;
  for (const auto& spec : grown.operations()) advanced += spec.tier >= 2 ? 1 : 0;
  std::vector<std::string> added;
  std::size_t added_advanced = 0;
  for (const auto& candidate : kCandidates) {
    if (grown.operations().size() == wanted) break;
    if (grown.find(candidate.domain, candidate.name)) continue;
    const std::size_t count = added.size() + 1;
    const bool tier2 = added_advanced < (count * advanced + today / 2) / today;
    added_advanced += tier2 ? 1 : 0;
    grown.add({.domain = candidate.domain, .name = candidate.name, .gateway = candidate.gateway,
               .summary = candidate.summary, .tier = tier2 ? 2 : 1});
    added.push_back(std::string(candidate.domain) + "." + std::string(candidate.name) + (tier2 ? " (tier 2)" : " (tier 1)"));
  }
  if (grown.operations().size() != wanted) {
    std::fprintf(stderr, "ct-synthetic-help: only %zu operations could be made\n", grown.operations().size());
    return 1;
  }

  auto level0 = ct::disclosure::level0(grown);
  auto level1 = ct::disclosure::level1(grown);
  if (!level0 || !level1) {
    std::fprintf(stderr, "ct-synthetic-help: %s\n", (!level0 ? level0.error() : level1.error()).message.c_str());
    return 1;
  }
  ct::mcp::Protocol protocol(grown, ct::mcp::server_info(grown));
  std::string text;
  ct::json::Writer w(text);
  w.begin_object();
  w.key("operations").value(static_cast<std::int64_t>(grown.operations().size()));
  w.key("added").begin_array();
  for (const auto& name : added) w.value(name);
  w.end_array();
  w.key("level0").value(*level0);
  w.key("level1").value(*level1);
  w.key("toolsList").value(protocol.tools_list_result());
  w.end_object();
  text += "\n";
  std::fwrite(text.data(), 1, text.size(), stdout);
  return 0;
}
