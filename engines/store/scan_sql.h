// The consistency scans (ScanKind, engines/store/store_maintenance.h) and task rules whose SQL both
// backends write alike, written once. A backend adds its own for the rest (JSON lists, ids,
// search indexes, string functions) and expands the marks in all of them:
//   {ID:column}  narrows a scan to one task: "column = {TASK}", or every row for the whole store
//   {TASK}       ScanScope::task
//   {NUM}        ScanScope::number, an integer
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "engines/store/store_maintenance.h"

namespace ct::sql {

/// How a backend tests one rule of task_rules(): the condition (true when broken) and the
/// detail columns its rows carry.
struct RuleSql {
  std::string flag;
  std::vector<std::string> details;
};

/// What the dialects write differently in the shared rules.
struct ScanDialect {
  std::string_view greatest;     // the function of the largest of its arguments: max, GREATEST
  std::string_view truth_open;   // a condition as a detail column (0 or 1): truth_open + condition + truth_close
  std::string_view truth_close;
};

/// The rules of task_rules() both dialects test alike, by name; a backend adds the rest.
std::map<std::string_view, RuleSql> common_rule_sql(const ScanDialect& dialect);

/// The TaskRules query (ScanKind::TaskRules) over `rules` (every rule of task_rules() by name):
/// one pass over the tasks, the id, then per rule its flag (NULL read as `no`, the dialect's
/// false) and its detail columns, then `more_columns` (", …" or ""); only rows breaking a rule,
/// then `order` (" ORDER BY …" or "").
std::string task_rules_query(const std::map<std::string_view, RuleSql>& rules, std::string_view no,
                             std::string_view more_columns, std::string_view order);

/// The query of `kind` when both dialects write it alike (with the marks above); "" otherwise.
std::string common_scan_sql(ScanKind kind);

/// `sql` with its marks written out: {ID:column} as "column = " + `task` when `one_task`, else as
/// `every_row`; then {TASK} as `task` and {NUM} as `number`.
std::string expand_scan_marks(std::string_view sql, bool one_task, std::string_view every_row, std::string_view task,
                              std::string_view number);

}  // namespace ct::sql
