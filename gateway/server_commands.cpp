#include "gateway/server_commands.h"

#include <algorithm>

#include "capability/plugins.h"
#include "core/clock.h"
#include "core/json.h"
#include "core/log.h"
#include "core/version.h"
#include "disclosure/help_levels.h"
#include "disclosure/injection.h"
#include "engines/adapters/subprocess.h"
#include "gateway/product.h"
#include "domains/providers/providers.h"
#include "gateway/resource_watch.h"
#include "gateway/stdio_transport.h"
#include "gateway/task_runner.h"

namespace ct::mcp {

ServerInfo server_info(const Registry& operations, std::shared_ptr<Workspace> workspace) {
  // Level 0 of the help is what every agent gets on connecting. It renders from embedded
  // templates that the tests render too, so a failure here is a build defect.
  auto instructions = disclosure::level0(operations);
  ServerInfo info{"cleo", std::string(product_version()), instructions ? *instructions : instructions.error().message, {}};
  // A host that loads a current CLEO block from its instruction file gets a pointer to it instead.
  if (!workspace) return info;
  info.tailored_instructions = [&operations, workspace](std::string_view client) -> std::optional<std::string> {
    auto project = workspace->project();
    if (!project) return std::nullopt;
    return disclosure::block_pointer_instructions(operations, project->root, client);
  };
  return info;
}

const Registry& served_registry(Workspace& workspace) {
  std::vector<std::string> warnings;
  const Registry& operations = capability::project_registry(registry(), workspace, &warnings);
  for (const auto& warning : warnings) log::warn(warning);
  return operations;
}

int run_stdio_server(std::shared_ptr<Workspace> workspace, const RouterOptions& router_options) {
  const Registry& operations = served_registry(*workspace);
  // Resource subscriptions and MCP tasks run beside the request loop, each with routers of its
  // own (a router is not thread-safe).
  RouterFactory make_router = [&operations, workspace, router_options] {
    return std::make_unique<Router>(operations, workspace, router_options, clock_from_environment());
  };
  ResourceWatch watch(make_router);
  TaskRunner tasks(make_router);
  Protocol protocol(operations, server_info(operations, workspace), {&watch, &tasks});
  Router router(operations, workspace, router_options, clock_from_environment());
  return serve_stdio(protocol, router, stdin, stdout);
}

// `ct mcp-config` is a projection of the providers table (domains/providers/providers.h): the
// hosts, their files and the shape of their entries are known there only.
std::vector<std::string> config_hosts() { return providers::ids(); }

Result<ClientConfig> client_config(const ClientConfigRequest& request) {
  const providers::Provider* provider = providers::find(request.host);
  if (!provider) {
    Error error(ErrorCode::InvalidInput, "unknown host '" + request.host + "'");
    error.fix = "ct mcp-config --host claude";
    return fail(std::move(error).with_choices(request.host, config_hosts()));
  }
  auto file = providers::config_file(*provider, request.user_scope);
  if (!file)
    return fail(Error(ErrorCode::InvalidInput, std::string(provider->name) + " has no " +
                                                   (request.user_scope ? "user" : "project") +
                                                   "-scope MCP configuration file")
                    .with_fix("ct mcp-config --host " + request.host + " --scope " +
                              (request.user_scope ? "project" : "user")));
  providers::ServerLaunch launch;
  auto installed = installed_program("ct");
  launch.command = providers::default_command(request.user_scope,
                                              installed ? std::optional(installed->string()) : std::nullopt);
  if (request.project) {
    launch.args.push_back("--project");
    launch.args.push_back(std::filesystem::absolute(*request.project).string());
  }
  if (request.http_url) {
    launch.transport = providers::Transport::Http;
    launch.url = *request.http_url;
    launch.token_env = request.token_env;
  }
  CT_TRY(providers::check_launch(*provider, launch));
  ClientConfig out;
  out.snippet = providers::snippet(*provider, launch);
  out.location = (request.user_scope ? "~/" : "") + std::string(*file) + " (or: ct providers install " +
                 std::string(provider->id) + (request.user_scope ? " --scope user" : "") + ")";
  out.note = providers::entry_note(*provider, request.user_scope, launch);
  return out;
}

}  // namespace ct::mcp
