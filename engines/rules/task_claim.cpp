// TaskEngine's claims (engines/rules/task_engine.h): start (the atomic claim of a task for the
// session, taking over a lapsed one: engines/rules/claim_lease.h), stop, reclaim (a person frees a
// task) and the session's current focus.
#include <algorithm>

#include "engines/rules/claim_lease.h"
#include "engines/rules/task_engine.h"
#include "engines/rules/task_checks.h"

namespace ct {

using task_checks::is_open;

Result<void> TaskEngine::clear_focus_of(const std::string& id) {
  // Whichever session holds the task loses it: a finished task is nobody's claim any more.
  CT_TRY_ASSIGN(std::optional<Claim> claim, store_.claim_on(id));
  if (claim) {
    CT_TRY(store_.set_focus(claim->session, std::nullopt));
    record(id, "focus", id, json::Value());
  }
  return {};
}

Result<std::optional<Claim>> TaskEngine::reclaim(const std::string& id) {
  CT_TRY_ASSIGN(Task before, get_live(id));
  CT_TRY_ASSIGN(std::optional<Claim> claim, store_.claim_on(id));
  if (!claim) return claim;
  CT_TRY(store_.set_focus(claim->session, std::nullopt));
  record(id, "holder", claim->session, json::Value());
  if (before.status == TaskStatus::Active) {
    Task after = before;
    after.status = TaskStatus::Pending;
    CT_TRY(save(before, after));
  }
  return claim;
}

Result<StartResult> TaskEngine::start(const std::string& id) {
  CT_TRY_ASSIGN(Task before, get_live(id));
  StartResult result;
  if (!is_open(before.status)) {
    Error error(ErrorCode::TaskCompleted, "Task " + id + " is " + std::string(to_string(before.status)));
    error.fix = before.status == TaskStatus::Done
                    ? call("tasks.reopen", {{"id", id}})
                    : call("tasks.restore", {{"id", id}});
    return fail(std::move(error).with_detail("id", id));
  }
  std::vector<std::string> waiting;
  for (const auto& dep : before.depends) {
    CT_TRY_ASSIGN(std::optional<Task> upstream, store_.get_task(dep));
    if (upstream && is_open(upstream->status)) waiting.push_back(dep);
  }
  if (!waiting.empty()) {
    Error error(ErrorCode::Validation, "Task " + id + " waits on unfinished dependencies");
    error.fix = call("tasks.blockers", {{"id", id}});
    return fail(std::move(error).with_alternative("Pick a ready task", "tasks.next")
                    .with_detail("waitingOn", json::Value::array_of(waiting)));
  }
  // The atomic claim: inside this write transaction no other writer runs, so the holder read
  // here is still the holder when the focus row is written (and focus_task is unique anyway).
  CT_TRY_ASSIGN(std::optional<Claim> held, store_.claim_on(id));
  if (held && held->session != session_) {
    if (!lapsed(*held, config_, now_)) {
      const std::string& holder = held->session;
      std::string who = holder.empty() ? std::string("work outside any session") : "session " + holder;
      // When the holder shows no more life, the task is free (a person may free it sooner).
      const std::optional<TimeMs> end = lease_end(*held, config_);
      Error error(ErrorCode::TaskClaimed, "Task " + id + " is already claimed by " + who +
                                              (end ? " until " + format_iso8601(*end) : std::string()));
      error.fix = holder.empty() ? call("tasks.stop", {}) + " (without a session)" : call("session.show", {{"id", holder}});
      error = std::move(error).with_alternative("Pick another ready task", "tasks.next").with_detail("id", id)
          .with_detail("holder", holder);
      // The claim lapses when its lease ends: the same call may succeed then.
      if (end)
        error = std::move(error)
                    .with_detail("leaseEnds", format_iso8601(*end))
                    .retry_after(std::max<std::int64_t>(1, (*end - now_ + 999) / 1000));
      return fail(std::move(error));
    }
    // The lease ran out: the holder is gone or silent, and the task is taken over.
    CT_TRY(store_.set_focus(held->session, std::nullopt));
    record(id, "holder", held->session, session_);
    result.taken_over = std::move(held);
  }
  CT_TRY_ASSIGN(std::optional<std::string> focus, store_.get_focus(session_));
  if (focus && *focus == id && before.status == TaskStatus::Active) {
    result.task = std::move(before);
    result.no_change = true;
    return result;
  }
  if (focus && *focus != id) {
    CT_TRY_ASSIGN(std::optional<Task> previous, store_.get_task(*focus));
    if (previous && previous->status == TaskStatus::Active && !previous->archived) {
      Task paused = *previous;
      paused.status = TaskStatus::Pending;
      CT_TRY(save(*previous, paused));
    }
    result.previous = *focus;
  }
  CT_TRY(store_.set_focus(session_, id));
  record(id, "focus", focus ? json::Value(*focus) : json::Value(), id);
  Task after = before;
  after.status = TaskStatus::Active;
  after.blocked_by.clear();
  CT_TRY(save(before, after));
  result.task = std::move(after);
  return result;
}

Result<std::optional<Task>> TaskEngine::stop() {
  CT_TRY_ASSIGN(std::optional<std::string> focus, store_.get_focus(session_));
  if (!focus) return std::optional<Task>();
  CT_TRY(store_.set_focus(session_, std::nullopt));
  record(*focus, "focus", *focus, json::Value());
  CT_TRY_ASSIGN(std::optional<Task> task, store_.get_task(*focus));
  if (!task) return std::optional<Task>();
  if (task->status == TaskStatus::Active && !task->archived) {
    Task after = *task;
    after.status = TaskStatus::Pending;
    CT_TRY(save(*task, after));
    return std::optional<Task>(std::move(after));
  }
  return task;
}

Result<std::optional<Task>> TaskEngine::current() {
  CT_TRY_ASSIGN(std::optional<std::string> focus, store_.get_focus(session_));
  if (!focus) return std::optional<Task>();
  return store_.get_task(*focus);
}

}  // namespace ct
