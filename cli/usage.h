// Help text and command lines derived from the registry: a flag's help from its ParamSpec, an
// operation's examples rendered as `ct` command lines, and the calls an error's `fix` suggests as
// the commands a person would type. Nothing here is written per operation.
#pragma once

#include <string>
#include <string_view>

#include "core/advice.h"
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

/// An error's `fix` for people at a terminal: each call as its `ct` command line (in backticks
/// unless it is the whole fix).
std::string fix_for_people(const Advice& fix, const Registry& registry);

}  // namespace ct::cli
