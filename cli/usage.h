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

/// Advice (an error's fix, a warning, advice in a reply's data) for people at a terminal: each call
/// as its `ct` command line (in backticks unless it is the whole advice).
std::string advice_for_people(const Advice& advice, const Registry& registry);

/// How `ct` writes the advice of the envelopes it prints, text or `--json`: advice_for_people.
class PeopleAdvice final : public AdviceWriter {
 public:
  explicit PeopleAdvice(const Registry& registry) : registry_(registry) {}
  json::Value write(const Advice& advice) const override { return advice_for_people(advice, registry_); }

 private:
  const Registry& registry_;
};

}  // namespace ct::cli
