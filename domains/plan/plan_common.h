// plan domain (issue 36): plans as sandboxes. A plan holds mutations of tasks staged apart from the
// store — plan.apply checks them by running them on the store plus what the plan already holds,
// then takes them back, so no other agent sees a half-made decomposition. plan.diff shows what
// one or more plans would do to the graph (waves, critical path, parallelism, what `next` would
// suggest) beside the current one; plan.commit runs them all in one transaction and one audit row
// (tasks.undo takes it back whole), refused with E_CONCURRENT_MODIFICATION when what the plan
// rests on moved since it was staged; plan.rebase takes the moves in where nothing conflicts.
//
// What a plan rests on: its epic's subtree (the epic included) as it stood when the plan began —
// the audit trail's last seq then (Plan::since), what moved since read from the changes after it —
// the version of every task its ops name or change, when first staged (Plan::base); and the value
// each field its ops change on the tasks they name had before the plan changed it. Conflicts
// are per field: replayed on the store as it is now, a field whose value another agent changed
// since (its base differs) and which the plan changes too is one rebase cannot resolve alone
// (force overwrites exactly those fields, named); anything else that moved — another field of the
// same task, a note added beside the plan's, a sibling added under the epic — is taken in.
//
// plan_common.h holds what the plan domain's files share: the plan a call names, the speculation
// its ops run in, what a plan rests on (plan_common.cpp) and what moved since (plan_moved.cpp). plan_stage.cpp
// builds plans (begin, apply, list), plan_diff.cpp compares them, plan_commit.cpp settles them
// against the store as it is (commit, discard, rebase).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "domains/analysis.h"
#include "domains/batch.h"
#include "domains/context.h"
#include "domains/nested_runs.h"
#include "domains/registry.h"

namespace ct::plan {

inline constexpr std::string_view kSavepoint = "ct_plan";
/// A plan's id, or its name (issue 54): a branch of the graph by name, such as "agents/planner".
inline constexpr std::string_view kPlanPattern = "PL[0-9]{1,15}|[a-z][a-z0-9._/-]{0,79}";
inline constexpr std::string_view kPlanNamePattern = "[a-z][a-z0-9._/-]{0,79}";

/// Changes made after it are taken back when it goes out of scope.
class Speculation {
 public:
  static Result<Speculation> begin(Store& store) {
    CT_TRY(store.savepoint(kSavepoint));
    return Speculation(&store);
  }
  Speculation(Speculation&& other) noexcept : store_(std::exchange(other.store_, nullptr)) {}
  Speculation& operator=(Speculation&&) = delete;
  ~Speculation() { (void)end(); }
  Result<void> end() {
    if (!store_) return {};
    return std::exchange(store_, nullptr)->rollback_to(kSavepoint);
  }

 private:
  explicit Speculation(Store* store) : store_(store) {}
  Store* store_;
};

/// The plan `id` (PL…) or named so (the open one of that name, else the newest); E_NOT_FOUND, with
/// plan.list as the fix, when there is none.
Result<Plan> get_plan(Context& context, const std::string& id);
/// The plan `id` when it is open; E_VALIDATION when it was committed or discarded.
Result<Plan> open_plan(Context& context, const std::string& id);

/// The plan's ops as staged, read back under the plan's own limit (plan.apply let it grow to
/// kMaxPlanOps; a call's limit would leave a plan of more ops unreadable for ever). A plan that
/// cannot be read — an op this ct no longer batches — answers why, naming the op.
Result<std::vector<batch::Op>> staged_ops(Context& context, const Plan& plan);

/// The ids the plan's ops created (their `created` changes).
std::set<std::string> created_by(const std::vector<FieldChange>& changes);

/// One field an op of a plan changes on the task it names: its value before the plan (the first
/// such change's `before`) and the value the plan leaves (the last one's `after`).
struct FieldEdit {
  json::Value before;
  json::Value after;
  std::size_t first_op = 0;  // the op (from 0) that changed it first
};
using FieldEdits = std::map<std::pair<std::string, std::string>, FieldEdit>;  // (task, field) →

/// The fields the ops change on the tasks they name — not on the tasks the plan makes, and not what
/// an op changes elsewhere as a consequence (a sibling's position, a dependent's list), which a
/// replay works out again from the store as it then is and so never brings back a stale value.
FieldEdits own_edits(const batch::Ran& ran);

/// Sets what `plan` rests on for `ops` (run as `ran`), read from the store as it is now (after the
/// run was taken back):
///   since     afresh (`fresh`), the audit trail's last seq (Plan::since): the tasks of the epic's
///             subtree as they stood then are read from the changes after it when asked what moved;
///   versions  {task: version} — every task the ops name or change; a task already in it keeps the
///             version it was staged on, unless `fresh` (a plan begun before schema v17 and never
///             rebased also holds its subtree's versions there, and keeps them);
///   fields    {task: {field: value}} — each field the ops change on a task they name, as it was
///             before the plan changed it: the base rebase tells another agent's change of that
///             field by. Kept as first staged unless `fresh`; ops from `first_new` on add theirs.
/// (Plans staged before fields were kept have versions alone; rebase reads them conservatively.)
Result<void> rest_on(Context& context, Plan& plan, std::span<const batch::Op> ops, const batch::Ran& ran, bool fresh,
                     std::size_t first_new = 0);

/// What moved since the plan was staged (plan_moved.cpp): [{id, was, now}] (was null: a task added
/// under its epic, moved in or restored; now null: a task gone). On a watermark, from the changes
/// after it; for a plan begun before schema v17, against its versions, with `graph`, when given,
/// its epic's subtree as this transaction already read it (not read again).
Result<json::Value> moved_since(Context& context, const Plan& plan, const Graph* graph = nullptr);

/// Runs the plan's ops (and `more` after them) on the store as it is; the caller takes them back
/// or keeps them. An op that fails answers its error, saying the plan does not apply.
Result<batch::Ran> replay(Context& context, NestedRuns& runs, const Plan& plan, std::span<const batch::Op> staged,
                          std::span<const batch::Op> more = {});

/// replay() inside a speculation, taken back whatever happens: what the ops would do, or the error
/// of the op that fails, saying `then` (what that means for the call).
Result<batch::Ran> tried(Context& context, NestedRuns& runs, const Plan& plan, std::span<const batch::Op> staged,
                         std::span<const batch::Op> more, std::string_view then);

/// "$N" for the tasks the plan creates, their ids otherwise.
std::map<std::string, std::string> placeholder_names(const batch::Ran& ran);

/// {id, name?, label, epicId?, status, ops, agent?, updatedAt}: a plan in plan.list and plan.diff.
json::Value plan_row(const Plan& plan);

/// The `plan` param of an operation on one plan.
ParamSpec plan_param();

/// The errors of an operation that runs staged ops: its own and those of every op a plan stages.
std::vector<ErrorCode> plan_op_errors(const Registry& registry);

}  // namespace ct::plan
