#include "cli/usage.h"

#include <algorithm>
#include <string>
#include <vector>

#include "cli/args.h"
#include "core/json_parse.h"
#include "domains/call_check.h"
#include "disclosure/help_levels.h"

namespace ct::cli {
namespace {

std::string json_scalar_text(const json::Value& value) {
  if (value.is_string()) return value.as_string();
  return value.dump();
}

}  // namespace

std::string param_help(const ParamSpec& param) {
  std::vector<std::string> facts;
  if (param.required) facts.emplace_back("required");
  switch (param.type) {
    case ParamType::String: {
      std::string r = disclosure::range_text(param, " chars");
      facts.push_back(r.empty() ? "text" : "text, " + r);
      if (!param.pattern.empty()) facts.push_back("matching " + std::string(param.pattern));
      break;
    }
    case ParamType::Int: {
      std::string r = param.choices.empty() ? disclosure::range_text(param) : disclosure::choices_text(param);
      facts.push_back(r.empty() ? "integer" : "integer " + r);
      break;
    }
    case ParamType::Bool: break;
    case ParamType::Enum: facts.push_back("one of " + disclosure::choices_text(param)); break;
    case ParamType::TaskId: facts.emplace_back("task id"); break;
    case ParamType::Object:
      facts.emplace_back(param.path_param.empty() ? "JSON text, @file, or - for stdin"
                                                  : "JSON text, a file or folder, @file, or - for stdin");
      break;
    case ParamType::Scalar: break;
    case ParamType::Array: {
      std::string items = param.item_type == ParamType::TaskId ? "task ids"
                          : param.item_type == ParamType::Enum  ? disclosure::choices_text(param)
                                                                : "text";
      if (auto each = disclosure::bounds_text(kUnbounded, param.item_max, " chars"); !each.empty())
        items += " (" + each + " each)";
      std::string r = disclosure::range_text(param, " items");
      facts.push_back("list of " + items + (r.empty() ? "" : ", " + r));
      facts.emplace_back(splits_on_commas(param) ? "repeat the flag or separate with commas" : "repeat the flag");
      break;
    }
  }
  if (!param.default_json.empty()) {
    if (param.type == ParamType::Bool) {
      if (param.default_json == "true") facts.push_back("on by default; --no-" + kebab_case(param.name) + " turns it off");
    } else {
      auto parsed = json::parse(param.default_json);
      facts.push_back("default " + (parsed ? json_scalar_text(*parsed) : std::string(param.default_json)));
    }
  }
  std::string out(param.description);
  if (!facts.empty()) {
    out += " [";
    for (std::size_t i = 0; i < facts.size(); ++i) out += (i ? "; " : "") + facts[i];
    out += "]";
  }
  return out;
}

std::string operation_footer(const OperationSpec& spec) {
  std::string out;
  if (!spec.returns.empty()) out += "Returns: " + std::string(spec.returns) + "\n";
  if (!spec.examples.empty()) {
    out += "\nExamples:\n";
    for (const auto& example : spec.examples) {
      auto params = json::parse(example.params_json);
      if (!params) continue;
      if (!example.description.empty()) out += "  # " + std::string(example.description) + "\n";
      out += "  " + command_line(spec, *params) + "\n";
    }
  }
  if (!spec.errors.empty()) {
    out += "\nErrors:";
    for (std::size_t i = 0; i < spec.errors.size(); ++i) {
      out += (i ? ", " : " ") + std::string(to_string(spec.errors[i])) + " (exit " +
             std::to_string(exit_code(spec.errors[i])) + ")";
    }
    out += "\n";
  }
  std::vector<std::string> traits;
  if (spec.idempotent) traits.emplace_back("idempotent");
  if (spec.destructive) traits.emplace_back("destructive");
  if (spec.needs_session) traits.emplace_back("session-checked");
  if (!spec.needs_project) traits.emplace_back("works without a project");
  out += "\nOver MCP: " + std::string(tool_name(spec.gateway)) + " {domain:'" + std::string(spec.domain) +
         "', operation:'" + std::string(spec.name) + "', params:{…}}";
  for (const auto& trait : traits) out += " · " + trait;
  if (!spec.shortcut.empty()) {
    out += "\nAlso reachable as: ct " + std::string(spec.domain) + " " + std::string(spec.name);
  }
  out += "\nGlobal options: --json, --project DIR, --meta, --read-only";
  if (spec.gateway == Gateway::Mutate) out += ", --reason TEXT, --intent CATEGORY";
  out += " (see ct --help)\n";
  return out;
}

std::string advice_for_people(const Advice& advice, const Registry& registry) {
  const bool alone = advice.only_call() != nullptr;
  return advice.render([&](const Call& call) {
    const OperationSpec* spec = called_operation(call, registry);
    // An operation this ct does not have (a release build; tests stop at the check): its name and params.
    if (spec == nullptr) return call.operation + (call.params.is_null() ? "" : " " + call.params.dump());
    std::string command = command_line(*spec, call.params.is_object() ? call.params : json::Value::object());
    return alone ? command : "`" + command + "`";
  });
}

}  // namespace ct::cli
