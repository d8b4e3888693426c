#include "gateway/mcp_primitives.h"

#include <array>

#include "gateway/mcp_syntax.h"
#include "disclosure/prompts.h"
#include "disclosure/resources.h"
#include "disclosure/suggest.h"

namespace ct::mcp {
namespace {

constexpr std::array<std::string_view, 6> kMethods = {"prompts/list",   "prompts/get",  "resources/list",
                                                      "resources/templates/list", "resources/read",
                                                      "completion/complete"};

PrimitiveAnswer refused(RpcError code, std::string message, json::Value data = json::Value()) {
  PrimitiveAnswer out;
  out.error = code;
  out.message = std::move(message);
  out.data = std::move(data);
  return out;
}

/// A CLEO error as a JSON-RPC error: what the caller named wrong is -32602 (Invalid params), what
/// the server cannot do now -32603. Its data carries the error as tool replies write it (code,
/// message, fix), so an agent can act on it, and `extra`'s members.
PrimitiveAnswer from_error(const Error& error, const Registry& registry, json::Value extra = json::Value::object()) {
  const bool callers = error.code == ErrorCode::NotFound || error.code == ErrorCode::InvalidParams ||
                       error.code == ErrorCode::Validation || error.code == ErrorCode::InvalidInput ||
                       error.code == ErrorCode::SessionNotFound;
  json::Value data = std::move(extra);
  data.set("error", error_to_value(error, McpAdvice(registry)));
  return refused(callers ? RpcError::InvalidParams : RpcError::InternalError,
                 (callers ? "Invalid params: " : "") + error.message, std::move(data));
}

/// A cursor param: absent, null or a string; anything else is refused.
std::optional<PrimitiveAnswer> bad_cursor(const json::Value& params) {
  const json::Value& cursor = params["cursor"];
  if (cursor.is_null() || cursor.is_string()) return std::nullopt;
  return refused(RpcError::InvalidParams, "Invalid params: cursor must be a string (a nextCursor given earlier)");
}

PrimitiveAnswer prompts_list(const json::Value& params) {
  if (auto refusal = bad_cursor(params)) return *refusal;
  if (!params["cursor"].string_or_empty().empty())
    return refused(RpcError::InvalidParams, "Invalid params: unknown cursor (prompts/list has one page)");
  json::Value prompts = json::Value::array();
  for (const auto& prompt : disclosure::prompt_catalog()) {
    json::Value item = json::Value::object();
    item.set("name", prompt.name);
    item.set("title", prompt.title);
    item.set("description", prompt.description);
    if (!prompt.arguments.empty()) {
      json::Value arguments = json::Value::array();
      for (const auto& argument : prompt.arguments) {
        json::Value a = json::Value::object();
        a.set("name", argument.name);
        a.set("description", argument.description);
        a.set("required", argument.required);
        arguments.push_back(std::move(a));
      }
      item.set("arguments", std::move(arguments));
    }
    prompts.push_back(std::move(item));
  }
  json::Value result = json::Value::object();
  result.set("prompts", std::move(prompts));
  return {.result = std::move(result)};
}

PrimitiveAnswer prompts_get(const Registry& registry, const json::Value& params, Router& router, const Caller& caller) {
  const json::Value& name = params["name"];
  if (!name.is_string()) return refused(RpcError::InvalidParams, "Invalid params: name (string) is required");
  disclosure::PromptArguments arguments;
  const json::Value& given = params["arguments"];
  if (!given.is_null() && !given.is_object())
    return refused(RpcError::InvalidParams, "Invalid params: arguments must be an object of strings");
  if (given.is_object())
    for (const auto& [key, value] : given.as_object()) {
      if (value.is_null()) continue;
      if (!value.is_string())
        return refused(RpcError::InvalidParams, "Invalid params: argument '" + key.substr(0, 80) + "' must be a string");
      arguments.emplace(key, value.as_string());
    }
  auto rendered = disclosure::render_prompt(registry, name.as_string(), arguments, router, caller);
  if (!rendered) return from_error(rendered.error(), registry);
  json::Value content = json::Value::object();
  content.set("type", "text");
  content.set("text", rendered->text);
  json::Value message = json::Value::object();
  message.set("role", "user");
  message.set("content", std::move(content));
  json::Value result = json::Value::object();
  result.set("description", rendered->description);
  result.set("messages", json::Value::array_of(std::vector<json::Value>{std::move(message)}));
  return {.result = std::move(result)};
}

PrimitiveAnswer resources_list(const Registry& registry, const json::Value& params, Router& router, const Caller& caller) {
  if (auto refusal = bad_cursor(params)) return *refusal;
  auto page = disclosure::list_resources(router, caller, params["cursor"].string_or_empty());
  if (!page) return from_error(page.error(), registry);
  json::Value resources = json::Value::array();
  for (const auto& item : page->items) {
    json::Value r = json::Value::object();
    r.set("uri", item.uri);
    r.set("name", item.name);
    if (!item.title.empty()) r.set("title", item.title);
    if (!item.description.empty()) r.set("description", item.description);
    r.set("mimeType", item.mime_type);
    resources.push_back(std::move(r));
  }
  json::Value result = json::Value::object();
  result.set("resources", std::move(resources));
  if (page->next_cursor) result.set("nextCursor", *page->next_cursor);
  return {.result = std::move(result)};
}

PrimitiveAnswer templates_list(const json::Value& params) {
  if (auto refusal = bad_cursor(params)) return *refusal;
  if (!params["cursor"].string_or_empty().empty())
    return refused(RpcError::InvalidParams, "Invalid params: unknown cursor (resources/templates/list has one page)");
  json::Value templates = json::Value::array();
  for (const auto& t : disclosure::resource_templates()) {
    if (t.variable.empty()) continue;  // a fixed URI: resources/list has it
    json::Value item = json::Value::object();
    item.set("uriTemplate", t.uri_template);
    item.set("name", t.name);
    item.set("title", t.title);
    item.set("description", t.description);
    item.set("mimeType", t.mime_type);
    templates.push_back(std::move(item));
  }
  json::Value result = json::Value::object();
  result.set("resourceTemplates", std::move(templates));
  return {.result = std::move(result)};
}

PrimitiveAnswer resources_read(const Registry& registry, const json::Value& params, Router& router, const Caller& caller) {
  const json::Value& uri = params["uri"];
  if (!uri.is_string()) return refused(RpcError::InvalidParams, "Invalid params: uri (string) is required");
  auto read = disclosure::read_resource(registry, router, caller, uri.as_string());
  json::Value where = json::Value::object();
  where.set("uri", uri.as_string().substr(0, 2000));
  if (!read) {
    PrimitiveAnswer out = from_error(read.error(), registry, std::move(where));
    // The message SEP-2164 shows, which clients may look for.
    if (read.error().code == ErrorCode::NotFound) out.message = "Resource not found: " + read.error().message;
    return out;
  }
  json::Value content = json::Value::object();
  content.set("uri", read->uri);
  content.set("mimeType", read->mime_type);
  content.set("text", read->text);
  json::Value result = json::Value::object();
  result.set("contents", json::Value::array_of(std::vector<json::Value>{std::move(content)}));
  return {.result = std::move(result)};
}

PrimitiveAnswer complete(const json::Value& params, Router& router, const Caller& caller) {
  const json::Value& ref = params["ref"];
  const json::Value& argument = params["argument"];
  if (!ref.is_object() || !ref["type"].is_string())
    return refused(RpcError::InvalidParams, "Invalid params: ref {type: ref/prompt|ref/resource, …} is required");
  if (!argument.is_object() || !argument["name"].is_string())
    return refused(RpcError::InvalidParams, "Invalid params: argument {name, value} is required");
  const std::string& argument_name = argument["name"].as_string();
  const std::string typed = argument["value"].string_or_empty();
  std::optional<disclosure::ValueKind> kind;
  const std::string& type = ref["type"].as_string();
  if (type == "ref/prompt") {
    const disclosure::PromptSpec* prompt =
        ref["name"].is_string() ? disclosure::find_prompt(ref["name"].as_string()) : nullptr;
    if (!prompt)
      return refused(RpcError::InvalidParams, "Invalid params: no prompt " +
                                                  (ref["name"].is_string() ? ref["name"].as_string().substr(0, 80) : std::string("named")));
    const disclosure::PromptArgument* a = prompt->find_argument(argument_name);
    if (!a)
      return refused(RpcError::InvalidParams, "Invalid params: prompt " + std::string(prompt->name) + " has no argument '" +
                                                  argument_name.substr(0, 80) + "'");
    kind = a->kind;
  } else if (type == "ref/resource") {
    const std::string uri = ref["uri"].string_or_empty();
    const disclosure::ResourceTemplate* t = disclosure::find_template(uri);
    if (!t) {
      // A concrete URI of a template names it too: cleo://task/T1 completes as cleo://task/{id}.
      if (auto parsed = disclosure::parse_resource_uri(uri)) t = parsed->kind;
    }
    if (!t || t->variable.empty())
      return refused(RpcError::InvalidParams, "Invalid params: no resource template " + uri.substr(0, 200));
    if (argument_name != t->variable)
      return refused(RpcError::InvalidParams, "Invalid params: " + std::string(t->uri_template) + " has no variable '" +
                                                  argument_name.substr(0, 80) + "'");
    kind = t->kind;
  } else {
    return refused(RpcError::InvalidParams, "Invalid params: ref.type must be ref/prompt or ref/resource");
  }
  auto found = disclosure::suggest(router, caller, *kind, typed, 100);
  json::Value completion = json::Value::object();
  completion.set("values", json::Value::array_of(found.values));
  completion.set("total", found.total);
  completion.set("hasMore", found.more);
  json::Value result = json::Value::object();
  result.set("completion", std::move(completion));
  return {.result = std::move(result)};
}

}  // namespace

bool is_primitive_method(std::string_view method) {
  return std::find(kMethods.begin(), kMethods.end(), method) != kMethods.end();
}

PrimitiveAnswer answer_primitive(const Registry& registry, std::string_view method, const json::Value& params,
                                 Router& router, const Caller& caller) {
  if (method == "prompts/list") return prompts_list(params);
  if (method == "prompts/get") return prompts_get(registry, params, router, caller);
  if (method == "resources/list") return resources_list(registry, params, router, caller);
  if (method == "resources/templates/list") return templates_list(params);
  if (method == "resources/read") return resources_read(registry, params, router, caller);
  if (method == "completion/complete") return complete(params, router, caller);
  return refused(RpcError::MethodNotFound, "Method not found: " + std::string(method));
}

std::optional<std::string> subscribable_uri(std::string_view uri, PrimitiveAnswer& refusal) {
  auto ref = disclosure::parse_resource_uri(uri);
  json::Value data = json::Value::object();
  data.set("uri", std::string(uri.substr(0, 2000)));
  if (!ref) {
    refusal = refused(RpcError::InvalidParams, "Resource not found: " + std::string(uri.substr(0, 200)) +
                                                   " (subscriptions are offered for cleo://task/{id}, cleo://epic/{id} and "
                                                   "cleo://inbox/{name})",
                      std::move(data));
    return std::nullopt;
  }
  if (!ref->kind->subscribable) {
    refusal = refused(RpcError::InvalidParams, "Invalid params: " + ref->uri() +
                                                   " cannot be subscribed to (only cleo://task/{id}, cleo://epic/{id} and "
                                                   "cleo://inbox/{name})",
                      std::move(data));
    return std::nullopt;
  }
  return ref->uri();
}

std::optional<std::string> existing_subscribable_uri(const Registry& registry, std::string_view uri, Router& router,
                                                     const Caller& caller, PrimitiveAnswer& refusal) {
  auto canonical = subscribable_uri(uri, refusal);
  if (!canonical) return std::nullopt;
  // An inbox is there for any name (messages wait for whoever takes it), if the caller may read it.
  if (canonical->starts_with("cleo://inbox/")) {
    json::Value params = json::Value::object();
    params.set("of", canonical->substr(canonical->rfind('/') + 1));
    params.set("limit", 1);
    Envelope readable = router.dispatch({Gateway::Query, "session", "inbox", params, caller});
    if (!readable.success) {
      json::Value where = json::Value::object();
      where.set("uri", *canonical);
      refusal = from_error(*readable.error, registry, std::move(where));
      // Another's inbox is the caller's mistake (a person's to read), not the server's failure.
      if (readable.error->code == ErrorCode::MutationDisabled) {
        refusal.error = RpcError::InvalidParams;
        refusal.message = "Invalid params: " + readable.error->message;
      }
      return std::nullopt;
    }
    return canonical;
  }
  // Task and epic name a task (an epic is any task's subtree): it must be there, archived or not.
  const std::string id = canonical->substr(canonical->rfind('/') + 1);
  json::Value params = json::Value::object();
  params.set("id", id);
  Envelope exists = router.dispatch({Gateway::Query, "tasks", "exists", params, caller});
  json::Value where = json::Value::object();
  where.set("uri", *canonical);
  if (!exists.success) {
    refusal = from_error(*exists.error, registry, std::move(where));
    return std::nullopt;
  }
  if (exists.data["exists"] != json::Value(true)) {
    Error missing(ErrorCode::NotFound, "no task " + id + ", so " + *canonical + " cannot be subscribed to");
    missing.fix = call("tasks.find", {{"query", id}});
    refusal = from_error(missing, registry, std::move(where));
    refusal.message = "Resource not found: " + missing.message;  // the message SEP-2164 shows
    return std::nullopt;
  }
  return canonical;
}

}  // namespace ct::mcp
