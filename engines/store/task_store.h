// The tasks role of the storage seam (engines/store/store.h): task rows with their dependency
// lists, labels, notes and relations, the full-text search over them, and focus (which task a
// session works on, the atomic claim of tasks.start).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/error.h"
#include "engines/store/sql_runner.h"
#include "engines/store/task.h"

namespace ct {

enum class ArchivedFilter { Exclude, Only, Include };
enum class SortKey { Position, Priority, Created, Updated, Title, Status, Id };

/// Whether a task can start now (docs/architecture.md §4: a dependency holds a task until it is done or
/// cancelled).
enum class Readiness {
  Any,
  Ready,    // pending, every dependency finished, not an epic whose children are still open
  Blocked,  // open, and blocked by hand (status blocked) or waiting on an unfinished dependency
};

struct TaskFilter {
  std::vector<TaskStatus> statuses;      // empty = any
  std::optional<std::string> parent;     // "" = root tasks only; nullopt = any
  std::optional<TaskType> type;
  std::vector<std::string> labels;       // tasks carrying every one of these labels
  std::optional<std::string> under;      // descendants of this task, at any depth
  std::optional<std::string> phase;
  std::optional<Priority> priority;
  ArchivedFilter archived = ArchivedFilter::Exclude;
  Readiness readiness = Readiness::Any;
  /// Tasks whose id starts with this ("T12": T12, T120…, T1200…); "" = any. Compared as bytes.
  std::string id_prefix;
};

struct TaskQuery {
  TaskFilter filter;
  SortKey sort = SortKey::Position;      // Position sorts by parent, then position, then id
  bool descending = false;
  std::int64_t limit = -1;               // -1 = no limit
  std::int64_t offset = 0;
};

struct SearchHit {
  Task task;
  double score = 0;  // higher is better; an exact id match ranks first
};

/// How many tasks a search matched in all, counted on the way (TaskStore::search): exactly, or at
/// least `matched` when `at_least` — the ranking window filled, and the older matches were not counted.
struct SearchCount {
  std::int64_t matched = 0;
  bool at_least = false;
};

/// How many of a search's matches are ranked, newest first (TaskStore::search): a word in a third
/// of a million tasks took 36 ms to rank in full.
inline constexpr std::int64_t kSearchRankWindow = 1000;

/// The weights of tasks.next's score.
struct ReadyScoring {
  std::array<int, 4> priority_points{};  // indexed by Priority (critical, high, medium, low)
  std::string phase;                     // tasks in this phase get phase_bonus ("" = none)
  int phase_bonus = 0;
  int leaf_bonus = 0;                    // for tasks without open children
  std::int64_t limit = 1;
  /// Only these tasks (a session's scope); null = every task.
  const std::set<std::string>* within = nullptr;
  /// When set, an active task is a candidate too when the session claiming it was last renewed
  /// at or before this time (or is gone): its lease has ended (engines/rules/claim_lease.h).
  std::optional<TimeMs> lapsed_before;
};

/// Who holds a task (its focus row) and when that session last showed life: the rules
/// (engines/rules/claim_lease.h) tell from it when the claim's lease ends.
struct Claim {
  std::string task_id;
  std::string session;                // "" = the sessionless focus (someone at the CLI)
  std::string agent;                  // the session's agent ("" when none)
  std::optional<TimeMs> renewed_at;   // the session's updated_at; nullopt when sessionless or gone
  std::string worktree;               // where the session runs (Session::worktree, branch); "" unknown
  std::string branch;
};

/// A path a claim reserves (tasks.start, tasks.reserve; engines/rules/reservations.h), with its
/// holder as claims_by_task reads it: live while `holder` still focuses the task and its lease runs.
struct Reservation {
  std::string path;                   // project-relative: a file, a folder or a glob
  std::string head;                   // its first part, "*" when that part is a glob (put_reservations)
  bool shared = false;                // read-mostly: overlaps only exclusive reservations
  TimeMs created_at = 0;
  Claim holder;                       // task, session, agent and last renewal
  std::string worktree;               // where the holder's session runs (sessions.worktree; "" unknown)
};

/// A task as dependency-graph analysis sees it (engines/rules/graph.h): what the analysis reads, and no
/// more, so that a 100k-task project loads in one pass without decoding notes or descriptions.
struct GraphTask {
  std::string id;
  std::string title;
  std::string parent;                    // "" for a root task
  TaskStatus status = TaskStatus::Pending;
  Priority priority = Priority::Medium;
  TaskType type = TaskType::Task;
  std::int64_t position = 0;
  TimeMs created_at = 0;
  TimeMs updated_at = 0;
  std::int64_t version = 1;              // Task::version
  std::vector<std::string> depends;
  std::vector<std::string> labels;
  std::vector<std::string> files;
};

/// Where a task stands and its version, no more: what a plan rests on (domains/plan/).
struct TaskVersion {
  std::string id;
  std::string parent;                    // "" for a root task
  std::int64_t version = 1;              // Task::version
  bool archived = false;
};

struct ReadyCandidate {
  std::string id;
  int score = 0;
  bool leaf = false;
  bool in_phase = false;
};

/// A read a call is about to make, by the role method that makes it (TaskStore::expect).
enum class ExpectedRead : std::uint8_t {
  Task,            // get_task(of)
  Claim,           // claim_on(of)
  TaskThreadSize,  // thread_size("task", of) (MessageStore)
  TaskLinks,       // task_links(of) (TrackerStore)
  OpenChildCount,  // count_tasks of parent `of`'s children pending, active or blocked
  MaxPosition,     // max_position(of)
  Research,        // research_for_task(of) (ResearchStore)
  Gates,           // lifecycle_states(of, Gate) (LifecycleStore)
  Stages,          // lifecycle_states(of, Stage)
  Evidence,        // task_evidence(of, false) (TrustStore)
};
struct Expected {
  ExpectedRead read;
  std::string_view of;
};

/// What the task rules (engines/rules/task_engine.h) and graph analysis read and write.
class TaskStore {
 public:
  /// A hint, inside a transaction: the reads it makes next, in this order, none needing another's
  /// answer (one of them may turn out not to be made). A store whose statements are round trips
  /// (PostgreSQL) sends them with its next statement in one round trip — a write's after its lock,
  /// so they read what the role methods would — and answers the role methods from that while
  /// nothing else was run between (sql::Runner::read_ahead); nothing else changes. SQLite ignores
  /// it (engines/store/expected_reads.cpp).
  void expect(std::initializer_list<Expected> reads);
  /// The filter of count_tasks() that OpenChildCount stands for.
  static TaskFilter open_children_filter(std::string_view parent);

  // Tasks. get_task finds archived tasks too.
  [[nodiscard]] Result<std::optional<Task>> get_task(std::string_view id);
  /// The statement get_task runs (?1 the id): a backend may send it ahead (TaskStore::expect).
  static const std::string& get_task_sql();
  /// The tasks of `ids` that exist, in that order (a repeated id repeats).
  [[nodiscard]] virtual Result<std::vector<Task>> get_tasks(const std::vector<std::string>& ids);
  [[nodiscard]] Result<std::vector<Task>> list_tasks(const TaskQuery& query);
  [[nodiscard]] Result<std::int64_t> count_tasks(const TaskFilter& filter);
  /// The statement count_tasks runs, its values bound into `args`.
  std::string count_tasks_sql(const TaskFilter& filter, sql::Args& args);
  /// Counts per status over the filter (ignores filter.statuses).
  [[nodiscard]] Result<std::map<TaskStatus, std::int64_t>> count_by_status(const TaskFilter& filter);
  /// Next id from a counter kept in the store: allocated inside the write transaction, never reused
  /// (not even after a hard delete).
  [[nodiscard]] Result<std::string> allocate_task_id();
  /// The next `count` ids at once, in order: one update of the counter, not one per id (within one
  /// transaction PostgreSQL keeps every version of the counter's row, and each update walks them).
  [[nodiscard]] Result<std::vector<std::string>> allocate_task_ids(std::size_t count);
  [[nodiscard]] virtual Result<void> insert_task(const Task& task);
  [[nodiscard]] virtual Result<void> update_task(const Task& task);
  /// Removes the row, its dependency edges in both directions, its index entries, its research
  /// links and its lifecycle records.
  [[nodiscard]] Result<void> delete_task(std::string_view id);
  /// Direct children ids ordered by position (archived included when asked).
  [[nodiscard]] Result<std::vector<std::string>> children_of(std::string_view id, bool include_archived);
  /// Ids of tasks whose depends list contains `id`.
  [[nodiscard]] Result<std::vector<std::string>> dependents_of(std::string_view id);
  /// Largest position among the children of `parent` ("" = roots), 0 when none.
  [[nodiscard]] Result<std::int64_t> max_position(std::string_view parent);
  /// The statement max_position runs: of the roots, or (?1) of a parent's children.
  static std::string_view max_position_sql(bool root);
  /// tasks.next candidates: pending, unarchived tasks whose dependencies are all done or
  /// cancelled, except epics that still have open children, scored with `scoring` (the engine
  /// owns the formula; the store only evaluates it) and ordered by score, then position, then age.
  /// Only the best `scoring.limit` are returned (of `scoring.within` when set). With
  /// `scoring.lapsed_before`, active tasks whose claim has lapsed are candidates too.
  [[nodiscard]] virtual Result<std::vector<ReadyCandidate>> top_ready(const ReadyScoring& scoring) = 0;
  /// Unarchived tasks for graph analysis: the subtree under `root` (the root itself excluded), or
  /// every task when `root` is empty; ordered by parent, then position. Dependencies may name tasks
  /// outside the result (another subtree, or archived).
  [[nodiscard]] Result<std::vector<GraphTask>> graph_tasks(std::string_view root);
  /// The unarchived tasks of the subtree under `root` (the root itself excluded) with their parents
  /// and versions, as graph_tasks() finds them but nothing else read: what a plan rests on
  /// (domains/plan/).
  [[nodiscard]] Result<std::vector<TaskVersion>> subtree_versions(std::string_view root);
  /// Where each task of `ids` that exists stands, archived or not, and its version, in one statement
  /// and nothing else read (any order): what moved since a plan's watermark (domains/plan/).
  [[nodiscard]] Result<std::vector<TaskVersion>> task_versions(const std::vector<std::string>& ids);
  /// Full-text search over title, description, labels and notes (every word, each a prefix); an
  /// exact id match ranks first, then best first: per word and column, the column's weight (title
  /// 10, description 3, labels 5, notes 1) times the word's hits there saturated as bm25 does,
  /// tf·2.2/(tf+1.2), summed — no length normalisation; equal scores in row order (oldest first).
  /// Both backends rank the newest kSearchRankWindow matches (or `limit`, if more; the exact id
  /// whatever its age), so that ranking costs the same whatever the store's size and however many
  /// tasks match. limit -1 = every match, all ranked. With `count`, how many matched, counted in the
  /// same pass: exactly when the window held every match, else at least the window (issue 56).
  [[nodiscard]] virtual Result<std::vector<SearchHit>> search(std::string_view text, const TaskFilter& filter,
                                                              std::int64_t limit, SearchCount* count = nullptr) = 0;
  /// How many tasks search() finds for `text` in all (an exact id included).
  [[nodiscard]] virtual Result<std::int64_t> count_matches(std::string_view text, const TaskFilter& filter) = 0;

  // Focus: the task a session is working on ("" = no session).
  [[nodiscard]] Result<std::optional<std::string>> get_focus(std::string_view session);
  [[nodiscard]] Result<void> set_focus(std::string_view session, std::optional<std::string> task_id);
  /// Who focuses `task_id`, nullopt when nobody does. A task is focused by at most one session
  /// (the atomic claim of tasks.start).
  [[nodiscard]] Result<std::optional<Claim>> claim_on(std::string_view task_id);
  /// The statement claim_on runs (?1 the task's id): a backend may send it ahead (TaskStore::expect).
  static const std::string& claim_on_sql();
  /// Every claim (a row per session with a focus: few), in no particular order.
  [[nodiscard]] Result<std::vector<Claim>> claims();

  // Reservations (engines/store/task_reservations.cpp): the paths a session's claim of a task holds.
  /// Rows whose session still focuses their task (the rules test the lease), of one task unless
  /// `task_id` is empty, and with `heads` only those whose head is one of them or "*"; ordered by
  /// task, session, path.
  [[nodiscard]] Result<std::vector<Reservation>> claimed_reservations(std::string_view task_id,
                                                                      const std::vector<std::string>* heads = nullptr);
  /// `session`'s rows (of every task: a row of a task it no longer focuses is dead), by task and path.
  [[nodiscard]] Result<std::vector<Reservation>> session_reservations(std::string_view session);
  /// Inserts `rows` (their path, head, shared and created_at) as `session`'s on `task_id`, or
  /// updates the ones it holds already: one statement.
  [[nodiscard]] Result<void> put_reservations(std::string_view session, std::string_view task_id,
                                              const std::vector<Reservation>& rows);
  /// Removes `session`'s row of `path`.
  [[nodiscard]] Result<void> drop_reservation(std::string_view session, std::string_view path);
  /// Removes every row of `session` (one statement; read them first with session_reservations()
  /// in the same write transaction to know what went).
  [[nodiscard]] Result<void> drop_reservations(std::string_view session);

 protected:
  virtual sql::Runner& sql_runner() = 0;
  /// Keep the backend's search index with the tasks' text (SQLite notes the task for its FTS5 index,
  /// engines/store/sqlite/sqlite_search.cpp; PostgreSQL's index is a generated column and needs
  /// nothing): task `number` was added or its text changed…
  [[nodiscard]] virtual Result<void> index_task(std::int64_t number);
  /// …or it is gone.
  [[nodiscard]] virtual Result<void> unindex_task(std::int64_t number);
  ~TaskStore() = default;  // a role of a Store: never owned or deleted through it
};

}  // namespace ct
