// What to do next, as a value: text and calls of registered operations, in order ("X breaks the
// loop; Y finds others"). Layers below the edges name an operation and its params; each edge
// writes the calls its own way (the MCP tools' call syntax on the wire, a `ct` command line at a
// terminal), so no layer below them spells a tool's syntax.
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
  /// The parts in order, each call as `write` spells it.
  std::string render(const std::function<std::string(const Call&)>& write) const;
  /// The advice as plain text, each call named by its operation ("tasks.show"): for a line no
  /// edge writes (a skipped file's warning, where the advice is prose).
  std::string plain_text() const;
  /// Replaces `placeholder` in the text and in the calls' string params ("{id}" in a rule's fix).
  Advice& substitute(std::string_view placeholder, std::string_view value);
  /// Passes the text and the calls' string params through `change` (terminal_safe for a terminal).
  Advice& map_text(const std::function<std::string(const std::string&)>& change);

  Advice& operator+=(Advice more);
  friend Advice operator+(Advice a, Advice b) { return std::move(a += std::move(b)); }

 private:
  std::vector<Part> parts_;
};

/// A call of `operation` ("tasks.show", one of kSuggestedOperations) with these params, written
/// `params:{…}` even when empty.
Advice call(OperationName operation, json::Value::Object params);
/// A call of `operation` that takes no params, written without them.
Advice call(OperationName operation);

}  // namespace ct
