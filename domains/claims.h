// Claims as replies show them (tasks.show, tasks.list, tasks.start, system.dash, session.briefing):
// who holds a task and until when their lease runs (engines/rules/claim_lease.h).
#pragma once

#include <map>
#include <string>

#include "core/json.h"
#include "domains/context.h"
#include "engines/store/task_store.h"

namespace ct {

/// {session, agent?, leaseEnds?, lapsed?}: leaseEnds when the claim can lapse, lapsed:true once it
/// has (another session's tasks.start takes the task over).
json::Value claim_json(const Claim& claim, const Config& config, TimeMs now);

/// Every claim, by task id (one read; there is one per session with a task).
Result<std::map<std::string, Claim, std::less<>>> claims_by_task(Context& context);

}  // namespace ct
