// validate domain — validate.test.run: runs of the project's own test command (through the
// subprocess adapter), recorded as compliance results.
#include <cmath>

#include "core/text.h"
#include "domains/bind.h"
#include "domains/context.h"
#include "domains/pipeline.h"
#include "domains/registry.h"
#include "domains/validate/compliance.h"
#include "domains/validate/protocol_check.h"
#include "engines/adapters/split_command.h"
#include "engines/adapters/subprocess.h"
#include "engines/adapters/test_summary.h"

namespace ct {
namespace {

// validate.test.run. The run happens in the spec's external step (no lock held while the tests
// run); the handler then records it inside the write transaction. A run whose tests fail is a
// result, not an error: it is recorded, and the reply is a success with passed:false — answering
// an error would roll the record back. Only a command that cannot start is E_ENGINE_FAILED.

json::Value summary_json(const TestSummary& summary) {
  json::Value out = json::Value::object();
  out.set("format", summary.format);
  if (summary.unit != "tests") out.set("unit", summary.unit);
  out.set("passed", summary.passed);
  out.set("failed", summary.failed);
  out.set("skipped", summary.skipped);
  if (summary.total) out.set("total", *summary.total);
  if (summary.coverage) out.set("coverage", std::round(*summary.coverage * 100.0) / 100.0);
  return out;
}

struct TestRunArgs {
  std::optional<std::string> command;
  std::optional<std::int64_t> timeout_seconds;
  std::optional<std::string> id;
};

Result<Reply> test_run_external(Context& context, const TestRunArgs& args) {
  const std::string& configured = context.config->get_string("validate.testCommand");
  if (trim(configured).empty())
    return fail(Error(ErrorCode::CapabilityUnavailable, "validate.test.run: no test command is configured")
                    .with_fix("set one: " + config_set_fix("validate.testCommand", json::Value("ctest --test-dir build")))
                    .with_detail("need", "config:validate.testCommand"));
  // The task the run is for must exist before a long run starts, not only when it is recorded.
  if (const auto& id = args.id) {
    CT_TRY_ASSIGN(std::optional<Task> task, pipeline::read_in_own_transaction(context, [&] {
                    return context.db().get_task(*id);
                  }));
    if (!task) return fail(validate::task_not_found(*id));
  }
  std::vector<std::string> argv;
  if (args.command) {
    auto words = split_command(*args.command, "command");
    if (!words) {
      Error error = std::move(words.error());
      error.code = ErrorCode::Validation;  // a string that does not split into words: a data rule
      return fail(std::move(error));
    }
    argv = std::move(*words);
  } else {
    // Config::load and config.set refuse a value that does not split: failing here is a bug.
    auto words = split_command(configured, "validate.testCommand");
    if (!words) return fail(ErrorCode::Internal, "validate.testCommand passed validation but " + words.error().message);
    argv = std::move(*words);
  }
  const std::int64_t timeout_s =
      args.timeout_seconds.value_or(context.config->get_int("validate.testTimeoutSeconds"));

  ProcessSpec spec;
  spec.argv = argv;
  spec.cwd = context.work_root();
  spec.env = minimal_environment();
  spec.timeout = std::chrono::seconds(timeout_s);
  auto ran = run_process(spec);
  if (!ran) {
    // A program that is not there, or cannot be spawned: the command cannot start at all.
    Error error = std::move(ran.error());
    error.code = ErrorCode::EngineFailed;
    error.message = "validate.test.run: " + error.message;
    error.fix = args.command ? "check the command's first word: it must be a program on PATH or a path"
                             : "check validate.testCommand (its first word must be a program on PATH or a path): " +
                                   call("system.config.get", {{"key", "validate.testCommand"}});
    return fail(std::move(error).with_detail("command", json::Value::array_of(argv)));
  }
  const ProcessResult& result = *ran;
  const bool passed = result.ok() && result.signal == 0;
  json::Value data = json::Value::object();
  data.set("passed", passed);
  data.set("command", json::Value::array_of(argv));
  data.set("exitCode", result.exit_code);
  if (result.signal != 0) data.set("signal", result.signal);
  if (result.timed_out) data.set("timedOut", true);
  data.set("durationMs", static_cast<std::int64_t>(result.duration_ms));
  std::string output = result.out;
  if (!result.err.empty()) output += (output.empty() || output.back() == '\n' ? "" : "\n") + result.err;
  if (auto summary = parse_test_summary(output)) data.set("summary", summary_json(*summary));
  std::vector<std::string> warnings;
  if (result.timed_out)
    warnings.push_back("the tests did not finish within " + std::to_string(timeout_s) +
                       " s and were stopped; recorded as a failed run (raise timeoutSeconds or "
                       "validate.testTimeoutSeconds if they need longer)");
  else if (result.signal != 0)
    warnings.push_back("the test command was killed by signal " + std::to_string(result.signal));
  else if (!passed)
    warnings.push_back("the tests failed (exit status " + std::to_string(result.exit_code) + "): see outputTail");
  if (result.out_truncated || result.err_truncated)
    warnings.push_back("the output was longer than the adapter keeps; the summary was read from what was kept");
  data.set("outputTail", output_tail(output));
  return Reply::warned(std::move(data), std::move(warnings));
}

Result<Reply> test_run(Context& context, const TestRunArgs& args) {
  if (!context.external) return fail(ErrorCode::Internal, "validate.test.run: the external step did not run");
  Reply reply = std::move(*context.external);
  json::Value details = reply.data;
  details.erase("outputTail");
  details.erase("passed");
  ComplianceRecord record;
  record.at = context.now();
  record.check = std::string(validate::kTestRunCheck);
  record.task_id = args.id.value_or("");
  record.passed = reply.data["passed"].as_bool();
  record.details = details.dump();
  CT_TRY_ASSIGN(json::Value data, store_record(context, record));
  data.erase("check");
  for (const auto& [key, value] : reply.data.as_object()) data.set(key, value);
  reply.data = std::move(data);
  return reply;
}

}  // namespace

void register_validate_test_run(Registry& registry) {
  const auto args = bind(
      field(&TestRunArgs::command, {.name = "command", .type = ParamType::String, .min = 1, .max = 2000,
                                    .description = "Run this instead of validate.testCommand, once (same rules: words, "
                                                   "no shell). Needs validate.testCommand set: configuring it is the "
                                                   "project's consent to running programs",
                                    .single_line = true}),
      field(&TestRunArgs::timeout_seconds,
            {.name = "timeoutSeconds", .type = ParamType::Int, .min = 1, .max = 86400,
             .description = "Stop the run after this long (default validate.testTimeoutSeconds, 600)"}),
      field(&TestRunArgs::id, {.name = "id", .type = ParamType::TaskId,
                               .description = "The task the run is for (the testing and implementation protocols read "
                                              "it)"}));
  registry.add({.domain = "validate", .name = "test.run", .gateway = Gateway::Mutate,
                .summary = "Run the project's test command and record the outcome",
                .params = args.specs(),
                .returns = "{recorded, id?, passed, command[argv], exitCode, signal?, timedOut?, durationMs, "
                           "summary?{format, unit?, passed, failed, skipped, total?, coverage? (percent)}, "
                           "outputTail}; failing tests are a success with passed:false (recorded as check test.run "
                           "in validate.compliance), as is a run stopped at its timeout; summary when the output "
                           "has a ctest, pytest, cargo, go test, jest, vitest or node --test summary line",
                .errors = {ErrorCode::EngineFailed, ErrorCode::NotFound},
                .examples = {{R"({})", "run the configured tests"},
                             {R"({"timeoutSeconds":120})", "with a shorter limit"}},
                .engine = EngineKind::Subprocess, .tier = 2,
                .needs = {"config:validate.testCommand"}, .alternatives = {"validate.schema"},
                .external = args.handler(test_run_external), .runs_long = [](const json::Value&) { return true; },
                .handler = args.handler(test_run)});
}

}  // namespace ct
