#include "cli/command_tree.h"

#include <CLI/CLI.hpp>

#include <algorithm>

#include "cli/usage.h"
#include "core/json_parse.h"
#include "core/text.h"
#include "disclosure/cli_syntax.h"
#include "domains/pipeline.h"
#include "cli/servers.h"

namespace ct::cli {
namespace {

constexpr std::string_view kRootDescription =
    "ct — CLEO task management for people and AI coding agents.\n"
    "Every operation of the two MCP tools (cleo_query, cleo_mutate) is a command here.";

constexpr std::string_view kRootFooter =
    "Forms:\n"
    "  ct <command> [args] [--options]            the daily commands above\n"
    "  ct <domain> <operation> [--param value …]  any operation (ct <domain> --help lists them)\n"
    "Params are kebab-case flags (ifVersion → --if-version); lists take repeated flags or commas;\n"
    "JSON objects take JSON text, @file or - (stdin).\n"
    "\n"
    "Environment: CLEO_FORMAT=json (same as --json), CLEO_ROOT (project directory),\n"
    "CLEO_READ_ONLY=1 (same as --read-only), NO_COLOR / FORCE_COLOR.\n"
    "Exit codes: 0 success; 100 no data, 101 already exists, 102 no change, 103 proposed (successes\n"
    "with a note); otherwise the error's exit code (2 invalid input, 3 no project, 4 not found, …).\n";

std::vector<const OperationSpec*> shortcuts(const Registry& registry) {
  std::vector<const OperationSpec*> out;
  std::vector<std::string> domains = registry.domains();
  for (const auto& spec : registry.operations()) {
    // A domain name always means the domain.
    if (spec.shortcut.empty() || std::find(domains.begin(), domains.end(), spec.shortcut) != domains.end()) continue;
    out.push_back(&spec);
  }
  // The most used first (tier 0), registry order within a tier.
  std::stable_sort(out.begin(), out.end(), [](const auto* a, const auto* b) { return a->tier < b->tier; });
  return out;
}

/// The operation a domain runs when named alone: the one whose shortcut is the domain's own name.
const OperationSpec* default_operation(const Registry& registry, std::string_view domain) {
  for (const auto& spec : registry.operations())
    if (spec.domain == domain && spec.shortcut == domain) return &spec;
  return nullptr;
}

/// The operations whose shortcut is two words starting with `first` (`config` → config get, set).
std::vector<const OperationSpec*> shortcut_group(const Registry& registry, std::string_view first) {
  std::vector<const OperationSpec*> out;
  for (const auto* spec : shortcuts(registry)) {
    std::string_view shortcut = spec->shortcut;
    if (shortcut.size() > first.size() + 1 && shortcut.starts_with(first) && shortcut[first.size()] == ' ')
      out.push_back(spec);
  }
  return out;
}

std::string group_description(const Registry& registry, std::string_view first) {
  std::string out;
  for (const auto* spec : shortcut_group(registry, first))
    out += (out.empty() ? "" : "; ") + std::string(spec->shortcut.substr(first.size() + 1)) + ": " +
           std::string(spec->summary);
  return out;
}

std::string domain_description(const Registry& registry, const std::string& domain) {
  std::vector<std::string> names = registry.operation_names(domain);
  std::string out = std::to_string(names.size()) + " operation" + (names.size() == 1 ? "" : "s") + ": ";
  std::string listed;
  for (const auto& name : names) {
    if (listed.size() + name.size() > 48) return out + listed + ", …";
    listed += (listed.empty() ? "" : ", ") + name;
  }
  return out + listed;
}

std::string operation_description(const OperationSpec& spec) {
  return std::string(spec.summary) + "  (" + spec.full_name() + ", " + std::string(tool_name(spec.gateway)) + ")";
}


/// The flags a view stands for, as a person would type them: "--readiness ready".
std::string view_flags(const OperationSpec& spec, const ShortcutView& view) {
  std::string out;
  auto preset = json::parse(view.params_json);
  if (!preset || !preset->is_object()) return out;
  for (const auto& [key, value] : preset->as_object()) {
    const ParamSpec* param = spec.find_param(key);
    out += (out.empty() ? "--" : " --") + disclosure::kebab_case(param ? param->name : std::string_view(key));
    if (!value.is_bool()) out += " " + (value.is_string() ? value.as_string() : value.dump());
  }
  return out;
}

CLI::App* add_leaf(CLI::App& parent, std::string_view name, const OperationSpec& spec) {
  CLI::App* leaf = parent.add_subcommand(std::string(name), operation_description(spec));
  leaf->fallthrough();
  leaf->allow_extras();
  leaf->footer(operation_footer(spec));
  return leaf;
}

}  // namespace

std::span<const BuiltinCommand> builtin_commands() {
  static constexpr BuiltinCommand kBuiltins[] = {
      {"edit", "Edit a task in $EDITOR: one update, applied only if nobody changed it meanwhile", "Commands"},
      {"completion", "Print the shell completion script: ct completion bash|zsh|fish", "Shell"},
      {"whoami", "Who this command is: a person (terminal, person key) or an agent, and why", "Shell"},
      {"person", "A person's keys for scripts and CI: ct person key create|list|revoke", "Shell"},
  };
  return kBuiltins;
}

void add_globals(CLI::App& app, GlobalOptions& globals) {
  app.add_flag("--json", globals.json, "Print the exact JSON envelope (also CLEO_FORMAT=json)")->group("Global options");
  app.add_option("--project", globals.project, "Project directory (default: CLEO_ROOT, else the nearest .cleo/ above)")
      ->type_name("DIR")
      ->group("Global options");
  app.add_flag("--meta", globals.meta, "Also report _meta: gateway, operation, version, timing")->group("Global options");
  app.add_option("--reason", globals.reason, "Why: recorded in the audit trail of a change")
      ->type_name("TEXT")
      ->group("Global options");
  app.add_option("--intent", globals.intent,
                 "What kind of change: a category (explore, plan, refine, fix, rollback, checkpoint, merge, migrate) "
                 "or JSON {category, reasoning?, confidence?, tags?}; kept in the audit trail")
      ->type_name("CATEGORY")
      ->group("Global options");
  app.add_option("--session", globals.session,
                 "Session to work in (default: CLEO_SESSION, the one started in this terminal, the only active one)")
      ->type_name("ID")
      ->group("Global options");
  app.add_flag("--read-only", globals.read_only, "Refuse every change (also CLEO_READ_ONLY=1)")->group("Global options");
  app.add_flag("--version", globals.version, "Print the version and exit")->group("Global options");
}

bool global_takes_value(std::string_view arg) {
  return arg == "--project" || arg == "--reason" || arg == "--intent" || arg == "--session";
}

namespace {

/// The first word that is not an option is unknown: the error lists every command there is, and
/// an operation's name without its domain points at the full form.
Error unknown_command(const Registry& registry, const std::string& arg, const std::vector<std::string>& domains) {
  std::vector<std::string> valid;
  for (const auto* spec : shortcuts(registry)) {
    valid.emplace_back(spec->shortcut);
    valid.insert(valid.end(), spec->shortcut_aliases.begin(), spec->shortcut_aliases.end());
    for (const auto& view : spec->views) valid.emplace_back(view.word);
  }
  valid.insert(valid.end(), domains.begin(), domains.end());
  for (const auto& server : server_commands()) valid.emplace_back(server.name);
  for (const auto& builtin : builtin_commands()) valid.emplace_back(builtin.name);
  Error error(ErrorCode::InvalidInput, "unknown command '" + arg + "'");
  error.fix = "ct --help";
  for (const auto& spec : registry.operations()) {
    if (spec.name == arg) {
      std::string full = std::string(spec.domain) + " " + std::string(spec.name);
      error.message += " (did you mean '" + full + "'?)";
      return std::move(error).with_detail("valid", json::Value::array_of(valid)).with_detail("didYouMean", full);
    }
  }
  return std::move(error).with_choices(arg, valid);
}

/// The first word: a domain or the first of a two-word shortcut (the next word decides: false), a
/// shortcut or one of its views, a server command, else an error (decided: true).
bool route_first_word(const Registry& registry, const std::string& arg, const std::vector<std::string>& domains,
                      Route& route) {
  if (std::find(domains.begin(), domains.end(), arg) != domains.end()) {
    route.domain = arg;
    return false;
  }
  for (const auto* spec : shortcuts(registry)) {
    // A two-word shortcut is two argv words; one word holding both ("config get") is unknown.
    if ((spec->shortcut == arg && spec->shortcut.find(' ') == std::string_view::npos) ||
        std::find(spec->shortcut_aliases.begin(), spec->shortcut_aliases.end(), arg) != spec->shortcut_aliases.end()) {
      route.spec = spec;
      return true;
    }
    for (const auto& view : spec->views) {
      if (view.word != arg) continue;
      route.spec = spec;
      route.preset = json::parse(view.params_json).value_or(json::Value::object());
      return true;
    }
  }
  // The first word of two-word shortcuts (`ct config get`): the next word picks the operation.
  if (!shortcut_group(registry, arg).empty()) {
    route.group = arg;
    return false;
  }
  if (is_server_command(arg)) {
    route.server = arg;
    return true;
  }
  route.error = unknown_command(registry, arg, domains);
  return true;
}

/// The second word of a two-word shortcut (`ct config get`).
void route_group_word(const Registry& registry, const std::string& arg, Route& route) {
  std::vector<std::string> valid;
  for (const auto* spec : shortcut_group(registry, route.group)) {
    std::string_view second = spec->shortcut.substr(route.group.size() + 1);
    if (second == arg) {
      route.spec = spec;
      return;
    }
    valid.emplace_back(second);
  }
  Error error(ErrorCode::InvalidInput, "unknown command 'ct " + route.group + " " + arg + "'");
  error.fix = "ct " + route.group + " --help";
  route.error = std::move(error).with_choices(arg, valid);
}

/// The second word names an operation of the domain (or the original CLEO's name of one); after an
/// option (`previous`) it is that option's value and the domain's default operation runs.
void route_operation_word(const Registry& registry, const std::string& arg, const std::string& previous, Route& route) {
  route.domain.clear();
  std::string domain = route.words.front();
  if (const OperationSpec* spec = registry.find(domain, arg)) {
    route.spec = spec;
    return;
  }
  // The original CLEO's name of an operation runs it (the reply names ours).
  if (const OperationSpec* spec = registry.find_original(domain, arg)) {
    route.spec = spec;
    route.original = domain + "." + arg;
    return;
  }
  // After an option it is that option's value (`ct validate --limit 5`): the default operation.
  if (!previous.empty() && previous.front() == '-') {
    if (const OperationSpec* spec = default_operation(registry, domain)) {
      route.words.pop_back();
      route.spec = spec;
      return;
    }
  }
  Error error = Error(ErrorCode::InvalidOperation, "unknown operation '" + arg + "' in domain '" + domain + "'")
                    .with_choices(arg, registry.operation_names(domain));
  error.fix = "ct " + domain + " --help";
  // As the router suggests: a word callers reach for names its operation, with a working call.
  if (const OperationSpec* meant = registry.find_alias(domain, arg, Gateway::Query)) {
    pipeline::prefer_suggestion(error, *meant, domain);
    error.fix = meant->example_call();
  }
  route.error = std::move(error);
}

}  // namespace

Route find_route(const Registry& registry, const std::vector<std::string>& args) {
  Route route;
  std::vector<std::string> domains = registry.domains();
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "--") break;
    if (arg.size() > 1 && arg.front() == '-') {
      if (global_takes_value(arg)) ++i;
      continue;
    }
    route.words.push_back(arg);
    if (route.words.size() == 1) {
      if (route_first_word(registry, arg, domains, route)) return route;
      continue;
    }
    if (!route.group.empty()) {
      route_group_word(registry, arg, route);
      return route;
    }
    route_operation_word(registry, arg, args[i - 1], route);
    return route;
  }
  // A domain named alone runs its default operation (`ct validate` is validate.schema); asked for
  // help, it lists the domain's operations as usual.
  bool help = std::find(args.begin(), args.end(), "--help") != args.end() ||
              std::find(args.begin(), args.end(), "-h") != args.end();
  if (!route.domain.empty() && !help) {
    route.spec = default_operation(registry, route.domain);
    if (route.spec) route.domain.clear();
  }
  return route;
}

CommandTree::CommandTree(const Registry& registry, const Route& route)
    : root_(std::make_unique<CLI::App>(std::string(kRootDescription), "ct")), words_(route.words) {
  CLI::App& root = *root_;
  root.allow_extras();
  root.require_subcommand(0, 1);
  root.footer(std::string(kRootFooter));
  root.get_help_ptr()->group("Global options");
  add_globals(root, globals_);

  if (route.spec && route.words.size() == 1) {
    // A shortcut: only its own command exists in this tree.
    CLI::App* leaf = add_leaf(root, route.words.front(), *route.spec);
    operation_ = std::make_unique<OperationOptions>(*leaf, *route.spec);
    return;
  }
  if (route.spec) {
    const std::string& first = route.words.front();
    CLI::App* domain = root.add_subcommand(first, route.group.empty() ? domain_description(registry, first)
                                                                      : group_description(registry, first));
    domain->fallthrough();
    domain->require_subcommand(0, 1);
    CLI::App* leaf = add_leaf(*domain, route.words.back(), *route.spec);
    operation_ = std::make_unique<OperationOptions>(*leaf, *route.spec);
    return;
  }
  if (!route.group.empty()) {
    // `ct config` alone: its second words are listed for help.
    CLI::App* group = root.add_subcommand(route.group, group_description(registry, route.group));
    group->fallthrough();
    group->require_subcommand(0, 1);
    for (const auto* spec : shortcut_group(registry, route.group))
      group->add_subcommand(std::string(spec->shortcut.substr(route.group.size() + 1)), operation_description(*spec));
    return;
  }
  if (!route.domain.empty()) {
    // `ct tasks …` without an operation: the operations are listed for help.
    CLI::App* domain = root.add_subcommand(route.domain, domain_description(registry, route.domain));
    domain->fallthrough();
    domain->require_subcommand(0, 1);
    domain->footer("Run `ct " + route.domain + " <operation> --help` for an operation's parameters and examples.\n");
    for (const auto& spec : registry.operations()) {
      if (spec.domain != route.domain) continue;
      domain->add_subcommand(std::string(spec.name), std::string(spec.summary))
          ->group(spec.gateway == Gateway::Query ? "Queries (read only)" : "Changes");
    }
    return;
  }
  std::vector<std::string> groups;
  for (const auto* spec : shortcuts(registry)) {
    std::string_view shortcut = spec->shortcut;
    if (auto space = shortcut.find(' '); space != std::string_view::npos) {
      // Two-word shortcuts are listed once, under their first word.
      std::string first(shortcut.substr(0, space));
      if (std::find(groups.begin(), groups.end(), first) != groups.end()) continue;
      groups.push_back(first);
      root.add_subcommand(first, group_description(registry, first))->group("Commands");
      continue;
    }
    std::string summary(spec->summary);
    if (!spec->shortcut_aliases.empty()) {
      std::vector<std::string> also(spec->shortcut_aliases.begin(), spec->shortcut_aliases.end());
      summary += " (also: " + join(also, ", ") + ")";
    }
    root.add_subcommand(std::string(shortcut), summary)->group("Commands");
    for (const auto& view : spec->views)
      root.add_subcommand(std::string(view.word), std::string(view.summary) + " (" + std::string(shortcut) + " " +
                                                      view_flags(*spec, view) + ")")
          ->group("Commands");
  }
  for (const auto& domain : registry.domains())
    root.add_subcommand(domain, domain_description(registry, domain))->group("Domains (ct <domain> <operation>)");
  for (const auto& server : server_commands())
    root.add_subcommand(std::string(server.name), std::string(server.summary))->group("MCP servers");
  for (const auto& builtin : builtin_commands())
    root.add_subcommand(std::string(builtin.name), std::string(builtin.summary))->group(std::string(builtin.group));
}

CommandTree::~CommandTree() = default;

std::string CommandTree::help() const { return root_->help(); }

std::string CommandTree::command() const {
  std::string out = "ct";
  for (const auto& word : words_) out += " " + word;
  return out;
}

Result<ParsedCommand> parse_command(CommandTree& tree, const std::vector<std::string>& args, const InputSource& input) {
  std::vector<std::string> reversed(args.rbegin(), args.rend());
  ParsedCommand parsed;
  try {
    tree.app().parse(reversed);
  } catch (const CLI::CallForHelp&) {
    parsed.help = tree.app().help();
    return parsed;
  } catch (const CLI::CallForAllHelp&) {
    parsed.help = tree.app().help("", CLI::AppFormatMode::All);
    return parsed;
  } catch (const CLI::ParseError& error) {
    return fail(Error(ErrorCode::InvalidInput, error.what()).with_fix(tree.command() + " --help"));
  }
  std::vector<std::string> leftovers;
  for (auto& arg : tree.app().remaining(true))
    if (arg != "--") leftovers.push_back(std::move(arg));
  if (!tree.operation()) {
    if (!leftovers.empty()) {
      return fail(Error(ErrorCode::InvalidInput, "unexpected argument '" + leftovers.front() + "' for " + tree.command())
                      .with_fix(tree.command() + " --help"));
    }
    parsed.params = json::Value::object();
    return parsed;
  }
  if (!leftovers.empty() && !tree.operation()->accept_words(leftovers))
    return fail(unexpected_arguments(leftovers, *tree.operation(), tree.command()));
  auto params = tree.operation()->params(input);
  if (!params) {
    Error error = std::move(params.error());
    if (error.fix.empty()) error.fix = tree.command() + " --help";
    return fail(std::move(error));
  }
  parsed.params = std::move(*params);
  return parsed;
}

}  // namespace ct::cli
