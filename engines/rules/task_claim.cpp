// TaskEngine's claims (engines/rules/task_engine.h): start (the atomic claim of a task for the
// session, taking over a lapsed one: engines/rules/claim_lease.h), stop, reclaim (a person frees a
// task) and the session's current focus.
#include <algorithm>
#include <map>

#include "engines/rules/claim_lease.h"
#include "engines/rules/task_engine.h"
#include "engines/rules/task_checks.h"

namespace ct {

using task_checks::is_open;

Result<void> TaskEngine::clear_focus_of(const std::string& id) {
  // Whichever session holds the task loses it: a finished task is nobody's claim any more.
  CT_TRY_ASSIGN(std::optional<Claim> claim, store_.claim_on(id));
  if (claim) {
    CT_TRY(release_reservations(claim->session));
    CT_TRY(store_.set_focus(claim->session, std::nullopt));
    record(id, "focus", id, json::Value());
  }
  return {};
}

Result<std::optional<Claim>> TaskEngine::reclaim(const std::string& id) {
  CT_TRY_ASSIGN(Task before, get_live(id));
  CT_TRY_ASSIGN(std::optional<Claim> claim, store_.claim_on(id));
  if (!claim) return claim;
  CT_TRY(release_reservations(claim->session));
  CT_TRY(store_.set_focus(claim->session, std::nullopt));
  record(id, "holder", claim->session, json::Value());
  if (before.status == TaskStatus::Active) {
    Task after = before;
    after.status = TaskStatus::Pending;
    CT_TRY(save(before, after));
  }
  return claim;
}

Result<StartResult> TaskEngine::start(const std::string& id, const std::optional<std::vector<std::string>>& paths,
                                      bool shared) {
  CT_TRY_ASSIGN(StartResult result, claim_task(id));
  // The claim reserves what the work will touch, checked against others' live reservations in
  // this write transaction (a strict refusal takes the claim back with it).
  if (!paths && result.no_change) return result;
  std::vector<std::string> reserving = paths ? *paths : reservations::declared_paths(result.task.files);
  if (reserving.empty() && !result.no_change) return result;
  // The session focuses the task now (claim_task, this transaction): no second read of the focus.
  // A new focus has released what the session held: it holds nothing yet.
  std::vector<Reservation> mine;
  if (result.no_change) {
    CT_TRY_ASSIGN(mine, held_on(id));
  }
  CT_TRY_ASSIGN(result.reserved, reserve_held(id, reserving, {}, shared, /*replace=*/true, std::move(mine)));
  return result;
}

Result<StartResult> TaskEngine::claim_task(const std::string& id) {
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
    CT_TRY(release_reservations(held->session));
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
  // A new focus: what the session reserved for the old one goes with it.
  if (focus) CT_TRY(release_reservations(session_));
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
  CT_TRY(release_reservations(session_));
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

Result<void> TaskEngine::release_reservations(const std::string& session) {
  // A read first: most focus changes release nothing, and a DELETE costs a write even then. The
  // rows read are the rows deleted (this write transaction), by task and path.
  CT_TRY_ASSIGN(std::vector<Reservation> rows, store_.session_reservations(session));
  if (rows.empty()) return {};
  CT_TRY(store_.drop_reservations(session));
  for (auto first = rows.begin(); first != rows.end();) {
    auto last = std::find_if(first, rows.end(), [&](const Reservation& row) { return row.holder.task_id != first->holder.task_id; });
    record(first->holder.task_id, "reserved", reservations::audit_value(std::vector<Reservation>(first, last)), json::Value());
    first = last;
  }
  return {};
}

Result<void> TaskEngine::take_over_lapsed(const std::vector<reservations::Conflict>& taken,
                                          const std::vector<Reservation>& lapsed) {
  // Per claim (session and task): the paths it held, and those it keeps.
  std::map<std::pair<std::string, std::string>, std::vector<Reservation>> dropped;
  for (const auto& conflict : taken) {
    auto& rows = dropped[{conflict.held.holder.session, conflict.held.holder.task_id}];
    if (std::ranges::find(rows, conflict.held.path, &Reservation::path) == rows.end()) rows.push_back(conflict.held);
  }
  for (const auto& [owner, rows] : dropped) {
    std::vector<Reservation> before, after;
    for (const auto& row : lapsed)
      if (row.holder.session == owner.first && row.holder.task_id == owner.second) {
        before.push_back(row);
        if (std::ranges::find(rows, row.path, &Reservation::path) == rows.end()) after.push_back(row);
      }
    for (const auto& row : rows) CT_TRY(store_.drop_reservation(owner.first, row.path));
    record(owner.second, "reserved", reservations::audit_value(before),
           after.empty() ? json::Value() : reservations::audit_value(after));
  }
  return {};
}

Result<std::vector<Reservation>> TaskEngine::held_on(const std::string& id) {
  CT_TRY_ASSIGN(std::vector<Reservation> mine, store_.session_reservations(session_));
  std::erase_if(mine, [&](const Reservation& row) { return row.holder.task_id != id; });
  return mine;
}

Result<ReserveResult> TaskEngine::reserve(const std::string& id, const std::vector<std::string>& add,
                                          const std::vector<std::string>& remove, bool shared, bool replace) {
  CT_TRY_ASSIGN(std::optional<std::string> focus, store_.get_focus(session_));
  if (!focus || *focus != id) {
    Error error(ErrorCode::ActiveTaskRequired, "Task " + id + " is not " +
                                                   (session_.empty() ? std::string("the focus") : "session " + session_ + "'s claim") +
                                                   ": a claim reserves paths");
    error.fix = call("tasks.start", {{"id", id}});
    return fail(std::move(error).with_detail("id", id));
  }
  CT_TRY_ASSIGN(std::vector<Reservation> mine, held_on(id));
  return reserve_held(id, add, remove, shared, replace, std::move(mine));
}

Result<ReserveResult> TaskEngine::reserve_held(const std::string& id, const std::vector<std::string>& add,
                                               const std::vector<std::string>& remove, bool shared, bool replace,
                                               std::vector<Reservation> mine) {
  ReserveResult result;
  if (!add.empty()) {
    CT_TRY_ASSIGN(reservations::Held held, reservations::held(store_, config_, now_, add));
    result.conflicts = reservations::conflicts(add, shared, &session_, held.live);
    if (!result.conflicts.empty() && reservations::strict(config_))
      return fail(reservations::refusal(result.conflicts, config_, now_));
    // Paths of claims whose lease lapsed are taken over, as a lapsed claim is: dropped, so that
    // they do not come back when their session shows life again.
    CT_TRY(take_over_lapsed(reservations::conflicts(add, shared, &session_, held.lapsed), held.lapsed));
  }
  const auto named = [](const std::vector<std::string>& list, const std::string& path) {
    return std::ranges::find(list, path) != list.end();
  };
  std::vector<Reservation> after;
  for (const auto& row : mine)
    if (!replace && !named(remove, row.path) && !named(add, row.path)) after.push_back(row);
  for (const auto& path : add) {
    if (std::ranges::any_of(after, [&](const Reservation& row) { return row.path == path; })) continue;
    Reservation row;
    row.path = path;
    row.head = reservations::head_of(path);
    row.shared = shared;
    row.created_at = now_;
    row.holder.task_id = id;
    row.holder.session = session_;
    after.push_back(std::move(row));
  }
  std::ranges::sort(after, {}, &Reservation::path);
  const json::Value before_value = reservations::audit_value(mine);
  const json::Value after_value = reservations::audit_value(after);
  if (before_value != after_value) {
    for (const auto& row : mine)
      if (std::ranges::none_of(after, [&](const Reservation& kept) { return kept.path == row.path; }))
        CT_TRY(store_.drop_reservation(session_, row.path));
    std::vector<Reservation> written;  // new, or shared changed (keeping when it was first reserved)
    for (const auto& row : after) {
      const auto was = std::ranges::find(mine, row.path, &Reservation::path);
      if (was != mine.end() && was->shared == row.shared) continue;
      written.push_back(row);
      if (was != mine.end()) written.back().created_at = was->created_at;
    }
    CT_TRY(store_.put_reservations(session_, id, written));
    record(id, "reserved", mine.empty() ? json::Value() : before_value, after.empty() ? json::Value() : after_value);
    result.changed = true;
  }
  result.held = std::move(after);
  return result;
}

Result<std::optional<Task>> TaskEngine::current() {
  CT_TRY_ASSIGN(std::optional<std::string> focus, store_.get_focus(session_));
  if (!focus) return std::optional<Task>();
  return store_.get_task(*focus);
}

}  // namespace ct
