// Command-line arguments → the params object of a Request. Each operation's options are
// generated from its OperationSpec: camelCase params become kebab-case flags, `positional` params
// are also accepted in order, and each value is converted by its ParamType. Validation of the
// values themselves (ranges, enums, ids) stays with the router, which reports it the same way for
// every transport.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"
#include "core/json.h"
#include "disclosure/command_line.h"
#include "domains/registry.h"

namespace CLI {
class App;
class Option;
}  // namespace CLI

namespace ct::cli {

// The CLI's naming rules for params (kebab-case flags, comma-split lists) live in disclosure/,
// which also prints command lines for agents.
using disclosure::kebab_case;
using disclosure::splits_on_commas;

/// Where `@path` and `-` values of Object params are read from (a seam for tests).
/// The most a JSON argument may hold (@file or -): the same as one MCP message.
inline constexpr std::size_t kMaxInputBytes = 16 * 1024 * 1024;

struct InputSource {
  std::function<Result<std::string>(const std::string& path)> read_file;
  std::function<Result<std::string>()> read_stdin;
  /// The real filesystem and the process's stdin.
  static InputSource system();
};

/// The options of one operation, attached to a CLI11 (sub)command. Owns the storage CLI11 binds
/// to, so it must outlive the parse.
/// Every spelling of the flag that sets `param`: its short flag (-p), --kebab-name and the
/// kebab-case alias (not --no-<name>, which unsets a Bool).
std::vector<std::string> flag_spellings(const ParamSpec& param);

class OperationOptions {
 public:
  /// Adds one option per param (plus `--no-<name>` for Bool params defaulting to true) to `app`.
  OperationOptions(CLI::App& app, const OperationSpec& spec);
  ~OperationOptions();
  OperationOptions(const OperationOptions&) = delete;
  OperationOptions& operator=(const OperationOptions&) = delete;

  const OperationSpec& spec() const { return spec_; }
  /// After CLI11 has parsed: the params object (only the params that were given). Errors are
  /// values: a scalar given twice, a file that cannot be read, JSON that does not parse.
  Result<json::Value> params(const InputSource& input) const;
  /// Every flag spelling this operation accepts ("--priority", "--no-include-done" …), for
  /// did-you-mean on unknown options.
  std::vector<std::string> flag_names() const;
  /// Words left over after the positionals (`ct add Write the README`): when the last positional
  /// param is free text that was given and none of the words looks like an option, they continue
  /// it ("Write the README") and this returns true. Otherwise nothing changes.
  bool continue_last_positional(const std::vector<std::string>& words);

 private:
  struct Binding;
  const OperationSpec& spec_;
  std::vector<std::unique_ptr<Binding>> bindings_;
};

/// Parses `args` (everything after the command words) against `spec` alone: the conversion
/// used by `ct`, without the rest of the command tree. Unknown options and extra positionals are
/// E_INVALID_PARAMS. For tests and for callers that already know the operation.
Result<json::Value> parse_operation_args(const OperationSpec& spec, const std::vector<std::string>& args,
                                         const InputSource& input);

/// Converts the leftovers of a CLI11 parse (unknown options, surplus positionals) into the error
/// a user sees; `command` is what they typed before the options ("ct add").
Error unexpected_arguments(const std::vector<std::string>& leftovers, const OperationOptions& options,
                           std::string_view command);

}  // namespace ct::cli
