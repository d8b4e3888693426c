// Command-line arguments → the params object of a Request. Each operation's options are
// generated from its OperationSpec: camelCase params become kebab-case flags, `positional` params
// are also accepted in order, and each value is converted by its ParamType. Validation of the
// values themselves (ranges, enums, ids) stays with the router, which reports it the same way for
// every transport.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"
#include "core/json.h"
#include "disclosure/cli_syntax.h"
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
  /// The absolute path of the file or folder `word` names, when one exists there (ParamSpec::path_param).
  std::function<std::optional<std::string>(const std::string& word)> existing_path;
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
  /// Words left over after the positionals, taken as a person means them; true when every word
  /// found its place (otherwise nothing changes):
  ///  - more task ids, and ranges (`ct done T3 T4 T7..T9`), for a bulk operation;
  ///  - `+label` (and, where labels can be taken off, `-label`) for an operation with labels;
  ///  - the rest of a free-text last positional (`ct add Write the README`), when it was given
  ///    and no word looks like an option.
  bool accept_words(const std::vector<std::string>& words);

 private:
  struct Binding;
  bool continue_last_positional(const std::vector<std::string>& words);
  const OperationSpec& spec_;
  std::vector<std::unique_ptr<Binding>> bindings_;
  std::vector<std::string> more_ids_;     // task ids (or ranges) after the first
  std::vector<std::string> label_words_;  // "api" to add, "-ui" to take off
};

/// "T3..T5" (or "3..5") → T003, T004, T005; a single id → itself; nullopt when `word` is neither.
/// A range is at most kMaxBulkIds long and ascends.
Result<std::optional<std::vector<std::string>>> expand_task_ids(std::string_view word);

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
