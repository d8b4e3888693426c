// Reservations (issue 53): the paths a claim will touch. tasks.start reserves the task's declared
// files (or the paths an agent names), tasks.reserve widens or narrows them; they live as long as
// the claim — released with its focus (tasks.stop, complete, reclaim, session end, a takeover) and
// lapsing with its lease, because a reservation is live only while its session still focuses its
// task and that session's lease runs (read by joining focus and sessions: no second clock).
// A reservation is exclusive, or shared for read-mostly work. Two overlap when one's paths could
// name a file the other's could (overlaps()); an exclusive one conflicts with any overlapping one of
// another session, a shared one only with an exclusive one. reservations.mode (people set it):
// advisory (a conflict is a warning) or strict (E_PATH_RESERVED).
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/clock.h"
#include "core/error.h"
#include "core/json.h"
#include "engines/project/config.h"
#include "engines/store/task_store.h"

namespace ct::reservations {

/// A path as reservations keep it: relative to the project root, `/` separated, without `.`
/// parts or a trailing slash; a glob keeps its `*`, `**` and `?`. E_VALIDATION (field `field`)
/// for an empty, absolute or `..` path.
Result<std::string> normal_path(std::string_view path, std::string_view field);

/// A task's declared files as its claim reserves them: each normal_path(), once; those that name
/// no place in the project are left out (tasks.add does not check them).
std::vector<std::string> declared_paths(const std::vector<std::string>& files);

/// Whether two reserved paths could name the same file: compared part by part (split at `/`)
/// over the parts both have — a path reserves everything under it, so `src` and `src/a.cpp`
/// overlap — two plain parts when equal, a glob part (`*`, `?`) and a plain one when the glob
/// matches it, two glob parts unless their fixed beginnings or endings differ ("*.h" and "*.cpp");
/// a `**` reaches any depth, so from there on they overlap. Conservative: true when unsure.
bool overlaps(std::string_view a, std::string_view b);

/// The reservations of claims (their session focuses the task), live or with a lapsed lease
/// (engines/rules/claim_lease.h). A lapsed one revives when its session shows life again, unless
/// another claim took its paths over meanwhile (TaskEngine::reserve drops it then).
/// With `near`, only those that could overlap one of these paths (their head is one of theirs, or
/// a glob): what a claim's check reads, whatever else others hold.
struct Held {
  std::vector<Reservation> live;
  std::vector<Reservation> lapsed;
};
Result<Held> held(TaskStore& store, const Config& config, TimeMs now, std::span<const std::string> near = {});

/// A path's first part, or "*" when that part is a glob: the store's key of what may overlap it.
std::string head_of(std::string_view path);

/// Reservations whose claim is live (its session focuses the task and its lease has not
/// lapsed), of one task unless `task_id` is empty.
Result<std::vector<Reservation>> live(TaskStore& store, const Config& config, TimeMs now, std::string_view task_id = {});

/// One of the caller's paths against a live reservation of another session.
struct Conflict {
  std::string path;     // the caller's
  Reservation held;     // theirs
};

/// The conflicts of `paths` (reserved `shared` or exclusively by `session`; null: by nobody's,
/// so that every reservation counts) with `held`.
std::vector<Conflict> conflicts(std::span<const std::string> paths, bool shared, const std::string* session,
                                const std::vector<Reservation>& held);

/// reservations.mode is strict.
bool strict(const Config& config);

/// [{path, heldBy{task, session, agent?, path, shared?, leaseEnds?}}]: what a reply shows of
/// conflicts.
json::Value conflicts_json(const std::vector<Conflict>& found, const Config& config);

/// One line of the conflicts for a warning: `"src" (overlaps "src/a.cpp") is reserved by session S
/// (agent) for T002 until …` (paths quoted_line()d: agents chose them).
std::string describe(const std::vector<Conflict>& found, const Config& config);

/// The warning of conflicts advisory mode kept: "reserved anyway (…): " + describe().
std::string kept_warning(const std::vector<Conflict>& found, const Config& config);

/// E_PATH_RESERVED for `found` (strict mode): holder, paths, when it lapses (retryAfter).
Error refusal(const std::vector<Conflict>& found, const Config& config, TimeMs now);

/// {path, shared?, task, session, agent?, leaseEnds?}: a live reservation as replies show it.
json::Value reservation_json(const Reservation& reservation, const Config& config);

/// What the audit trail records of a set of reserved paths: [path, or {path, shared:true}].
json::Value audit_value(const std::vector<Reservation>& rows);

}  // namespace ct::reservations
