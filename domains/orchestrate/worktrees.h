// The worktrees of tasks (issue 53): with orchestrator.worktrees set, orchestrate.spawn
// {execute:true} runs each task's agent in a git worktree and branch of its own (`cleo/<task>`,
// from the main worktree's HEAD), kept in task_worktrees; orchestrate.worktrees lists them with
// their task's status and whether they hold uncommitted work, orchestrate.worktrees.prune removes
// those of finished tasks. git runs as a program (engines/adapters/subprocess.h: argv, no shell) in
// the operations' external steps; git's files are read by engines/project/git_worktree.h.
#pragma once

#include <optional>
#include <string>

#include "core/json.h"
#include "domains/context.h"
#include "engines/store/session_store.h"

namespace ct::orchestrate {

/// A task's worktree ready for its agent: the record to keep, and whether it was made now.
struct PreparedWorktree {
  TaskWorktree record;
  bool created = false;
};

/// With orchestrator.worktrees set, the worktree of task `id`: the one `recorded` when it is still
/// there on its branch, else the one at the configured folder when it already is that task's
/// (a spawn whose run failed before it was recorded), else made now with `git worktree add -b
/// cleo/<id> <folder> <HEAD>` in the main worktree. None when the key is off. Runs git: an external
/// step's. Errors: not a git repository, git missing (E_CAPABILITY_UNAVAILABLE), the folder or the
/// branch taken by something else (E_VALIDATION), git failing (E_ENGINE_FAILED) — each with a fix.
Result<std::optional<PreparedWorktree>> prepare_worktree(Context& context, const std::string& id,
                                                         const std::optional<TaskWorktree>& recorded);

/// {path, branch, base (the full sha), created?}: where the task's work lives, as a spawn's external
/// step hands it to its handler, which records it and shortens base (short_sha) for the reply.
json::Value worktree_json(const PreparedWorktree& prepared);

/// A commit as replies show it: its first 12 hex digits.
inline std::string short_sha(const std::string& sha) { return sha.substr(0, 12); }

/// Keeps the worktree in task_worktrees, in the call's transaction: a new or moved one is the
/// change `worktree` of the task in the audit row.
Result<void> record_worktree(Context& context, const TaskWorktree& record);

}  // namespace ct::orchestrate
