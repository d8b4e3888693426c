// Who a `ct` command is (issue 52): a person at their terminal, a person's script with a person
// key, or an agent; and the commands that show it and manage person keys.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "core/error.h"
#include "domains/principal.h"

namespace ct::cli {

/// Why `ct` decided what it is: the principal and, for people reading `ct whoami`, the reason.
struct CliPrincipal {
  Principal principal;
  std::string why;
  std::string host;  // the agent host whose environment `ct` runs in ("" = none known)
};

/// The principal of this `ct` process, from facts only a person controls or an agent host sets:
/// - an agent host's marker in the environment (CLAUDECODE, CODEX_THREAD_ID, GEMINI_CLI, OPENCODE,
///   CURSOR_AGENT, COPILOT_AGENT, AI_AGENT, AGENT …): an agent of that host, even with a person key
///   (which is then ignored, with a warning: it leaked into an agent's environment);
/// - else CT_PERSON_KEY (the key) or CT_PERSON_KEY_FILE (a file holding it) matching a key the
///   person listed (engines/project/person_keys.h): a person, proof "person-key"; a key that
///   matches none is an error, never a quiet downgrade;
/// - else stdin and stdout both terminals: a person, proof "terminal";
/// - else (pipes, a script, CI): an agent, "shell".
/// A terminal and the absence of markers are not proof against an agent that forges both: the
/// person key is (docs/architecture.md §8 states the limit).
Result<CliPrincipal> cli_principal();

/// The agent host whose marker is in the environment, or "".
std::string agent_host_from_environment();

/// How a command's failure is printed (cli.cpp's: as JSON with --json, else as text for people).
using ReportFailure = std::function<int(const Error&)>;

/// `ct whoami [--json]`: who this command would be, and why.
int run_whoami(const std::vector<std::string>& args, const ReportFailure& report);
/// `ct person key create --name N [--out FILE] | list | revoke NAME`.
int run_person(const std::vector<std::string>& args, const ReportFailure& report);

}  // namespace ct::cli
