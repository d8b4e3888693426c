// The catalogue role of the storage seam (engines/store/store.h, issue 54, seed 004): the governed
// catalogue of memory entries and skills — per subject (a memory entry's id, or "skill:<name>") its
// version, owner, recorded hashes and use, and a change log of one row per version.
// engines/rules/catalogue.h holds the rules (statuses, tiers, review dates, the governance
// projection and hash). Its SQL is the same on both backends and written once here, over the
// backend's sql::Runner (engines/store/sql_runner.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/clock.h"
#include "core/error.h"
#include "engines/store/sql_runner.h"

namespace ct {

/// One governed subject as last recorded.
struct CatalogueRow {
  std::string subject;             // "M001" or "skill:<name>"
  std::int64_t version = 1;        // bumped on each recorded change
  std::string owner;               // who is responsible: the principal (or agent) that recorded it
  std::string body_hash;           // its content hash when last recorded
  std::string gov_hash;            // the hash of its governance projection when last recorded
  std::int64_t used = 0;           // skills: times injected into a spawn prompt
  std::optional<TimeMs> used_at;
  TimeMs updated_at = 0;
};

/// One version's entry in a subject's change log.
struct CatalogueChange {
  std::string subject;
  std::int64_t version = 1;
  TimeMs at = 0;
  std::string by;
  std::string summary;
};

class CatalogueStore {
 public:
  [[nodiscard]] Result<std::optional<CatalogueRow>> get_catalogue(std::string_view subject);
  /// Every row whose subject starts with `prefix` ("" for all, "skill:" for skills), by subject.
  [[nodiscard]] Result<std::vector<CatalogueRow>> list_catalogue(std::string_view prefix);
  /// Inserts or replaces the row.
  [[nodiscard]] Result<void> put_catalogue(const CatalogueRow& row);
  [[nodiscard]] Result<void> add_catalogue_change(const CatalogueChange& change);
  /// A subject's change log, newest version first (at most `limit`; -1: all).
  [[nodiscard]] Result<std::vector<CatalogueChange>> catalogue_changes(std::string_view subject, std::int64_t limit);
  /// The most used rows whose subject starts with `prefix`: most uses first, then latest use.
  [[nodiscard]] Result<std::vector<CatalogueRow>> hot_catalogue(std::string_view prefix, std::int64_t limit);

 protected:
  virtual sql::Runner& sql_runner() = 0;
  ~CatalogueStore() = default;  // a role of a Store: never owned or deleted through it
};

}  // namespace ct
