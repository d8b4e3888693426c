#include "engines/store/sqlite/sqlite_schema.h"

#include <array>

namespace ct::sqlite {
namespace {

// All pending steps run in one BEGIN IMMEDIATE transaction together with the new PRAGMA
// user_version, so a crash leaves the old version intact.

constexpr const char* kSchemaV1 = R"sql(
CREATE TABLE meta(
  key TEXT PRIMARY KEY,
  value TEXT NOT NULL
);
INSERT INTO meta(key, value) VALUES('next_task_num', '1');

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

CREATE TABLE task_deps(
  task_id TEXT NOT NULL,
  depends_on TEXT NOT NULL,
  PRIMARY KEY(task_id, depends_on)
) WITHOUT ROWID;
CREATE INDEX task_deps_depends_on ON task_deps(depends_on);

CREATE VIRTUAL TABLE tasks_fts USING fts5(
  title, description, labels, notes,
  tokenize = 'unicode61 remove_diacritics 2'
);

CREATE TABLE focus(
  session TEXT PRIMARY KEY,
  task_id TEXT NOT NULL
);

-- Rows are never deleted, so a plain rowid is as monotonic as AUTOINCREMENT without its
-- extra page write per mutation.
CREATE TABLE audit(
  seq INTEGER PRIMARY KEY,
  at INTEGER NOT NULL,
  session TEXT NOT NULL DEFAULT '',
  agent TEXT NOT NULL DEFAULT '',
  operation TEXT NOT NULL,
  task_id TEXT NOT NULL DEFAULT '',
  params TEXT NOT NULL DEFAULT '{}',
  outcome TEXT NOT NULL,
  reason TEXT NOT NULL DEFAULT ''
);
CREATE INDEX audit_task ON audit(task_id, seq);

CREATE TABLE audit_changes(
  seq INTEGER NOT NULL REFERENCES audit(seq),
  task_id TEXT NOT NULL,
  field TEXT NOT NULL,
  before TEXT,
  after TEXT
);
CREATE INDEX audit_changes_task_field ON audit_changes(task_id, field, seq);
CREATE INDEX audit_changes_seq ON audit_changes(seq);
)sql";

// v2: the audit hash chain (hashes of rows written before v2 are filled in by migrate()) and
// idempotency keys.
constexpr const char* kSchemaV2 = R"sql(
ALTER TABLE audit ADD COLUMN hash TEXT NOT NULL DEFAULT '';

CREATE TABLE idempotency(
  key TEXT PRIMARY KEY,
  operation TEXT NOT NULL,
  params TEXT NOT NULL,
  reply TEXT NOT NULL,
  at INTEGER NOT NULL
) WITHOUT ROWID;
CREATE INDEX idempotency_at ON idempotency(at);
)sql";

// v3: sessions, and the atomic claim — a task is focused by at most one session. Writers are
// serialised by BEGIN IMMEDIATE and tasks.start checks the holder first; the unique index is the
// last line of defence. Duplicate focus rows (impossible before sessions existed) are dropped first.
constexpr const char* kSchemaV3 = R"sql(
CREATE TABLE sessions(
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL DEFAULT '',
  scope TEXT NOT NULL,
  agent TEXT NOT NULL DEFAULT '',
  status TEXT NOT NULL,
  note TEXT NOT NULL DEFAULT '',
  next_action TEXT NOT NULL DEFAULT '',
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  ended_at INTEGER,
  archived_at INTEGER
) WITHOUT ROWID;
CREATE INDEX sessions_status_updated ON sessions(status, updated_at);

DELETE FROM focus WHERE rowid NOT IN (SELECT min(rowid) FROM focus GROUP BY task_id);
CREATE UNIQUE INDEX focus_task ON focus(task_id);
)sql";

// v4: protocol-check results (validate.compliance.record), summarised per check and over time.
constexpr const char* kSchemaV4 = R"sql(
CREATE TABLE compliance(
  id INTEGER PRIMARY KEY,
  at INTEGER NOT NULL,
  task_id TEXT NOT NULL DEFAULT '',
  check_name TEXT NOT NULL,
  passed INTEGER NOT NULL,
  score INTEGER,
  details TEXT NOT NULL DEFAULT '',
  session TEXT NOT NULL DEFAULT '',
  agent TEXT NOT NULL DEFAULT ''
);
CREATE INDEX compliance_check_at ON compliance(check_name, at);
CREATE INDEX compliance_task_at ON compliance(task_id, at);
CREATE INDEX compliance_at ON compliance(at);
)sql";

// v5: releases (the release domain): the version, its status and tasks, and what ship and tag did
// in git (tag, commit, pushed to which remote) so that release.rollback can undo it.
constexpr const char* kSchemaV5 = R"sql(
CREATE TABLE releases(
  version TEXT PRIMARY KEY,
  status TEXT NOT NULL,
  tasks TEXT NOT NULL DEFAULT '[]',
  notes TEXT NOT NULL DEFAULT '',
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  released_at INTEGER,
  tag TEXT NOT NULL DEFAULT '',
  commit_sha TEXT NOT NULL DEFAULT '',
  pushed INTEGER NOT NULL DEFAULT 0,
  remote TEXT NOT NULL DEFAULT ''
) WITHOUT ROWID;
CREATE INDEX releases_created ON releases(created_at);
)sql";

// v6: the research manifest (the research domain): agent outputs with their findings, the tasks
// they are linked to (one row per link, so a task finds its entries through an index), a search
// index over title, topics and key findings, and how far research.sync has read MANIFEST.jsonl.
constexpr const char* kSchemaV6 = R"sql(
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

CREATE TABLE research_links(
  research_id TEXT NOT NULL,
  task_id TEXT NOT NULL,
  position INTEGER NOT NULL,
  PRIMARY KEY(research_id, task_id)
) WITHOUT ROWID;
CREATE INDEX research_links_task ON research_links(task_id);

CREATE VIRTUAL TABLE research_fts USING fts5(
  title, topics, key_findings,
  tokenize = 'unicode61 remove_diacritics 2'
);

CREATE TABLE research_sync(
  file TEXT PRIMARY KEY,
  offset INTEGER NOT NULL,
  lines INTEGER NOT NULL,
  head_hash TEXT NOT NULL DEFAULT '',
  synced_at INTEGER NOT NULL
) WITHOUT ROWID;
)sql";

// v7: lifecycle stages of epics and verification gates of tasks (the lifecycle domain): the
// current state of each, and the history of every change with who made it and why.
constexpr const char* kSchemaV7 = R"sql(
CREATE TABLE lifecycle(
  subject TEXT NOT NULL,
  kind TEXT NOT NULL,
  name TEXT NOT NULL,
  status TEXT NOT NULL,
  at INTEGER NOT NULL,
  agent TEXT NOT NULL DEFAULT '',
  session TEXT NOT NULL DEFAULT '',
  notes TEXT NOT NULL DEFAULT '',
  evidence TEXT NOT NULL DEFAULT '',
  PRIMARY KEY(subject, kind, name)
) WITHOUT ROWID;

CREATE TABLE lifecycle_events(
  seq INTEGER PRIMARY KEY,
  subject TEXT NOT NULL,
  kind TEXT NOT NULL,
  name TEXT NOT NULL,
  from_status TEXT NOT NULL,
  status TEXT NOT NULL,
  at INTEGER NOT NULL,
  agent TEXT NOT NULL DEFAULT '',
  session TEXT NOT NULL DEFAULT '',
  notes TEXT NOT NULL DEFAULT '',
  evidence TEXT NOT NULL DEFAULT '',
  operation TEXT NOT NULL
);
CREATE INDEX lifecycle_events_subject ON lifecycle_events(subject, kind, seq);
)sql";

// Lists of one status in tree order, by change or creation newest first, or by priority most
// urgent first (what a dashboard's board shows per status): walked in order and cut at the page,
// instead of sorting every row of that status (40–60 ms at 100k tasks). The sort keys descend so
// that ties come in tree order, oldest first, as order_by() breaks them; the priority expression
// is order_by()'s, character for character (SQLite uses an expression index only then).
constexpr const char* kSchemaV8 = R"sql(
CREATE INDEX tasks_status_tree ON tasks(status, archived, parent, position);
CREATE INDEX tasks_status_updated ON tasks(status, archived, updated_at DESC);
CREATE INDEX tasks_status_rank ON tasks(status, archived,
  (CASE priority WHEN 'critical' THEN 4 WHEN 'high' THEN 3 WHEN 'medium' THEN 2 ELSE 1 END) DESC, position);
CREATE INDEX tasks_status_created ON tasks(status, archived, created_at DESC);
)sql";

constexpr std::array<Migration, 8> kSteps = {{
    {1, kSchemaV1, "tasks",
     "tasks, dependencies, search index, focus and the audit trail"},
    {2, kSchemaV2, "idempotency",
     "audit hash chain (existing rows are chained) and idempotency keys"},
    {3, kSchemaV3, "sessions",
     "sessions, and one session per focused task (the atomic claim)"},
    {4, kSchemaV4, "compliance",
     "protocol-check results (validate.compliance)"},
    {5, kSchemaV5, "releases",
     "releases (the release domain)"},
    {6, kSchemaV6, "research",
     "the research manifest (the research domain)"},
    {7, kSchemaV7, "lifecycle",
     "lifecycle stages and verification gates"},
    {8, kSchemaV8, "tasks_status_created",
     "indexes for lists of a status in tree order, by change, creation or priority"},
}};

}  // namespace

std::span<const Migration> schema_steps() { return kSteps; }

}  // namespace ct::sqlite
