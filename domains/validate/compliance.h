// Shared by validate.compliance.record and validate.test.run: storing a compliance result.
#pragma once

#include "core/json.h"
#include "domains/context.h"
#include "engines/store/store.h"

namespace ct {

/// Records the check and audits it against its task; the reply's common fields (defined in
/// validate_domain.cpp).
Result<json::Value> store_record(Context& context, ComplianceRecord& record);

}  // namespace ct
