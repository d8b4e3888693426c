// The capability resolver: answers "can this operation run here now?" from probes of what it
// `needs` — a program on PATH (and its version), the project inside a git work tree, gh
// authenticated, a configured value. Probes that spawn a program are cached per process for a
// short time (they cost milliseconds; native operations never reach them).
#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "domains/capabilities.h"
#include "engines/adapters/subprocess.h"

namespace ct::capability {

/// What one probe found.
struct ProbeResult {
  bool available = false;
  std::string detail;  // "git version 2.39.5" (git, gh), the program's path, the configured value …
  std::string reason;  // why not, when not
  Advice fix;          // how to make it so
};

class ProbeResolver final : public CapabilityResolver {
 public:
  /// `environment`: the environment probes look programs up in and run them with (by default
  /// minimal_environment() of this process). `ttl`: how long a spawned probe's answer is reused.
  explicit ProbeResolver(std::vector<std::string> environment = minimal_environment(kProbePassed),
                         std::chrono::milliseconds ttl = std::chrono::seconds(30));

  Availability check(const OperationSpec& spec, const std::filesystem::path& project_root,
                     const Config& config) override;
  json::Value probes(const std::vector<std::string_view>& needs, const std::filesystem::path& project_root,
                     const Config& config) override;

  /// One need, cached unless it only reads the configuration. Unknown needs are unavailable.
  ProbeResult probe(std::string_view need, const std::filesystem::path& project_root, const Config& config);
  /// How many probes spawned a program since construction (tests check the cache with it).
  int spawned() const;

  /// Variables gh needs to see its authentication (passed on when set, never shown).
  static const std::vector<std::string> kProbePassed;

 private:
  ProbeResult program(std::string_view name);
  ProbeResult git_repo(const std::filesystem::path& root);
  ProbeResult gh_auth();
  Result<ProcessResult> run(std::vector<std::string> argv, const std::filesystem::path& cwd);

  std::vector<std::string> environment_;
  std::chrono::milliseconds ttl_;
  struct Cached {
    ProbeResult result;
    std::chrono::steady_clock::time_point at;
  };
  mutable std::mutex mutex_;
  std::map<std::string, Cached> cache_;
  int spawned_ = 0;
};

/// The resolver of this process (the CLI and every server worker share it).
ProbeResolver& process_resolver();

}  // namespace ct::capability
