// The original CLEO's memory as tasks.import reads it (issue 50): its "brain" — brain.db beside
// tasks.db (from 2026.3), or the brain_ tables of cleo.db on its main branch — read-only, through
// the bounded foreign reader (engines/store/sqlite/sqlite_foreign.h, reached through open_store.h).
//
// What has a place in this store's memory comes as the params of a memory.observe, which
// tasks.import runs for each as its caller (so every entry passes exactly the checks that call
// would: text rules and lengths, scope paths inside the project, the kinds people govern proposed):
//  - brain_decisions    → a decision: the decision its title (its first line; the whole text opens
//                         the body when it is longer than a title), the rationale, alternatives and
//                         outcome its body, its task the source task, its epic the scope's epic;
//  - brain_learnings    → a learning: insight, source and application; its confidence kept;
//  - brain_patterns     → a pattern: pattern, context, anti-pattern, mitigation, examples and how
//                         often it was seen;
//  - brain_observations → an observation: title, subtitle, narrative and facts; the files it
//                         modified its scope;
//  - brain_memory_links → the tasks each entry is linked to, its scope's tasks.
// Each body ends with where the entry came from (table, id, kind, time, agent, session): its
// provenance. Entries the original itself invalidated (invalid_at, expired_at, superseded_by, a
// decision superseded) are not brought; the original's verification (verified, decided_by,
// confirmation_state) is never carried — who verifies is decided here. Columns it derived
// (quality and stability scores, tiers, hashes, peers …) are left silently; everything else that
// has no place — the other tables, sticky notes, the graph, retrieval logs — is reported with counts.
#pragma once

#include <filesystem>

#include "core/error.h"
#include "domains/registry.h"
#include "domains/tasks/import_formats.h"

namespace ct::tasks {

/// Reads the brain tables of `database` into `file.memory` ({from, params}: "brain_decisions D001"
/// and memory.observe's params) and its report (`mapped`, `unmapped`). `whole_file`: the file is
/// the brain's own (brain.db), so every other table in it with rows is reported; else (cleo.db)
/// only its brain_ tables are the brain's. `observe_spec` (memory.observe) bounds the titles made.
Result<void> read_original_brain(const std::filesystem::path& database, bool whole_file,
                                 const OperationSpec& observe_spec, ForeignFile& file);

/// Whether `name` is a table of the original's brain in cleo.db (its brain_ tables).
bool is_brain_table(std::string_view name);

}  // namespace ct::tasks
