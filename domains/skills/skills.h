// What the skills domain shares with the operations that choose a skill for a task
// (orchestrate.next and startup, orchestrate.spawn).
#pragma once

#include <string>
#include <vector>

#include "core/error.h"
#include "domains/context.h"
#include "engines/rules/skills.h"

namespace ct {

/// The skills this call sees: built-ins, the user's (under Context::home_dir()) and the project's.
/// A home that cannot be found, and every skill file skipped, become `warnings`.
Result<SkillCatalog> load_skill_catalog(const Context& context, std::vector<std::string>& warnings);

}  // namespace ct
