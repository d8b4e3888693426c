// The capability matrix as data: every operation with its engine kind and whether it can run here
// now (system.capabilities lists it, system.health summarises it). Availability comes from the
// router's CapabilityResolver; operations that need nothing outside the process are available
// without a probe.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/json.h"
#include "domains/context.h"

namespace ct {

struct MatrixRow {
  const OperationSpec* spec = nullptr;
  Availability availability;
};

/// The operations of `domain` (every domain when empty), in registry order.
std::vector<MatrixRow> capability_matrix(Context& context, std::string_view domain = {});

/// Every distinct need of the registry's operations, in first-seen order.
std::vector<std::string_view> registry_needs(const Registry& registry);

}  // namespace ct
