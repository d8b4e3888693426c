// Remedies: the fix of an error whose raiser gave none (docs/architecture.md §3.3: every error
// carries one). The router gives it to every failure without a fix, as a call the edges write
// their own way.
#pragma once

#include <string>

#include "core/advice.h"
#include "core/error.h"
#include "domains/registry.h"

namespace ct {

/// The remedy of an error code: a concrete call where there is one (with the call's task id when
/// it had one, else T001), else system.help on the operation.
Advice fallback_fix(ErrorCode code, const OperationSpec& spec, const std::string& id);

}  // namespace ct
