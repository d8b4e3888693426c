// validate domain — consistency of the stored data (schema, task, fix: engines/rules/validator.h) and
// recorded protocol-check results (compliance; compliance.record also runs a protocol check
// server-side: protocol_check.h). validate.protocol and validate.manifest live in protocol_ops.cpp,
// validate.test.run in validate_test_run.cpp, validate.audit in validate_audit.cpp.
#include <algorithm>
#include <cmath>
#include <map>

#include "core/json_parse.h"
#include "core/text.h"
#include "domains/memory/memory_common.h"
#include "domains/bind.h"
#include "domains/context.h"
#include "domains/pipeline.h"
#include "domains/registry.h"
#include "domains/validate/compliance.h"
#include "domains/validate/protocol_check.h"
#include "domains/verdict.h"
#include "engines/rules/validator.h"

namespace ct {
namespace {

Validator validator(Context& context) {
  return Validator(context.db(), *context.config, context.now(),
                   [&context](FieldChange change) { context.record(std::move(change)); });
}

json::Value problem_json(const Problem& problem) {
  json::Value out = json::Value::object();
  out.set("check", problem.check);
  if (!problem.task_id.empty()) out.set("taskId", problem.task_id);
  if (!problem.session.empty()) out.set("session", problem.session);
  out.set("message", problem.message);
  out.set("repairable", problem.repairable);
  out.set("fix", problem.fix.to_value());
  return out;
}

json::Value problems_json(const std::vector<Problem>& problems, std::size_t limit) {
  json::Value list = json::Value::array();
  for (std::size_t i = 0; i < problems.size() && i < limit; ++i) list.push_back(problem_json(problems[i]));
  return list;
}

std::int64_t count_repairable(const std::vector<Problem>& problems) {
  return std::count_if(problems.begin(), problems.end(), [](const Problem& p) { return p.repairable; });
}

struct SchemaArgs {
  bool quick = false;
  std::int64_t limit = 0;
};

Result<Reply> schema(Context& context, const SchemaArgs& args) {
  CT_TRY_ASSIGN(std::vector<Problem> problems, validator(context).schema(args.quick));
  CT_TRY_ASSIGN(std::int64_t tasks, context.db().count_tasks(TaskFilter{.archived = ArchivedFilter::Include}));
  json::Value data = json::Value::object();
  data.set("tasks", tasks);
  data.set("total", static_cast<std::int64_t>(problems.size()));
  std::int64_t repairable = count_repairable(problems);
  data.set("repairable", repairable);
  if (!problems.empty()) {
    std::map<std::string, std::int64_t> counts;
    for (const auto& problem : problems) ++counts[problem.check];
    json::Value by_check = json::Value::object();
    for (const auto& check : Validator::checks()) {
      auto found = counts.find(std::string(check));
      if (found != counts.end()) by_check.set(std::string(check), found->second);
    }
    data.set("byCheck", std::move(by_check));
  }
  auto limit = static_cast<std::size_t>(args.limit);
  data.set("problems", problems_json(problems, limit));
  std::vector<std::string> warnings;
  if (problems.size() > limit)
    warnings.push_back("showing " + std::to_string(limit) + " of " + std::to_string(problems.size()) +
                       " problems; raise limit to see more");
  // Memory whose files or tasks moved on: not a fault of the store, but worth a person's review.
  MemoryQuery active;
  active.statuses = {"active"};
  active.limit = -1;
  CT_TRY_ASSIGN(std::vector<MemoryEntry> entries, context.db().list_memory(active));
  CT_TRY_ASSIGN(auto stale, memory::staleness_of(context, entries));
  json::Value stale_rows = json::Value::array();
  std::int64_t stale_count = 0;
  for (std::size_t i = 0; i < entries.size(); ++i) {
    if (!stale[i]) continue;
    if (++stale_count > 10) continue;
    json::Value row = json::Value::object();
    row.set("id", entries[i].id);
    row.set("stale", memory::stale_json(*stale[i]));
    stale_rows.push_back(std::move(row));
  }
  if (stale_count > 0) {
    json::Value memory_report = json::Value::object();
    memory_report.set("stale", stale_count);
    memory_report.set("entries", std::move(stale_rows));
    data.set("memory", std::move(memory_report));
    warnings.push_back(std::to_string(stale_count) + " memory entr" + (stale_count == 1 ? "y is" : "ies are") +
                       " stale (their files or tasks changed): review with memory.stats, then memory.verify or "
                       "memory.retract");
  }
  std::string summary = std::to_string(problems.size()) + " problem" + (problems.size() == 1 ? "" : "s") +
                        " in the store" + (problems.empty() ? "" : ", first: " + problems.front().message);
  Advice fix = repairable > 0 ? call("validate.fix", {{"dryRun", true}}) + " shows the " + std::to_string(repairable) +
                                    " safe repair" + (repairable == 1 ? "" : "s")
                              : problems.empty() ? Advice() : problems.front().fix;
  return verdict(problems.empty(), std::move(data), std::move(warnings), std::move(summary), std::move(fix));
}

struct TaskArgs {
  std::string id;
};

Result<Reply> task(Context& context, const TaskArgs& args) {
  const std::string& id = args.id;
  CT_TRY_ASSIGN(std::vector<Problem> problems, validator(context).task(id));
  json::Value data = json::Value::object();
  data.set("id", id);
  data.set("problems", problems_json(problems, problems.size()));
  std::string summary = "Task " + id + " has " + std::to_string(problems.size()) + " problem" +
                        (problems.size() == 1 ? "" : "s") + (problems.empty() ? "" : ", first: " + problems.front().message);
  return verdict(problems.empty(), std::move(data), {}, std::move(summary),
                 problems.empty() ? Advice() : problems.front().fix);
}

struct FixArgs {
  bool dry_run = false;
};

Result<Reply> fix(Context& context, const FixArgs& args) {
  const bool dry_run = args.dry_run;
  CT_TRY_ASSIGN(FixReport report, validator(context).fix(dry_run));
  json::Value data = json::Value::object();
  if (dry_run) {
    data.set("dryRun", true);
  }
  json::Value repairs = json::Value::array();
  for (const auto& repair : report.repairs) {
    json::Value item = json::Value::object();
    item.set("check", repair.check);
    if (!repair.task_id.empty()) item.set("taskId", repair.task_id);
    if (!repair.session.empty()) item.set("session", repair.session);
    item.set("action", repair.action);
    repairs.push_back(std::move(item));
  }
  data.set("repaired", static_cast<std::int64_t>(report.repairs.size()));
  data.set("repairs", std::move(repairs));
  data.set("remaining", problems_json(report.remaining, report.remaining.size()));
  data.set("valid", report.remaining.empty() && (!dry_run || report.repairs.empty()));
  std::vector<std::string> warnings;
  if (!report.remaining.empty())
    warnings.push_back(std::to_string(report.remaining.size()) + " problem" +
                       (report.remaining.size() == 1 ? " needs" : "s need") + " a decision: see remaining[].fix");
  return Reply::noted(std::move(data), no_change_if(report.repairs.empty()), std::move(warnings));
}

/// Stores a compliance result, attributed to the caller's session and its agent.
Result<std::int64_t> insert_compliance(Context& context, ComplianceRecord& record) {
  record.session = context.session;
  CT_TRY_ASSIGN(record.agent, context.agent_name());
  return context.db().insert_compliance(record);
}

Error record_params_error(std::string_view field, std::string message) {
  return Error(ErrorCode::InvalidParams, std::string(field) + ": " + std::move(message))
      .with_fix(call("validate.compliance.record", {{"protocol", "implementation"}, {"id", "T001"}}) +
                " runs and records a protocol check; {check:'x', passed:true} records your own")
      .with_detail("field", std::string(field));
}

}  // namespace

/// Records the check and audits it against its task; the reply's common fields.
Result<json::Value> store_record(Context& context, ComplianceRecord& record) {
  CT_TRY_ASSIGN(std::int64_t id, insert_compliance(context, record));
  json::Value result = json::Value::object();
  result.set("check", record.check);
  result.set("passed", record.passed);
  context.record(FieldChange{record.task_id, "compliance", json::Value(), result});
  json::Value data = json::Value::object();
  data.set("recorded", id);
  if (!record.task_id.empty()) data.set("id", record.task_id);
  data.set("check", record.check);
  data.set("passed", record.passed);
  return data;
}

namespace {

struct RecordArgs {
  std::optional<std::string> check;
  std::optional<bool> passed;
  std::optional<std::string> id;
  std::optional<std::string> protocol;
  std::optional<std::string> entry_id;
  bool strict = false;
  std::optional<std::int64_t> score;
  std::optional<json::Value> details;
};

/// compliance.record {protocol | entryId}'s external step: the check validate.protocol runs, run
/// before the transaction (it reads the subject's files: never under the write lock), its result
/// as the handler records it.
Result<Reply> run_protocol_external(Context& context, const RecordArgs& args) {
  json::Value data = json::Value::object();
  if (!args.protocol && !args.entry_id) return Reply::of(std::move(data));
  const std::pair<bool, std::string_view> self_reported[] = {
      {args.passed.has_value(), "passed"}, {args.score.has_value(), "score"}, {args.details.has_value(), "details"}};
  for (const auto& [given, field] : self_reported)
    if (given)
      return fail(record_params_error(field, "a protocol check is graded by the server; drop " + std::string(field) +
                                                 " (or protocol, to record your own result)"));
  CT_TRY_ASSIGN(validate::ProtocolCheck check, pipeline::read_in_own_transaction(context, [&] {
                  return validate::run_protocol_check(
                      context, validate::protocol_request(args.id, args.entry_id, args.protocol, args.strict));
                }));
  const std::string name = validate::protocol_check_name(check.report.protocol);
  if (const auto& given = args.check; given && *given != name)
    return fail(record_params_error("check", "a " + std::string(to_string(check.report.protocol)) +
                                                 " check is recorded as " + name + ", not " + *given));
  json::Value failed = json::Value::array();
  for (const auto& result : check.report.rules) {
    if (result.status != RuleStatus::Fail) continue;
    json::Value item = json::Value::object();
    item.set("id", result.rule->id);
    item.set("level", to_string(result.rule->level));
    item.set("message", result.message);
    failed.push_back(std::move(item));
  }
  data.set("check", name);
  if (check.evidence.task) data.set("taskId", check.evidence.task->id);
  if (check.evidence.entry) data.set("entryId", check.evidence.entry->id);
  data.set("passed", check.report.valid);
  data.set("score", static_cast<std::int64_t>(check.report.score));
  data.set("failed", std::move(failed));
  data.set("report", validate::protocol_report_json(check, false));
  std::vector<std::string> warnings = std::move(check.warnings);
  if (!check.report.valid) warnings.insert(warnings.begin(), validate::protocol_summary(check));
  return Reply::warned(std::move(data), std::move(warnings));
}

/// compliance.record {protocol | entryId}: the check its external step ran, recorded. A failed
/// check is a result, not an error: it is recorded and answered as a success with passed:false
/// (an error would roll the record back), like a failing validate.test.run.
Result<Reply> record_protocol(Context& context) {
  if (!context.external || !context.external->data["check"].is_string())
    return fail(ErrorCode::Internal, "validate.compliance.record: the protocol check did not run before the transaction");
  const json::Value& ran = context.external->data;
  ComplianceRecord record;
  record.at = context.now();
  record.task_id = ran["taskId"].string_or_empty();
  if (!record.task_id.empty()) {
    CT_TRY_ASSIGN(std::optional<Task> found, context.db().get_task(record.task_id));
    if (!found) return fail(validate::task_not_found(record.task_id));
  }
  record.check = ran["check"].as_string();
  record.passed = ran["passed"] == json::Value(true);
  if (ran["score"].is_int()) record.score = ran["score"].as_int();
  json::Value details = json::Value::object();
  if (ran["entryId"].is_string()) details.set("entryId", ran["entryId"]);
  details.set("failed", ran["failed"]);
  record.details = details.dump();
  CT_TRY_ASSIGN(json::Value data, store_record(context, record));
  if (ran.contains("score")) data.set("score", ran["score"]);
  data.set("report", ran["report"]);
  return Reply::warned(std::move(data), context.external->warnings);
}

Result<Reply> compliance_record(Context& context, const RecordArgs& args) {
  if (args.protocol || args.entry_id) return record_protocol(context);
  if (!args.check)
    return fail(record_params_error("check", "name the check (or give protocol to run a protocol check)"));
  if (!args.passed) return fail(record_params_error("passed", "say whether the check passed"));
  if (args.strict) return fail(record_params_error("strict", "strict applies to protocol checks only"));
  ComplianceRecord record;
  record.at = context.now();
  if (const auto& id = args.id) {
    CT_TRY_ASSIGN(std::optional<Task> found, context.db().get_task(*id));
    if (!found) return fail(validate::task_not_found(*id));
    record.task_id = *id;
  }
  record.check = *args.check;
  record.passed = *args.passed;
  record.score = args.score;
  if (args.details) record.details = args.details->dump();
  CT_TRY_ASSIGN(json::Value data, store_record(context, record));
  return Reply::of(std::move(data));
}

double rate(std::int64_t passed, std::int64_t runs) {
  return runs == 0 ? 0.0 : std::round(1000.0 * static_cast<double>(passed) / static_cast<double>(runs)) / 1000.0;
}

struct ComplianceArgs {
  std::optional<std::string> id;
  std::optional<std::string> check;
  std::optional<std::string> agent;
  std::string by;
  Moment since;
  std::int64_t failures = 0;
};

Result<Reply> compliance(Context& context, const ComplianceArgs& args) {
  ComplianceQuery query;
  query.task_id = args.id;
  query.check = args.check;
  query.agent = args.agent;
  const std::string& by = args.by;
  query.group = by == "agent" ? ComplianceGroup::Agent : by == "both" ? ComplianceGroup::CheckAndAgent
                                                                       : ComplianceGroup::Check;
  query.since = args.since.at;
  CT_TRY_ASSIGN(std::vector<ComplianceSummary> summaries, context.db().compliance_summary(query));
  std::int64_t runs = 0, passed = 0;
  json::Value checks = json::Value::array();
  for (const auto& summary : summaries) {
    runs += summary.runs;
    passed += summary.passed;
    json::Value item = json::Value::object();
    if (query.group != ComplianceGroup::Agent) item.set("check", summary.check);
    if (query.group != ComplianceGroup::Check) item.set("agent", summary.agent);
    item.set("runs", summary.runs);
    item.set("passed", summary.passed);
    item.set("failed", summary.runs - summary.passed);
    item.set("passRate", rate(summary.passed, summary.runs));
    if (summary.average_score) item.set("averageScore", std::round(*summary.average_score * 10.0) / 10.0);
    item.set("lastAt", format_iso8601(summary.last_at));
    item.set("lastPassed", summary.last_passed);
    checks.push_back(std::move(item));
  }
  json::Value data = json::Value::object();
  data.set("runs", runs);
  data.set("passed", passed);
  data.set("failed", runs - passed);
  data.set("passRate", rate(passed, runs));
  data.set(query.group == ComplianceGroup::Agent ? "agents" : "checks", std::move(checks));
  query.passed = false;
  query.limit = args.failures;
  json::Value failures = json::Value::array();
  if (query.limit > 0) {
    CT_TRY_ASSIGN(std::vector<ComplianceRecord> recent, context.db().list_compliance(query));
    for (const auto& record : recent) {
      json::Value item = json::Value::object();
      item.set("check", record.check);
      if (!record.task_id.empty()) item.set("id", record.task_id);
      item.set("at", format_iso8601(record.at));
      if (record.score) item.set("score", *record.score);
      if (!record.details.empty()) {
        auto details = json::parse(record.details);
        item.set("details", details ? std::move(*details) : json::Value(record.details));
      }
      if (!record.session.empty()) item.set("session", record.session);
      if (!record.agent.empty()) item.set("agent", record.agent);
      failures.push_back(std::move(item));
    }
  }
  data.set("recentFailures", std::move(failures));
  return Reply::noted(std::move(data), no_data_if(runs == 0));
}


void register_schema(Registry& registry) {
  const auto schema_args =
      bind(field(&SchemaArgs::quick, {.name = "quick", .type = ParamType::Bool,
                                      .description = "the quick integrity check instead of the full one (large stores)"}),
           field(&SchemaArgs::limit, validate::problems_limit_param()));
  registry.add({.domain = "validate", .name = "schema", .gateway = Gateway::Query,
                .summary = "Check the data rules",
                .params = schema_args.specs(),
                .returns = "{valid, tasks, total, repairable, byCheck?{check:n}, problems[{check, taskId?, session?, "
                           "message, repairable, fix}], memory?{stale, entries[{id,stale}] (10)}}; repairable problems are what validate.fix repairs. An invalid "
                           "store fails with E_VALIDATION (exit 6), the same report in error.details",
                .errors = {ErrorCode::Validation},
                .examples = {{R"({})", "is the store consistent?"}, {R"({"quick":true,"limit":20})", "a faster check"}},
                .idempotent = true, .tier = 1, .shortcut = "validate", .aliases = {"system.diagnostics"},
                .handler = schema_args.handler(schema)});
}

void register_task(Registry& registry) {
  const auto task_args = bind(field(&TaskArgs::id, {.name = "id", .type = ParamType::TaskId, .required = true,
                                                    .description = "Task id, e.g. T001", .positional = true}));
  registry.add({.domain = "validate", .name = "task", .gateway = Gateway::Query,
                .summary = "Check one task: fields, timestamps, dependencies, parent",
                .params = task_args.specs(),
                .returns = "{id, valid, problems[{check, taskId, message, repairable, fix}]}; problems fail with "
                           "E_VALIDATION (exit 6), the report in error.details",
                .errors = {ErrorCode::NotFound, ErrorCode::Validation},
                .examples = {{R"({"id":"T001"})", "is T001 sound?"}},
                .idempotent = true, .tier = 2, .aliases = {"tasks.lint", "tasks.batch-validate"},
                .handler = task_args.handler(task)});
}

void register_fix(Registry& registry) {
  const auto fix_args = bind(field(&FixArgs::dry_run, {.name = "dryRun", .type = ParamType::Bool,
                                                      .description = "List the repairs without changing anything",
                                                      .dry_run = true}));
  registry.add({.domain = "validate", .name = "fix", .gateway = Gateway::Mutate,
                .summary = "Repair what validate.schema finds that is safe to repair",
                .params = fix_args.specs(),
                .returns = "{repaired, repairs[{check, taskId?, session?, action}], remaining[problem], valid, dryRun?}; "
                           "E_NO_CHANGE note when there was nothing to repair",
                .examples = {{R"({"dryRun":true})", "what would be repaired?"}, {R"({})", "repair"}},
                .tier = 2, .handler = fix_args.handler(fix)});
}

void register_compliance(Registry& registry) {
  const auto compliance_args = bind(
      field(&ComplianceArgs::id, {.name = "id", .type = ParamType::TaskId, .description = "Only results about this task"}),
      field(&ComplianceArgs::check, {.name = "check", .type = ParamType::String, .max = 64,
                                     .description = "Only this check (protocol.research, test.run, …)"}),
      field(&ComplianceArgs::agent, {.name = "agent", .type = ParamType::String, .max = 200,
                                     .description = "Only results of this agent (the recording session's agent)"}),
      field(&ComplianceArgs::by, {.name = "by", .type = ParamType::Enum, .default_json = R"("check")",
                                  .choices = {"check", "agent", "both"},
                                  .description = "Sum per check (checks[]), per agent (agents[]), or per check and agent"}),
      field(&ComplianceArgs::since, {.name = "since", .type = ParamType::String, .max = 40,
                                     .description = "Only results at or after this: 2026-01-31, a time, today, "
                                                    "yesterday, or an age (3d, 12h)"}),
      field(&ComplianceArgs::failures, {.name = "failures", .type = ParamType::Int, .default_json = "5", .min = 0,
                                        .max = 100, .description = "How many of the latest failures to list"}));
  registry.add({.domain = "validate", .name = "compliance", .gateway = Gateway::Query,
                .summary = "Summarise recorded protocol-check results per check or agent",
                .params = compliance_args.specs(),
                .returns = "{runs, passed, failed, passRate, checks[{check, agent? (by both), runs, passed, failed, "
                           "passRate, averageScore?, lastAt, lastPassed}] (by agent: agents[{agent, …}] instead), "
                           "recentFailures[{check, id?, at, score?, details?, session?, agent?}]}; E_NO_DATA note "
                           "when nothing matches",
                .examples = {{R"({})", "how compliant is the work so far?"},
                             {R"({"id":"T001"})", "results about T001"},
                             {R"({"check":"protocol.implementation","by":"both"})", "each agent's implementation checks"}},
                .idempotent = true, .tier = 2, .aliases = {"compliance.violations"},
                .original_names = {"validate.compliance.summary", "system.compliance"},
                .handler = compliance_args.handler(compliance)});
}

void register_compliance_record(Registry& registry) {
  const auto record_args = bind(
      field(&RecordArgs::check, {.name = "check", .type = ParamType::String, .min = 1, .max = 64,
                                 .pattern = "^[a-z0-9][a-z0-9._:-]*$",
                                 .description = "The check's name, e.g. lint.docs (with protocol: protocol.<name>, "
                                                "the default)",
                                 .positional = true}),
      field(&RecordArgs::passed, {.name = "passed", .type = ParamType::Bool,
                                  .description = "Whether it passed (required without protocol; not with it)"}),
      field(&RecordArgs::id, {.name = "id", .type = ParamType::TaskId, .description = "The task it checked"}),
      field(&RecordArgs::protocol, validate::protocol_param("Run this protocol's check (validate.protocol) and record "
                                                            "its outcome, graded by the server")),
      field(&RecordArgs::entry_id, validate::entry_param()), field(&RecordArgs::strict, validate::strict_param()),
      field(&RecordArgs::score, {.name = "score", .type = ParamType::Int, .min = 0, .max = 100,
                                 .description = "Grade 0–100 (without protocol)"}),
      field(&RecordArgs::details, {.name = "details", .type = ParamType::Object,
                                   .description = "Findings, as a JSON object (without protocol)"}));
  registry.add({.domain = "validate", .name = "compliance.record", .gateway = Gateway::Mutate,
                .summary = "Record a check's result, or run a protocol check and record it",
                .params = record_args.specs(),
                .returns = "{recorded, id?, check, passed}; with protocol (or entryId) also {score, report} (as "
                           "validate.protocol's), recorded as check protocol.<name> with the failed rules in its "
                           "details. A failed protocol check is a success with passed:false (and a warning): "
                           "recorded, not an error, which would roll the record back",
                .errors = {ErrorCode::NotFound},
                .examples = {{R"({"check":"protocol.implementation","passed":true,"id":"T001","score":90})",
                              "record a passed check"},
                             {R"({"id":"T001","protocol":"decomposition"})", "check T001's decomposition and record it"}},
                .tier = 2, .external = record_args.handler(run_protocol_external), .external_checks_only = true,
                .handler = record_args.handler(compliance_record)});
}

}  // namespace

void register_validate_domain(Registry& registry) {
  register_schema(registry);
  register_task(registry);
  validate::register_protocol_operations(registry);
  register_fix(registry);
  register_compliance(registry);
  register_compliance_record(registry);
}

}  // namespace ct
