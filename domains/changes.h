// What changed since a point of the audit trail, as compact rows (system.changes, session.briefing):
// one row per field a write changed — task (or session), field, who, when — oldest first, with
// the cursor to go on from. A poller pays for what changed, not for the store.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "core/json.h"
#include "domains/context.h"

namespace ct {

struct ChangeRow {
  std::int64_t seq = 0;
  TimeMs at = 0;
  std::string id;     // the task (or session) changed
  std::string field;  // "status", "notes", "created", …
  std::string who;    // the writer's agent, else its session ("" when neither)
  /// A task that moved (field "parent") or was deleted for good ("deleted"): the parent it had
  /// before ("" when none). Not on the wire: what subtrees() reads where the task was.
  std::string moved_from;
};

struct ChangePage {
  std::vector<ChangeRow> rows;
  std::int64_t next = 0;  // the cursor: pass it as sinceSeq for what follows
  bool more = false;      // rows after `next` may match: read on
};

/// The changes after audit row `since_seq` to the ids in `within` (null = any), at most `limit`
/// rows, leaving out what the session `skip_session` wrote itself (a caller knows its own
/// changes; "" = skip nothing). A read scans at most a few thousand audit rows; `more` says when
/// it stopped early.
Result<ChangePage> read_changes(Context& context, std::int64_t since_seq, const std::set<std::string>* within,
                                std::int64_t limit, const std::string& skip_session = "");

/// The tasks whose subtree `rows` touched: each changed task, every ancestor it has now, and for
/// a task that moved or was deleted, the parent it left and that parent's ancestors — what changed
/// for a watcher of epics (gateway/resource_watch.h), read once for all the rows: a query per
/// level of the hierarchy, however many epics are watched. Ids in order.
Result<std::vector<std::string>> subtrees(Context& context, const std::vector<ChangeRow>& rows);

/// {seq,id,field,who?,at?}: one row (`at` only `with_time`).
json::Value change_json(const ChangeRow& row, bool with_time);
/// [{seq,id,field,who?,at}] rows, as a table (projection.h: rows_as_table).
json::Value changes_json(const std::vector<ChangeRow>& rows);

}  // namespace ct
