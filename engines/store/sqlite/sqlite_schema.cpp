#include "engines/store/sqlite/sqlite_schema.h"

#include <array>
#include <initializer_list>
#include <string>
#include <string_view>

#include "engines/store/schema_ddl.h"

namespace ct::sqlite {
namespace {

// All pending steps run in one BEGIN IMMEDIATE transaction together with the new PRAGMA
// user_version, so a crash leaves the old version intact.

constexpr std::string_view kTasksV1 = R"sql(
CREATE TABLE tasks(
  num INTEGER PRIMARY KEY,
  id TEXT NOT NULL UNIQUE,
  title TEXT NOT NULL,
  description TEXT NOT NULL DEFAULT '',
  status TEXT NOT NULL,
  priority TEXT NOT NULL,
  type TEXT NOT NULL,
  parent TEXT,
  position INTEGER NOT NULL,
  depends TEXT NOT NULL DEFAULT '[]',
  labels TEXT NOT NULL DEFAULT '[]',
  acceptance TEXT NOT NULL DEFAULT '[]',
  files TEXT NOT NULL DEFAULT '[]',
  notes TEXT NOT NULL DEFAULT '[]',
  relates TEXT NOT NULL DEFAULT '[]',
  phase TEXT NOT NULL DEFAULT '',
  size TEXT NOT NULL DEFAULT '',
  blocked_by TEXT NOT NULL DEFAULT '',
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  completed_at INTEGER,
  cancelled_at INTEGER,
  cancellation_reason TEXT NOT NULL DEFAULT '',
  archived INTEGER NOT NULL DEFAULT 0,
  archived_at INTEGER,
  archive_reason TEXT NOT NULL DEFAULT '',
  version INTEGER NOT NULL DEFAULT 1
);
CREATE INDEX tasks_parent_position ON tasks(parent, position);
-- Serves status filters and, in tasks.next, walks one priority group in position order.
CREATE INDEX tasks_status_priority ON tasks(status, archived, priority, position, created_at);
)sql";
constexpr std::string_view kSearchV1 = R"sql(
CREATE VIRTUAL TABLE tasks_fts USING fts5(
  title, description, labels, notes,
  tokenize = 'unicode61 remove_diacritics 2'
);
)sql";

// v2: the audit hash chain (ddl::kAuditHash; hashes of rows written before v2 are filled in by
// migrate()) and idempotency keys.

// v3: sessions, and the atomic claim (ddl::kOneClaim). Duplicate focus rows (impossible before
// sessions existed) are dropped first.
constexpr std::string_view kOneFocusV3 = R"sql(
DELETE FROM focus WHERE rowid NOT IN (SELECT min(rowid) FROM focus GROUP BY task_id);
)sql";

// v4: protocol-check results (validate.compliance.record), summarised per check and over time:
// ddl::kCompliance.
// v5: releases (the release domain): the version, its status and tasks, and what ship and tag did
// in git (tag, commit, pushed to which remote) so that release.rollback can undo it: ddl::kReleases.

// v6: the research manifest (the research domain): agent outputs with their findings, the tasks
// they are linked to (one row per link, so a task finds its entries through an index), a search
// index over title, topics and key findings, and how far research.sync has read MANIFEST.jsonl.
// (with ddl::kResearchLinks, then the search index, then ddl::kResearchSync)
constexpr std::string_view kResearchV6 = R"sql(
CREATE TABLE research(
  num INTEGER PRIMARY KEY,
  id TEXT NOT NULL UNIQUE,
  file TEXT NOT NULL,
  title TEXT NOT NULL,
  date TEXT NOT NULL,
  status TEXT NOT NULL,
  agent_type TEXT NOT NULL,
  topics TEXT NOT NULL DEFAULT '[]',
  key_findings TEXT NOT NULL DEFAULT '[]',
  actionable INTEGER NOT NULL DEFAULT 0,
  needs_followup TEXT NOT NULL DEFAULT '[]',
  confidence REAL,
  file_checksum TEXT NOT NULL DEFAULT '',
  archived INTEGER NOT NULL DEFAULT 0,
  archived_at INTEGER,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
CREATE INDEX research_archived_date ON research(archived, date, id);
)sql";
constexpr std::string_view kResearchSearchV6 = R"sql(
CREATE VIRTUAL TABLE research_fts USING fts5(
  title, topics, key_findings,
  tokenize = 'unicode61 remove_diacritics 2'
);
)sql";

// v7: lifecycle stages of epics and verification gates of tasks (the lifecycle domain): the
// current state of each, and the history of every change with who made it and why: ddl::kLifecycle.

// Lists of one status in tree order, by change or creation newest first, or by priority most
// urgent first (what a dashboard's board shows per status): walked in order and cut at the page,
// instead of sorting every row of that status (40–60 ms at 100k tasks). The sort keys descend so
// that ties come in tree order, oldest first, as order_by() breaks them; the priority expression
// is order_by()'s, character for character (SQLite uses an expression index only then).
constexpr std::string_view kSchemaV8 = R"sql(
CREATE INDEX tasks_status_tree ON tasks(status, archived, parent, position);
CREATE INDEX tasks_status_updated ON tasks(status, archived, updated_at DESC);
CREATE INDEX tasks_status_rank ON tasks(status, archived,
  (CASE priority WHEN 'critical' THEN 4 WHEN 'high' THEN 3 WHEN 'medium' THEN 2 ELSE 1 END) DESC, position);
CREATE INDEX tasks_status_created ON tasks(status, archived, created_at DESC);
)sql";

// v9: the search index is written behind the tasks (issue 32). A write that adds a task or changes
// its text notes the task here, in its own transaction; every kIndexBatch notes are folded into
// tasks_fts at once (one FTS5 segment for the batch instead of one per write). Searches skip the
// index rows of noted tasks and read the noted tasks themselves, so they see every committed one.
constexpr std::string_view kIndexTailV9 = R"sql(
CREATE TABLE tasks_fts_tail(num INTEGER PRIMARY KEY);
)sql";

// v10: project memory (the memory domain, issue 34): ddl::kMemory.
// v11: trust (issue 35): the intent of audited writes, evidence, proposals: ddl::kTrust.
// v12: plans (issue 36): staged changes committed at once: ddl::kPlans.
// v13: principals (issue 52): who made each write, who owns each session: ddl::kPrincipals.
// v14: the fleet in git worktrees (issue 53): where each session runs, the worktrees of tasks: ddl::kFleet;
//      the paths claims reserve: ddl::kReservations; messages between agents and people: ddl::kMessages.
// v15: the governed catalogue of memory entries and skills (issue 54): ddl::kCatalogue; tracker sync
//      (issue 55): which task each external item is, each repository's cursor: ddl::kTrackers.
//      Child sessions and named plans (issue 54, seed 002): ddl::kSessionTree.
//      Attestation of memory's constraints, hosts' session ids, turns (issue 54, seed 000): ddl::kAttestation.
// v17: plans rest on a watermark of the audit trail, each audited change keeps its task's version
//      (issue 56): ddl::kPlanWatermarks.

// v16: the whole terms of the search index (issue 56). A prefix query ("schema"*) makes FTS5 merge
// the postings of every term it matches before the first row comes back: linear in the matches. A
// search asks instead for the terms themselves, found here ("schema" OR "schemas"), which FTS5
// streams newest first and stops at the ranking window. The table holds every term of tasks_fts
// (and may hold terms no longer there: a stale term matches nothing) while the row '' says so; a
// write that cannot keep it removes that row and searches fall back to prefix queries until the
// next fold rebuilds it (kRebuildIndexTerms).
constexpr std::string_view kIndexTermsV16 = R"sql(
CREATE TABLE tasks_fts_terms(term TEXT PRIMARY KEY) WITHOUT ROWID;
)sql";

/// A step's SQL from its parts, the tables of engines/store/schema_ddl.h among them.
std::string joined(std::initializer_list<std::string_view> parts) {
  std::string sql;
  for (auto part : parts) sql += part;
  return sql;
}

}  // namespace

std::span<const Migration> schema_steps() {
  // Never destroyed: freeing the steps' DDL at exit cost every process that opened a store
  // ~75,000 instructions (issue 56); its memory goes back whole when the process ends.
  static const auto* const steps = new std::array<Migration, 18>{{
      {1, joined({ddl::kMeta, kTasksV1, ddl::kTaskDeps, kSearchV1, ddl::kFocus, ddl::kAudit}), "tasks",
       "tasks, dependencies, search index, focus and the audit trail"},
      {2, joined({ddl::kAuditHash, ddl::kIdempotency}), "idempotency",
       "audit hash chain (existing rows are chained) and idempotency keys"},
      {3, joined({ddl::kSessions, kOneFocusV3, ddl::kOneClaim}), "sessions",
       "sessions, and one session per focused task (the atomic claim)"},
      {4, joined({ddl::kCompliance}), "compliance",
       "protocol-check results (validate.compliance)"},
      {5, joined({ddl::kReleases}), "releases",
       "releases (the release domain)"},
      {6, joined({kResearchV6, ddl::kResearchLinks, kResearchSearchV6, ddl::kResearchSync}), "research",
       "the research manifest (the research domain)"},
      {7, joined({ddl::kLifecycle}), "lifecycle",
       "lifecycle stages and verification gates"},
      {8, joined({kSchemaV8}), "tasks_status_created",
       "indexes for lists of a status in tree order, by change, creation or priority"},
      {9, joined({kIndexTailV9}), "tasks_fts_tail",
       "the search index written behind the tasks, in batches"},
      {10, joined({ddl::kMemory}), "memory",
       "project memory: entries, the keys that find them, their use (the memory domain)"},
      {11, joined({ddl::kTrust}), "evidence",
       "trust: the intent of audited writes, evidence of tasks, proposals awaiting a person"},
      {12, joined({ddl::kPlans}), "plans",
       "plans: changes staged apart from the tasks, committed at once or discarded"},
      {13, joined({ddl::kPrincipals}), "sessions_owner",
       "principals: who made each audited write, which caller owns each session"},
      {14, joined({ddl::kFleet, ddl::kReservations, ddl::kMessages}), "task_worktrees",
       "the fleet: where each session works, the worktrees made for tasks, the paths claims reserve, messages"},
      {15, joined({ddl::kCatalogue, ddl::kTrackers, ddl::kSessionTree, ddl::kAttestation}), "catalogue",
       "the governed catalogue of memory entries and skills; child sessions and named plans; tracker sync: the "
       "external item each linked task is; attestation of memory's constraints, hosts' session ids, turns"},
      {16, joined({kIndexTermsV16, kRebuildIndexTerms}), "tasks_fts_terms",
       "the whole terms of the search index, so that a search streams the newest matches"},
      {17, joined({ddl::kPlanWatermarks}), "plans_since",
       "plans rest on the audit trail's last change, each change keeping its task's version"},
      // v18 (issue 56) creates no table: it fills a row (ddl::kMemoryTotal).
      {18, joined({ddl::kMemoryTotal}), nullptr,
       "how many memory entries there are, kept, so that a memory find does not count them"},
  }};
  return *steps;
}

}  // namespace ct::sqlite
