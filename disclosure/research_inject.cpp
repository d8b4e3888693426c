// research.inject: the block an orchestrator puts into a subagent's prompt so that the subagent
// leaves its output where research.sync finds it — the output file, the manifest line (one compact
// JSON line, appended with O_APPEND) and its rules. Rendered from templates/research/inject.md with
// the project's research.manifestFile. Registered here, not in domains/research/, because it is
// disclosure: a template rendered with the registry's placeholders.
#include "disclosure/research_inject.h"

#include <filesystem>

#include "disclosure/help_levels.h"
#include "domains/bind.h"
#include "domains/context.h"
#include "engines/rules/lifecycle.h"
#include "engines/rules/research.h"

namespace ct::disclosure {
namespace {

struct InjectArgs {
  std::string protocol;
  std::optional<std::string> task_id;
};

Result<Reply> inject(Context& context, const InjectArgs& args) {
  const std::string& protocol = args.protocol;
  std::string task_id = "T###";
  if (const auto& id = args.task_id) {
    CT_TRY_ASSIGN(std::optional<Task> task, context.db().get_task(*id));
    if (!task)
      return fail(Error(ErrorCode::NotFound, "Task " + *id + " not found")
                      .with_fix(call("tasks.find", {{"query", *id}}))
                      .with_detail("taskId", *id));
    task_id = task->id;
  }
  const std::string configured = context.config->get_string("research.manifestFile");
  auto manifest = project_relative_path(configured, context.project->root, "research.manifestFile");
  if (!manifest)
    return fail(Error(ErrorCode::ConfigError, "research.manifestFile '" + configured + "' is outside the project")
                    .with_fix(config_set_fix("research.manifestFile", json::Value(".cleo/agent-outputs/MANIFEST.jsonl"))));
  std::string dir = std::filesystem::path(*manifest).parent_path().generic_string();
  const std::string id = task_id + "-" + (protocol == "research" ? std::string("topic-slug") : protocol + "-slug");
  const std::string file = (dir.empty() ? "" : dir + "/") + id + ".md";
  // The line an agent appends, with every field (values to replace).
  json::Value line = json::Value::object();
  line.set("id", id);
  line.set("file", file);
  line.set("title", "<what it is about>");
  line.set("date", format_iso8601(context.now()).substr(0, 10));
  line.set("status", "complete");
  line.set("agentType", protocol);
  line.set("topics", json::Value::array_of(std::vector<std::string>{"<topic>"}));
  line.set("keyFindings", json::Value::array_of(std::vector<std::string>{"<finding 1>", "<finding 2>", "<finding 3>"}));
  line.set("actionable", true);
  line.set("needsFollowup", json::Value::array());
  line.set("linkedTasks", json::Value::array_of(std::vector<std::string>{task_id}));
  line.set("confidence", 0.8);
  const std::string findings = protocol == "research"
                                   ? "3–7, one sentence each: required"
                                   : "3–7, one sentence each, expected; other counts pass with a warning";
  const Resolver extra = [&](std::string_view name, const std::vector<std::string>&) -> Result<std::string> {
    if (name == "research_protocol") return protocol;
    if (name == "research_file") return file;
    if (name == "research_manifest") return *manifest;
    if (name == "research_line") return line.dump();
    if (name == "research_findings") return findings;
    return fail(ErrorCode::NotFound, "");
  };
  CT_TRY_ASSIGN(std::string text, render(*context.registry, "research/inject.md", extra));
  json::Value data = json::Value::object();
  data.set("protocol", protocol);
  data.set("manifestFile", *manifest);
  data.set("file", file);
  data.set("tokens", static_cast<std::int64_t>(estimate_tokens(text)));
  data.set("text", std::move(text));
  return Reply::of(std::move(data));
}

}  // namespace

void register_research_inject(Registry& registry) {
  // The lifecycle stages: the kind of work whose output is recorded.
  std::vector<std::string_view> protocols(kLifecycleStages.begin(), kLifecycleStages.end());
  const auto args = bind(
      field(&InjectArgs::protocol, {.name = "protocol", .type = ParamType::Enum, .default_json = R"("research")",
                                    .choices = protocols,
                                    .description = "The kind of work (its agentType; research requires 3–7 keyFindings)",
                                    .positional = true}),
      field(&InjectArgs::task_id, {.name = "taskId", .type = ParamType::TaskId,
                                   .description = "The subagent's task: names its file, id and linkedTasks"}));
  registry.add({.domain = "research", .name = "inject", .gateway = Gateway::Mutate,
                .summary = "The output protocol block for a subagent's prompt",
                .params = args.specs(),
                .returns = "{protocol, manifestFile, file, tokens, text}: the text tells the subagent where to write "
                           "its output file and the exact manifest line to append (nothing is written)",
                .errors = {ErrorCode::NotFound, ErrorCode::ConfigError},
                .examples = {{R"({})", "the research protocol"},
                             {R"({"protocol":"implementation","taskId":"T001"})", "for an implementer working on T001"}},
                .idempotent = true, .tier = 2, .handler = args.handler(inject)});
}

}  // namespace ct::disclosure
