#include "cli/completion.h"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <array>

#include "cli/args.h"
#include "cli/command_tree.h"
#include "core/text.h"

namespace ct::cli {
namespace {

constexpr std::array<std::string_view, 3> kShells = {"bash", "zsh", "fish"};

// Each script hands the words typed so far to `ct __complete` and offers what it prints, one
// candidate per line. `--` keeps a word that starts with a dash from being read as a flag of
// __complete itself.
constexpr std::string_view kBash = R"(# bash completion for ct (CLEO): ct completion bash
_ct_complete() {
  local IFS=$'\n'
  COMPREPLY=($(command ct __complete -- "${COMP_WORDS[@]:1:COMP_CWORD}" 2>/dev/null))
}
complete -o default -F _ct_complete ct cleo
)";

// zsh: sourced, it registers _ct; autoloaded from $fpath (as _ct), it is the function's body and
// completes at once.
constexpr std::string_view kZsh = R"(#compdef ct cleo
# zsh completion for ct (CLEO): ct completion zsh
_ct() {
  local -a candidates
  candidates=("${(@f)$(command ct __complete -- "${(@)words[2,CURRENT]}" 2>/dev/null)}")
  compadd -a candidates
}
if [ "$funcstack[1]" = "_ct" ]; then
  _ct "$@"
else
  compdef _ct ct cleo
fi
)";

constexpr std::string_view kFish = R"(# fish completion for ct (CLEO): ct completion fish
function __ct_complete
    set -l words (commandline -opc)
    command ct __complete -- $words[2..-1] (commandline -ct) 2>/dev/null
end
complete -c ct -f -a '(__ct_complete)'
complete -c cleo -f -a '(__ct_complete)'
)";

bool is_flag(std::string_view word) { return word.size() > 1 && word.front() == '-'; }

/// The param a flag of `spec` sets (any spelling the parser accepts: -p, --priority, an alias), or null.
const ParamSpec* param_of_flag(const OperationSpec& spec, std::string_view flag) {
  for (const auto& param : spec.params) {
    auto spellings = flag_spellings(param);
    if (std::find(spellings.begin(), spellings.end(), flag) != spellings.end()) return &param;
  }
  return nullptr;
}

/// What goes where a value of `param` goes: its choices, or task ids.
std::vector<std::string> values_of(const ParamSpec& param, std::string_view current, const TaskIds& task_ids) {
  if (!param.choices.empty()) return std::vector<std::string>(param.choices.begin(), param.choices.end());
  const bool ids = param.type == ParamType::TaskId ||
                   (param.type == ParamType::Array && param.item_type == ParamType::TaskId);
  if (ids && task_ids) return task_ids(current);
  return {};
}

std::vector<std::string> option_names(const CLI::App& app) {
  std::vector<std::string> names;
  for (const auto* option : app.get_options()) {
    for (const auto& name : option->get_lnames()) names.push_back("--" + name);
  }
  return names;
}

}  // namespace

std::span<const std::string_view> completion_shells() { return kShells; }

Result<std::string> completion_script(std::string_view shell) {
  if (shell == "bash") return std::string(kBash);
  if (shell == "zsh") return std::string(kZsh);
  if (shell == "fish") return std::string(kFish);
  std::vector<std::string> shells(kShells.begin(), kShells.end());
  return fail(Error(ErrorCode::InvalidInput, "no completion for the shell '" + std::string(shell) + "'")
                  .with_fix("ct completion bash (or zsh, fish)")
                  .with_choices(std::string(shell), shells));
}

std::vector<std::string> complete(const Registry& registry, const std::vector<std::string>& words,
                                  const TaskIds& task_ids) {
  const std::string current = words.empty() ? std::string() : words.back();
  const std::vector<std::string> before(words.begin(), words.end() - (words.empty() ? 0 : 1));
  // `ct edit <id>`: the one thing it takes.
  if (before.size() == 1 && before.front() == "edit" && !is_flag(current)) return task_ids(current);
  Route route = find_route(registry, before);
  std::vector<std::string> out;

  if (route.error || !route.server.empty()) {
    out = {};
  } else if (!route.spec) {
    // No operation yet: the commands (or a domain's operations, a group's second words), or the
    // global options.
    CommandTree tree(registry, route);
    CLI::App* level = &tree.app();
    for (const auto& word : route.words) {
      CLI::App* sub = nullptr;
      try {
        sub = level->get_subcommand(word);
      } catch (const CLI::OptionNotFound&) {
      }
      if (!sub) break;
      level = sub;
    }
    if (is_flag(current)) {
      out = option_names(tree.app());
    } else {
      for (const auto* sub : level->get_subcommands([](CLI::App*) { return true; })) out.push_back(sub->get_name());
      if (route.words.empty())
        for (const auto& builtin : builtin_commands()) out.emplace_back(builtin.name);
    }
  } else {
    const OperationSpec& spec = *route.spec;
    const std::string* previous = before.empty() ? nullptr : &before.back();
    const ParamSpec* valued = previous && is_flag(*previous) ? param_of_flag(spec, *previous) : nullptr;
    if (valued && valued->type != ParamType::Bool) {
      out = values_of(*valued, current, task_ids);
    } else if (is_flag(current)) {
      CommandTree tree(registry, route);
      out = option_names(tree.app());
      if (const OperationOptions* options = tree.operation()) {
        std::vector<std::string> own = options->flag_names();
        out.insert(out.begin(), own.begin(), own.end());
      }
    } else {
      // The next positional param: count the words already given after the command words.
      std::vector<const ParamSpec*> positionals;
      for (const auto& param : spec.params)
        if (param.positional) positionals.push_back(&param);
      std::size_t given = 0;
      std::size_t command_words = route.words.size();
      for (std::size_t i = 0; i < before.size(); ++i) {
        const std::string& word = before[i];
        if (is_flag(word)) {
          const ParamSpec* param = param_of_flag(spec, word);
          bool takes_value = (param && param->type != ParamType::Bool && word.find('=') == std::string::npos) ||
                             global_takes_value(word);
          if (takes_value) ++i;
          continue;
        }
        if (command_words > 0) {
          --command_words;
          continue;
        }
        ++given;
      }
      if (given < positionals.size()) out = values_of(*positionals[given], current, task_ids);
    }
  }
  std::erase_if(out, [&](const std::string& candidate) { return !candidate.starts_with(current); });
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

}  // namespace ct::cli
