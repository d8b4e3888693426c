// The memory role of the storage seam (engines/store/store.h): project memory's entries — what
// agents decided, learned and agreed on — the keys that find them (their words and their scope),
// and the record of their use. engines/rules/memory.h holds the rules (kinds, statuses, hashes,
// keys, ranking, staleness). Its SQL is the same on both backends and written once here, over the
// backend's sql::Runner (engines/store/sql_runner.h).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/clock.h"
#include "core/error.h"
#include "engines/store/sql_runner.h"

namespace ct {

/// What an entry was checked against when it was recorded or verified: a file's content (its
/// SHA-256, and the size and modification time that let a later check skip hashing an unchanged
/// file), or a task's status.
struct MemoryAnchor {
  std::string file;         // relative to the project root; empty for a task anchor
  std::string sha256;
  std::int64_t size = 0;
  std::int64_t mtime_ns = 0;
  std::string task;         // a task anchor's id
  std::string task_status;  // its status then
  friend bool operator==(const MemoryAnchor&, const MemoryAnchor&) = default;
};

/// One entry of project memory.
struct MemoryEntry {
  std::string id;                     // "M001"; its number is the row's key
  std::string kind;                   // decision | convention | learning | risk | pattern | observation
  std::string title;
  std::string body;
  std::string status = "active";      // active | proposed | superseded | retracted (stale is read, not stored)
  std::optional<double> confidence;   // 0..1
  std::vector<std::string> files;     // scope: paths, folders (ending in /) and globs
  std::vector<std::string> labels;
  std::vector<std::string> tasks;
  std::string epic;
  std::string source_agent;
  std::string source_session;
  std::string source_task;
  std::string verified_by;
  std::optional<TimeMs> verified_at;
  std::string supersedes;             // the entry this one replaced
  std::string superseded_by;
  std::string reason;                 // why it was retracted
  std::string hash;                   // of its content (engines/rules/memory.h)
  std::vector<MemoryAnchor> anchors;
  std::int64_t applied_count = 0;
  std::int64_t ignored_count = 0;
  std::optional<TimeMs> applied_at;
  std::string applied_by;
  TimeMs created_at = 0;
  TimeMs updated_at = 0;
};

/// One declaration that an entry was applied to a piece of work, or served and not applied.
struct MemoryUsage {
  std::string memory_id;
  TimeMs at = 0;
  bool applied = true;
  std::string agent;
  std::string session;
  std::string task_id;
  std::string constraint_id;  // the constraint attested ("Steps/2"); "" for the whole entry
  std::string host_session;   // the host's session or thread id its session bound ("" none)
  bool counted = true;        // counted on the entry (once per entry and call)
};

/// A turn an agent closed (memory.turn): reported, or rejected when its output did not follow
/// the rules it loaded.
struct MemoryTurn {
  TimeMs at = 0;
  std::string outcome;  // "reported" | "rejected"
  std::string text;     // the summary, or the reason of a rejection
  std::string agent;
  std::string session;
  std::string host_session;
  std::string task_id;
};

/// A list of entries: newest change first.
struct MemoryQuery {
  std::vector<std::string> statuses;  // empty = any
  std::optional<std::string> kind;
  std::optional<std::string> key;     // entries with this key (engines/rules/memory.h: "t:T005")
  std::optional<TimeMs> since;        // changed at or after
  std::int64_t limit = 50;
  std::int64_t offset = 0;
};

/// The rows of one key range: [from, to) in byte order.
struct MemoryKeyRange {
  std::string from;
  std::string to;
};

/// memory_key_counts(): how many entries hold a key of each range, and how many entries there are.
struct MemoryKeyCounts {
  std::vector<std::int64_t> holders;
  std::int64_t total = 0;
};

/// Counts over the whole memory (memory.stats).
struct MemoryCounts {
  std::int64_t total = 0;
  std::map<std::string, std::int64_t> by_status;
  std::map<std::string, std::int64_t> by_kind;
  std::int64_t never_applied = 0;  // active entries nobody declared applied
};

/// Project memory. Not virtual: its SQL is the same on both backends; a backend gives it its
/// sql_runner(). All calls run inside the store's transactions.
class MemoryStore {
 public:
  [[nodiscard]] Result<std::optional<MemoryEntry>> get_memory(std::string_view id);
  /// The entries with these numbers (the id's digits), in no particular order.
  [[nodiscard]] Result<std::vector<MemoryEntry>> get_memories(const std::vector<std::int64_t>& numbers);
  [[nodiscard]] Result<std::vector<MemoryEntry>> list_memory(const MemoryQuery& query);
  [[nodiscard]] Result<std::int64_t> count_memory(const MemoryQuery& query);
  /// The number after the highest entry's.
  [[nodiscard]] Result<std::int64_t> next_memory_number();
  /// Inserts or replaces the entry (its number is its id's), with the keys that find it; a new
  /// entry counts in the kept total.
  [[nodiscard]] Result<void> put_memory(const MemoryEntry& entry, const std::vector<std::string>& keys);
  /// For each range, the numbers of the entries with a key in it, at most `cap` per range (-1: all):
  /// past the cap, the last keys of the range first and the newest entries of each, on both
  /// backends (the key index read backwards).
  [[nodiscard]] Result<std::vector<std::vector<std::int64_t>>> memory_numbers(const std::vector<MemoryKeyRange>& ranges,
                                                                            std::int64_t cap);
  /// For each range, how many entries hold a key in it (summed over its keys), and how many entries
  /// there are: a word's rarity, read without reading its entries, in one statement.
  [[nodiscard]] Result<MemoryKeyCounts> memory_key_counts(const std::vector<MemoryKeyRange>& ranges);
  /// How many entries hold each of these keys (exact keys; absent ones are left out).
  [[nodiscard]] Result<std::map<std::string, std::int64_t>> memory_term_counts(const std::vector<std::string>& keys);
  /// How many entries there are (the `N` of a term's rarity): the total the writers keep (schema
  /// v18), or the entries counted when a damaged store lost it.
  [[nodiscard]] Result<std::int64_t> memory_total();
  /// Counts the entries again into the kept total (a restore, a repair); whether it was wrong.
  [[nodiscard]] Result<bool> recount_memory();
  /// Records a use and counts it on the entry.
  [[nodiscard]] Result<void> add_memory_usage(const MemoryUsage& usage);
  /// Uses newest first: of one entry, or in one task's work, or since a time.
  [[nodiscard]] Result<std::vector<MemoryUsage>> memory_usage(std::optional<std::string> memory_id,
                                                              std::optional<std::string> task_id,
                                                              std::optional<TimeMs> since, std::int64_t limit);
  [[nodiscard]] Result<MemoryCounts> memory_counts();
  // Attestation (issue 54; engines/store/memory_attestation.cpp).
  /// Binds a session to its host's own session or thread id (a later call replaces it).
  [[nodiscard]] Result<void> bind_host_session(std::string_view session, std::string_view host, TimeMs at);
  /// The host id bound to a session; "" when none was.
  [[nodiscard]] Result<std::string> host_session(std::string_view session);
  /// Records a closed turn; its number.
  [[nodiscard]] Result<std::int64_t> add_memory_turn(const MemoryTurn& turn);
  /// Turns by outcome, and how many uses attested a constraint rather than a whole entry.
  struct AttestationCounts {
    std::int64_t reported = 0;
    std::int64_t rejected = 0;
    std::int64_t constraints = 0;
  };
  [[nodiscard]] Result<AttestationCounts> attestation_counts();

 protected:
  virtual sql::Runner& sql_runner() = 0;
  ~MemoryStore() = default;  // a role of a Store: never owned or deleted through it
};

/// The number of an entry id ("M012" → 12; "M12" and "M0012" are the same entry); nullopt for
/// anything else.
std::optional<std::int64_t> memory_number(std::string_view id);
/// The id of an entry number (12 → "M012"): the one spelling of an entry's id.
std::string memory_id(std::int64_t number);
/// The highest entry number: ids have at most nine digits (the operations' id pattern), so every
/// stored entry can be named.
inline constexpr std::int64_t kMaxMemoryNumber = 999'999'999;

}  // namespace ct
