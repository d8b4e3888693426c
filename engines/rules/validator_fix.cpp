// The Validator's repairs (engines/rules/validator.h, validate.fix): what schema() finds that is
// safely repairable — a task row's timestamps, dangling dependencies, a parentless subtask, the
// derived tables, claims of sessions that are gone, sessions' endedAt, and what was changed
// outside ct written into the trail — each change recorded for the call's audit row.
#include <algorithm>

#include "engines/rules/validator.h"
#include "engines/store/task_json.h"

namespace ct {
namespace {

/// What validate.fix repairs, by the kind of repair: task rows (each once, in report order), the
/// derived tables, claims to release and sessions' endedAt.
struct RepairPlan {
  std::vector<std::string> task_rows;
  std::vector<std::pair<std::string, std::string>> sessions_to_release;  // session, check
  std::vector<std::string> sessions_to_fix;
  bool derived = false;
};

RepairPlan plan_repairs(const std::vector<Problem>& problems) {
  RepairPlan plan;
  for (const auto& problem : problems) {
    if (!problem.repairable) continue;
    const std::string& check = problem.check;
    if (check == "completed-at" || check == "cancelled-at" || check == "archived-at" ||
        check == "missing-dependency" || check == "subtask-root") {
      if (std::find(plan.task_rows.begin(), plan.task_rows.end(), problem.task_id) == plan.task_rows.end())
        plan.task_rows.push_back(problem.task_id);
    } else if (check == "dependency-edges" || check == "search-index" || check == "id-counter" ||
               check == "memory-total") {
      plan.derived = true;
    } else if (check.starts_with("focus-")) {
      if (std::none_of(plan.sessions_to_release.begin(), plan.sessions_to_release.end(),
                       [&](const auto& item) { return item.first == problem.session; }))
        plan.sessions_to_release.emplace_back(problem.session, check);
    } else if (check == "session-ended-at") {
      plan.sessions_to_fix.push_back(problem.session);
    }
  }
  return plan;
}

}  // namespace

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
    record(id, std::string(field), std::move(old_value), std::move(new_value), before.version);
  }
  if (!changed) return {};
  after.version = before.version + 1;
  return tasks_.update_task(after);
}

// What was changed outside ct is written into the trail first (the store's value as the after of
// a change from the trail's), so that the repairs after it chain from it. Its repairs are
// reported after the others.
Result<std::vector<Repair>> Validator::adopt_trail(const std::vector<Problem>& problems) {
  std::vector<Repair> adopted;
  if (std::none_of(problems.begin(), problems.end(), [](const Problem& p) { return p.check == "trail"; }))
    return adopted;
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
  return adopted;
}

// The derived tables rebuilt from the tasks: the dependency index, the search index, the id counter;
// and memory's kept total of entries.
Result<void> Validator::rebuild_derived(std::vector<Repair>& repairs) {
  CT_TRY_ASSIGN(DerivedRepair repair, store_.rebuild_derived());
  auto count = [](std::int64_t n, std::string_view what) { return std::to_string(n) + " " + std::string(what); };
  if (repair.edges_removed > 0 || repair.edges_added > 0) {
    record("", "dependencyIndex", json::Value(repair.edges_removed), json::Value(repair.edges_added));
    repairs.push_back({"dependency-edges", "", "",
                       "rebuilt the dependency index: " + count(repair.edges_removed, "stale edges removed, ") +
                           count(repair.edges_added, "missing edges added")});
  }
  if (repair.index_removed > 0 || repair.index_added > 0) {
    record("", "searchIndex", json::Value(repair.index_removed), json::Value(repair.index_added));
    repairs.push_back({"search-index", "", "",
                       "search index: " + count(repair.index_removed, "stale rows removed, ") +
                           count(repair.index_added, "tasks added")});
  }
  if (repair.terms_added > 0) {
    record("", "searchTerms", json::Value(), json::Value(repair.terms_added));
    repairs.push_back({"search-index", "", "", "search index: " + count(repair.terms_added, "missing words listed")});
  }
  if (repair.counter_raised) {
    record("", "nextTaskId", json::Value(), json::Value(true));
    repairs.push_back({"id-counter", "", "", "raised the task id counter past the largest id"});
  }
  if (repair.memory_recounted) {
    record("", "memoryTotal", json::Value(), json::Value(true));
    repairs.push_back({"memory-total", "", "", "counted the memory entries again into their kept total"});
  }
  return {};
}

// What ending a session does: the claim goes, an active task goes back to pending.
Result<void> Validator::release_claim(const std::string& session, const std::string& check,
                                      std::vector<Repair>& repairs) {
  TaskEngine tasks({tasks_, audit_}, config_, now_, session,
                   [this](FieldChange change) {
                     record(std::move(change.task_id), std::move(change.field), std::move(change.before),
                            std::move(change.after), change.version);
                   });
  CT_TRY_ASSIGN(std::optional<std::string> focus, tasks_.get_focus(session));
  CT_TRY(tasks.stop());
  repairs.push_back({check, focus.value_or(""), session,
                     "released " + focus.value_or("the focus") + " from " +
                         (session.empty() ? std::string("work outside sessions") : "session " + session)});
  return {};
}

// A finished session gets its endedAt (its updatedAt); an open one loses the one it carries.
Result<void> Validator::repair_session_end(const std::string& id, std::vector<Repair>& repairs) {
  CT_TRY_ASSIGN(std::optional<Session> session, sessions_.get_session(id));
  if (!session) return {};
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
  repairs.push_back({"session-ended-at", "", id, finished ? "set endedAt to its updatedAt" : "cleared endedAt"});
  return {};
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
  CT_TRY_ASSIGN(std::vector<Repair> adopted, adopt_trail(problems));
  const RepairPlan plan = plan_repairs(problems);
  for (const auto& id : plan.task_rows) {
    auto repaired = repair_task(id, report.repairs);
    // A row that cannot be read (a corrupt column) stays as it is and shows up as remaining.
    if (!repaired && repaired.error().code != ErrorCode::FileError) return std::unexpected(std::move(repaired.error()));
  }
  if (plan.derived) CT_TRY(rebuild_derived(report.repairs));
  for (const auto& [session, check] : plan.sessions_to_release) CT_TRY(release_claim(session, check, report.repairs));
  for (const auto& id : plan.sessions_to_fix) CT_TRY(repair_session_end(id, report.repairs));
  report.repairs.insert(report.repairs.end(), adopted.begin(), adopted.end());
  CT_TRY_ASSIGN(report.remaining, schema(false));
  return report;
}

}  // namespace ct
