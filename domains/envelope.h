// The envelope every reply is (docs/architecture.md §3.2), and its codec. A reply carries advice
// as values (core/advice.h) — an error's fix, warnings, and advice inside its data — and the
// encoder writes them as the edge sending the reply writes advice: an AdviceWriter the edge gives
// (the MCP tools' syntax from gateway/, `ct` command lines from cli/, JSON for the dashboard's
// page). A reply remembered for its idempotencyKey keeps them as values, so a repeat is answered
// in the syntax of whichever edge repeats it.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/advice.h"
#include "core/error.h"
#include "core/json.h"
#include "domains/registry.h"

namespace ct {

struct Envelope {
  bool success = true;
  json::Value data;  // advice in it is a value (Advice::to_value) until the encoder writes it
  std::optional<Error> error;
  std::vector<Advice> warnings;
  std::optional<Page> page;
  std::optional<ErrorCode> note;   // success with a note (100–103)
  json::Value meta;                // operational metadata, only when the caller asked (meta: true)
  /// The caller's session after the call, when the call changed it (session.start/resume bind,
  /// end/close unbind): the transport sends it with the caller's next calls. Not on the wire.
  std::optional<std::string> rebind;
  /// How long the call took, and how much of that it waited for the store's write lock (another
  /// writer held it): what a transport tells the people watching (MCP's log). Not on the wire.
  struct Timing {
    double total_ms = 0;
    double lock_wait_ms = 0;
  } timing;

  /// 0 on plain success, 100–103 for notes, the error's exit code on failure.
  int exit_code() const;
};

Envelope failure(Error error);

/// The one encoder of envelopes (compact JSON), advice written by `writer`.
std::string to_json(const Envelope& envelope, const AdviceWriter& writer);
json::Value to_value(const Envelope& envelope, const AdviceWriter& writer);
json::Value error_to_value(const Error& error, const AdviceWriter& writer);

/// Appends `value` as compact JSON, each advice value in it as `writer` writes it.
void write_json(std::string& out, const json::Value& value, const AdviceWriter& writer);
/// `value` with each advice value in it as `writer` writes it.
json::Value written(const json::Value& value, const AdviceWriter& writer);
/// `advice` as text `writer` writes it (a writer of JSON values: its compact JSON), for a text that
/// holds it (a spawn prompt's memory, written for agents: Registry::agent_writer).
std::string text_of(const Advice& advice, const AdviceWriter& writer);

/// The envelope of a remembered reply (only successes are remembered): advice comes back as values.
Envelope envelope_from_value(const json::Value& value);

/// Advice kept as its value (Advice::to_value; text alone stays a string): how a reply is
/// remembered for its idempotencyKey. Its calls are checked as every edge's are
/// (domains/call_check.h: called_operation).
class AdviceAsValue final : public AdviceWriter {
 public:
  explicit AdviceAsValue(const Registry& registry) : registry_(registry) {}
  json::Value write(const Advice& advice) const override;

 private:
  const Registry& registry_;
};

/// Advice as its parts in JSON (Advice::parts_json): ["text", {operation, params?}], the form the
/// dashboard's page shows; text alone stays a string. Its calls are checked as every edge's are.
class AdviceAsJson final : public AdviceWriter {
 public:
  explicit AdviceAsJson(const Registry& registry) : registry_(registry) {}
  json::Value write(const Advice& advice) const override;

 private:
  const Registry& registry_;
};

}  // namespace ct
