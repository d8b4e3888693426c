// Progressive disclosure (docs/architecture.md §6): help levels 0–3 rendered from the registry and the
// prose in templates/help/. Level 0 is the entry every agent carries (< 250 o200k tokens, and the
// MCP `instructions`), level 1 lists every operation, level 2 describes one operation (also as
// JSON Schema), level 3 is the protocol. Every text comes with a content hash and a token estimate.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"
#include "core/json.h"
#include "core/text.h"
#include "disclosure/templates.h"
#include "domains/registry.h"

namespace ct::disclosure {

using ct::estimate_tokens;  // core/text.h
/// Lowercase hex SHA-256 of the text: the `hash` a caller passes back as `knownHash`.
std::string content_hash(std::string_view text);

/// A call as the help texts write it, `cleo_query tasks.show {"id":"T001"}`: tool, then
/// domain.operation, then the params object as compact JSON.
std::string short_call(const OperationSpec& spec, std::string_view params_json);

Result<std::string> level0(const Registry& registry);
/// Every operation grouped by domain and gateway; `domain` non-empty narrows it to one domain
/// (which must have operations: the caller resolves names first).
Result<std::string> level1(const Registry& registry, std::string_view domain = {});
Result<std::string> level2(const Registry& registry, const OperationSpec& spec);
/// Bounds as help texts write them: "1–500", "≥ 1" or "≤ 200", then `unit` (" chars", " items");
/// empty when both are kUnbounded.
std::string bounds_text(std::int64_t min, std::int64_t max, std::string_view unit = {});
/// A param's min/max (chars, value or items by its type, named by `unit`): bounds_text of them.
std::string range_text(const ParamSpec& param, std::string_view unit = {});
/// An enum param's values (or an array's item values) as "a|b|c".
std::string choices_text(const ParamSpec& param);
/// The operation's params as a JSON Schema object (draft 2020-12 vocabulary).
json::Value params_schema(const OperationSpec& spec);
Result<std::string> level3(const Registry& registry);

/// Any template under templates/ with its placeholders filled from the registry; `extra` is asked
/// first (injection adds the paths it writes to).
Result<std::string> render(const Registry& registry, std::string_view template_name, const Resolver& extra = {});

/// One placeholder of the registry's vocabulary (templates/README.md lists it); E_NOT_FOUND for
/// a name it does not know, other errors for arguments naming what the registry does not have.
Result<std::string> resolve_placeholder(const Registry& registry, std::string_view name,
                                        const std::vector<std::string>& args);

/// docs/operations.md: level 2 of every operation, grouped by domain, under a generated banner.
Result<std::string> operations_reference(const Registry& registry);

/// What `system.help` resolves its `domain` / `operation` params to. Unknown names are the usual
/// E_INVALID_DOMAIN / E_INVALID_OPERATION errors with did-you-mean; an operation given without a
/// domain may be "tasks.add" or a name only one domain has ("add").
struct HelpTarget {
  std::string domain;                   // empty: all domains
  const OperationSpec* spec = nullptr;  // set when an operation was named
};
Result<HelpTarget> resolve_help_target(const Registry& registry, std::string_view domain, std::string_view operation);

}  // namespace ct::disclosure
