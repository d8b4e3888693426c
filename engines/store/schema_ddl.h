// Every table both SQL backends create alike — all but tasks and research, which carry each
// backend's search index — written once in SQLite's words, the neutral form: INTEGER and REAL
// columns, TEXT compared as bytes, and WITHOUT ROWID where SQLite keeps a table in its primary key.
// The SQLite backend's schema steps use them as they are (engines/store/sqlite/sqlite_schema.cpp);
// the PostgreSQL backend translates them (engines/store/postgres/pg_schema.cpp: BIGINT, DOUBLE
// PRECISION, TEXT COLLATE "C").
//
// Each is the table as the schema step that created it made it: a later change is a new step in
// both backends, never an edit here (an SQLite store migrates by replaying the steps).
#pragma once

#include <string_view>

namespace ct::ddl {

/// The store's own values by key: the task id counter, and a backend's own (PostgreSQL's change
/// stamp, the schema version).
inline constexpr std::string_view kMeta = R"sql(
CREATE TABLE meta(
  key TEXT PRIMARY KEY,
  value TEXT NOT NULL
);
INSERT INTO meta(key, value) VALUES('next_task_num', '1');
)sql";

/// The task each session is working on.
inline constexpr std::string_view kFocus = R"sql(
CREATE TABLE focus(
  session TEXT PRIMARY KEY,
  task_id TEXT NOT NULL
);
)sql";

/// The atomic claim: a task is focused by at most one session (writers are serialised and
/// tasks.start checks the holder first; the unique index is the last line of defence).
inline constexpr std::string_view kOneClaim = R"sql(
CREATE UNIQUE INDEX focus_task ON focus(task_id);
)sql";

/// The audit trail and the changes of each row, in the order written (SQLite's rowid; PostgreSQL
/// numbers them in a column `ord` of its own). Rows are never deleted but by compaction, so a plain
/// rowid is as monotonic as AUTOINCREMENT without its extra page write per mutation.
inline constexpr std::string_view kAudit = R"sql(
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

/// The audit hash chain (engines/store/audit_chain.h).
inline constexpr std::string_view kAuditHash = R"sql(
ALTER TABLE audit ADD COLUMN hash TEXT NOT NULL DEFAULT '';
)sql";

/// Dependency edges (derived from each task's depends list).
inline constexpr std::string_view kTaskDeps = R"sql(
CREATE TABLE task_deps(
  task_id TEXT NOT NULL,
  depends_on TEXT NOT NULL,
  PRIMARY KEY(task_id, depends_on)
) WITHOUT ROWID;
CREATE INDEX task_deps_depends_on ON task_deps(depends_on);
)sql";

/// Idempotency keys and the replies they replay.
inline constexpr std::string_view kIdempotency = R"sql(
CREATE TABLE idempotency(
  key TEXT PRIMARY KEY,
  operation TEXT NOT NULL,
  params TEXT NOT NULL,
  reply TEXT NOT NULL,
  at INTEGER NOT NULL
) WITHOUT ROWID;
CREATE INDEX idempotency_at ON idempotency(at);
)sql";

/// Sessions.
inline constexpr std::string_view kSessions = R"sql(
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
)sql";

/// Protocol-check results.
inline constexpr std::string_view kCompliance = R"sql(
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

/// Releases.
inline constexpr std::string_view kReleases = R"sql(
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

/// Links between research entries and tasks.
inline constexpr std::string_view kResearchLinks = R"sql(
CREATE TABLE research_links(
  research_id TEXT NOT NULL,
  task_id TEXT NOT NULL,
  position INTEGER NOT NULL,
  PRIMARY KEY(research_id, task_id)
) WITHOUT ROWID;
CREATE INDEX research_links_task ON research_links(task_id);
)sql";

/// How far research.sync has read each manifest.
inline constexpr std::string_view kResearchSync = R"sql(
CREATE TABLE research_sync(
  file TEXT PRIMARY KEY,
  offset INTEGER NOT NULL,
  lines INTEGER NOT NULL,
  head_hash TEXT NOT NULL DEFAULT '',
  synced_at INTEGER NOT NULL
) WITHOUT ROWID;
)sql";

/// Lifecycle stages and gates, and their history.
inline constexpr std::string_view kLifecycle = R"sql(
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

/// Project memory (the memory domain, engines/store/memory_store.h): the entries, the keys that find
/// them (their words and their scope, engines/rules/memory.h) with how many entries hold each key
/// (a word's rarity, read before its entries), and the record of their use. An
/// entry's number is its id's ("M012" is 12).
inline constexpr std::string_view kMemory = R"sql(
CREATE TABLE memory(
  num INTEGER PRIMARY KEY,
  id TEXT NOT NULL UNIQUE,
  kind TEXT NOT NULL,
  title TEXT NOT NULL,
  body TEXT NOT NULL DEFAULT '',
  status TEXT NOT NULL,
  confidence REAL,
  files TEXT NOT NULL DEFAULT '[]',
  labels TEXT NOT NULL DEFAULT '[]',
  tasks TEXT NOT NULL DEFAULT '[]',
  epic TEXT NOT NULL DEFAULT '',
  source_agent TEXT NOT NULL DEFAULT '',
  source_session TEXT NOT NULL DEFAULT '',
  source_task TEXT NOT NULL DEFAULT '',
  verified_by TEXT NOT NULL DEFAULT '',
  verified_at INTEGER,
  supersedes TEXT NOT NULL DEFAULT '',
  superseded_by TEXT NOT NULL DEFAULT '',
  reason TEXT NOT NULL DEFAULT '',
  hash TEXT NOT NULL,
  anchors TEXT NOT NULL DEFAULT '[]',
  applied_count INTEGER NOT NULL DEFAULT 0,
  ignored_count INTEGER NOT NULL DEFAULT 0,
  applied_at INTEGER,
  applied_by TEXT NOT NULL DEFAULT '',
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
CREATE INDEX memory_updated ON memory(updated_at, num);

CREATE TABLE memory_keys(
  key TEXT NOT NULL,
  num INTEGER NOT NULL,
  PRIMARY KEY(key, num)
) WITHOUT ROWID;
CREATE INDEX memory_keys_num ON memory_keys(num);

CREATE TABLE memory_terms(
  key TEXT PRIMARY KEY,
  entries INTEGER NOT NULL
) WITHOUT ROWID;

CREATE TABLE memory_usage(
  seq INTEGER PRIMARY KEY,
  memory_id TEXT NOT NULL,
  at INTEGER NOT NULL,
  applied INTEGER NOT NULL,
  agent TEXT NOT NULL DEFAULT '',
  session TEXT NOT NULL DEFAULT '',
  task_id TEXT NOT NULL DEFAULT ''
);
CREATE INDEX memory_usage_memory ON memory_usage(memory_id, seq);
CREATE INDEX memory_usage_task ON memory_usage(task_id, seq);
)sql";

/// How many memory entries there are, kept (schema v18, issue 56): the row of memory_terms whose key
/// is '' — the key every entry holds — counted by the writers as entries are added
/// (MemoryStore::put_memory) and counted again by a restore, a repair and this step, so that a find
/// reads the `N` of a word's rarity with the words' counts instead of counting the entries.
inline constexpr std::string_view kMemoryTotal = R"sql(
INSERT INTO memory_terms(key, entries) SELECT '', count(*) FROM memory WHERE true
  ON CONFLICT(key) DO UPDATE SET entries = excluded.entries;
)sql";

/// Trust (issue 35, engines/store/trust_store.h): the intent of each audited write (JSON
/// {category, reasoning?, confidence?, tags?}, NULL when the call gave none); the evidence atoms
/// recorded for tasks (commits, files with their checksums, test runs, pull requests, notes) and the
/// waivers of acceptance criteria; the calls agents proposed for a person's approval. An atom's or
/// proposal's number is its id's ("E012", "P003" are 12 and 3).
inline constexpr std::string_view kTrust = R"sql(
ALTER TABLE audit ADD COLUMN intent TEXT;

CREATE TABLE evidence(
  num INTEGER PRIMARY KEY,
  task_id TEXT NOT NULL,
  gate TEXT NOT NULL DEFAULT '',
  kind TEXT NOT NULL,
  ref TEXT NOT NULL DEFAULT '',
  files TEXT NOT NULL DEFAULT '[]',
  covers TEXT NOT NULL DEFAULT '[]',
  verified INTEGER NOT NULL,
  detail TEXT NOT NULL DEFAULT '',
  status TEXT NOT NULL,
  agent TEXT NOT NULL DEFAULT '',
  session TEXT NOT NULL DEFAULT '',
  at INTEGER NOT NULL
);
CREATE INDEX evidence_task ON evidence(task_id, num);

CREATE TABLE proposals(
  num INTEGER PRIMARY KEY,
  operation TEXT NOT NULL,
  params TEXT NOT NULL,
  rule TEXT NOT NULL,
  task_id TEXT NOT NULL DEFAULT '',
  preview TEXT NOT NULL DEFAULT '',
  reason TEXT NOT NULL DEFAULT '',
  intent TEXT,
  status TEXT NOT NULL,
  agent TEXT NOT NULL DEFAULT '',
  session TEXT NOT NULL DEFAULT '',
  at INTEGER NOT NULL,
  decided_by TEXT NOT NULL DEFAULT '',
  decided_at INTEGER,
  decision TEXT NOT NULL DEFAULT ''
);
CREATE INDEX proposals_status ON proposals(status, num);
)sql";

/// Plans (issue 36, domains/plan/): mutations staged apart from the tasks until committed at once.
/// `ops` is the JSON array of staged calls, `base` what they rest on ({versions, changes}),
/// `outcome` what committing or discarding it left. A plan's number is its id's ("PL003" is 3).
inline constexpr std::string_view kPlans = R"sql(
CREATE TABLE plans(
  num INTEGER PRIMARY KEY,
  label TEXT NOT NULL,
  epic_id TEXT NOT NULL DEFAULT '',
  status TEXT NOT NULL,
  ops TEXT NOT NULL DEFAULT '[]',
  base TEXT NOT NULL DEFAULT '',
  agent TEXT NOT NULL DEFAULT '',
  session TEXT NOT NULL DEFAULT '',
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  closed_at INTEGER,
  outcome TEXT NOT NULL DEFAULT ''
);
CREATE INDEX plans_status ON plans(status, num);
)sql";

/// Principals (issue 52, domains/principal.h): who really made each audited write (the principal
/// the transport established: "person:…" or "agent:…", '' before this version); the principal that
/// owns each session (started or last resumed it), and a notice the session's next call is told
/// (JSON {task, by, at} when another session took over its claim; '' when none).
inline constexpr std::string_view kPrincipals = R"sql(
ALTER TABLE audit ADD COLUMN principal TEXT NOT NULL DEFAULT '';
ALTER TABLE sessions ADD COLUMN owner TEXT NOT NULL DEFAULT '';
ALTER TABLE sessions ADD COLUMN notice TEXT NOT NULL DEFAULT '';
CREATE INDEX sessions_owner ON sessions(owner, status);
)sql";

/// The fleet in git worktrees (issue 53): the worktree (its top-level directory) and branch each
/// session runs in ('' when not in a git work tree or before this version), and the worktree and
/// branch made for a task by orchestrate.spawn (orchestrator.worktrees), with the commit it
/// branched from (`base`, what the task's change is diffed against) and when it was pruned.
inline constexpr std::string_view kFleet = R"sql(
ALTER TABLE sessions ADD COLUMN worktree TEXT NOT NULL DEFAULT '';
ALTER TABLE sessions ADD COLUMN branch TEXT NOT NULL DEFAULT '';
CREATE TABLE task_worktrees(
  task_id TEXT PRIMARY KEY,
  worktree TEXT NOT NULL,
  branch TEXT NOT NULL,
  base TEXT NOT NULL DEFAULT '',
  session TEXT NOT NULL DEFAULT '',
  created_at INTEGER NOT NULL,
  pruned_at INTEGER
);
)sql";

/// v14 too (issue 53): the paths a claim reserves (tasks.start, tasks.reserve). A row is live while
/// its session still focuses its task and the session's lease has not lapsed: liveness is read by
/// joining focus and sessions (engines/rules/reservations.h), never kept as a clock of its own.
/// `path` is a project-relative path, a folder or a glob; `head` its first part, or "*" when that
/// part is a glob (a claim's check reads only the rows of its own heads and "*"); `shared` 1 for
/// read-mostly work. WITHOUT ROWID: a row lives in its key's B-tree alone (no rowid table beside
/// it), so a claim's rows cost one B-tree and the head index to write and to drop.
inline constexpr std::string_view kReservations = R"sql(
CREATE TABLE reservations(
  session TEXT NOT NULL,
  task_id TEXT NOT NULL,
  path TEXT NOT NULL,
  head TEXT NOT NULL,
  shared INTEGER NOT NULL DEFAULT 0,
  created_at INTEGER NOT NULL,
  PRIMARY KEY(session, task_id, path)
) WITHOUT ROWID;
CREATE INDEX reservations_head ON reservations(head);
)sql";

/// Messages between agents and people (issue 53, domains/session/session_messages.cpp): each kept
/// until nobody needs it (never removed by session.gc; a thread's size is bounded), addressed to an
/// agent by its label, a session, a task's thread, an epic's participants (resolved when sent, into
/// message_recipients) or everyone (to_ref ''). The sender is what the transport established. A
/// reader (an agent label, else a session, else a person's principal) acknowledges with
/// message_reads; inbox_marks keeps how far each reader has been told of its unread messages, and
/// the task whose thread it was told of (a task taken later has its older thread told once).
inline constexpr std::string_view kMessages = R"sql(
CREATE TABLE messages(
  num INTEGER PRIMARY KEY,
  at INTEGER NOT NULL,
  to_kind TEXT NOT NULL,
  to_ref TEXT NOT NULL DEFAULT '',
  body TEXT NOT NULL,
  from_principal TEXT NOT NULL DEFAULT '',
  from_session TEXT NOT NULL DEFAULT '',
  from_agent TEXT NOT NULL DEFAULT ''
);
CREATE INDEX messages_to ON messages(to_kind, to_ref, num);
CREATE INDEX messages_sender ON messages(from_principal, at);
CREATE TABLE message_recipients(
  num INTEGER NOT NULL,
  session TEXT NOT NULL,
  PRIMARY KEY(session, num)
);
CREATE TABLE message_reads(
  reader TEXT NOT NULL,
  num INTEGER NOT NULL,
  at INTEGER NOT NULL,
  PRIMARY KEY(reader, num)
);
CREATE TABLE inbox_marks(
  reader TEXT PRIMARY KEY,
  announced INTEGER NOT NULL,
  task TEXT NOT NULL DEFAULT ''
);
)sql";

/// v15 (issue 54, seed 004): the governed catalogue of memory entries and skills
/// (engines/rules/catalogue.h). One row per governed subject — a memory entry's id ("M001") or
/// "skill:<name>" — with its version (bumped on each recorded change), owner, the content hash it
/// had when last recorded (`body_hash`), the hash of its governance projection then (`gov_hash`:
/// validate.catalogue recomputes both), and its use (skills injected into spawn prompts). Its change
/// log is catalogue_changes, one row per version. Status and review dates are read from the entry
/// and its tier, never stored twice.
inline constexpr std::string_view kCatalogue = R"sql(
CREATE TABLE catalogue(
  subject TEXT PRIMARY KEY,
  version INTEGER NOT NULL,
  owner TEXT NOT NULL DEFAULT '',
  body_hash TEXT NOT NULL DEFAULT '',
  gov_hash TEXT NOT NULL DEFAULT '',
  used INTEGER NOT NULL DEFAULT 0,
  used_at INTEGER,
  updated_at INTEGER NOT NULL
) WITHOUT ROWID;
CREATE TABLE catalogue_changes(
  subject TEXT NOT NULL,
  version INTEGER NOT NULL,
  at INTEGER NOT NULL,
  changed_by TEXT NOT NULL DEFAULT '',
  summary TEXT NOT NULL,
  PRIMARY KEY(subject, version)
) WITHOUT ROWID;
)sql";

/// Tracker sync (issue 55, engines/rules/tracker_sync.h): which task each external item (a GitHub
/// issue, a plug-in tracker's item) is, idempotent by (tracker, repository, external_id). `base`
/// holds the field values as they were at the last sync (JSON {field: value}), what the 3-way
/// comparison of each field reads; `version` the item's version then; `meta` what is kept only
/// as metadata (assignees, author, milestone, parent and blockers as external ids); `state`
/// synced | conflict | pending; `conflict` JSON {field: {base, here, there}} kept until resolved.
/// `push_new` 1 for an epic whose new children are created in the tracker (opt-in).
/// tracker_cursors keeps each repository's incremental cursor and its conditional-request tag,
/// advanced in the transaction that stores the page it ends, so an interrupted sync resumes.
inline constexpr std::string_view kTrackers = R"sql(
CREATE TABLE tracker_links(
  tracker TEXT NOT NULL,
  repository TEXT NOT NULL,
  external_id TEXT NOT NULL,
  task_id TEXT NOT NULL,
  item_key TEXT NOT NULL DEFAULT '',
  url TEXT NOT NULL DEFAULT '',
  number INTEGER NOT NULL DEFAULT 0,
  version TEXT NOT NULL DEFAULT '',
  base TEXT NOT NULL DEFAULT '',
  meta TEXT NOT NULL DEFAULT '',
  state TEXT NOT NULL DEFAULT 'synced',
  conflict TEXT NOT NULL DEFAULT '',
  push_new INTEGER NOT NULL DEFAULT 0,
  synced_at INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY(tracker, repository, external_id)
);
CREATE INDEX tracker_links_task ON tracker_links(task_id);
CREATE TABLE tracker_cursors(
  tracker TEXT NOT NULL,
  repository TEXT NOT NULL,
  cursor TEXT NOT NULL DEFAULT '',
  etag TEXT NOT NULL DEFAULT '',
  summary TEXT NOT NULL DEFAULT '',
  synced_at INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY(tracker, repository)
);
)sql";

/// v15 (issue 54, seed 002): the session tree and named plans. A child session is started from a
/// parent session with a delegated intent and the paths it may touch (its tasks are its scope); the
/// report it ended with reaches the parent. A plan may be named (a branch of the graph by name,
/// unique among open plans).
inline constexpr std::string_view kSessionTree = R"sql(
CREATE TABLE session_children(
  child TEXT PRIMARY KEY,
  parent TEXT NOT NULL,
  intent TEXT NOT NULL,
  paths TEXT NOT NULL DEFAULT '[]',
  report TEXT NOT NULL DEFAULT '',
  reported_at INTEGER,
  created_at INTEGER NOT NULL
);
CREATE INDEX session_children_parent ON session_children(parent, created_at);
ALTER TABLE plans ADD COLUMN name TEXT NOT NULL DEFAULT '';
CREATE INDEX plans_name ON plans(name, status);
)sql";

/// v15 (issue 54, seed 000): attestation. Each declared use of memory names the constraint it
/// attests ('' for a whole entry; engines/rules/memory_constraints.h) and the host's own session or
/// thread id that session.start bound; the host id of each session (data about the host's thread,
/// never who calls); and each turn an agent closed, reported or rejected (memory.turn).
inline constexpr std::string_view kAttestation = R"sql(
ALTER TABLE memory_usage ADD COLUMN constraint_id TEXT NOT NULL DEFAULT '';
ALTER TABLE memory_usage ADD COLUMN host_session TEXT NOT NULL DEFAULT '';
CREATE TABLE host_sessions(
  session TEXT PRIMARY KEY,
  host TEXT NOT NULL,
  bound_at INTEGER NOT NULL
);
CREATE TABLE memory_turns(
  seq INTEGER PRIMARY KEY,
  at INTEGER NOT NULL,
  outcome TEXT NOT NULL,
  text TEXT NOT NULL DEFAULT '',
  agent TEXT NOT NULL DEFAULT '',
  session TEXT NOT NULL DEFAULT '',
  host_session TEXT NOT NULL DEFAULT '',
  task_id TEXT NOT NULL DEFAULT ''
);
CREATE INDEX memory_turns_outcome ON memory_turns(outcome, seq);
)sql";

/// Plans that rest on a watermark (issue 56, schema v17): plan.begin cost the read of its epic's
/// whole subtree, each task's version kept in the plan's base. Now a plan keeps the audit trail's
/// last seq (`plans.since`; NULL for a plan begun before, whose base holds those versions) and what
/// moved since is read from the changes after it, each change keeping the version of the task it
/// was made to (`audit_changes.version`: the task's version before the change; NULL for a change
/// that is not one of a task's row, and for every change written before). system.gc keeps the
/// changes an open plan rests on (plans_since).
inline constexpr std::string_view kPlanWatermarks = R"sql(
ALTER TABLE audit_changes ADD COLUMN version INTEGER;
ALTER TABLE plans ADD COLUMN since INTEGER;
CREATE INDEX plans_since ON plans(status, since);
)sql";

}  // namespace ct::ddl
