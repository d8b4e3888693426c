// orchestrate.spawn: the whole prompt of a subagent for one task, rendered from
// templates/spawn/prompt.md — the task with its acceptance criteria, where it sits (parent, epic),
// what its finished dependencies left behind (research manifest entries, else the note each was
// completed with), the chosen skill's protocol, the subagent contract and CLEO help at the skill's
// level. With execute:true it also runs the agent (orchestrator.spawnCommand, or
// orchestrator.provider's headless command) through the subprocess adapter and records the outcome
// on the task. Registered here, not in domains/, because the prompt is disclosure: it is made of
// the help texts.
#include "disclosure/spawn.h"

#include <algorithm>

#include "core/stored_text.h"
#include "core/text.h"
#include "disclosure/help_levels.h"
#include "domains/bind.h"
#include "domains/envelope.h"
#include "domains/context.h"
#include "domains/orchestrate/orchestrate.h"
#include "domains/orchestrate/worktrees.h"
#include "domains/pipeline.h"
#include "domains/providers/providers.h"
#include "domains/memory/memory_common.h"
#include "domains/skills/skills.h"
#include "engines/rules/catalogue.h"
#include "engines/adapters/split_command.h"
#include "engines/adapters/subprocess.h"
#include "engines/rules/task_engine.h"

namespace ct::disclosure {
namespace {

// Bounds that keep a prompt within its budget whatever the task holds (docs/performance.md).
constexpr std::size_t kDescriptionChars = 1500;
constexpr std::size_t kContextChars = 400;
constexpr std::size_t kResultChars = 400;
constexpr std::size_t kNoteChars = 300;
constexpr std::size_t kNotesShown = 3;
constexpr std::size_t kDependenciesShown = 10;
constexpr std::size_t kFindingsShown = 3;

/// `text` on one line, quoted (core/stored_text.h) and cut to `limit` characters.
std::string one_line(std::string_view text, std::size_t limit) {
  std::string flat(trim(text));
  std::replace(flat.begin(), flat.end(), '\n', ' ');
  return quoted_line(flat, limit);
}

/// The task as agents stored it: its title quoted, its description fenced, each criterion, file and
/// note a quoted line under the prompt's own headings.
std::string task_section(const Task& task) {
  std::string out = "## Task " + task.id + ": " + quoted_line(task.title) + "\n";
  out += std::string(to_string(task.type)) + " · priority " + std::string(to_string(task.priority));
  if (task.size != TaskSize::Unset) out += " · size " + std::string(to_string(task.size));
  if (!task.phase.empty()) out += " · phase " + task.phase;
  if (!task.labels.empty()) out += " · labels " + join(task.labels, ", ");
  out += "\n";
  if (!trim(task.description).empty())
    out += fenced(clip(trim(task.description), kDescriptionChars), {.what = "description of " + task.id});
  if (!task.acceptance.empty()) {
    out += "### Acceptance criteria\n";
    for (const auto& criterion : task.acceptance) out += "- " + quoted_line(criterion) + "\n";
  }
  if (!task.files.empty()) {
    out += "### Files\n";
    for (const auto& file : task.files) out += "- " + quoted_line(file) + "\n";
  }
  if (!task.notes.empty()) {
    out += "### Notes so far (newest last)\n";
    std::size_t first = task.notes.size() > kNotesShown ? task.notes.size() - kNotesShown : 0;
    for (std::size_t i = first; i < task.notes.size(); ++i) out += "- " + one_line(task.notes[i].text, kNoteChars) + "\n";
  }
  return out;
}

/// The parent and, above it, the epic: one line each with the start of their description.
Result<std::string> context_section(Context& context, const Task& task) {
  std::string out;
  std::string at = task.parent;
  for (int level = 0; !at.empty() && level < 2; ++level) {
    CT_TRY_ASSIGN(std::optional<Task> parent, context.db().get_task(at));
    if (!parent) break;
    out += "- " + std::string(level == 0 ? "Parent " : "Above it ") + parent->id + " (" +
           std::string(to_string(parent->type)) + "): " + quoted_line(parent->title);
    if (!trim(parent->description).empty()) out += " — " + one_line(parent->description, kContextChars);
    out += "\n";
    at = parent->parent;
  }
  return out.empty() ? std::string() : "## Context\n" + out;
}

/// What a finished dependency left: its newest research manifest entry (file and key findings)
/// when it has one, else the last note written by the time it was completed (what its agent
/// recorded on completion — not a later remark such as spawn's own note of the agent's run).
Result<std::string> dependency_result(Context& context, const Task& dep) {
  CT_TRY_ASSIGN(std::vector<std::string> entries, context.db().research_for_task(dep.id));
  for (auto at = entries.rbegin(); at != entries.rend(); ++at) {
    CT_TRY_ASSIGN(std::optional<ResearchEntry> entry, context.db().get_research(*at));
    if (!entry || entry->archived) continue;
    std::string out = entry->title + " (" + entry->file + ")";
    for (std::size_t i = 0; i < entry->key_findings.size() && i < kFindingsShown; ++i)
      out += "; " + entry->key_findings[i];
    return one_line(out, kResultChars);
  }
  const TimeMs finished = dep.completed_at.value_or(dep.cancelled_at.value_or(dep.updated_at));
  for (auto note = dep.notes.rbegin(); note != dep.notes.rend(); ++note)
    if (note->at <= finished) return one_line(note->text, kResultChars);
  return dep.notes.empty() ? std::string("no result recorded") : one_line(dep.notes.back().text, kResultChars);
}

/// Each finished dependency with what it left.
Result<std::string> dependencies_section(Context& context, const Task& task) {
  if (task.depends.empty()) return std::string();
  CT_TRY_ASSIGN(std::vector<Task> deps, context.db().get_tasks(task.depends));
  std::string out = "## Finished dependencies (their results)\n";
  for (std::size_t i = 0; i < deps.size() && i < kDependenciesShown; ++i) {
    const Task& dep = deps[i];
    CT_TRY_ASSIGN(std::string result, dependency_result(context, dep));
    out += "- " + dep.id + " " + quoted_line(dep.title) + " (" + std::string(to_string(dep.status)) + "): " + result + "\n";
  }
  if (deps.size() > kDependenciesShown)
    out += "- and " + std::to_string(deps.size() - kDependenciesShown) + " more: " +
           short_call(*context.registry->find("tasks", "deps"), json::Value(json::Value::Object{{"id", task.id}}).dump()) + "\n";
  return out;
}

Result<std::string> help_section(const Registry& registry, std::int64_t level) {
  Result<std::string> text = level == 0 ? level0(registry) : level == 3 ? level3(registry) : level1(registry);
  if (!text) return text;
  return "## CLEO reference (help level " + std::to_string(level) + ")\n" + *text;
}

struct Prompt {
  std::string text;
  const Skill* skill = nullptr;
  std::string reason;
  std::int64_t level = 1;
};

struct SpawnArgs {
  std::string id;
  std::optional<std::string> skill;
  std::optional<std::int64_t> level;
  bool execute = false;
};

Result<Prompt> build_prompt(Context& context, const SpawnArgs& args, const SkillCatalog& skills,
                            const orchestrate::Readiness& ready) {
  const Registry& registry = *context.registry;
  const Task& task = ready.task;
  CT_TRY_ASSIGN(SkillChoice choice, skills.select(task, args.skill));
  Prompt prompt;
  prompt.skill = choice.skill;
  prompt.reason = choice.reason;
  prompt.level = args.level.value_or(choice.skill->level == 2 ? 1 : choice.skill->level);
  CT_TRY_ASSIGN(std::string context_text, context_section(context, task));
  CT_TRY_ASSIGN(std::string deps_text, dependencies_section(context, task));
  CT_TRY_ASSIGN(std::string help_text, help_section(registry, prompt.level));
  CT_TRY_ASSIGN(std::vector<memory::Found> remembered, memory::for_task(context, task.id));
  std::string memory_text = text_of(memory::prompt_block(remembered, task.id), registry.agent_writer());
  if (!memory_text.empty()) memory_text = "## What the project knows (memory)\n" + memory_text;
  const OperationSpec* start = registry.find("session", "start");
  const OperationSpec* complete = registry.find("tasks", "complete");
  if (!start || !complete) return fail(ErrorCode::Internal, "orchestrate.spawn: session.start or tasks.complete missing");
  json::Value start_params = json::Value::object();
  start_params.set("scope", "task:" + task.id);
  start_params.set("focus", task.id);
  json::Value finish_params = json::Value::object();
  finish_params.set("id", task.id);
  finish_params.set("notes", "<one line: what you did and where>");
  const Resolver extra = [&](std::string_view name, const std::vector<std::string>& words) -> Result<std::string> {
    // The contract's calls, written for this task instead of the operations' examples.
    if (name == "call" && !words.empty() && words[0] == "session.start") return short_call(*start, start_params.dump());
    if (name == "call" && !words.empty() && words[0] == "tasks.complete") return short_call(*complete, finish_params.dump());
    if (name == "spawn_task_id") return task.id;
    if (name == "spawn_task") return task_section(task);
    if (name == "spawn_context") return context_text;
    if (name == "spawn_dependencies") return deps_text;
    if (name == "spawn_memory") return memory_text;
    if (name == "spawn_skill_name") return prompt.skill->name;
    if (name == "spawn_skill") return std::string(trim(prompt.skill->body));
    if (name == "spawn_help") return help_text;
    return fail(ErrorCode::NotFound, "");
  };
  CT_TRY_ASSIGN(prompt.text, render(registry, "spawn/prompt.md", extra));
  // Sections that are empty for this task leave no runs of blank lines behind.
  while (prompt.text.find("\n\n\n") != std::string::npos) prompt.text.replace(prompt.text.find("\n\n\n"), 3, "\n\n");
  return prompt;
}

/// How execute:true runs the agent: orchestrator.spawnCommand with the prompt on its stdin, else
/// the headless command of orchestrator.provider with the prompt as its last argument.
struct AgentCommand {
  std::vector<std::string> argv;
  bool prompt_on_stdin = true;
};

Result<AgentCommand> agent_command(const Config& config) {
  const std::string& command = config.get_string("orchestrator.spawnCommand");
  if (!trim(command).empty()) {
    auto words = split_command(command, "orchestrator.spawnCommand");
    if (!words) return fail(ErrorCode::Internal, "orchestrator.spawnCommand passed validation but " + words.error().message);
    return AgentCommand{std::move(*words), true};
  }
  const std::string& provider_id = config.get_string("orchestrator.provider");
  if (trim(provider_id).empty())
    return fail(Error(ErrorCode::CapabilityUnavailable, "orchestrate.spawn: no agent command is configured to execute")
                    .with_fix("name the agent host: " + config_set_fix("orchestrator.provider", json::Value("claude")) +
                              " (or orchestrator.spawnCommand); or spawn without execute and hand the prompt to your "
                              "agent tool")
                    .with_detail("need", "config:orchestrator.provider"));
  const providers::Provider* provider = providers::find(provider_id);
  if (!provider) {
    std::vector<std::string> valid;
    for (const auto& known : providers::all())
      if (!known.headless.empty()) valid.emplace_back(known.id);
    return fail(Error(ErrorCode::ConfigError, "orchestrator.provider: no agent host '" + provider_id + "'")
                    .with_fix("set orchestrator.provider to one of: " + join(valid, ", "))
                    .with_detail("valid", json::Value::array_of(valid)));
  }
  if (provider->headless.empty())
    return fail(Error(ErrorCode::CapabilityUnavailable,
                      "orchestrate.spawn: " + std::string(provider->name) + " has no headless command to run")
                    .with_fix("set orchestrator.spawnCommand to a command that takes the prompt on stdin, or spawn "
                              "without execute")
                    .with_detail("need", "config:orchestrator.spawnCommand"));
  AgentCommand out;
  for (auto word : provider->headless) out.argv.emplace_back(word);
  out.prompt_on_stdin = false;
  return out;
}

/// The injected skill as the governed catalogue counts it (engines/rules/catalogue.h): read with the
/// skill files in the external step, recorded in the write transaction, where no file is read.
constexpr std::string_view kSkillRecord = "_catalogueSkill";

json::Value catalogue_skill_record(const Skill& skill) {
  json::Value out = json::Value::object();
  out.set("name", skill.name);
  out.set("description", skill.description);
  out.set("tags", json::Value::array_of(skill.tags));
  out.set("source", skill.source);
  out.set("overrides", skill.overrides);
  out.set("body", skill.body);
  return out;
}

Result<void> record_skill_use(Context& context, json::Value& data) {
  const json::Value record = data[kSkillRecord];
  data.erase(kSkillRecord);
  if (!record.is_object()) return {};
  Skill skill;
  skill.name = record["name"].as_string();
  skill.description = record["description"].as_string();
  for (const auto& tag : record["tags"].as_array()) skill.tags.push_back(tag.as_string());
  skill.source = record["source"].as_string();
  skill.overrides = record["overrides"].as_string();
  skill.body = record["body"].as_string();
  CT_TRY_ASSIGN(const std::string by, memory::catalogue_actor(context));
  CT_TRY_ASSIGN(CatalogueRow row, catalogue::record_skill_use(context.db(), skill, by, context.now()));
  (void)row;
  return {};
}

Result<Reply> spawn_external(Context& context, const SpawnArgs& args) {
  const bool execute = args.execute;
  std::optional<AgentCommand> agent;
  if (execute) {
    CT_TRY_ASSIGN(agent, agent_command(*context.config));
  }
  std::vector<std::string> warnings;
  CT_TRY_ASSIGN(SkillCatalog skills, load_skill_catalog(context, warnings));
  Prompt prompt;
  std::optional<TaskWorktree> recorded;
  CT_TRY(pipeline::read_in_own_transaction(context, [&]() -> Result<void> {
    CT_TRY_ASSIGN(orchestrate::Readiness ready, orchestrate::readiness(context, args.id));
    if (!ready.ready) {
      Error error(ErrorCode::Validation, "Task " + ready.task.id + " cannot be handed to a subagent now");
      error.fix = ready.recommendations.empty() ? call("orchestrate.validate", {{"id", ready.task.id}})
                                                : ready.recommendations.front();
      return fail(std::move(error).with_detail("readiness", orchestrate::readiness_json(ready)));
    }
    CT_TRY_ASSIGN(prompt, build_prompt(context, args, skills, ready));
    if (execute) {
      CT_TRY_ASSIGN(recorded, context.db().get_task_worktree(args.id));
    }
    return {};
  }));

  json::Value data = json::Value::object();
  data.set("id", args.id);
  data.set("skill", prompt.skill->name);
  data.set("skillReason", prompt.reason);
  data.set("level", prompt.level);
  data.set("tokens", static_cast<std::int64_t>(estimate_tokens(prompt.text)));
  data.set("prompt", prompt.text);
  // What the write step records of the injected skill (its use, a new version when its file
  // changed); taken out of the reply there.
  data.set(kSkillRecord, catalogue_skill_record(*prompt.skill));
  if (!execute) return Reply::warned(std::move(data), std::move(warnings));
  // orchestrator.worktrees: the agent works in a worktree and branch of the task's own. (Reserving
  // the task's files is the claim's: the agent's session.start claims the task, as ever.)
  CT_TRY_ASSIGN(std::optional<orchestrate::PreparedWorktree> worktree,
                orchestrate::prepare_worktree(context, args.id, recorded));
  if (worktree) data.set("worktree", orchestrate::worktree_json(*worktree));

  ProcessSpec spec;
  spec.argv = std::move(agent->argv);
  if (agent->prompt_on_stdin) spec.stdin_data = prompt.text;
  else spec.argv.push_back(prompt.text);
  spec.cwd = worktree ? std::filesystem::path(worktree->record.worktree) : context.root();
  // An agent CLI needs its home (credentials, settings) and its provider's key; nothing else leaks.
  spec.env = minimal_environment({"HOME", "USER", "LANG", "XDG_CONFIG_HOME", "ANTHROPIC_API_KEY", "OPENAI_API_KEY",
                                  "GEMINI_API_KEY", "GOOGLE_API_KEY"});
  const std::int64_t timeout_s = context.config->get_int("orchestrator.spawnTimeoutSeconds");
  spec.timeout = std::chrono::seconds(timeout_s);
  auto ran = run_process(spec);
  if (!ran) {
    Error error = std::move(ran.error());
    error.code = ErrorCode::EngineFailed;
    error.message = "orchestrate.spawn: " + error.message;
    error.fix = "is " + spec.argv.front() + " installed and on PATH? Check orchestrator.spawnCommand and "
                "orchestrator.provider: " + call("system.config.get", {{"key", "orchestrator.provider"}});
    spec.argv.resize(agent->prompt_on_stdin ? spec.argv.size() : spec.argv.size() - 1);  // not the prompt again
    return fail(std::move(error).with_detail("command", json::Value::array_of(spec.argv)));
  }
  const ProcessResult& result = *ran;
  if (!agent->prompt_on_stdin) spec.argv.pop_back();  // the reply shows the command, not the prompt again
  json::Value run = json::Value::object();
  run.set("command", json::Value::array_of(spec.argv));
  run.set("exitCode", result.exit_code);
  if (result.signal != 0) run.set("signal", result.signal);
  if (result.timed_out) run.set("timedOut", true);
  run.set("durationMs", static_cast<std::int64_t>(result.duration_ms));
  std::string output = result.out;
  if (!result.err.empty()) output += (output.empty() || output.back() == '\n' ? "" : "\n") + result.err;
  run.set("outputTail", output_tail(output));
  if (result.timed_out)
    warnings.push_back("the agent did not finish within " + std::to_string(timeout_s) +
                       " s and was stopped (orchestrator.spawnTimeoutSeconds)");
  else if (!result.ok())
    warnings.push_back("the agent exited with status " + std::to_string(result.exit_code) + ": see run.outputTail");
  data.set("run", std::move(run));
  return Reply::warned(std::move(data), std::move(warnings));
}

/// Inside the write transaction: a run of the agent is recorded on the task as a note (the
/// prompt alone changes nothing; the audit row says who asked for it).
Result<Reply> spawn(Context& context, const SpawnArgs& args) {
  if (!context.external) return fail(ErrorCode::Internal, "orchestrate.spawn: the external step did not run");
  Reply reply = std::move(*context.external);
  if (context.audit) context.audit->task_id = args.id;
  CT_TRY(record_skill_use(context, reply.data));
  if (json::Value made = reply.data["worktree"]; made.is_object()) {
    // The worktree the agent ran in is the task's from now on (audited when new).
    TaskWorktree record{.task_id = args.id, .worktree = made["path"].as_string(), .branch = made["branch"].as_string(),
                        .base = made["base"].as_string(), .session = context.session, .created_at = context.now()};
    CT_TRY(orchestrate::record_worktree(context, record));
    made.set("base", orchestrate::short_sha(record.base));
    reply.data.set("worktree", std::move(made));
  }
  const json::Value& run = reply.data["run"];
  if (!run.is_object()) return reply;
  std::string outcome = "orchestrate.spawn ran " + reply.data["skill"].as_string() + " agent: " +
                        (run["timedOut"].is_bool() ? std::string("stopped after the time limit")
                                                   : "exit " + std::to_string(run["exitCode"].as_int())) +
                        " in " + std::to_string(run["durationMs"].as_int() / 1000) + " s";
  TaskEngine tasks(context.db(), *context.config, context.now(), context.session,
                   [&context](FieldChange change) { context.record(std::move(change)); });
  TaskPatch patch;
  patch.note = outcome;
  if (auto noted = tasks.update(args.id, patch, std::nullopt); !noted)
    reply.warnings.push_back("the run was not noted on the task: " + noted.error().message);
  return reply;
}

}  // namespace

void register_spawn_operation(Registry& registry) {
  const auto args = bind(
      field(&SpawnArgs::id, {.name = "id", .type = ParamType::TaskId, .required = true,
                             .description = "The task to hand out", .positional = true}),
      field(&SpawnArgs::skill, {.name = "skill", .type = ParamType::String, .max = 48,
                                .description = "Skill to use (default: chosen from the task's labels and words)"}),
      field(&SpawnArgs::level, {.name = "level", .type = ParamType::Int, .choices = {"0", "1", "3"},
                                .description = "Help level in the prompt (default: the skill's, usually 1)"}),
      field(&SpawnArgs::execute, {.name = "execute", .type = ParamType::Bool,
                                  .description = "Also run the agent: orchestrator.spawnCommand (prompt on stdin) or "
                                                 "orchestrator.provider's headless command"}));
  registry.add({.domain = "orchestrate", .name = "spawn", .gateway = Gateway::Mutate,
                .summary = "A subagent's prompt for a task (and run it)",
                .params = args.specs(),
                .returns = "{id, skill, skillReason, level, tokens (estimated o200k), prompt, run?{command, exitCode, "
                           "signal?, timedOut?, durationMs, outputTail}, worktree?{path, branch, base, created?} (with "
                           "orchestrator.worktrees: where the agent ran and its work lives)}: the prompt holds the task with its "
                           "acceptance criteria, parent and epic, its finished dependencies' results (research entries, "
                           "else the note they were completed with), the skill's "
                           "protocol, the subagent contract and help; a run is noted on the task",
                .errors = {ErrorCode::NotFound, ErrorCode::Validation, ErrorCode::CapabilityUnavailable,
                           ErrorCode::EngineFailed, ErrorCode::ConfigError},
                .examples = {{R"({"id":"T002"})", "the prompt for T002"},
                             {R"({"id":"T002","skill":"test-writer","level":0})", "a named skill, minimal help"}},
                .engine = EngineKind::Hybrid, .tier = 1, .external = args.handler(spawn_external),
                .runs_long = [](const json::Value& params) { return params["execute"] == json::Value(true); },
                .handler = args.handler(spawn)});
}

}  // namespace ct::disclosure
