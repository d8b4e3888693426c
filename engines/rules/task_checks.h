// The checks and errors TaskEngine's files share (task_engine.cpp, task_import_kept.cpp,
// task_delete.cpp, task_claim.cpp, task_undo.cpp, task_queries.cpp): the engine's own, not an
// interface for other callers (they go through task_engine.h).
#pragma once

#include <string>
#include <vector>

#include "core/advice.h"
#include "core/error.h"
#include "engines/store/task.h"

namespace ct::task_checks {

/// The call that finds a task by the id that was not found.
Advice find_fix(const std::string& id);
/// E_NOT_FOUND for the task `id`, with a find fix and alternatives.
Error not_found(const std::string& id);

inline bool is_open(TaskStatus status) { return status != TaskStatus::Done && status != TaskStatus::Cancelled; }

/// `items` added to `list`, each once.
void append_unique(std::vector<std::string>& list, const std::vector<std::string>& items);
/// Labels are stored in lowercase.
std::vector<std::string> lower_all(std::vector<std::string> items);
/// A title is one line, and a description says more than the title.
Result<void> check_title_description(const std::string& title, const std::string& description);

}  // namespace ct::task_checks
