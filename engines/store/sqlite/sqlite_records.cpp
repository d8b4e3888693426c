// The SQLite store, part: releases, the research manifest and lifecycle stages and gates.
#include "engines/store/sqlite/sqlite_store_impl.h"

namespace ct::sqlite {

Result<std::optional<Release>> SqliteStore::get_release(std::string_view version) {
  CT_TRY_ASSIGN(sqlite3_stmt* raw, prepare(std::string(kReleaseSelect) + " WHERE version = ?1"));
  Statement stmt(raw);
  stmt.bind(1, version);
  CT_TRY_ASSIGN(bool row, step(stmt, "cannot read the release"));
  if (!row) return std::optional<Release>();
  CT_TRY_ASSIGN(Release release, read_release_row(stmt));
  return std::optional<Release>(std::move(release));
}

Result<std::vector<Release>> SqliteStore::list_releases() {
  CT_TRY_ASSIGN(sqlite3_stmt* raw, prepare(std::string(kReleaseSelect) + " ORDER BY created_at DESC, version DESC"));
  Statement stmt(raw);
  std::vector<Release> out;
  std::optional<Error> bad;
  CT_TRY(for_each_row(stmt, "cannot list releases", [&] {
    auto release = read_release_row(stmt);
    if (release) out.push_back(std::move(*release));
    else if (!bad) bad = std::move(release.error());
  }));
  if (bad) return fail(std::move(*bad));
  return out;
}

Result<void> SqliteStore::put_release(const Release& release) {
  CT_TRY_ASSIGN(sqlite3_stmt* raw,
                prepare("INSERT OR REPLACE INTO releases(version, status, tasks, notes, created_at, updated_at, "
                        "released_at, tag, commit_sha, pushed, remote) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)"));
  Statement stmt(raw);
  stmt.bind(1, release.version).bind(2, std::string(to_string(release.status))).bind(3, encode_strings(release.tasks));
  stmt.bind(4, release.notes).bind(5, static_cast<std::int64_t>(release.created_at));
  stmt.bind(6, static_cast<std::int64_t>(release.updated_at));
  std::optional<std::int64_t> released;
  if (release.released_at) released = static_cast<std::int64_t>(*release.released_at);
  stmt.bind(7, released).bind(8, release.tag).bind(9, release.commit);
  stmt.bind(10, std::int64_t{release.pushed ? 1 : 0}).bind(11, release.remote);
  return finish(stmt, "cannot save the release");
}

Result<std::vector<ResearchEntry>> SqliteStore::read_research_rows(Statement& stmt, std::string_view what) {
  std::vector<ResearchEntry> out;
  CT_TRY(for_each_row(stmt, what, [&]() -> Result<void> {
    CT_TRY_ASSIGN(ResearchEntry entry, read_research_row(stmt));
    out.push_back(std::move(entry));
    return {};
  }));
  return out;
}

void SqliteStore::research_where(const ResearchQuery& query, std::string& where, std::vector<SqlValue>& params) {
  Args args(params);
  sql::Where conditions{where, args};
  sql::append_research_filter(kDialect, query, conditions);
}

Result<std::optional<ResearchEntry>> SqliteStore::get_research(std::string_view id) {
  CT_TRY_ASSIGN(sqlite3_stmt* raw,
                prepare("SELECT " + std::string(kResearchColumns) + " FROM research r WHERE r.id = ?1"));
  Statement stmt(raw);
  stmt.bind(1, id);
  CT_TRY_ASSIGN(bool row, step(stmt, "cannot read the research entry"));
  if (!row) return std::optional<ResearchEntry>();
  CT_TRY_ASSIGN(ResearchEntry entry, read_research_row(stmt));
  return std::optional<ResearchEntry>(std::move(entry));
}

Result<std::vector<ResearchEntry>> SqliteStore::list_research(const ResearchQuery& query) {
  std::string where;
  std::vector<SqlValue> params;
  research_where(query, where, params);
  std::string sql = "SELECT " + std::string(kResearchColumns) + " FROM research r" + where +
                    " ORDER BY r.date DESC, r.id";
  if (query.limit >= 0 || query.offset > 0) {
    sql += " LIMIT ? OFFSET ?";
    params.emplace_back(query.limit);
    params.emplace_back(query.offset);
  }
  CT_TRY_ASSIGN(sqlite3_stmt* raw, prepare(sql));
  Statement stmt(raw);
  stmt.bind_all(params);
  return read_research_rows(stmt, "cannot list research entries");
}

Result<std::int64_t> SqliteStore::count_research(const ResearchQuery& query) {
  std::string where;
  std::vector<SqlValue> params;
  research_where(query, where, params);
  CT_TRY_ASSIGN(sqlite3_stmt* raw, prepare("SELECT count(*) FROM research r" + where));
  Statement stmt(raw);
  stmt.bind_all(params);
  CT_TRY(step(stmt, "cannot count research entries"));
  return stmt.integer(0);
}

Result<void> SqliteStore::put_research(const ResearchEntry& entry) {
  {
    CT_TRY_ASSIGN(sqlite3_stmt* raw,
                  prepare("INSERT INTO research(id, file, title, date, status, agent_type, topics, key_findings, "
                          "actionable, needs_followup, confidence, file_checksum, archived, archived_at, created_at, "
                          "updated_at) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16) "
                          "ON CONFLICT(id) DO UPDATE SET file = excluded.file, title = excluded.title, "
                          "date = excluded.date, status = excluded.status, agent_type = excluded.agent_type, "
                          "topics = excluded.topics, key_findings = excluded.key_findings, "
                          "actionable = excluded.actionable, needs_followup = excluded.needs_followup, "
                          "confidence = excluded.confidence, file_checksum = excluded.file_checksum, "
                          "archived = excluded.archived, archived_at = excluded.archived_at, "
                          "updated_at = excluded.updated_at"));
    Statement stmt(raw);
    stmt.bind(1, entry.id).bind(2, entry.file).bind(3, entry.title).bind(4, entry.date);
    stmt.bind(5, std::string(to_string(entry.status))).bind(6, entry.agent_type);
    stmt.bind(7, encode_strings(entry.topics)).bind(8, encode_strings(entry.key_findings));
    stmt.bind(9, std::int64_t{entry.actionable ? 1 : 0}).bind(10, encode_strings(entry.needs_followup));
    if (entry.confidence) sqlite3_bind_double(stmt.get(), 11, *entry.confidence);
    else stmt.bind_null(11);
    stmt.bind(12, entry.file_checksum).bind(13, std::int64_t{entry.archived ? 1 : 0});
    std::optional<std::int64_t> archived_at;
    if (entry.archived_at) archived_at = static_cast<std::int64_t>(*entry.archived_at);
    stmt.bind(14, archived_at).bind(15, static_cast<std::int64_t>(entry.created_at));
    stmt.bind(16, static_cast<std::int64_t>(entry.updated_at));
    CT_TRY(finish(stmt, "cannot save the research entry"));
  }
  std::int64_t number = 0;
  {
    CT_TRY_ASSIGN(sqlite3_stmt* raw, prepare("SELECT num FROM research WHERE id = ?1"));
    Statement stmt(raw);
    stmt.bind(1, entry.id);
    CT_TRY_ASSIGN(bool row, step(stmt, "cannot save the research entry"));
    if (!row) return fail(ErrorCode::Internal, "research entry " + entry.id + " vanished while it was saved");
    number = stmt.integer(0);
  }
  {
    CT_TRY_ASSIGN(sqlite3_stmt* raw, prepare("DELETE FROM research_fts WHERE rowid = ?1"));
    Statement stmt(raw);
    stmt.bind(1, number);
    CT_TRY(finish(stmt, "cannot update the research index"));
  }
  {
    CT_TRY_ASSIGN(sqlite3_stmt* raw,
                  prepare("INSERT INTO research_fts(rowid, title, topics, key_findings) VALUES(?1, ?2, ?3, ?4)"));
    Statement stmt(raw);
    std::string findings;
    for (const auto& finding : entry.key_findings) findings += (findings.empty() ? "" : "\n") + finding;
    stmt.bind(1, number).bind(2, entry.title).bind(3, join_labels(entry.topics)).bind(4, findings);
    CT_TRY(finish(stmt, "cannot update the research index"));
  }
  {
    CT_TRY_ASSIGN(sqlite3_stmt* raw, prepare("DELETE FROM research_links WHERE research_id = ?1"));
    Statement stmt(raw);
    stmt.bind(1, entry.id);
    CT_TRY(finish(stmt, "cannot save the research links"));
  }
  CT_TRY_ASSIGN(sqlite3_stmt* raw,
                prepare("INSERT OR IGNORE INTO research_links(research_id, task_id, position) VALUES(?1, ?2, ?3)"));
  std::int64_t position = 0;
  for (const auto& task : entry.linked_tasks) {
    Statement stmt(raw);
    stmt.bind(1, entry.id).bind(2, task).bind(3, position++);
    CT_TRY(finish(stmt, "cannot save the research links"));
  }
  return {};
}

Result<std::vector<std::string>> SqliteStore::research_for_task(std::string_view task_id) {
  CT_TRY_ASSIGN(sqlite3_stmt* raw,
                prepare("SELECT research_id FROM research_links WHERE task_id = ?1 ORDER BY research_id"));
  Statement stmt(raw);
  stmt.bind(1, task_id);
  std::vector<std::string> out;
  CT_TRY(for_each_row(stmt, "cannot read research links", [&] { out.emplace_back(stmt.text(0)); }));
  return out;
}

Result<ResearchStats> SqliteStore::research_stats() {
  ResearchStats stats;
  {
    CT_TRY_ASSIGN(sqlite3_stmt* raw,
                  prepare("SELECT count(*), coalesce(sum(archived), 0), "
                          "coalesce(sum(archived = 0 AND actionable = 1), 0), "
                          "coalesce(sum(archived = 0 AND needs_followup <> '[]'), 0), "
                          "coalesce(sum(archived = 0 AND EXISTS (SELECT 1 FROM research_links l "
                          "WHERE l.research_id = research.id)), 0), "
                          "avg(CASE WHEN archived = 0 THEN confidence END) FROM research"));
    Statement stmt(raw);
    CT_TRY(step(stmt, "cannot count research entries"));
    stats.total = stmt.integer(0);
    stats.archived = stmt.integer(1);
    stats.actionable = stmt.integer(2);
    stats.pending = stmt.integer(3);
    stats.linked = stmt.integer(4);
    if (!stmt.is_null(5)) stats.average_confidence = stmt.real(5);
  }
  for (auto [column, target] : {std::pair{"status", &stats.by_status}, std::pair{"agent_type", &stats.by_agent_type}}) {
    CT_TRY_ASSIGN(sqlite3_stmt* raw, prepare(std::string("SELECT ") + column + ", count(*) FROM research "
                                             "WHERE archived = 0 GROUP BY 1 ORDER BY 1"));
    Statement stmt(raw);
    CT_TRY(for_each_row(stmt, "cannot count research entries",
                        [&] { (*target)[std::string(stmt.text(0))] = stmt.integer(1); }));
  }
  return stats;
}

Result<std::optional<ManifestCursor>> SqliteStore::get_manifest_cursor(std::string_view file) {
  CT_TRY_ASSIGN(sqlite3_stmt* raw,
                prepare("SELECT file, offset, lines, head_hash, synced_at FROM research_sync WHERE file = ?1"));
  Statement stmt(raw);
  stmt.bind(1, file);
  CT_TRY_ASSIGN(bool row, step(stmt, "cannot read the manifest cursor"));
  if (!row) return std::optional<ManifestCursor>();
  return std::optional<ManifestCursor>(ManifestCursor{std::string(stmt.text(0)), stmt.integer(1), stmt.integer(2),
                                                      std::string(stmt.text(3)), stmt.integer(4)});
}

Result<void> SqliteStore::put_manifest_cursor(const ManifestCursor& cursor) {
  CT_TRY_ASSIGN(sqlite3_stmt* raw, prepare("INSERT OR REPLACE INTO research_sync(file, offset, lines, head_hash, "
                                           "synced_at) VALUES(?1, ?2, ?3, ?4, ?5)"));
  Statement stmt(raw);
  stmt.bind(1, cursor.file).bind(2, cursor.offset).bind(3, cursor.lines).bind(4, cursor.head_hash);
  stmt.bind(5, static_cast<std::int64_t>(cursor.synced_at));
  return finish(stmt, "cannot save the manifest cursor");
}

Result<std::vector<LifecycleState>> SqliteStore::lifecycle_states(std::string_view subject, LifecycleKind kind) {
  CT_TRY_ASSIGN(sqlite3_stmt* raw, prepare("SELECT " + std::string(kLifecycleStateColumns) +
                                           " FROM lifecycle WHERE subject = ?1 AND kind = ?2"));
  Statement stmt(raw);
  stmt.bind(1, subject).bind(2, to_string(kind));
  std::vector<LifecycleState> out;
  CT_TRY(for_each_row(stmt, "cannot read lifecycle states",
                      [&] { out.push_back(read_lifecycle_state_row(stmt, subject, kind)); }));
  return out;
}

Result<void> SqliteStore::put_lifecycle(const LifecycleEvent& event) {
  const LifecycleState& s = event.state;
  return atomically([&]() -> Result<void> {
    {
      CT_TRY_ASSIGN(sqlite3_stmt* raw, prepare("INSERT OR REPLACE INTO lifecycle(subject, kind, name, status, at, "
                                               "agent, session, notes, evidence) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, "
                                               "?8, ?9)"));
      Statement stmt(raw);
      stmt.bind(1, s.subject).bind(2, to_string(s.kind)).bind(3, s.name).bind(4, s.status);
      stmt.bind(5, static_cast<std::int64_t>(s.at)).bind(6, s.agent).bind(7, s.session).bind(8, s.notes);
      stmt.bind(9, s.evidence);
      CT_TRY(finish(stmt, "cannot save the lifecycle state"));
    }
    CT_TRY_ASSIGN(sqlite3_stmt* raw, prepare("INSERT INTO lifecycle_events(subject, kind, name, from_status, status, "
                                             "at, agent, session, notes, evidence, operation) VALUES(?1, ?2, ?3, ?4, "
                                             "?5, ?6, ?7, ?8, ?9, ?10, ?11)"));
    Statement stmt(raw);
    stmt.bind(1, s.subject).bind(2, to_string(s.kind)).bind(3, s.name).bind(4, event.from).bind(5, s.status);
    stmt.bind(6, static_cast<std::int64_t>(s.at)).bind(7, s.agent).bind(8, s.session).bind(9, s.notes);
    stmt.bind(10, s.evidence).bind(11, event.operation);
    return finish(stmt, "cannot save the lifecycle history");
  });
}

Result<std::vector<LifecycleEvent>> SqliteStore::lifecycle_events(std::string_view subject, std::optional<LifecycleKind> kind,
                                                                  std::int64_t limit, std::int64_t offset) {
  CT_TRY_ASSIGN(sqlite3_stmt* raw,
                prepare("SELECT " + std::string(kLifecycleEventColumns) +
                        " FROM lifecycle_events WHERE subject = ?1 AND (?2 = '' OR kind = ?2) "
                        "ORDER BY seq DESC LIMIT ?3 OFFSET ?4"));
  Statement stmt(raw);
  stmt.bind(1, subject).bind(2, kind ? to_string(*kind) : std::string_view()).bind(3, limit).bind(4, offset);
  std::vector<LifecycleEvent> out;
  CT_TRY(for_each_row(stmt, "cannot read the lifecycle history",
                      [&] { out.push_back(read_lifecycle_event_row(stmt, subject)); }));
  return out;
}

Result<std::int64_t> SqliteStore::count_lifecycle_events(std::string_view subject, std::optional<LifecycleKind> kind) {
  CT_TRY_ASSIGN(sqlite3_stmt* raw, prepare("SELECT count(*) FROM lifecycle_events WHERE subject = ?1 "
                                           "AND (?2 = '' OR kind = ?2)"));
  Statement stmt(raw);
  stmt.bind(1, subject).bind(2, kind ? to_string(*kind) : std::string_view());
  CT_TRY(step(stmt, "cannot count the lifecycle history"));
  return stmt.integer(0);
}

}  // namespace ct::sqlite

// -- the shared roles' SQL ----------------------------------------------------------------------

namespace ct::sqlite {
namespace {
/// The row a statement stands on, for the shared roles.
class Cursor final : public sql::Cursor {
 public:
  explicit Cursor(sqlite3_stmt* stmt) : stmt_(stmt) {}
  std::string_view text(int column) const override { return column_text(stmt_, column); }
  std::optional<std::int64_t> optional_int(int column) const override { return column_optional_int(stmt_, column); }
  std::optional<double> optional_real(int column) const override {
    if (sqlite3_column_type(stmt_, column) == SQLITE_NULL) return std::nullopt;
    return sqlite3_column_double(stmt_, column);
  }

 private:
  sqlite3_stmt* stmt_;
};
}  // namespace

Result<void> SqliteStore::Runner::run(std::string_view sql, std::span<const sql::Value> args, std::string_view what,
                                      const std::function<void(const sql::Cursor&)>& on_row) {
  CT_TRY_ASSIGN(sqlite3_stmt* raw, store_.prepare(sql));
  Statement stmt(raw);
  for (std::size_t i = 0; i < args.size(); ++i) {
    const int index = static_cast<int>(i) + 1;
    const sql::Value& value = args[i];
    if (const auto* number = std::get_if<std::int64_t>(&value)) stmt.bind(index, *number);
    else if (const auto* real = std::get_if<double>(&value)) sqlite3_bind_double(raw, index, *real);
    else if (const auto* text = std::get_if<std::string>(&value)) stmt.bind(index, *text);
    else stmt.bind_null(index);
  }
  const Cursor cursor(raw);
  return store_.for_each_row(stmt, what, [&] {
    if (on_row) on_row(cursor);
  });
}

}  // namespace ct::sqlite
