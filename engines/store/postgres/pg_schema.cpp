// The PostgreSQL schema: the SQLite backend's tables and columns (engines/store/sqlite/sqlite_schema.cpp) under
// the same names, so that a store is copied between the two column by column; BIGINT for
// SQLite's INTEGER, DOUBLE PRECISION for REAL, every TEXT in byte order (COLLATE "C", as SQLite
// compares), and a generated tsvector column with a GIN index instead of the FTS5 tables.
#include <string>

#include "engines/store/postgres/pg_store_impl.h"
#include "engines/store/schema_ddl.h"

namespace ct::pg {
namespace {

// The tables this backend writes its own way; the rest are engines/store/schema_ddl.h's, translated.
// tasks with their search vector and the indexes of tree order (NULLS FIRST). The search vector of
// a task: title (A) › labels (B) › description (C) › notes (D); labels and notes are JSON lists, of
// which only the string values are words. fold() (fold_function_sql()) takes accents off first, as
// SQLite's tokenizer does.
constexpr std::string_view kTasks = R"sql(
CREATE TABLE tasks(
  num BIGINT PRIMARY KEY,
  id TEXT NOT NULL UNIQUE,
  title TEXT NOT NULL,
  description TEXT NOT NULL DEFAULT '',
  status TEXT NOT NULL,
  priority TEXT NOT NULL,
  type TEXT NOT NULL,
  parent TEXT,
  position BIGINT NOT NULL,
  depends TEXT NOT NULL DEFAULT '[]',
  labels TEXT NOT NULL DEFAULT '[]',
  acceptance TEXT NOT NULL DEFAULT '[]',
  files TEXT NOT NULL DEFAULT '[]',
  notes TEXT NOT NULL DEFAULT '[]',
  relates TEXT NOT NULL DEFAULT '[]',
  phase TEXT NOT NULL DEFAULT '',
  size TEXT NOT NULL DEFAULT '',
  blocked_by TEXT NOT NULL DEFAULT '',
  created_at BIGINT NOT NULL,
  updated_at BIGINT NOT NULL,
  completed_at BIGINT,
  cancelled_at BIGINT,
  cancellation_reason TEXT NOT NULL DEFAULT '',
  archived BIGINT NOT NULL DEFAULT 0,
  archived_at BIGINT,
  archive_reason TEXT NOT NULL DEFAULT '',
  version BIGINT NOT NULL DEFAULT 1,
  search tsvector GENERATED ALWAYS AS (
    setweight(to_tsvector('simple', fold(title)), 'A') ||
    setweight(jsonb_to_tsvector('simple', fold(labels)::jsonb, '["string"]'), 'B') ||
    setweight(to_tsvector('simple', fold(description)), 'C') ||
    setweight(jsonb_to_tsvector('simple', fold(notes)::jsonb, '["string"]'), 'D')) STORED
);
-- NULLS FIRST: root tasks lead, as SQLite sorts NULL (order_by()); an index in another NULL order
-- cannot serve the tree order, and a page of 50 then sorts every task of the status (54 ms at 100k).
CREATE INDEX tasks_parent_position ON tasks(parent NULLS FIRST, position);
CREATE INDEX tasks_status_priority ON tasks(status, archived, priority, position, created_at);
CREATE INDEX tasks_status_tree ON tasks(status, archived, parent NULLS FIRST, position);
CREATE INDEX tasks_status_updated ON tasks(status, archived, updated_at DESC);
CREATE INDEX tasks_status_rank ON tasks(status, archived,
  (CASE priority WHEN 'critical' THEN 4 WHEN 'high' THEN 3 WHEN 'medium' THEN 2 ELSE 1 END) DESC, position);
CREATE INDEX tasks_status_created ON tasks(status, archived, created_at DESC);
CREATE INDEX tasks_search ON tasks USING GIN(search);
)sql";

// What this backend adds to the shared tables: the change stamp, an index of the audit trail by
// time, and `ord`, which numbers the audit changes in the order written (SQLite's rowid).
constexpr std::string_view kOwnRows = R"sql(
INSERT INTO meta(key, value) VALUES('change_stamp', '0');
CREATE INDEX audit_at ON audit(at);
ALTER TABLE audit_changes ADD COLUMN ord BIGSERIAL PRIMARY KEY;
)sql";

// research entries with their search vector.
constexpr std::string_view kResearch = R"sql(
CREATE TABLE research(
  num BIGINT PRIMARY KEY,
  id TEXT NOT NULL UNIQUE,
  file TEXT NOT NULL,
  title TEXT NOT NULL,
  date TEXT NOT NULL,
  status TEXT NOT NULL,
  agent_type TEXT NOT NULL,
  topics TEXT NOT NULL DEFAULT '[]',
  key_findings TEXT NOT NULL DEFAULT '[]',
  actionable BIGINT NOT NULL DEFAULT 0,
  needs_followup TEXT NOT NULL DEFAULT '[]',
  confidence DOUBLE PRECISION,
  file_checksum TEXT NOT NULL DEFAULT '',
  archived BIGINT NOT NULL DEFAULT 0,
  archived_at BIGINT,
  created_at BIGINT NOT NULL,
  updated_at BIGINT NOT NULL,
  search tsvector GENERATED ALWAYS AS (
    setweight(to_tsvector('simple', fold(title)), 'A') ||
    setweight(jsonb_to_tsvector('simple', fold(topics)::jsonb, '["string"]'), 'B') ||
    setweight(jsonb_to_tsvector('simple', fold(key_findings)::jsonb, '["string"]'), 'C')) STORED
);
CREATE INDEX research_archived_date ON research(archived, date, id);
CREATE INDEX research_search ON research USING GIN(search);
)sql";

/// A table of engines/store/schema_ddl.h in this dialect: BIGINT for INTEGER, DOUBLE PRECISION for
/// REAL, no WITHOUT ROWID (a PostgreSQL table is a heap with its key in an index), `offset`
/// quoted (a reserved word here).
std::string translated(std::string_view neutral) {
  std::string out(neutral);
  auto replace_all = [&](std::string_view from, std::string_view to) {
    for (auto at = out.find(from); at != std::string::npos; at = out.find(from, at + to.size()))
      out.replace(at, from.size(), to);
  };
  replace_all(" INTEGER", " BIGINT");
  replace_all(" REAL", " DOUBLE PRECISION");
  replace_all(") WITHOUT ROWID;", ");");
  replace_all("\n  offset ", "\n  \"offset\" ");
  return out;
}

// Every TEXT column compares as bytes, as SQLite's BINARY collation does.
std::string with_byte_order(std::string_view sql) {
  std::string out;
  out.reserve(sql.size() + 2048);
  std::size_t pos = 0;
  while (true) {
    auto found = sql.find(" TEXT", pos);
    if (found == std::string_view::npos) break;
    out.append(sql.substr(pos, found - pos));
    out += " TEXT COLLATE \"C\"";
    pos = found + 5;
  }
  out.append(sql.substr(pos));
  return out;
}

}  // namespace

std::string fold_function_sql(const std::optional<std::string>& unaccent_schema) {
  std::string body = "SELECT $1";
  if (unaccent_schema) {
    const std::string schema = quote_identifier(*unaccent_schema);
    std::string dictionary = *unaccent_schema + ".unaccent";
    std::string literal = "'";
    for (char c : dictionary) literal += c == '\'' ? std::string("''") : std::string(1, c);
    literal += "'";
    body = "SELECT " + schema + ".unaccent(" + literal + "::regdictionary, $1)";
  }
  return "CREATE FUNCTION fold(text) RETURNS text LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $fold$" + body +
         "$fold$";
}

std::string_view schema_sql() {
  static const std::string sql = with_byte_order(
      translated(ddl::kMeta) + std::string(kTasks) + translated(ddl::kTaskDeps) + translated(ddl::kFocus) +
      translated(ddl::kOneClaim) + translated(ddl::kAudit) + translated(ddl::kAuditHash) + std::string(kOwnRows) +
      translated(ddl::kIdempotency) + translated(ddl::kSessions) + translated(ddl::kCompliance) +
      translated(ddl::kReleases) + std::string(kResearch) + translated(ddl::kResearchLinks) +
      translated(ddl::kResearchSync) + translated(ddl::kLifecycle) + translated(ddl::kMemory) + translated(ddl::kTrust) +
      translated(ddl::kPlans) + translated(ddl::kPrincipals) + translated(ddl::kFleet) +
      translated(ddl::kReservations) + translated(ddl::kMessages) + translated(ddl::kCatalogue) +
      translated(ddl::kTrackers) + translated(ddl::kSessionTree) +
      translated(ddl::kAttestation) + translated(ddl::kPlanWatermarks) + std::string(ddl::kMemoryTotal));
  return sql;
}

// The PostgreSQL backend started at the data model of version 9 (SQLite's version 9 only moved its
// own search index): one step creates the whole current model; a store made before a later
// version gets that version's step.
std::vector<MigrationStep> schema_steps() {
  return {{9, "tasks, dependencies, search (tsvector), focus, audit trail, idempotency keys, sessions, compliance, "
              "releases, research, lifecycle — the data model of schema version 9"},
          {10, "project memory: entries, the keys that find them, their use (the memory domain)"},
          {11, "trust: the intent of audited writes, evidence of tasks, proposals awaiting a person"},
          {12, "plans: changes staged apart from the tasks, committed at once or discarded"},
          {13, "principals: who made each audited write, which caller owns each session"},
          {14, "the fleet: the worktree and branch of each session, the worktrees made for tasks, the paths claims reserve"},
          {15, "the governed catalogue of memory entries and skills; child sessions and named plans; tracker sync: "
               "the external item each linked task is; attestation of memory's constraints, hosts' session ids, turns"},
          {16, "the whole terms of the search index (SQLite's FTS5; PostgreSQL's search needs nothing new)"},
          {17, "plans rest on the audit trail's last change, each change keeping its task's version"},
          {18, "how many memory entries there are, kept, so that a memory find does not count them"}};
}

std::vector<SchemaUpgrade> schema_upgrades() {
  static const std::string memory = with_byte_order(translated(ddl::kMemory));
  static const std::string trust = with_byte_order(translated(ddl::kTrust));
  static const std::string plans = with_byte_order(translated(ddl::kPlans));
  static const std::string principals = with_byte_order(translated(ddl::kPrincipals));
  static const std::string fleet =
      with_byte_order(translated(ddl::kFleet) + translated(ddl::kReservations) + translated(ddl::kMessages));
  static const std::string v15 = with_byte_order(translated(ddl::kCatalogue) + translated(ddl::kTrackers) +
                                                 translated(ddl::kSessionTree) + translated(ddl::kAttestation));
  // v16 (issue 56) is SQLite's alone: a table of the terms its FTS5 index holds, so that a search
  // streams the newest matches. PostgreSQL's GIN index needs no such table; its step only moves the
  // version, so that both backends stay at the same one.
  static const std::string v16 = "SELECT 1";
  static const std::string v17 = with_byte_order(translated(ddl::kPlanWatermarks));
  // v18 (issue 56): the memory entries' total, kept (ddl::kMemoryTotal), on both backends alike.
  static const std::string v18(ddl::kMemoryTotal);
  return {{10, memory}, {11, trust}, {12, plans}, {13, principals}, {14, fleet}, {15, v15}, {16, v16}, {17, v17}, {18, v18}};
}

}  // namespace ct::pg
