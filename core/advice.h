// What to do next, as a value: text and calls of registered operations, in order ("X breaks the
// loop; Y finds others"). Layers below the edges name an operation and its params; each edge
// writes the calls its own way (the MCP tools' call syntax on the wire, a `ct` command line at a
// terminal, JSON for the dashboard's page: domains/envelope.h), so no layer below them spells a
// tool's syntax. Advice travels to the edge as a value: in an error's fix, in a reply's warnings,
// and inside a reply's data as to_value() writes it.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/json.h"
#include "core/suggested_operations.h"

namespace ct {

/// A call of a registered operation, as a fix or a hint suggests it.
struct Call {
  std::string operation;  // "tasks.show": the domain, a dot, the operation ("system.config.get")
  json::Value params;     // an object, or null: a call written without params
  /// The params are written as compact JSON (`{"id":"T001"}`) rather than as a literal
  /// (`{id:'T001'}`): calls made from an operation's examples, which are JSON text.
  bool json_params = false;

  std::string_view domain() const;  // "tasks"
  std::string_view name() const;    // "show"
};

class Advice {
 public:
  struct Part {
    std::string text;          // said as it is, when there is no call
    std::optional<Call> call;
  };

  Advice() = default;
  Advice(std::string text);
  Advice(const char* text) : Advice(std::string(text)) {}
  Advice(Call call);

  bool empty() const { return parts_.empty(); }
  const std::vector<Part>& parts() const { return parts_; }
  /// The call when the advice is that call alone, else null.
  const Call* only_call() const;
  /// Whether any of its parts is a call (else it is text alone).
  bool has_calls() const;
  /// The parts in order, each call as `write` spells it.
  std::string render(const std::function<std::string(const Call&)>& write) const;
  /// The advice as plain text, each call named by its operation ("tasks.show"): for a line no
  /// edge writes (a skipped file's warning, where the advice is prose).
  std::string plain_text() const;
  /// Replaces `placeholder` in the text and in the calls' string params ("{id}" in a rule's fix).
  Advice& substitute(std::string_view placeholder, std::string_view value);
  /// Passes the text and the calls' string params through `change` (terminal_safe for a terminal).
  Advice& map_text(const std::function<std::string(const std::string&)>& change);

  /// The advice as a value a reply's data (or a remembered reply) may hold: {"$advice": parts},
  /// each part a text or a call {operation, params?, json?}. The envelope's encoder writes it as its
  /// edge writes advice; no layer below the edges renders it.
  json::Value to_value() const;
  /// The advice a value of to_value()'s form holds; nullopt for any other value.
  static std::optional<Advice> from_value(const json::Value& value);
  /// Whether `value` is of to_value()'s form (an object whose one member is "$advice").
  static bool is_value(const json::Value& value);
  /// The parts as JSON: ["text", {"operation":"tasks.show","params":{"id":"T001"}}] — how the
  /// dashboard's page gets advice, to show each call its own way.
  json::Value parts_json() const;

  Advice& operator+=(Advice more);
  friend Advice operator+(Advice a, Advice b) { return std::move(a += std::move(b)); }

 private:
  std::vector<Part> parts_;
};

/// How an edge writes advice (domains/envelope.h implements the ones below the edges' own): the
/// MCP tools' call syntax (gateway/, gateway/mcp_syntax.h), `ct` command lines (cli/), JSON for
/// the dashboard's page, or the value itself (a reply remembered for its idempotencyKey).
class AdviceWriter {
 public:
  /// `advice` as this edge shows it: a string, or a JSON value (the dashboard's page).
  virtual json::Value write(const Advice& advice) const = 0;

 protected:
  ~AdviceWriter() = default;
};

/// A call of `operation` ("tasks.show", one of kSuggestedOperations) with these params, written
/// `params:{…}` even when empty.
Advice call(OperationName operation, json::Value::Object params);
/// A call of `operation` that takes no params, written without them.
Advice call(OperationName operation);

}  // namespace ct
