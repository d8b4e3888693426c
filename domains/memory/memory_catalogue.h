// The memory domain's side of the governed catalogue (engines/rules/catalogue.h, issue 54 seed
// 004): an entry's governance for memory.show, the entries due for review for memory.list's `due`,
// and memory.review (memory_catalogue.cpp registers it).
#pragma once

#include <cstdint>
#include <vector>

#include "core/json.h"
#include "domains/context.h"
#include "engines/store/memory_store.h"

namespace ct::memory {

/// {version, owner?, status, tier, nextReviewDue?, changes[{version, at, by?, summary}] (newest 10)}.
Result<json::Value> governance_json(Context& context, const MemoryEntry& entry);

/// The entries of `query` (its statuses and kind; not its page) whose review is due now, soonest
/// due first: every entry that is not deprecated, read whole.
Result<std::vector<MemoryEntry>> due_for_review(Context& context, MemoryQuery query);

}  // namespace ct::memory
