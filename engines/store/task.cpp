#include "engines/store/task.h"

#include <array>
#include <cstdio>

namespace ct {
namespace {

template <typename E, std::size_t N>
std::optional<E> lookup(const std::array<std::string_view, N>& names, std::string_view text) {
  for (std::size_t i = 0; i < N; ++i)
    if (names[i] == text) return static_cast<E>(i);
  return std::nullopt;
}

constexpr std::array<std::string_view, 5> kStatus = {"pending", "active", "blocked", "done", "cancelled"};
constexpr std::array<std::string_view, 4> kPriority = {"critical", "high", "medium", "low"};
constexpr std::array<std::string_view, 3> kType = {"epic", "task", "subtask"};
constexpr std::array<std::string_view, 4> kSize = {"", "small", "medium", "large"};

}  // namespace

std::string_view to_string(TaskStatus s) { return kStatus[static_cast<std::size_t>(s)]; }
std::string_view to_string(Priority p) { return kPriority[static_cast<std::size_t>(p)]; }
std::string_view to_string(TaskType t) { return kType[static_cast<std::size_t>(t)]; }
std::string_view to_string(TaskSize s) { return kSize[static_cast<std::size_t>(s)]; }
std::optional<TaskStatus> parse_status(std::string_view t) { return lookup<TaskStatus>(kStatus, t); }
std::optional<Priority> parse_priority(std::string_view t) { return lookup<Priority>(kPriority, t); }
std::optional<TaskType> parse_type(std::string_view t) { return lookup<TaskType>(kType, t); }
std::optional<TaskSize> parse_size(std::string_view t) {
  if (t.empty()) return std::nullopt;
  return lookup<TaskSize>(kSize, t);
}

int priority_score(Priority p) {
  switch (p) {
    case Priority::Critical: return 100;
    case Priority::High: return 75;
    case Priority::Medium: return 50;
    case Priority::Low: return 25;
  }
  return 0;
}

int priority_rank(Priority p) { return static_cast<int>(p); }

std::optional<std::int64_t> parse_task_id(std::string_view id) {
  if (id.size() < 4 || id[0] != 'T' || id.size() > 19) return std::nullopt;
  std::int64_t value = 0;
  for (std::size_t i = 1; i < id.size(); ++i) {
    if (id[i] < '0' || id[i] > '9') return std::nullopt;
    value = value * 10 + (id[i] - '0');
  }
  if (value <= 0) return std::nullopt;
  return value;
}

std::string format_task_id(std::int64_t number) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "T%03lld", static_cast<long long>(number));
  return buffer;
}

std::optional<std::string> normalize_task_id(std::string_view text) {
  if (!text.empty() && (text[0] == 'T' || text[0] == 't')) text.remove_prefix(1);
  if (text.empty() || text.size() > 18) return std::nullopt;
  std::int64_t value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    value = value * 10 + (c - '0');
  }
  if (value <= 0) return std::nullopt;
  return format_task_id(value);
}

}  // namespace ct
