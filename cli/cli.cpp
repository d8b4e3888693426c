// `ct` end to end: route argv, parse it with the generated command tree, dispatch through the
// router, and print either the human rendering or the exact envelope.
#include "cli/cli.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "cli/args.h"
#include "cli/commands.h"
#include "cli/render.h"
#include "cli/servers.h"
#include "core/clock.h"
#include "core/text.h"
#include "core/version.h"
#include "disclosure/product.h"
#include "domains/registry.h"
#include "domains/router.h"
#include "engines/project.h"

namespace ct::cli {
namespace {

bool env_is(const char* name, std::initializer_list<std::string_view> values) {
  const char* value = std::getenv(name);
  if (!value) return false;
  for (auto candidate : values)
    if (candidate == value) return true;
  return false;
}

/// --json anywhere before "--" (needed before CLI11 has parsed, to report routing errors).
bool json_requested(const std::vector<std::string>& args) {
  if (env_is("CLEO_FORMAT", {"json", "JSON"})) return true;
  for (const auto& arg : args) {
    if (arg == "--") break;
    if (arg == "--json") return true;
  }
  return false;
}

void write(std::FILE* stream, const std::string& text) {
  if (!text.empty()) std::fwrite(text.data(), 1, text.size(), stream);
}

struct Output {
  bool json = false;
  RenderOptions render;
};

/// Stored text and echoed input reach a terminal only through terminal_safe(): a title holding
/// ESC or BEL must not drive the viewer's terminal. (JSON output escapes them anyway.)
Error printable(Error error) {
  error.message = terminal_safe(error.message);
  error.fix = terminal_safe(error.fix);
  for (auto& alternative : error.alternatives) alternative.action = terminal_safe(alternative.action);
  make_terminal_safe(error.details);
  return error;
}

Envelope printable(Envelope envelope) {
  make_terminal_safe(envelope.data);
  for (auto& warning : envelope.warnings) warning = terminal_safe(warning);
  if (envelope.error) envelope.error = printable(std::move(*envelope.error));
  return envelope;
}

int report_failure(const Error& error, const Output& output) {
  if (output.json) {
    write(stdout, to_json(failure(error)) + "\n");
  } else {
    write(stderr, render_error(printable(error), output.render.err, registry()));
  }
  return error.exit_code();
}

int print_version(const Output& output) {
  if (output.json) {
    Envelope envelope;
    json::Value data = json::Value::object();
    data.set("version", product_version());
    envelope.data = std::move(data);
    write(stdout, to_json(envelope) + "\n");
  } else {
    write(stdout, "ct " + std::string(product_version()) + "\n");
  }
  return 0;
}

/// .cleo/current-session of the project, when there is a project.
std::optional<std::filesystem::path> current_session_file(const std::optional<std::filesystem::path>& project_dir) {
  auto project = find_project(project_dir);
  if (!project) return std::nullopt;
  return project->cleo_dir() / "current-session";
}

/// The session a command runs in: --session, then CLEO_SESSION, then .cleo/current-session
/// ("" = none; the router then adopts the project's only active session, if there is one).
std::string resolve_session(const GlobalOptions& globals, const std::optional<std::filesystem::path>& project_dir) {
  if (!globals.session.empty()) return globals.session;
  if (const char* env = std::getenv("CLEO_SESSION"); env && *env) return env;
  auto file = current_session_file(project_dir);
  if (!file) return "";
  std::ifstream in(*file);
  std::string id;
  std::getline(in, id);
  return std::string(trim(id));
}

/// After a session operation: the binding it left is remembered for later commands (session.start
/// and resume write .cleo/current-session; end, close and suspend of it remove it).
void remember_session(const std::optional<std::filesystem::path>& project_dir, const std::string& session) {
  auto file = current_session_file(project_dir);
  if (!file) return;
  std::error_code ignored;
  if (session.empty()) {
    std::filesystem::remove(*file, ignored);
    return;
  }
  std::ofstream(*file, std::ios::trunc) << session << "\n";
}

int run_checked(const std::vector<std::string>& args) {
  const Registry& operations = registry();
  Output output;
  output.json = json_requested(args);
  output.render.out.color = color_enabled(STDOUT_FILENO);
  output.render.err.color = color_enabled(STDERR_FILENO);
  output.render.width = terminal_width(STDOUT_FILENO);

  Route route = find_route(operations, args);
  if (route.error) return report_failure(*route.error, output);
  if (!route.server.empty()) return run_server_command(route.server, args);

  CommandTree tree(operations, route);
  auto parsed = parse_command(tree, args, InputSource::system());
  const GlobalOptions& globals = tree.globals();
  output.json = output.json || globals.json;
  if (!parsed) return report_failure(parsed.error(), output);
  if (!parsed->help.empty()) {
    write(stdout, parsed->help);
    return 0;
  }
  if (globals.version) return print_version(output);

  const OperationSpec* spec = route.spec;
  if (!spec) {
    if (output.json) {
      std::string what = route.domain.empty() ? "a command" : "an operation of '" + route.domain + "'";
      return report_failure(Error(ErrorCode::InvalidInput, "missing " + what).with_fix(tree.command() + " --help"), output);
    }
    write(stdout, tree.help());
    return 0;
  }

  json::Value params = std::move(parsed->params);
  if (globals.meta) params.set("meta", true);
  if (!globals.reason.empty()) {
    if (spec->gateway == Gateway::Mutate) {
      if (!params.contains("reason")) params.set("reason", globals.reason);
    } else {
      // Queries change nothing, so there is no audit row to keep the reason in.
      write(stderr, output.render.err.yellow("warning:") + " --reason is recorded only for changes; " +
                        spec->full_name() + " ignores it\n");
    }
  }

  RouterOptions options;
  if (!globals.project.empty()) options.project_dir = globals.project;
  options.read_only = globals.read_only || env_is("CLEO_READ_ONLY", {"1", "true", "yes"});
  options.adopt_only_active_session = true;
  options.outside_project_allowed = true;  // a person (or their agent) asked for this path on the command line
  options.budget_replies = false;          // the agent reply budget never cuts what a person asked for
  std::optional<std::filesystem::path> project_dir = options.project_dir;
  Router router(operations, std::move(options), clock_from_environment());
  const std::string bound = resolve_session(globals, project_dir);
  router.set_session(bound);
  Request request{spec->gateway, std::string(spec->domain), std::string(spec->name), params};
  Envelope envelope = router.dispatch(request);
  if (envelope.success && router.session() != bound) remember_session(project_dir, router.session());

  if (output.json) {
    write(stdout, to_json(envelope) + "\n");
  } else {
    Rendered rendered = render_envelope(*spec, params, printable(envelope), output.render, operations,
                                        tree.command() + " --help");
    write(stderr, rendered.err);
    write(stdout, rendered.out);
  }
  return envelope.exit_code();
}

}  // namespace

int run(int argc, char** argv) {
  std::vector<std::string> args;
  for (int i = 1; i < argc; ++i) args.emplace_back(argv[i]);
  try {
    return run_checked(args);
  } catch (const std::exception& e) {
    // The last line of defence: nothing below should throw, but a crash helps nobody.
    std::fprintf(stderr, "ct: internal error: %s\n", e.what());
    return exit_code(ErrorCode::Internal);
  }
}

}  // namespace ct::cli
