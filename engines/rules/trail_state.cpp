#include "engines/rules/trail_state.h"

#include <algorithm>
#include <set>

#include "engines/rules/task_engine.h"
#include "engines/store/task.h"
#include "engines/store/task_json.h"

namespace ct {
namespace {

/// The fields an older "created" change holds (task_compact, before the full record): compared
/// while no later change of them is in the trail.
constexpr std::string_view kCompactFields[] = {"title", "status", "priority", "parent", "archived"};

bool is_task_field(std::string_view field) {
  return std::ranges::find(task_fields(), field) != task_fields().end();
}

/// What a task's "created" change says each field was, for the fields it knows: every field of
/// a full record (task_created), or the few of an older compact one (task_compact).
std::map<std::string, json::Value, std::less<>> created_fields(const json::Value& created) {
  std::map<std::string, json::Value, std::less<>> out;
  if (created.contains("type")) {
    if (auto task = task_from_full(created)) {
      for (auto field : task_fields()) out.emplace(std::string(field), task_field(*task, field));
      return out;
    }
  }
  for (std::string_view field : kCompactFields) {
    const json::Value& value = created[field];
    out.emplace(std::string(field), field == "archived" ? json::Value(value == json::Value(true)) : value);
  }
  return out;
}

}  // namespace

void TrailState::take(const AuditEntry& row) {
  if (first_at_ < 0) first_at_ = row.at;
  for (const auto& change : row.changes) {
    // Rows name other subjects too (a session's id, a memory entry's change with no task).
    if (change.task_id.empty() || normalize_task_id(change.task_id) != change.task_id) continue;
    if (change.field != "created" && change.field != "deleted" && !is_task_field(change.field)) continue;
    tasks_[change.task_id][change.field] = Last{row.seq, ++taken_, change.after};
  }
}

Result<std::vector<TrailState::Difference>> TrailState::compare(TaskStore& store, std::int64_t& checked) const {
  std::vector<Difference> out;
  std::set<std::string> unreadable;
  checked = 0;
  std::vector<std::string> ids;
  ids.reserve(tasks_.size());
  for (const auto& [id, fields] : tasks_) ids.push_back(id);
  std::map<std::string, Task, std::less<>> stored;
  constexpr std::size_t kChunk = 500;
  for (std::size_t start = 0; start < ids.size(); start += kChunk) {
    std::vector<std::string> chunk(ids.begin() + static_cast<std::ptrdiff_t>(start),
                                   ids.begin() + static_cast<std::ptrdiff_t>(std::min(ids.size(), start + kChunk)));
    auto found = store.get_tasks(chunk);
    if (!found) {
      // A row the store cannot read (a value set by hand it does not know) is reported by the row
      // checks; the others are still compared.
      for (const auto& id : chunk)
        if (auto one = store.get_task(id); one && *one) stored.emplace(id, std::move(**one));
        else if (!one) unreadable.insert(id);
      continue;
    }
    for (auto& task : *found) stored.emplace(task.id, std::move(task));
  }
  for (const auto& [id, fields] : tasks_) {
    ++checked;
    const auto created = fields.find("created");
    const auto deleted = fields.find("deleted");
    // Changes are ordered by when they were taken, not by row: one row may create a task and then
    // change it (tasks.import completes what it added), or delete it.
    std::int64_t newest = 0, newest_order = 0;
    for (const auto& [field, last] : fields)
      if (field != "deleted" && last.order > newest_order) newest = last.seq, newest_order = last.order;
    const bool gone = deleted != fields.end() && deleted->second.order > newest_order;
    if (unreadable.contains(id)) continue;
    const auto task = stored.find(id);
    if (task == stored.end()) {
      if (!gone) out.push_back({id, "task", json::Value("present"), json::Value(), newest});
      continue;
    }
    if (gone) {
      out.push_back({id, "task", json::Value("deleted"), json::Value("present"), deleted->second.seq});
      continue;
    }
    for (const auto& [field, last] : fields) {
      if (!is_task_field(field)) continue;
      json::Value now = task_field(task->second, field);
      if (now != last.after) out.push_back({id, field, last.after, std::move(now), last.seq});
    }
    if (created == fields.end()) continue;
    for (auto& [field, was] : created_fields(created->second.after)) {
      if (auto later = fields.find(field); later != fields.end() && later->second.order > created->second.order) continue;
      json::Value now = task_field(task->second, field);
      if (now != was) out.push_back({id, field, std::move(was), std::move(now), created->second.seq});
    }
  }
  // A task made after the trail began was made by a row of it.
  if (first_at_ >= 0) {
    TaskQuery query;
    query.filter.archived = ArchivedFilter::Include;
    query.sort = SortKey::Id;
    query.limit = 1000;
    for (;;) {
      auto listed = store.list_tasks(query);
      if (!listed) break;  // a row it cannot read: the row checks report it
      const std::vector<Task>& page = *listed;
      for (const auto& task : page)
        if (task.created_at >= first_at_ && !tasks_.contains(task.id)) {
          ++checked;
          out.push_back({task.id, "task", json::Value(), json::Value("present"), 0});
        }
      if (static_cast<std::int64_t>(page.size()) < query.limit) break;
      query.offset += query.limit;
    }
  }
  return out;
}

}  // namespace ct
