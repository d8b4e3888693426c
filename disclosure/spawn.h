// orchestrate.spawn: a subagent's whole prompt for one task, from templates/spawn/prompt.md.
#pragma once

#include "domains/registry.h"

namespace ct::disclosure {

void register_spawn_operation(Registry& registry);

}  // namespace ct::disclosure
