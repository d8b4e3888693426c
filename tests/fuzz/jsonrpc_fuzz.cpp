// jsonrpc: one MCP message (gateway/mcp_protocol.h), handled by a Protocol with the product's
// registry and server info and a Router on a real project (system.init once at start, in a
// scratch dir; the store persists across inputs and is re-created every kInputsPerProject).
// CLEO_TEST_MODE=1 and HOME point into that scratch dir, set before anything reads them.
//
// Invariants, read from the message without the product's own code paths:
//   - nothing crashes; no reply is the catch-all -32603;
//   - a reply is well-formed JSON, and json::parse accepts it whenever it accepts the message (a
//     message that only outline() accepts — 1e999, an integer beyond 64 bits — may have its id
//     echoed exactly as sent);
//   - every reply object has "jsonrpc":"2.0" and exactly one of result and error;
//   - a notification (jsonrpc "2.0", a string method, no id) and a response (no method, an id,
//     a result or error) get no reply; every other message gets one; a batch gets one entry per
//     element that needs a reply;
//   - a reply's id is the request's id when that is a string or a number, else null;
//   - a tool result's text block is its structuredContent, isError is !success, and no operation
//     answers E_INTERNAL (a bug, by the product's own definition);
//   - after a message with a successful cleo_mutate call, validate.audit and validate.schema
//     pass: only the product has written to this store.
// A message that starts with '[' is handled twice: on a fresh connection (batches refused) and
// on one that negotiated 2025-03-26 (batches served).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/json_parse.h"
#include "gateway/mcp_syntax.h"
#include "gateway/product.h"
#include "domains/router.h"
#include "gateway/server_commands.h"
#include "gateway/mcp_protocol.h"
#include "fuzz_project.h"
#include "fuzz_support.h"

using namespace ct;
namespace fs = std::filesystem;

namespace {

constexpr std::size_t kInputsPerProject = 2000;

struct Harness {
  fs::path root;
  fs::path project;
  std::unique_ptr<mcp::Protocol> protocol;
  std::unique_ptr<Router> router;
  std::size_t handled = 0;
};
Harness* harness = nullptr;  // lives as long as the process

/// A new project, as `ct init` makes it, with a router configured as `ct mcp` configures one.
void fresh_project() {
  harness->router.reset();
  fuzz::fresh_project(harness->project);
  harness->router = fuzz::make_router(harness->project);
}

// ---- reading the message independently of the product --------------------------------------

/// What a message (or a batch element) asks of the server.
struct Shape {
  bool object = false;
  bool needs_reply = true;
  std::optional<json::Value> id;  // the id the reply must carry (null when none usable); unset: not checked
};

Shape shape_of(const json::Value& message) {
  Shape shape;
  if (!message.is_object()) {
    shape.id = json::Value();
    return shape;
  }
  shape.object = true;
  const json::Value* id = message.find("id");
  const json::Value* method = message.find("method");
  bool v2 = message["jsonrpc"] == json::Value("2.0");
  bool notification = v2 && method && method->is_string() && !id;
  bool response = v2 && !method && id && (message.contains("result") || message.contains("error"));
  shape.needs_reply = !notification && !response;
  shape.id = id && (id->is_string() || id->is_number()) ? *id : json::Value();
  return shape;
}

/// The same from outline() for a message parse() refuses (its keys come decoded); jsonrpc not read.
Shape shape_of(const json::Outline& message) {
  Shape shape;
  if (message.top != json::Type::Object) return shape;
  shape.object = true;
  bool id = false, method = false, answer = false;
  for (const auto& [name, raw] : message.members) {
    id = id || name == "id";
    method = method || name == "method";
    answer = answer || name == "result" || name == "error";
  }
  bool notification = method && !id;
  bool response = !method && id && answer;
  shape.needs_reply = !notification && !response;
  return shape;
}

// ---- checking the reply ---------------------------------------------------------------------

void check_reply_object(const json::Value& reply, const Shape& shape, std::string_view message) {
  std::string text = reply.dump();
  if (!reply.is_object()) fuzz::finding("a reply entry is not an object", message, text);
  if (reply["jsonrpc"] != json::Value("2.0")) fuzz::finding("a reply without \"jsonrpc\":\"2.0\"", message, text);
  if (reply.contains("result") == reply.contains("error"))
    fuzz::finding("a reply without exactly one of result and error", message, text);
  if (!reply.contains("id")) fuzz::finding("a reply without an id", message, text);
  if (shape.id && !fuzz::same_json(reply["id"], *shape.id))
    fuzz::finding("a reply's id is not the request's id", message, text + " (expected id " + shape.id->dump() + ")");
  if (const json::Value* error = reply.find("error")) {
    if (!(*error)["code"].is_int() || !(*error)["message"].is_string())
      fuzz::finding("an error without an integer code and a string message", message, text);
    if ((*error)["code"].as_int() == static_cast<int>(mcp::RpcError::InternalError))
      fuzz::finding("the catch-all -32603 answered (an exception escaped dispatch)", message, text);
    return;
  }
  const json::Value& result = reply["result"];
  const json::Value* structured = result.find("structuredContent");
  if (!structured) return;
  const json::Value& content = result["content"];
  if (!content.is_array() || content.size() != 1 || content.as_array()[0]["type"] != json::Value("text") ||
      !content.as_array()[0]["text"].is_string())
    fuzz::finding("a tool result without exactly one text block", message, text);
  auto block = json::parse(content.as_array()[0]["text"].as_string());
  if (!block || !fuzz::same_json(*block, *structured))
    fuzz::finding("a tool result's text is not its structuredContent", message, text);
  if (!(*structured)["success"].is_bool() || result["isError"] != json::Value(!(*structured)["success"].as_bool()))
    fuzz::finding("a tool result's isError is not the opposite of success", message, text);
  if ((*structured)["error"]["code"] == json::Value("E_INTERNAL"))
    fuzz::finding("an operation answered E_INTERNAL", message, text);
}

/// A reply to a message that parse() refuses: outline() must accept it, with jsonrpc "2.0".
void check_raw_reply_object(std::string_view reply, std::string_view message) {
  json::Outline outline = json::outline(reply);
  if (!outline.well_formed || outline.top != json::Type::Object)
    fuzz::finding("a reply entry is not a JSON object", message, reply);
  if (outline.member("jsonrpc") != "\"2.0\"") fuzz::finding("a reply without \"jsonrpc\":\"2.0\"", message, reply);
  if (outline.member("result").empty() == outline.member("error").empty())
    fuzz::finding("a reply without exactly one of result and error", message, reply);
}

/// Whether the last message changed anything: a cleo_mutate call answered with success.
bool changed = false;

void handle(std::string_view message, mcp::Connection connection) {
  // Batches are served only on a connection that negotiated 2025-03-26 before the message came.
  const bool batches = connection.protocol_version == "2025-03-26";
  mcp::Outcome outcome = harness->protocol->handle(message, connection, *harness->router);
  changed = changed || (outcome.reply && message.find("cleo_mutate") != std::string_view::npos &&
                        outcome.reply->find("\"isError\":false") != std::string::npos);
  auto parsed = json::parse(message);
  if (parsed) {
    std::vector<Shape> needing;  // what each reply entry answers, in order
    bool batch = parsed->is_array() && batches && !parsed->empty();
    if (batch) {
      for (const auto& item : parsed->as_array())
        if (Shape shape = shape_of(item); shape.needs_reply) needing.push_back(shape);
    } else if (parsed->is_array()) {
      needing.push_back(Shape{false, true, json::Value()});
    } else if (Shape shape = shape_of(*parsed); shape.needs_reply) {
      needing.push_back(shape);
    }
    if (needing.empty()) {
      if (outcome.reply) fuzz::finding("a notification or response got a reply", message, *outcome.reply);
      return;
    }
    if (!outcome.reply) fuzz::finding("a message that needs a reply got none", message);
    auto reply = json::parse(*outcome.reply);
    if (!reply) fuzz::finding("a reply to a parsable message does not parse", message, *outcome.reply);
    if (batch) {
      if (!reply->is_array() || reply->size() != needing.size())
        fuzz::finding("a batch reply without one entry per request", message, *outcome.reply);
      for (std::size_t i = 0; i < needing.size(); ++i) check_reply_object(reply->as_array()[i], needing[i], message);
    } else {
      check_reply_object(*reply, needing.front(), message);
    }
    return;
  }

  json::Outline outline = json::outline(message);
  if (!outline.well_formed) {
    if (!outcome.reply) fuzz::finding("malformed JSON got no reply", message);
    auto reply = json::parse(*outcome.reply);
    if (!reply || (*reply)["error"]["code"] != json::Value(static_cast<int>(mcp::RpcError::ParseError)) ||
        !(*reply)["id"].is_null())
      fuzz::finding("malformed JSON did not get a parse error with id null", message, *outcome.reply);
    check_reply_object(*reply, Shape{false, true, json::Value()}, message);
    return;
  }
  std::size_t needing = 0;
  bool batch = outline.top == json::Type::Array && batches && !outline.elements.empty();
  if (batch) {
    for (std::string_view element : outline.elements) needing += shape_of(json::outline(element)).needs_reply;
  } else {
    needing = outline.top == json::Type::Array || shape_of(outline).needs_reply;
  }
  if (needing == 0) {
    if (outcome.reply) fuzz::finding("a notification or response got a reply", message, *outcome.reply);
    return;
  }
  if (!outcome.reply) fuzz::finding("a message that needs a reply got none", message);
  json::Outline reply = json::outline(*outcome.reply);
  if (!reply.well_formed) fuzz::finding("a reply is not well-formed JSON", message, *outcome.reply);
  if (batch) {
    if (reply.top != json::Type::Array || reply.elements.size() != needing)
      fuzz::finding("a batch reply without one entry per request", message, *outcome.reply);
    for (std::string_view entry : reply.elements) check_raw_reply_object(entry, message);
  } else {
    check_raw_reply_object(*outcome.reply, message);
  }
}

/// Only the product writes to this store, so its own checks must pass after any change: the
/// audit trail's hash chain verifies (validate.audit) and every data rule holds (validate.schema).
/// Run after each message with a successful cleo_mutate call, so a finding is reproducible from
/// that message alone.
void check_store(std::string_view message) {
  for (const char* check : {"audit", "schema"}) {
    Envelope envelope = harness->router->dispatch({Gateway::Query, "validate", check, json::Value()});
    if (envelope.success || !envelope.error || envelope.error->code != ErrorCode::Validation) continue;
    fuzz::finding(std::string("the product's own writes fail validate.") + check, message, to_json(envelope, McpAdvice(registry())));
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  harness = new Harness;
  harness->root = fuzz::hermetic_environment("jsonrpc");
  harness->project = harness->root / "project";
  std::fprintf(stderr, "jsonrpc_fuzz: project in %s\n", harness->project.c_str());
  harness->protocol = std::make_unique<mcp::Protocol>(registry(), mcp::server_info());
  fresh_project();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (++harness->handled % kInputsPerProject == 0) fresh_project();
  std::string_view message = fuzz::as_text(data, size);
  changed = false;
  handle(message, mcp::Connection{});
  std::size_t first = message.find_first_not_of(" \t\r\n");
  if (first != std::string_view::npos && message[first] == '[') {
    mcp::Connection batches;
    batches.protocol_version = "2025-03-26";
    batches.initialized = true;
    handle(message, batches);
  }
  if (changed) check_store(message);
  return 0;
}
