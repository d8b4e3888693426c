#include "engines/store.h"

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

}  // namespace ct
