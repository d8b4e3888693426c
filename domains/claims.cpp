#include "domains/claims.h"

#include "engines/rules/claim_lease.h"

namespace ct {

json::Value claim_json(const Claim& claim, const Config& config, TimeMs now) {
  json::Value out = json::Value::object();
  out.set("session", claim.session);
  if (!claim.agent.empty()) out.set("agent", claim.agent);
  if (std::optional<TimeMs> end = lease_end(claim, config)) {
    out.set("leaseEnds", format_iso8601(*end));
    if (*end <= now) out.set("lapsed", true);
  }
  return out;
}

Result<std::map<std::string, Claim, std::less<>>> claims_by_task(Context& context) {
  CT_TRY_ASSIGN(std::vector<Claim> claims, context.db().claims());
  std::map<std::string, Claim, std::less<>> out;
  for (auto& claim : claims) {
    std::string id = claim.task_id;
    out.emplace(std::move(id), std::move(claim));
  }
  return out;
}

}  // namespace ct
