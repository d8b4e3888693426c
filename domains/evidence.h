// Evidence as the operations record and check it (issue 35; the rules are engines/rules/evidence.h,
// the rows engines/store/trust_store.h). lifecycle.gate.pass and tasks.complete take `evidence`
// (atoms) and tasks.complete takes `waive` (acceptance criteria excused, with a reason).
//
// Checking runs programs (git for commits, gh for pull requests) and reads files, so it happens in
// the operation's external step, before the write transaction opens (docs/architecture.md §2):
// check_atoms() answers the checked atoms and, for tasks.complete, which of the task's recorded
// atoms no longer hold. The handler then records them (record_atoms(): audited as changes of the
// task's `evidence`) and applies verification.evidence (gate_rules(), completion_rules()).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"
#include "domains/context.h"
#include "domains/registry.h"
#include "engines/store/task.h"
#include "engines/store/trust_store.h"

namespace ct::evidence {

/// The `evidence` param of an operation: atoms, or one atom, or a note's text.
ParamSpec evidence_param(std::string_view description);

/// The external step: checks the call's atoms (`evidence`, the param evidence_param declares; null
/// when not given) for the task `task_id` and, with `recheck`, the task's recorded ones. Its data
/// is {atoms:[checked atoms], stale:{atom id: what no longer holds}}. E_EVIDENCE_INVALID for an
/// atom that fails its check (a commit that does not exist, a file that cannot be read, a test run
/// that failed or is not one).
///
/// A commit or files atom is then judged against the task's own change (issue 53), found by at
/// most two `git log`s (engines/adapters/git_change.h), nothing cached:
///  - the task's branch — its task_worktrees row, else the branch of the session that claims it —
///    against the recorded base, else the main worktree's HEAD (main-worktree/HEAD: the commits
///    reachable from the branch and not from it), when that range holds commits;
///  - else the commits its evidence cites (this call's and those recorded for the task, replaced
///    ones included, withdrawn and unrelated ones not), each its own change, their paths the union.
/// A commit must be in the change (with no branch, a cited commit always is); a files atom's every
/// path must be touched by it (--name-status -M: both names of a rename). Outside it, strict
/// verification.evidence refuses the atom (E_EVIDENCE_INVALID, details.outside and details.change:
/// the branch, its commits and paths, bounded); advisory records it verified:false with
/// detail.unrelated (it covers no criterion and passes no gate). In it, detail.change names the
/// change. When none can be determined — the project is not in git, or no branch and no commit
/// cited — a files atom is recorded verified:false with detail.unchecked saying why; it never
/// counts as checked. Judged when recorded; completion rechecks existence and checksums only.
Result<Reply> check_atoms(Context& context, const std::string& task_id, const json::Value& evidence, bool recheck);

/// Records the checked atoms of the external step and the call's waivers (`waive`: the param, null
/// when not given) for `task`, for `gate` ("" at completion): each replaces the current atom of its
/// kind; every row is a change of the task's `evidence` in the call's audit row. An atom recorded
/// as unrelated to the task's change, or unchecked against one, adds a warning. Returns the atoms
/// recorded.
Result<std::vector<EvidenceAtom>> record_atoms(Context& context, const json::Value& waive, const Task& task,
                                               std::string_view gate, std::vector<std::string>& warnings);

/// lifecycle.gate.pass of a gate verification.required names: strict mode refuses a pass without
/// checked atoms, or with an unchecked one (E_EVIDENCE_UNVERIFIED); advisory mode warns.
Result<void> gate_rules(Context& context, const Task& task, std::string_view gate,
                        const std::vector<EvidenceAtom>& recorded, std::vector<std::string>& warnings);

/// Under strict verification.evidence the acceptance criteria are the bar a task is held to, which
/// only people lower (issue 52): a caller who is not a person (Context::person) may add criteria,
/// but a change that rewrites, drops or reorders one — tasks.update {acceptance, mode: replace or
/// remove}, or tasks.undo of such a change — is E_MUTATION_DISABLED naming what a person runs.
/// `after` is the list the change leaves; `fix` what a person runs instead.
Result<void> acceptance_rules(const Context& context, const Task& task, const std::vector<std::string>& after,
                              std::string fix);

/// tasks.complete: recorded atoms that no longer hold (E_EVIDENCE_STALE) and acceptance criteria
/// neither covered nor waived (E_AC_COVERAGE_INCOMPLETE) — errors in strict mode, warnings in
/// advisory mode.
Result<void> completion_rules(Context& context, const Task& task, std::vector<std::string>& warnings);

/// The task's evidence for tasks.show: {atoms[], coverage?{covered, waived, uncovered}}; null when
/// it has none and no acceptance criteria.
Result<json::Value> task_evidence_json(Context& context, const Task& task);

}  // namespace ct::evidence
