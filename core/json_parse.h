// JSON parsing (simdjson) into owned values, and UTF-8 validation for text that did not come
// through the parser (command-line arguments, files).
#pragma once

#include <string_view>

#include "core/error.h"
#include "core/json.h"

namespace ct::json {

/// Parses one JSON document. Errors are E_INVALID_INPUT with the parser's reason; invalid
/// UTF-8 is rejected here, so nothing that passed through the parser can reach storage broken.
Result<Value> parse(std::string_view text);

}  // namespace ct::json

namespace ct {
bool valid_utf8(std::string_view text);
}  // namespace ct
