// How an operation call is written as a `ct` command line: the CLI's naming rules (camelCase
// params → kebab-case flags, positional params, lists, negated booleans) as pure functions of the
// spec, so that the CLI's own help and the help levels and templates rendered for agents show the
// same commands. cli/ parses with these rules; disclosure/ prints with them.
#pragma once

#include <string>
#include <string_view>

#include "core/json.h"
#include "domains/registry.h"

namespace ct::disclosure {

/// "ifVersion" → "if-version", "includeArchived" → "include-archived".
std::string kebab_case(std::string_view camel);

/// The one-letter flag of a param people type often, the same in every operation: -p priority,
/// -l labels, -P parent, -d description, -s status, -t type, -m notes (a message), -n limit.
/// '\0' for the others.
char short_flag(std::string_view param);

/// True when the items of an Array param can never contain a comma (ids, enum values, patterned
/// labels), so "a,b" is split into two items. Free-text items (acceptance criteria, file paths)
/// are taken whole: repeat the flag instead.
bool splits_on_commas(const ParamSpec& param);

/// The command words that reach an operation: "ct add" for a shortcut, else "ct tasks blockers".
std::string command_prefix(const OperationSpec& spec);

/// One argument as a person would type it in a POSIX shell: bare when safe, else quoted.
std::string shell_quote(std::string_view text);

/// The `ct` command line for a call of `spec` with `params` (a JSON object): positional params
/// positionally (while they come in declaration order), the rest as kebab-case flags.
std::string command_line(const OperationSpec& spec, const json::Value& params);

}  // namespace ct::disclosure
