// MCP's prompts, resources and completion (the server features beside tools), as JSON-RPC
// results: prompts/list, prompts/get, resources/list, resources/templates/list, resources/read
// and completion/complete. The prompts, resources and suggestions themselves are disclosure/'s
// (prompts.h, resources.h, suggest.h); this maps them to the wire, the same in every revision —
// Protocol adds what one revision's results carry besides (resultType, caching hints).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "core/json.h"
#include "domains/router.h"
#include "gateway/jsonrpc.h"

namespace ct::mcp {

struct PrimitiveAnswer {
  json::Value result;                 // an object, when it succeeded
  std::optional<RpcError> error;      // when it did not
  std::string message;
  json::Value data;                   // the error's data
};

/// Whether `method` is one of the methods answered here.
bool is_primitive_method(std::string_view method);

/// Answers `method` (is_primitive_method) with `params`, reading through `router` as `caller`.
PrimitiveAnswer answer_primitive(const Registry& registry, std::string_view method, const json::Value& params,
                                 Router& router, const Caller& caller);

/// resources/unsubscribe's check: the canonical URI of a resource that can be subscribed to
/// (a task or an epic), else the error to answer.
std::optional<std::string> subscribable_uri(std::string_view uri, PrimitiveAnswer& refusal);
/// resources/subscribe's (and subscriptions/listen's): the same, of a resource that exists now
/// (read through `router` as `caller`); one that does not is -32602 naming the URI, as
/// resources/read answers it (SEP-2164), so that nobody watches what is not there.
std::optional<std::string> existing_subscribable_uri(const Registry& registry, std::string_view uri, Router& router,
                                                     const Caller& caller, PrimitiveAnswer& refusal);

}  // namespace ct::mcp
