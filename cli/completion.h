// Shell completion for `ct`, from the registry. `ct completion bash|zsh|fish` prints a small
// script; the script asks `ct __complete WORD... CURRENT` for the candidates of the word being
// typed, so commands, flags, enum values and task ids always match the binary (and the project's
// plug-ins) that is installed: nothing about an operation is written into the scripts.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"
#include "domains/registry.h"

namespace ct::cli {

/// The shells `ct completion` writes a script for.
std::span<const std::string_view> completion_shells();

/// The script for `shell`, or E_INVALID_INPUT naming the shells.
Result<std::string> completion_script(std::string_view shell);

/// The store's task ids starting with a prefix, for a word that takes a task id.
using TaskIds = std::function<std::vector<std::string>(std::string_view prefix)>;

/// The candidates for the last of `words` (the words after `ct`; the last one is being typed and
/// may be empty), sorted, each a whole word: commands and domains, an operation's flags, a flag's
/// or a positional's enum values, task ids where a task id goes.
std::vector<std::string> complete(const Registry& registry, const std::vector<std::string>& words,
                                  const TaskIds& task_ids);

}  // namespace ct::cli
