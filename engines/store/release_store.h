// The release role of the storage seam (engines/store/store.h): release rows
// (engines/rules/release_engine.h holds their rules).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/clock.h"
#include "core/error.h"
#include "engines/store/sql_runner.h"

namespace ct {

/// Status of a release (docs/architecture.md §5): planned when created, active once it holds tasks,
/// released when shipped; a rollback takes it back to active (or planned when it holds none).
enum class ReleaseStatus { Planned, Active, Released };
inline std::string_view to_string(ReleaseStatus status) {
  switch (status) {
    case ReleaseStatus::Planned: return "planned";
    case ReleaseStatus::Active: return "active";
    case ReleaseStatus::Released: return "released";
  }
  return "planned";
}
inline std::optional<ReleaseStatus> parse_release_status(std::string_view text) {
  for (auto status : {ReleaseStatus::Planned, ReleaseStatus::Active, ReleaseStatus::Released})
    if (to_string(status) == text) return status;
  return std::nullopt;
}

/// A release (the release domain): a semantic version, the tasks it ships, and what ship and tag
/// did in git, so that a rollback can undo it.
struct Release {
  std::string version;                   // semver without a leading "v": "1.2.0", "2.0.0-rc.1"
  ReleaseStatus status = ReleaseStatus::Planned;
  std::vector<std::string> tasks;        // task ids, in the order they were added
  std::string notes;
  TimeMs created_at = 0;
  TimeMs updated_at = 0;
  std::optional<TimeMs> released_at;
  std::string tag;                       // the annotated tag ship or tag made ("v1.2.0"); "" = none
  std::string commit;                    // the commit the tag points at (full sha)
  bool pushed = false;                   // the tag was pushed to `remote`
  std::string remote;
};

/// Releases, newest created first in lists.
class ReleaseStore {
 public:
  [[nodiscard]] Result<std::optional<Release>> get_release(std::string_view version);
  [[nodiscard]] Result<std::vector<Release>> list_releases();
  /// Inserts or replaces the release with this version.
  [[nodiscard]] Result<void> put_release(const Release& release);

 protected:
  virtual sql::Runner& sql_runner() = 0;
  ~ReleaseStore() = default;  // a role of a Store: never owned or deleted through it
};

}  // namespace ct
