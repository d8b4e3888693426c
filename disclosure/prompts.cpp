#include "disclosure/prompts.h"

#include <algorithm>
#include <functional>

#include "core/json_parse.h"
#include "core/stored_text.h"
#include "core/text.h"
#include "disclosure/help_levels.h"
#include "disclosure/templates.h"
#include "domains/call_check.h"

namespace ct::disclosure {
namespace {

// The values a prompt's template reads with {{arg NAME}}: its arguments, and what its reads found.
using Values = std::map<std::string, std::string, std::less<>>;

const std::vector<PromptSpec>& catalog() {
  static const std::vector<PromptSpec> prompts = {
      {.name = "next",
       .title = "What to work on next",
       .description = "The best ready tasks with why, and how to take one",
       .arguments = {{"epic", "Only work under this epic", false, ValueKind::EpicId,
                      "only its ready tasks count: {{call_with orchestrate.ready epicId=$epic limit=3}}"}}},
      {.name = "take",
       .title = "Take a task",
       .description = "A task's record and what the project knows for it, then claim it",
       .arguments = {{"id", "The task to take", true, ValueKind::OpenTaskId}}},
      {.name = "handoff",
       .title = "Hand off and end the session",
       .description = "Where the session stands, then notes, release and end it",
       .arguments = {{"session", "The session (default: yours, else the newest nobody works in)", false,
                      ValueKind::SessionId,
                      "hand off that one: {{call_with session.briefing id=$session}} says where it stands, and "
                      "its id goes in the calls above"}}},
      {.name = "decompose",
       .title = "Decompose an epic",
       .description = "Split an epic into ordered tasks in a plan (the epic-architect skill)",
       .arguments = {{"epic", "The epic to decompose", true, ValueKind::EpicId}}},
      {.name = "review",
       .title = "Review a task's evidence",
       .description = "Check that a task's evidence proves each acceptance criterion, then pass its gate",
       .arguments = {{"id", "The task to review", true, ValueKind::TaskId},
                     {"gate", "The verification gate to pass (default: its next one)", false, ValueKind::Gate,
                      "pass that gate: {{call_with lifecycle.gate.pass id=$id gate=$gate notes=…}}"}}},
      {.name = "spawn",
       .title = "Spawn a subagent for a task",
       .description = "Build a task's subagent prompt and hand the task to a subagent",
       .arguments = {{"id", "The task to hand out", true, ValueKind::OpenTaskId},
                     {"skill", "The skill to use (default: chosen from the task)", false, ValueKind::Skill,
                      "spawn with that skill: {{call_with orchestrate.spawn id=$id skill=$skill}}"}}},
  };
  return prompts;
}

/// The data of a cleo_query call, or its error.
Result<json::Value> read(Router& router, const Caller& caller, std::string_view operation, json::Value params) {
  auto dot = operation.find('.');
  Envelope reply = router.dispatch(
      {Gateway::Query, std::string(operation.substr(0, dot)), std::string(operation.substr(dot + 1)), std::move(params), caller});
  if (!reply.success) return fail(std::move(*reply.error));
  // A prompt is read by an agent: the calls its data suggests in the agent's tools' syntax.
  return written(reply.data, router.operations().agent_writer());
}

json::Value object(std::initializer_list<std::pair<std::string_view, json::Value>> members) {
  json::Value out = json::Value::object();
  for (const auto& [key, value] : members)
    if (!value.is_null()) out.set(key, value);
  return out;
}

/// A value of an argument as the store spells it: task ids in upper case (t12 is T12).
std::string canonical(const PromptArgument& argument, std::string value) {
  if ((argument.kind == ValueKind::TaskId || argument.kind == ValueKind::OpenTaskId || argument.kind == ValueKind::EpicId) &&
      !value.empty() && value.front() == 't')
    value.front() = 'T';
  return value;
}

Result<void> check_shape(const PromptArgument& argument, std::string_view value) {
  bool ok = true;
  switch (argument.kind) {
    case ValueKind::TaskId:
    case ValueKind::OpenTaskId:
    case ValueKind::EpicId:
      ok = value.size() >= 2 && value.size() <= 20 && value.front() == 'T' &&
           std::all_of(value.begin() + 1, value.end(), [](char c) { return c >= '0' && c <= '9'; });
      break;
    default: ok = value.size() <= 120 && !has_control_characters(value, false); break;
  }
  if (ok) return {};
  return fail(Error(ErrorCode::InvalidParams, "argument '" + std::string(argument.name) + "' must be a " +
                                                  std::string(to_string(argument.kind)) +
                                                  (argument.kind == ValueKind::TaskId || argument.kind == ValueKind::OpenTaskId ||
                                                           argument.kind == ValueKind::EpicId
                                                       ? " such as T001"
                                                       : ""))
                  .with_detail("field", std::string(argument.name)));
}

/// A call as the prompts write it (`cleo_mutate tasks.start {"id":"T002"}`), checked against the
/// registry: a value that is a host's template variable stands for the one it will be.
Result<std::string> call_text(const Registry& registry, Call call) {
  call.json_params = true;
  CT_TRY(check_call(call, registry));
  const OperationSpec* spec = called_operation(call, registry);
  return short_call(*spec, call.params.dump());
}

/// {{call_with OP key=value …}}: the call as the tools take it. `$name` is a value the prompt has
/// (the key is left out when it has none); other values are JSON when they parse, else strings.
Result<std::string> call_with(const Registry& registry, const Values& values, const std::vector<std::string>& args) {
  if (args.empty()) return fail(ErrorCode::InvalidInput, "call_with needs an operation");
  Call call{.operation = args[0], .params = json::Value::object()};
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
  return call_text(registry, std::move(call));
}

/// The reads of a prompt: made now, or — when a param is a template variable the host fills in
/// later (render_prompt) — not made, and the call that would make it kept for the agent to make.
class Reads {
 public:
  Reads(const Registry& registry, Router& router, const Caller& caller)
      : registry_(registry), router_(router), caller_(caller) {}
  /// The data of `operation`, or nullopt when it is left to the agent (then later() names it).
  Result<std::optional<json::Value>> operator()(std::string_view operation, json::Value params) {
    bool variable = false;
    for (const auto& [key, value] : params.as_object())
      variable = variable || (value.is_string() && is_template_variable(value.as_string()));
    if (!variable) {
      CT_TRY_ASSIGN(json::Value data, read(router_, caller_, operation, std::move(params)));
      return std::optional<json::Value>(std::move(data));
    }
    CT_TRY_ASSIGN(std::string call, call_text(registry_, Call{.operation = std::string(operation), .params = std::move(params)}));
    later_.push_back(std::move(call));
    return std::optional<json::Value>();
  }
  /// What the reads left so far say, for the value that stands in their data: "read it: CALL".
  std::string later() {
    std::string out = "read " + std::string(later_.size() == 1 ? "it" : "them") + " first: " + join(later_, "; ");
    later_.clear();
    return out;
  }

 private:
  const Registry& registry_;
  Router& router_;
  const Caller& caller_;
  std::vector<std::string> later_;
};

/// Data a read found, as the templates put it after their own words: a block of stored data
/// (core/stored_text.h) labelled with what it is, never spliced into a sentence. The line break
/// after it is the template's.
std::string data_block(const json::Value& data, const std::string& what) {
  std::string out = fenced(data.dump(), {.what = what});
  out.pop_back();
  return out;
}

/// What each prompt reads before its template is rendered: the values its template names. A read
/// left to the agent (Reads) leaves its values saying which call reads them.
Result<void> gather(std::string_view prompt, Values& values, Reads& reads) {
  auto has = [&](std::string_view name) { return values.contains(name) && !values.at(std::string(name)).empty(); };
  auto first_id = [](const json::Value& rows) -> std::string {
    if (rows.is_array() && !rows.empty() && rows.as_array()[0]["id"].is_string()) return rows.as_array()[0]["id"].as_string();
    return "…";
  };
  if (prompt == "next") {
    if (has("epic")) {
      CT_TRY_ASSIGN(auto ready, reads("orchestrate.ready", object({{"epicId", values["epic"]}, {"limit", 3}})));
      values["under"] = " under epic " + values["epic"];
      values["scope"] = "epic:" + values["epic"];
      values["first"] = ready ? first_id((*ready)["tasks"]) : "…";
      values["ready"] = ready ? data_block(*ready, "orchestrate.ready") : "The ready tasks: " + reads.later();
      values["source"] = "orchestrate.ready";
    } else {
      CT_TRY_ASSIGN(auto ready, reads("tasks.next", object({{"count", 3}, {"explain", true}})));
      values["scope"] = "global";
      values["first"] = first_id(*ready);
      values["ready"] = data_block(*ready, "tasks.next");
      values["source"] = "tasks.next";
    }
    return {};
  }
  if (prompt == "take" || prompt == "review" || prompt == "spawn") {
    const bool full = prompt != "spawn";
    const std::string& id = values["id"];
    CT_TRY_ASSIGN(auto task, reads("tasks.show", object({{"id", id}, {"detail", full ? "full" : "compact"}})));
    values["task"] = task ? data_block(*task, "task " + id) : "Its record: " + reads.later();
    values["scope"] = "task:" + id;
    if (prompt == "take") {
      CT_TRY_ASSIGN(auto memory, reads("memory.find", object({{"taskId", id}})));
      values["memory"] = !memory                                   ? "Its memory: " + reads.later()
                         : memory->is_array() && memory->empty() ? std::string("Its memory: nothing recorded yet.")
                                                                  : data_block(*memory, "memory for " + id);
    }
    if (prompt == "review") {
      CT_TRY_ASSIGN(auto gates, reads("lifecycle.gates", object({{"id", id}})));
      values["gates"] = gates ? data_block(*gates, "gates of " + id) : "Its gates: " + reads.later();
      // Without the gates read, the gate to pass is the agent's to fill in from it.
      if (!has("gate")) values["gate"] = !gates ? "…" : (*gates)["next"].is_string() ? (*gates)["next"].as_string() : "implemented";
    }
    return {};
  }
  if (prompt == "handoff") {
    CT_TRY_ASSIGN(auto briefing,
                  reads("session.briefing", object({{"id", has("session") ? json::Value(values["session"]) : json::Value()}})));
    if (briefing && !has("session") && (*briefing)["session"]["id"].is_string())
      values["session"] = (*briefing)["session"]["id"].as_string();
    values["briefing"] = briefing ? data_block(*briefing, "session.briefing") : "Where it stands: " + reads.later();
    return {};
  }
  if (prompt == "decompose") {
    const std::string& epic = values["epic"];
    CT_TRY_ASSIGN(auto task, reads("tasks.show", object({{"id", epic}, {"detail", "compact"}})));
    CT_TRY_ASSIGN(auto tree, reads("tasks.tree", object({{"id", epic}})));
    CT_TRY_ASSIGN(auto plan, reads("orchestrate.analyze", object({{"epicId", epic}})));
    if (task && tree && plan) {
      json::Value data = json::Value::object();
      data.set("epic", std::move(*task));
      data.set("tree", std::move(*tree));
      data.set("analysis", std::move(*plan));
      values["epic_data"] = data_block(data, "epic " + epic);
    } else {
      values["epic_data"] = "The epic, its tree and its waves: " + reads.later();
    }
    CT_TRY_ASSIGN(auto skill, reads("skills.show", object({{"name", "epic-architect"}})));
    values["skill"] = (*skill)["body"].is_string() ? std::string(trim((*skill)["body"].as_string())) : "";
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
  Values later;  // optional arguments given as a host's template variable
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
    if (is_template_variable(given)) {
      // The host fills it in later: kept as it is; an optional one renders as not given, plus its line.
      (argument->required ? values : later)[std::string(argument->name)] = std::move(given);
      continue;
    }
    given = canonical(*argument, std::move(given));
    CT_TRY(check_shape(*argument, given));
    values[std::string(argument->name)] = std::move(given);
  }
  for (const auto& argument : spec->arguments)
    if (argument.required && !values.contains(argument.name))
      return fail(Error(ErrorCode::InvalidParams, "prompt " + std::string(spec->name) + " needs the argument '" +
                                                      std::string(argument.name) + "' (" + std::string(argument.description) + ")")
                      .with_detail("field", std::string(argument.name)));
  Reads reads(registry, router, caller);
  CT_TRY(gather(spec->name, values, reads));

  auto resolver_of = [&registry](const Values& known) -> Resolver {
    return [&registry, &known](std::string_view placeholder, const std::vector<std::string>& args) -> Result<std::string> {
      if (placeholder == "arg") {
        if (args.empty()) return fail(ErrorCode::InvalidInput, "arg needs a name");
        auto found = known.find(args[0]);
        return found == known.end() ? std::string() : found->second;
      }
      if (placeholder == "call_with") return call_with(registry, known, args);
      return fail(ErrorCode::NotFound, "unknown placeholder");
    };
  };
  const std::string template_name = "prompts/" + std::string(spec->name) + ".md";
  CT_TRY_ASSIGN(std::string text, render(registry, template_name, resolver_of(values)));
  text = std::string(trim(text));
  // Each optional argument the host fills in later: what to do once it names something. With the
  // variable filled in as nothing, the line reads `If "" is not empty …` and the default above holds.
  Values filled = values;
  for (const auto& [key, variable] : later) filled[key] = variable;
  for (const auto& argument : spec->arguments) {
    auto found = later.find(argument.name);
    if (found == later.end() || argument.instead.empty()) continue;
    CT_TRY_ASSIGN(std::string instead, expand(argument.instead, template_name, resolver_of(filled)));
    text += "\nIf \"" + found->second + "\" is not empty, it is the " + std::string(argument.name) + " (" +
            std::string(argument.description) + "): " + instead + ".";
  }
  RenderedPrompt out;
  out.description = std::string(spec->description);
  const char* separator = ": ";
  for (const auto& argument : spec->arguments) {
    if (!arguments.contains(argument.name)) continue;
    const Values& given = later.contains(argument.name) ? later : values;
    auto found = given.find(argument.name);
    if (found == given.end()) continue;
    out.description += separator + std::string(argument.name) + " " + found->second;
    separator = ", ";
  }
  out.text = std::move(text);
  return out;
}

}  // namespace ct::disclosure
