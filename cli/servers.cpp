#include "cli/servers.h"

#include "cli/person.h"

#include <unistd.h>

#include <CLI/CLI.hpp>

#include <array>
#include <cstdio>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <optional>

#include "capability/probes.h"
#include "cli/render.h"
#include "core/log.h"
#include "gateway/product.h"
#include "domains/providers/providers.h"
#include "domains/registry.h"
#include "domains/router.h"
#include "engines/adapters/subprocess.h"
#include "gateway/server_commands.h"
#include "gateway/http_transport.h"

namespace ct::cli {
namespace {

constexpr std::array<ServerCommand, 3> kServerCommands = {{
    {"mcp", "Serve the MCP tools cleo_query and cleo_mutate on stdin/stdout (for agent hosts)"},
    {"serve", "Serve MCP over Streamable HTTP on 127.0.0.1 (initialises the project if needed)"},
    {"mcp-config", "Print the MCP client configuration for an agent host"},
}};

bool read_only_from_environment() {
  const char* value = std::getenv("CLEO_READ_ONLY");
  if (!value) return false;
  std::string_view text(value);
  return text == "1" || text == "true" || text == "yes";
}

int report(const Error& error) {
  Style style{color_enabled(STDERR_FILENO)};
  std::string text = render_error(error, style, registry());
  std::fwrite(text.data(), 1, text.size(), stderr);
  return error.exit_code();
}

struct ServerFlags {
  std::string project;
  bool read_only = false;
  std::string log_level;
  // serve
  mcp::HttpOptions http;
  std::vector<std::string> origins;
  bool no_dashboard = false;
  // mcp-config
  std::string client = "claude";
  std::string http_url;
  std::string scope = "user";
  std::string token_env;
};

void add_common(CLI::App& command, ServerFlags& flags) {
  command.add_option("--project", flags.project, "Project directory (default: CLEO_ROOT, else the nearest .cleo/ above)")
      ->type_name("DIR");
}

void add_server_flags(CLI::App& command, ServerFlags& flags) {
  add_common(command, flags);
  command.add_flag("--read-only", flags.read_only, "Refuse every change (also CLEO_READ_ONLY=1)");
  command.add_option("--log-level", flags.log_level, "Log to stderr at this level")
      ->check(CLI::IsMember({"error", "warn", "info", "debug"}))
      ->type_name("LEVEL");
}

/// The command `word` with its flags bound to `flags`, added to `app`: what run_server_command
/// parses and what the manual page lists.
CLI::App* add_server_command(CLI::App& app, std::string_view word, ServerFlags& flags) {
  std::string summary;
  for (const auto& command : kServerCommands)
    if (command.name == word) summary = std::string(command.summary);
  CLI::App* command = app.add_subcommand(std::string(word), summary);
  if (word == "mcp") {
    add_server_flags(*command, flags);
  } else if (word == "serve") {
    add_server_flags(*command, flags);
    command->add_option("--host", flags.http.host, "Address to bind (default 127.0.0.1)")
        ->type_name("ADDRESS");
    command->add_option("--port", flags.http.port, "Port (default 8808; 0 = any free port)")->type_name("PORT");
    command->add_option("--token", flags.http.token, "Require Authorization: Bearer <token> (also CLEO_SERVE_TOKEN)")
        ->type_name("TOKEN")
        ->envname(std::string(providers::kTokenEnv));
    command->add_option("--allow-origin", flags.origins, "Also accept browser requests from this origin (repeatable)")
        ->type_name("ORIGIN")
        ->allow_extra_args(false);
    command->add_option("--threads", flags.http.threads, "Requests run in parallel (default 4; 16 on PostgreSQL)")->type_name("N");
    command->add_option("--grace", flags.http.stop_grace_seconds,
                        "After Ctrl-C or SIGTERM, end within this many seconds whatever still runs (default 10)")
        ->type_name("SECONDS")
        ->check(CLI::Range(1, 3600));
    command->add_flag("--dashboard-write", flags.http.dashboard_write,
                      "People may add, update, complete and reassign tasks in the dashboard (as human@dashboard)");
    command->add_flag("--no-dashboard", flags.no_dashboard, "No web dashboard at /: serve MCP at /mcp only")
        ->excludes("--dashboard-write");
  } else {
    add_common(*command, flags);
    std::string hosts;
    for (const auto& host : mcp::config_hosts()) hosts += (hosts.empty() ? "" : "|") + host;
    command->add_option("--host", flags.client, "Agent host: " + hosts + " (default claude)")->type_name("HOST");
    CLI::Option* http =
        command->add_option("--http", flags.http_url, "Connect to a running `ct serve` at this URL instead of starting ct mcp")
            ->type_name("URL");
    command->add_option("--scope", flags.scope, "user: your own file, the installed ct's path (default); project: "
                                                "the project's shared file, ct on the PATH")
        ->check(CLI::IsMember({"user", "project"}))
        ->type_name("SCOPE");
    command->add_option("--token-env", flags.token_env, "With --http: send the token in this variable (CLEO_SERVE_TOKEN)")
        ->type_name("VAR")
        ->needs(http);
  }
  return command;
}

}  // namespace

std::span<const ServerCommand> server_commands() { return kServerCommands; }

bool is_server_command(std::string_view word) {
  for (const auto& command : kServerCommands)
    if (command.name == word) return true;
  return false;
}

void visit_server_command(std::string_view word, const std::function<void(const CLI::App&)>& visit) {
  CLI::App app("ct — CLEO task management", "ct");
  ServerFlags flags;
  visit(*add_server_command(app, word, flags));
}

/// Replaces this process with the `ct-serve` next to the running `ct` (same arguments).
int exec_http_server(const std::vector<std::string>& args) {
  auto program = installed_program("ct-serve");
  if (!program)
    return report(Error(ErrorCode::DependencyError, "ct-serve is not installed beside this ct")
                      .with_fix("reinstall CLEO: ct-serve belongs next to ct"));
  std::vector<char*> argv;
  std::string name = program->string();
  argv.push_back(name.data());
  std::vector<std::string> copy = args;
  for (auto& arg : copy) argv.push_back(arg.data());
  argv.push_back(nullptr);
  std::fflush(stdout);
  ::execv(name.c_str(), argv.data());
  return report(Error(ErrorCode::DependencyError, "cannot start " + name + ": " + std::strerror(errno))
                    .with_fix("reinstall CLEO: ct-serve belongs next to ct"));
}

int run_server_command(std::string_view word, const std::vector<std::string>& args, HttpRunner run_http,
                       std::shared_ptr<Workspace> workspace) {
  CLI::App app("ct — CLEO task management", "ct");
  ServerFlags flags;
  add_server_command(app, word, flags);
  std::vector<std::string> reversed(args.rbegin(), args.rend());
  try {
    app.parse(reversed);
  } catch (const CLI::CallForHelp&) {
    std::string help = app.help();
    std::fwrite(help.data(), 1, help.size(), stdout);
    return 0;
  } catch (const CLI::ParseError& error) {
    return report(Error(ErrorCode::InvalidInput, error.what()).with_fix("ct " + std::string(word) + " --help"));
  }

  RouterOptions options;
  options.read_only = flags.read_only || read_only_from_environment();
  // Servers run for hours: the store is checked once when first opened. Their callers are agents
  // (each connection's principal), which may not name files outside the project (unless the
  // project allows it).
  options.check_integrity_on_open = true;
  options.capabilities = &capability::process_resolver();
  if (!flags.log_level.empty()) {
    log::Level level = log::Level::Warn;
    if (log::parse_level(flags.log_level, level)) log::set_level(level);
  }
  auto opened = [&] {
    if (!workspace) {
      std::optional<std::filesystem::path> dir;
      if (!flags.project.empty()) dir = flags.project;
      workspace = Workspace::open(std::move(dir));
    }
    return workspace;
  };
  if (word == "mcp") return mcp::run_stdio_server(opened(), options);
  if (word == "serve") {
    flags.http.allowed_origins = flags.origins;
    flags.http.dashboard = !flags.no_dashboard;
    if (auto who = cli_principal(); who && who->principal.is_person() && who->principal.proof == "terminal")
      flags.http.person_login_code = true;
    if (!run_http) return exec_http_server(args);
    return run_http(opened(), options, flags.http, stdout);
  }
  mcp::ClientConfigRequest request;
  request.host = flags.client;
  request.user_scope = flags.scope == "user";
  if (!flags.http_url.empty()) request.http_url = flags.http_url;
  request.token_env = flags.token_env;
  if (!flags.project.empty()) request.project = flags.project;
  auto config = mcp::client_config(request);
  if (!config) return report(config.error());
  std::string header = "# " + flags.client + ": " + config->location + "\n# " + config->note + "\n";
  std::fwrite(header.data(), 1, header.size(), stderr);
  std::fwrite(config->snippet.data(), 1, config->snippet.size(), stdout);
  return 0;
}

}  // namespace ct::cli
