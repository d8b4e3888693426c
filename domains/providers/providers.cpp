#include "domains/providers/providers.h"

#include <algorithm>
#include <array>
#include <cctype>

#include "engines/adapters/split_command.h"

namespace ct::providers {
namespace {

// Sources: Claude Code's hooks reference and its agent SDK's SessionStart types; Codex's
// codex-rs/hooks (plain stdout becomes developer context); Gemini CLI's docs/hooks/reference.md
// (JSON only; matchers of lifecycle events are exact strings); Cursor's hooks.json as hosts'
// plug-ins write it (its docs could not be read). No matcher: a hook that loads the briefing runs
// at every session start, so a source a host adds is not missed (Claude Code 2.1's "fork", which
// "startup|resume|clear|compact" skipped). What each writes on the hook's stdin: Claude Code,
// Codex and Gemini CLI {session_id, source, …}; Cursor {conversation_id, …}, no source.
// The shell each runs the command with (on Linux and macOS): Claude Code `/bin/sh -c` (its
// "/bin/sh: 1: …: not found" for an unquoted path with a space, tests/hosts); Codex `$SHELL -lc`, else
// `/bin/sh -lc` (codex-rs/hooks/src/engine/command_runner.rs); Gemini CLI `bash -c`
// (packages/core/src/hooks/hookRunner.ts, getShellConfiguration); Cursor a shell command line. On
// Windows they use cmd.exe or PowerShell instead, whose quoting differs: ct is built for Linux and
// macOS.
constexpr HookSupport kClaudeHook{.project_file = ".claude/settings.json", .user_file = ".claude/settings.json",
                                  .event = "SessionStart", .matcher = "", .timeout = 30, .output = HookOutput::Text,
                                  .note = "Claude Code runs it at every session start: startup, resume, /clear, a fork "
                                          "and after a compaction"};
constexpr HookSupport kCodexHook{.project_file = ".codex/hooks.json", .user_file = ".codex/hooks.json",
                                 .event = "SessionStart", .matcher = "", .timeout = 30, .output = HookOutput::Text,
                                 .note = "Codex runs a hook only once you trust it in /hooks (again after each change)"};
constexpr HookSupport kGeminiHook{.project_file = ".gemini/settings.json", .user_file = ".gemini/settings.json",
                                  .event = "SessionStart", .matcher = "", .name = "cleo-briefing", .timeout = 30000,
                                  .output = HookOutput::GeminiJson,
                                  .note = "Gemini CLI (0.27 or later) runs it at startup, resume and /clear in a "
                                          "trusted folder, not after a compression"};
constexpr HookSupport kCursorHook{.project_file = ".cursor/hooks.json", .user_file = ".cursor/hooks.json",
                                  .event = "sessionStart", .matcher = "", .grouped = false, .timeout = 30,
                                  .output = HookOutput::CursorJson, .version_key = true,
                                  .session_key = "conversation_id", .source_key = "",
                                  .note = "Cursor runs it when a session starts, not after a summarisation"};


// Sources: each host's documentation on MCP servers and instruction files (2025–2026); client
// names: the clientInfo.name each host's MCP client sends in initialize. Environment variables in
// an HTTP entry: Claude Code expands ${VAR} in .mcp.json and ~/.claude.json (command, args, env,
// url, headers); Gemini CLI expands $VAR and ${VAR} in every string of settings.json when it
// loads it; Cursor, Windsurf and VS Code expand ${env:VAR} in mcp.json; opencode {env:VAR} in
// opencode.json; Codex names the variable in bearer_token_env_var (it refuses an inline token).
// Codex reads a project's .codex/config.toml only in a trusted project. What each loader replaces
// in every string (hence `expands`): Claude Code ${VAR} and ${VAR:-default}; Gemini CLI $VAR and
// ${VAR} (when VAR is set); Cursor, Windsurf and VS Code ${…} (env:, userHome, workspaceFolder …);
// opencode {env:…} and {file:…} anywhere in the file; Codex nothing.
// User-scope paths are the Linux ones where a host differs by platform (VS Code keeps its user
// folder under ~/.config/Code on Linux, ~/Library/Application Support/Code on macOS).
const std::array<Provider, 7> kProviders = {{
    {.id = "claude", .name = "Claude Code", .binaries = {"claude"},
     .client_names = {"claude-code"},
     .instruction_files = {"CLAUDE.md"}, .user_instructions = ".claude/CLAUDE.md", .inject_target = "CLAUDE.md",
     .format = ConfigFormat::Json, .servers_key = "mcpServers",
     .project_config = ".mcp.json", .user_config = ".claude.json",
     .project_dir = ".claude", .user_dir = ".claude", .headless = {"claude", "-p"},
     .stdio_type = "", .http_type = "http", .url_key = "url", .token_env = "${VAR}", .expands = {"${"}, .check = "claude mcp list",
     .project_approval = "Claude Code lists it as pending until you approve it", .hook = &kClaudeHook},
    {.id = "codex", .name = "Codex CLI", .binaries = {"codex"},
     .client_names = {"codex-mcp-client", "codex-vscode"},
     .instruction_files = {"AGENTS.md"}, .user_instructions = ".codex/AGENTS.md", .inject_target = "AGENTS.md",
     .format = ConfigFormat::Toml, .servers_key = "mcp_servers",
     .project_config = ".codex/config.toml", .user_config = ".codex/config.toml",
     .project_dir = ".codex", .user_dir = ".codex", .headless = {"codex", "exec"},
     .stdio_type = "", .http_type = "", .url_key = "url", .token_env = "bearer_token_env_var", .check = "codex mcp list",
     .project_approval = "Codex reads it only once you trust the project", .hook = &kCodexHook},
    {.id = "cursor", .name = "Cursor", .binaries = {"cursor-agent", "cursor"},
     .client_names = {"cursor-vscode", "cursor"},
     .instruction_files = {".cursor/rules/", "AGENTS.md"}, .user_instructions = "", .inject_target = "AGENTS.md",
     .format = ConfigFormat::Json, .servers_key = "mcpServers",
     .project_config = ".cursor/mcp.json", .user_config = ".cursor/mcp.json",
     .project_dir = ".cursor", .user_dir = ".cursor", .headless = {"cursor-agent", "-p"},
     .stdio_type = "", .http_type = "", .url_key = "url", .token_env = "${env:VAR}", .expands = {"${"},
     .check = "cursor-agent mcp list",
     .project_approval = "Cursor asks you to approve it", .hook = &kCursorHook},
    {.id = "gemini", .name = "Gemini CLI", .binaries = {"gemini"},
     .client_names = {"gemini-cli", "gemini-cli-mcp-client"},
     .instruction_files = {"GEMINI.md"}, .user_instructions = ".gemini/GEMINI.md", .inject_target = "GEMINI.md",
     .format = ConfigFormat::Json, .servers_key = "mcpServers",
     .project_config = ".gemini/settings.json", .user_config = ".gemini/settings.json",
     .project_dir = ".gemini", .user_dir = ".gemini", .headless = {"gemini", "-p"},
     .stdio_type = "", .http_type = "", .url_key = "httpUrl", .token_env = "${VAR}", .expands = {"$"}, .check = "gemini mcp list",
     .project_approval = "Gemini CLI keeps it disabled until you trust the folder", .hook = &kGeminiHook},
    {.id = "windsurf", .name = "Windsurf", .binaries = {"windsurf"},
     .client_names = {"windsurf", "windsurf-client"},
     .instruction_files = {".windsurf/rules/", "AGENTS.md"},
     .user_instructions = ".codeium/windsurf/memories/global_rules.md", .inject_target = "AGENTS.md",
     .format = ConfigFormat::Json, .servers_key = "mcpServers",
     .project_config = "", .user_config = ".codeium/windsurf/mcp_config.json",
     .project_dir = ".windsurf", .user_dir = ".codeium/windsurf", .headless = {},
     .stdio_type = "", .http_type = "", .url_key = "serverUrl", .token_env = "${env:VAR}", .expands = {"${"},
     .check = "Windsurf's MCP panel", .project_approval = "",
     .no_hook = "Windsurf's hooks cannot add to the model's context"},
    {.id = "vscode", .name = "VS Code (Copilot)", .binaries = {"code"},
     .client_names = {"Visual Studio Code", "vscode"},
     .instruction_files = {".github/copilot-instructions.md", "AGENTS.md"}, .user_instructions = "",
     .inject_target = "AGENTS.md",
     .format = ConfigFormat::Json, .servers_key = "servers",
     .project_config = ".vscode/mcp.json", .user_config = ".config/Code/User/mcp.json",
     .project_dir = ".vscode", .user_dir = ".config/Code", .headless = {},
     .stdio_type = "stdio", .http_type = "http", .url_key = "url", .token_env = "${env:VAR}", .expands = {"${"},
     .check = "MCP: List Servers in VS Code",
     .project_approval = "VS Code asks you to trust it, in a trusted workspace, before it starts",
     .no_hook = "VS Code has no session-start hook a settings file declares"},
    {.id = "opencode", .name = "opencode", .binaries = {"opencode"},
     .client_names = {"opencode"},
     .instruction_files = {"AGENTS.md"}, .user_instructions = ".config/opencode/AGENTS.md", .inject_target = "AGENTS.md",
     .format = ConfigFormat::Json, .servers_key = "mcp",
     .project_config = "opencode.json", .user_config = ".config/opencode/opencode.json",
     .project_dir = ".opencode", .user_dir = ".config/opencode", .headless = {"opencode", "run"},
     .stdio_type = "local", .http_type = "remote", .url_key = "url", .command_array = true, .enabled_key = true,
     .token_env = "{env:VAR}", .expands = {"{env:", "{file:"}, .check = "opencode mcp list", .project_approval = "",
     .no_hook = "opencode loads context at session start only from a JS plug-in (experimental.chat.system.transform)"},
}};

// Every member json_entry() writes for some host.
constexpr std::array<std::string_view, 8> kJsonOwned = {"type", "command", "args", "url", "httpUrl", "serverUrl",
                                                        "enabled", "headers"};

}  // namespace

std::string_view to_string(ConfigFormat format) { return format == ConfigFormat::Toml ? "toml" : "json"; }

std::string hook_command(const Provider& provider, std::string_view command) {
  const std::vector<std::string> argv = {std::string(command), "briefing", "--hook", std::string(provider.id)};
  switch (provider.hook->shell) {
    case HookShell::Posix: return join_command(argv);
  }
  return join_command(argv);
}

json::Value hook_entry(const Provider& provider, std::string_view command) {
  const HookSupport& hook = *provider.hook;
  json::Value run = json::Value::object();
  if (hook.grouped) run.set("type", "command");
  if (!hook.name.empty()) run.set("name", std::string(hook.name));
  run.set("command", hook_command(provider, command));
  run.set("timeout", hook.timeout);
  if (!hook.grouped) return run;
  json::Value group = json::Value::object();
  if (!hook.matcher.empty()) group.set("matcher", std::string(hook.matcher));
  group.set("hooks", json::Value::array_of(std::vector<json::Value>{std::move(run)}));
  return group;
}

bool is_cleo_hook(const json::Value& entry) {
  auto runs_briefing = [](const json::Value& run) {
    return run["command"].is_string() && run["command"].as_string().find(" briefing --hook ") != std::string::npos;
  };
  if (runs_briefing(entry)) return true;
  if (!entry["hooks"].is_array()) return false;
  const auto& runs = entry["hooks"].as_array();
  return std::any_of(runs.begin(), runs.end(), runs_briefing);
}

std::string hook_output(const Provider& provider, std::string_view text) {
  json::Value out = json::Value::object();
  switch (provider.hook ? provider.hook->output : HookOutput::Text) {
    case HookOutput::Text: return std::string(text);
    case HookOutput::GeminiJson: {
      if (text.empty()) return "";
      json::Value specific = json::Value::object();
      specific.set("hookEventName", "SessionStart");
      specific.set("additionalContext", std::string(text));
      out.set("hookSpecificOutput", std::move(specific));
      break;
    }
    case HookOutput::CursorJson:
      if (!text.empty()) out.set("additional_context", std::string(text));
      out.set("continue", true);
      break;
  }
  return out.dump();
}

std::optional<std::string> hook_firing(const Provider& provider, const json::Value& input) {
  if (!provider.hook || !input.is_object()) return std::nullopt;
  const json::Value& session = input[provider.hook->session_key];
  if (!session.is_string() || session.as_string().empty() || session.as_string().size() > 256) return std::nullopt;
  std::string firing = session.as_string() + "\n";
  if (!provider.hook->source_key.empty()) firing += input[provider.hook->source_key].string_or_empty();
  return firing;
}

std::span<const Provider> all() { return kProviders; }

const Provider* find(std::string_view id) {
  for (const auto& provider : kProviders)
    if (provider.id == id) return &provider;
  return nullptr;
}

const Provider* find_client(std::string_view client_name) {
  for (const auto& provider : kProviders)
    for (auto name : provider.client_names)
      if (name == client_name) return &provider;
  return nullptr;
}

std::vector<std::string> ids() {
  std::vector<std::string> out;
  for (const auto& provider : kProviders) out.emplace_back(provider.id);
  return out;
}

std::string default_command(bool user_scope, const std::optional<std::string>& installed) {
  if (user_scope && installed) return *installed;
  return std::string(kPortableCommand);
}

namespace {

/// Where in `text` the host's loader would replace something (`Provider::expands`), or npos.
std::size_t expansion_at(const Provider& provider, std::string_view text) {
  for (std::string_view trigger : provider.expands)
    for (std::size_t at = text.find(trigger); at != std::string_view::npos; at = text.find(trigger, at + 1)) {
      if (trigger != "$") return at;
      // $VAR or ${VAR}: a $ before anything else stays as written.
      const char next = at + 1 < text.size() ? text[at + 1] : '\0';
      if (std::isalnum(static_cast<unsigned char>(next)) || next == '_' || next == '{') return at;
    }
  return std::string_view::npos;
}

}  // namespace

Result<void> check_launch(const Provider& provider, const ServerLaunch& launch) {
  if (launch.transport == Transport::Stdio) {
    std::vector<std::string_view> words = {launch.command};
    words.insert(words.end(), launch.args.begin(), launch.args.end());
    for (std::string_view word : words)
      if (auto at = expansion_at(provider, word); at != std::string_view::npos)
        return fail(Error(ErrorCode::InvalidInput, std::string(provider.name) + " replaces '" +
                                                       std::string(word.substr(at, 2)) + "…' in its files, so it "
                                                       "would not run '" + std::string(word) + "' as written")
                        .with_fix("name it by a path without that (a link to ct in ~/.local/bin, say)")
                        .with_detail("field", word == launch.command ? "command" : "args"));
  }
  const std::string& name = launch.token_env;
  const bool identifier = !name.empty() && !std::isdigit(static_cast<unsigned char>(name.front())) &&
                          std::all_of(name.begin(), name.end(), [](char c) {
                            return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
                          });
  if (!name.empty() && !identifier)
    return fail(Error(ErrorCode::InvalidInput, "'" + name + "' is not an environment variable's name")
                    .with_fix("name the variable that holds the token, e.g. " + std::string(kTokenEnv))
                    .with_detail("field", "tokenEnv"));
  if (launch.transport == Transport::Http && !launch.token_env.empty() && provider.token_env.empty())
    return fail(Error(ErrorCode::InvalidInput, std::string(provider.name) +
                                                   " cannot take a token from an environment variable, and CLEO "
                                                   "never writes the token into its file")
                    .with_fix("add the Authorization header in " + std::string(provider.name) +
                              "'s own settings, or serve without --token on 127.0.0.1")
                    .with_detail("field", "tokenEnv"));
  return {};
}

namespace {

/// The host's reference to environment variable `name` (its token_env pattern, VAR replaced).
std::string env_reference(const Provider& provider, std::string_view name) {
  std::string out(provider.token_env);
  if (auto at = out.find("VAR"); at != std::string::npos) out.replace(at, 3, name);
  return out;
}

}  // namespace

json::Value json_entry(const Provider& provider, const ServerLaunch& launch) {
  json::Value entry = json::Value::object();
  if (launch.transport == Transport::Http) {
    if (!provider.http_type.empty()) entry.set("type", provider.http_type);
    entry.set(provider.url_key, launch.url);
    if (!launch.token_env.empty() && !provider.token_env.empty()) {
      json::Value headers = json::Value::object();
      headers.set("Authorization", "Bearer " + env_reference(provider, launch.token_env));
      entry.set("headers", std::move(headers));
    }
  } else {
    if (!provider.stdio_type.empty()) entry.set("type", provider.stdio_type);
    if (provider.command_array) {
      std::vector<std::string> argv = {launch.command};
      argv.insert(argv.end(), launch.args.begin(), launch.args.end());
      entry.set("command", json::Value::array_of(argv));
    } else {
      entry.set("command", launch.command);
      entry.set("args", json::Value::array_of(launch.args));
    }
  }
  if (provider.enabled_key) entry.set("enabled", true);
  return entry;
}

std::vector<host_config::TomlKey> toml_keys(const Provider& provider, const ServerLaunch& launch) {
  if (launch.transport == Transport::Http) {
    std::vector<host_config::TomlKey> keys = {{"url", host_config::toml_string(launch.url)}};
    if (!launch.token_env.empty() && !provider.token_env.empty())
      keys.emplace_back(std::string(provider.token_env), host_config::toml_string(launch.token_env));
    return keys;
  }
  std::string args = "[";
  for (std::size_t i = 0; i < launch.args.size(); ++i) args += (i ? ", " : "") + host_config::toml_string(launch.args[i]);
  args += "]";
  return {{"command", host_config::toml_string(launch.command)}, {"args", std::move(args)}};
}

std::vector<std::string_view> toml_owned_keys(const Provider& provider) {
  std::vector<std::string_view> owned = {"command", "args", "url"};
  if (!provider.token_env.empty()) owned.push_back(provider.token_env);
  return owned;
}

std::span<const std::string_view> json_owned_keys() { return kJsonOwned; }

std::string toml_table(const Provider& provider) { return std::string(provider.servers_key) + "." + std::string(kServerName); }

std::string snippet(const Provider& provider, const ServerLaunch& launch) {
  if (provider.format == ConfigFormat::Toml) {
    auto edit = host_config::set_toml_table("", toml_table(provider), toml_keys(provider, launch),
                                            toml_owned_keys(provider), "snippet");
    return edit ? edit->text : "";
  }
  auto edit = host_config::set_json_server("", provider.servers_key, kServerName, json_entry(provider, launch), json_owned_keys(),
                                           "snippet");
  return edit ? edit->text : "";
}

std::string entry_note(const Provider& provider, bool user_scope, const ServerLaunch& launch) {
  std::string note;
  auto add = [&note](std::string part) { note += (note.empty() ? "" : "; ") + std::move(part); };
  if (!user_scope && !provider.project_approval.empty()) add(std::string(provider.project_approval));
  if (launch.transport == Transport::Stdio && launch.command == kPortableCommand)
    add("`ct` must be on the PATH " + std::string(provider.name) + " starts with");
  if (launch.transport == Transport::Http && !launch.token_env.empty())
    add(std::string(provider.name) + " needs " + launch.token_env + " set to ct serve's token");
  add("check: " + std::string(provider.check));
  return note;
}

std::optional<std::string_view> config_file(const Provider& provider, bool user_scope) {
  std::string_view file = user_scope ? provider.user_config : provider.project_config;
  if (file.empty()) return std::nullopt;
  return file;
}

}  // namespace ct::providers
