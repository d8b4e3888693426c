// The MCP prompts: short workflows people start from their agent host (Claude Code shows them
// as /mcp__<server>__<name>, Gemini CLI and VS Code as slash commands of their own). Each is a
// template under templates/prompts/ rendered at call time with what the store says now, read
// through the router as any cleo_query call (so they cost nothing until used, and never change
// anything: the text tells the agent which calls to make).
#pragma once

#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"
#include "disclosure/suggest.h"
#include "domains/registry.h"
#include "domains/router.h"

namespace ct::disclosure {

struct PromptArgument {
  std::string_view name;
  std::string_view description;
  bool required = false;
  ValueKind kind = ValueKind::TaskId;  // what completion/complete suggests for it
  /// An optional argument given as a host's template variable (render_prompt): what the prompt
  /// does with it once filled in, a template fragment (its `{{call_with …}}` read the variable).
  std::string_view instead = {};
};

struct PromptSpec {
  std::string_view name;         // what hosts show: /mcp__cleo__next
  std::string_view title;
  std::string_view description;  // one line
  std::vector<PromptArgument> arguments;
  const PromptArgument* find_argument(std::string_view argument) const;
};

/// Every prompt, in the order prompts/list gives them.
std::span<const PromptSpec> prompt_catalog();
const PromptSpec* find_prompt(std::string_view name);

using PromptArguments = std::map<std::string, std::string, std::less<>>;

struct RenderedPrompt {
  std::string description;  // the prompt's description, with its arguments filled in
  std::string text;         // one user message
};

/// The prompt `name` with `arguments`, rendered from the registry and what `router` reads now as
/// `caller`. E_INVALID_PARAMS for an unknown prompt or argument (with did-you-mean), a missing
/// required one or a value of the wrong shape; a read that fails (E_NOT_FOUND for a task that
/// does not exist, E_NOT_INITIALIZED without a project) is that error. An empty value is no value.
///
/// An argument whose value is a host's template variable (`$1`: core/text.h is_template_variable;
/// opencode fetches every prompt so and puts the user's words in its place later) renders the
/// prompt as a template that keeps it: where the argument goes, the variable; every read that
/// needs it is left to the agent as the call that makes it (the reads that do not are made); an
/// optional argument so given renders as not given, plus one line saying what to do when it is
/// filled in (`PromptArgument::instead`), which reads well when the host fills in nothing.
Result<RenderedPrompt> render_prompt(const Registry& registry, std::string_view name, const PromptArguments& arguments,
                                     Router& router, const Caller& caller);

}  // namespace ct::disclosure
