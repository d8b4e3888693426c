// TaskEngine's undo of an audit row (engines/rules/task_engine.h): what later rows changed of what
// it changed (undo_conflicts), and putting it back in four steps — deleted tasks restored, fields
// set to their value before, the focus moved back, created tasks removed.
#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "engines/rules/task_engine.h"
#include "engines/rules/task_checks.h"
#include "engines/store/task_json.h"

namespace ct {
namespace {

using task_checks::append_unique;

// The change fields that undo can put back: a task's own fields and the records of its
// creation, deletion and focus (a focus's reservations follow it: those it had are not put back).
bool undoable_field(std::string_view field) {
  if (field == "created" || field == "deleted" || field == "focus" || field == "reserved") return true;
  return std::ranges::find(task_fields(), field) != task_fields().end();
}

}  // namespace

Result<std::vector<UndoConflict>> TaskEngine::undo_conflicts(const AuditEntry& row) {
  std::vector<UndoConflict> conflicts;
  std::set<std::tuple<std::int64_t, std::string, std::string>> seen;
  std::set<std::pair<std::string, std::string>> asked;
  for (const auto& change : row.changes) {
    // A focus is put back only when it is still where the row left it (checked while undoing).
    if (change.field == "focus" || change.field == "reserved" || !asked.insert({change.task_id, change.field}).second) continue;
    AuditQuery query;
    query.task_id = change.task_id;
    // Anything done to a task the row created is lost with it; otherwise the same field counts.
    if (change.field != "created") query.field = change.field;
    query.after_seq = row.seq;
    query.ascending = true;
    query.limit = 20;
    CT_TRY_ASSIGN(std::vector<AuditEntry> later, audit_.read_audit(query));
    for (const auto& entry : later)
      for (const auto& touched : entry.changes)
        if (touched.task_id == change.task_id && touched.field != "focus" && touched.field != "reserved" &&
            seen.insert({entry.seq, touched.task_id, touched.field}).second)
          conflicts.push_back({entry.seq, entry.operation, touched.task_id, touched.field});
  }
  std::ranges::sort(conflicts, {}, &UndoConflict::seq);
  return conflicts;
}

Result<std::vector<std::string>> TaskEngine::undo(const AuditEntry& row, std::vector<std::string>& warnings) {
  std::vector<std::string> touched;
  std::vector<std::string> created;
  for (const auto& change : row.changes) {
    if (!undoable_field(change.field))
      return fail(Error(ErrorCode::Validation, "seq " + std::to_string(row.seq) + " (" + row.operation + ") changed " +
                                                   change.field + ", which undo cannot put back")
                      .with_fix("undo reverts task changes; revert this one with the operation that made it")
                      .with_detail("seq", row.seq));
    if (change.field == "created") created.push_back(change.task_id);
  }
  CT_TRY(undo_deleted(row, touched, warnings));
  CT_TRY(undo_fields(row, created, touched));
  CT_TRY(undo_focus(row, warnings));
  CT_TRY(undo_created(created, touched));
  return touched;
}

// Deleted tasks come back first (parents before the children deleted with them), so that the
// dependency lists restored next point at tasks that exist.
Result<void> TaskEngine::undo_deleted(const AuditEntry& row, std::vector<std::string>& touched,
                                      std::vector<std::string>& warnings) {
  for (auto it = row.changes.rbegin(); it != row.changes.rend(); ++it) {
    if (it->field != "deleted") continue;
    CT_TRY_ASSIGN(Task task, task_from_full(it->before));
    CT_TRY_ASSIGN(std::optional<Task> existing, store_.get_task(task.id));
    if (existing)
      return fail(Error(ErrorCode::Validation, "Task " + task.id + " exists again; its deletion cannot be undone")
                      .with_detail("id", task.id));
    if (!task.parent.empty()) {
      CT_TRY_ASSIGN(std::optional<Task> parent, store_.get_task(task.parent));
      if (!parent) {
        warnings.push_back(task.id + ": its parent " + task.parent + " is gone; restored at the top level");
        task.parent.clear();
      }
    }
    std::vector<std::string> depends;
    for (auto& dep : task.depends) {
      CT_TRY_ASSIGN(std::optional<Task> upstream, store_.get_task(dep));
      if (upstream) {
        depends.push_back(std::move(dep));
      } else {
        warnings.push_back(task.id + ": dependency " + dep + " is gone; left out");
      }
    }
    task.depends = std::move(depends);
    task.version += 1;
    task.updated_at = now_;
    CT_TRY(store_.insert_task(task));
    record(task.id, "created", json::Value(), task_created(task));
    touched.push_back(task.id);
  }
  return {};
}

// Fields go back to the value they had before the row (the first 'before' of each field), on the
// tasks the row did not create.
Result<void> TaskEngine::undo_fields(const AuditEntry& row, const std::vector<std::string>& created,
                                     std::vector<std::string>& touched) {
  // Sets, not scans of the lists: a row of an import holds 100,000s of created tasks.
  const std::set<std::string> made(created.begin(), created.end());
  std::set<std::string> listed(touched.begin(), touched.end());
  std::vector<std::string> order;
  std::map<std::string, std::vector<const FieldChange*>> fields;
  for (const auto& change : row.changes) {
    if (change.field == "created" || change.field == "deleted" || change.field == "focus" ||
        change.field == "reserved" || made.contains(change.task_id))
      continue;
    auto& list = fields[change.task_id];
    if (list.empty()) order.push_back(change.task_id);
    if (std::ranges::none_of(list, [&](const FieldChange* seen) { return seen->field == change.field; }))
      list.push_back(&change);
  }
  for (const auto& id : order) {
    CT_TRY_ASSIGN(Task before, get(id));
    Task after = before;
    for (const FieldChange* change : fields[id]) CT_TRY(set_task_field(after, change->field, change->before));
    if (after.parent != before.parent && !after.parent.empty()) {
      CT_TRY_ASSIGN(std::optional<Task> parent, store_.get_task(after.parent));
      if (!parent)
        return fail(Error(ErrorCode::ParentNotFound, "Task " + id + " cannot go back under " + after.parent +
                                                         ": it no longer exists")
                        .with_detail("parent", after.parent));
    }
    if (after.depends != before.depends) CT_TRY(check_depends(id, after.depends));
    CT_TRY(save(before, after));
    if (listed.insert(id).second) touched.push_back(id);
  }
  return {};
}

// The focus moves back only when it is still where the row left it.
Result<void> TaskEngine::undo_focus(const AuditEntry& row, std::vector<std::string>& warnings) {
  for (const auto& change : row.changes)
    if (change.field == "reserved" && !change.before.is_null()) {
      warnings.push_back("the paths " + change.task_id + " reserved before seq " + std::to_string(row.seq) +
                         " are not put back: tasks.reserve them again");
      break;
    }
  for (const auto& change : row.changes) {
    if (change.field != "focus") continue;
    CT_TRY_ASSIGN(std::optional<std::string> focus, store_.get_focus(row.session));
    json::Value now_focus = focus ? json::Value(*focus) : json::Value();
    if (now_focus != change.after) {
      warnings.push_back("the focus has moved since seq " + std::to_string(row.seq) + "; left on " +
                         (focus ? *focus : std::string("nothing")));
      continue;
    }
    std::optional<std::string> target;
    if (change.before.is_string()) target = change.before.as_string();
    if (target) {
      CT_TRY_ASSIGN(std::optional<Claim> holder, store_.claim_on(*target));
      CT_TRY_ASSIGN(std::optional<Task> task, store_.get_task(*target));
      if ((holder && holder->session != row.session) || !task) {
        warnings.push_back(*target + " is " + (task ? "claimed by another session" : "gone") +
                           "; the focus is left clear");
        target.reset();
      }
    }
    CT_TRY(release_reservations(row.session));
    CT_TRY(store_.set_focus(row.session, target));
    record(change.task_id, "focus", std::move(now_focus), target ? json::Value(*target) : json::Value());
  }
  return {};
}

// Created tasks go last, newest first (children before their parents), unless tasks outside the
// row came to need them since.
Result<void> TaskEngine::undo_created(const std::vector<std::string>& created, std::vector<std::string>& touched) {
  const std::set<std::string> made(created.begin(), created.end());
  std::set<std::string> listed(touched.begin(), touched.end());
  for (auto it = created.rbegin(); it != created.rend(); ++it) {
    CT_TRY_ASSIGN(std::optional<Task> task, store_.get_task(*it));
    if (!task) continue;
    CT_TRY_ASSIGN(std::vector<std::string> children, store_.children_of(*it, /*include_archived=*/true));
    CT_TRY_ASSIGN(std::vector<std::string> dependents, store_.dependents_of(*it));
    std::vector<std::string> outside;
    for (const auto& other : children) if (!made.contains(other)) outside.push_back(other);
    for (const auto& other : dependents) if (!made.contains(other)) append_unique(outside, {other});
    if (!outside.empty())
      return fail(Error(ErrorCode::HasDependents, "Task " + *it + " cannot be taken back: " +
                                                     json::Value::array_of(outside).dump() + " came to need it since")
                      .with_fix("move or unlink those tasks first, then undo again")
                      .with_detail("id", *it).with_detail("dependents", json::Value::array_of(outside)));
    // Its children in the row went first; the dependents left are the row's too.
    CT_TRY(remove(*it, DeleteOptions{.hard = true, .force = true}, std::nullopt));
    if (listed.insert(*it).second) touched.push_back(*it);
  }
  return {};
}

}  // namespace ct
