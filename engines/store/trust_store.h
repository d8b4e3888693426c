// The trust role of the storage seam (engines/store/store.h, issue 35): the evidence recorded for
// tasks — typed atoms (a commit, files with their checksums, a test run, a pull request, a note)
// and the waivers of acceptance criteria — the calls agents proposed for a person's approval, and
// the plans whose staged changes wait to be committed (issue 36).
// engines/rules/evidence.h holds the rules of atoms; domains/approval.h those of proposals. Its
// SQL is the same on both backends and written once here, over the backend's sql::Runner
// (engines/store/sql_runner.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/clock.h"
#include "core/error.h"
#include "core/json.h"
#include "engines/store/sql_runner.h"

namespace ct {

/// A file an atom names, with its SHA-256 when it was recorded.
struct EvidenceFile {
  std::string path;  // relative to the project root
  std::string sha256;
  friend bool operator==(const EvidenceFile&, const EvidenceFile&) = default;
};

/// One atom of evidence for a task, or a waiver of acceptance criteria.
struct EvidenceAtom {
  std::string id;                    // "E012"; its number is the row's key
  std::string task_id;
  std::string gate;                  // the verification gate it was given for; "" at tasks.complete
  std::string kind;                  // commit | files | test | pr | note | waiver
  std::string ref;                   // a commit's full sha, a test run's record id, a pull request, a note's
                                     // or waiver's text; "" for files
  std::vector<EvidenceFile> files;   // files: each with its checksum then
  std::vector<std::int64_t> covers;  // the acceptance criteria it covers (or waives), numbered from 1
  bool verified = false;             // checked when recorded (notes never are; a PR only through gh)
  json::Value detail;                // what the check found: {reachable}, {state, url}, {command}, …
  std::string status = "current";    // current | replaced (a fresh atom took its place) | withdrawn
                                     // (tasks.undo took back the call that recorded it)
  std::string agent;
  std::string session;
  TimeMs at = 0;
};

/// Where a task's work is (issue 53): the branch orchestrate.spawn made for it (task_worktrees),
/// else the branch of the session that claims it (sessions.branch).
struct TaskBranch {
  std::string branch;
  std::string worktree;
  std::string base;    // the commit the branch was made from; "" when not recorded (a session's branch)
  std::string source;  // "worktree" (task_worktrees) | "session" (the claiming session's)
  std::string session; // the session whose branch it is ("" for a task's worktree made without one)
};

/// A call an agent made that approval.required keeps for a person to approve or reject.
struct Proposal {
  std::string id;                    // "P003"
  std::string operation;             // "tasks.delete"
  json::Value params;                // the validated params of the call
  std::string rule;                  // the approval.required entry that matched ("tasks.complete:epic")
  std::string task_id;               // the call's subject, when it has one
  json::Value preview;               // what it would do: {changes:[…]} or a dry run's data; null when unknown
  std::string reason;
  json::Value intent;
  std::string status = "pending";    // pending | approved | rejected
  std::string agent;                 // who proposed it
  std::string session;
  TimeMs at = 0;
  std::string decided_by;            // the person who approved or rejected it
  std::optional<TimeMs> decided_at;
  std::string decision;              // why, in the person's words
};

/// A plan (issue 36, domains/plan/): mutations staged apart from the store — none of them visible to
/// others — until it is committed in one transaction, or discarded.
struct Plan {
  std::string id;                    // "PL003"
  std::string label;
  std::string epic_id;               // the epic it decomposes ("" = none)
  std::string status = "open";       // open | committed | discarded
  json::Value ops;                   // [{operation, params}] as staged, "$N" naming what op N made or acted on
  /// What it rests on, as staged: {versions: {task id: version}, fields: {task id: {field: value before
  /// the plan changed it}}} (domains/plan/; plans staged before fields were kept hold `changes`
  /// instead: [ids of tasks its ops change]). With `since`, versions holds the tasks its ops name
  /// (as first staged); without, also every task of its epic's subtree as it began.
  json::Value base;
  std::string agent;                 // who began it
  std::string session;
  TimeMs created_at = 0;
  TimeMs updated_at = 0;
  std::optional<TimeMs> closed_at;   // committed or discarded
  json::Value outcome;               // committed: {created: {"$N": id}, seq}; discarded: {reason}
  std::string name;                  // "" or its name (issue 54): a branch of the graph by name, one open a name
  /// The audit trail's last seq when it began (or was rebased): what moved since is read from the
  /// changes after it (schema v17, issue 56). None for a plan begun before, whose base holds its
  /// epic's versions.
  std::optional<std::int64_t> since;
};

/// Evidence, proposals and plans. Not virtual: its SQL is the same on both backends; a backend gives it
/// its sql_runner(). All calls run inside the store's transactions.
class TrustStore {
 public:
  /// A task's atoms and waivers, oldest first; only those still current unless `with_replaced`.
  [[nodiscard]] Result<std::vector<EvidenceAtom>> task_evidence(std::string_view task_id, bool with_replaced);
  /// The statement task_evidence runs (?1 the task's id): a backend may send it ahead
  /// (TaskStore::expect).
  static const std::string& task_evidence_sql(bool with_replaced);
  /// The number after the highest atom's.
  [[nodiscard]] Result<std::int64_t> next_evidence_number();
  /// Inserts or replaces the atom (its number is its id's).
  [[nodiscard]] Result<void> put_evidence(const EvidenceAtom& atom);
  /// The branch a task's work is on: its task_worktrees row, else the branch of the session whose
  /// claim (focus) holds it, lapsed or not; nullopt when neither names a branch.
  [[nodiscard]] Result<std::optional<TaskBranch>> task_branch(std::string_view task_id);

  [[nodiscard]] Result<std::optional<Proposal>> get_proposal(std::string_view id);
  /// Proposals newest first; of one status unless `status` is empty.
  [[nodiscard]] Result<std::vector<Proposal>> list_proposals(std::string_view status, std::int64_t limit,
                                                             std::int64_t offset);
  [[nodiscard]] Result<std::int64_t> count_proposals(std::string_view status);
  [[nodiscard]] Result<std::int64_t> next_proposal_number();
  /// Inserts or replaces the proposal (its number is its id's).
  [[nodiscard]] Result<void> put_proposal(const Proposal& proposal);

  [[nodiscard]] Result<std::optional<Plan>> get_plan(std::string_view id);
  /// The plan named `name`: the open one, else the newest of that name.
  [[nodiscard]] Result<std::optional<Plan>> plan_named(std::string_view name);
  /// Plans newest first; of one status unless `status` is empty.
  [[nodiscard]] Result<std::vector<Plan>> list_plans(std::string_view status, std::int64_t limit, std::int64_t offset);
  [[nodiscard]] Result<std::int64_t> count_plans(std::string_view status);
  [[nodiscard]] Result<std::int64_t> next_plan_number();
  /// The open plan that rests on the oldest point of the audit trail, and that point (Plan::since):
  /// system.gc keeps the changes after it. None when no open plan rests on one.
  [[nodiscard]] Result<std::optional<std::pair<std::string, std::int64_t>>> oldest_plan_watermark();
  /// Inserts or replaces the plan (its number is its id's).
  [[nodiscard]] Result<void> put_plan(const Plan& plan);

 protected:
  virtual sql::Runner& sql_runner() = 0;
  ~TrustStore() = default;  // a role of a Store: never owned or deleted through it
};

/// An atom's files as replies and the store write them: [{path, sha256}].
json::Value evidence_files_json(const std::vector<EvidenceFile>& files);

/// The number of an id made of `prefix` and digits ("E012" → 12 with prefix 'E'); nullopt otherwise.
std::optional<std::int64_t> prefixed_number(std::string_view id, std::string_view prefix);
/// The id of a number ("P", 3 → "P003").
std::string prefixed_id(std::string_view prefix, std::int64_t number);

}  // namespace ct
