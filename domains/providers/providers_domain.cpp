// providers domain — the agent hosts of providers.h: list, show, detect (programs on PATH,
// folders present) and install (CLEO's MCP server entry merged into a host's configuration
// file, textually: engines/adapters/host_config.h). providers.inject lives in disclosure/ with the
// injection it reuses.
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <system_error>

#include "core/file_read.h"
#include "domains/bind.h"
#include "domains/context.h"
#include "domains/providers/providers.h"
#include "domains/registry.h"
#include "engines/adapters/host_config.h"
#include "engines/project/project.h"
#include "engines/adapters/subprocess.h"

namespace ct {
namespace {

namespace fs = std::filesystem;
using providers::Provider;

std::vector<std::string_view> provider_choices() {
  std::vector<std::string_view> out;
  for (const auto& provider : providers::all()) out.push_back(provider.id);
  return out;
}

json::Value strings(const std::vector<std::string_view>& items) {
  json::Value out = json::Value::array();
  for (auto item : items) out.push_back(std::string(item));
  return out;
}

json::Value home_path(std::string_view relative) {
  if (relative.empty()) return nullptr;
  return "~/" + std::string(relative);
}

json::Value project_path(std::string_view relative) {
  if (relative.empty()) return nullptr;
  return std::string(relative);
}

json::Value summary(const Provider& provider) {
  json::Value row = json::Value::object();
  row.set("id", std::string(provider.id));
  row.set("name", std::string(provider.name));
  row.set("binary", std::string(provider.binaries.front()));
  row.set("instructionFiles", strings(provider.instruction_files));
  row.set("configFormat", std::string(providers::to_string(provider.format)));
  row.set("projectConfig", project_path(provider.project_config));
  row.set("userConfig", home_path(provider.user_config));
  return row;
}

Result<Reply> list(Context&, const NoArgs&) {
  json::Value rows = json::Value::array();
  for (const auto& provider : providers::all()) rows.push_back(summary(provider));
  return Reply::of(std::move(rows));
}

struct ShowArgs {
  std::string provider;
};

Result<Reply> show(Context&, const ShowArgs& args) {
  const Provider& provider = *providers::find(args.provider);
  json::Value data = json::Value::object();
  data.set("id", std::string(provider.id));
  data.set("name", std::string(provider.name));
  data.set("binaries", strings(provider.binaries));
  data.set("instructionFiles", strings(provider.instruction_files));
  data.set("userInstructions", home_path(provider.user_instructions));
  data.set("injectTarget", std::string(provider.inject_target));
  data.set("configFormat", std::string(providers::to_string(provider.format)));
  data.set("serversKey", std::string(provider.servers_key));
  data.set("projectConfig", project_path(provider.project_config));
  data.set("userConfig", home_path(provider.user_config));
  data.set("headless", provider.headless.empty() ? json::Value(nullptr) : strings(provider.headless));
  json::Value entries = json::Value::object();
  providers::ServerLaunch stdio;
  providers::ServerLaunch http{.transport = providers::Transport::Http, .url = std::string(providers::kDefaultUrl)};
  entries.set("stdio", providers::snippet(provider, stdio));
  entries.set("http", providers::snippet(provider, http));
  data.set("entries", std::move(entries));
  // The session-start hook providers.install hooks writes, or why there is none.
  json::Value hook = json::Value::object();
  if (provider.hook) {
    hook.set("projectFile", project_path(provider.hook->project_file));
    hook.set("userFile", home_path(provider.hook->user_file));
    hook.set("event", std::string(provider.hook->event));
    hook.set("entry", providers::hook_entry(provider, providers::kPortableCommand));
    hook.set("note", std::string(provider.hook->note));
  } else {
    hook.set("supported", false);
    if (!provider.no_hook.empty()) hook.set("why", std::string(provider.no_hook));
  }
  data.set("hook", std::move(hook));
  return Reply::of(std::move(data));
}

bool present(const fs::path& path) {
  std::error_code ec;
  return fs::exists(path, ec);
}

Result<Reply> detect(Context& context, const NoArgs&) {
  const char* path = std::getenv("PATH");
  const std::vector<std::string> env = {"PATH=" + std::string(path ? path : "")};
  std::optional<fs::path> root;
  if (auto project = context.workspace->project()) root = project->root;
  auto home = context.home_dir();
  json::Value rows = json::Value::array();
  json::Value found_ids = json::Value::array();
  for (const auto& provider : providers::all()) {
    json::Value row = json::Value::object();
    row.set("id", std::string(provider.id));
    json::Value programs = json::Value::array();
    for (auto binary : provider.binaries) {
      if (auto found = find_program(binary, env)) {
        json::Value program = json::Value::object();
        program.set("name", std::string(binary));
        program.set("path", found->string());
        programs.push_back(std::move(program));
      }
    }
    const bool in_project = root && ((!provider.project_dir.empty() && present(*root / provider.project_dir)) ||
                                     (!provider.project_config.empty() && present(*root / provider.project_config)));
    const bool in_home = home && ((!provider.user_dir.empty() && present(*home / provider.user_dir)) ||
                                  (!provider.user_config.empty() && present(*home / provider.user_config)));
    const bool detected = !programs.empty() || in_project || in_home;
    row.set("detected", detected);
    row.set("programs", std::move(programs));
    row.set("project", in_project);
    row.set("home", in_home);
    if (detected) found_ids.push_back(std::string(provider.id));
    rows.push_back(std::move(row));
  }
  json::Value data = json::Value::object();
  data.set("detected", std::move(found_ids));
  data.set("providers", std::move(rows));
  return Reply::of(std::move(data));
}

Error outside_refused(std::string_view what) {
  Error error(ErrorCode::InvalidInput, std::string(what) + ": this caller may not read or write outside the project");
  error.fix = "run `ct providers install … --scope user` in a terminal; " + Context::let_agents_leave_project();
  return std::move(error).with_detail("field", "scope");
}

/// The other scope's hook file when it holds CLEO's hook already (a team's in the project, a
/// person's own in their home: the host runs both), as the reply names it; nullopt when it does
/// not, cannot be read, or lies where this caller may not read.
std::optional<std::string> other_scope_hook(Context& context, const Provider& provider, bool user) {
  const providers::HookSupport& hook = *provider.hook;
  fs::path file;
  std::string label;
  if (user) {
    auto project = context.workspace->project();
    if (!project) return std::nullopt;
    file = project->root / hook.project_file;
    label = "the project's " + std::string(hook.project_file);
  } else {
    auto home = context.home_dir();
    if (!home || !context.may_leave_project()) return std::nullopt;
    file = *home / hook.user_file;
    label = "your ~/" + std::string(hook.user_file);
  }
  auto text = read_regular_file(file, {4LL << 20, std::chrono::milliseconds(5000)});
  if (!text) return std::nullopt;
  auto document = host_config::read_json(*text, label);
  if (!document || !(*document)["hooks"][hook.event].is_array()) return std::nullopt;
  const auto& entries = (*document)["hooks"][hook.event].as_array();
  if (std::none_of(entries.begin(), entries.end(), providers::is_cleo_hook)) return std::nullopt;
  return label;
}

struct InstallArgs {
  std::string provider;
  std::string scope;
  std::string transport;
  std::optional<std::string> url;
  std::optional<std::string> token_env;
  std::optional<std::string> command;
  bool hooks = false;
  bool dry_run = false;
};

/// How the host launches CLEO: stdio with the ct command (the installed ct's absolute path in a
/// user's own file), or http with the url of `ct serve` and the variable holding its token.
Result<providers::ServerLaunch> server_launch(Context& context, const InstallArgs& args, const Provider& provider,
                                              bool user) {
  providers::ServerLaunch launch;
  launch.transport = args.transport == "http" ? providers::Transport::Http : providers::Transport::Stdio;
  // url and tokenEnv describe a connection to `ct serve`: with transport http only.
  const std::pair<std::string_view, const std::optional<std::string>&> http_only[] = {{"url", args.url},
                                                                                      {"tokenEnv", args.token_env}};
  for (const auto& [field, value] : http_only) {
    if (!value || launch.transport == providers::Transport::Http) continue;
    return fail(Error(ErrorCode::InvalidParams, std::string(field) + ": only with transport http")
                    .with_fix(context.registry->find("providers", "install")
                                  ->call_with(R"({"provider":")" + std::string(provider.id) +
                                              R"(","transport":"http",")" + std::string(field) + R"(":")" + *value +
                                              "\"}"))
                    .with_detail("field", std::string(field)));
  }
  launch.url = args.url.value_or(std::string(providers::kDefaultUrl));
  launch.token_env = args.token_env.value_or("");
  if (args.command) {
    launch.command = *args.command;
  } else {
    auto installed = installed_program("ct");
    launch.command = providers::default_command(user, installed ? std::optional(installed->string()) : std::nullopt);
  }
  CT_TRY(providers::check_launch(provider, launch));
  return launch;
}

/// Where the host's files are edited: a host file as the filesystem reaches it, under the user's
/// home (scope user) or the project.
struct HostFiles {
  Context& context;
  fs::path base;
  bool user = false;
  bool dry_run = false;

  /// One file edited by `editor`: {file, action, diff?, backup?}, and whether it changed.
  Result<std::pair<json::Value, bool>> edit(std::string_view relative_file, const std::string& file_label,
                                            const host_config::Editor& editor) const {
    fs::path path = base / relative_file;
    // In the project, the file as the filesystem reaches it must stay inside the project (a
    // symlink anywhere on the way, `.vscode -> /elsewhere` too), unless the caller may leave it.
    if (!user && !lies_within(path, base) && !context.may_leave_project())
      return fail(outside_refused(file_label + " leads outside the project; scope project"));
    // A symlink is written through by edit_file (the link stays; a dangling one or a loop is refused).
    CT_TRY_ASSIGN(host_config::FileEdit done, host_config::edit_file(path, file_label, editor, dry_run, context.now()));
    json::Value out = json::Value::object();
    out.set("file", file_label);
    if (!done.edit.changed) {
      out.set("action", "unchanged");
      return std::pair{std::move(out), false};
    }
    const std::string action = done.existed ? "updated" : "created";
    out.set("action", dry_run ? "would be " + action : action);
    out.set("diff", host_config::line_diff(done.before, done.edit.text, file_label));
    if (done.backup) out.set("backup", (fs::path(file_label).parent_path() / done.backup->filename()).string());
    return std::pair{std::move(out), true};
  }
};

/// The session-start hook that loads `ct briefing` into the agent's context, in the host's hook
/// file, with its note (and whether the other scope has CLEO's hook too).
Result<std::pair<json::Value, bool>> install_hook(const HostFiles& files, const Provider& provider,
                                                  const providers::ServerLaunch& launch) {
  const providers::HookSupport& hook = *provider.hook;
  const std::string_view hook_file = files.user ? hook.user_file : hook.project_file;
  const std::string hook_label = (files.user ? "~/" : "") + std::string(hook_file);
  json::Value top = json::Value::object();
  if (hook.version_key) top.set("version", 1);
  host_config::Editor hook_editor = [&](std::string_view text) {
    return host_config::set_json_hook(text, hook.event, providers::hook_entry(provider, launch.command),
                                      providers::is_cleo_hook, top, hook_label);
  };
  CT_TRY_ASSIGN(auto hooked, files.edit(hook_file, hook_label, hook_editor));
  std::string note(hook.note);
  if (auto other = other_scope_hook(files.context, provider, files.user))
    note += "; " + *other + " has CLEO's hook too: " + std::string(provider.name) +
            " runs both at each start, and the first to run briefs (once per session start)";
  hooked.first.set("note", std::move(note));
  return hooked;
}

Result<Reply> install(Context& context, const InstallArgs& args) {
  const Provider& provider = *providers::find(args.provider);
  const bool user = args.scope == "user";
  CT_TRY_ASSIGN(providers::ServerLaunch launch, server_launch(context, args, provider, user));
  if (args.hooks && !provider.hook) {
    Error error(ErrorCode::InvalidInput, std::string(provider.name) + " has no session-start hook CLEO can declare" +
                                             (provider.no_hook.empty() ? std::string() : ": " + std::string(provider.no_hook)));
    error.fix = context.registry->find("providers", "show")->call_with(R"({"provider":")" + std::string(provider.id) +
                                                                        "\"}") +
                " says what it supports";
    return fail(std::move(error).with_detail("field", "hooks"));
  }
  auto relative = providers::config_file(provider, user);
  if (!relative) {
    const char* other = user ? "project" : "user";
    Error error(ErrorCode::InvalidInput, std::string(provider.name) + " has no " + (user ? "user" : "project") +
                                             "-scope MCP configuration file");
    error.fix = context.registry->find("providers", "install")
                    ->call_with(R"({"provider":")" + std::string(provider.id) + R"(","scope":")" + other + "\"}");
    return fail(std::move(error).with_detail("field", "scope"));
  }
  HostFiles files{context, {}, user, args.dry_run};
  std::string label;
  if (user) {
    if (!context.may_leave_project()) return fail(outside_refused("scope user"));
    CT_TRY_ASSIGN(files.base, context.home_dir());
    label = "~/" + std::string(*relative);
  } else {
    CT_TRY_ASSIGN(Project project, context.workspace->project());
    files.base = project.root;
    label = std::string(*relative);
  }
  host_config::Editor server_editor = [&](std::string_view text) {
    return provider.format == providers::ConfigFormat::Toml
               ? host_config::set_toml_table(text, providers::toml_table(provider), providers::toml_keys(provider, launch),
                                             providers::toml_owned_keys(provider), label)
               : host_config::set_json_server(text, provider.servers_key, providers::kServerName,
                                              providers::json_entry(provider, launch), providers::json_owned_keys(),
                                              label);
  };
  CT_TRY_ASSIGN(auto server, files.edit(*relative, label, server_editor));
  json::Value data = json::Value::object();
  data.set("provider", std::string(provider.id));
  data.set("scope", user ? "user" : "project");
  for (const auto& [key, value] : server.first.as_object()) data.set(key, value);
  data.set("note", providers::entry_note(provider, user, launch));
  bool changed = server.second;
  if (args.hooks) {
    CT_TRY_ASSIGN(auto hooked, install_hook(files, provider, launch));
    data.set("hooks", std::move(hooked.first));
    changed = changed || hooked.second;
  }
  return Reply::noted(std::move(data), changed ? std::optional<ErrorCode>() : std::optional(ErrorCode::NoChange));
}

const ParamSpec kProviderParam = {.name = "provider", .type = ParamType::Enum, .required = true,
                                  .description = "The agent host", .positional = true};

}  // namespace

void register_providers_domain(Registry& registry) {
  ParamSpec provider = kProviderParam;
  provider.choices = provider_choices();
  registry.add({.domain = "providers", .name = "list", .gateway = Gateway::Query,
                .summary = "List known agent hosts and their files",
                .returns = "[{id, name, binary, instructionFiles[], configFormat json|toml, projectConfig|null, "
                           "userConfig|null}]",
                .examples = {{R"({})", "every host"}},
                .idempotent = true, .needs_project = false, .tier = 2, .handler = no_args(list)});
  const auto show_args = bind(field(&ShowArgs::provider, provider));
  registry.add({.domain = "providers", .name = "show", .gateway = Gateway::Query,
                .summary = "One host: instruction and MCP config files, headless command",
                .params = show_args.specs(),
                .returns = "{id, name, binaries[], instructionFiles[], userInstructions|null, injectTarget, "
                           "configFormat, serversKey, projectConfig|null, userConfig|null, headless[]|null, "
                           "entries{stdio, http} (the config text a new file would hold)}",
                .examples = {{R"({"provider":"codex"})", "Codex CLI: TOML in ~/.codex/config.toml"}},
                .idempotent = true, .needs_project = false, .tier = 2, .handler = show_args.handler(show)});
  registry.add({.domain = "providers", .name = "detect", .gateway = Gateway::Query,
                .summary = "Find hosts here: programs on PATH, project and home folders",
                .returns = "{detected[ids], providers[{id, detected, programs[{name, path}], project, home}]}",
                .examples = {{R"({})", "which hosts are here"}},
                .idempotent = true, .needs_project = false, .tier = 2, .handler = no_args(detect)});
  const auto install_args = bind(
      field(&InstallArgs::provider, provider),
      field(&InstallArgs::scope, {.name = "scope", .type = ParamType::Enum, .default_json = R"("project")",
                                  .choices = {"project", "user"},
                                  .description = "project: the project's file; user: the one in your home (a person, "
                                                 "or security.allowOutsideProject)"}),
      field(&InstallArgs::transport, {.name = "transport", .type = ParamType::Enum, .default_json = R"("stdio")",
                                      .choices = {"stdio", "http"},
                                      .description = "stdio: the host starts `ct mcp`; http: it connects to `ct serve`"}),
      field(&InstallArgs::url, {.name = "url", .type = ParamType::String, .max = 2000, .pattern = "^https?://\\S+$",
                                .description = "http: the server's URL (default http://127.0.0.1:8808/mcp)",
                                .single_line = true}),
      field(&InstallArgs::token_env,
            {.name = "tokenEnv", .type = ParamType::String, .max = 100, .pattern = "^[A-Za-z_][A-Za-z0-9_]*$",
             .description = "http: the environment variable holding the server's token (CLEO_SERVE_TOKEN, "
                            "which ct serve reads too); the entry sends it as a bearer header, never "
                            "the token itself",
             .single_line = true}),
      field(&InstallArgs::command, {.name = "command", .type = ParamType::String, .min = 1, .max = 1000,
                                    .description = "stdio: the ct program the host runs (default: scope user the installed "
                                                   "ct's absolute path, scope project ct on the PATH)",
                                    .single_line = true}),
      field(&InstallArgs::hooks, {.name = "hooks", .type = ParamType::Bool,
                                  .description = "Also merge a session-start hook that loads `ct briefing` into the "
                                                 "agent's context (Claude Code, Codex, Gemini CLI, Cursor)"}),
      field(&InstallArgs::dry_run,
            {.name = "dryRun", .type = ParamType::Bool, .description = "Return the diff, write nothing", .dry_run = true}));
  registry.add({.domain = "providers", .name = "install", .gateway = Gateway::Mutate,
                .summary = "Merge CLEO's MCP server into a host's config file",
                .params = install_args.specs(),
                .returns = "{provider, scope, file, action created|updated|unchanged (dry run: would be …), diff, "
                           "backup? (the previous file, beside it), note (approval, how to check), hooks?{file, "
                           "action, diff, backup?, note}}; E_NO_CHANGE note when nothing changed",
                .errors = {ErrorCode::Validation, ErrorCode::FileError, ErrorCode::InvalidInput,
                           ErrorCode::NotInitialized, ErrorCode::ConfigError},
                .examples = {{R"({"provider":"claude"})", "ct mcp in the project's .mcp.json"},
                             {R"({"provider":"vscode","dryRun":true})", "the change to .vscode/mcp.json, unwritten"},
                             {R"({"provider":"claude","hooks":true})", "and a SessionStart hook loading ct briefing"},
                             {R"({"provider":"cursor","transport":"http","url":"http://127.0.0.1:8808/mcp"})",
                              "Cursor connects to a running ct serve"}},
                .idempotent = true, .needs_project = false, .tier = 2, .handler = install_args.handler(install)});
}

}  // namespace ct
