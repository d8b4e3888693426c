#include "domains/batch.h"

#include <algorithm>
#include <bitset>
#include <charconv>

#include "core/text.h"
#include "domains/original_names.h"
#include "domains/params.h"

namespace ct::batch {
namespace {

/// The param `key` names in `spec` when it holds task ids — a TaskId param, or an Array of them —
/// under its name, its alias or the original CLEO's name of it (taskId for id); null otherwise.
const ParamSpec* id_param(const OperationSpec& spec, std::string_view key) {
  const ParamSpec* param = spec.find_param(key);
  if (!param)
    for (const original_names::ParamName* row : original_names::params_of(spec))
      if (row->original == key) param = spec.find_param(row->ours);
  if (!param) return nullptr;
  const bool ids = param->type == ParamType::TaskId ||
                   (param->type == ParamType::Array && param->item_type == ParamType::TaskId);
  return ids ? param : nullptr;
}

/// Calls `each` with every string value a task id param of `op` holds (the value, or each item of
/// its array), as a mutable reference: the one walk placeholders are found and replaced by.
template <typename Json, typename F>
void for_each_id_value(const OperationSpec& spec, Json& params, F&& each) {
  if (!params.is_object()) return;
  for (auto& [key, value] : params.as_object()) {
    if (!id_param(spec, key)) continue;
    if (value.is_string()) {
      each(value);
    } else if (value.is_array()) {
      for (auto& item : value.as_array())
        if (item.is_string()) each(item);
    }
  }
}

/// Calls `each` with every placeholder's number in `op`'s task id params.
template <typename F>
void for_each_placeholder(const Op& op, F&& each) {
  for_each_id_value(*op.spec, op.params, [&](const json::Value& value) {
    if (std::size_t number = placeholder(value.as_string())) each(number);
  });
}

/// `op`'s params with each placeholder replaced by the task it names.
json::Value resolved(const Op& op, const std::vector<std::string>& ids) {
  json::Value params = op.params;
  for_each_id_value(*op.spec, params, [&](json::Value& value) {
    if (std::size_t number = placeholder(value.as_string()); number && number <= ids.size()) value = ids[number - 1];
  });
  return params;
}

std::string op_name(std::size_t number, const Op& op) {
  return "op " + std::to_string(number) + " (" + op.spec->full_name() + ")";
}

Error op_error(std::size_t number, std::string message, std::string_view field) {
  return Error(ErrorCode::InvalidParams, "op " + std::to_string(number) + ": " + std::move(message))
      .with_detail("op", static_cast<std::int64_t>(number))
      .with_detail("field", std::string(field));
}

}  // namespace

std::size_t placeholder(std::string_view text) {
  if (text.size() < 2 || text.size() > 7 || text.front() != '$' || text[1] == '0') return 0;
  std::size_t number = 0;
  auto [end, ec] = std::from_chars(text.data() + 1, text.data() + text.size(), number);
  return ec == std::errc() && end == text.data() + text.size() ? number : 0;
}

std::vector<std::string> id_values(const Op& op) {
  std::vector<std::string> out;
  for_each_id_value(*op.spec, op.params, [&](const json::Value& value) { out.push_back(value.as_string()); });
  return out;
}

bool has_placeholder(const Op& op) {
  bool found = false;
  for_each_placeholder(op, [&](std::size_t) { found = true; });
  return found;
}

bool holds(Holder holder, const OperationSpec& spec) {
  return spec.batchable && (holder == Holder::Batch || !spec.external);
}

Result<std::vector<Op>> parse(const Registry& registry, const json::Value& ops, std::size_t first, Holder holder,
                              const OpLimit& limit, std::string_view field) {
  if (!ops.is_array() || ops.empty())
    return fail(Error(ErrorCode::InvalidParams, std::string(field) + " must be a non-empty array of {operation, params}")
                    .with_detail("field", std::string(field)));
  if (ops.size() > limit.max)
    return fail(Error(ErrorCode::Validation, std::string(field) + " holds " + std::to_string(ops.size()) + " ops; " +
                                                 std::string(limit.holder) + " at most " + std::to_string(limit.max))
                    .with_fix(std::string(limit.fix))
                    .with_detail("field", std::string(field))
                    .with_detail("max", static_cast<std::int64_t>(limit.max)));
  std::vector<std::string> batchable;
  for (const auto& spec : registry.operations())
    if (holds(Holder::Batch, spec)) batchable.push_back(spec.full_name());
  std::vector<Op> out;
  out.reserve(ops.size());
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const std::size_t number = first + i + 1;
    const json::Value& item = ops.as_array()[i];
    if (!item.is_object() || !item["operation"].is_string())
      return fail(op_error(number, "each op is {operation, params?}, e.g. {\"operation\":\"tasks.add\",\"params\":{\"title\":\"…\"}}",
                           field));
    for (const auto& [key, value] : item.as_object())
      if (key != "operation" && key != "params")
        return fail(op_error(number, "unknown key " + echo(key) + " (an op is {operation, params})", field));
    // A name without a domain is a tasks operation ("add" is tasks.add).
    std::string name = item["operation"].as_string();
    if (name.find('.') == std::string::npos) name = "tasks." + name;
    const auto dot = name.find('.');
    const OperationSpec* spec = registry.find(name.substr(0, dot), name.substr(dot + 1));
    if (spec && holds(Holder::Batch, *spec) && !holds(holder, *spec))
      return fail(Error(ErrorCode::InvalidParams, "op " + std::to_string(number) + " (" + spec->full_name() +
                                                      ") checks evidence when it runs, so a plan cannot stage it")
                      .with_fix("commit the plan first, then call " + spec->full_name() + " on its own")
                      .with_detail("op", static_cast<std::int64_t>(number)));
    if (!spec || !holds(holder, *spec)) {
      Error error = op_error(number, echo(name) + (spec ? " cannot be one op of a batch or plan"
                                                        : " is not an operation"),
                             field)
                        .with_choices(name, batchable);
      error.fix = "ops are changes of tasks: " + join(batchable, ", ");
      return fail(std::move(error));
    }
    const json::Value& params = item["params"];
    if (!params.is_null() && !params.is_object())
      return fail(op_error(number, "params must be an object", field));
    Op op{spec, params.is_null() ? json::Value::object() : params};
    std::optional<std::size_t> ahead;
    for_each_placeholder(op, [&](std::size_t target) {
      if (target >= number && !ahead) ahead = target;
    });
    if (ahead)
      return fail(op_error(number, "$" + std::to_string(*ahead) + " names " +
                                       (*ahead == number              ? std::string("this op itself")
                                        : *ahead > first + ops.size() ? "no op (the last is op " + std::to_string(first + ops.size()) + ")"
                                                                      : std::string("an op that comes later")) +
                                       "; a placeholder names an earlier op's task",
                           field));
    out.push_back(std::move(op));
  }
  return out;
}

json::Value ops_json(std::span<const Op> ops) {
  json::Value out = json::Value::array();
  for (const auto& op : ops) {
    json::Value item = json::Value::object();
    item.set("operation", op.spec->full_name());
    item.set("params", op.params);
    out.push_back(std::move(item));
  }
  return out;
}

Result<json::Value> run_externals(Context& context, std::span<const Op> ops) {
  json::Value out = json::Value::array();
  bool any = false;
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const Op& op = ops[i];
    if (!op.spec->external) {
      out.push_back(json::Value());
      continue;
    }
    if (has_placeholder(op))
      return fail(Error(ErrorCode::InvalidParams,
                        op_name(i + 1, op) + " checks its task before the batch runs, so it cannot name a placeholder")
                      .with_fix("run it in a call after this batch, naming the task the batch made")
                      .with_detail("op", static_cast<std::int64_t>(i + 1)));
    CT_TRY_ASSIGN(Params params, Params::validate(*op.spec, op.params));
    auto reply = op.spec->external(context, params);
    if (!reply) {
      Error error = std::move(reply.error());
      error.message = op_name(i + 1, op) + ": " + error.message;
      return fail(std::move(error).with_detail("op", static_cast<std::int64_t>(i + 1)));
    }
    json::Value item = json::Value::object();
    item.set("data", std::move(reply->data));
    item.set("warnings", json::Value::array_of(reply->warnings));
    out.push_back(std::move(item));
    any = true;
  }
  return any ? out : json::Value();
}

Result<Ran> run(Context& context, NestedRuns& runs, std::span<const Op> ops, std::vector<std::string> ids,
                const json::Value* externals) {
  Ran ran;
  const std::size_t first = ids.size();
  ran.ids = std::move(ids);
  // A warning every op gives alike (a session rule's advice, under no session) is said once,
  // naming the ops that gave it.
  std::vector<std::pair<std::string, std::vector<std::size_t>>> said;
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const Op& op = ops[i];
    const std::size_t number = first + i + 1;
    std::optional<Reply> external;
    if (externals && externals->is_array() && i < externals->size() && externals->as_array()[i].is_object()) {
      const json::Value& item = externals->as_array()[i];
      Reply reply{item["data"], {}, {}, {}};
      if (item["warnings"].is_array())
        for (const auto& warning : item["warnings"].as_array()) reply.warnings.push_back(warning.as_string());
      external = std::move(reply);
    }
    const json::Value params = resolved(op, ran.ids);
    AuditEntry audit;
    Result<Reply> reply = runs.run_inside(context, *op.spec, params, audit, external ? &*external : nullptr);
    if (!reply) {
      Error error = std::move(reply.error());
      error.message = op_name(number, op) + ": " + error.message;
      if (!error.details.is_object() || !error.details.contains("op"))
        error = std::move(error).with_detail("op", static_cast<std::int64_t>(number));
      return fail(std::move(error));
    }
    std::string id;
    if (const json::Value& made = reply->data["id"]; made.is_string()) id = made.as_string();
    else if (const json::Value& named = params["id"]; named.is_string()) id = named.as_string();
    if (id.empty())
      for (const auto& change : audit.changes)
        if (!change.task_id.empty()) {
          id = change.task_id;
          break;
        }
    json::Value result = json::Value::object();
    result.set("op", static_cast<std::int64_t>(number));
    if (!id.empty()) result.set("id", id);
    if (reply->data.is_object()) {
      for (const auto& [key, value] : reply->data.as_object())
        if (key != "id") result.set(key, value);
    } else if (!reply->data.is_null()) {
      result.set("data", std::move(reply->data));
    }
    if (reply->note) result.set("note", to_string(*reply->note));
    ran.results.push_back(std::move(result));
    // The batch's warnings are lines naming their ops: one that suggests a call names it by operation.
    for (const auto& advice : reply->advice_warnings) reply->warnings.push_back(advice.plain_text());
    for (auto& warning : reply->warnings) {
      auto same = std::find_if(said.begin(), said.end(), [&](const auto& entry) { return entry.first == warning; });
      if (same == said.end()) said.emplace_back(std::move(warning), std::vector<std::size_t>{number});
      else same->second.push_back(number);
    }
    for (auto& change : audit.changes) ran.changes.push_back(std::move(change));
    ran.ends.push_back(ran.changes.size());
    ran.ids.push_back(std::move(id));
  }
  for (auto& [warning, numbers] : said) {
    std::string which = "op " + std::to_string(numbers.front());
    if (numbers.size() > 1) {
      which = "ops";
      for (std::size_t k = 0; k < numbers.size() && k < 5; ++k) which += (k ? ", " : " ") + std::to_string(numbers[k]);
      if (numbers.size() > 5) which += " and " + std::to_string(numbers.size() - 5) + " more";
    }
    ran.warnings.push_back(which + ": " + warning);
  }
  return ran;
}

json::Value placeholders_json(std::span<const Op> ops, const std::vector<std::string>& ids) {
  std::vector<bool> named(ids.size() + 1, false);
  for (const auto& op : ops)
    for_each_placeholder(op, [&](std::size_t number) {
      if (number < named.size()) named[number] = true;
    });
  json::Value out = json::Value::object();
  for (std::size_t number = 1; number < named.size(); ++number)
    if (named[number]) out.set("$" + std::to_string(number), ids[number - 1]);
  return out;
}

std::vector<ErrorCode> op_errors(const Registry& registry, std::vector<ErrorCode> own) {
  // Each code once, in the order first met; which are in, by their number (codes are below 256:
  // a larger one throws here, in every process and test, as the registry is built).
  // Registering the batch and the plans asks this five times in every process (issue 56).
  std::bitset<256> in;
  for (auto code : own) in.set(static_cast<std::size_t>(code));
  auto add = [&](ErrorCode code) {
    const auto number = static_cast<std::size_t>(code);
    if (in.test(number)) return;
    in.set(number);
    own.push_back(code);
  };
  for (const auto& spec : registry.operations()) {
    if (!holds(Holder::Batch, spec)) continue;
    for (auto code : spec.errors) add(code);
    for (auto code : spec.router_errors()) add(code);
  }
  return own;
}

}  // namespace ct::batch
