// What the orchestrate domain shares with orchestrate.spawn (registered by disclosure/, which
// renders the prompt): whether a task can be handed to a subagent now, and why not.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/json.h"
#include "domains/context.h"
#include "engines/store/task.h"

namespace ct::orchestrate {

struct Readiness {
  Task task;
  bool ready = false;
  json::Value blockers = json::Value::array();  // [{kind, id?, title?, status?, detail?}]
  std::vector<Advice> recommendations;
};

/// Can `id` be spawned now: open and pending, nothing unfinished before it, not blocked (nor its
/// parent), no open children (their work comes first), not held by another session.
/// E_NOT_FOUND when the task does not exist.
Result<Readiness> readiness(Context& context, const std::string& id);

/// {id, ready, blockers[], recommendations[]} — orchestrate.validate's reply and the details of a
/// spawn that is refused.
json::Value readiness_json(const Readiness& readiness);

}  // namespace ct::orchestrate
