#include "disclosure/prompts.h"

#include <algorithm>
#include <functional>

#include "core/json_parse.h"
#include "core/text.h"
#include "disclosure/help_levels.h"
#include "domains/call_text.h"

namespace ct::disclosure {
namespace {

// The values a prompt's template reads with {{arg NAME}}: its arguments, and what its reads found.
using Values = std::map<std::string, std::string, std::less<>>;

const std::vector<PromptSpec>& catalog() {
  static const std::vector<PromptSpec> prompts = {
      {.name = "next",
       .title = "What to work on next",
       .description = "The best ready tasks with why, and how to take one",
       .arguments = {{"epic", "Only work under this epic", false, ValueKind::EpicId}}},
      {.name = "take",
       .title = "Take a task",
       .description = "A task's record and what the project knows for it, then claim it",
       .arguments = {{"id", "The task to take", true, ValueKind::TaskId}}},
      {.name = "handoff",
       .title = "Hand off and end the session",
       .description = "Where the session stands, then notes, release and end it",
       .arguments = {{"session", "The session (default: yours, else the newest nobody works in)", false,
                      ValueKind::SessionId}}},
      {.name = "decompose",
       .title = "Decompose an epic",
       .description = "Split an epic into ordered tasks in a plan (the epic-architect skill)",
       .arguments = {{"epic", "The epic to decompose", true, ValueKind::EpicId}}},
      {.name = "review",
       .title = "Review a task's evidence",
       .description = "Check that a task's evidence proves each acceptance criterion, then pass its gate",
       .arguments = {{"id", "The task to review", true, ValueKind::TaskId},
                     {"gate", "The verification gate to pass (default: its next one)", false, ValueKind::Gate}}},
      {.name = "spawn",
       .title = "Spawn a subagent for a task",
       .description = "Build a task's subagent prompt and hand the task to a subagent",
       .arguments = {{"id", "The task to hand out", true, ValueKind::TaskId},
                     {"skill", "The skill to use (default: chosen from the task)", false, ValueKind::Skill}}},
  };
  return prompts;
}

/// The data of a cleo_query call, or its error.
Result<json::Value> read(Router& router, const Caller& caller, std::string_view operation, json::Value params) {
  auto dot = operation.find('.');
  Envelope reply = router.dispatch(
      {Gateway::Query, std::string(operation.substr(0, dot)), std::string(operation.substr(dot + 1)), std::move(params), caller});
  if (!reply.success) return fail(std::move(*reply.error));
  return std::move(reply.data);
}

json::Value object(std::initializer_list<std::pair<std::string_view, json::Value>> members) {
  json::Value out = json::Value::object();
  for (const auto& [key, value] : members)
    if (!value.is_null()) out.set(key, value);
  return out;
}

/// A value of an argument as the store spells it: task ids in upper case (t12 is T12).
std::string canonical(const PromptArgument& argument, std::string value) {
  if ((argument.kind == ValueKind::TaskId || argument.kind == ValueKind::EpicId) && !value.empty() && value.front() == 't')
    value.front() = 'T';
  return value;
}

Result<void> check_shape(const PromptArgument& argument, std::string_view value) {
  bool ok = true;
  switch (argument.kind) {
    case ValueKind::TaskId:
    case ValueKind::EpicId:
      ok = value.size() >= 2 && value.size() <= 20 && value.front() == 'T' &&
           std::all_of(value.begin() + 1, value.end(), [](char c) { return c >= '0' && c <= '9'; });
      break;
    default: ok = value.size() <= 120 && !has_control_characters(value, false); break;
  }
  if (ok) return {};
  return fail(Error(ErrorCode::InvalidParams, "argument '" + std::string(argument.name) + "' must be a " +
                                                  std::string(to_string(argument.kind)) +
                                                  (argument.kind == ValueKind::TaskId || argument.kind == ValueKind::EpicId
                                                       ? " such as T001"
                                                       : ""))
                  .with_detail("field", std::string(argument.name)));
}

/// {{call_with OP key=value …}}: the call as the tools take it. `$name` is a value the prompt has
/// (the key is left out when it has none); other values are JSON when they parse, else strings.
Result<std::string> call_with(const Registry& registry, const Values& values, const std::vector<std::string>& args) {
  if (args.empty()) return fail(ErrorCode::InvalidInput, "call_with needs an operation");
  Call call{.operation = args[0], .params = json::Value::object(), .json_params = true};
  for (std::size_t i = 1; i < args.size(); ++i) {
    auto equals = args[i].find('=');
    if (equals == std::string::npos) return fail(ErrorCode::InvalidInput, "call_with: '" + args[i] + "' is not key=value");
    std::string key = args[i].substr(0, equals);
    std::string value = args[i].substr(equals + 1);
    if (value.starts_with('$')) {
      auto found = values.find(std::string_view(value).substr(1));
      if (found == values.end() || found->second.empty()) continue;
      call.params.set(key, found->second);
      continue;
    }
    auto parsed = json::parse(value);
    call.params.set(key, parsed && !parsed->is_string() ? *parsed : json::Value(value));
  }
  CT_TRY(check_call(call, registry));
  const OperationSpec* spec = called_operation(call, registry);
  return short_call(*spec, call.params.dump());
}

/// What each prompt reads before its template is rendered: the values its template names.
Result<void> gather(std::string_view prompt, Values& values, Router& router, const Caller& caller) {
  auto has = [&](std::string_view name) { return values.contains(name) && !values.at(std::string(name)).empty(); };
  auto first_id = [](const json::Value& rows) -> std::string {
    if (rows.is_array() && !rows.empty() && rows.as_array()[0]["id"].is_string()) return rows.as_array()[0]["id"].as_string();
    return "…";
  };
  if (prompt == "next") {
    if (has("epic")) {
      CT_TRY_ASSIGN(json::Value ready,
                    read(router, caller, "orchestrate.ready", object({{"epicId", values["epic"]}, {"limit", 3}})));
      values["under"] = " under epic " + values["epic"];
      values["scope"] = "epic:" + values["epic"];
      values["first"] = first_id(ready["tasks"]);
      values["ready"] = ready.dump();
      values["source"] = "orchestrate.ready";
    } else {
      CT_TRY_ASSIGN(json::Value ready, read(router, caller, "tasks.next", object({{"count", 3}, {"explain", true}})));
      values["scope"] = "global";
      values["first"] = first_id(ready);
      values["ready"] = ready.dump();
      values["source"] = "tasks.next";
    }
    return {};
  }
  if (prompt == "take" || prompt == "review" || prompt == "spawn") {
    const bool full = prompt != "spawn";
    CT_TRY_ASSIGN(json::Value task,
                  read(router, caller, "tasks.show", object({{"id", values["id"]}, {"detail", full ? "full" : "compact"}})));
    values["title"] = task["title"].is_string() ? task["title"].as_string() : "";
    values["task"] = task.dump();
    values["scope"] = "task:" + values["id"];
    if (prompt == "take") {
      CT_TRY_ASSIGN(json::Value memory, read(router, caller, "memory.find", object({{"taskId", values["id"]}})));
      values["memory"] = memory.is_array() && memory.empty() ? "nothing recorded yet" : memory.dump();
    }
    if (prompt == "review") {
      CT_TRY_ASSIGN(json::Value gates, read(router, caller, "lifecycle.gates", object({{"id", values["id"]}})));
      values["gates"] = gates.dump();
      if (!has("gate")) values["gate"] = gates["next"].is_string() ? gates["next"].as_string() : "implemented";
    }
    return {};
  }
  if (prompt == "handoff") {
    CT_TRY_ASSIGN(json::Value briefing,
                  read(router, caller, "session.briefing", object({{"id", has("session") ? json::Value(values["session"]) : json::Value()}})));
    if (!has("session") && briefing["session"]["id"].is_string()) values["session"] = briefing["session"]["id"].as_string();
    values["briefing"] = briefing.dump();
    return {};
  }
  if (prompt == "decompose") {
    const std::string& epic = values["epic"];
    json::Value data = json::Value::object();
    CT_TRY_ASSIGN(json::Value task, read(router, caller, "tasks.show", object({{"id", epic}, {"detail", "compact"}})));
    CT_TRY_ASSIGN(json::Value tree, read(router, caller, "tasks.tree", object({{"id", epic}})));
    CT_TRY_ASSIGN(json::Value plan, read(router, caller, "orchestrate.analyze", object({{"epicId", epic}})));
    data.set("epic", std::move(task));
    data.set("tree", std::move(tree));
    data.set("analysis", std::move(plan));
    values["epic_data"] = data.dump();
    CT_TRY_ASSIGN(json::Value skill, read(router, caller, "skills.show", object({{"name", "epic-architect"}})));
    values["skill"] = skill["body"].is_string() ? std::string(trim(skill["body"].as_string())) : "";
    return {};
  }
  return fail(ErrorCode::Internal, "prompt " + std::string(prompt) + " reads nothing");
}

}  // namespace

const PromptArgument* PromptSpec::find_argument(std::string_view argument) const {
  for (const auto& a : arguments)
    if (a.name == argument) return &a;
  return nullptr;
}

std::span<const PromptSpec> prompt_catalog() { return catalog(); }

const PromptSpec* find_prompt(std::string_view name) {
  for (const auto& prompt : catalog())
    if (prompt.name == name) return &prompt;
  return nullptr;
}

Result<RenderedPrompt> render_prompt(const Registry& registry, std::string_view name, const PromptArguments& arguments,
                                     Router& router, const Caller& caller) {
  const PromptSpec* spec = find_prompt(name);
  if (!spec) {
    std::vector<std::string> names;
    for (const auto& prompt : catalog()) names.emplace_back(prompt.name);
    return fail(Error(ErrorCode::InvalidParams, "unknown prompt '" + std::string(name.substr(0, 80)) + "'")
                    .with_choices(name, names));
  }
  Values values;
  for (const auto& [key, value] : arguments) {
    const PromptArgument* argument = spec->find_argument(key);
    if (!argument) {
      std::vector<std::string> names;
      for (const auto& a : spec->arguments) names.emplace_back(a.name);
      return fail(Error(ErrorCode::InvalidParams,
                        "prompt " + std::string(spec->name) + " has no argument '" + key.substr(0, 80) + "'")
                      .with_choices(key, names)
                      .with_detail("field", key.substr(0, 80)));
    }
    std::string given(trim(value));
    if (given.empty()) continue;
    given = canonical(*argument, std::move(given));
    CT_TRY(check_shape(*argument, given));
    values[std::string(argument->name)] = std::move(given);
  }
  for (const auto& argument : spec->arguments)
    if (argument.required && !values.contains(argument.name))
      return fail(Error(ErrorCode::InvalidParams, "prompt " + std::string(spec->name) + " needs the argument '" +
                                                      std::string(argument.name) + "' (" + std::string(argument.description) + ")")
                      .with_detail("field", std::string(argument.name)));
  CT_TRY(gather(spec->name, values, router, caller));

  const Resolver resolver = [&](std::string_view placeholder, const std::vector<std::string>& args) -> Result<std::string> {
    if (placeholder == "arg") {
      if (args.empty()) return fail(ErrorCode::InvalidInput, "arg needs a name");
      auto found = values.find(args[0]);
      return found == values.end() ? std::string() : found->second;
    }
    if (placeholder == "call_with") return call_with(registry, values, args);
    return fail(ErrorCode::NotFound, "unknown placeholder");
  };
  CT_TRY_ASSIGN(std::string text, render(registry, "prompts/" + std::string(spec->name) + ".md", resolver));
  RenderedPrompt out;
  out.description = std::string(spec->description);
  const char* separator = ": ";
  for (const auto& argument : spec->arguments)
    if (auto found = values.find(argument.name); found != values.end() && arguments.contains(argument.name)) {
      out.description += separator + std::string(argument.name) + " " + found->second;
      separator = ", ";
    }
  out.text = std::string(trim(text));
  return out;
}

}  // namespace ct::disclosure
