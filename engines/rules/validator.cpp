#include "engines/rules/validator.h"

#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <unordered_map>
#include <utility>

#include "core/text.h"
#include "engines/store/task_json.h"

namespace ct {
namespace {

Advice backup_fix() { return "restore a backup (" + call("system.restore") + ") or correct the row in .cleo/tasks.db"; }
/// Timestamps this far ahead of the clock count as "in the future" (clocks of machines differ).
constexpr TimeMs kFutureSlackMs = 5 * 60 * 1000;

/// A repairable problem's fix: the validate.fix call and what it does.
void offer_fix_call(std::vector<Problem>& problems) {
  for (auto& problem : problems)
    if (problem.repairable) problem.fix = call("validate.fix", {}) + " will " + problem.fix;
}

/// A set-based check answered by one consistency scan (StoreMaintenance::scan). Column 0 of every row is
/// the task id ("" when the row is not about one task).
struct RowCheck {
  std::string_view check;
  bool repairable;
  bool per_task;  // also run by validate.task (the scan narrows to one task)
  ScanKind scan;
  std::function<void(const DiagnosticRow&, Problem&)> describe;
};

const std::vector<RowCheck>& row_checks() {
  static const std::vector<RowCheck> checks = {
      {"missing-dependency", true, true,
       ScanKind::MissingDependency,
       [](const DiagnosticRow& r, Problem& p) {
         p.message = r[0] + " depends on " + r[1] + ", which does not exist";
         p.fix = "remove " + r[1] + " from " + r[0] + "'s depends";
       }},
      {"dependency-edges", true, true,
       ScanKind::DependencyEdges,
       [](const DiagnosticRow& r, Problem& p) {
         p.message = r[2] == "extra" ? "the dependency index says " + r[0] + " depends on " + r[1] +
                                           ", but its depends list does not"
                                     : r[0] + "'s dependency on " + r[1] + " is missing from the dependency index";
         p.fix = "rebuild the dependency index from the depends lists";
       }},
      {"search-index", true, false,
       ScanKind::OrphanSearchRows,
       [](const DiagnosticRow& r, Problem& p) {
         p.message = "search index row " + r[1] + " belongs to no task";
         p.fix = "drop search index rows of missing tasks";
       }},
      {"search-index", true, false,
       ScanKind::MissingSearchTerms,
       [](const DiagnosticRow& r, Problem& p) {
         p.message = r[1] + " words of the search index are missing from its list of words: tasks.find misses "
                     "the tasks that have them";
         p.fix = "rebuild the search index's list of words";
       }},
      {"focus-missing-task", true, true,
       ScanKind::FocusMissingTask,
       [](const DiagnosticRow& r, Problem& p) {
         p.session = r[1];
         p.message = (r[1].empty() ? std::string("the focus outside sessions") : "session " + r[1]) +
                     " focuses " + r[0] + ", which does not exist";
         p.fix = "clear the focus";
       }},
      {"focus-missing-session", true, true,
       ScanKind::FocusMissingSession,
       [](const DiagnosticRow& r, Problem& p) {
         p.session = r[1];
         p.message = r[0] + " is claimed by session " + r[1] + ", which does not exist";
         p.fix = "release the claim (an active task goes back to pending)";
       }},
      {"focus-ended-session", true, true,
       ScanKind::FocusEndedSession,
       [](const DiagnosticRow& r, Problem& p) {
         p.session = r[1];
         p.message = r[0] + " is still claimed by session " + r[1] + ", which is " + r[2];
         p.fix = "release the claim (an active task goes back to pending)";
       }},
      {"focus-not-active", true, true,
       ScanKind::FocusNotActive,
       [](const DiagnosticRow& r, Problem& p) {
         p.session = r[1];
         p.message = r[0] + " is focused by " +
                     (r[1].empty() ? std::string("work outside sessions") : "session " + r[1]) +
                     " but is " + (r[3] != "0" ? "archived" : r[2]) + ", not active";
         p.fix = "clear the focus";
       }},
      {"one-claim-per-task", false, true,
       ScanKind::SharedClaims,
       [](const DiagnosticRow& r, Problem& p) {
         p.message = r[0] + " is claimed by several sessions at once: " + r[1];
         p.fix = "end all but one of them: " + call("session.end", {{"id", "…"}});
       }},
      {"one-active-task-per-session", false, false,
       ScanKind::SessionsWithSeveralTasks,
       [](const DiagnosticRow& r, Problem& p) {
         p.session = r[1];
         p.message = (r[1].empty() ? std::string("work outside sessions") : "session " + r[1]) +
                     " focuses several tasks at once: " + r[2];
         p.fix = "stop all but one: " + call("tasks.stop", {}) +
                 " in that session, then start the one it works on";
       }},
      {"id-counter", true, false,
       ScanKind::IdCounter,
       [](const DiagnosticRow& r, Problem& p) {
         p.message = "the next task id counter (" + r[1] + ") is not ahead of the largest id in use (" +
                     format_task_id(std::stoll(r[2])) + "): new tasks would collide";
         p.fix = "raise the counter past the largest id";
       }},
      {"memory-total", true, false,
       ScanKind::MemoryTotal,
       [](const DiagnosticRow& r, Problem& p) {
         p.message = "the kept total of memory entries (" + r[1] + ") is not their number (" + r[2] +
                     "): memory.find would weigh its words wrong";
         p.fix = "count the memory entries again";
       }},
      {"session-status", false, false,
       ScanKind::SessionStatus,
       [](const DiagnosticRow& r, Problem& p) {
         p.session = r[1];
         p.message = "session " + r[1] + " has status '" + r[2] + "', which is not a session status";
         p.fix = backup_fix();
       }},
      {"session-ended-at", true, false,
       ScanKind::SessionEndedAt,
       [](const DiagnosticRow& r, Problem& p) {
         p.session = r[1];
         bool finished = r[2] == "ended" || r[2] == "closed";
         p.message = "session " + r[1] + " is " + r[2] + (finished ? " but has no endedAt" : " but carries an endedAt");
         p.fix = finished ? "set endedAt to the session's updatedAt" : "clear endedAt";
       }},
  };
  return checks;
}

/// How a rule of task_rules() (a task row's own columns; ScanKind::TaskRules) is reported: its
/// check name, whether validate.fix repairs it, and the words. `details` are the rule's detail
/// columns.
struct TaskRuleCheck {
  std::string_view check;
  bool repairable;
  std::function<void(const std::string& id, const std::vector<std::string>& details, Problem&)> describe;
};

const std::map<std::string_view, TaskRuleCheck>& task_rule_checks() {
  static const std::map<std::string_view, TaskRuleCheck> checks = [] {
    std::map<std::string_view, TaskRuleCheck> c;
    for (std::string_view rule : {"invalid-value:status", "invalid-value:priority", "invalid-value:type", "invalid-value:size"}) {
      c[rule] = {"invalid-value", false,
                 [field = std::string(rule.substr(rule.find(':') + 1))](const std::string& id,
                                                                        const std::vector<std::string>& d, Problem& p) {
                   p.message = id + " has " + field + " '" + d[0] + "', which is not a valid " + field +
                               "; the task cannot be read";
                   p.fix = backup_fix();
                 }};
    }
    for (std::string_view rule : {"malformed-list:depends", "malformed-list:labels", "malformed-list:acceptance",
                                  "malformed-list:files", "malformed-list:notes", "malformed-list:relates"}) {
      c[rule] = {"malformed-list", false,
                 [column = std::string(rule.substr(rule.find(':') + 1))](const std::string& id,
                                                                         const std::vector<std::string>&, Problem& p) {
                   p.message = id + "'s " + column + " is not a JSON list of the expected items; the task cannot be read";
                   p.fix = backup_fix();
                 }};
    }
    c["task-id"] = {"task-id", false, [](const std::string& id, const std::vector<std::string>& d, Problem& p) {
                      p.message = "task id '" + id + "' is not T followed by at least 3 digits matching its row number " + d[0];
                      p.fix = backup_fix();
                    }};
    c["title"] = {"title", false, [](const std::string& id, const std::vector<std::string>& d, Problem& p) {
                    p.message = id + "'s title must be one line of 3–200 characters (it has " + d[0] + ")";
                    p.fix = call("tasks.update", {{"id", id}, {"title", "<a clear one-line title>"}});
                  }};
    c["description"] = {"description", false, [](const std::string& id, const std::vector<std::string>& d, Problem& p) {
                          p.message = id + "'s description has " + d[0] + " characters; at most 2000 are allowed";
                          p.fix = call("tasks.update", {{"id", id}, {"description", "<a shorter description>"}});
                        }};
    c["title-equals-description"] = {"title-equals-description", false,
                                     [](const std::string& id, const std::vector<std::string>&, Problem& p) {
                                       p.message = id + "'s description repeats its title; it must say more";
                                       p.fix = call("tasks.update", {{"id", id}, {"description", "<what the work involves>"}});
                                     }};
    c["completed-at"] = {"completed-at", true, [](const std::string& id, const std::vector<std::string>& d, Problem& p) {
                           bool missing = d[1] == "1";
                           p.message = missing ? id + " is done but has no completedAt" : id + " is " + d[0] + " but carries a completedAt";
                           p.fix = missing ? "set completedAt to the task's updatedAt" : "clear completedAt";
                         }};
    c["cancelled-at"] = {"cancelled-at", true, [](const std::string& id, const std::vector<std::string>& d, Problem& p) {
                           bool missing = d[1] == "1";
                           p.message = missing ? id + " is cancelled but has no cancelledAt" : id + " is " + d[0] + " but carries a cancelledAt";
                           p.fix = missing ? "set cancelledAt to the task's updatedAt" : "clear cancelledAt";
                         }};
    c["timestamp-order"] = {"timestamp-order", false, [](const std::string& id, const std::vector<std::string>& d, Problem& p) {
                              p.message = id + "'s " + d[0] + " is earlier than its createdAt";
                              p.fix = call("tasks.history", {{"id", id}}) + " shows who wrote it; " + backup_fix();
                            }};
    c["future-timestamp"] = {"future-timestamp", false, [](const std::string& id, const std::vector<std::string>& d, Problem& p) {
                               p.message = id + "'s " + d[0] + " lies in the future";
                               p.fix = "check the clock of the machine that wrote it; " + backup_fix();
                             }};
    c["archived-open"] = {"archived-open", false, [](const std::string& id, const std::vector<std::string>& d, Problem& p) {
                            p.message = id + " is archived while " + d[0] + "; only done or cancelled tasks are archived";
                            p.fix = call("tasks.restore", {{"id", id}});
                          }};
    c["archived-at"] = {"archived-at", true, [](const std::string& id, const std::vector<std::string>& d, Problem& p) {
                          bool missing = d[0] == "1";
                          p.message = missing ? id + " is archived but has no archivedAt" : id + " is not archived but carries an archivedAt";
                          p.fix = missing ? "set archivedAt to the task's updatedAt" : "clear archivedAt and archiveReason";
                        }};
    c["archived-modified"] = {"archived-modified", false, [](const std::string& id, const std::vector<std::string>&, Problem& p) {
                                p.message = id + " was changed after it was archived (archived tasks are read-only)";
                                p.fix = call("tasks.history", {{"id", id}}) + " shows the change; validate.audit checks the trail";
                              }};
    c["search-index"] = {"search-index", true, [](const std::string& id, const std::vector<std::string>&, Problem& p) {
                           p.message = id + " is missing from the search index (tasks.find cannot see it)";
                           p.fix = "add the missing tasks to the search index";
                         }};
    return c;
  }();
  return checks;
}

}  // namespace

bool Validator::task_order(const std::string& a, const std::string& b) {
  if (a.size() != b.size()) return a.size() < b.size();
  return a < b;
}

const std::vector<std::string_view>& Validator::checks() {
  static const std::vector<std::string_view> kChecks = {
      "integrity", "foreign-key", "task-id", "id-counter", "invalid-value", "malformed-list", "title",
      "description", "title-equals-description", "completed-at", "cancelled-at", "timestamp-order",
      "future-timestamp", "archived-open", "archived-at", "archived-modified", "missing-parent", "parent-cycle",
      "depth", "epic-parent", "subtask-root", "subtask-children", "sibling-limit", "missing-dependency",
      "dependency-cycle", "dependency-edges", "search-index", "memory-total", "focus-missing-task", "focus-missing-session",
      "focus-ended-session", "focus-not-active", "one-claim-per-task", "one-active-task-per-session",
      "session-status", "session-ended-at", "session-limit", "trail"};
  return kChecks;
}

void Validator::record(std::string id, std::string field, json::Value before, json::Value after,
                       std::int64_t version) {
  FieldChange change{std::move(id), std::move(field), std::move(before), std::move(after), version};
  recorded_.push_back(change);
  if (sink_) sink_(std::move(change));
}

Result<std::vector<DiagnosticRow>> Validator::rows(ScanKind kind, ScanScope scope) { return store_.scan(kind, scope); }

Result<void> Validator::run_task_checks(const std::string& id, std::vector<Problem>& out) {
  const bool one = !id.empty();
  CT_TRY_ASSIGN(std::vector<DiagnosticRow> broken, rows(ScanKind::TaskRules, {id, now_ + kFutureSlackMs}));
  for (const auto& row : broken) {
    auto found = task_rule_checks().find(row.size() >= 2 ? std::string_view(row[1]) : std::string_view());
    if (found == task_rule_checks().end())
      return fail(ErrorCode::Internal, "the store reported an unknown task rule '" + (row.size() >= 2 ? row[1] : "") + "'");
    const TaskRuleCheck& check = found->second;
    Problem problem;
    problem.check = check.check;
    problem.task_id = row[0];
    problem.repairable = check.repairable;
    check.describe(row[0], std::vector<std::string>(row.begin() + 2, row.end()), problem);
    out.push_back(std::move(problem));
  }
  for (const auto& check : row_checks()) {
    if (one && !check.per_task) continue;
    CT_TRY_ASSIGN(std::vector<DiagnosticRow> found, rows(check.scan, {id}));
    for (const auto& row : found) {
      Problem problem;
      problem.check = check.check;
      problem.task_id = row[0];
      problem.repairable = check.repairable;
      check.describe(row, problem);
      out.push_back(std::move(problem));
    }
  }
  return {};
}

Result<std::vector<TrailState::Difference>> Validator::trail_differences() {
  TrailState state;
  AuditQuery query;
  query.ascending = true;
  query.limit = 1000;
  std::int64_t last = 0;
  for (;;) {
    CT_TRY_ASSIGN(std::vector<AuditEntry> batch, audit_.read_audit(query));
    for (const auto& row : batch) state.take(row);
    if (!batch.empty()) last = batch.back().seq;
    if (static_cast<std::int64_t>(batch.size()) < query.limit) break;
    query.after_seq = batch.back().seq;
  }
  // What this call changed is in its own row, appended when it commits.
  if (!recorded_.empty()) {
    AuditEntry mine;
    mine.seq = last + 1;
    mine.at = now_;
    mine.changes = recorded_;
    state.take(mine);
  }
  std::int64_t checked = 0;
  return state.compare(tasks_, checked);
}

Result<void> Validator::run_store_checks(bool quick, std::vector<Problem>& out) {
  // The tasks as the audit trail last changed them: a row of the tasks table edited, inserted or
  // deleted outside ct reads otherwise (engines/rules/trail_state.h).
  CT_TRY_ASSIGN(std::vector<TrailState::Difference> differences, trail_differences());
  for (const auto& d : differences) {
    std::string what;
    if (d.field != "task")
      what = d.id + "." + d.field + " is " + d.stored.dump() + " but the audit trail's last change of it (row " +
             std::to_string(d.seq) + ") says " + d.trail.dump();
    else if (d.trail.is_null())
      what = d.id + " is stored, but no row of the audit trail made it";
    else
      what = d.id + (d.stored.is_null() ? " is gone, but the audit trail never deleted it" : " is stored, but the audit trail deleted it");
    out.push_back({"trail", d.id, "", clip(what, 400) + ": the store was changed outside ct", true,
                   "write what is stored into the audit trail, as validate.fix's change (so who accepted the hand "
                   "edit shows); a restore of a backup undoes the edit instead"});
  }

  CT_TRY_ASSIGN(std::vector<DiagnosticRow> integrity, rows(quick ? ScanKind::IntegrityQuick : ScanKind::IntegrityFull));
  for (const auto& row : integrity) {
    out.push_back({"integrity", "", "", std::string(quick ? "quick" : "full") + " integrity check: " + row[0], false,
                   backup_fix()});
  }
  CT_TRY_ASSIGN(std::vector<DiagnosticRow> keys, rows(ScanKind::ForeignKeys));
  for (const auto& row : keys) {
    out.push_back({"foreign-key", "", "",
                   "row " + row[1] + " of " + row[0] + " points at a missing row of " + row[2], false,
                   call("validate.audit") + " tells whether the audit trail was cut; " + backup_fix()});
  }
  std::int64_t max_siblings = config_.get_int("hierarchy.maxSiblings");
  if (max_siblings > 0) {
    CT_TRY_ASSIGN(std::vector<DiagnosticRow> crowded,
                  rows(ScanKind::CrowdedParents, {"", max_siblings}));
    for (const auto& row : crowded) {
      out.push_back({"sibling-limit", row[0], "",
                     row[0] + " has " + row[1] + " open children; hierarchy.maxSiblings is " + std::to_string(max_siblings),
                     false, "group some of them under a new parent (tasks.reparent), or raise hierarchy.maxSiblings"});
    }
  }
  std::int64_t max_sessions = config_.get_int("session.maxConcurrent");
  if (max_sessions > 0) {
    CT_TRY_ASSIGN(std::vector<DiagnosticRow> active, rows(ScanKind::ActiveSessions));
    std::int64_t count = active.empty() ? 0 : std::stoll(active[0][0]);
    if (count > max_sessions) {
      out.push_back({"session-limit", "", "",
                     std::to_string(count) + " sessions are active; session.maxConcurrent is " + std::to_string(max_sessions),
                     false, call("session.gc", {}) + " ends idle ones; or, to allow more, " +
                                config_set_fix("session.maxConcurrent", json::Value(2 * max_sessions))});
    }
  }
  return {};
}

// Parent graph: missing parents, loops, depth, type rules. The whole store is read in one query;
// for one task only its ancestors (one recursive query) and its number of live children.
Result<std::vector<Problem>> Validator::schema(bool quick) {
  CT_TRY_ASSIGN(std::vector<Problem> problems, find_problems(quick));
  offer_fix_call(problems);
  return problems;
}

Result<std::vector<Problem>> Validator::find_problems(bool quick) {
  std::vector<Problem> problems;
  CT_TRY(run_store_checks(quick, problems));
  CT_TRY(run_task_checks("", problems));
  CT_TRY(check_parents("", problems));
  CT_TRY(check_cycles("", problems));
  const auto& names = checks();
  auto rank = [&](const std::string& check) {
    return std::find(names.begin(), names.end(), check) - names.begin();
  };
  std::stable_sort(problems.begin(), problems.end(), [&](const Problem& a, const Problem& b) {
    if (a.check != b.check) return rank(a.check) < rank(b.check);
    return task_order(a.task_id, b.task_id);
  });
  return problems;
}

Result<std::vector<Problem>> Validator::task(const std::string& id) {
  CT_TRY_ASSIGN(std::vector<DiagnosticRow> exists, rows(ScanKind::TaskExists, {id}));
  if (exists.empty()) {
    return fail(Error(ErrorCode::NotFound, "Task " + id + " not found")
                    .with_fix(call("tasks.find", {{"query", id}}))
                    .with_detail("id", id));
  }
  std::vector<Problem> problems;
  CT_TRY(run_task_checks(id, problems));
  CT_TRY(check_parents(id, problems));
  CT_TRY(check_cycles(id, problems));
  const auto& names = checks();
  std::stable_sort(problems.begin(), problems.end(), [&](const Problem& a, const Problem& b) {
    return std::find(names.begin(), names.end(), a.check) < std::find(names.begin(), names.end(), b.check);
  });
  offer_fix_call(problems);
  return problems;
}

}  // namespace ct
