#include "domains/approval.h"

#include <algorithm>
#include <array>

#include "core/pattern.h"
#include "core/text.h"
#include "engines/project/config.h"
#include "engines/store/task.h"

namespace ct::approval {
namespace {

bool takes_task_id(const OperationSpec& spec) {
  const ParamSpec* id = spec.find_param("id");
  return id && id->type == ParamType::TaskId;
}

Result<bool> task_is_epic(Context& context, const std::string& id) {
  if (id.empty()) return false;
  CT_TRY_ASSIGN(std::optional<Task> task, context.db().get_task(id));
  return task && task->type == TaskType::Epic;
}

bool memory_operation(const OperationSpec& spec) { return spec.domain == "memory" && spec.find_param("id"); }

Result<bool> memory_verified(Context& context, const std::string& id) {
  if (id.empty()) return false;
  CT_TRY_ASSIGN(std::optional<MemoryEntry> entry, context.db().get_memory(id));
  return entry && !entry->verified_by.empty();
}

constexpr std::array<Condition, 2> kConditions = {{
    {"epic", "the task is an epic", takes_task_id, task_is_epic},
    {"verified", "the memory entry was verified by a person", memory_operation, memory_verified},
}};

// approval.required lists rules (engines/project/config.cpp declares the key).
const bool registered = register_config_rule({.key = "approval.required", .check = check_rule});

}  // namespace

std::span<const Condition> conditions() {
  (void)registered;
  return kConditions;
}

std::string check_rule(std::string_view rule) {
  static const Pattern shape = *Pattern::compile("[a-z]+\\.[a-zA-Z.]+(:[a-z]+)?");
  if (!shape.matches(rule)) return "is not \"domain.operation\" or \"domain.operation:condition\"";
  const auto colon = rule.find(':');
  if (colon == std::string_view::npos) return "";
  const std::string_view condition = rule.substr(colon + 1);
  for (const auto& known : kConditions)
    if (known.name == condition) return "";
  std::vector<std::string> names;
  for (const auto& known : kConditions) names.emplace_back(known.name);
  return "names no condition " + echo(condition) + "; conditions: " + join(names, ", ");
}

Result<void> check_rules(const Registry& registry, const json::Value& rules) {
  if (!rules.is_array()) return {};
  std::vector<std::string> mutations;
  for (const auto& spec : registry.operations())
    if (spec.gateway == Gateway::Mutate) mutations.push_back(spec.full_name());
  for (const auto& item : rules.as_array()) {
    if (!item.is_string()) continue;
    const std::string& rule = item.as_string();
    const auto colon = rule.find(':');
    const std::string name = rule.substr(0, colon);
    const auto dot = name.find('.');
    const OperationSpec* spec =
        dot == std::string::npos ? nullptr : registry.find(name.substr(0, dot), name.substr(dot + 1));
    if (!spec || spec->gateway != Gateway::Mutate)
      return fail(Error(ErrorCode::InvalidInput, "approval.required: " + echo(name) + " is not a mutation of this ct")
                      .with_detail("key", "approval.required")
                      .with_choices(name, mutations));
    if (colon == std::string::npos) continue;
    const std::string_view condition = std::string_view(rule).substr(colon + 1);
    for (const auto& known : kConditions)
      if (known.name == condition && !known.applies(*spec))
        return fail(Error(ErrorCode::InvalidInput, "approval.required: the condition " + std::string(condition) + " (" +
                                                       std::string(known.meaning) + ") never holds for " + name)
                        .with_detail("key", "approval.required"));
  }
  return {};
}

Result<std::vector<Effect>> effects_of(Context& context, const OperationSpec& spec, const Params& params,
                                       const std::vector<std::string>& subjects) {
  std::vector<Effect> effects;
  for (const auto& subject : subjects) effects.push_back({spec.full_name(), subject, {}});
  if (effects.empty()) effects.push_back({spec.full_name(), "", {}});
  if (spec.effects) {
    CT_TRY_ASSIGN(std::vector<Effect> more, spec.effects(context, params, subjects));
    effects.insert(effects.end(), std::make_move_iterator(more.begin()), std::make_move_iterator(more.end()));
  }
  return effects;
}

Result<std::optional<std::string>> rule_for(Context& context, const OperationSpec& spec, const Params& params,
                                            const std::vector<std::string>& subjects) {
  const auto rules = context.config->get_strings("approval.required");
  if (rules.empty()) return std::optional<std::string>();
  CT_TRY_ASSIGN(std::vector<Effect> effects, effects_of(context, spec, params, subjects));
  for (const auto& rule : rules) {
    const auto colon = rule.find(':');
    const std::string_view name = std::string_view(rule).substr(0, colon);
    const std::string_view condition = colon == std::string::npos ? std::string_view() : std::string_view(rule).substr(colon + 1);
    for (const auto& effect : effects) {
      // "*" stands for the operation of every rule with the effect's condition (Effect).
      if (effect.operation == "*" ? condition.empty() || condition != effect.condition
                                  : effect.operation != name || (!effect.condition.empty() && effect.condition != condition))
        continue;
      if (condition.empty()) return std::optional<std::string>(rule);
      // check_rules made sure the condition applies to the rule's operation: it is read on the
      // record the effect is on.
      for (const auto& known : kConditions) {
        if (known.name != condition) continue;
        CT_TRY_ASSIGN(bool holds, known.holds(context, effect.id));
        if (holds) return std::optional<std::string>(rule);
      }
    }
  }
  return std::optional<std::string>();
}

Result<void> check_unmoved(const Proposal& proposal, const std::vector<FieldChange>& now) {
  const json::Value& then = proposal.preview["changes"];
  if (!then.is_array()) return {};
  json::Value moved = json::Value::array();
  std::vector<std::string> named;
  for (const auto& change : then.as_array()) {
    const std::string id = change["id"].is_string() ? change["id"].as_string() : "";
    const std::string field = change["field"].is_string() ? change["field"].as_string() : "";
    auto current = std::find_if(now.begin(), now.end(),
                                [&](const FieldChange& c) { return c.task_id == id && c.field == field; });
    const json::Value& was = change["before"];
    const json::Value is = current == now.end() ? json::Value("(no longer changed by this call)") : current->before;
    if (current != now.end() && is == was) continue;
    json::Value item = json::Value::object();
    if (!id.empty()) item.set("id", id);
    item.set("field", field);
    item.set("proposedFrom", was);
    item.set("now", is);
    moved.push_back(std::move(item));
    named.push_back((id.empty() ? "" : id + ".") + field);
  }
  if (moved.empty()) return {};
  return fail(Error(ErrorCode::ConcurrentModification,
                    "the state moved since " + proposal.id + " was proposed (" + join(named, ", ") +
                        "): approving it now would do something else than what was reviewed")
                  .with_fix("reject it (ct reject " + proposal.id + " \"<why>\") and let the agent propose again")
                  .with_detail("proposal", proposal.id)
                  .with_detail("moved", std::move(moved)));
}

json::Value proposal_json(const Proposal& proposal, bool full) {
  json::Value out = json::Value::object();
  out.set("id", proposal.id);
  out.set("operation", proposal.operation);
  out.set("params", proposal.params);
  out.set("rule", proposal.rule);
  out.set("status", proposal.status);
  if (!proposal.agent.empty()) out.set("agent", proposal.agent);
  out.set("at", format_iso8601(proposal.at));
  if (!proposal.reason.empty()) out.set("reason", proposal.reason);
  if (!proposal.intent.is_null()) out.set("intent", proposal.intent);
  if (full && !proposal.preview.is_null()) out.set("preview", proposal.preview);
  if (!proposal.decided_by.empty()) out.set("decidedBy", proposal.decided_by);
  if (proposal.decided_at) out.set("decidedAt", format_iso8601(*proposal.decided_at));
  if (!proposal.decision.empty()) out.set("decision", proposal.decision);
  return out;
}

}  // namespace ct::approval
