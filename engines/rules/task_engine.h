// The task rules of docs/architecture.md §4 over the Store seam: hierarchy (depth, sibling limit, subtasks
// have no children), dependencies (exist, no cycles), status transitions, safe delete, archive and
// restore, append-only notes, row versions, focus. Every change is reported to a ChangeSink so the
// caller can audit it in the same transaction.
#pragma once

#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/error.h"
#include "engines/project/config.h"
#include "engines/rules/reservations.h"
#include "engines/store/audit_log.h"
#include "engines/store/store_roles.h"
#include "engines/store/task_store.h"
#include "engines/store/task.h"

namespace ct {

using ChangeSink = std::function<void(FieldChange)>;

struct NewTask {
  std::string title;
  std::string description;
  Priority priority = Priority::Medium;
  std::optional<TaskType> type;          // inferred from the parent when absent
  std::string parent;
  std::optional<TaskStatus> status;      // pending (default) or blocked
  std::vector<std::string> depends;
  std::vector<std::string> labels;
  std::vector<std::string> acceptance;
  std::vector<std::string> files;
  std::string phase;
  TaskSize size = TaskSize::Unset;
  std::string blocked_by;
  std::vector<Note> notes;               // initial notes (at = 0: now)
};

enum class ArrayMode { Append, Replace, Remove };

/// Fields to change; absent = unchanged.
struct TaskPatch {
  std::optional<std::string> title;
  std::optional<std::string> description;
  std::optional<TaskStatus> status;
  std::optional<Priority> priority;
  std::optional<TaskType> type;
  std::optional<std::vector<std::string>> depends;
  std::optional<std::vector<std::string>> labels;
  std::vector<std::string> labels_off;   // labels to take off (after `labels` and `mode`)
  std::optional<std::vector<std::string>> acceptance;
  std::optional<std::vector<std::string>> files;
  std::optional<std::string> phase;
  std::optional<TaskSize> size;
  std::optional<std::string> blocked_by;
  std::optional<std::string> note;       // appended
  ArrayMode mode = ArrayMode::Append;
};

struct UpdateResult {
  Task task;
  std::vector<std::string> changed;      // field names, empty = nothing changed (E_NO_CHANGE)
};

struct CompleteResult {
  Task task;
  bool already_done = false;
  std::vector<std::string> unblocked;    // tasks that became ready
  std::vector<std::string> warnings;
};

enum class ChildStrategy { Block, Orphan, Cascade };

struct DeleteOptions {
  bool hard = false;
  bool force = false;                    // hard delete: also drop the id from dependents' lists
  ChildStrategy children = ChildStrategy::Block;
  std::string reason;
};

struct DeleteResult {
  std::string id;
  bool hard = false;
  bool no_change = false;
  std::vector<std::string> affected;     // children cancelled, orphaned or removed
  std::vector<std::string> warnings;
};

/// A later audited change to something an earlier row changed: what undoing that row would
/// overwrite.
struct UndoConflict {
  std::int64_t seq = 0;
  std::string operation;
  std::string task_id;
  std::string field;
};

/// What TaskEngine::reserve left: the task's reservations now, and the conflicts met (advisory
/// mode keeps the paths anyway; strict refuses them).
struct ReserveResult {
  std::vector<Reservation> held;
  std::vector<reservations::Conflict> conflicts;
  bool changed = false;
};

struct StartResult {
  Task task;
  std::optional<std::string> previous;   // the task that lost focus
  std::optional<Claim> taken_over;       // the lapsed claim this start took the task from
  bool no_change = false;
  /// What the claim reserves (TaskEngine::reserve); none when it reserves nothing.
  std::optional<ReserveResult> reserved;
};

struct ScoredTask {
  Task task;
  int score = 0;
  std::vector<std::string> reasons;      // "priority high +75", "leaf +10", …
};

struct DepNode {
  std::string id;
  std::string title;
  TaskStatus status = TaskStatus::Pending;
  int distance = 1;
};

struct Blocker {
  std::string id;       // empty for a manual block
  std::string title;
  TaskStatus status = TaskStatus::Pending;
  std::string kind;     // "dependency" | "parent" | "manual"
  std::string detail;
};

class TaskEngine {
 public:
  /// Reads the audit trail only to undo (undo_conflicts).
  TaskEngine(StoreRoles<TaskStore, AuditLog> store, const Config& config, TimeMs now, std::string session,
             ChangeSink sink)
      : store_(store.get<TaskStore>()), audit_(store.get<AuditLog>()), config_(config), now_(now),
        session_(std::move(session)), sink_(std::move(sink)) {}

  // Reads.
  Result<Task> get(const std::string& id);
  /// E_NOT_FOUND (with a find fix) for missing ids; archived tasks are found.
  Result<Task> get_live(const std::string& id);  // also refuses archived tasks (read-only)
  Result<int> depth_of(const Task& task);
  /// The best `count` ready tasks (of `within` when given: a session's scope).
  Result<std::vector<ScoredTask>> next(int count, const std::set<std::string>* within = nullptr);
  Result<std::vector<DepNode>> upstream(const Task& task);
  Result<std::vector<DepNode>> downstream(const Task& task);
  Result<std::vector<Blocker>> blockers(const Task& task);

  // Writes (call inside a write transaction).
  Result<Task> add(NewTask spec);
  /// The next `count` ids taken from the store's counter at once; the next add() calls use them in
  /// order before taking any more (tasks.import: one update of the counter for the whole file,
  /// not one per task). Ids reserved and not used are skipped, as the counter never goes back.
  Result<void> reserve_ids(std::size_t count);
  /// Another store's tasks with their own ids, statuses, times, notes and archive state (tasks.import
  /// of the original CLEO's store), all or nothing. Ids this store holds already are E_VALIDATION
  /// (not E_ID_COLLISION, which says a retry may succeed) naming every one of them (never renumbered). Each task is placed as add() places one — its
  /// parent first (one of `tasks`, or a task here), the hierarchy rules (an epic at the top, a
  /// subtask under a parent that is no subtask, depth, open siblings, no live task under an
  /// archived parent), its position after its siblings in the order given, its type as given —
  /// and its dependencies and links, which must name tasks that exist once all are placed and form
  /// no cycle, follow. Each is recorded as created, so that undo takes the import back whole; the
  /// id counter moves past the highest id (TaskStore::insert_task).
  Result<void> import_kept(std::vector<Task> tasks);
  Result<UpdateResult> update(const std::string& id, const TaskPatch& patch, std::optional<std::int64_t> if_version);
  Result<CompleteResult> complete(const std::string& id, const std::string& note, std::optional<std::int64_t> if_version);
  Result<DeleteResult> remove(const std::string& id, const DeleteOptions& options, std::optional<std::int64_t> if_version);
  Result<std::vector<std::string>> archive(const std::optional<std::string>& id, std::optional<TimeMs> before,
                                           std::vector<std::string>& warnings);
  Result<UpdateResult> restore(const std::string& id);
  Result<UpdateResult> reopen(const std::string& id, const std::string& reason, std::optional<std::int64_t> if_version);
  Result<UpdateResult> reparent(const std::string& id, const std::string& parent, std::optional<std::int64_t> if_version);
  Result<UpdateResult> reorder(const std::string& id, std::int64_t position, std::optional<std::int64_t> if_version);
  Result<UpdateResult> relate(const std::string& id, const std::string& target, const std::string& type,
                              const std::string& reason);
  /// Removes every link from `id` to `target` (nothing changed when there is none).
  Result<UpdateResult> unrelate(const std::string& id, const std::string& target);
  /// Claims the task for this session (E_TASK_CLAIMED while another session's lease runs; a
  /// lapsed claim is taken over), reserving `paths` (normalized) or, by default, the task's
  /// declared files (those naming a place in the project) — a repeated start keeps what the claim
  /// holds unless it names paths.
  Result<StartResult> start(const std::string& id, const std::optional<std::vector<std::string>>& paths = std::nullopt,
                            bool shared = false);
  /// Frees the task whoever holds it, lease or not (a person's decision): it goes back to
  /// pending. nullopt when nobody held it.
  Result<std::optional<Claim>> reclaim(const std::string& id);
  /// Clears the focus; the focused task goes back to pending. nullopt when nothing was focused.
  Result<std::optional<Task>> stop();
  /// Reserves `add` (normalized paths) for this session's claim of `id` (E_ACTIVE_TASK_REQUIRED
  /// when the session does not focus it), exclusively or `shared`, and releases `remove` (with
  /// `replace`, every path not in `add`). Paths overlapping another session's live reservation are
  /// conflicts: kept with a conflict reported (advisory) or E_PATH_RESERVED (strict), checked and
  /// written in the caller's write transaction, so racing claims meet one another's rows. The change
  /// is the audit row's `reserved` change of `id`. Every focus this engine clears releases the
  /// session's reservations with it (engines/rules/reservations.h).
  Result<ReserveResult> reserve(const std::string& id, const std::vector<std::string>& add,
                                const std::vector<std::string>& remove, bool shared, bool replace);
  Result<std::optional<Task>> current();
  /// The later changes to what `row` changed: the same field of the same task, or anything about
  /// a task it created.
  Result<std::vector<UndoConflict>> undo_conflicts(const AuditEntry& row);
  /// Puts back what `row` changed: every field to its value before, the tasks it created removed,
  /// the tasks it deleted restored, a focus it moved moved back when nothing moved it since
  /// (otherwise a warning). Returns the tasks touched.
  Result<std::vector<std::string>> undo(const AuditEntry& row, std::vector<std::string>& warnings);

 private:
  Result<void> check_version(const Task& task, std::optional<std::int64_t> if_version);
  /// `archived_child`: the task placed is archived itself, so an archived parent is fine;
  /// `open_child`: it counts against hierarchy.maxSiblings.
  Result<void> check_parent(const Task& parent, int subtree_height, const std::string& moving_id,
                            bool archived_child = false, bool open_child = true);
  Result<void> check_depends(const std::string& id, const std::vector<std::string>& depends);
  Result<int> subtree_height(const std::string& id);
  /// Writes `after` (version+1, updatedAt) and reports every changed field.
  Result<std::vector<std::string>> save(const Task& before, Task& after);
  /// A change for the audit row; `version`: the task's version it was made to, for a change of
  /// the task's row (FieldChange::version), else 0.
  void record(const std::string& id, std::string field, json::Value before, json::Value after,
              std::int64_t version = 0);
  Result<void> clear_focus_of(const std::string& id);
  /// The session's reservations on `id`, by path.
  Result<std::vector<Reservation>> held_on(const std::string& id);
  /// reserve() once the session is known to focus `id`, holding `mine` on it (held_on()).
  Result<ReserveResult> reserve_held(const std::string& id, const std::vector<std::string>& add,
                                     const std::vector<std::string>& remove, bool shared, bool replace,
                                     std::vector<Reservation> mine);
  /// start's claim of the task, before it reserves anything.
  Result<StartResult> claim_task(const std::string& id);
  /// Drops every reservation of `session` (its focus is going), each task's as its `reserved` change.
  Result<void> release_reservations(const std::string& session);
  /// Drops the lapsed reservations `taken` names (another claim takes their paths), each claim's
  /// as its task's `reserved` change (`lapsed`: every lapsed reservation, to say what stays).
  Result<void> take_over_lapsed(const std::vector<reservations::Conflict>& taken, const std::vector<Reservation>& lapsed);
  TaskType infer_type(const Task* parent, std::optional<TaskType> wanted) const;
  /// An epic has no parent; a subtask has one, and no children.
  Result<void> check_type_change(const Task& before, TaskType type);
  /// delete's children: refused (Block), moved up (Orphan) or deleted with it (Cascade; a done
  /// child is archived instead when the delete is not hard).
  Result<void> settle_children(const Task& task, const std::vector<std::string>& children,
                               const DeleteOptions& options, DeleteResult& result);
  /// One task of import_kept placed as add() places one, with its own id (task_import_kept.cpp).
  Result<void> place_kept(Task& task);
  // The steps of undo, in their order (task_undo.cpp).
  Result<void> undo_deleted(const AuditEntry& row, std::vector<std::string>& touched,
                            std::vector<std::string>& warnings);
  Result<void> undo_fields(const AuditEntry& row, const std::vector<std::string>& created,
                           std::vector<std::string>& touched);
  Result<void> undo_focus(const AuditEntry& row, std::vector<std::string>& warnings);
  Result<void> undo_created(const std::vector<std::string>& created, std::vector<std::string>& touched);

  TaskStore& store_;
  AuditLog& audit_;
  const Config& config_;
  TimeMs now_;
  std::vector<std::string> reserved_ids_;  // reserve_ids(): add() takes them in order, from next_reserved_
  std::size_t next_reserved_ = 0;
  std::string session_;
  ChangeSink sink_;
};

/// Fields compared by save(), in output order.
const std::vector<std::string_view>& task_fields();

}  // namespace ct
