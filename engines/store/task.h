// The task record and its enumerations (docs/architecture.md §4).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/clock.h"

namespace ct {

enum class TaskStatus { Pending, Active, Blocked, Done, Cancelled };
/// Every status, in the enum's (and reports') order.
inline constexpr std::array<TaskStatus, 5> kTaskStatuses = {TaskStatus::Pending, TaskStatus::Active, TaskStatus::Blocked,
                                                           TaskStatus::Done, TaskStatus::Cancelled};
enum class Priority { Critical, High, Medium, Low };
enum class TaskType { Epic, Task, Subtask };
enum class TaskSize { Unset, Small, Medium, Large };

std::string_view to_string(TaskStatus status);
std::string_view to_string(Priority priority);
std::string_view to_string(TaskType type);
std::string_view to_string(TaskSize size);
std::optional<TaskStatus> parse_status(std::string_view text);
std::optional<Priority> parse_priority(std::string_view text);
std::optional<TaskType> parse_type(std::string_view text);
std::optional<TaskSize> parse_size(std::string_view text);
/// critical 100, high 75, medium 50, low 25 (tasks.next scoring).
int priority_score(Priority priority);
/// Sort rank: critical 0 … low 3.
int priority_rank(Priority priority);

struct Note {
  TimeMs at = 0;
  std::string text;
};

/// A non-blocking link to another task (tasks.relate).
struct Relation {
  std::string task_id;
  std::string type;  // relates-to|spawned-from|deferred-to|supersedes|duplicates
  std::string reason;
};

struct Task {
  std::string id;  // "T001"
  std::string title;
  std::string description;
  TaskStatus status = TaskStatus::Pending;
  Priority priority = Priority::Medium;
  TaskType type = TaskType::Task;
  std::string parent;          // empty for a root task
  std::int64_t position = 0;   // 1-based order among siblings
  std::vector<std::string> depends;
  std::vector<std::string> labels;
  std::vector<std::string> acceptance;
  std::vector<std::string> files;
  std::vector<Note> notes;     // append-only
  std::vector<Relation> relates;
  std::string phase;
  TaskSize size = TaskSize::Unset;
  std::string blocked_by;
  TimeMs created_at = 0;
  TimeMs updated_at = 0;
  std::optional<TimeMs> completed_at;
  std::optional<TimeMs> cancelled_at;
  std::string cancellation_reason;
  bool archived = false;
  std::optional<TimeMs> archived_at;
  std::string archive_reason;
  std::int64_t version = 1;    // row version, +1 on every change (optimistic concurrency)
};

/// "T001" → 1; nullopt when not an id. IDs are "T" followed by at least 3 digits.
std::optional<std::int64_t> parse_task_id(std::string_view id);
std::string format_task_id(std::int64_t number);
/// Accepts "T1", "t001", "1" and normalises to "T001"; nullopt when not a task id at all.
std::optional<std::string> normalize_task_id(std::string_view text);

}  // namespace ct
