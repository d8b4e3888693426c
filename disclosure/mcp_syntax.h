// How a suggested call (core/advice.h) is written for agents: the MCP tools' own syntax,
// cleo_query {domain:'tasks', operation:'show', params:{id:'T001'}}, the tool being the gateway
// the registry gives the operation. disclosure/ writes the texts models read (help levels,
// prompts, spawn prompts, the injected block), so the syntax of their calls lives here, beside
// the `ct` command line's (cli_syntax.h): the MCP edge (gateway/) writes the envelopes it sends
// with McpAdvice, and the product measures what agents receive with it (Registry::agent_writer).
// The help levels' shorter form of a call is help_levels.h's short_call().
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
