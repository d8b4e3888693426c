// The `ct` command tree, generated from the registry: daily shortcuts (`ct add`) and the generic
// `ct <domain> <operation>` form, with global options at every level. Only the command that argv
// names gets its options built (the rest are names for help listings), which keeps start-up cheap
// and keeps words such as `ct find list` from being taken for another command.
#pragma once

#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "cli/args.h"
#include "core/error.h"
#include "domains/registry.h"

namespace CLI {
class App;
}  // namespace CLI

namespace ct::cli {

/// Options accepted at every level.
struct GlobalOptions {
  bool json = false;       // print the exact envelope
  bool meta = false;       // ask for _meta (gateway, timing …)
  bool read_only = false;  // every mutation fails with E_MUTATION_DISABLED
  bool version = false;
  std::string project;     // --project DIR; empty = not given
  std::string reason;      // --reason TEXT, recorded in the audit trail of a mutation
  std::string intent;      // --intent CATEGORY or JSON: the mutation's intent, kept in its audit row
  std::string session;     // --session ID; empty = CLEO_SESSION, this terminal's binding, the only active one
};

/// What the command words of argv name, found before CLI11 runs.
struct Route {
  std::vector<std::string> words;       // the command words as typed: {"add"} or {"tasks", "add"}
  const OperationSpec* spec = nullptr;  // the operation, when argv names one
  std::string domain;                   // a domain named without an operation (`ct tasks`)
  std::string group;                    // the first word of two-word shortcuts (`ct config`)
  std::string server;                   // a server command (`ct mcp`, `ct serve`, `ct mcp-config`)
  std::optional<Error> error;           // an unknown command or operation, with did-you-mean
  /// The original CLEO's name argv used ("tasks.depends" in `ct tasks depends`); `spec` is ours.
  std::string original;
  json::Value preset;                   // params a view sets (`ct ready`); null for other commands
};

/// Commands of ct itself, not operations: `ct completion`, `ct edit` (run_checked runs them).
struct BuiltinCommand {
  std::string_view name;
  std::string_view summary;
  std::string_view group;  // their heading in `ct --help`
};
std::span<const BuiltinCommand> builtin_commands();

/// The global options (--json, --project, --reason, --session …) on `app`, written to `globals`.
void add_globals(CLI::App& app, GlobalOptions& globals);

/// True for a global option whose value is the next argument (--project DIR, --reason, --session).
bool global_takes_value(std::string_view arg);

/// Finds the command words in `args` (argv without the program name), skipping global options.
Route find_route(const Registry& registry, const std::vector<std::string>& args);

/// The CLI11 app for one invocation.
class CommandTree {
 public:
  CommandTree(const Registry& registry, const Route& route);
  ~CommandTree();
  CommandTree(const CommandTree&) = delete;
  CommandTree& operator=(const CommandTree&) = delete;

  CLI::App& app() { return *root_; }
  /// The help of the deepest command argv selected.
  std::string help() const;
  const GlobalOptions& globals() const { return globals_; }
  /// The routed operation's options; null when argv names no operation.
  const OperationOptions* operation() const { return operation_.get(); }
  OperationOptions* operation() { return operation_.get(); }
  /// "ct add", "ct tasks blockers", "ct tasks" or "ct": what the user typed, for messages.
  std::string command() const;

 private:
  std::unique_ptr<CLI::App> root_;
  GlobalOptions globals_;
  std::unique_ptr<OperationOptions> operation_;
  std::vector<std::string> words_;
};

/// Parses `args` with the tree. Errors (CLI11's, unknown options, surplus arguments, bad values)
/// come back as E_INVALID_INPUT / E_INVALID_PARAMS values; a request for help comes back as the
/// help text in `help`.
struct ParsedCommand {
  std::string help;        // non-empty: print this and exit 0
  json::Value params;      // the operation's params (without global ones)
};
Result<ParsedCommand> parse_command(CommandTree& tree, const std::vector<std::string>& args, const InputSource& input);

}  // namespace ct::cli
