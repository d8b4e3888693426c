// The audit trail's hash chain: each row's hash covers its content and the previous row's hash,
// so an edited, inserted or deleted row breaks the chain from that point on (validate.audit).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/error.h"
#include "engines/store.h"

namespace ct {

/// SHA-256 (hex) of `previous_hash` followed by the row's canonical content (seq included).
std::string audit_hash(std::string_view previous_hash, const AuditEntry& entry);

struct ChainReport {
  std::int64_t rows = 0;
  std::optional<std::int64_t> first_broken;  // seq of the first row whose hash does not verify
  std::string expected;                      // the hash the chain implies for that row
  std::string actual;                        // the hash stored
};

/// Reads the whole trail oldest first (in batches) and recomputes every hash.
Result<ChainReport> verify_audit_chain(Store& store);

}  // namespace ct
