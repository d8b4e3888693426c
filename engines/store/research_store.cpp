// The research role, written once over the backend's sql::Runner; search is each backend's own.
#include "engines/store/research_store.h"

#include <algorithm>

#include "engines/store/sql_query.h"
#include "engines/store/store_rows.h"

namespace ct {
namespace {

using sql::Value;

Result<ResearchEntry> read_entry(const sql::Cursor& row) { return read_research_row(row); }

std::string research_where(const sql::Dialect& dialect, const ResearchQuery& query, sql::Args& args) {
  std::string where;
  sql::Where conditions{where, args};
  sql::append_research_filter(dialect, query, conditions);
  return where;
}

}  // namespace

Result<std::optional<ResearchEntry>> ResearchStore::get_research(std::string_view id) {
  auto& db = sql_runner();
  const Value args[] = {Value(id)};
  return db.first("SELECT " + research_columns(db.dialect()) + " FROM research r WHERE r.id = ?1", args,
                  "cannot read the research entry", read_entry);
}

Result<std::vector<ResearchEntry>> ResearchStore::list_research(const ResearchQuery& query) {
  auto& db = sql_runner();
  sql::Args args;
  std::string sql = "SELECT " + research_columns(db.dialect()) + " FROM research r" +
                    research_where(db.dialect(), query, args) + " ORDER BY r.date DESC, r.id";
  if (query.limit >= 0 || query.offset > 0) {
    sql += " LIMIT " + args(sql::limit_of(query.limit));
    sql += " OFFSET " + args(std::max<std::int64_t>(0, query.offset));
  }
  return db.all(sql, args, "cannot list research entries", read_entry);
}

Result<std::int64_t> ResearchStore::count_research(const ResearchQuery& query) {
  auto& db = sql_runner();
  sql::Args args;
  const std::string where = research_where(db.dialect(), query, args);
  return db.integer("SELECT count(*) FROM research r" + where, args, "cannot count research entries");
}

Result<void> ResearchStore::put_research(const ResearchEntry& entry) {
  auto& db = sql_runner();
  return db.atomically([&]() -> Result<void> {
    // A new entry is numbered one past the largest (writers are serialised), as SQLite numbers rows.
    CT_TRY_ASSIGN(std::optional<std::int64_t> number,
                  db.first("INSERT INTO research(num, id, file, title, date, status, agent_type, topics, key_findings, "
                           "actionable, needs_followup, confidence, file_checksum, archived, archived_at, created_at, "
                           "updated_at) VALUES((SELECT coalesce(max(num), 0) + 1 FROM research), ?1, ?2, ?3, ?4, ?5, "
                           "?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16) "
                           "ON CONFLICT(id) DO UPDATE SET file = excluded.file, title = excluded.title, "
                           "date = excluded.date, status = excluded.status, agent_type = excluded.agent_type, "
                           "topics = excluded.topics, key_findings = excluded.key_findings, "
                           "actionable = excluded.actionable, needs_followup = excluded.needs_followup, "
                           "confidence = excluded.confidence, file_checksum = excluded.file_checksum, "
                           "archived = excluded.archived, archived_at = excluded.archived_at, "
                           "updated_at = excluded.updated_at RETURNING num",
                           sql::values(entry.id, entry.file, entry.title, entry.date, to_string(entry.status),
                                       entry.agent_type, encode_strings(entry.topics), encode_strings(entry.key_findings),
                                       std::int64_t{entry.actionable ? 1 : 0}, encode_strings(entry.needs_followup),
                                       entry.confidence, entry.file_checksum, std::int64_t{entry.archived ? 1 : 0},
                                       entry.archived_at, entry.created_at, entry.updated_at),
                           "cannot save the research entry", [](const sql::Cursor& row) { return row.integer(0); }));
    if (!number) return fail(ErrorCode::Internal, "research entry " + entry.id + " vanished while it was saved");
    CT_TRY(index_research(entry, *number));
    // The links in the order given; a task listed twice keeps its first place.
    const Value id[] = {Value(entry.id)};
    CT_TRY(db.run("DELETE FROM research_links WHERE research_id = ?1", id, "cannot save the research links"));
    std::int64_t position = 0;
    for (const auto& task : entry.linked_tasks)
      CT_TRY(db.run("INSERT INTO research_links(research_id, task_id, position) VALUES(?1, ?2, ?3) "
                    "ON CONFLICT DO NOTHING",
                    sql::values(entry.id, task, position++), "cannot save the research links"));
    return {};
  });
}

Result<void> ResearchStore::index_research(const ResearchEntry&, std::int64_t) { return {}; }

Result<std::vector<std::string>> ResearchStore::research_for_task(std::string_view task_id) {
  const Value args[] = {Value(task_id)};
  return sql_runner().strings(kResearchForTaskSql, args, "cannot read research links");
}

Result<ResearchStats> ResearchStore::research_stats() {
  auto& db = sql_runner();
  ResearchStats stats;
  CT_TRY(db.each("SELECT count(*), coalesce(sum(archived), 0), "
                 "coalesce(sum(CASE WHEN archived = 0 AND actionable = 1 THEN 1 ELSE 0 END), 0), "
                 "coalesce(sum(CASE WHEN archived = 0 AND needs_followup <> '[]' THEN 1 ELSE 0 END), 0), "
                 "coalesce(sum(CASE WHEN archived = 0 AND EXISTS (SELECT 1 FROM research_links l "
                 "WHERE l.research_id = research.id) THEN 1 ELSE 0 END), 0), "
                 "avg(CASE WHEN archived = 0 THEN confidence END) FROM research",
                 {}, "cannot count research entries", [&](const sql::Cursor& row) {
                   stats.total = row.integer(0);
                   stats.archived = row.integer(1);
                   stats.actionable = row.integer(2);
                   stats.pending = row.integer(3);
                   stats.linked = row.integer(4);
                   stats.average_confidence = row.optional_real(5);
                 }));
  CT_TRY(db.each("SELECT 's', status, count(*) FROM research WHERE archived = 0 GROUP BY status "
                 "UNION ALL SELECT 'a', agent_type, count(*) FROM research WHERE archived = 0 GROUP BY agent_type",
                 {}, "cannot count research entries", [&](const sql::Cursor& row) {
                   auto& target = row.text(0) == "s" ? stats.by_status : stats.by_agent_type;
                   target[std::string(row.text(1))] = row.integer(2);
                 }));
  return stats;
}

Result<std::optional<ManifestCursor>> ResearchStore::get_manifest_cursor(std::string_view file) {
  const Value args[] = {Value(file)};
  return sql_runner().first("SELECT file, \"offset\", lines, head_hash, synced_at FROM research_sync WHERE file = ?1",
                            args, "cannot read the manifest cursor", [](const sql::Cursor& row) {
                              return ManifestCursor{std::string(row.text(0)), row.integer(1), row.integer(2),
                                                    std::string(row.text(3)), row.integer(4)};
                            });
}

Result<void> ResearchStore::put_manifest_cursor(const ManifestCursor& cursor) {
  return sql_runner().run("INSERT INTO research_sync(file, \"offset\", lines, head_hash, synced_at) "
                          "VALUES(?1, ?2, ?3, ?4, ?5) ON CONFLICT(file) DO UPDATE SET \"offset\" = excluded.\"offset\", "
                          "lines = excluded.lines, head_hash = excluded.head_hash, synced_at = excluded.synced_at",
                          sql::values(cursor.file, cursor.offset, cursor.lines, cursor.head_hash, cursor.synced_at),
                          "cannot save the manifest cursor");
}

}  // namespace ct
