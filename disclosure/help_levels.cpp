#include "disclosure/help_levels.h"

#include <algorithm>
#include <array>
#include <set>

#include "core/json_parse.h"
#include "core/sha256.h"
#include "core/stored_text.h"
#include "core/text.h"
#include "disclosure/cli_syntax.h"
#include "disclosure/prompts.h"
#include "disclosure/resources.h"
#include "domains/original_names.h"
#include "engines/project/config.h"

namespace ct::disclosure {
namespace {

/// Example params as compact JSON (normalised, so spacing in a spec never shows).
std::string compact_params(std::string_view params_json) {
  auto parsed = json::parse(params_json);
  return parsed ? parsed->dump() : std::string(params_json);
}

/// The example a short text should show: the one with the fewest characters.
const Example* shortest_example(const OperationSpec& spec) {
  const Example* best = nullptr;
  for (const auto& example : spec.examples)
    if (!best || example.params_json.size() < best->params_json.size()) best = &example;
  return best;
}

Result<const OperationSpec*> named_operation(const Registry& registry, std::string_view full_name) {
  std::size_t dot = full_name.find('.');
  const OperationSpec* spec =
      dot == std::string_view::npos ? nullptr : registry.find(full_name.substr(0, dot), full_name.substr(dot + 1));
  if (!spec) return fail(ErrorCode::InvalidOperation, "no operation '" + std::string(full_name) + "' is registered");
  return spec;
}

Result<const Example*> nth_example(const OperationSpec& spec, const std::vector<std::string>& args) {
  std::size_t index = 1;
  if (args.size() > 1) {
    index = 0;
    for (char c : args[1]) index = c >= '0' && c <= '9' ? index * 10 + static_cast<std::size_t>(c - '0') : 1000;
  }
  if (index == 0 || index > spec.examples.size())
    return fail(ErrorCode::InvalidInput, spec.full_name() + " has no example " + (args.size() > 1 ? args[1] : "1"));
  return &spec.examples[index - 1];
}

/// The params of a system.help call: {"level":N,"domain":…,"operation":…}.
std::string help_params(const std::vector<std::string>& args) {
  json::Value params = json::Value::object();
  if (!args.empty()) params.set("level", static_cast<std::int64_t>(std::stoi(args[0])));
  if (args.size() > 1) params.set("domain", args[1]);
  if (args.size() > 2) params.set("operation", args[2]);
  return params.dump();
}

std::string error_label(ErrorCode code) {
  return std::string(to_string(code)) + " (exit " + std::to_string(exit_code(code)) + ")";
}

/// The codes worth a row in the exit-code table: every code an operation declares, the router's
/// and gateway's codes (identity 200+), the notes, and every retryable code.
std::vector<const ErrorInfo*> relevant_codes(const Registry& registry) {
  std::set<ErrorCode> wanted = {ErrorCode::NotFound, ErrorCode::InvalidInput};
  for (const auto& spec : registry.operations()) wanted.insert(spec.errors.begin(), spec.errors.end());
  std::vector<const ErrorInfo*> out;
  for (const auto& info : error_table()) {
    int identity = static_cast<int>(info.code);
    if (wanted.contains(info.code) || identity >= 200 || is_success_note(info.code) || info.retryable)
      out.push_back(&info);
  }
  std::stable_sort(out.begin(), out.end(), [](const auto* a, const auto* b) { return a->exit_code < b->exit_code; });
  return out;
}

std::string exit_code_table(const Registry& registry) {
  // One line per code, "E_NOT_FOUND 4: resource not found": a third fewer tokens than a table.
  std::string out = "(success) 0\n";
  for (const auto* info : relevant_codes(registry)) {
    out += std::string(info->name) + " " + std::to_string(info->exit_code) + ": " + std::string(info->summary);
    if (info->retryable) out += " (retry)";
    out += "\n";
  }
  return out;
}

/// Every operation by domain and gateway. `brief` (level 1 of all domains, which must stay small
/// however many operations there are): advanced operations (tier 2) are named on one `also:` line
/// without their summaries — level 1 of their domain has them; a domain with only advanced
/// operations is one line, its reads then its writes.
std::string operation_index(const Registry& registry, std::string_view only_domain, bool brief) {
  std::string out;
  for (const auto& domain : registry.domains()) {
    if (!only_domain.empty() && domain != only_domain) continue;
    if (brief && std::none_of(registry.operations().begin(), registry.operations().end(), [&](const OperationSpec& spec) {
          return spec.domain == domain && spec.tier < 2;
        })) {
      std::string line = domain + ":";
      for (Gateway gateway : {Gateway::Query, Gateway::Mutate}) {
        std::vector<std::string> names;
        for (const auto& spec : registry.operations())
          if (spec.domain == domain && spec.gateway == gateway) names.emplace_back(spec.name);
        if (!names.empty()) line += " " + join(names, ", ") + " (" + std::string(tool_name(gateway)) + ");";
      }
      line.back() = '\n';
      out += line;
      continue;
    }
    for (Gateway gateway : {Gateway::Query, Gateway::Mutate}) {
      std::string lines;
      std::vector<std::string> also;
      for (const auto& spec : registry.operations()) {
        if (spec.domain != domain || spec.gateway != gateway) continue;
        if (brief && spec.tier >= 2) also.emplace_back(spec.name);
        else lines += "- " + std::string(spec.name) + ": " + std::string(spec.summary) + "\n";
      }
      if (!also.empty()) lines += "- also: " + join(also, ", ") + "\n";
      if (!lines.empty()) out += domain + " (" + std::string(tool_name(gateway)) + "):\n" + lines;
    }
  }
  return out;
}

std::string with_param(const Registry& registry, std::string_view param) {
  std::vector<std::string> names;
  for (const auto& spec : registry.operations())
    if (spec.find_param(param)) names.push_back(spec.full_name());
  return join(names, ", ");
}

/// One line per named operation with its shortest example.
Result<std::string> quick_reference(const Registry& registry, const std::vector<std::string>& names) {
  std::string out;
  for (const auto& name : names) {
    CT_TRY_ASSIGN(const OperationSpec* spec, named_operation(registry, name));
    const Example* example = shortest_example(*spec);
    out += "- " + short_call(*spec, example ? example->params_json : "{}") + "\n";
  }
  if (!out.empty()) out.pop_back();  // the template decides what follows
  return out;
}

Result<std::string> registry_fact(const Registry& registry, std::string_view name, const std::vector<std::string>& args,
                                  const Resolver& extra, int depth);

Resolver registry_resolver(const Registry& registry, const Resolver& extra, int depth) {
  return [&registry, extra, depth](std::string_view name, const std::vector<std::string>& args) -> Result<std::string> {
    return registry_fact(registry, name, args, extra, depth);
  };
}

Result<std::string> render_at(const Registry& registry, std::string_view template_name, const Resolver& extra, int depth) {
  if (depth > 4) return fail(ErrorCode::Internal, "templates include each other too deeply");
  CT_TRY_ASSIGN(std::string_view text, template_text(template_name));
  return expand(text, template_name, registry_resolver(registry, extra, depth));
}

Result<std::string> registry_fact(const Registry& registry, std::string_view name, const std::vector<std::string>& args,
                                  const Resolver& extra, int depth) {
  if (extra) {
    auto value = extra(name, args);
    if (value || value.error().code != ErrorCode::NotFound) return value;
  }
  auto need = [&](std::size_t count) -> Result<void> {
    if (args.size() < count)
      return fail(ErrorCode::InvalidInput, "needs " + std::to_string(count) + " argument(s)");
    return {};
  };
  if (name == "domains") return join(registry.domains(), ", ");
  if (name == "stored_data_note") return std::string(kStoredDataNote);  // before stored text (core/stored_text.h)
  if (name == "prompts") {  // the MCP prompts' names (disclosure/prompts.h)
    std::vector<std::string> names;
    for (const auto& prompt : prompt_catalog()) names.emplace_back(prompt.name);
    return join(names, ", ");
  }
  if (name == "resources") {  // the MCP resource templates (disclosure/resources.h)
    std::vector<std::string> templates;
    for (const auto& resource : resource_templates())
      if (resource.subscribable || resource.name == "briefing") templates.emplace_back(resource.uri_template);
    return join(templates, ", ");
  }
  if (name == "quick_reference") {
    CT_TRY(need(1));
    return quick_reference(registry, args);
  }
  if (name == "operation_index") return operation_index(registry, "", /*brief=*/true);
  if (name == "exit_codes") return exit_code_table(registry);
  if (name == "include") {
    CT_TRY(need(1));
    return render_at(registry, args[0], extra, depth + 1);
  }
  if (name == "level0") return level0(registry);
  if (name == "level1") return level1(registry);
  if (name == "level3") return level3(registry);
  if (name == "call" || name == "cli") {
    CT_TRY(need(1));
    CT_TRY_ASSIGN(const OperationSpec* spec, named_operation(registry, args[0]));
    CT_TRY_ASSIGN(const Example* example, nth_example(*spec, args));
    if (name == "call") return short_call(*spec, example->params_json);
    auto params = json::parse(example->params_json);
    return command_line(*spec, params ? *params : json::Value::object());
  }
  if (name == "op") {  // the bare name, checked: {{op tasks.next}} → tasks.next
    CT_TRY(need(1));
    CT_TRY_ASSIGN(const OperationSpec* spec, named_operation(registry, args[0]));
    return spec->full_name();
  }
  if (name == "help_params") {
    CT_TRY(need(1));
    for (char c : args[0])
      if (c < '0' || c > '9') return fail(ErrorCode::InvalidInput, "the level must be a number");
    return help_params(args);
  }
  if (name == "help" || name == "cli_help") {
    CT_TRY(need(1));
    const OperationSpec* help = registry.find("system", "help");
    if (!help) return fail(ErrorCode::InvalidOperation, "system.help is not registered");
    for (char c : args[0])
      if (c < '0' || c > '9') return fail(ErrorCode::InvalidInput, "the level must be a number");
    std::string params = help_params(args);
    if (name == "help") return short_call(*help, params);
    auto parsed = json::parse(params);
    return command_line(*help, *parsed);
  }
  if (name == "error") {
    CT_TRY(need(1));
    auto code = parse_error_code(args[0]);
    if (!code) return fail(ErrorCode::InvalidInput, "no error code " + args[0]);
    return error_label(*code);
  }
  if (name == "with_param") {
    CT_TRY(need(1));
    std::string list = with_param(registry, args[0]);
    if (list.empty()) return fail(ErrorCode::InvalidInput, "no operation has a param '" + args[0] + "'");
    return list;
  }
  if (name == "choices") {
    CT_TRY(need(2));
    CT_TRY_ASSIGN(const OperationSpec* spec, named_operation(registry, args[0]));
    const ParamSpec* param = spec->find_param(args[1]);
    if (!param || param->choices.empty())
      return fail(ErrorCode::InvalidInput, spec->full_name() + " has no param '" + args[1] + "' with choices");
    std::vector<std::string> choices(param->choices.begin(), param->choices.end());
    return join(choices, "|");
  }
  if (name == "param") {  // a param's description: {{param session.start scope}}
    CT_TRY(need(2));
    CT_TRY_ASSIGN(const OperationSpec* spec, named_operation(registry, args[0]));
    const ParamSpec* param = spec->find_param(args[1]);
    if (!param) return fail(ErrorCode::InvalidInput, spec->full_name() + " has no param '" + args[1] + "'");
    return std::string(param->description);
  }
  if (name == "config") {
    CT_TRY(need(1));
    const ConfigKey* key = find_config_key(args[0]);
    if (!key) return fail(ErrorCode::InvalidInput, "no config key " + args[0]);
    auto value = json::parse(key->default_json);
    return std::string(args[0]) + " (default " + (value && value->is_string() ? value->as_string() : std::string(key->default_json)) + ")";
  }
  return fail(ErrorCode::NotFound, "unknown placeholder");
}

// ---- level 2 ----------------------------------------------------------------------------------

std::string type_text(const ParamSpec& param) {
  std::vector<std::string> facts;
  switch (param.type) {
    case ParamType::String:
      facts.emplace_back("string");
      if (auto r = range_text(param, " chars"); !r.empty()) facts.push_back(r);
      if (!param.pattern.empty()) facts.push_back("matching " + std::string(param.pattern));
      break;
    case ParamType::Int:
      facts.emplace_back("integer");
      if (!param.choices.empty()) facts.push_back(choices_text(param));
      else if (auto r = range_text(param); !r.empty()) facts.push_back(r);
      break;
    case ParamType::Bool: facts.emplace_back("boolean"); break;
    case ParamType::Enum: facts.push_back(choices_text(param)); break;
    case ParamType::TaskId: facts.emplace_back("task id, e.g. T001"); break;
    case ParamType::Object: facts.emplace_back("JSON value"); break;
    case ParamType::Scalar: facts.emplace_back("string, number or boolean"); break;
    case ParamType::Array: {
      std::string items = param.item_type == ParamType::TaskId ? "task ids"
                          : param.item_type == ParamType::Enum  ? choices_text(param)
                                                                : "strings";
      if (auto each = bounds_text(kUnbounded, param.item_max, " chars"); !each.empty()) items += " " + each;
      facts.push_back("array of " + items);
      if (param.item_type == ParamType::String && !param.pattern.empty())
        facts.push_back("each matching " + std::string(param.pattern));
      if (auto r = range_text(param, " items"); !r.empty()) facts.push_back(r);
      break;
    }
  }
  if (param.required) facts.emplace_back("required");
  if (!param.default_json.empty()) facts.push_back("default " + std::string(param.default_json));
  return join(facts, ", ");
}

std::string params_text(const OperationSpec& spec) {
  if (spec.params.empty()) return "Params: none.\n";
  std::string out = "Params:\n";
  for (const auto& param : spec.params)
    out += "- " + std::string(param.name) + " (" + type_text(param) + "): " + std::string(param.description) + "\n";
  return out;
}

std::string errors_text(const OperationSpec& spec) {
  std::string out;
  if (!spec.errors.empty()) {
    out += "Errors:";
    for (std::size_t i = 0; i < spec.errors.size(); ++i)
      out += std::string(i ? ";" : "") + " " + error_label(spec.errors[i]) + " " +
             std::string(error_info(spec.errors[i]).summary);
    out += ".\n\n";
  }
  // What the router may answer for any call of this operation (E_INVALID_PARAMS when the params do
  // not fit the spec, E_VALIDATION when a value breaks its param's rule: domains/params.h), less
  // what the list above names already.
  std::vector<std::string> labels;
  for (auto code : spec.router_errors())
    if (std::find(spec.errors.begin(), spec.errors.end(), code) == spec.errors.end()) labels.push_back(error_label(code));
  // An operation whose own list names every one of them (the ops of a batch or plan) says nothing more.
  if (!labels.empty()) out += "Any call may also fail with: " + join(labels, ", ") + ".\n";
  else if (!out.empty()) out.resize(out.size() - 1);  // no blank line after the list then
  return out;
}

std::string traits_text(const OperationSpec& spec) {
  std::vector<std::string> traits;
  if (spec.idempotent) traits.emplace_back("idempotent (safe to repeat)");
  if (spec.destructive) traits.emplace_back("destructive");
  if (spec.needs_session) traits.emplace_back("needs a session under strict session.enforcement (the one bound, or sessionId)");
  if (!spec.needs_project) traits.emplace_back("works without a project");
  for (const auto& param : spec.params)
    if (param.dry_run) traits.push_back("with " + std::string(param.name) + " it writes nothing and runs in read-only mode too");
  if (spec.runs_long)
    traits.emplace_back("long-running: an MCP client that takes tasks gets a task to poll (tasks/get) instead of waiting");
  if (spec.gateway == Gateway::Mutate)
    traits.emplace_back("accepts reason (kept in the audit trail) and idempotencyKey (a repeat within 24 h returns the first reply); "
                        "data leaves out what the call sent (its id, a value set as given)");
  // Its names in the original CLEO: an agent trained on them learns ours here (levels 0 and 1 never
  // name them).
  std::vector<std::string> originals(spec.original_names.begin(), spec.original_names.end());
  for (const auto* param : original_names::params_of(spec))
    originals.push_back(std::string(param->original) + " for " + std::string(param->ours));
  if (!originals.empty()) traits.push_back("original CLEO names (accepted, with a warning): " + join(originals, ", "));
  if (traits.empty()) return "";
  return "Notes: " + join(traits, "; ") + ".\n\n";
}

std::string examples_text(const OperationSpec& spec) {
  std::string out = spec.examples.size() == 1 ? "Example" : "Examples";
  out += " (the reply is {\"success\":true,\"data\":…} with data as above):\n";
  for (const auto& example : spec.examples) {
    out += "- ";
    if (!example.description.empty()) out += std::string(example.description) + ": ";
    out += short_call(spec, example.params_json) + "\n";
    auto params = json::parse(example.params_json);
    out += "  CLI: " + command_line(spec, params ? *params : json::Value::object()) + "\n";
  }
  return out;
}

Resolver operation_resolver(const OperationSpec& spec) {
  return [&spec](std::string_view name, const std::vector<std::string>&) -> Result<std::string> {
    if (name == "op_name") return spec.full_name();
    if (name == "op_tool") return std::string(tool_name(spec.gateway));
    if (name == "op_summary") return std::string(spec.summary);
    if (name == "op_params") return params_text(spec);
    if (name == "op_returns") return std::string(spec.returns);
    if (name == "op_errors") return errors_text(spec);
    if (name == "op_notes") return traits_text(spec);
    if (name == "op_examples") return examples_text(spec);
    return fail(ErrorCode::NotFound, "not an operation placeholder");
  };
}

json::Value param_schema(const ParamSpec& param) {
  json::Value out = json::Value::object();
  auto string_schema = [](json::Value& schema, const ParamSpec& p, bool item) {
    schema.set("type", "string");
    if (!item && p.min != kUnbounded) schema.set("minLength", p.min);
    if (!item && p.max != kUnbounded) schema.set("maxLength", p.max);
    if (item && p.item_max != kUnbounded) schema.set("maxLength", p.item_max);
    if (!p.pattern.empty()) schema.set("pattern", std::string(p.pattern));
  };
  auto enum_values = [&]() {
    json::Value values = json::Value::array();
    for (auto choice : param.choices) values.push_back(std::string(choice));
    return values;
  };
  constexpr std::string_view kTaskIdPattern = "^[Tt]?[0-9]{1,18}$";
  switch (param.type) {
    case ParamType::String: string_schema(out, param, false); break;
    case ParamType::Int:
      out.set("type", "integer");
      if (!param.choices.empty()) {
        json::Value values = json::Value::array();
        for (auto choice : param.choices) values.push_back(static_cast<std::int64_t>(std::stoll(std::string(choice))));
        out.set("enum", std::move(values));
      }
      if (param.min != kUnbounded) out.set("minimum", param.min);
      if (param.max != kUnbounded) out.set("maximum", param.max);
      break;
    case ParamType::Bool: out.set("type", "boolean"); break;
    case ParamType::Enum:
      out.set("type", "string");
      out.set("enum", enum_values());
      break;
    case ParamType::TaskId:
      out.set("type", "string");
      out.set("pattern", kTaskIdPattern);
      break;
    case ParamType::Object: break;  // any JSON value; the operation checks its shape
    case ParamType::Scalar: out.set("type", json::Value::array_of(std::array<std::string_view, 3>{"string", "number", "boolean"})); break;
    case ParamType::Array: {
      out.set("type", "array");
      json::Value items = json::Value::object();
      if (param.item_type == ParamType::TaskId) {
        items.set("type", "string");
        items.set("pattern", kTaskIdPattern);
      } else if (param.item_type == ParamType::Enum) {
        items.set("type", "string");
        items.set("enum", enum_values());
      } else {
        string_schema(items, param, true);
      }
      out.set("items", std::move(items));
      if (param.min != kUnbounded) out.set("minItems", param.min);
      if (param.max != kUnbounded) out.set("maxItems", param.max);
      break;
    }
  }
  if (!param.default_json.empty())
    if (auto value = json::parse(param.default_json)) out.set("default", *value);
  out.set("description", std::string(param.description));
  return out;
}

}  // namespace

std::string bounds_text(std::int64_t min, std::int64_t max, std::string_view unit) {
  bool has_min = min != kUnbounded, has_max = max != kUnbounded;
  if (has_min && has_max) return std::to_string(min) + "–" + std::to_string(max) + std::string(unit);
  if (has_min) return "≥ " + std::to_string(min) + std::string(unit);
  if (has_max) return "≤ " + std::to_string(max) + std::string(unit);
  return "";
}

std::string range_text(const ParamSpec& param, std::string_view unit) { return bounds_text(param.min, param.max, unit); }

std::string choices_text(const ParamSpec& param) {
  return join(std::vector<std::string>(param.choices.begin(), param.choices.end()), "|");
}

std::string content_hash(std::string_view text) { return sha256_hex(text); }

std::string short_call(const OperationSpec& spec, std::string_view params_json) {
  return std::string(tool_name(spec.gateway)) + " " + spec.full_name() + " " + compact_params(params_json);
}

Result<std::string> render(const Registry& registry, std::string_view template_name, const Resolver& extra) {
  return render_at(registry, template_name, extra, 0);
}

Result<std::string> resolve_placeholder(const Registry& registry, std::string_view name,
                                        const std::vector<std::string>& args) {
  return registry_fact(registry, name, args, {}, 0);
}

Result<std::string> level0(const Registry& registry) { return render(registry, "help/level0.md"); }

Result<std::string> level1(const Registry& registry, std::string_view domain) {
  if (domain.empty()) return render(registry, "help/level1.md");
  std::string only(domain);
  return render(registry, "help/level1-domain.md",
                [&registry, only](std::string_view name, const std::vector<std::string>&) -> Result<std::string> {
                  if (name == "domain") return only;
                  if (name == "domain_index") return operation_index(registry, only, /*brief=*/false);
                  return fail(ErrorCode::NotFound, "");
                });
}

Result<std::string> level2(const Registry& registry, const OperationSpec& spec) {
  return render(registry, "help/level2.md", operation_resolver(spec));
}

json::Value params_schema(const OperationSpec& spec) {
  json::Value schema = json::Value::object();
  schema.set("$schema", "https://json-schema.org/draft/2020-12/schema");
  schema.set("title", spec.full_name());
  schema.set("description", std::string(spec.summary));
  schema.set("type", "object");
  json::Value properties = json::Value::object();
  json::Value required = json::Value::array();
  for (const auto& param : spec.params) {
    properties.set(param.name, param_schema(param));
    if (param.required) required.push_back(std::string(param.name));
  }
  schema.set("properties", std::move(properties));
  if (!required.empty()) schema.set("required", std::move(required));
  schema.set("additionalProperties", false);
  return schema;
}

Result<std::string> level3(const Registry& registry) { return render(registry, "help/level3.md"); }

Result<std::string> operations_reference(const Registry& registry) {
  std::string body;
  for (const auto& domain : registry.domains()) {
    body += "\n# " + domain + "\n";
    for (const auto& spec : registry.operations()) {
      if (spec.domain != domain) continue;
      CT_TRY_ASSIGN(std::string text, level2(registry, spec));
      body += "\n" + text;
      while (body.ends_with("\n\n")) body.pop_back();
    }
  }
  const Resolver extra = [&body](std::string_view name, const std::vector<std::string>&) -> Result<std::string> {
    if (name == "reference") return body;
    return fail(ErrorCode::NotFound, "");
  };
  return render(registry, "docs/operations.md", extra);
}

Result<HelpTarget> resolve_help_target(const Registry& registry, std::string_view domain, std::string_view operation) {
  std::vector<std::string> domains = registry.domains();
  auto is_domain = [&](std::string_view name) { return std::find(domains.begin(), domains.end(), name) != domains.end(); };
  auto help_fix = [&](const std::string& params) {
    const OperationSpec* help = registry.find("system", "help");
    return help ? help->call_with(params) : Advice();
  };
  auto unknown_operation = [&](const std::string& in_domain, std::string_view name) {
    Error error = Error(ErrorCode::InvalidOperation, "unknown operation '" + in_domain + "." + std::string(name) + "'")
                      .with_detail("field", "operation")
                      .with_choices(name, registry.operation_names(in_domain));
    const json::Value& guess = error.details["didYouMean"];
    error.fix = guess.is_string() ? help_fix(R"({"level":2,"domain":")" + in_domain + R"(","operation":")" +
                                             guess.as_string() + "\"}")
                                  : help_fix(R"({"level":1,"domain":")" + in_domain + "\"}");
    return error;
  };
  // "tasks.add" or a name only one domain has ("add").
  auto by_name = [&](std::string_view name) -> Result<HelpTarget> {
    std::size_t dot = name.find('.');
    if (dot != std::string_view::npos && is_domain(name.substr(0, dot))) {
      std::string in_domain(name.substr(0, dot));
      if (const OperationSpec* spec = registry.find(in_domain, name.substr(dot + 1))) return HelpTarget{in_domain, spec};
      if (const OperationSpec* spec = registry.find_original(in_domain, name.substr(dot + 1)))
        return HelpTarget{std::string(spec->domain), spec};
      return fail(unknown_operation(in_domain, name.substr(dot + 1)));
    }
    std::vector<const OperationSpec*> matches;
    std::vector<std::string> all;
    for (const auto& spec : registry.operations()) {
      if (spec.name == name) matches.push_back(&spec);
      all.push_back(spec.full_name());
    }
    if (matches.size() == 1) return HelpTarget{std::string(matches.front()->domain), matches.front()};
    // The operation whose CLI verb the name is (`ct update` is tasks.update) wins over its namesakes.
    auto verb = std::find_if(matches.begin(), matches.end(), [&](const OperationSpec* spec) { return spec->shortcut == name; });
    if (verb != matches.end()) return HelpTarget{std::string((*verb)->domain), *verb};
    if (matches.size() > 1) {
      std::vector<std::string> names;
      for (const auto* spec : matches) names.push_back(spec->full_name());
      Error error(ErrorCode::InvalidOperation, "'" + std::string(name) + "' is an operation of several domains: " +
                                                   join(names, ", "));
      error.fix = help_fix(R"({"level":2,"domain":")" + std::string(matches.front()->domain) + R"(","operation":")" +
                           std::string(name) + "\"}");
      return fail(std::move(error).with_detail("field", "operation").with_detail("valid", json::Value::array_of(names)));
    }
    Error error = Error(ErrorCode::InvalidOperation, "unknown operation '" + std::string(name) + "'")
                      .with_detail("field", "operation")
                      .with_choices(name, all);
    error.fix = help_fix(R"({"level":1})");
    return fail(std::move(error));
  };

  if (!domain.empty()) {
    if (!is_domain(domain)) {
      std::vector<std::string> choices = domains;
      if (operation.empty()) {
        // `ct help add`: a word that is no domain may name an operation.
        auto target = by_name(domain);
        if (target || std::any_of(registry.operations().begin(), registry.operations().end(),
                                  [&](const auto& spec) { return spec.name == domain; }))
          return target;
        for (const auto& spec : registry.operations())
          if (std::find(choices.begin(), choices.end(), spec.name) == choices.end()) choices.emplace_back(spec.name);
      }
      std::string message = "unknown domain" + std::string(operation.empty() ? " or operation" : "") + " '" +
                             std::string(domain) + "'";
      Error error = Error(ErrorCode::InvalidDomain, std::move(message))
                        .with_detail("field", "domain")
                        .with_choices(domain, choices);
      const json::Value& guess = error.details["didYouMean"];
      if (!guess.is_string()) {
        error.fix = help_fix(R"({"level":1})");
      } else if (is_domain(guess.as_string())) {
        error.fix = help_fix(R"({"level":1,"domain":")" + guess.as_string() + "\"}");
      } else {
        auto spec = std::find_if(registry.operations().begin(), registry.operations().end(),
                                 [&](const auto& s) { return s.name == guess.as_string(); });
        error.fix = help_fix(R"({"level":2,"domain":")" + std::string(spec->domain) + R"(","operation":")" +
                             guess.as_string() + "\"}");
      }
      return fail(std::move(error));
    }
    if (operation.empty()) return HelpTarget{std::string(domain), nullptr};
    if (const OperationSpec* spec = registry.find(domain, operation)) return HelpTarget{std::string(domain), spec};
    // The original CLEO's name of an operation: its help (which names ours).
    if (const OperationSpec* spec = registry.find_original(domain, operation))
      return HelpTarget{std::string(spec->domain), spec};
    return fail(unknown_operation(std::string(domain), operation));
  }
  if (!operation.empty()) return by_name(operation);
  return HelpTarget{};
}

}  // namespace ct::disclosure
