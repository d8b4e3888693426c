// The seam between `ct` and its GitHub client (engines/adapters/github/, the module
// libct_github.so): the client registers its factory when it is loaded (or linked in whole, as
// test programs do), and open_github_tracker (engines/adapters/github_tracker.cpp) loads the
// module on first use and calls it. `ct`'s start-up never loads cpp-httplib or OpenSSL.
#pragma once

#include <memory>
#include <string>

#include "engines/adapters/tracker.h"

namespace ct::tracker {

/// Makes the GitHub tracker for `settings` at `api` (no trailing slash) with `token` ("" for none).
using GitHubClientFactory = Result<std::unique_ptr<Tracker>> (*)(const Settings& settings, const std::string& api,
                                                                 const std::string& token);
/// Called by the client's module as it loads.
void provide_github_client(GitHubClientFactory factory);
/// The factory registered, or null.
GitHubClientFactory provided_github_client();

}  // namespace ct::tracker
