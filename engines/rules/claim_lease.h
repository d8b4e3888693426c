// Claims with leases (docs/architecture.md §4): the task a session focuses is its claim for as
// long as the session shows life. Every call made in the session renews it (a write touches the
// session row; a read does so once per renewal step); session.heartbeat covers long silent work.
// Once the lease has run out, the claim has lapsed: tasks.start takes the task over and
// tasks.next offers it again. session.leaseSeconds 0 = claims never lapse.
#pragma once

#include <optional>
#include <set>
#include <string>

#include "core/clock.h"
#include "engines/project/config.h"
#include "engines/store/task_store.h"

namespace ct {

/// session.leaseSeconds in milliseconds (0 = no lease).
TimeMs lease_ms(const Config& config);

/// When the claim's lease ends: its session's last renewal plus the lease. nullopt when it never
/// ends (no lease, or the sessionless focus of someone at the CLI); 0 when its session is gone.
std::optional<TimeMs> lease_end(const Claim& claim, const Config& config);

/// The lease has run out: another session may take the task over.
bool lapsed(const Claim& claim, const Config& config, TimeMs now);

/// For ReadyScoring::lapsed_before: claims whose session was last renewed at or before this have
/// lapsed. nullopt with no lease.
std::optional<TimeMs> lapsed_before(const Config& config, TimeMs now);

/// lapsed() against a cutoff of lapsed_before(): what the stores' queries test too.
bool lapsed_by(const Claim& claim, std::optional<TimeMs> cutoff);

/// The tasks whose claim has lapsed by `cutoff` (one read of the claims; none without a cutoff).
Result<std::set<std::string, std::less<>>> lapsed_claims(TaskStore& store, std::optional<TimeMs> cutoff);

/// How old a session's last renewal may grow before a read renews it: half the lease. Reads write
/// at most once a step (a renewal costs about two tasks.show: docs/performance.md), and a session
/// that keeps calling always has half its lease ahead. nullopt with no lease (reads then renew
/// nothing).
std::optional<TimeMs> renewal_step(const Config& config);

}  // namespace ct
