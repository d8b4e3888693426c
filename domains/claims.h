// Claims as replies show them (tasks.show, tasks.list, tasks.start, system.dash, session.briefing):
// who holds a task and until when their lease runs (engines/rules/claim_lease.h).
#pragma once

#include <filesystem>
#include <map>
#include <string>

#include "core/json.h"
#include "domains/context.h"
#include "engines/store/task_store.h"
#include "engines/rules/reservations.h"

namespace ct {

/// A session's worktree as replies show it (issue 53): relative to the project's root, the main
/// work tree (`../feature-x`, `.worktrees/a`); "" when unknown or the main work tree itself, which
/// replies leave out.
std::string shown_worktree(const std::string& worktree, const std::filesystem::path& root);

/// {session, agent?, worktree?, branch?, leaseEnds?, lapsed?}: where the holder works
/// (shown_worktree, relative to `root`), leaseEnds when the claim can lapse, lapsed:true once it
/// has (another session's tasks.start takes the task over).
json::Value claim_json(const Claim& claim, const Config& config, TimeMs now, const std::filesystem::path& root);

/// Every claim, by task id (one read; there is one per session with a task).
Result<std::map<std::string, Claim, std::less<>>> claims_by_task(Context& context);

/// The claim on `task_id` that holds it now: none when nobody claims it or the claim has lapsed
/// (another session's tasks.start takes such a task over).
Result<std::optional<Claim>> live_claim(Context& context, const std::string& task_id);

/// Every live reservation (engines/rules/reservations.h): its claim's lease has not lapsed.
Result<std::vector<Reservation>> live_reservations(Context& context);

/// Other sessions' live exclusive reservations, which tasks.next ranks after and orchestrate's
/// reads defer the tasks whose files overlap.
Result<std::vector<Reservation>> reserved_by_others(Context& context);

/// E_TASK_CLAIMED when an agent would `action` (complete, …) a task whose live claim another
/// session holds: the holder finishes its own work; a person may act on any.
Result<void> refuse_others_claim(Context& context, const std::string& task_id, std::string_view action);

/// `displaced` lost its claim on `task_id` to this caller (a takeover, a person's reclaim): its
/// next call is told who took it and when (Session::notice).
Result<void> notify_displaced(Context& context, const std::string& displaced, const std::string& task_id);

/// What `session` has been told to hear (a warning), or none; `clear` (a write in it) clears it.
Result<std::optional<std::string>> session_notice(Context& context, Session& session, bool clear);

}  // namespace ct
