#include "engines/store/tracker_store.h"

#include <algorithm>
#include <set>
#include <tuple>

#include "core/json_parse.h"
#include "engines/store/store_rows.h"

namespace ct {
namespace {

using sql::Value;

constexpr std::string_view kLinkColumns =
    "tracker, repository, external_id, task_id, item_key, url, number, version, base, meta, state, conflict, "
    "push_new, synced_at";

Error corrupt(std::string_view id, std::string_view column) {
  return Error(ErrorCode::FileError,
               "the tracker link of " + std::string(id) + " has an unreadable " + std::string(column))
      .with_fix(corrupt_fix());
}

/// A JSON column: `fallback` for "" (never set); nullopt when it does not parse.
std::optional<json::Value> json_column(std::string_view text, json::Value fallback) {
  if (text.empty()) return fallback;
  auto parsed = json::parse(text);
  if (!parsed) return std::nullopt;
  return std::move(*parsed);
}

Result<TrackerLink> read_link(const sql::Cursor& row) {
  TrackerLink link;
  link.tracker = std::string(row.text(0));
  link.repository = std::string(row.text(1));
  link.external_id = std::string(row.text(2));
  link.task_id = std::string(row.text(3));
  link.key = std::string(row.text(4));
  link.url = std::string(row.text(5));
  link.number = row.integer(6);
  link.version = std::string(row.text(7));
  auto base = json_column(row.text(8), json::Value::object());
  if (!base || !base->is_object()) return fail(corrupt(link.task_id, "base"));
  link.base = std::move(*base);
  auto meta = json_column(row.text(9), json::Value::object());
  if (!meta || !meta->is_object()) return fail(corrupt(link.task_id, "meta"));
  link.meta = std::move(*meta);
  link.state = std::string(row.text(10));
  auto conflict = json_column(row.text(11), json::Value());
  if (!conflict) return fail(corrupt(link.task_id, "conflict"));
  link.conflict = std::move(*conflict);
  link.push_new = row.integer(12) != 0;
  link.synced_at = row.integer(13);
  return link;
}

std::string select_links(std::string_view where) {
  return "SELECT " + std::string(kLinkColumns) + " FROM tracker_links WHERE " + std::string(where);
}

}  // namespace

Result<std::optional<TrackerLink>> TrackerStore::get_link(std::string_view tracker, std::string_view repository,
                                                          std::string_view external_id) {
  const Value args[] = {Value(tracker), Value(repository), Value(external_id)};
  return sql_runner().first(select_links("tracker = ?1 AND repository = ?2 AND external_id = ?3"), args,
                            "cannot read the tracker link", read_link);
}

const std::string& TrackerStore::task_links_sql() {
  static const std::string sql = select_links("task_id = ?1 ORDER BY tracker, repository");
  return sql;
}

Result<std::vector<TrackerLink>> TrackerStore::task_links(std::string_view task_id) {
  const Value args[] = {Value(task_id)};
  return sql_runner().all(task_links_sql(), args, "cannot read the task's tracker links", read_link);
}

Result<std::vector<TrackerLink>> TrackerStore::links(std::string_view tracker, std::string_view repository,
                                                     std::string_view state) {
  const Value args[] = {Value(tracker), Value(repository), Value(state)};
  return sql_runner().all(
      select_links("tracker = ?1 AND repository = ?2 AND (CAST(?3 AS TEXT) = '' OR state = ?3) ORDER BY number, external_id"), args,
      "cannot read the tracker links", read_link);
}

Result<std::optional<TrackerLink>> TrackerStore::link_by_number(std::string_view tracker, std::string_view repository,
                                                                std::int64_t number) {
  const Value args[] = {Value(tracker), Value(repository), Value(number)};
  return sql_runner().first(select_links("tracker = ?1 AND repository = ?2 AND number = ?3 ORDER BY external_id"), args,
                            "cannot read the tracker link", read_link);
}

Result<std::map<std::int64_t, std::string>> TrackerStore::link_numbers(std::string_view tracker,
                                                                      std::string_view repository) {
  const Value args[] = {Value(tracker), Value(repository)};
  std::map<std::int64_t, std::string> out;
  CT_TRY(sql_runner().each(
      "SELECT number, task_id FROM tracker_links WHERE tracker = ?1 AND repository = ?2 AND number > 0", args,
      "cannot read the tracker links' numbers",
      [&](const sql::Cursor& row) { out.emplace(row.integer(0), std::string(row.text(1))); }));
  return out;
}

Result<std::vector<TrackerLink>> TrackerStore::unresolved_links(std::string_view tracker, std::string_view repository) {
  // meta is JSON written by json::Value::dump (no spaces): a key reads `"parent":`, which a string
  // value cannot hold unescaped. Found by the dialect's plain substring search (instr, strpos:
  // exact on both backends, where SQLite's LIKE folds case); the caller checks the parsed meta
  // again. It reads every link's meta: the sync asks only when new items were linked.
  const std::string has = std::string(sql_runner().dialect().find_text) + "(meta, ";
  const Value args[] = {Value(tracker), Value(repository)};
  return sql_runner().all(
      select_links("tracker = ?1 AND repository = ?2 AND (" + has + "'\"parent\":') > 0 OR " + has +
                   "'\"blockedBy\":') > 0 OR " + has + "'\"refs\":') > 0) AND " + has +
                   "'\"resolved\":true') = 0 ORDER BY number, external_id"),
      args, "cannot read the tracker links", read_link);
}

Result<std::vector<TrackerLink>> TrackerStore::links_to_push(std::string_view tracker, std::string_view repository,
                                                             std::int64_t after_seq) {
  // The changed tasks from audit_changes by its seq index, then their links by tracker_links_task:
  // rows of the changed tasks only (one query joining both lets the planner walk every link).
  std::vector<std::string> changed;
  const Value after[] = {Value(after_seq)};
  CT_TRY(sql_runner().each("SELECT DISTINCT task_id FROM audit_changes WHERE seq > ?1", after,
                           "cannot read the tasks changed since the last sync",
                           [&](const sql::Cursor& row) { changed.emplace_back(row.text(0)); }));
  std::vector<TrackerLink> out;
  std::set<std::string> seen;
  for (const auto& task_id : changed) {
    CT_TRY_ASSIGN(auto of_task, task_links(task_id));
    for (auto& link : of_task)
      if (link.tracker == tracker && link.repository == repository && link.state != "deleted" &&
          !link.external_id.starts_with("milestone:") && seen.insert(link.external_id).second)
        out.push_back(std::move(link));
  }
  CT_TRY_ASSIGN(auto refused, links(tracker, repository, "refused"));
  for (auto& link : refused)
    if (seen.insert(link.external_id).second) out.push_back(std::move(link));
  std::sort(out.begin(), out.end(), [](const TrackerLink& a, const TrackerLink& b) {
    return std::tie(a.number, a.external_id) < std::tie(b.number, b.external_id);
  });
  return out;
}

Result<std::int64_t> TrackerStore::last_audit_row() {
  return sql_runner().integer("SELECT COALESCE(MAX(seq), 0) FROM audit", {}, "cannot read the audit trail's last row");
}

Result<std::vector<TrackerLink>> TrackerStore::push_new_links(std::string_view tracker, std::string_view repository) {
  const Value args[] = {Value(tracker), Value(repository)};
  return sql_runner().all(select_links("tracker = ?1 AND repository = ?2 AND push_new <> 0 ORDER BY number, external_id"),
                          args, "cannot read the tracker links", read_link);
}

Result<std::int64_t> TrackerStore::count_links(std::string_view tracker, std::string_view repository,
                                               std::string_view state) {
  const Value args[] = {Value(tracker), Value(repository), Value(state)};
  return sql_runner().integer(
      "SELECT COUNT(*) FROM tracker_links WHERE tracker = ?1 AND repository = ?2 AND (CAST(?3 AS TEXT) = '' OR state = ?3)", args,
      "cannot count the tracker links");
}

Result<void> TrackerStore::put_link(const TrackerLink& link) {
  const Value args[] = {Value(link.tracker),     Value(link.repository),
                        Value(link.external_id), Value(link.task_id),
                        Value(link.key),         Value(link.url),
                        Value(link.number),      Value(link.version),
                        Value(link.base.dump()), Value(link.meta.dump()),
                        Value(link.state),       Value(link.conflict.is_null() ? std::string() : link.conflict.dump()),
                        Value(std::int64_t{link.push_new ? 1 : 0}), Value(link.synced_at)};
  return sql_runner().run(
      "INSERT INTO tracker_links(" + std::string(kLinkColumns) +
          ") VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14) "
          "ON CONFLICT(tracker, repository, external_id) DO UPDATE SET task_id = excluded.task_id, "
          "item_key = excluded.item_key, url = excluded.url, number = excluded.number, version = excluded.version, "
          "base = excluded.base, meta = excluded.meta, state = excluded.state, conflict = excluded.conflict, "
          "push_new = excluded.push_new, synced_at = excluded.synced_at",
      args, "cannot record the tracker link");
}

Result<std::optional<TrackerCursor>> TrackerStore::get_cursor(std::string_view tracker, std::string_view repository) {
  const Value args[] = {Value(tracker), Value(repository)};
  return sql_runner().first(
      "SELECT tracker, repository, cursor, etag, summary, synced_at FROM tracker_cursors "
      "WHERE tracker = ?1 AND repository = ?2",
      args, "cannot read the sync cursor", [](const sql::Cursor& row) -> Result<TrackerCursor> {
        TrackerCursor out;
        out.tracker = std::string(row.text(0));
        out.repository = std::string(row.text(1));
        out.cursor = std::string(row.text(2));
        out.etag = std::string(row.text(3));
        auto summary = json_column(row.text(4), json::Value());
        if (!summary) return fail(corrupt(out.repository, "summary"));
        out.summary = std::move(*summary);
        out.synced_at = row.integer(5);
        return out;
      });
}

Result<void> TrackerStore::put_cursor(const TrackerCursor& cursor) {
  const Value args[] = {Value(cursor.tracker), Value(cursor.repository), Value(cursor.cursor), Value(cursor.etag),
                        Value(cursor.summary.is_null() ? std::string() : cursor.summary.dump()),
                        Value(cursor.synced_at)};
  return sql_runner().run(
      "INSERT INTO tracker_cursors(tracker, repository, cursor, etag, summary, synced_at) "
      "VALUES(?1, ?2, ?3, ?4, ?5, ?6) ON CONFLICT(tracker, repository) DO UPDATE SET cursor = excluded.cursor, "
      "etag = excluded.etag, summary = excluded.summary, synced_at = excluded.synced_at",
      args, "cannot record the sync cursor");
}

}  // namespace ct
