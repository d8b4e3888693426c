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
  static const std::vector<RowCheck> checks = [] {
    std::vector<RowCheck> c;
    c.push_back({"missing-dependency", true, true,
                 ScanKind::MissingDependency,
                 [](const DiagnosticRow& r, Problem& p) {
                   p.message = r[0] + " depends on " + r[1] + ", which does not exist";
                   p.fix = "remove " + r[1] + " from " + r[0] + "'s depends";
                 }});
    c.push_back({"dependency-edges", true, true,
                 ScanKind::DependencyEdges,
                 [](const DiagnosticRow& r, Problem& p) {
                   p.message = r[2] == "extra" ? "the dependency index says " + r[0] + " depends on " + r[1] +
                                                     ", but its depends list does not"
                                               : r[0] + "'s dependency on " + r[1] + " is missing from the dependency index";
                   p.fix = "rebuild the dependency index from the depends lists";
                 }});
    c.push_back({"search-index", true, false,
                 ScanKind::OrphanSearchRows,
                 [](const DiagnosticRow& r, Problem& p) {
                   p.message = "search index row " + r[1] + " belongs to no task";
                   p.fix = "drop search index rows of missing tasks";
                 }});
    c.push_back({"focus-missing-task", true, true,
                 ScanKind::FocusMissingTask,
                 [](const DiagnosticRow& r, Problem& p) {
                   p.session = r[1];
                   p.message = (r[1].empty() ? std::string("the focus outside sessions") : "session " + r[1]) +
                               " focuses " + r[0] + ", which does not exist";
                   p.fix = "clear the focus";
                 }});
    c.push_back({"focus-missing-session", true, true,
                 ScanKind::FocusMissingSession,
                 [](const DiagnosticRow& r, Problem& p) {
                   p.session = r[1];
                   p.message = r[0] + " is claimed by session " + r[1] + ", which does not exist";
                   p.fix = "release the claim (an active task goes back to pending)";
                 }});
    c.push_back({"focus-ended-session", true, true,
                 ScanKind::FocusEndedSession,
                 [](const DiagnosticRow& r, Problem& p) {
                   p.session = r[1];
                   p.message = r[0] + " is still claimed by session " + r[1] + ", which is " + r[2];
                   p.fix = "release the claim (an active task goes back to pending)";
                 }});
    c.push_back({"focus-not-active", true, true,
                 ScanKind::FocusNotActive,
                 [](const DiagnosticRow& r, Problem& p) {
                   p.session = r[1];
                   p.message = r[0] + " is focused by " +
                               (r[1].empty() ? std::string("work outside sessions") : "session " + r[1]) +
                               " but is " + (r[3] != "0" ? "archived" : r[2]) + ", not active";
                   p.fix = "clear the focus";
                 }});
    c.push_back({"one-claim-per-task", false, true,
                 ScanKind::SharedClaims,
                 [](const DiagnosticRow& r, Problem& p) {
                   p.message = r[0] + " is claimed by several sessions at once: " + r[1];
                   p.fix = "end all but one of them: " + call("session.end", {{"id", "…"}});
                 }});
    c.push_back({"one-active-task-per-session", false, false,
                 ScanKind::SessionsWithSeveralTasks,
                 [](const DiagnosticRow& r, Problem& p) {
                   p.session = r[1];
                   p.message = (r[1].empty() ? std::string("work outside sessions") : "session " + r[1]) +
                               " focuses several tasks at once: " + r[2];
                   p.fix = "stop all but one: " + call("tasks.stop", {}) +
                           " in that session, then start the one it works on";
                 }});
    c.push_back({"id-counter", true, false,
                 ScanKind::IdCounter,
                 [](const DiagnosticRow& r, Problem& p) {
                   p.message = "the next task id counter (" + r[1] + ") is not ahead of the largest id in use (" +
                               format_task_id(std::stoll(r[2])) + "): new tasks would collide";
                   p.fix = "raise the counter past the largest id";
                 }});
    c.push_back({"session-status", false, false,
                 ScanKind::SessionStatus,
                 [](const DiagnosticRow& r, Problem& p) {
                   p.session = r[1];
                   p.message = "session " + r[1] + " has status '" + r[2] + "', which is not a session status";
                   p.fix = backup_fix();
                 }});
    c.push_back({"session-ended-at", true, false,
                 ScanKind::SessionEndedAt,
                 [](const DiagnosticRow& r, Problem& p) {
                   p.session = r[1];
                   bool finished = r[2] == "ended" || r[2] == "closed";
                   p.message = "session " + r[1] + " is " + r[2] + (finished ? " but has no endedAt" : " but carries an endedAt");
                   p.fix = finished ? "set endedAt to the session's updatedAt" : "clear endedAt";
                 }});
    return c;
  }();
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

/// Numeric order of task ids ("T0999" < "T1000"), others after.
bool task_order(const std::string& a, const std::string& b) {
  if (a.size() != b.size()) return a.size() < b.size();
  return a < b;
}

}  // namespace

const std::vector<std::string_view>& Validator::checks() {
  static const std::vector<std::string_view> kChecks = {
      "integrity", "foreign-key", "task-id", "id-counter", "invalid-value", "malformed-list", "title",
      "description", "title-equals-description", "completed-at", "cancelled-at", "timestamp-order",
      "future-timestamp", "archived-open", "archived-at", "archived-modified", "missing-parent", "parent-cycle",
      "depth", "epic-parent", "subtask-root", "subtask-children", "sibling-limit", "missing-dependency",
      "dependency-cycle", "dependency-edges", "search-index", "focus-missing-task", "focus-missing-session",
      "focus-ended-session", "focus-not-active", "one-claim-per-task", "one-active-task-per-session",
      "session-status", "session-ended-at", "session-limit", "trail"};
  return kChecks;
}

void Validator::record(std::string id, std::string field, json::Value before, json::Value after) {
  FieldChange change{std::move(id), std::move(field), std::move(before), std::move(after)};
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
                     false, call("session.gc", {}) + " ends idle ones; or raise session.maxConcurrent"});
    }
  }
  return {};
}

// Parent graph: missing parents, loops, depth, type rules. The whole store is read in one query;
// for one task only its ancestors (one recursive query) and its number of live children.
Result<void> Validator::check_parents(const std::string& id, std::vector<Problem>& out) {
  // Nodes by index; parent[i] = index of the parent, -1 for a root, -2 when the parent is missing.
  std::vector<DiagnosticRow> rows_read;
  std::int64_t target_children = 0;
  if (id.empty()) {
    CT_TRY_ASSIGN(rows_read, rows(ScanKind::ParentRows));
  } else {
    CT_TRY_ASSIGN(rows_read, rows(ScanKind::ParentRows, {id}));
    CT_TRY_ASSIGN(std::vector<DiagnosticRow> children, rows(ScanKind::LiveChildren, {id}));
    target_children = children.empty() ? 0 : std::stoll(children[0][0]);
  }
  std::unordered_map<std::string_view, int> index;
  index.reserve(rows_read.size());
  for (const auto& row : rows_read) index.emplace(row[0], static_cast<int>(index.size()));
  std::vector<const DiagnosticRow*> node(index.size());
  for (const auto& row : rows_read) node[static_cast<std::size_t>(index.at(row[0]))] = &row;
  const std::size_t n = node.size();
  std::vector<int> parent(n, -1);
  std::vector<std::int64_t> live_children(n, 0);
  for (std::size_t i = 0; i < n; ++i) {
    const std::string& up = (*node[i])[1];
    if (up.empty()) continue;
    auto found = index.find(up);
    parent[i] = found == index.end() ? -2 : found->second;
    if (found != index.end() && (*node[i])[3] == "0") ++live_children[static_cast<std::size_t>(found->second)];
  }
  if (!id.empty()) live_children[static_cast<std::size_t>(index.at(id))] = target_children;

  const std::int64_t max_depth = config_.get_int("hierarchy.maxDepth");
  constexpr std::int64_t kUnknown = -1, kWalking = -2, kUnknowable = -3;
  std::vector<std::int64_t> depth(n, kUnknown);
  std::vector<int> path;
  auto report = [&](std::size_t i) { return id.empty() || (*node[i])[0] == id; };
  for (std::size_t i = 0; i < n; ++i) {
    const std::string& task_id = (*node[i])[0];
    const std::string& parent_id = (*node[i])[1];
    const std::string& type = (*node[i])[2];
    if (report(i)) {
      if (parent[i] == -2)
        out.push_back({"missing-parent", task_id, "", task_id + "'s parent " + parent_id + " does not exist", false,
                       call("tasks.promote", {{"id", task_id}}) + " makes it a top-level task"});
      if (type == "epic" && !parent_id.empty())
        out.push_back({"epic-parent", task_id, "", task_id + " is an epic but has parent " + parent_id, false,
                       call("tasks.promote", {{"id", task_id}}) + ", or change its type"});
      if (type == "subtask" && parent_id.empty())
        out.push_back({"subtask-root", task_id, "", task_id + " is a subtask without a parent", true,
                       "make it a task (what a subtask becomes when its parent goes away)"});
      if (type == "subtask" && live_children[i] > 0)
        out.push_back({"subtask-children", task_id, "",
                       task_id + " is a subtask but has " + std::to_string(live_children[i]) + " children", false,
                       call("tasks.update", {{"id", task_id}, {"type", "task"}})});
    }
    // Depth: walk up to a known depth, a root, a missing parent or a loop; then fill the path in.
    path.clear();
    int at = static_cast<int>(i);
    std::int64_t base = kUnknowable;
    while (true) {
      auto uat = static_cast<std::size_t>(at);
      if (depth[uat] == kWalking) {  // a loop: report it once, from its smallest member
        auto start = std::find(path.begin(), path.end(), at);
        std::vector<std::string> loop;
        for (auto it = start; it != path.end(); ++it) loop.push_back((*node[static_cast<std::size_t>(*it)])[0]);
        std::string first = *std::min_element(loop.begin(), loop.end(), task_order);
        if (id.empty() || std::find(loop.begin(), loop.end(), id) != loop.end()) {
          std::string chain;
          for (const auto& member : loop) chain += member + " → ";
          out.push_back({"parent-cycle", first, "", "parent chain loops: " + chain + loop.front(), false,
                         call("tasks.promote", {{"id", first}}) + " breaks the loop"});
        }
        break;
      }
      if (depth[uat] != kUnknown) {
        base = depth[uat];  // known, or kUnknowable
        break;
      }
      depth[uat] = kWalking;
      path.push_back(at);
      if (parent[uat] == -1) {
        base = -1;  // the root gets depth 0 below
        break;
      }
      if (parent[uat] == -2) break;  // a missing parent (reported above): depth unknowable
      at = parent[uat];
    }
    for (std::size_t k = path.size(); k-- > 0;) {
      auto uk = static_cast<std::size_t>(path[k]);
      depth[uk] = base == kUnknowable ? kUnknowable : base + static_cast<std::int64_t>(path.size() - k);
    }
    if (report(i) && depth[i] >= max_depth) {
      out.push_back({"depth", task_id, "",
                     task_id + " sits at level " + std::to_string(depth[i] + 1) + "; hierarchy.maxDepth is " +
                         std::to_string(max_depth),
                     false, "move it higher: " + call("tasks.reparent", {{"id", task_id}, {"parent", "…"}})});
    }
  }
  return {};
}

// Dependency cycles: Tarjan's strongly connected components over every stored depends edge (one
// query); for one task, whether it can reach itself (one recursive query).
Result<void> Validator::check_cycles(const std::string& id, std::vector<Problem>& out) {
  if (!id.empty()) {
    CT_TRY_ASSIGN(std::vector<DiagnosticRow> loop, rows(ScanKind::SelfReachable, {id}));
    if (!loop.empty()) {
      out.push_back({"dependency-cycle", id, "", id + " depends on itself through its dependencies", false,
                     call("tasks.deps", {{"id", id}}) +
                         " shows the chain; remove one link with tasks.update {depends, mode:'replace'}"});
    }
    return {};
  }
  CT_TRY_ASSIGN(std::vector<DiagnosticRow> edges, rows(ScanKind::DependencyRows));
  std::unordered_map<std::string, int> index;
  std::vector<std::string> names;
  auto node = [&](const std::string& name) {
    auto [it, added] = index.emplace(name, static_cast<int>(names.size()));
    if (added) names.push_back(name);
    return it->second;
  };
  std::vector<std::vector<int>> next;
  for (const auto& edge : edges) {
    int from = node(edge[0]);
    int to = node(edge[1]);
    next.resize(names.size());
    next[static_cast<std::size_t>(from)].push_back(to);
  }
  const std::size_t n = names.size();
  next.resize(n);
  // Iterative Tarjan.
  std::vector<int> order(n, -1), low(n, 0), component(n, -1);
  std::vector<bool> on_stack(n, false);
  std::vector<int> stack;
  int counter = 0, components = 0;
  for (std::size_t root = 0; root < n; ++root) {
    if (order[root] >= 0) continue;
    std::vector<std::pair<int, std::size_t>> work{{static_cast<int>(root), 0}};
    while (!work.empty()) {
      auto& [v, edge_index] = work.back();
      auto uv = static_cast<std::size_t>(v);
      if (edge_index == 0 && order[uv] < 0) {
        order[uv] = low[uv] = counter++;
        stack.push_back(v);
        on_stack[uv] = true;
      }
      if (edge_index < next[uv].size()) {
        int w = next[uv][edge_index++];
        auto uw = static_cast<std::size_t>(w);
        if (order[uw] < 0) {
          work.push_back({w, 0});
        } else if (on_stack[uw]) {
          low[uv] = std::min(low[uv], order[uw]);
        }
        continue;
      }
      if (low[uv] == order[uv]) {
        while (true) {
          int w = stack.back();
          stack.pop_back();
          on_stack[static_cast<std::size_t>(w)] = false;
          component[static_cast<std::size_t>(w)] = components;
          if (w == v) break;
        }
        ++components;
      }
      int finished = v;
      work.pop_back();
      if (!work.empty()) {
        auto parent = static_cast<std::size_t>(work.back().first);
        low[parent] = std::min(low[parent], low[static_cast<std::size_t>(finished)]);
      }
    }
  }
  // One problem per cycle group: its smallest task and one concrete loop through it.
  std::map<int, std::vector<int>> members;
  for (std::size_t v = 0; v < n; ++v) members[component[v]].push_back(static_cast<int>(v));
  for (auto& [group, list] : members) {
    bool self_loop = list.size() == 1 && std::find(next[static_cast<std::size_t>(list[0])].begin(),
                                                   next[static_cast<std::size_t>(list[0])].end(),
                                                   list[0]) != next[static_cast<std::size_t>(list[0])].end();
    if (list.size() < 2 && !self_loop) continue;
    int first = *std::min_element(list.begin(), list.end(), [&](int a, int b) {
      return task_order(names[static_cast<std::size_t>(a)], names[static_cast<std::size_t>(b)]);
    });
    // Breadth-first inside the group from `first` back to itself.
    std::unordered_map<int, int> came_from;
    std::vector<int> frontier{first};
    int closing = -1;
    for (std::size_t i = 0; i < frontier.size() && closing < 0; ++i) {
      int v = frontier[i];
      for (int w : next[static_cast<std::size_t>(v)]) {
        if (component[static_cast<std::size_t>(w)] != group) continue;
        if (w == first) {
          closing = v;
          break;
        }
        if (came_from.emplace(w, v).second) frontier.push_back(w);
      }
    }
    std::vector<std::string> loop;
    for (int v = closing; v != first && v >= 0; v = came_from.at(v)) loop.push_back(names[static_cast<std::size_t>(v)]);
    loop.push_back(names[static_cast<std::size_t>(first)]);
    std::reverse(loop.begin(), loop.end());
    std::string chain;
    for (const auto& step : loop) chain += step + " → ";
    chain += names[static_cast<std::size_t>(first)];
    // The link that closes the loop: `last` keeps its other dependencies.
    const std::string& last = loop.back();
    json::Value kept = json::Value::array();
    for (int w : next[static_cast<std::size_t>(closing)])
      if (w != first) kept.push_back(names[static_cast<std::size_t>(w)]);
    out.push_back({"dependency-cycle", names[static_cast<std::size_t>(first)], "", "dependency cycle: " + chain, false,
                   "remove one link, e.g. " +
                       call("tasks.update", {{"id", last}, {"depends", std::move(kept)}, {"mode", "replace"}})});
  }
  return {};
}

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

// Repairs of one task row, all at once: timestamps that contradict the status, dangling
// dependencies, a parentless subtask. updatedAt is kept (a repair is not work on the task; an
// archived task must not look modified), the row version moves on.
Result<void> Validator::repair_task(const std::string& id, std::vector<Repair>& repairs) {
  CT_TRY_ASSIGN(std::optional<Task> found, tasks_.get_task(id));
  if (!found) return {};
  const Task before = *found;
  Task after = before;
  auto note = [&](std::string check, std::string action) { repairs.push_back({std::move(check), id, "", std::move(action)}); };
  if (after.status == TaskStatus::Done && !after.completed_at) {
    after.completed_at = after.updated_at;
    note("completed-at", "set completedAt to its updatedAt");
  }
  if ((after.status == TaskStatus::Pending || after.status == TaskStatus::Active || after.status == TaskStatus::Blocked) &&
      after.completed_at) {
    after.completed_at.reset();
    note("completed-at", "cleared completedAt");
  }
  if (after.status == TaskStatus::Cancelled && !after.cancelled_at) {
    after.cancelled_at = after.updated_at;
    note("cancelled-at", "set cancelledAt to its updatedAt");
  }
  if (after.status != TaskStatus::Cancelled && after.cancelled_at) {
    after.cancelled_at.reset();
    note("cancelled-at", "cleared cancelledAt");
  }
  if (after.archived && !after.archived_at) {
    after.archived_at = after.updated_at;
    note("archived-at", "set archivedAt to its updatedAt");
  }
  if (!after.archived && after.archived_at) {
    after.archived_at.reset();
    after.archive_reason.clear();
    note("archived-at", "cleared archivedAt");
  }
  std::vector<std::string> kept;
  for (const auto& dependency : after.depends) {
    CT_TRY_ASSIGN(std::optional<Task> target, tasks_.get_task(dependency));
    if (target) {
      kept.push_back(dependency);
    } else {
      note("missing-dependency", "removed " + dependency + " from depends");
    }
  }
  after.depends = std::move(kept);
  if (after.type == TaskType::Subtask && after.parent.empty()) {
    after.type = TaskType::Task;
    note("subtask-root", "made it a task");
  }
  bool changed = false;
  for (auto field : task_fields()) {
    json::Value old_value = task_field(before, field);
    json::Value new_value = task_field(after, field);
    if (old_value == new_value) continue;
    changed = true;
    record(id, std::string(field), std::move(old_value), std::move(new_value));
  }
  if (!changed) return {};
  after.version = before.version + 1;
  return tasks_.update_task(after);
}

Result<FixReport> Validator::fix(bool dry_run) {
  CT_TRY_ASSIGN(std::vector<Problem> problems, find_problems(false));
  FixReport report;
  if (dry_run) {
    for (auto& problem : problems) {
      if (!problem.repairable) {
        report.remaining.push_back(std::move(problem));
        continue;
      }
      // A repair's fix is the words of what it does.
      report.repairs.push_back({problem.check, problem.task_id, problem.session, problem.fix.plain_text()});
    }
    return report;
  }

  // What was changed outside ct is written into the trail first (the store's value as the after
  // of a change from the trail's), so that the repairs below chain from it.
  std::vector<Repair> adopted;  // reported after the others
  if (std::any_of(problems.begin(), problems.end(), [](const Problem& p) { return p.check == "trail"; })) {
    CT_TRY_ASSIGN(std::vector<TrailState::Difference> differences, trail_differences());
    for (const auto& d : differences) {
      std::string action;
      if (d.field != "task") {
        record(d.id, d.field, d.trail, d.stored);
        action = "recorded the stored " + d.field + " in the trail";
      } else if (d.stored.is_null()) {
        record(d.id, "deleted", json::Value(), json::Value());
        action = "recorded its deletion in the trail";
      } else {
        CT_TRY_ASSIGN(std::optional<Task> task, tasks_.get_task(d.id));
        if (task) record(d.id, "created", json::Value(), task_created(*task));
        action = "recorded it in the trail as created";
      }
      adopted.push_back({"trail", d.id, "", std::move(action)});
    }
  }

  std::vector<std::string> task_rows;  // in report order, each once
  std::vector<std::pair<std::string, std::string>> sessions_to_release;  // session, check
  std::vector<std::string> sessions_to_fix;
  bool derived = false;
  for (const auto& problem : problems) {
    if (!problem.repairable) continue;
    const std::string& check = problem.check;
    if (check == "completed-at" || check == "cancelled-at" || check == "archived-at" ||
        check == "missing-dependency" || check == "subtask-root") {
      if (std::find(task_rows.begin(), task_rows.end(), problem.task_id) == task_rows.end())
        task_rows.push_back(problem.task_id);
    } else if (check == "dependency-edges" || check == "search-index" || check == "id-counter") {
      derived = true;
    } else if (check.starts_with("focus-")) {
      if (std::none_of(sessions_to_release.begin(), sessions_to_release.end(),
                       [&](const auto& item) { return item.first == problem.session; }))
        sessions_to_release.emplace_back(problem.session, check);
    } else if (check == "session-ended-at") {
      sessions_to_fix.push_back(problem.session);
    }
  }

  for (const auto& id : task_rows) {
    auto repaired = repair_task(id, report.repairs);
    // A row that cannot be read (a corrupt column) stays as it is and shows up as remaining.
    if (!repaired && repaired.error().code != ErrorCode::FileError) return std::unexpected(std::move(repaired.error()));
  }
  if (derived) {
    CT_TRY_ASSIGN(DerivedRepair repair, store_.rebuild_derived());
    auto count = [](std::int64_t n, std::string_view what) { return std::to_string(n) + " " + std::string(what); };
    if (repair.edges_removed > 0 || repair.edges_added > 0) {
      record("", "dependencyIndex", json::Value(repair.edges_removed), json::Value(repair.edges_added));
      report.repairs.push_back({"dependency-edges", "", "",
                                "rebuilt the dependency index: " + count(repair.edges_removed, "stale edges removed, ") +
                                    count(repair.edges_added, "missing edges added")});
    }
    if (repair.index_removed > 0 || repair.index_added > 0) {
      record("", "searchIndex", json::Value(repair.index_removed), json::Value(repair.index_added));
      report.repairs.push_back({"search-index", "", "",
                                "search index: " + count(repair.index_removed, "stale rows removed, ") +
                                    count(repair.index_added, "tasks added")});
    }
    if (repair.counter_raised) {
      record("", "nextTaskId", json::Value(), json::Value(true));
      report.repairs.push_back({"id-counter", "", "", "raised the task id counter past the largest id"});
    }
  }
  for (const auto& [session, check] : sessions_to_release) {
    // What ending a session does: the claim goes, an active task goes back to pending.
    TaskEngine tasks({tasks_, audit_}, config_, now_, session,
                     [this](FieldChange change) { record(std::move(change.task_id), std::move(change.field), std::move(change.before), std::move(change.after)); });
    CT_TRY_ASSIGN(std::optional<std::string> focus, tasks_.get_focus(session));
    CT_TRY(tasks.stop());
    report.repairs.push_back({check, focus.value_or(""), session,
                              "released " + focus.value_or("the focus") + " from " +
                                  (session.empty() ? std::string("work outside sessions") : "session " + session)});
  }
  for (const auto& id : sessions_to_fix) {
    CT_TRY_ASSIGN(std::optional<Session> session, sessions_.get_session(id));
    if (!session) continue;
    Session after = *session;
    bool finished = after.status == SessionStatus::Ended || after.status == SessionStatus::Closed;
    if (finished) {
      after.ended_at = after.updated_at;
    } else {
      after.ended_at.reset();
    }
    record(id, "endedAt", session->ended_at ? json::Value(format_iso8601(*session->ended_at)) : json::Value(),
           after.ended_at ? json::Value(format_iso8601(*after.ended_at)) : json::Value());
    CT_TRY(sessions_.update_session(after));
    report.repairs.push_back({"session-ended-at", "", id, finished ? "set endedAt to its updatedAt" : "cleared endedAt"});
  }
  report.repairs.insert(report.repairs.end(), adopted.begin(), adopted.end());
  CT_TRY_ASSIGN(report.remaining, schema(false));
  return report;
}

}  // namespace ct
