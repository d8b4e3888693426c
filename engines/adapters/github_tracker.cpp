// open_github_tracker (engines/adapters/tracker.h): the token (GITHUB_TOKEN, GH_TOKEN, else
// `gh auth token` through the subprocess adapter; read at open, never stored), the API's URL
// (GITHUB_API_URL for GitHub Enterprise, else https://api.github.com), and the client itself,
// loaded from the module libct_github.so on first use (engines/adapters/github_client.h).
#include <dlfcn.h>

#include <atomic>
#include <cstdlib>

#include "core/text.h"
#include "engines/adapters/github_client.h"
#include "engines/adapters/module.h"
#include "engines/adapters/subprocess.h"

namespace ct::tracker {
namespace {

constexpr std::string_view kModule = "libct_github.so";

std::atomic<GitHubClientFactory>& factory_slot() {
  static std::atomic<GitHubClientFactory> slot{nullptr};
  return slot;
}

/// Loads libct_github.so (engines/adapters/module.h), once per process; "" when the client is
/// there, else why not.
const std::string& load_client() {
  static const std::string failure = []() -> std::string {
    if (provided_github_client() != nullptr) return "";  // linked in whole (tests, benchmarks)
    std::string why;
    void* module = load_module(kModule, why);
    if (module == nullptr) return why;
    using Entry = GitHubClientFactory (*)();
    auto entry = reinterpret_cast<Entry>(dlsym(module, "ct_github_client_factory"));
    if (entry == nullptr) return std::string(kModule) + " has no ct_github_client_factory";
    provide_github_client(entry());
    return "";
  }();
  return failure;
}

std::string env(const char* name) {
  const char* value = std::getenv(name);
  return value ? std::string(value) : std::string();
}

/// The token: GITHUB_TOKEN, GH_TOKEN, else what `gh auth token` prints; "" when none.
Result<std::string> token_for(const Settings& settings) {
  for (const char* name : {"GITHUB_TOKEN", "GH_TOKEN"})
    if (auto value = std::string(trim(env(name))); !value.empty()) return value;
  ProcessSpec gh;
  gh.argv = {"gh", "auth", "token"};
  gh.cwd = settings.root;
  gh.env = minimal_environment({"GH_HOST", "GH_CONFIG_DIR", "XDG_CONFIG_HOME"});
  gh.timeout = std::chrono::seconds(20);
  if (!find_program("gh", gh.env)) return std::string();
  auto ran = run_process(gh);
  if (!ran || !ran->ok()) return std::string();
  return std::string(trim(ran->out));
}

}  // namespace

void provide_github_client(GitHubClientFactory factory) { factory_slot().store(factory); }
GitHubClientFactory provided_github_client() { return factory_slot().load(); }

Result<std::unique_ptr<Tracker>> open_github_tracker(const Settings& settings) {
  if (settings.repository.find('/') == std::string::npos)
    return fail(Error(ErrorCode::Validation, "a GitHub repository is OWNER/NAME, not " + settings.repository)
                    .with_detail("field", "repo"));
  if (const std::string& why = load_client(); !why.empty())
    return fail(Error(ErrorCode::EngineFailed, "the GitHub client does not load: " + why)
                    .with_fix("keep libct_github.so beside ct (it needs cpp-httplib and OpenSSL: Debian "
                              "libcpp-httplib0.11 and libssl3)"));
  std::string api = settings.api_url;
  if (api.empty()) api = env("GITHUB_API_URL");
  if (api.empty()) api = "https://api.github.com";
  CT_TRY_ASSIGN(std::string token, token_for(settings));
  if (token.empty())
    return fail(Error(ErrorCode::EngineFailed, "no GitHub token: GITHUB_TOKEN and GH_TOKEN are unset and "
                                                  "`gh auth token` gave none")
                    .with_fix("export GITHUB_TOKEN, or run `gh auth login`"));
  return provided_github_client()(settings, api, token);
}

}  // namespace ct::tracker
