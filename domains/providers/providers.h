// The agent hosts CLEO knows: the one table of host knowledge. The providers domain (list, show,
// detect, install), providers.inject (disclosure/) and `ct mcp-config` (gateway/) all read it;
// nothing else names a host's files or formats.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/json.h"
#include "engines/adapters/host_config.h"

namespace ct::providers {

enum class ConfigFormat { Json, Toml };
std::string_view to_string(ConfigFormat format);  // "json" (JSONC accepted) | "toml"

enum class Transport { Stdio, Http };

/// How a host loads what its session-start hook prints into the model's context.
enum class HookOutput {
  Text,        // plain stdout (Claude Code, Codex)
  GeminiJson,  // {"hookSpecificOutput":{"hookEventName":"SessionStart","additionalContext":…}}
  CursorJson,  // {"additional_context":…,"continue":true}
};

/// How a host runs a hook's command: a string it hands to a shell, whose rules the line we write
/// must follow (a path with a space, a quote or a $ in it is quoted for that shell).
enum class HookShell {
  Posix,  // sh -c, bash -c, $SHELL -lc: sh, bash, zsh and dash alike (join_command's quoting)
};

/// A host's session-start hook, which runs `ct briefing --hook <id>` (providers.install hooks).
struct HookSupport {
  std::string_view project_file;  // relative to the project root
  std::string_view user_file;     // relative to the home directory
  std::string_view event;         // "SessionStart", "sessionStart"
  /// When it runs (the host's matcher); empty: on every session start the host has (startup,
  /// resume, /clear, a compaction, a fork — whatever sources the host has now or adds later).
  std::string_view matcher;
  /// {matcher?, hooks:[{type:"command", command, timeout}]} (Claude Code, Codex, Gemini CLI); false:
  /// {command, timeout} (Cursor).
  bool grouped = true;
  std::string_view name;          // Gemini CLI names each hook
  HookShell shell = HookShell::Posix;
  int timeout = 30;               // in the host's unit: seconds, or ms (Gemini CLI)
  HookOutput output = HookOutput::Text;
  bool version_key = false;       // Cursor: the file needs "version": 1
  /// The members of the JSON the host writes on the hook's stdin that name its session and what
  /// started it (hook_firing); an empty source_key: the host sends none.
  std::string_view session_key = "session_id";
  std::string_view source_key = "source";
  /// What the host needs before the hook runs, and when it does not (after a compaction).
  std::string_view note;
};

struct Provider {
  std::string_view id;    // "claude"
  std::string_view name;  // "Claude Code"
  /// Programs whose presence on PATH means the host is installed (the first is its CLI).
  std::vector<std::string_view> binaries;
  /// The names it gives itself as an MCP client (initialize's clientInfo.name).
  std::vector<std::string_view> client_names;
  /// What the host reads in a project (a trailing / is a folder of rule files).
  std::vector<std::string_view> instruction_files;
  /// Its user-wide instruction file, relative to the home directory; empty when it has none.
  std::string_view user_instructions;
  /// The instruction file system.inject writes for it (CLAUDE.md, AGENTS.md or GEMINI.md).
  std::string_view inject_target;
  ConfigFormat format = ConfigFormat::Json;
  /// JSON: the top-level key of the servers object. TOML: the table prefix of server tables.
  std::string_view servers_key;
  /// The MCP configuration file per scope: relative to the project root / to the home directory.
  /// Empty: the host has no file for that scope.
  std::string_view project_config;
  std::string_view user_config;
  /// Folders whose presence shows the host is used (in the project / in the home directory).
  std::string_view project_dir;
  std::string_view user_dir;
  /// The command that runs it headless with a prompt (argv prefix); empty when it has none.
  std::vector<std::string_view> headless;
  // The shape of a server entry (JSON hosts):
  std::string_view stdio_type;      // "type" of a stdio entry ("stdio", "local"); empty = no type key
  std::string_view http_type;       // "type" of an HTTP entry ("http", "remote"); empty = none
  std::string_view url_key;         // "url", "httpUrl" (Gemini), "serverUrl" (Windsurf)
  bool command_array = false;       // opencode: "command": [program, args…]
  bool enabled_key = false;         // opencode: "enabled": true
  /// How an HTTP entry names the environment variable that holds `ct serve`'s token, so that the
  /// file never holds the secret. JSON hosts: the reference their loader expands in a header
  /// value, VAR standing for the variable's name ("${VAR}", "${env:VAR}", "{env:VAR}"); TOML
  /// hosts: the key whose value is the variable's name ("bearer_token_env_var"). Empty: the host
  /// cannot reference one, and a token is refused.
  std::string_view token_env;
  /// What the host's loader replaces in the strings of its files before it uses them ("${" for
  /// ${VAR}; "$" for $VAR and ${VAR}; "{env:" …): a command holding one would not be run as
  /// written, so check_launch refuses it.
  std::vector<std::string_view> expands;
  /// Where a person sees whether the host found CLEO's server ("claude mcp list").
  std::string_view check;
  /// What a project-scope entry needs in the host before it runs (approval, a trusted folder);
  /// empty when the host starts it as it is.
  std::string_view project_approval;
  /// Its session-start hook; null when the host has none a settings file can declare.
  const HookSupport* hook = nullptr;
  /// Why not, when it has none ("" when nothing is known).
  std::string_view no_hook;
};

/// Every host, in a fixed order.
std::span<const Provider> all();
const Provider* find(std::string_view id);
/// The host whose MCP client calls itself `client_name`, or null.
const Provider* find_client(std::string_view client_name);
std::vector<std::string> ids();

/// The name of CLEO's server entry in every host's configuration.
inline constexpr std::string_view kServerName = "cleo";
/// The default URL of `ct serve`.
inline constexpr std::string_view kDefaultUrl = "http://127.0.0.1:8808/mcp";
/// The environment variable `ct serve` reads its token from (as `--token`), and the one a host's
/// entry names by default.
inline constexpr std::string_view kTokenEnv = "CLEO_SERVE_TOKEN";
/// The portable command: `ct` on the PATH of whoever runs the host.
inline constexpr std::string_view kPortableCommand = "ct";

/// What a host's entry starts: `command args…` (stdio) or the URL of a running `ct serve`.
struct ServerLaunch {
  Transport transport = Transport::Stdio;
  std::string command = std::string(kPortableCommand);
  std::vector<std::string> args = {"mcp"};
  std::string url;        // Http
  std::string token_env;  // Http: the variable holding the bearer token; empty: no token is sent
};

/// The command a stdio entry starts when the caller names none: in a user's own file the
/// absolute path of the installed `ct` (`installed`, when known), since hosts started from an
/// IDE often lack the shell's PATH; in a project's file, which a team commits and shares, the
/// portable `ct`.
std::string default_command(bool user_scope, const std::optional<std::string>& installed);

/// Whether `provider` can hold `launch`: E_INVALID_INPUT naming the host when a token is asked of
/// a host that cannot reference an environment variable (the secret is never written instead), or
/// when the command holds what the host's loader would replace (`provider.expands`: a `ct` under
/// `/opt/${x}/` would be run from another path).
Result<void> check_launch(const Provider& provider, const ServerLaunch& launch);

/// The server entry of a JSON host (check_launch first), and every member CLEO owns in it (set or
/// removed on install; the user's own members — env, cwd, timeout, disabled … — stay).
json::Value json_entry(const Provider& provider, const ServerLaunch& launch);
std::span<const std::string_view> json_owned_keys();
/// The keys of a TOML host's [mcp_servers.cleo] table, and every key CLEO owns there.
std::vector<host_config::TomlKey> toml_keys(const Provider& provider, const ServerLaunch& launch);
std::vector<std::string_view> toml_owned_keys(const Provider& provider);
/// The TOML table of CLEO's entry ("mcp_servers.cleo").
std::string toml_table(const Provider& provider);

/// The configuration a host expects, as a file of its own would hold it (`ct mcp-config`).
std::string snippet(const Provider& provider, const ServerLaunch& launch);

/// One line for the person once an entry is written or printed: what a project's entry needs in
/// the host before it runs, that a portable `ct` must be on the host's PATH, where the token
/// comes from, and how to check that the host finds the server.
std::string entry_note(const Provider& provider, bool user_scope, const ServerLaunch& launch);

/// The command line of the host's hook: `command briefing --hook <id>` quoted for the shell the
/// host runs it with (`HookSupport::shell`), so that a `ct` under a path with a space or a quote
/// runs as that program.
std::string hook_command(const Provider& provider, std::string_view command);
/// The hook entry `ct` writes for the host (its command is hook_command()), and whether an entry
/// of a host's hook list is one `ct` wrote (it runs `briefing --hook`).
json::Value hook_entry(const Provider& provider, std::string_view command);
bool is_cleo_hook(const json::Value& entry);
/// What the hook prints: the briefing `text` as the host loads it into context; for an empty
/// `text`, what says nothing to the host (no output, or Cursor's bare {"continue":true}).
std::string hook_output(const Provider& provider, std::string_view text);
/// One firing of the host's session-start hooks, from the JSON it writes on each hook's stdin: its
/// session id and the start's source ("…\nstartup", "…\ncompact"), the same for every hook it runs
/// for that start (the project's and the user's); nullopt when the input names no session.
std::optional<std::string> hook_firing(const Provider& provider, const json::Value& input);

/// The file and where it is for a scope, or nullopt when the host has none for it.
std::optional<std::string_view> config_file(const Provider& provider, bool user_scope);

}  // namespace ct::providers
