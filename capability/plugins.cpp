#include "capability/plugins.h"

#include <algorithm>
#include <expected>
#include <mutex>

#include "core/json_parse.h"
#include "core/pattern.h"
#include "core/text.h"
#include "domains/context.h"
#include "domains/params.h"
#include "engines/project/config.h"
#include "engines/project/project.h"
#include "engines/adapters/subprocess.h"

namespace ct::capability {
namespace {

constexpr std::int64_t kDefaultTimeoutSeconds = 60;
constexpr std::size_t kMaxPluginOutput = 4 * 1024 * 1024;

/// The errors a plug-in may report as themselves; any other code becomes E_ENGINE_FAILED.
const std::vector<ErrorCode> kPluginErrors = {ErrorCode::EngineFailed, ErrorCode::Timeout, ErrorCode::CapabilityUnavailable, ErrorCode::NotFound,
                                              ErrorCode::InvalidInput, ErrorCode::Validation};

std::optional<ParamType> param_type(std::string_view name) {
  for (ParamType type : {ParamType::String, ParamType::Int, ParamType::Bool, ParamType::Enum, ParamType::Array,
                         ParamType::Object, ParamType::TaskId, ParamType::Scalar})
    if (to_string(type) == name) return type;
  return std::nullopt;
}

/// A name of config.json's own: a lower-case letter, then at most `rest` characters `allowed`
/// takes. (Checked by hand, not by a regular expression: the text is whatever config.json holds.)
bool is_name(std::string_view text, std::size_t rest, bool (*allowed)(char)) {
  if (text.empty() || text.size() > rest + 1 || text[0] < 'a' || text[0] > 'z') return false;
  return std::all_of(text.begin() + 1, text.end(), allowed);
}
bool is_alnum(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'); }
bool is_lower_alnum_or_dash(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-'; }
bool is_alnum_or_dot(char c) { return is_alnum(c) || c == '.'; }

std::string param_type_names() {
  return "string, integer, boolean, enum, array, object, taskId or scalar";
}

/// One param declared in the registry's terms: {name, type, required?, default?, min?, max?,
/// pattern?, choices?, items?, description?, positional?, dryRun?}.
Result<ParamSpec> read_param(Registry& registry, const json::Value& value) {
  if (!value.is_object()) return fail(ErrorCode::ConfigError, "each param must be an object");
  ParamSpec param;
  const json::Value& name = value["name"];
  if (!name.is_string() || !is_name(name.as_string(), 39, is_alnum))
    return fail(ErrorCode::ConfigError, "a param needs a name in camelCase (letters and digits, at most 40)");
  param.name = registry.own(name.as_string());
  std::string where = "param '" + name.as_string() + "'";
  auto type = value["type"].is_string() ? param_type(value["type"].as_string()) : std::nullopt;
  if (!type) return fail(ErrorCode::ConfigError, where + ": type must be one of " + param_type_names());
  param.type = *type;
  static const std::vector<std::string_view> kKnown = {"name", "type", "required", "default", "min", "max",
                                                       "pattern", "choices", "items", "description", "positional",
                                                       "dryRun"};
  for (const auto& member : value.as_object())
    if (std::find(kKnown.begin(), kKnown.end(), member.first) == kKnown.end())
      return fail(ErrorCode::ConfigError, where + ": unknown field '" + member.first + "'");
  auto flag = [&](std::string_view key) -> Result<bool> {
    const json::Value& v = value[key];
    if (v.is_null()) return false;
    if (!v.is_bool()) return fail(ErrorCode::ConfigError, where + ": " + std::string(key) + " must be true or false");
    return v.as_bool();
  };
  CT_TRY_ASSIGN(param.required, flag("required"));
  CT_TRY_ASSIGN(param.positional, flag("positional"));
  CT_TRY_ASSIGN(param.dry_run, flag("dryRun"));
  if (param.dry_run && param.type != ParamType::Bool)
    return fail(ErrorCode::ConfigError, where + ": only a boolean param can be dryRun");
  for (const char* bound : {"min", "max"}) {
    const json::Value& v = value[bound];
    if (v.is_null()) continue;
    if (!v.is_int()) return fail(ErrorCode::ConfigError, where + ": " + bound + " must be an integer");
    (std::string_view(bound) == "min" ? param.min : param.max) = v.as_int();
  }
  if (const json::Value& v = value["default"]; !v.is_null()) param.default_json = registry.own(v.dump());
  if (const json::Value& v = value["description"]; !v.is_null()) {
    if (!v.is_string() || utf8_length(v.as_string()) > 200)
      return fail(ErrorCode::ConfigError, where + ": description must be a string of at most 200 characters");
    param.description = registry.own(v.as_string());
  }
  if (const json::Value& v = value["pattern"]; !v.is_null()) {
    if (!v.is_string()) return fail(ErrorCode::ConfigError, where + ": pattern must be a string");
    // RE2 (core/pattern.h): a pattern matches in linear time, so none can stall a worker; what
    // RE2 cannot run in linear time (backreferences, lookaround) is refused here, by name.
    if (auto compiled = Pattern::compile(v.as_string()); !compiled)
      return fail(ErrorCode::ConfigError, where + ": pattern is not a regular expression RE2 accepts (" +
                                              compiled.error() + "; no backreferences or lookaround)");
    param.pattern = registry.own(v.as_string());
  }
  if (const json::Value& v = value["choices"]; !v.is_null()) {
    if (!v.is_array() || v.as_array().empty())
      return fail(ErrorCode::ConfigError, where + ": choices must be a non-empty array of strings");
    for (const auto& choice : v.as_array()) {
      if (!choice.is_string()) return fail(ErrorCode::ConfigError, where + ": choices must be strings");
      param.choices.push_back(registry.own(choice.as_string()));
    }
  }
  if (param.type == ParamType::Enum && param.choices.empty())
    return fail(ErrorCode::ConfigError, where + ": an enum needs choices");
  if (const json::Value& v = value["items"]; !v.is_null()) {
    auto item = v.is_string() ? param_type(v.as_string()) : std::nullopt;
    if (param.type != ParamType::Array || !item ||
        (*item != ParamType::String && *item != ParamType::TaskId && *item != ParamType::Enum))
      return fail(ErrorCode::ConfigError, where + ": items (string, taskId or enum) only applies to an array");
    param.item_type = *item;
  }
  return param;
}

/// Runs the plug-in for `operation` ("domain.name") and checks the envelope it writes.
Handler plugin_handler(std::string operation, std::vector<std::string> command, std::int64_t timeout_seconds) {
  return [operation = std::move(operation), command = std::move(command), timeout_seconds](
             Context& context, const Params& params) -> Result<Reply> {
    const std::filesystem::path root = context.root();
    ProcessSpec process;
    process.argv = command;
    // A relative program path names a file of the project, wherever the server was started.
    if (process.argv[0].find('/') != std::string::npos && std::filesystem::path(process.argv[0]).is_relative())
      process.argv[0] = (root / process.argv[0]).lexically_normal().string();
    process.cwd = root;
    process.env = minimal_environment();
    process.timeout = std::chrono::seconds(timeout_seconds);
    process.max_stdout = kMaxPluginOutput;
    json::Value request = json::Value::object();
    std::size_t dot = operation.find('.');
    request.set("domain", operation.substr(0, dot));
    request.set("operation", operation.substr(dot + 1));
    request.set("params", params.json());
    request.set("project", root.string());
    if (!context.session.empty()) request.set("session", context.session);
    process.stdin_data = request.dump();
    auto ran = run_process(process);
    if (!ran) return std::unexpected(std::move(ran.error()));
    if (!ran->ok()) return fail(process_error(process, *ran, "plug-in " + command[0]));
    if (ran->out_truncated)
      return fail(Error(ErrorCode::EngineFailed, "plug-in " + command[0] + " wrote more than 4 MiB")
                      .with_fix("make the plug-in reply smaller (page its results)"));
    // The spec as registered (its declared errors decide which codes pass through).
    const OperationSpec* spec = context.registry ? context.registry->find(operation.substr(0, dot), operation.substr(dot + 1))
                                                 : nullptr;
    if (!spec) return fail(ErrorCode::Internal, "plug-in " + operation + " is not in the registry");
    return read_plugin_envelope(*spec, ran->out);
  };
}

}  // namespace

Result<Reply> read_plugin_envelope(const OperationSpec& spec, std::string_view out) {
  auto broken = [&](std::string why) {
    return fail(Error(ErrorCode::EngineFailed, "plug-in for " + spec.full_name() + " wrote no valid envelope: " + why)
                    .with_fix("the plug-in must print {\"success\":true,\"data\":…} or {\"success\":false,\"error\":"
                              "{\"code\",\"message\"}} on stdout (capability/plugins.h)")
                    .with_detail("stdout", terminal_safe(out.substr(0, 200))));
  };
  if (trim(out).empty()) return broken("stdout is empty");
  if (!valid_utf8(out)) return broken("stdout is not UTF-8");
  auto parsed = json::parse(out);
  if (!parsed) return broken("stdout is not JSON (" + parsed.error().message + ")");
  if (!parsed->is_object() || !(*parsed)["success"].is_bool()) return broken("no boolean 'success'");
  const json::Value& envelope = *parsed;
  if (!envelope["success"].as_bool()) {
    const json::Value& error = envelope["error"];
    if (!error.is_object() || !error["message"].is_string()) return broken("a failure needs error.message");
    std::optional<ErrorCode> code;
    if (error["code"].is_string()) code = parse_error_code(error["code"].as_string());
    bool declared = code && std::find(spec.errors.begin(), spec.errors.end(), *code) != spec.errors.end();
    Error reported(declared ? *code : ErrorCode::EngineFailed, terminal_safe(error["message"].as_string()));
    if (error["fix"].is_string()) reported.fix = terminal_safe(error["fix"].as_string());
    if (!declared && error["code"].is_string()) reported.details.set("pluginCode", terminal_safe(error["code"].as_string()));
    return fail(std::move(reported));
  }
  if (!envelope.contains("data")) return broken("a success needs data");
  // What the plug-in wrote reaches callers neutralised (core/text.h terminal_safe): an escape
  // sequence, a NUL or a bidirectional override in it is shown ("^[", "<U+202E>"), never passed on
  // to drive the caller's terminal or disguise text. It is not refused: the plug-in's answer is
  // still worth having.
  Reply reply;
  reply.data = envelope["data"];
  make_terminal_safe(reply.data);
  if (const json::Value& warnings = envelope["warnings"]; warnings.is_array())
    for (const auto& warning : warnings.as_array())
      if (warning.is_string()) reply.warnings.push_back(terminal_safe(warning.as_string()));
  return reply;
}

namespace {

/// Why a declaration under `engines` is ignored (the warning's text after its name).
using Skip = std::unexpected<std::string>;

/// `domain.operation` from the declaration's name.
std::expected<std::pair<std::string, std::string>, std::string> plugin_name(const std::string& name) {
  const std::size_t dot = name.find('.');
  std::string domain = name.substr(0, dot), operation = dot == std::string::npos ? "" : name.substr(dot + 1);
  if (!is_name(domain, 29, is_lower_alnum_or_dash) || !is_name(operation, 39, is_alnum_or_dot))
    return Skip("name it domain.operation (lower-case domain, camelCase operation)");
  return std::pair{std::move(domain), std::move(operation)};
}

/// The argv the plug-in runs: a non-empty array of strings, no shell.
std::expected<std::vector<std::string>, std::string> plugin_command(const json::Value& command) {
  const auto refused = Skip("command must be a non-empty array of strings (an argv; no shell runs it)");
  if (!command.is_array() || command.as_array().empty()) return refused;
  std::vector<std::string> argv;
  for (const auto& word : command.as_array()) {
    if (!word.is_string() || word.as_string().empty() || word.as_string().find('\0') != std::string::npos)
      return refused;
    argv.push_back(word.as_string());
  }
  return argv;
}

std::expected<std::int64_t, std::string> plugin_timeout(const json::Value& timeout) {
  if (timeout.is_null()) return kDefaultTimeoutSeconds;
  if (!timeout.is_int() || timeout.as_int() < 1 || timeout.as_int() > 3600)
    return Skip("timeoutSeconds must be an integer from 1 to 3600");
  return timeout.as_int();
}

/// A native operation run by the plug-in: same name, gateway, params and help; another engine.
std::expected<OperationSpec, std::string> replaced_operation(const OperationSpec& native, const json::Value& declaration) {
  if (declaration.contains("params") || declaration.contains("gateway"))
    return Skip("a native operation keeps its own params and gateway; declare only command and timeoutSeconds");
  OperationSpec spec = native;
  for (auto code : kPluginErrors)
    if (std::find(spec.errors.begin(), spec.errors.end(), code) == spec.errors.end()) spec.errors.push_back(code);
  return spec;
}

/// The params a new operation declares, each read by read_param.
std::expected<std::vector<ParamSpec>, std::string> plugin_params(Registry& registry, const json::Value& params) {
  std::vector<ParamSpec> out;
  if (params.is_null()) return out;
  if (!params.is_array()) return Skip("params must be an array of param declarations");
  for (const auto& p : params.as_array()) {
    auto param = read_param(registry, p);
    if (!param) return Skip(param.error().message);
    if (std::any_of(out.begin(), out.end(), [&](const ParamSpec& seen) { return seen.name == param->name; }))
      return Skip("param '" + std::string(param->name) + "' is declared twice");
    out.push_back(*param);
  }
  return out;
}

/// An operation of the plug-in's own: its gateway, summary and params, and an example naming each
/// required param with a value to fill in.
std::expected<OperationSpec, std::string> new_operation(Registry& registry, const std::string& domain,
                                                        const std::string& operation, const json::Value& declaration) {
  OperationSpec spec;
  spec.domain = registry.own(domain);
  spec.name = registry.own(operation);
  const json::Value& gateway = declaration["gateway"];
  if (!gateway.is_string() || (gateway.as_string() != "query" && gateway.as_string() != "mutate"))
    return Skip("a new operation needs gateway \"query\" (reads) or \"mutate\" (changes)");
  spec.gateway = gateway.as_string() == "query" ? Gateway::Query : Gateway::Mutate;
  const json::Value& summary = declaration["summary"];
  if (!summary.is_string() || summary.as_string().empty() || utf8_length(summary.as_string()) > 80 ||
      has_control_characters(summary.as_string(), false))
    return Skip("a new operation needs a summary of one line, at most 80 characters");
  spec.summary = registry.own(summary.as_string());
  spec.returns = "what the plug-in replies";
  spec.errors = kPluginErrors;
  auto params = plugin_params(registry, declaration["params"]);
  if (!params) return Skip(std::move(params.error()));
  spec.params = std::move(*params);
  json::Value example = json::Value::object();
  for (const auto& param : spec.params)
    if (param.required) example.set(param.name, "…");
  spec.examples = {{registry.own(example.dump()), example.empty() ? "with the defaults" : "fill in the required params"}};
  spec.tier = 1;
  return spec;
}

/// The operation one declaration under `engines` makes, added to `registry`; why not, else.
std::expected<void, std::string> add_plugin_operation(Registry& registry, const std::string& name,
                                                      const json::Value& declaration) {
  auto names = plugin_name(name);
  if (!names) return Skip(std::move(names.error()));
  if (!declaration.is_object()) return Skip("the declaration must be an object");
  auto argv = plugin_command(declaration["command"]);
  if (!argv) return Skip(std::move(argv.error()));
  auto timeout = plugin_timeout(declaration["timeoutSeconds"]);
  if (!timeout) return Skip(std::move(timeout.error()));
  const auto& [domain, operation] = *names;
  const OperationSpec* native = registry.find(domain, operation);
  auto spec = native ? replaced_operation(*native, declaration) : new_operation(registry, domain, operation, declaration);
  if (!spec) return Skip(std::move(spec.error()));
  spec->engine = EngineKind::Subprocess;
  spec->shortcut = {};
  // A program named without a path must be on PATH: the capability matrix says so before a call.
  spec->needs.clear();
  if ((*argv)[0].find('/') == std::string::npos) spec->needs.push_back(registry.own("program:" + (*argv)[0]));
  // The plug-in is the call's reply: no native handler runs after it.
  spec->handler = nullptr;
  spec->external = plugin_handler(spec->full_name(), std::move(*argv), *timeout);
  registry.add_plugin(std::move(*spec));
  return {};
}

}  // namespace

PluginRegistry with_plugins(const Registry& base, const json::Value& engines) {
  PluginRegistry out{base, {}};
  if (!engines.is_object()) return out;
  static const std::vector<std::string_view> kKnown = {"command", "gateway", "summary", "params", "timeoutSeconds"};
  for (const auto& [name, declaration] : engines.as_object()) {
    if (auto added = add_plugin_operation(out.registry, name, declaration); !added) {
      out.warnings.push_back("engines." + clip(name, kEchoChars) + " ignored: " + added.error());
      continue;
    }
    for (const auto& member : declaration.as_object())
      if (std::find(kKnown.begin(), kKnown.end(), member.first) == kKnown.end())
        out.warnings.push_back("engines." + name + "." + member.first + " is not a known field (ignored)");
  }
  return out;
}

const Registry& project_registry(const Registry& base, Workspace& workspace, std::vector<std::string>* warnings) {
  static std::once_flag once;
  static const Registry* loaded = &base;
  static std::vector<std::string> found_warnings;
  std::call_once(once, [&] {
    auto state = workspace.state(/*opening=*/true);
    if (!state) return;  // no project; or the router reports a broken config on the first call
    const json::Value& engines = state->config->get("engines");
    if (!engines.is_object() || engines.as_object().empty()) return;
    static PluginRegistry plugins = with_plugins(base, engines);
    loaded = &plugins.registry;
    found_warnings = plugins.warnings;
    if (warnings) *warnings = found_warnings;
  });
  return *loaded;
}

}  // namespace ct::capability
