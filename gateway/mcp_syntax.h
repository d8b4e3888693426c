// How a suggested call (core/advice.h) is written for agents: the MCP tools' own syntax,
// cleo_query {domain:'tasks', operation:'show', params:{id:'T001'}}, the tool being the gateway
// the registry gives the operation. The MCP edge writes the envelopes it sends with McpAdvice, and
// the product (gateway/product.h) gives it to its registry as the agents' writer
// (Registry::agent_writer): what a reply's budget and knownHash measure, and how the texts agents
// read below this edge — prompts, resources, a spawn prompt's memory, a briefing's hook — write
// the advice they hold, without spelling the syntax themselves. The help levels' shorter form of
// a call is disclosure/help_levels.h's short_call().
#pragma once

#include <string>

#include "core/advice.h"
#include "domains/registry.h"

namespace ct {

/// cleo_query {domain:'tasks', operation:'show', params:{id:'T001'}}.
std::string mcp_call(const Call& call, const Registry& registry);
/// The advice with each call as mcp_call() writes it.
std::string mcp_text(const Advice& advice, const Registry& registry);

/// Advice as agents read it: text, each call as mcp_call() writes it (checked under tests).
class McpAdvice final : public AdviceWriter {
 public:
  explicit McpAdvice(const Registry& registry) : registry_(registry) {}
  json::Value write(const Advice& advice) const override { return mcp_text(advice, registry_); }

 private:
  const Registry& registry_;
};

}  // namespace ct
