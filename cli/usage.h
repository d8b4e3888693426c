// Help text and command lines derived from the registry: a flag's help from its ParamSpec, an
// operation's examples rendered as `ct` command lines, and the MCP-style `fix` of an error turned
// into the command a person would type. Nothing here is written per operation.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "core/json.h"
#include "disclosure/cli_syntax.h"
#include "domains/registry.h"

namespace ct::cli {

// How calls are written as `ct` command lines (shared with the help levels in disclosure/).
using disclosure::command_line;
using disclosure::command_prefix;
using disclosure::shell_quote;

/// A flag's help: the param's description plus type, constraints, choices and default.
std::string param_help(const ParamSpec& param);

/// The text under an operation's options: what it returns, its examples as command lines, the
/// errors it may raise and how it is reached over MCP.
std::string operation_footer(const OperationSpec& spec);

/// The MCP-style call `text` starts with ("cleo_query {domain:'tasks', operation:'find',
/// params:{query:'T9'}}") as a `ct` command line ("ct find T9"), and how many characters of
/// `text` the call spans. nullopt when it is not such a call to a registered operation.
struct CallAsCommand {
  std::string command;
  std::size_t length = 0;
};
std::optional<CallAsCommand> call_as_command(std::string_view text, const Registry& registry);

/// An error's `fix` for people at a terminal: every embedded MCP call to a registered operation is
/// replaced by its `ct` command line (in backticks unless it is the whole fix). Fixes that
/// already name a `ct` command are left alone.
std::string fix_for_people(std::string_view fix, const Registry& registry);

}  // namespace ct::cli
