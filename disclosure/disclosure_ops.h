// The operations disclosure/ serves: system.help and system.inject.
#pragma once

#include <filesystem>

#include "core/error.h"
#include "core/json.h"
#include "domains/registry.h"

namespace ct::disclosure {

void register_disclosure_operations(Registry& registry);

/// The project injection `system.init` performs: renders the templates into .cleo/templates/ and
/// refreshes the block of the instruction files that already exist (never creates one). Returns
/// the files it wrote as [{file, action}].
Result<json::Value> inject_after_init(const Registry& registry, const std::filesystem::path& root);

}  // namespace ct::disclosure
