#include "domains/registry.h"

#include <algorithm>
#include <array>
#include <cassert>

#include "core/json_parse.h"
#include "domains/projection.h"

// The registration functions of domains/ (domains/operations.def), declared once.
#define CT_REGISTER_OPERATIONS(ns, function) \
  namespace ns {                              \
  void function(Registry& registry);          \
  }
#include "domains/operations.def"
#undef CT_REGISTER_OPERATIONS

namespace ct {

std::string_view to_string(Gateway gateway) { return gateway == Gateway::Query ? "query" : "mutate"; }
std::string_view tool_name(Gateway gateway) {
  return gateway == Gateway::Query ? "cleo_query" : "cleo_mutate";
}

std::string_view to_string(ParamType type) {
  switch (type) {
    case ParamType::String: return "string";
    case ParamType::Int: return "integer";
    case ParamType::Bool: return "boolean";
    case ParamType::Enum: return "enum";
    case ParamType::Array: return "array";
    case ParamType::Object: return "object";
    case ParamType::TaskId: return "taskId";
    case ParamType::Scalar: return "scalar";
  }
  return "unknown";
}

std::string_view to_string(EngineKind kind) {
  switch (kind) {
    case EngineKind::Native: return "native";
    case EngineKind::Subprocess: return "subprocess";
    case EngineKind::Hybrid: return "hybrid";
  }
  return "unknown";
}

std::string OperationSpec::full_name() const {
  std::string out(domain);
  out += '.';
  out += name;
  return out;
}

Advice OperationSpec::example_call() const {
  if (!examples.empty()) return call_with(examples.front().params_json);
  // No example (a plug-in's operation): its required params, each with a value to fill in.
  json::Value values = json::Value::object();
  for (const auto& param : params)
    if (param.required) values.set(param.name, "…");
  return Advice(Call{full_name(), std::move(values), true});
}

Advice OperationSpec::call_with(std::string_view params_json) const {
  auto parsed = json::parse(params_json);
  return Advice(Call{full_name(), parsed ? std::move(*parsed) : json::Value::object(), true});
}

std::vector<ErrorCode> OperationSpec::router_errors() const {
  std::vector<ErrorCode> codes = {ErrorCode::InvalidParams};
  // A param with a data rule (every type but boolean and object has one: length, range, choices,
  // pattern, characters) answers a value that breaks it with E_VALIDATION (domains/params.h).
  if (std::any_of(params.begin(), params.end(),
                  [](const ParamSpec& p) { return p.type != ParamType::Bool && p.type != ParamType::Object; }))
    codes.push_back(ErrorCode::Validation);
  if (needs_project) codes.push_back(ErrorCode::NotInitialized);
  if (gateway == Gateway::Mutate) codes.push_back(ErrorCode::MutationDisabled);
  if (needs_session) codes.push_back(ErrorCode::SessionRequired);
  if (needs_project) {
    codes.push_back(ErrorCode::SessionNotFound);  // the session bound, or named by sessionId, is gone
    codes.push_back(ErrorCode::LockTimeout);
    codes.push_back(ErrorCode::FileError);
    codes.push_back(ErrorCode::StoreUnavailable);  // a PostgreSQL store's server down or restarting
  }
  if (!needs.empty()) codes.push_back(ErrorCode::CapabilityUnavailable);
  return codes;
}

bool OperationSpec::declares(ErrorCode code) const {
  if (code == ErrorCode::Internal || is_success_note(code)) return true;
  if (std::find(errors.begin(), errors.end(), code) != errors.end()) return true;
  auto common = router_errors();
  return std::find(common.begin(), common.end(), code) != common.end();
}

const ParamSpec* OperationSpec::find_param(std::string_view param) const {
  for (const auto& p : params)
    if (p.name == param) return &p;
  for (const auto& p : params)
    if (!p.alias.empty() && p.alias == param) return &p;
  return nullptr;
}

std::span<const std::string_view> canonical_domains() {
  static constexpr std::array<std::string_view, 13> kDomains = {
      "tasks", "session", "system", "validate", "orchestrate", "plan", "research",
      "memory", "lifecycle", "release", "issues", "skills", "providers"};
  return kDomains;
}

namespace {

/// About the product's number of operations (162), with room for plug-ins' own.
constexpr std::size_t kExpectedOperations = 192;

/// Every string a pattern is matched against is bounded first: a patterned param (or array item)
/// without a declared max gets kMaxPatternedChars.
void bound_patterned_params(OperationSpec& spec) {
  for (auto& param : spec.params) {
    if (param.pattern.empty()) continue;
    std::int64_t& max = param.type == ParamType::Array ? param.item_max : param.max;
    if (max == kUnbounded) max = kMaxPatternedChars;
  }
}

}  // namespace

void Registry::add(OperationSpec spec) {
  assert(!find(spec.domain, spec.name) && "operation registered twice");
  assert(std::find(canonical_domains().begin(), canonical_domains().end(), spec.domain) !=
             canonical_domains().end() && "unknown domain");
  // A list-like operation gets `detail` and `fields`, and continues a cut reply at `offset`.
  add_projection_params(spec);
  bound_patterned_params(spec);
  if (spec.bulk) {
    assert(spec.find_param("id") && spec.find_param("id")->type == ParamType::TaskId && "a bulk operation has an id");
    spec.params.push_back({.name = "ids", .type = ParamType::Array, .min = 1, .max = kMaxBulkIds,
                           .item_type = ParamType::TaskId,
                           .description = "Several tasks instead of id: the same change to each, in one transaction"});
  }
  assert((!spec.list_like() || spec.find_param("offset")) && "a list-like operation needs an offset param");
  for ([[maybe_unused]] const auto& param : spec.params)
    assert((param.path_param.empty() || (param.type == ParamType::Object && param.positional && spec.find_param(param.path_param) &&
                                         spec.find_param(param.path_param)->type == ParamType::String)) &&
           "path_param: a positional Object param naming a String param of the operation");
  for ([[maybe_unused]] auto original : spec.original_names) {
    assert(original.find('.') != std::string_view::npos && "an original name is domain.operation");
    assert(!find(original.substr(0, original.find('.')), original.substr(original.find('.') + 1)) &&
           !find_original(original.substr(0, original.find('.')), original.substr(original.find('.') + 1)) &&
           "an original name is no operation's name and runs one operation");
  }
  // Room for the product's operations at once: a spec is large, and each growth moved them all.
  if (specs_.capacity() == 0) specs_.reserve(kExpectedOperations);
  specs_.push_back(std::move(spec));
}

const OperationSpec* Registry::find(std::string_view domain, std::string_view name) const {
  for (const auto& spec : specs_)
    if (spec.domain == domain && spec.name == name) return &spec;
  return nullptr;
}

namespace {
/// "domain.name" equals `full`, without building the string.
bool names(std::string_view full, std::string_view domain, std::string_view name) {
  return full.size() == domain.size() + 1 + name.size() && full.starts_with(domain) && full[domain.size()] == '.' &&
         full.ends_with(name);
}
}  // namespace

const OperationSpec* Registry::find_alias(std::string_view domain, std::string_view word, Gateway gateway) const {
  auto in_domain = [&](const OperationSpec& spec) {
    return spec.domain == domain && std::find(spec.aliases.begin(), spec.aliases.end(), word) != spec.aliases.end();
  };
  auto from_another = [&](const OperationSpec& spec) {
    return std::any_of(spec.aliases.begin(), spec.aliases.end(),
                       [&](std::string_view alias) { return names(alias, domain, word); });
  };
  // The domain's own first, then another's; on the caller's tool first, then the other one's.
  for (int pass = 0; pass < 4; ++pass) {
    const bool own_domain = pass < 2, same_tool = pass % 2 == 0;
    for (const auto& spec : specs_)
      if ((spec.gateway == gateway) == same_tool && (own_domain ? in_domain(spec) : from_another(spec))) return &spec;
  }
  return nullptr;
}

const OperationSpec* Registry::find_original(std::string_view domain, std::string_view name) const {
  for (const auto& spec : specs_)
    if (std::any_of(spec.original_names.begin(), spec.original_names.end(),
                    [&](std::string_view original) { return names(original, domain, name); }))
      return &spec;
  return nullptr;
}

OperationSpec* Registry::find_mutable(std::string_view domain, std::string_view name) {
  for (auto& spec : specs_)
    if (spec.domain == domain && spec.name == name) return &spec;
  return nullptr;
}

Result<Reply> Handler::operator()(Context& context, const Params& params, NestedRuns& runs) const {
  return nesting_ ? nesting_(context, params, runs) : plain_(context, params);
}

Result<Reply> Handler::operator()(Context& context, const Params& params) const {
  if (nesting_) return fail(ErrorCode::Internal, "an operation that runs other operations' calls runs only under the router");
  return plain_(context, params);
}

void Registry::add_step(std::string_view domain, std::string_view name, Step step) {
  OperationSpec* spec = find_mutable(domain, name);
  assert(spec && spec->handler && !spec->handler.nests() && "a step follows a registered handler");
  spec->handler = [handler = std::move(spec->handler), step = std::move(step)](Context& context,
                                                                             const Params& params) -> Result<Reply> {
    CT_TRY_ASSIGN(Reply reply, handler(context, params));
    return step(context, params, std::move(reply));
  };
}

void Registry::add_plugin(OperationSpec spec) {
  if (OperationSpec* native = find_mutable(spec.domain, spec.name)) {
    *native = std::move(spec);  // it carries the native operation's params, projections included
    return;
  }
  add_projection_params(spec);
  bound_patterned_params(spec);
  if (std::find(canonical_domains().begin(), canonical_domains().end(), spec.domain) == canonical_domains().end() &&
      std::find(plugin_domains_.begin(), plugin_domains_.end(), spec.domain) == plugin_domains_.end())
    plugin_domains_.push_back(spec.domain);
  specs_.push_back(std::move(spec));
}

std::string_view Registry::own(std::string text) {
  if (!strings_) strings_ = std::make_shared<std::deque<std::string>>();
  return strings_->emplace_back(std::move(text));
}

namespace {
/// Advice as its value (Advice::to_value), text alone as itself: a registry without an agents' writer.
class AdviceValue final : public AdviceWriter {
 public:
  json::Value write(const Advice& advice) const override {
    return advice.has_calls() ? advice.to_value() : json::Value(advice.plain_text());
  }
};
}  // namespace

const AdviceWriter& Registry::agent_writer() const {
  static const AdviceValue kept;
  return agent_writer_ ? *agent_writer_ : kept;
}

std::vector<std::string> Registry::domains() const {
  std::vector<std::string> out;
  for (auto domain : canonical_domains())
    if (std::any_of(specs_.begin(), specs_.end(), [&](const auto& s) { return s.domain == domain; }))
      out.emplace_back(domain);
  out.insert(out.end(), plugin_domains_.begin(), plugin_domains_.end());
  return out;
}

std::vector<std::string> Registry::domains(Gateway gateway) const {
  std::vector<std::string> out;
  auto served = [&](std::string_view domain) {
    return std::any_of(specs_.begin(), specs_.end(), [&](const auto& s) { return s.domain == domain && s.gateway == gateway; });
  };
  for (auto domain : canonical_domains())
    if (served(domain)) out.emplace_back(domain);
  for (auto domain : plugin_domains_)
    if (served(domain)) out.emplace_back(domain);
  return out;
}

std::vector<std::string> Registry::operation_names(std::string_view domain) const {
  std::vector<std::string> out;
  for (const auto& spec : specs_)
    if (spec.domain == domain) out.emplace_back(spec.name);
  return out;
}

std::vector<std::string> Registry::operation_names(std::string_view domain, Gateway gateway) const {
  std::vector<std::string> out;
  for (const auto& spec : specs_)
    if (spec.domain == domain && spec.gateway == gateway) out.emplace_back(spec.name);
  return out;
}

void register_domain_operations(Registry& registry) {
#define CT_REGISTER_OPERATIONS(ns, function) ns::function(registry);
#include "domains/operations.def"
#undef CT_REGISTER_OPERATIONS
}

}  // namespace ct
