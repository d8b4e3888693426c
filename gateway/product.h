// The product: every operation of every layer in one registry, whose agents read advice in the MCP
// tools' syntax (mcp_syntax.h: its Registry::agent_writer). Assembled here, at the edge that owns
// that syntax; transports (cli/, gateway/), programs and tests take it from here; handlers receive
// it through Context::registry.
#pragma once

#include "domains/registry.h"

namespace ct {

/// domains/' operations plus disclosure/'s (system.help, system.inject), with system.init also
/// rendering the agent instructions into the new project.
const Registry& registry();

}  // namespace ct
