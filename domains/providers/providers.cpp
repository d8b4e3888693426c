#include "domains/providers/providers.h"

#include <array>

namespace ct::providers {
namespace {

// Sources: each host's documentation on MCP servers and instruction files (2025–2026); client
// names: the clientInfo.name each host's MCP client sends in initialize.
// User-scope paths are the Linux ones where a host differs by platform (VS Code keeps its user
// folder under ~/.config/Code on Linux, ~/Library/Application Support/Code on macOS).
const std::array<Provider, 7> kProviders = {{
    {.id = "claude", .name = "Claude Code", .binaries = {"claude"},
     .client_names = {"claude-code"},
     .instruction_files = {"CLAUDE.md"}, .user_instructions = ".claude/CLAUDE.md", .inject_target = "CLAUDE.md",
     .format = ConfigFormat::Json, .servers_key = "mcpServers",
     .project_config = ".mcp.json", .user_config = ".claude.json",
     .project_dir = ".claude", .user_dir = ".claude", .headless = {"claude", "-p"},
     .stdio_type = "", .http_type = "http", .url_key = "url"},
    {.id = "codex", .name = "Codex CLI", .binaries = {"codex"},
     .client_names = {"codex-mcp-client", "codex-vscode"},
     .instruction_files = {"AGENTS.md"}, .user_instructions = ".codex/AGENTS.md", .inject_target = "AGENTS.md",
     .format = ConfigFormat::Toml, .servers_key = "mcp_servers",
     .project_config = "", .user_config = ".codex/config.toml",
     .project_dir = ".codex", .user_dir = ".codex", .headless = {"codex", "exec"},
     .stdio_type = "", .http_type = "", .url_key = "url"},
    {.id = "cursor", .name = "Cursor", .binaries = {"cursor-agent", "cursor"},
     .client_names = {"cursor-vscode", "cursor"},
     .instruction_files = {".cursor/rules/", "AGENTS.md"}, .user_instructions = "", .inject_target = "AGENTS.md",
     .format = ConfigFormat::Json, .servers_key = "mcpServers",
     .project_config = ".cursor/mcp.json", .user_config = ".cursor/mcp.json",
     .project_dir = ".cursor", .user_dir = ".cursor", .headless = {"cursor-agent", "-p"},
     .stdio_type = "", .http_type = "", .url_key = "url"},
    {.id = "gemini", .name = "Gemini CLI", .binaries = {"gemini"},
     .client_names = {"gemini-cli", "gemini-cli-mcp-client"},
     .instruction_files = {"GEMINI.md"}, .user_instructions = ".gemini/GEMINI.md", .inject_target = "GEMINI.md",
     .format = ConfigFormat::Json, .servers_key = "mcpServers",
     .project_config = ".gemini/settings.json", .user_config = ".gemini/settings.json",
     .project_dir = ".gemini", .user_dir = ".gemini", .headless = {"gemini", "-p"},
     .stdio_type = "", .http_type = "", .url_key = "httpUrl"},
    {.id = "windsurf", .name = "Windsurf", .binaries = {"windsurf"},
     .client_names = {"windsurf", "windsurf-client"},
     .instruction_files = {".windsurf/rules/", "AGENTS.md"},
     .user_instructions = ".codeium/windsurf/memories/global_rules.md", .inject_target = "AGENTS.md",
     .format = ConfigFormat::Json, .servers_key = "mcpServers",
     .project_config = "", .user_config = ".codeium/windsurf/mcp_config.json",
     .project_dir = ".windsurf", .user_dir = ".codeium/windsurf", .headless = {},
     .stdio_type = "", .http_type = "", .url_key = "serverUrl"},
    {.id = "vscode", .name = "VS Code (Copilot)", .binaries = {"code"},
     .client_names = {"Visual Studio Code", "vscode"},
     .instruction_files = {".github/copilot-instructions.md", "AGENTS.md"}, .user_instructions = "",
     .inject_target = "AGENTS.md",
     .format = ConfigFormat::Json, .servers_key = "servers",
     .project_config = ".vscode/mcp.json", .user_config = ".config/Code/User/mcp.json",
     .project_dir = ".vscode", .user_dir = ".config/Code", .headless = {},
     .stdio_type = "stdio", .http_type = "http", .url_key = "url"},
    {.id = "opencode", .name = "opencode", .binaries = {"opencode"},
     .client_names = {"opencode"},
     .instruction_files = {"AGENTS.md"}, .user_instructions = ".config/opencode/AGENTS.md", .inject_target = "AGENTS.md",
     .format = ConfigFormat::Json, .servers_key = "mcp",
     .project_config = "opencode.json", .user_config = ".config/opencode/opencode.json",
     .project_dir = ".opencode", .user_dir = ".config/opencode", .headless = {"opencode", "run"},
     .stdio_type = "local", .http_type = "remote", .url_key = "url", .command_array = true, .enabled_key = true},
}};

constexpr std::array<std::string_view, 3> kTomlOwned = {"command", "args", "url"};
// Every member json_entry() writes for some host.
constexpr std::array<std::string_view, 7> kJsonOwned = {"type", "command", "args", "url", "httpUrl", "serverUrl",
                                                        "enabled"};

}  // namespace

std::string_view to_string(ConfigFormat format) { return format == ConfigFormat::Toml ? "toml" : "json"; }

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

json::Value json_entry(const Provider& provider, const ServerLaunch& launch) {
  json::Value entry = json::Value::object();
  if (launch.transport == Transport::Http) {
    if (!provider.http_type.empty()) entry.set("type", provider.http_type);
    entry.set(provider.url_key, launch.url);
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

std::vector<host_config::TomlKey> toml_keys(const ServerLaunch& launch) {
  if (launch.transport == Transport::Http) return {{"url", host_config::toml_string(launch.url)}};
  std::string args = "[";
  for (std::size_t i = 0; i < launch.args.size(); ++i) args += (i ? ", " : "") + host_config::toml_string(launch.args[i]);
  args += "]";
  return {{"command", host_config::toml_string(launch.command)}, {"args", std::move(args)}};
}

std::span<const std::string_view> toml_owned_keys() { return kTomlOwned; }

std::span<const std::string_view> json_owned_keys() { return kJsonOwned; }

std::string toml_table(const Provider& provider) { return std::string(provider.servers_key) + "." + std::string(kServerName); }

std::string snippet(const Provider& provider, const ServerLaunch& launch) {
  if (provider.format == ConfigFormat::Toml) {
    auto edit = host_config::set_toml_table("", toml_table(provider), toml_keys(launch), toml_owned_keys(), "snippet");
    return edit ? edit->text : "";
  }
  auto edit = host_config::set_json_server("", provider.servers_key, kServerName, json_entry(provider, launch), json_owned_keys(),
                                           "snippet");
  return edit ? edit->text : "";
}

std::optional<std::string_view> config_file(const Provider& provider, bool user_scope) {
  std::string_view file = user_scope ? provider.user_config : provider.project_config;
  if (file.empty()) return std::nullopt;
  return file;
}

}  // namespace ct::providers
