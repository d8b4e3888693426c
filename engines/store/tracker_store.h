// The tracker role of the storage seam (engines/store/store.h, issue 55): which task each external
// item of a team's tracker is (a GitHub issue, a plug-in tracker's item), the field values both
// sides agreed on at the last sync (the base of the 3-way comparison, engines/rules/tracker_sync.h),
// conflicts kept until resolved, and each repository's incremental cursor. Its SQL is the same on
// both backends and written once here, over the backend's sql::Runner (engines/store/sql_runner.h).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/clock.h"
#include "core/error.h"
#include "core/json.h"
#include "engines/store/sql_runner.h"

namespace ct {

/// A task linked to an external item.
struct TrackerLink {
  std::string tracker;      // "github", or a plug-in's name
  std::string repository;   // GitHub: "owner/name"
  std::string external_id;  // the item's stable id (GitHub: its node id); for a milestone's epic "milestone:<title>"
  std::string task_id;
  std::string key;          // "owner/name#12"
  std::string url;
  std::int64_t number = 0;  // the item's number, 0 when it has none
  std::string version;      // the item's version at the last sync
  json::Value base = json::Value::object();  // {field: value} as both sides had them at the last sync
  json::Value meta = json::Value::object();  // assignees, author, milestone: metadata only
  std::string state = "synced";              // synced | conflict | refused (its push) | deleted
  json::Value conflict;                      // null, or {field: {base, here, there}}
  bool push_new = false;                     // an epic whose new children are created in the tracker
  TimeMs synced_at = 0;
};

/// A repository's incremental sync state.
struct TrackerCursor {
  std::string tracker;
  std::string repository;
  std::string cursor;  // where the next pull resumes ("" before the first)
  std::string etag;    // the tracker's conditional-request tag for it
  json::Value summary; // the last sync's outcome: {pulled, pushed, created, conflicts, at, dryRun}
  TimeMs synced_at = 0;
};

class TrackerStore {
 public:
  [[nodiscard]] Result<std::optional<TrackerLink>> get_link(std::string_view tracker, std::string_view repository,
                                                            std::string_view external_id);
  /// The links of a task (normally one), by tracker and repository.
  [[nodiscard]] Result<std::vector<TrackerLink>> task_links(std::string_view task_id);
  /// The statement task_links runs (?1 the task's id): a backend may send it ahead (TaskStore::expect).
  static const std::string& task_links_sql();
  /// A repository's links; only those in `state` unless it is empty.
  [[nodiscard]] Result<std::vector<TrackerLink>> links(std::string_view tracker, std::string_view repository,
                                                       std::string_view state);
  /// The link of a repository's item by its number (a tracker that names an item only by it).
  [[nodiscard]] Result<std::optional<TrackerLink>> link_by_number(std::string_view tracker, std::string_view repository,
                                                                  std::int64_t number);
  /// Each numbered item's task (number → task id), without reading the links themselves.
  [[nodiscard]] Result<std::map<std::int64_t, std::string>> link_numbers(std::string_view tracker,
                                                                        std::string_view repository);
  /// The links whose item names a parent or blockers (meta parent, blockedBy, refs) not yet all
  /// tasks (meta resolved unset): what a sync's relink step reads.
  [[nodiscard]] Result<std::vector<TrackerLink>> unresolved_links(std::string_view tracker,
                                                                  std::string_view repository);
  /// The items' links a sync may have to push: those of tasks the audit trail shows changed after
  /// its row `after_seq` (audit_changes.seq; 0 for every changed task), and those whose last push the
  /// tracker refused (state "refused"). Milestones' epics and deleted tasks are not among them.
  [[nodiscard]] Result<std::vector<TrackerLink>> links_to_push(std::string_view tracker, std::string_view repository,
                                                               std::int64_t after_seq);
  /// The audit trail's last row (its seq; 0 when empty): a watermark for links_to_push. Writers are
  /// serialised and number their rows in commit order, so a change committed after this read has a
  /// higher seq.
  [[nodiscard]] Result<std::int64_t> last_audit_row();
  /// The links of epics whose new children are created in the tracker (push_new).
  [[nodiscard]] Result<std::vector<TrackerLink>> push_new_links(std::string_view tracker, std::string_view repository);
  [[nodiscard]] Result<std::int64_t> count_links(std::string_view tracker, std::string_view repository,
                                                 std::string_view state);
  /// Inserts or replaces the link (by tracker, repository and external id).
  [[nodiscard]] Result<void> put_link(const TrackerLink& link);
  [[nodiscard]] Result<std::optional<TrackerCursor>> get_cursor(std::string_view tracker, std::string_view repository);
  [[nodiscard]] Result<void> put_cursor(const TrackerCursor& cursor);

 protected:
  virtual sql::Runner& sql_runner() = 0;
  ~TrackerStore() = default;  // a role of a Store: never owned or deleted through it
};

}  // namespace ct
