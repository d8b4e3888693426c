// Suggested calls (core/advice.h) checked against the registry: every call an edge writes (the
// MCP tools' syntax, gateway/mcp_syntax.h; a `ct` command line, cli/usage.h; JSON, the
// dashboard's page) is checked under tests as it is written, and every operation a layer below the
// edges may suggest (core/suggested_operations.h) when the product starts.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/advice.h"
#include "core/error.h"
#include "domains/registry.h"

namespace ct {

/// Whether `call` would run: it names a registered operation and its params pass that
/// operation's validation (pipeline::validate: common params, then Params::validate). A placeholder value ("…", "...", "<why…>",
/// or a host's template variable such as "$1": core/text.h) stands for any valid one: the
/// operation's example value for that param, else one of its type.
Result<void> check_call(const Call& call, const Registry& registry);

/// The operation `call` names, or null. Under tests (CLEO_TEST_MODE=1, CLEO_CHECK_ERRORS=1, debug
/// builds) a call that check_call() refuses stops the process: every suggestion an edge writes is
/// checked as it is written.
const OperationSpec* called_operation(const Call& call, const Registry& registry);

/// The operations of kSuggestedOperations (core/suggested_operations.h) that `registry` does not
/// have: none, or the product would suggest calls it cannot run. The product checks it when it
/// starts under tests (gateway/product.h).
std::vector<std::string_view> unknown_suggested_operations(const Registry& registry);

/// Debug builds and test runs (CLEO_TEST_MODE=1 or CLEO_CHECK_ERRORS=1) check what the router
/// answers against the specs: declared errors, suggested calls.
bool checking_contracts();

}  // namespace ct
