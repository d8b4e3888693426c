// The two MCP tools, cleo_query and cleo_mutate, as a projection of the registry: their names,
// descriptions, input schemas and annotations — the `tools` array of every tools/list reply, in
// every protocol revision. The schema is written for the strictest hosts known (docs/disclosure.md,
// "What each host receives"): every node typed, every object with non-empty `properties` (the
// Gemini API's function declarations refuse an OBJECT without them), and the one free-form object
// (`params`) open explicitly, so that a host converting schemas to OpenAI strict mode falls back
// to non-strict instead of closing `params` to `{}`.
#pragma once

#include <string>
#include <string_view>

#include "domains/registry.h"

namespace ct::mcp {

/// The tool's description: what it does (its annotations say the rest).
std::string_view tool_description(Gateway gateway);
/// The description of the `params` argument: every operation's params go there, and system.help
/// lists them.
std::string_view params_description();

/// The JSON Schema of one tool's arguments {domain, operation, params} (compact JSON).
std::string input_schema(const Registry& registry, Gateway gateway);

/// The `tools` array of a tools/list result (compact JSON), cleo_query first. With
/// `task_support` (a 2025-11-25 client that takes tasks), cleo_mutate says its calls may run as
/// tasks (execution.taskSupport "optional"); cleo_query's never do.
std::string tools_array(const Registry& registry, bool task_support = false);

}  // namespace ct::mcp
