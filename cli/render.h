// Text output of `ct` for people: one renderer per text view of the specs (a task card, aligned tables,
// a tree, dependency sections, one-line confirmations) and a generic rendering of any JSON data so
// that every operation prints something sensible. `--json` bypasses all of this.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "cli/table.h"
#include "core/error.h"
#include "core/json.h"
#include "domains/registry.h"
#include "domains/router.h"

namespace ct::cli {

struct RenderOptions {
  Style out;               // stdout
  Style err;               // stderr
  std::size_t width = 0;   // terminal columns; 0 = do not truncate
  std::int64_t now = 0;    // ms since the epoch: times also say how long ago ("3h ago"); 0 = not
};

/// "3h ago", "just now", "in 2d": how far `at` is from `now` (ms since the epoch), in the largest
/// unit that is at least 1 (minutes to years).
std::string relative_time(std::int64_t at, std::int64_t now);

struct Rendered {
  std::string out;  // for stdout
  std::string err;  // for stderr (warnings, errors)
};

/// The human rendering of a reply to `spec` called with `params` (the params as sent).
Rendered render_envelope(const OperationSpec& spec, const json::Value& params, const Envelope& envelope,
                         const RenderOptions& options, const Registry& registry, std::string_view help_command = "");

/// "error: <message> (E_CODE)" plus fix (its calls as `ct` command lines) / did you mean / valid /
/// alternatives lines. With a `help_command` ("ct add --help"), parameter errors also point at it.
std::string render_error(const Error& error, const Style& style, const Registry& registry,
                         std::string_view help_command = "");

/// Any JSON value as text: objects as aligned "key  value" lines, arrays of objects as tables,
/// arrays of scalars as comma lists, scalars as themselves.
std::string render_value(const json::Value& value, const RenderOptions& options);

}  // namespace ct::cli
