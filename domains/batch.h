// Atomic batches (issue 36): several changes of tasks as one call. The ops are validated and run in
// order inside the caller's one transaction (NestedRuns::run_inside, which the router hands the
// handlers that run them: domains/nested_runs.h), a
// later op naming what an earlier one made or acted on with a placeholder ("$1" is op 1's task),
// all or nothing; their changes make one audit row, which tasks.undo takes back whole.
// tasks.batch runs a batch; plans (domains/plan/) stage ops and run them when committed.
//
// A placeholder is a value of a param that holds task ids (a TaskId param, an item of an Array of
// TaskId, under its name, alias or the original CLEO's name): only there does "$1" name op 1's
// task. Anywhere else — a title, a note, an acceptance criterion — "$1" is the text it is.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/json.h"
#include "domains/context.h"
#include "domains/nested_runs.h"
#include "domains/registry.h"

namespace ct::batch {

/// The most ops one call sends (tasks.batch, plan.apply), and a plan holds.
inline constexpr std::size_t kMaxOps = 500;
inline constexpr std::size_t kMaxPlanOps = 2000;

/// How many ops a list may hold: one limit per concept, named by whoever reads the list — a call's
/// ops (kMaxOps) or a plan's (kMaxPlanOps: what plan.apply let it grow to, read back the same).
struct OpLimit {
  std::size_t max;
  std::string_view holder;  // "one call runs", "a plan holds"
  std::string_view fix;     // what to do with more
};
inline constexpr OpLimit kCallOps{kMaxOps, "one call runs", "split them into smaller calls"};
inline constexpr OpLimit kPlanOps{kMaxPlanOps, "a plan holds", "commit it, and stage the rest in another plan"};

/// Who holds ops: a batch runs them in its call, their external steps first (run_externals); a
/// plan stages them, to run when it is committed, where no external step runs.
enum class Holder { Batch, Plan };

/// The one rule of what a batch runs and a plan stages: a change of tasks that its spec declares
/// batchable (OperationSpec::batchable) and, in a plan, one without an external step (it checks
/// evidence when it runs). parse() refuses any other op, and op_errors() reads the batch's.
bool holds(Holder holder, const OperationSpec& spec);

struct Op {
  const OperationSpec* spec = nullptr;
  json::Value params;  // as sent: "$N" in a task id param names op N's task
};

/// `ops` as the caller sent them ([{operation:"tasks.add", params:{…}}, …]), numbered from
/// `first` + 1 (a plan's new ops continue its numbering), at most `limit.max` of them
/// (E_VALIDATION with details.max beyond). Each must name an operation `holder` holds (holds()),
/// and its placeholders earlier ops; otherwise E_INVALID_PARAMS naming the op (details.op).
/// `field` is the param that carried them, for errors.
Result<std::vector<Op>> parse(const Registry& registry, const json::Value& ops, std::size_t first, Holder holder,
                              const OpLimit& limit, std::string_view field = "ops");

/// The ops as stored and audited: [{operation, params}].
json::Value ops_json(std::span<const Op> ops);

/// The op number `text` names as a placeholder ("$3" → 3); 0 when it is none.
std::size_t placeholder(std::string_view text);

/// Every string `op`'s task id params hold, as sent (placeholders included), in order.
std::vector<std::string> id_values(const Op& op);

/// Whether `op` names a placeholder (in a task id param).
bool has_placeholder(const Op& op);

/// What running ops did.
struct Ran {
  std::vector<std::string> ids;                 // per op, numbered as the ops: the task it made or acted on
  json::Value results = json::Value::array();   // per op run: {op, id?, …its reply}
  std::vector<FieldChange> changes;             // every op's, in order
  std::vector<std::size_t> ends;                // per op run: where its changes end in `changes`
  std::vector<std::string> warnings;            // each naming its op
};

/// Runs `ops` in order inside the caller's transaction, after `ids` (the tasks of the ops numbered
/// before them: a plan's earlier ops). `externals`, when given, holds per op the reply of its
/// external step ({data, warnings} or null), run before the transaction. At the first failure
/// answers that op's error, its message naming the op and saying that nothing was changed (the
/// caller rolls back).
Result<Ran> run(Context& context, NestedRuns& runs, std::span<const Op> ops, std::vector<std::string> ids = {},
                const json::Value* externals = nullptr);

/// The external steps of the ops that have one, before the transaction: [{data, warnings} | null]
/// per op. An op with an external step cannot name a placeholder (the task does not exist yet).
Result<json::Value> run_externals(Context& context, std::span<const Op> ops);

/// {"$1": "T012", …}: the tasks the placeholders of `ops` stood for.
json::Value placeholders_json(std::span<const Op> ops, const std::vector<std::string>& ids);

/// Every error code an op of a batch may answer (the batchable operations' and the router's own),
/// for the specs of the operations that run them.
std::vector<ErrorCode> op_errors(const Registry& registry, std::vector<ErrorCode> own);

}  // namespace ct::batch
