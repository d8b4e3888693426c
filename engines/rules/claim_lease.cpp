#include "engines/rules/claim_lease.h"

#include <algorithm>

namespace ct {

TimeMs lease_ms(const Config& config) { return config.get_int("session.leaseSeconds") * 1000; }

std::optional<TimeMs> lease_end(const Claim& claim, const Config& config) {
  const TimeMs lease = lease_ms(config);
  if (lease == 0 || claim.session.empty()) return std::nullopt;
  if (!claim.renewed_at) return TimeMs{0};
  return *claim.renewed_at + lease;
}

std::optional<TimeMs> lapsed_before(const Config& config, TimeMs now) {
  const TimeMs lease = lease_ms(config);
  if (lease == 0) return std::nullopt;
  return now - lease;
}

bool lapsed_by(const Claim& claim, std::optional<TimeMs> cutoff) {
  return cutoff && !claim.session.empty() && (!claim.renewed_at || *claim.renewed_at <= *cutoff);
}

Result<std::set<std::string, std::less<>>> lapsed_claims(TaskStore& store, std::optional<TimeMs> cutoff) {
  std::set<std::string, std::less<>> out;
  if (!cutoff) return out;
  CT_TRY_ASSIGN(std::vector<Claim> claims, store.claims());
  for (const auto& claim : claims)
    if (lapsed_by(claim, cutoff)) out.insert(claim.task_id);
  return out;
}

bool lapsed(const Claim& claim, const Config& config, TimeMs now) {
  return lapsed_by(claim, lapsed_before(config, now));
}

std::optional<TimeMs> renewal_step(const Config& config) {
  const TimeMs lease = lease_ms(config);
  if (lease == 0) return std::nullopt;
  return std::max<TimeMs>(lease / 2, 1);
}

}  // namespace ct
