// The PostgreSQL store, part: releases, the research manifest and lifecycle stages and gates.
// Mirrors engines/store/sqlite/sqlite_records.cpp; the research search vector is a generated column, so
// saving an entry needs no index upkeep.
#include "engines/store/postgres/pg_store_impl.h"

namespace ct::pg {
namespace {

// The linked tasks come last, as a JSON list in link order.
constexpr std::string_view kResearchColumns =
    "r.id, r.file, r.title, r.date, r.status, r.agent_type, r.topics, r.key_findings, r.actionable, "
    "r.needs_followup, r.confidence, r.file_checksum, r.archived, r.archived_at, r.created_at, r.updated_at, "
    "(SELECT coalesce(json_agg(l.task_id ORDER BY l.position)::text, '[]') FROM research_links l "
    "WHERE l.research_id = r.id)";

std::optional<std::int64_t> optional_time(const std::optional<TimeMs>& time) {
  if (!time) return std::nullopt;
  return static_cast<std::int64_t>(*time);
}

Result<std::vector<ResearchEntry>> read_research_rows(const Rows& rows) {
  std::vector<ResearchEntry> out;
  out.reserve(static_cast<std::size_t>(rows.size()));
  for (int i = 0; i < rows.size(); ++i) {
    CT_TRY_ASSIGN(ResearchEntry entry, read_research_row(rows.row(i)));
    out.push_back(std::move(entry));
  }
  return out;
}

void research_where(const ResearchQuery& query, std::string& where, Params& params) {
  sql::Where conditions{where, params};
  sql::append_research_filter(kDialect, query, conditions);
}


}  // namespace

Result<std::optional<Release>> PgStore::get_release(std::string_view version) {
  CT_TRY_ASSIGN(Rows rows, query(std::string(kReleaseSelect) + " WHERE version = $1", Params().add(version),
                                 "cannot read the release"));
  if (rows.empty()) return std::optional<Release>();
  CT_TRY_ASSIGN(Release release, read_release_row(rows.row(0)));
  return std::optional<Release>(std::move(release));
}

Result<std::vector<Release>> PgStore::list_releases() {
  CT_TRY_ASSIGN(Rows rows, query(std::string(kReleaseSelect) + " ORDER BY created_at DESC, version DESC",
                                 "cannot list releases"));
  std::vector<Release> out;
  out.reserve(static_cast<std::size_t>(rows.size()));
  for (int i = 0; i < rows.size(); ++i) {
    CT_TRY_ASSIGN(Release release, read_release_row(rows.row(i)));
    out.push_back(std::move(release));
  }
  return out;
}

Result<void> PgStore::put_release(const Release& release) {
  Params params;
  params.add(release.version).add(to_string(release.status)).add(encode_strings(release.tasks));
  params.add(release.notes).add(static_cast<std::int64_t>(release.created_at));
  params.add(static_cast<std::int64_t>(release.updated_at)).add(optional_time(release.released_at));
  params.add(release.tag).add(release.commit).add(std::int64_t{release.pushed ? 1 : 0}).add(release.remote);
  CT_TRY(query("INSERT INTO releases(version, status, tasks, notes, created_at, updated_at, released_at, tag, "
               "commit_sha, pushed, remote) VALUES($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) "
               "ON CONFLICT(version) DO UPDATE SET status = excluded.status, tasks = excluded.tasks, "
               "notes = excluded.notes, created_at = excluded.created_at, updated_at = excluded.updated_at, "
               "released_at = excluded.released_at, tag = excluded.tag, commit_sha = excluded.commit_sha, "
               "pushed = excluded.pushed, remote = excluded.remote",
               params, "cannot save the release"));
  return {};
}

Result<std::optional<ResearchEntry>> PgStore::get_research(std::string_view id) {
  CT_TRY_ASSIGN(Rows rows, query("SELECT " + std::string(kResearchColumns) + " FROM research r WHERE r.id = $1",
                                 Params().add(id), "cannot read the research entry"));
  if (rows.empty()) return std::optional<ResearchEntry>();
  CT_TRY_ASSIGN(ResearchEntry entry, read_research_row(rows.row(0)));
  return std::optional<ResearchEntry>(std::move(entry));
}

Result<std::vector<ResearchEntry>> PgStore::list_research(const ResearchQuery& research_query) {
  std::string where;
  Params params;
  research_where(research_query, where, params);
  std::string sql = "SELECT " + std::string(kResearchColumns) + " FROM research r" + where +
                    " ORDER BY r.date DESC, r.id";
  if (research_query.limit >= 0 || research_query.offset > 0) {
    sql += " LIMIT " + params.next();
    params.add(limit_value(research_query.limit));
    sql += " OFFSET " + params.next();
    params.add(std::max<std::int64_t>(0, research_query.offset));
  }
  CT_TRY_ASSIGN(Rows rows, query(sql, params, "cannot list research entries"));
  return read_research_rows(rows);
}

Result<std::int64_t> PgStore::count_research(const ResearchQuery& research_query) {
  std::string where;
  Params params;
  research_where(research_query, where, params);
  CT_TRY_ASSIGN(Rows rows, query("SELECT count(*) FROM research r" + where, params, "cannot count research entries"));
  return rows.empty() ? 0 : rows.integer(0, 0);
}

Result<void> PgStore::put_research(const ResearchEntry& entry) {
  // One statement: the entry (a new one numbered one past the largest, as SQLite's rowid; writers
  // are serialised) and its links. Links no longer listed go; the rest take their position, the
  // first place a task appears in the list (SQLite's INSERT OR IGNORE keeps the first). The two
  // touch different link rows, as one statement must.
  Params params;
  params.add(entry.id).add(entry.file).add(entry.title).add(entry.date);
  params.add(to_string(entry.status)).add(entry.agent_type);
  params.add(encode_strings(entry.topics)).add(encode_strings(entry.key_findings));
  params.add(std::int64_t{entry.actionable ? 1 : 0}).add(encode_strings(entry.needs_followup));
  params.add(entry.confidence).add(entry.file_checksum).add(std::int64_t{entry.archived ? 1 : 0});
  params.add(optional_time(entry.archived_at)).add(static_cast<std::int64_t>(entry.created_at));
  params.add(static_cast<std::int64_t>(entry.updated_at)).add(text_array(entry.linked_tasks));
  CT_TRY(query("WITH saved AS (INSERT INTO research(num, id, file, title, date, status, agent_type, topics, "
               "key_findings, actionable, needs_followup, confidence, file_checksum, archived, archived_at, "
               "created_at, updated_at) VALUES((SELECT coalesce(max(num), 0) + 1 FROM research), $1, $2, $3, $4, "
               "$5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16) "
               "ON CONFLICT(id) DO UPDATE SET file = excluded.file, title = excluded.title, "
               "date = excluded.date, status = excluded.status, agent_type = excluded.agent_type, "
               "topics = excluded.topics, key_findings = excluded.key_findings, "
               "actionable = excluded.actionable, needs_followup = excluded.needs_followup, "
               "confidence = excluded.confidence, file_checksum = excluded.file_checksum, "
               "archived = excluded.archived, archived_at = excluded.archived_at, "
               "updated_at = excluded.updated_at), "
               "unlinked AS (DELETE FROM research_links WHERE research_id = $1 AND task_id <> ALL($17::text[])) "
               "INSERT INTO research_links(research_id, task_id, position) "
               "SELECT $1, u.task_id, min(u.n) - 1 FROM unnest($17::text[]) WITH ORDINALITY AS u(task_id, n) "
               "GROUP BY u.task_id "
               "ON CONFLICT(research_id, task_id) DO UPDATE SET position = excluded.position",
               params, "cannot save the research entry"));
  return {};
}

Result<std::vector<std::string>> PgStore::research_for_task(std::string_view task_id) {
  CT_TRY_ASSIGN(Rows rows, query("SELECT research_id FROM research_links WHERE task_id = $1 ORDER BY research_id",
                                 Params().add(task_id), "cannot read research links"));
  std::vector<std::string> out;
  out.reserve(static_cast<std::size_t>(rows.size()));
  for (int i = 0; i < rows.size(); ++i) out.emplace_back(rows.text(i, 0));
  return out;
}

Result<ResearchStats> PgStore::research_stats() {
  ResearchStats stats;
  {
    CT_TRY_ASSIGN(Rows rows,
                  query("SELECT count(*), coalesce(sum(archived), 0), "
                        "count(*) FILTER (WHERE archived = 0 AND actionable = 1), "
                        "count(*) FILTER (WHERE archived = 0 AND needs_followup <> '[]'), "
                        "count(*) FILTER (WHERE archived = 0 AND EXISTS (SELECT 1 FROM research_links l "
                        "WHERE l.research_id = research.id)), "
                        "avg(confidence) FILTER (WHERE archived = 0) FROM research",
                        "cannot count research entries"));
    if (rows.empty()) return fail(ErrorCode::Internal, "SELECT count(*) returned no row");
    stats.total = rows.integer(0, 0);
    stats.archived = rows.integer(0, 1);
    stats.actionable = rows.integer(0, 2);
    stats.pending = rows.integer(0, 3);
    stats.linked = rows.integer(0, 4);
    stats.average_confidence = rows.optional_real(0, 5);
  }
  CT_TRY_ASSIGN(Rows rows, query("SELECT 's', status, count(*) FROM research WHERE archived = 0 GROUP BY status "
                                 "UNION ALL SELECT 'a', agent_type, count(*) FROM research WHERE archived = 0 "
                                 "GROUP BY agent_type",
                                 "cannot count research entries"));
  for (int i = 0; i < rows.size(); ++i) {
    auto& target = rows.text(i, 0) == "s" ? stats.by_status : stats.by_agent_type;
    target[std::string(rows.text(i, 1))] = rows.integer(i, 2);
  }
  return stats;
}

Result<std::optional<ManifestCursor>> PgStore::get_manifest_cursor(std::string_view file) {
  CT_TRY_ASSIGN(Rows rows, query("SELECT file, \"offset\", lines, head_hash, synced_at FROM research_sync "
                                 "WHERE file = $1",
                                 Params().add(file), "cannot read the manifest cursor"));
  if (rows.empty()) return std::optional<ManifestCursor>();
  return std::optional<ManifestCursor>(ManifestCursor{std::string(rows.text(0, 0)), rows.integer(0, 1),
                                                      rows.integer(0, 2), std::string(rows.text(0, 3)),
                                                      rows.integer(0, 4)});
}

Result<void> PgStore::put_manifest_cursor(const ManifestCursor& cursor) {
  Params params;
  params.add(cursor.file).add(cursor.offset).add(cursor.lines).add(cursor.head_hash);
  params.add(static_cast<std::int64_t>(cursor.synced_at));
  CT_TRY(query("INSERT INTO research_sync(file, \"offset\", lines, head_hash, synced_at) VALUES($1, $2, $3, $4, $5) "
               "ON CONFLICT(file) DO UPDATE SET \"offset\" = excluded.\"offset\", lines = excluded.lines, "
               "head_hash = excluded.head_hash, synced_at = excluded.synced_at",
               params, "cannot save the manifest cursor"));
  return {};
}

Result<std::vector<LifecycleState>> PgStore::lifecycle_states(std::string_view subject, LifecycleKind kind) {
  // By name: the order SQLite's primary-key lookup gives.
  CT_TRY_ASSIGN(Rows rows, query("SELECT " + std::string(kLifecycleStateColumns) +
                                     " FROM lifecycle WHERE subject = $1 AND kind = $2 ORDER BY name",
                                 Params().add(subject).add(to_string(kind)), "cannot read lifecycle states"));
  std::vector<LifecycleState> out;
  out.reserve(static_cast<std::size_t>(rows.size()));
  for (int i = 0; i < rows.size(); ++i) out.push_back(read_lifecycle_state_row(rows.row(i), subject, kind));
  return out;
}

Result<void> PgStore::put_lifecycle(const LifecycleEvent& event) {
  // The state and its history row in one statement; seq one past the largest (writers are serialised).
  const LifecycleState& s = event.state;
  Params params;
  params.add(s.subject).add(to_string(s.kind)).add(s.name).add(s.status).add(static_cast<std::int64_t>(s.at));
  params.add(s.agent).add(s.session).add(s.notes).add(s.evidence).add(event.from).add(event.operation);
  CT_TRY(query("WITH state AS (INSERT INTO lifecycle(subject, kind, name, status, at, agent, session, notes, "
               "evidence) VALUES($1, $2, $3, $4, $5, $6, $7, $8, $9) "
               "ON CONFLICT(subject, kind, name) DO UPDATE SET status = excluded.status, at = excluded.at, "
               "agent = excluded.agent, session = excluded.session, notes = excluded.notes, "
               "evidence = excluded.evidence) "
               "INSERT INTO lifecycle_events(seq, subject, kind, name, from_status, status, at, agent, session, "
               "notes, evidence, operation) VALUES((SELECT coalesce(max(seq), 0) + 1 FROM lifecycle_events), "
               "$1, $2, $3, $10, $4, $5, $6, $7, $8, $9, $11)",
               params, "cannot save the lifecycle state"));
  return {};
}

Result<std::vector<LifecycleEvent>> PgStore::lifecycle_events(std::string_view subject, std::optional<LifecycleKind> kind,
                                                              std::int64_t limit, std::int64_t offset) {
  Params params;
  params.add(subject).add(kind ? to_string(*kind) : std::string_view()).add(limit_value(limit));
  params.add(std::max<std::int64_t>(0, offset));
  CT_TRY_ASSIGN(Rows rows,
                query("SELECT " + std::string(kLifecycleEventColumns) +
                          " FROM lifecycle_events WHERE subject = $1 AND ($2::text = '' OR kind = $2::text) "
                      "ORDER BY seq DESC LIMIT $3 OFFSET $4",
                      params, "cannot read the lifecycle history"));
  std::vector<LifecycleEvent> out;
  out.reserve(static_cast<std::size_t>(rows.size()));
  for (int i = 0; i < rows.size(); ++i) out.push_back(read_lifecycle_event_row(rows.row(i), subject));
  return out;
}

Result<std::int64_t> PgStore::count_lifecycle_events(std::string_view subject, std::optional<LifecycleKind> kind) {
  CT_TRY_ASSIGN(Rows rows, query("SELECT count(*) FROM lifecycle_events WHERE subject = $1 "
                                 "AND ($2::text = '' OR kind = $2::text)",
                                 Params().add(subject).add(kind ? to_string(*kind) : std::string_view()),
                                 "cannot count the lifecycle history"));
  return rows.empty() ? 0 : rows.integer(0, 0);
}

}  // namespace ct::pg

// -- the shared roles' SQL ----------------------------------------------------------------------

namespace ct::pg {
namespace {
/// One row of a result, for the shared roles.
class Cursor final : public sql::Cursor {
 public:
  Cursor(const Rows& rows, int row) : rows_(rows), row_(row) {}
  std::string_view text(int column) const override { return rows_.text(row_, column); }
  std::optional<std::int64_t> optional_int(int column) const override { return rows_.optional_int(row_, column); }
  std::optional<double> optional_real(int column) const override { return rows_.optional_real(row_, column); }

 private:
  const Rows& rows_;
  int row_;
};
}  // namespace

Result<void> PgStore::Runner::run(std::string_view sql, std::span<const sql::Value> args, std::string_view what,
                                  const std::function<void(const sql::Cursor&)>& on_row) {
  auto found = translated_.find(std::string(sql));
  if (found == translated_.end()) found = translated_.emplace(std::string(sql), sql::dollar_placeholders(sql)).first;
  Params params;
  for (const auto& value : args) {
    if (const auto* number = std::get_if<std::int64_t>(&value)) params.add(*number);
    else if (const auto* real = std::get_if<double>(&value)) params.add(*real);
    else if (const auto* text = std::get_if<std::string>(&value)) params.add(*text);
    else params.add_null();
  }
  CT_TRY_ASSIGN(Rows rows, store_.query(found->second, params, what));
  if (on_row)
    for (int i = 0; i < rows.size(); ++i) on_row(Cursor(rows, i));
  return {};
}

}  // namespace ct::pg
