// Whether an operation can run here and now: the interface the router asks before running a
// spec that declares `needs`. capability/ implements it with cached probes (programs on PATH, the
// git work tree, gh's authentication, configured commands); the router only knows this interface,
// so nothing below capability/ includes it.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "core/advice.h"
#include "core/json.h"
#include "domains/registry.h"

namespace ct {

class Config;

/// The answer for one operation: available, or why not and how to make it so.
struct Availability {
  bool available = true;
  std::string need;    // the unmet need ("program:git"), empty when available
  std::string reason;  // "git is not on PATH"
  Advice fix;          // "install git (apt-get install git) or add it to PATH"
};

class CapabilityResolver {
 public:
  virtual ~CapabilityResolver() = default;
  /// Every need of `spec`, in order; the first unmet one decides. A spec with no needs is
  /// available without a probe.
  virtual Availability check(const OperationSpec& spec, const std::filesystem::path& project_root,
                             const Config& config) = 0;
  /// What each probe found (for system.capabilities and system.health): an array of
  /// {need, available, detail?, reason?, fix?}, a fix as advice (Advice::to_value).
  virtual json::Value probes(const std::vector<std::string_view>& needs, const std::filesystem::path& project_root,
                             const Config& config) = 0;
};

}  // namespace ct
