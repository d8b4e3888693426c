// Sealed epochs of the audit trail (system.epoch.seal), read back for validate.audit and the
// dashboard: each is the seal's own audit row, whose change `epoch` holds the name and the hash of
// the row it sealed.
#pragma once

#include <cstdint>
#include <string_view>
#include <string>
#include <vector>

#include "core/clock.h"
#include "core/error.h"
#include "core/json.h"
#include "engines/store/audit_log.h"

namespace ct {

struct Epoch {
  std::string name;
  std::int64_t seq = 0;     // the newest row when it was sealed
  std::string hash;         // that row's hash then
  std::string summary;
  std::int64_t row = 0;     // the seal's own row
  TimeMs sealed_at = 0;
  std::string agent;
};

/// The record of seals kept outside the store, which a team commits (`.cleo/audit-seals.jsonl`): one
/// line per seal, {name, seq, hash, sealedAt}. validate.audit checks the trail against each, so a
/// trail cut short below a seal — the seal's own row with it — or rewritten shows.
inline constexpr std::string_view kSealsFile = "audit-seals.jsonl";

/// Every sealed epoch, oldest first.
Result<std::vector<Epoch>> sealed_epochs(AuditLog& store);
/// {name, seq, hash, summary?, sealedAt, agent?}
json::Value epoch_json(const Epoch& epoch);

}  // namespace ct
