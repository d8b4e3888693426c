// research.inject: the output protocol a subagent needs to write its output file and append its
// line to the research manifest, from templates/research/inject.md.
#pragma once

#include "domains/registry.h"

namespace ct::disclosure {

void register_research_inject(Registry& registry);

}  // namespace ct::disclosure
