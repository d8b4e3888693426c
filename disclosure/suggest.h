// Values to complete a word with, for MCP's completion/complete (prompt arguments, resource
// template variables) and `ct`'s shell completion: task and epic ids by id prefix or by the words
// of their titles (ranked as tasks.find ranks), session ids, skill names, research entries,
// lifecycle stages, verification gates and help levels. Everything is read through the router as
// any caller reads it (cleo_query operations), so a store of either backend answers alike.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "domains/router.h"

namespace ct::disclosure {

/// What a value names.
/// OpenTaskId: a task that can still be worked on (pending, active, blocked): what `take` and
/// `spawn` name; TaskId: any task.
enum class ValueKind { TaskId, OpenTaskId, EpicId, SessionId, Skill, ResearchId, Stage, Gate, HelpLevel };
std::string_view to_string(ValueKind kind);

struct Suggestions {
  std::vector<std::string> values;  // best first, at most the limit asked for
  std::int64_t total = 0;           // how many match in all (≥ values.size())
  bool more = false;                // total > values.size()
};

/// The values of `kind` that `typed` may be the start of, best first, at most `limit`:
///  - task (epic) ids: `typed` empty — open tasks (epics), most recently changed first; an id prefix
///    ("T1", "t12") — ids that start with it; words — tasks.find's matches (title, description,
///    labels, notes; each word a prefix), best first; open task ids: only tasks not done or
///    cancelled, whatever is typed;
///  - session ids: active and suspended sessions, newest first, by id prefix or name;
///  - skills, research entries, stages, gates, help levels: those that start with `typed`
///    (case-insensitive).
/// Nothing is an error: a project without a store, or a failing read, suggests nothing.
Suggestions suggest(Router& router, const Caller& caller, ValueKind kind, std::string_view typed,
                    std::size_t limit = 100);

}  // namespace ct::disclosure
