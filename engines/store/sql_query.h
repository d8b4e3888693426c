// The query text the roles build at run time: WHERE clauses of task, session, compliance and
// research queries, and the ORDER BY of task lists, in the words of the backend's Dialect
// (engines/store/sql_runner.h); values are bound through Args, each condition writing "{}" where its
// value goes.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "engines/store/compliance_store.h"
#include "engines/store/research_store.h"
#include "engines/store/session_store.h"
#include "engines/store/sql_runner.h"
#include "engines/store/task_store.h"

namespace ct::sql {

/// `fragment` (a Dialect's) with its "{}" written as `value`.
std::string fill(std::string_view fragment, std::string_view value);

/// A WHERE clause under construction: conditions joined by AND.
struct Where {
  std::string& text;
  Args& args;

  void add(std::string_view condition);
  /// `condition` holds "{}" once, written as the placeholder bound to `value`.
  void add(std::string_view condition, std::string_view value);
  void add(std::string_view condition, std::int64_t value);
  /// "`column` IN (…)" over `values` (each bound).
  template <typename Values>
  void add_in(std::string_view column, const Values& values) {
    std::string clause = std::string(column) + " IN (";
    bool first = true;
    for (const auto& value : values) {
      clause += first ? "" : ",";
      clause += args(std::string_view(value));
      first = false;
    }
    add(clause + ")");
  }
};

/// The condition on t.archived of a filter (append_task_filter() adds it last); none for Include.
std::optional<std::string_view> archived_condition(ArchivedFilter archived);

/// The filter's conditions on tasks t; `with_statuses` false leaves out filter.statuses (a count
/// grouped by status). Each distinct status is bound once, in enum order, so that the text depends
/// only on which are asked for (SQLite caches statements by their text).
void append_task_filter(const Dialect& dialect, const TaskFilter& filter, bool with_statuses, Where& where);

/// The WHERE clause of append_task_filter() ("" when it has no condition).
std::string task_where(const Dialect& dialect, const TaskFilter& filter, bool with_statuses, Args& args);

/// ORDER BY of a task list: the sort key takes the direction; ties are broken in tree order,
/// oldest first, either way, then by task number.
std::string task_order_by(const Dialect& dialect, SortKey sort, bool descending);

/// Claims: each focus row f with its session's agent and last renewal (task_store.h Claim),
/// columns task_id, session, agent, updated_at (NULL when sessionless or the session is gone).
inline constexpr std::string_view kClaimSelect =
    "SELECT f.task_id, f.session, coalesce(s.agent, ''), s.updated_at, coalesce(s.worktree, ''), "
    "coalesce(s.branch, '') FROM focus f"
    " LEFT JOIN sessions s ON s.id = f.session";

/// tasks.next's test that someone holds task t: a focus row, unless `cutoff` (a placeholder,
/// bound NULL for "claims never lapse") is set and the row's session was last renewed at or
/// before it, or is gone. The sessionless focus never lapses.
std::string live_claim(std::string_view cutoff);

/// WHERE clause of a session query (no alias).
std::string session_where(const SessionQuery& query, Args& args);

/// WHERE clause of a compliance query (alias c); `with_passed` also applies query.passed.
std::string compliance_where(const ComplianceQuery& query, bool with_passed, Args& args);

/// The conditions of a research query on entries r.
void append_research_filter(const Dialect& dialect, const ResearchQuery& query, Where& where);

}  // namespace ct::sql
