// The operations disclosure/ serves (system.help, system.inject, providers.inject, orchestrate.spawn,
// research.inject) and what it adds to system.init.
#pragma once

#include "domains/registry.h"

namespace ct::disclosure {

/// Also adds system.init's step: the project injection (the operations of domains/ come first).
void register_disclosure_operations(Registry& registry);

}  // namespace ct::disclosure
