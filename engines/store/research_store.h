// The research role of the storage seam (engines/store/store.h): the research manifest's
// entries, their task links and search index, and how far research.sync has read each manifest
// file (engines/rules/research.h holds the entries' rules).
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
#include "engines/store/task_store.h"

namespace ct {

/// Status of a research entry (the research domain): what the agent that wrote it reached.
enum class ResearchStatus { Complete, Partial, Blocked };
inline std::string_view to_string(ResearchStatus status) {
  switch (status) {
    case ResearchStatus::Complete: return "complete";
    case ResearchStatus::Partial: return "partial";
    case ResearchStatus::Blocked: return "blocked";
  }
  return "complete";
}
inline std::optional<ResearchStatus> parse_research_status(std::string_view text) {
  for (auto status : {ResearchStatus::Complete, ResearchStatus::Partial, ResearchStatus::Blocked})
    if (to_string(status) == text) return status;
  return std::nullopt;
}

/// One agent output in the research manifest (engines/rules/research.h holds its rules): the file an
/// agent wrote, what it found, and the tasks it belongs to. Links are kept in both directions:
/// research_for_task() answers from the task's side.
struct ResearchEntry {
  std::string id;                        // "T001-auth-options": the task it started from, then a slug
  std::string file;                      // relative to the project root
  std::string title;
  std::string date;                      // YYYY-MM-DD
  ResearchStatus status = ResearchStatus::Complete;
  std::string agent_type = "research";
  std::vector<std::string> topics;
  std::vector<std::string> key_findings;
  bool actionable = false;
  std::vector<std::string> needs_followup;
  std::vector<std::string> linked_tasks; // task ids, in the order they were linked
  std::optional<double> confidence;      // 0..1
  std::string file_checksum;             // SHA-256 hex of the file when it existed; "" = unknown
  bool archived = false;
  std::optional<TimeMs> archived_at;
  TimeMs created_at = 0;
  TimeMs updated_at = 0;
};

struct ResearchQuery {
  std::vector<ResearchStatus> statuses;  // empty = any
  std::optional<std::string> agent_type;
  std::optional<std::string> topic;      // entries carrying this topic (exact, case-insensitive)
  std::optional<std::string> task_id;    // entries linked to this task
  std::optional<bool> actionable;
  bool needs_followup = false;           // only entries with something left to follow up
  std::optional<std::string> date_before;  // date < this (YYYY-MM-DD)
  ArchivedFilter archived = ArchivedFilter::Exclude;
  std::int64_t limit = -1;               // -1 = no limit; newest date first, then id
  std::int64_t offset = 0;
};

/// Counts over the whole research manifest (research.stats).
struct ResearchStats {
  std::int64_t total = 0;                // archived included
  std::int64_t archived = 0;
  std::int64_t actionable = 0;           // unarchived
  std::int64_t pending = 0;              // unarchived with needsFollowup
  std::int64_t linked = 0;               // unarchived with at least one linked task
  std::map<std::string, std::int64_t> by_status;      // unarchived
  std::map<std::string, std::int64_t> by_agent_type;  // unarchived
  std::optional<double> average_confidence;           // unarchived entries that carry one
};

/// How far research.sync has read a manifest file: the bytes and lines consumed, and a hash of
/// the file's head so that a file replaced or rotated under the same name is read again from 0.
struct ManifestCursor {
  std::string file;                      // as configured (research.manifestFile)
  std::int64_t offset = 0;               // bytes consumed: always the end of a complete line
  std::int64_t lines = 0;                // complete lines consumed
  std::string head_hash;                 // SHA-256 of the first min(offset, 4096) bytes
  TimeMs synced_at = 0;
};

/// The research manifest. Lists are newest date first, then by id.
class ResearchStore {
 public:
  [[nodiscard]] Result<std::optional<ResearchEntry>> get_research(std::string_view id);
  [[nodiscard]] Result<std::vector<ResearchEntry>> list_research(const ResearchQuery& query);
  [[nodiscard]] Result<std::int64_t> count_research(const ResearchQuery& query);
  /// Inserts or replaces the entry with this id, with its task links and search index entry.
  [[nodiscard]] Result<void> put_research(const ResearchEntry& entry);
  /// Full-text search over title, topics and key findings (prefix match per word), best first;
  /// only the query's archived filter applies. An exact id ranks first.
  [[nodiscard]] virtual Result<std::vector<ResearchEntry>> search_research(std::string_view text, ArchivedFilter archived,
                                                                           std::int64_t limit) = 0;
  [[nodiscard]] virtual Result<std::int64_t> count_research_matches(std::string_view text, ArchivedFilter archived) = 0;
  /// Ids of the research entries linked to a task (archived included), by id.
  [[nodiscard]] Result<std::vector<std::string>> research_for_task(std::string_view task_id);
  /// The statement research_for_task runs (?1 the task's id): a backend may send it ahead
  /// (TaskStore::expect).
  static constexpr std::string_view kResearchForTaskSql =
      "SELECT research_id FROM research_links WHERE task_id = ?1 ORDER BY research_id";
  [[nodiscard]] Result<ResearchStats> research_stats();
  [[nodiscard]] Result<std::optional<ManifestCursor>> get_manifest_cursor(std::string_view file);
  [[nodiscard]] Result<void> put_manifest_cursor(const ManifestCursor& cursor);

 protected:
  virtual sql::Runner& sql_runner() = 0;
  /// Keeps the backend's search index with a saved entry, numbered `number` (SQLite writes its FTS5
  /// index; PostgreSQL's is a generated column, which follows by itself).
  [[nodiscard]] virtual Result<void> index_research(const ResearchEntry& entry, std::int64_t number);
  ~ResearchStore() = default;  // a role of a Store: never owned or deleted through it
};

}  // namespace ct
