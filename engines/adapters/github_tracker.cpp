// PLACEHOLDER while the GitHub client is written on its own branch (issue 55): replaced by the
// real implementation before the sync lands. Not a feature: the sync refuses GitHub with this.
#include "engines/adapters/tracker.h"

namespace ct::tracker {

Result<std::unique_ptr<Tracker>> open_github_tracker(const Settings&) {
  return fail(ErrorCode::DependencyError, "the GitHub tracker is not built into this ct yet");
}

}  // namespace ct::tracker
