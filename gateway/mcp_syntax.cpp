#include "gateway/mcp_syntax.h"

#include "domains/call_check.h"

namespace ct {
namespace {

void write_literal(std::string& out, const json::Value& value) {
  if (value.is_string()) {
    out += '\'' + value.as_string() + '\'';
  } else if (value.is_array()) {
    out += '[';
    for (std::size_t i = 0; i < value.as_array().size(); ++i) {
      if (i) out += ", ";
      write_literal(out, value.as_array()[i]);
    }
    out += ']';
  } else if (value.is_object()) {
    out += '{';
    bool first = true;
    for (const auto& [key, item] : value.as_object()) {
      out += (first ? "" : ", ") + key + ":";
      write_literal(out, item);
      first = false;
    }
    out += '}';
  } else {
    value.dump_to(out);
  }
}

/// `{id:'T001', value:"x"}`: a literal, except that a scalar param's value is JSON, which shows its
/// type (system.config.set's value:15000 or value:"make check").
std::string params_literal(const json::Value& params, const OperationSpec* spec) {
  if (!params.is_object()) return params.dump();
  std::string out = "{";
  bool first = true;
  for (const auto& [key, item] : params.as_object()) {
    out += (first ? "" : ", ") + key + ":";
    const ParamSpec* param = spec ? spec->find_param(key) : nullptr;
    if (param && param->type == ParamType::Scalar) item.dump_to(out);
    else write_literal(out, item);
    first = false;
  }
  return out + "}";
}

}  // namespace

std::string mcp_call(const Call& call, const Registry& registry) {
  const OperationSpec* spec = called_operation(call, registry);
  std::string out(tool_name(spec ? spec->gateway : Gateway::Query));
  out += " {domain:'" + std::string(call.domain()) + "', operation:'" + std::string(call.name()) + "'";
  if (!call.params.is_null()) out += ", params:" + (call.json_params ? call.params.dump() : params_literal(call.params, spec));
  return out + "}";
}

std::string mcp_text(const Advice& advice, const Registry& registry) {
  return advice.render([&](const Call& call) { return mcp_call(call, registry); });
}

}  // namespace ct
