#include "domains/changes.h"

#include <algorithm>
#include <utility>

#include "domains/projection.h"
#include "engines/store/task.h"

namespace ct {
namespace {

/// Audit rows read per batch, and in all per call: a narrow scope over a long trail answers in
/// bounded time and says `more`.
constexpr std::int64_t kBatch = 256;
constexpr std::int64_t kMostScanned = 4096;

/// Where a task was before a change took it from there: the parent a move (field "parent") or a
/// deletion for good ("deleted": its whole record before) names; "" when none.
std::string moved_from(const FieldChange& change) {
  if (change.field == "parent") return change.before.string_or_empty();
  if (change.field == "deleted") return change.before["parent"].string_or_empty();
  return {};
}

}  // namespace

Result<ChangePage> read_changes(Context& context, std::int64_t since_seq, const std::set<std::string>* within,
                                std::int64_t limit, const std::string& skip_session) {
  ChangePage page;
  page.next = since_seq;
  std::int64_t scanned = 0;
  while (scanned < kMostScanned) {
    AuditQuery query;
    query.after_seq = page.next;
    query.ascending = true;
    query.limit = kBatch;
    CT_TRY_ASSIGN(std::vector<AuditEntry> entries, context.db().read_audit(query));
    for (const auto& entry : entries) {
      ++scanned;
      // A row is taken whole or not at all, so that the cursor never splits one.
      std::vector<ChangeRow> rows;
      if (skip_session.empty() || entry.session != skip_session) {
        std::set<std::pair<std::string, std::string>> seen;
        for (const auto& change : entry.changes) {
          if (within && !within->contains(change.task_id)) continue;
          if (!seen.insert({change.task_id, change.field}).second) continue;
          rows.push_back({entry.seq, entry.at, change.task_id, change.field,
                          !entry.agent.empty() ? entry.agent : entry.session, moved_from(change)});
        }
      }
      if (!rows.empty() && std::ssize(page.rows) + std::ssize(rows) > limit && !page.rows.empty()) {
        page.more = true;
        return page;
      }
      page.rows.insert(page.rows.end(), std::make_move_iterator(rows.begin()), std::make_move_iterator(rows.end()));
      page.next = entry.seq;
    }
    if (std::ssize(entries) < kBatch) return page;  // the end of the trail
  }
  page.more = true;
  return page;
}

Result<std::vector<std::string>> subtrees(Context& context, const std::vector<ChangeRow>& rows) {
  std::set<std::string> touched;
  std::vector<std::string> level;
  auto take = [&](const std::string& id) {
    // Rows name sessions too; only tasks have subtrees.
    if (!id.empty() && parse_task_id(id) && touched.insert(id).second) level.push_back(id);
  };
  for (const auto& row : rows) {
    take(row.id);
    take(row.moved_from);
  }
  // One level of parents at a time: as many reads as the hierarchy is deep.
  while (!level.empty()) {
    CT_TRY_ASSIGN(std::vector<Task> tasks, context.db().get_tasks(level));
    level.clear();
    for (const auto& task : tasks) take(task.parent);
  }
  return std::vector<std::string>(touched.begin(), touched.end());
}

json::Value change_json(const ChangeRow& row, bool with_time) {
  json::Value item = json::Value::object();
  item.set("seq", row.seq);
  item.set("id", row.id);
  item.set("field", row.field);
  if (!row.who.empty()) item.set("who", row.who);
  if (with_time) item.set("at", format_iso8601(row.at));
  return item;
}

json::Value changes_json(const std::vector<ChangeRow>& rows) {
  json::Value list = json::Value::array();
  for (const auto& row : rows) list.push_back(change_json(row, true));
  return rows_as_table(list);
}

}  // namespace ct
