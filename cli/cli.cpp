// `ct` end to end: route argv, parse it with the generated command tree, dispatch through the
// router, and print either the human rendering or the exact envelope.
#include "cli/cli.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <vector>

#include "cli/args.h"
#include "cli/commands.h"
#include "cli/render.h"
#include "cli/servers.h"
#include "core/clock.h"
#include "core/version.h"
#include "domains/registry.h"
#include "domains/router.h"

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

int report_failure(const Error& error, const Output& output) {
  if (output.json) {
    write(stdout, to_json(failure(error)) + "\n");
  } else {
    write(stderr, render_error(error, output.render.err, registry()));
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

/// `ct help [words…]` is `ct [words…] --help`, unless a domain or shortcut is named "help".
std::vector<std::string> expand_help_word(std::vector<std::string> args, const Registry& registry) {
  if (args.empty() || args.front() != "help") return args;
  for (const auto& domain : registry.domains())
    if (domain == "help") return args;
  for (const auto& spec : registry.operations())
    if (spec.shortcut == "help") return args;
  args.erase(args.begin());
  args.emplace_back("--help");
  return args;
}

int run_checked(const std::vector<std::string>& argv_args) {
  const Registry& operations = registry();
  std::vector<std::string> args = expand_help_word(argv_args, operations);
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
  Router router(operations, std::move(options), clock_from_environment());
  Request request{spec->gateway, std::string(spec->domain), std::string(spec->name), params};
  Envelope envelope = router.dispatch(request);

  if (output.json) {
    write(stdout, to_json(envelope) + "\n");
  } else {
    Rendered rendered = render_envelope(*spec, params, envelope, output.render, operations, tree.command() + " --help");
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
