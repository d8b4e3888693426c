// Shared by the memory domain's handler files (memory_query.cpp, memory_mutate.cpp) and by the
// operations memory reaches agents through (session.briefing here, orchestrate.spawn in
// disclosure/, tasks.complete's `remember`): finding the entries for a piece of work, and their
// JSON.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "domains/context.h"
#include "engines/rules/memory.h"
#include "engines/rules/memory_find.h"
#include "engines/rules/memory_symbols.h"

namespace ct::memory {

/// What to find: words, the work's scope, and which entries may come back.
struct Search {
  std::string query;
  std::vector<std::string> files;   // normal scope paths (normal_scope_path)
  std::vector<std::string> symbols; // symbol names (memory_symbols.h)
  std::vector<std::string> labels;
  std::optional<std::string> task;  // the task at hand: its files, labels and epics join the scope
  bool task_words = false;          // the task's title is the query (a prompt's memory)
  std::optional<std::string> kind;
  bool include_stale = false;
  std::int64_t limit = 10;
};

/// The active entries for `search`, best first (engines/rules/memory_find.h ranks them): the
/// work's scope is the search's, with the task's files, labels, epics and (task_words) title.
/// E_NOT_FOUND for a task that does not exist.
/// `matched`: find_ranked's, how many matched before the cut.
Result<std::vector<Found>> find(Context& context, const Search& search, std::int64_t* matched = nullptr);

/// The kinds of entry, as an Enum param's choices.
std::vector<std::string_view> kind_choices();
/// The entry `id`; E_NOT_FOUND with the find that looks for it.
Result<MemoryEntry> load(Context& context, const std::string& id);
Error task_not_found(const std::string& id);
/// E_NOT_FOUND for the first of `ids` that names no task.
Result<void> check_tasks(Context& context, const std::vector<std::string>& ids);
/// Writes an entry with its keys, audited against `before` (none: created).
Result<void> save(Context& context, const std::optional<MemoryEntry>& before, const MemoryEntry& entry);

/// Staleness of entries read outside a find (show, stats, validate): one read of their tasks.
Result<std::vector<std::optional<Staleness>>> staleness_of(Context& context, const std::vector<MemoryEntry>& entries);

/// An entry for a reply: compact (id, kind, title, body cut to 240 characters, hash, status when not
/// active, unreviewed when no person verified it, stale) or full (every field, usage, times).
json::Value entry_json(const MemoryEntry& entry, bool full, const std::optional<Staleness>& stale);
json::Value stale_json(const Staleness& stale);

/// The entries for a task's prompt (orchestrate.spawn, session.briefing): at most
/// memory.promptEntries, active and fresh, for its files, labels, epics and words of its title.
Result<std::vector<Found>> for_task(Context& context, const std::string& task_id);
/// Those entries as prompt lines (`- M003 [convention] "title": "body"`, `[learning, unreviewed, by
/// "agent"]` for one no person verified; title and body quoted, core/stored_text.h), and the call that declares
/// which were applied, for the prompt's writer to spell (disclosure/spawn.h); empty when there are none.
Advice prompt_block(const std::vector<Found>& found, const std::string& task_id);

/// The task an entry comes from, or a use belongs to: `task` when named, else the caller's session's focus.
Result<std::string> source_task(Context& context, const std::optional<std::string>& task);
/// The caller's name for records: a person's principal ("person:alice"), else the session's agent,
/// else the client's.
Result<std::string> who(Context& context);
/// Who a change of the catalogue is by: a person's principal, else the session's or the caller's
/// agent name (its principal when it has none).
Result<std::string> catalogue_actor(Context& context);

/// Whether an agent's entry of `kind` waits for a person (memory.verifyKinds).
bool needs_person(const Context& context, std::string_view kind);

/// Anchors `entry` to its scope files and tasks as they are now (`keep_existing`: an anchor it
/// already has for a file or task still in its scope is kept as it was, so an edit does not hide a
/// change since). The files' hashes are those the call's external step read (hash_scope_files):
/// no file is read under the write lock. Scope files that do not exist, or cannot be anchored
/// (outside the project, not a regular file, too large), are named in `warnings`.
Result<void> anchor(Context& context, MemoryEntry& entry, bool keep_existing, std::vector<std::string>& warnings);

/// The external step of a write that anchors `files` (scope paths): their hashes read before the
/// call's transaction, as {files:{path: …}} (engines/rules/memory.h, read_files), which anchor()
/// takes from Context::external.
Result<Reply> hash_scope_files(Context& context, const std::vector<std::string>& files);

/// Records a new entry made from a complete `entry` (kind, title, body, scope, source set): its
/// id, hash, anchors, status (proposed when it needs a person and the caller is an agent) and
/// keys; audited. Missing scope files are named in `warnings`.
Result<MemoryEntry> add_entry(Context& context, MemoryEntry entry, std::vector<std::string>& warnings);

/// memory.coverage (memory_coverage.cpp).
void register_coverage(Registry& registry);


}  // namespace ct::memory

namespace ct {
/// The `id` param of an operation on one entry.
ParamSpec memory_id_param();
}  // namespace ct
