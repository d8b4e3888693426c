#include "engines/store/store_maintenance.h"

namespace ct {

const std::vector<TaskRule>& task_rules() {
  static const std::vector<TaskRule> rules = {
      {"invalid-value:status", 1},   {"invalid-value:priority", 1}, {"invalid-value:type", 1},
      {"invalid-value:size", 1},     {"malformed-list:depends", 0}, {"malformed-list:labels", 0},
      {"malformed-list:acceptance", 0}, {"malformed-list:files", 0}, {"malformed-list:notes", 0},
      {"malformed-list:relates", 0}, {"task-id", 1},                {"title", 1},
      {"description", 1},            {"title-equals-description", 0}, {"completed-at", 2},
      {"cancelled-at", 2},           {"timestamp-order", 1},        {"future-timestamp", 1},
      {"archived-open", 1},          {"archived-at", 1},            {"archived-modified", 0},
      {"search-index", 0},
  };
  return rules;
}

std::vector<DiagnosticRow> split_task_rules(
    const std::vector<DiagnosticRow>& wide,
    const std::function<bool(const DiagnosticRow& row, const TaskRule& rule, std::string_view flag)>& broken) {
  std::vector<DiagnosticRow> out;
  for (const auto& row : wide) {
    std::size_t column = 1;
    for (const auto& rule : task_rules()) {
      const auto details = static_cast<std::size_t>(rule.details);
      if (column + details >= row.size()) break;  // cannot happen: the query has every rule's columns
      if (broken(row, rule, row[column])) {
        DiagnosticRow one{row[0], std::string(rule.name)};
        one.insert(one.end(), row.begin() + static_cast<std::ptrdiff_t>(column + 1),
                   row.begin() + static_cast<std::ptrdiff_t>(column + 1 + details));
        out.push_back(std::move(one));
      }
      column += 1 + details;
    }
  }
  return out;
}

}  // namespace ct
