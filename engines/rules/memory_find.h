// How a find ranks project memory, in one place (memory.find, and the memory session.briefing and
// orchestrate.spawn carry for a task): each query word's rarity (BM25's inverse document
// frequency, from how many entries hold it), the candidates (the entries of the rarer words and
// of every key of the work's scope, with a first score from the keys alone), the best few read,
// and each scored — its text, its scope's overlap with the work's, a person's verification, its
// use, recency, confidence, staleness — and sorted. The store answers key counts and entry
// numbers (engines/store/memory_store.h); an entry's words, keys, scope matching and staleness are
// memory.h's rules.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/clock.h"
#include "core/error.h"
#include "engines/rules/file_hashes.h"
#include "engines/rules/memory.h"
#include "engines/store/memory_store.h"
#include "engines/store/store_roles.h"
#include "engines/store/task_store.h"

namespace ct::memory {

/// What a find looks for: words, and the scope of the work at hand.
struct FindScope {
  std::vector<std::string> words;
  std::vector<std::string> files;
  std::vector<std::string> symbols;  // names of symbols (memory_symbols.h), with or without their file
  std::vector<std::string> labels;
  std::vector<std::string> tasks;
  std::vector<std::string> epics;
};

/// Which entries may come back, and how many.
struct FindLimits {
  std::optional<std::string> kind;
  bool include_stale = false;
  std::int64_t limit = 10;
};

/// A found entry's standing: how well its text matched (each query word's rarity, 0 when no words
/// were given), whether it is stale, and the score the ranking sorts by.
struct Ranked {
  double text = 0;
  double scope = 0;
  double score = 0;
};

/// `text_match`: the sum of the rarity (inverse document frequency) of the query words it holds.
/// The score adds text, scope overlap (the file itself 3, a folder or glob over it 2, a symbol 3 (its
/// last part alone 1.5), a task 3, an
/// epic 1.5, a label 1 each), a person's verification 0.5, use (0.3·ln(1+applied) − 0.2·ln(1+ignored)),
/// recency (0.5 at most, halving every 90 days) and confidence; a stale entry's score is halved.
Ranked rank(const MemoryEntry& entry, const FindScope& scope, double text_match, bool stale, TimeMs now);

struct Found {
  MemoryEntry entry;
  Ranked ranked;
  std::optional<Staleness> stale;
};

/// The active entries for `scope`, best first (at most `limits.limit`, of `limits.kind` when
/// given; stale ones only with `include_stale`); files are checked for staleness under `root`.
/// `matched`, when given, is how many entries matched before the cut to `limit` (counted among the
/// candidates read: 3·limit, at least 30).
Result<std::vector<Found>> find_ranked(StoreRoles<MemoryStore, TaskStore> store, const FindScope& scope,
                                       const FindLimits& limits, const std::filesystem::path& root, ScopeHasher& hasher,
                                       TimeMs now, std::int64_t* matched = nullptr);

/// The status and change time of the tasks `entries` are anchored to: staleness()'s `tasks`.
Result<std::map<std::string, std::pair<TaskStatus, TimeMs>>> anchored_tasks(TaskStore& tasks,
                                                                            const std::vector<const MemoryEntry*>& entries);

}  // namespace ct::memory
