// For the targets that run operations (jsonrpc, http): a hermetic environment and a real project
// in a scratch directory, set up the way `ct mcp` and `ct serve` set theirs up. Test-only.
#pragma once

#include <stdlib.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string_view>

#include "core/clock.h"
#include "core/log.h"
#include "gateway/mcp_syntax.h"
#include "gateway/product.h"
#include "domains/router.h"
#include "fuzz_support.h"

namespace ct::fuzz {

/// Call first, from LLVMFuzzerInitialize, before anything reads the environment: CLEO_TEST_MODE=1
/// (fixed clock, deterministic ids), HOME in a scratch dir, the other CLEO_* variables unset, the
/// working directory in the scratch dir (relative paths never reach the checkout), logs at error
/// level. Returns the scratch dir.
inline std::filesystem::path hermetic_environment(std::string_view target) {
  ::setenv("CLEO_TEST_MODE", "1", 1);
  for (const char* name : {"CLEO_ROOT", "CLEO_HOME", "CLEO_SESSION", "CLEO_TERMINAL", "CLEO_READ_ONLY",
                           "CLEO_FORMAT", "CLEO_FIXED_TIME", "CLEO_CHECK_ERRORS"})
    ::unsetenv(name);
  std::filesystem::path root = scratch_dir(target);
  std::filesystem::create_directories(root / "home");
  ::setenv("HOME", (root / "home").c_str(), 1);
  if (::chdir(root.c_str()) != 0) std::abort();
  log::set_level(log::Level::Error);
  return root;
}

/// Router options as the MCP servers use them (cli/servers.cpp).
inline RouterOptions server_router_options() {
  RouterOptions options;
  options.check_integrity_on_open = true;
  return options;
}

inline std::unique_ptr<Router> make_router(const std::filesystem::path& project) {
  return std::make_unique<Router>(registry(), Workspace::open(project), server_router_options(), clock_from_environment());
}

/// Removes `project` and initialises a new one there (system.init, what `ct init` runs).
inline void fresh_project(const std::filesystem::path& project) {
  std::error_code ignored;
  std::filesystem::remove_all(project, ignored);
  std::filesystem::create_directories(project);
  Envelope init = make_router(project)->dispatch({Gateway::Mutate, "system", "init", json::Value()});
  if (!init.success) {
    std::fprintf(stderr, "fuzz: system.init failed in %s: %s\n", project.c_str(), to_json(init, McpAdvice(registry())).c_str());
    std::abort();
  }
}

}  // namespace ct::fuzz
