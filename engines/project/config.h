// Typed configuration (.cleo/config.json): every key is declared once with its type, default and
// limits; unknown keys and bad values are errors that list the valid choices.
#pragma once

#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"
#include "core/json.h"

namespace ct {

/// Who may change a configuration key (system.config.set, system.store.migrate's use).
enum class SetBy : std::uint8_t {
  Anyone,  // people and agents alike
  /// A person only: `ct` in a terminal, or an edit of .cleo/config.json; never an agent's call
  /// over MCP or from the dashboard. For keys that widen what agents may do: the value runs a
  /// program, names a file or a place outside .cleo/, points at another store, turns a guard off,
  /// or loosens a rule that binds agents (their checks, sessions and claims, what the project keeps).
  People,
};

struct ConfigKey {
  std::string_view name;         // "hierarchy.maxDepth"
  json::Type type;               // Int, Bool or String
  std::string_view default_json; // JSON text of the default
  std::int64_t min = 0;          // for Int
  std::int64_t max = 0;          // for Int
  std::vector<std::string_view> choices;  // String: the values allowed (empty = free text); Array: a list of
                                          // these names (empty = a list of commands)
  std::string_view description;
  SetBy set_by = SetBy::Anyone;
  /// Its value may hold something private (a command line with a token): reports such as
  /// issues.diagnostics say only whether it is set.
  bool sensitive = false;
  /// String keys: a further check of the text; Array keys without choices: of each name listed
  /// (without it, an Array key is a list of commands). Returns what is wrong, or "" when it is fine.
  std::string (*check)(std::string_view text) = nullptr;
};

std::span<const ConfigKey> config_keys();

/// What a key's owner adds to its declaration, so that config/ names no layer above it: a check of
/// a String key's text, the names an Array key may list. The owner's .cpp registers it while the
/// program starts (`const bool registered = register_config_rule({...});`), before any Config is
/// loaded. Returns false for a key that is not declared.
struct ConfigKeyRule {
  std::string_view key;
  std::string (*check)(std::string_view text) = nullptr;
  std::vector<std::string_view> choices;
};
bool register_config_rule(const ConfigKeyRule& rule);
const ConfigKey* find_config_key(std::string_view name);
/// How to set `key` to `value`, for an error's fix: the system.config.set call for a key anyone
/// sets; for a key only people set, the `ct config set` line a person runs (or the edit of
/// .cleo/config.json).
Advice config_set_fix(std::string_view key, const json::Value& value);

class Config {
 public:
  /// Defaults for every key.
  Config();
  /// Reads .cleo/config.json (a nested object: {"hierarchy":{"maxDepth":3}}). A missing file
  /// gives the defaults; unreadable JSON or an invalid value is E_CONFIG_ERROR with a fix.
  static Result<Config> load(const std::filesystem::path& file);

  std::int64_t get_int(std::string_view key) const;
  bool get_bool(std::string_view key) const;
  const std::string& get_string(std::string_view key) const;
  const json::Value& get(std::string_view key) const;
  /// An Array key's items that are strings (lists of names such as lifecycle.allowSkip).
  std::vector<std::string> get_strings(std::string_view key) const;
  /// Validates and sets one key (E_CONFIG_ERROR / E_INVALID_INPUT with the valid list).
  Result<void> set(std::string_view key, const json::Value& value);
  /// The nested JSON form written to config.json.
  json::Value to_json() const;
  Result<void> save(const std::filesystem::path& file) const;

 private:
  /// The values set (by the file, by set()), flat: "hierarchy.maxDepth" → 3; a key not set reads
  /// its default, which every Config of the process shares.
  json::Value values_ = json::Value::object();
};

}  // namespace ct
