// The texts under templates/, compiled into the binary (see cmake/embed_files.cmake),
// and the one placeholder syntax they use: `{{name arg …}}`, replaced by a resolver that knows
// the registry. Prose lives in the templates; every fact about an operation comes from a
// placeholder, so a template cannot restate (or misstate) an operation.
#pragma once

#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"

namespace ct::disclosure {

struct EmbeddedTemplate {
  std::string_view name;  // path under templates/, e.g. "help/level0.md"
  std::string_view text;
};

/// Every template, sorted by name (generated at build time).
std::span<const EmbeddedTemplate> embedded_templates();

/// The text of template `name`, or E_INTERNAL when the build did not embed it.
Result<std::string_view> template_text(std::string_view name);

/// Replaces each `{{name arg …}}` (words separated by spaces) with `resolve(name, args)`.
/// A resolver error, an unclosed `{{` or an empty placeholder fails the whole expansion, naming
/// the template and line. The replacement text is not expanded again.
using Resolver = std::function<Result<std::string>(std::string_view name, const std::vector<std::string>& args)>;
Result<std::string> expand(std::string_view text, std::string_view template_name, const Resolver& resolve);

}  // namespace ct::disclosure
