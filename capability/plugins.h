// Plug-in engines: operations served by a program the project configures (config.json
// `engines`), either replacing a native operation or adding one — in a new domain too, with its
// params declared in the registry's own terms. The program reads the request as JSON on stdin
// and writes an envelope on stdout; it runs through the subprocess adapter (argv, project root,
// minimal environment, time limit, capped output) before and outside the store's transaction, so
// a plug-in that hangs, floods or lies cannot hold the write lock or reach the store.
//
//   "engines": {
//     "release.changelog": {"command": ["./scripts/changelog.sh"]},
//     "deploy.run": {"command": ["./deploy.sh", "--quiet"], "gateway": "mutate",
//                    "summary": "Deploy the site", "timeoutSeconds": 120,
//                    "params": [{"name": "env", "type": "enum", "choices": ["staging", "prod"],
//                                "required": true, "description": "Where to"}]}
//   }
//
// Request on stdin: {"domain","operation","params","project","session"?}. Reply on stdout:
// {"success":true,"data":…,"warnings"?:[…]} or {"success":false,"error":{"code","message","fix"?}}.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "core/json.h"
#include "domains/registry.h"
#include "domains/workspace.h"

namespace ct::capability {

struct PluginRegistry {
  Registry registry;                  // the base with every valid plug-in added
  std::vector<std::string> warnings;  // one per declaration skipped, saying why
};

/// `base` plus the plug-ins `engines` declares (the value of the config key). An invalid
/// declaration is skipped with a warning; the others still load.
PluginRegistry with_plugins(const Registry& base, const json::Value& engines);

/// The registry of this process: `base` plus the plug-ins of the workspace's project, loaded on
/// first use. No project, or no plug-ins: `base` itself. Warnings go to `warnings` on the first
/// call only.
const Registry& project_registry(const Registry& base, Workspace& workspace, std::vector<std::string>* warnings = nullptr);

/// The envelope a plug-in wrote, checked: its reply, or the error it reported (a code the
/// operation declares, else E_ENGINE_FAILED), or E_ENGINE_FAILED saying what is wrong with it.
Result<Reply> read_plugin_envelope(const OperationSpec& spec, std::string_view out);

}  // namespace ct::capability
