// The original CLEO's stores as tasks.import reads them (issue 38): the v0.x JSON files in .cleo/
// (todo.json, todo-archive.json, sessions.json, todo-log.json, config.json) and the later SQLite
// store (tasks.db from 2026.2 on; cleo.db's tasks_ tables on its main branch). The user's files
// are only read — JSON files bounded in size, the database through a read-only reader bounded in
// rows and bytes (engines/store/sqlite/sqlite_foreign.h) — and never changed.
//
// Where each part goes:
//  - tasks (todo.json's and the archive's, or the tasks table with its dependency, relation, label
//    and acceptance tables) become tasks.import records that keep their ids, hierarchy,
//    dependencies, links, labels, acceptance criteria, notes (with the time each note's text
//    starts with), statuses, times and archive state. active becomes pending (a claim is made
//    with tasks.start here), proposed pending with the label proposed, a saga an epic, an epic
//    under a parent a task with the label epic, origin the label origin:<value>;
//  - sessions become sessions of this store, with ids of its form (ses_ and the old id's letters
//    and digits), their scope, agent, notes, times and status (active ones suspended: nobody works
//    in them here; archived, orphaned and history entries ended);
//  - the log (todo-log.json, the database's audit_log) has no place: the audit trail here is a
//    hash chain of this store's own changes, and rows it did not make are never forged into it.
//    The report counts its entries by action; the file stays where it is;
//  - config.json's keys with an equivalent here become those keys (see kConfigMap in the .cpp), the
//    others are reported; project.currentPhase (todo.json) becomes project.currentPhase;
//  - its memory — brain.db's decisions, learnings, patterns and observations (cleo.db's brain_
//    tables on its main branch) — becomes memory.observe calls (original_brain.h); a session's
//    handoff (handoff_json, or the one in debrief_json) gives its note and next action.
// Everything else — verification gates, lifecycle state, provenance, phases, releases, focus
// history — is reported with how many records carried it.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "core/clock.h"
#include "core/error.h"
#include "core/json.h"
#include "domains/registry.h"
#include "domains/tasks/import_formats.h"

namespace ct::tasks {

/// The most one file of the store, or one file of records, may hold.
inline constexpr std::size_t kMaxImportFileBytes = 32u << 20;

/// Where the original's store is, and which generation it is.
struct OriginalSource {
  std::filesystem::path dir;       // its folder (.cleo/)
  std::string generation;          // "json" or "sqlite"
  std::filesystem::path todo;      // json: the todo.json read (its siblings are read from `dir`)
  std::filesystem::path database;  // sqlite: tasks.db or cleo.db
  std::string prefix;              // sqlite: of its tables ("" in tasks.db, "tasks_" in cleo.db)
};

/// What a path given to tasks.import holds: the original CLEO's store, or a file of records.
struct ImportSource {
  std::optional<OriginalSource> original;
  json::Value records;  // a file of records: its JSON (one value, or JSON Lines as an array)
};

/// Reads what `path` names: a folder holding the original's store (its .cleo/, or the project
/// around it), a file of that store (todo.json or any JSON file shaped like it, tasks.db,
/// cleo.db), or a file of records. E_NOT_FOUND for nothing there; a folder without the store, a
/// database of another schema (this program's own store among them), JSON that does not parse,
/// a file over kMaxImportFileBytes: each a clear error naming the file.
Result<ImportSource> read_import_source(const std::filesystem::path& path);

/// True when `value` is the content of the original's todo.json or todo-archive.json (records
/// sent as `tasks` that should have come with their store).
bool looks_like_original_file(const json::Value& value);

/// The original's store as tasks.import records (format "original"), with its sessions, config,
/// memory (its brain: original_brain.h) and the report. `add_spec` (tasks.add) bounds the criteria
/// kept as criteria, `observe_spec` (memory.observe) the titles of memory entries. A file of the
/// store that cannot be read is an error naming it (missing optional files are fine, and said in
/// warnings); the log is only counted, and a log that cannot be read is a warning, since nothing
/// of it is imported.
Result<ForeignFile> read_original(const OriginalSource& source, const OperationSpec& add_spec,
                                  const OperationSpec& observe_spec);

/// A session id of this store for an original's one: "ses_" and the old id's letters and digits
/// (session_20260211_143000_a1b2c3 → ses_20260211143000a1b2c3), so a second import finds it.
std::string session_id_for(std::string_view original_id);

}  // namespace ct::tasks
