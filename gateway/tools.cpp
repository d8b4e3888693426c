#include "gateway/tools.h"

#include "core/json.h"

namespace ct::mcp {

std::string_view tool_description(Gateway gateway) {
  // The annotations say the rest (readOnlyHint, destructiveHint); `params` says where the
  // operations' params are described.
  return gateway == Gateway::Query ? "Read CLEO." : "Change CLEO.";
}

std::string_view params_description() { return "Every operation's params; see system.help"; }

std::string input_schema(const Registry& registry, Gateway gateway) {
  std::string out;
  json::Writer w(out);
  w.begin_object();
  w.key("type").value("object");
  w.key("properties").begin_object();
  w.key("domain").begin_object().key("type").value("string").key("enum").begin_array();
  for (const auto& domain : registry.domains(gateway)) w.value(domain);
  w.end_array().end_object();
  w.key("operation").begin_object().key("type").value("string").end_object();
  // `params` holds each operation's own parameters, so it cannot list them all (over a hundred
  // operations would cost thousands of tokens in every conversation). It names the one every subject-bound
  // operation shares (`id`, docs/architecture.md §5), which gives Gemini's OBJECT its non-empty
  // `properties`, and stays open: `additionalProperties: true` is what makes a strict-mode
  // converter (the OpenAI Agents SDK's ensure_strict_json_schema) refuse and fall back to
  // non-strict, where `additionalProperties` left unset would be closed to false, and every
  // other parameter with it.
  // Its description says that every operation's params go here, and where they are listed: a
  // host that drops `additionalProperties` (opencode's converter for Gemini models) would
  // otherwise show the model `id` alone.
  w.key("params").begin_object();
  w.key("type").value("object");
  w.key("description").value(params_description());
  w.key("properties").begin_object().key("id").begin_object().key("type").value("string").end_object().end_object();
  w.key("additionalProperties").value(true);
  w.end_object();
  w.end_object();
  w.key("required").begin_array().value("domain").value("operation").end_array();
  w.end_object();
  return out;
}

std::string tools_array(const Registry& registry, bool task_support) {
  std::string out;
  json::Writer w(out);
  w.begin_array();
  for (Gateway gateway : {Gateway::Query, Gateway::Mutate}) {
    w.begin_object();
    w.key("name").value(tool_name(gateway));
    w.key("description").value(tool_description(gateway));
    w.key("inputSchema").raw(input_schema(registry, gateway));
    // readOnlyHint is false unless said (MCP's default), so cleo_mutate says only that a change
    // may destroy (also the default, but docs/architecture.md §3.1 has hosts told).
    w.key("annotations").begin_object();
    w.key(gateway == Gateway::Query ? "readOnlyHint" : "destructiveHint").value(true);
    w.end_object();
    if (task_support && gateway == Gateway::Mutate)
      w.key("execution").begin_object().key("taskSupport").value("optional").end_object();
    w.end_object();
  }
  w.end_array();
  return out;
}

}  // namespace ct::mcp
