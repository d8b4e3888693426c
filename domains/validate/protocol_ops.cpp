// validate.protocol and validate.manifest — the protocol stack of seed 003 checked against a task
// or a research manifest entry (engines/rules/protocol.h holds the rules; this file collects what they
// read from the store and the project), and the manifest's entries checked against their rules,
// their tasks and their files' checksums. Both are reads: validate.compliance.record is the
// mutation that records a protocol check (validate_domain.cpp).
#include <algorithm>
#include <map>
#include <set>

#include "core/json_parse.h"
#include "core/text.h"
#include "domains/analysis.h"
#include "domains/bind.h"
#include "domains/projection.h"
#include "domains/validate/protocol_check.h"
#include "domains/verdict.h"
#include "engines/rules/lifecycle.h"
#include "engines/rules/research.h"

namespace ct::validate {
namespace {

/// Task files a rule reads at most (implementation, contribution): a task lists a handful.
constexpr std::size_t kMaxTaskFiles = 50;
/// Research entries linked to one task considered when the subject's entry is looked up.
constexpr std::int64_t kMaxLinkedEntries = 50;

Error entry_not_found(const std::string& id) {
  return Error(ErrorCode::NotFound, "Research entry " + id + " not found")
      .with_fix(call("research.find", {{"query", id}}))
      .with_alternative("List research entries", "research.list")
      .with_detail("entryId", id);
}

std::string today(Context& context) { return format_iso8601(context.now()).substr(0, 10); }

/// The newest unarchived entry linked to `task`, preferring the protocol's agentType.
Result<std::optional<ResearchEntry>> entry_of_task(Context& context, const Task& task, const ProtocolInfo& info,
                                                   std::vector<std::string>& warnings) {
  ResearchQuery query;
  query.task_id = task.id;
  query.limit = kMaxLinkedEntries;
  CT_TRY_ASSIGN(std::vector<ResearchEntry> linked, context.db().list_research(query));  // newest first
  std::vector<const ResearchEntry*> matching;
  for (const auto& entry : linked)
    if (std::find(info.agent_types.begin(), info.agent_types.end(), entry.agent_type) != info.agent_types.end())
      matching.push_back(&entry);
  if (matching.size() > 1)
    warnings.push_back(task.id + " has " + std::to_string(matching.size()) + " entries of agentType " +
                       matching.front()->agent_type + "; checked the newest, " + matching.front()->id +
                       " (name another with entryId)");
  if (!matching.empty()) return std::optional<ResearchEntry>(*matching.front());
  // None of the protocol's agentType: for a protocol checked on its output, the newest, so that
  // its agentType rule says what is wrong; the others check the task, and another kind of output
  // linked to it (research on an epic) is none of their business.
  if (info.needs_entry && !linked.empty()) return std::optional<ResearchEntry>(linked.front());
  return std::optional<ResearchEntry>();
}

/// The newest test.run that counts for the subject: its own (validate.test.run {id}), or a
/// project-wide one made since the task was created; any run when there is no task.
Result<std::optional<TestRunEvidence>> latest_test_run(Context& context, const std::optional<Task>& task) {
  std::vector<ComplianceQuery> queries;
  ComplianceQuery query;
  query.check = std::string(kTestRunCheck);
  query.limit = 1;
  if (task) {
    query.task_id = task->id;
    queries.push_back(query);
    query.task_id = "";
    query.since = task->created_at;
  }
  queries.push_back(query);
  std::optional<ComplianceRecord> newest;
  for (const auto& each : queries) {
    CT_TRY_ASSIGN(std::vector<ComplianceRecord> found, context.db().list_compliance(each));
    if (!found.empty() && (!newest || found.front().id > newest->id)) newest = found.front();
  }
  if (!newest) return std::optional<TestRunEvidence>();
  TestRunEvidence run;
  run.at = newest->at;
  run.passed = newest->passed;
  run.task_id = newest->task_id;
  if (auto details = json::parse(newest->details); details && details->is_object()) {
    const json::Value& summary = (*details)["summary"];
    if (summary["failed"].is_number()) run.failed = summary["failed"].as_int();
    if (summary["coverage"].is_number()) run.coverage = summary["coverage"].as_double();
  }
  return std::optional<TestRunEvidence>(run);
}

/// The subject's own depth (1 for a root task), walking up its parents.
Result<int> depth_of(Context& context, const Task& task) {
  int depth = 1;
  std::string parent = task.parent;
  while (!parent.empty() && depth < 16) {  // the store keeps parents acyclic; 16 only guards a broken one
    CT_TRY_ASSIGN(std::optional<Task> up, context.db().get_task(parent));
    if (!up) break;
    ++depth;
    parent = up->parent;
  }
  return depth;
}

Result<void> collect_subtree(Context& context, ProtocolEvidence& evidence) {
  CT_TRY_ASSIGN(Graph graph, load_scope_graph(context, evidence.task->id));
  evidence.cycles = graph.cycles;
  std::vector<std::string> ids;
  for (const auto& task : graph.tasks) ids.push_back(task.id);
  if (!ids.empty()) {
    CT_TRY_ASSIGN(evidence.subtree, context.db().get_tasks(ids));
  }
  CT_TRY_ASSIGN(evidence.depth, depth_of(context, *evidence.task));
  return {};
}

void read_task_files(Context& context, ProtocolEvidence& evidence) {
  const auto& files = evidence.task->files;
  for (std::size_t i = 0; i < files.size() && i < kMaxTaskFiles; ++i)
    evidence.task_files.push_back(read_project_file(context.work_root(), files[i], kMaxProtocolFileBytes, false));
}

/// Other active tasks that list one of the subject's files.
Result<void> collect_overlaps(Context& context, ProtocolEvidence& evidence) {
  const Task& task = *evidence.task;
  if (task.files.empty()) return {};
  const std::set<std::string> mine(task.files.begin(), task.files.end());
  CT_TRY_ASSIGN(std::vector<GraphTask> all, context.db().graph_tasks(""));
  for (const auto& other : all) {
    if (other.id == task.id || other.status != TaskStatus::Active) continue;
    for (const auto& file : other.files)
      if (mine.contains(file)) {
        evidence.overlaps.push_back({other.id, file});
        break;
      }
  }
  return {};
}

Result<void> collect_release(Context& context, ProtocolEvidence& evidence) {
  CT_TRY_ASSIGN(std::vector<Release> releases, context.db().list_releases());  // newest created first
  const std::string& id = evidence.task->id;
  for (const auto& release : releases)
    if (std::find(release.tasks.begin(), release.tasks.end(), id) != release.tasks.end()) {
      evidence.release = release;
      break;
    }
  if (!evidence.release) return {};
  const auto& mine = evidence.release->released_at;
  for (const auto& release : releases)
    if (release.version != evidence.release->version && release.status == ReleaseStatus::Released &&
        release.released_at && mine && *release.released_at > *mine)
      evidence.release_superseded = true;
  const auto& root = context.project->root;
  evidence.changelog = read_project_file(root, "CHANGELOG.md");
  std::vector<std::string> names = {"VERSION", "package.json"};
  const std::string configured = context.config->get_string("release.versionFile");
  if (!configured.empty() && std::find(names.begin(), names.end(), configured) == names.end())
    names.push_back(configured);
  for (const auto& name : names) {
    ProjectFile file = read_project_file(root, name);
    if (file.state != FileState::Missing) evidence.version_files.push_back(std::move(file));
  }
  return {};
}

Result<void> collect_checks(Context& context, ProtocolEvidence& evidence) {
  ComplianceQuery query;
  query.task_id = evidence.task->id;
  CT_TRY_ASSIGN(evidence.checks, context.db().compliance_summary(query));
  return {};
}

/// The verification gates the project requires and those the task has not passed (read only).
Result<void> collect_gates(Context& context, ProtocolEvidence& evidence) {
  evidence.required_gates = context.config->get_strings("verification.required");
  if (evidence.required_gates.empty()) return {};
  LifecycleEngine lifecycle(context.db(), *context.config, context.now(), Actor{}, [](FieldChange) {});
  CT_TRY_ASSIGN(evidence.missing_gates, lifecycle.missing_required_gates(evidence.task->id));
  return {};
}

/// The subject as named: the entry entryId names and the task id names (E_NOT_FOUND for either
/// that does not exist); E_INVALID_PARAMS when neither is named.
Result<void> load_subject(Context& context, const ProtocolRequest& request, ProtocolEvidence& evidence) {
  if (!request.task_id && !request.entry_id)
    return fail(Error(ErrorCode::InvalidParams, "name the subject: id (a task), entryId (a research entry), or both")
                    .with_fix(call("validate.protocol", {{"id", "T001"}, {"protocol", "implementation"}}))
                    .with_detail("field", "id"));
  if (request.entry_id) {
    CT_TRY_ASSIGN(evidence.entry, context.db().get_research(*request.entry_id));
    if (!evidence.entry) return fail(entry_not_found(*request.entry_id));
  }
  if (request.task_id) {
    CT_TRY_ASSIGN(evidence.task, context.db().get_task(*request.task_id));
    if (!evidence.task) return fail(task_not_found(*request.task_id));
  }
  return {};
}

/// The protocol named, else the one the entry's agentType implies (saying so); E_INVALID_PARAMS
/// when it implies none.
Result<Protocol> chosen_protocol(const ProtocolRequest& request, const ProtocolEvidence& evidence,
                                 std::vector<std::string>& warnings) {
  if (request.protocol) return *request.protocol;
  if (auto implied = evidence.entry ? protocol_for_agent_type(evidence.entry->agent_type) : std::nullopt) {
    warnings.push_back("checked against the " + std::string(to_string(*implied)) + " protocol, which " +
                       evidence.entry->id + "'s agentType " + evidence.entry->agent_type + " implies");
    return *implied;
  }
  std::vector<std::string> names;
  for (auto name : protocol_names()) names.emplace_back(name);
  const std::string why = evidence.entry ? evidence.entry->id + "'s agentType '" + evidence.entry->agent_type +
                                               "' implies none"
                                         : "a task alone implies none";
  return fail(Error(ErrorCode::InvalidParams, "protocol: name the protocol to check; " + why)
                  .with_fix("add protocol, one of " + join(names, ", "))
                  .with_detail("field", "protocol")
                  .with_detail("valid", json::Value::array_of(names)));
}

/// Completes the subject — an entry's task, a task's entry — and reads the entry's links and its
/// output file.
Result<void> complete_subject(Context& context, const ProtocolInfo& info, ProtocolEvidence& evidence,
                              std::vector<std::string>& warnings) {
  if (!evidence.task && evidence.entry) {
    for (const auto& id : evidence.entry->linked_tasks) {
      CT_TRY_ASSIGN(evidence.task, context.db().get_task(id));
      if (!evidence.task) continue;
      if (evidence.entry->linked_tasks.size() > 1)
        warnings.push_back("checked with " + id + ", the first task " + evidence.entry->id + " links (name another "
                           "with id)");
      break;
    }
  }
  if (!evidence.entry && evidence.task) {
    CT_TRY_ASSIGN(evidence.entry, entry_of_task(context, *evidence.task, info, warnings));
  }
  if (evidence.entry) {
    for (const auto& id : evidence.entry->linked_tasks) {
      CT_TRY_ASSIGN(std::optional<Task> linked, context.db().get_task(id));
      if (!linked) evidence.missing_links.push_back(id);
    }
    evidence.output = read_project_file(context.project->root, evidence.entry->file);
  }
  return {};
}

/// What each protocol's rules read beyond the subject.
Result<void> collect_evidence(Context& context, Protocol protocol, ProtocolEvidence& evidence) {
  const bool task = evidence.task.has_value();
  const bool tests = protocol == Protocol::Implementation || protocol == Protocol::Release ||
                     protocol == Protocol::Validation || protocol == Protocol::Testing;
  if (tests) {
    CT_TRY_ASSIGN(evidence.test_run, latest_test_run(context, evidence.task));
  }
  if (task && protocol == Protocol::Decomposition) CT_TRY(collect_subtree(context, evidence));
  if (task && (protocol == Protocol::Implementation || protocol == Protocol::Contribution))
    read_task_files(context, evidence);
  if (task && (protocol == Protocol::Contribution || protocol == Protocol::Validation))
    CT_TRY(collect_checks(context, evidence));
  if (task && protocol == Protocol::Contribution) {
    CT_TRY(collect_overlaps(context, evidence));
    CT_TRY(collect_gates(context, evidence));
  }
  if (task && protocol == Protocol::Release) CT_TRY(collect_release(context, evidence));
  if (protocol == Protocol::Testing) {
    evidence.test_command = context.config->get_string("validate.testCommand");
    evidence.coverage_threshold = context.config->get_int("validate.coverageThreshold");
  }
  return {};
}

}  // namespace

std::string protocol_check_name(Protocol protocol) { return "protocol." + std::string(to_string(protocol)); }

ProtocolRequest protocol_request(std::optional<std::string> task_id, std::optional<std::string> entry_id,
                                 const std::optional<std::string>& protocol, bool strict) {
  ProtocolRequest request;
  request.task_id = std::move(task_id);
  request.entry_id = std::move(entry_id);
  if (protocol) request.protocol = parse_protocol(*protocol);
  request.strict = strict;
  return request;
}

Result<ProtocolCheck> run_protocol_check(Context& context, const ProtocolRequest& request) {
  ProtocolCheck check;
  ProtocolEvidence& evidence = check.evidence;
  auto& warnings = check.warnings;
  CT_TRY(load_subject(context, request, evidence));
  CT_TRY_ASSIGN(const Protocol protocol, chosen_protocol(request, evidence, warnings));
  CT_TRY(complete_subject(context, protocol_info(protocol), evidence, warnings));
  CT_TRY(collect_evidence(context, protocol, evidence));
  check.report = check_protocol(protocol, evidence, request.strict);
  if (!request.strict)
    for (const auto& result : check.report.rules)
      if (result.status == RuleStatus::Fail && result.rule->level == RuleLevel::Should)
        warnings.push_back(std::string(result.rule->id) + " (SHOULD): " + result.message);
  return check;
}

json::Value protocol_report_json(const ProtocolCheck& check, bool full) {
  const ProtocolReport& report = check.report;
  json::Value out = json::Value::object();
  out.set("protocol", to_string(report.protocol));
  json::Value subject = json::Value::object();
  if (check.evidence.task) subject.set("id", check.evidence.task->id);
  if (check.evidence.entry) subject.set("entryId", check.evidence.entry->id);
  out.set("subject", std::move(subject));
  out.set("valid", report.valid);
  out.set("score", report.score);
  out.set("passed", report.passed);
  out.set("failed", report.failed);
  out.set("skipped", report.skipped);
  json::Value rules = json::Value::array();
  for (const auto& result : report.rules) {
    if (!full && result.status == RuleStatus::Pass) continue;
    json::Value item = json::Value::object();
    item.set("id", result.rule->id);
    item.set("level", to_string(result.rule->level));
    item.set("status", to_string(result.status));
    if (full) item.set("text", result.rule->text);
    if (!result.message.empty()) item.set("message", result.message);
    if (result.status == RuleStatus::Fail) item.set("fix", result.fix.to_value());
    rules.push_back(std::move(item));
  }
  out.set("rules", std::move(rules));
  return out;
}

std::string protocol_summary(const ProtocolCheck& check) {
  const ProtocolReport& report = check.report;
  std::string subject = check.evidence.task ? check.evidence.task->id : check.evidence.entry->id;
  const std::string name(to_string(report.protocol));
  if (const RuleResult* failure = report.first_failure())
    return subject + " breaks the " + name + " protocol: " + std::string(failure->rule->id) + " " + failure->message;
  return "none of the " + name + " protocol's MUST rules could be checked for " + subject +
         ": the report proves nothing (see the skipped rules)";
}

Advice protocol_fix(const ProtocolCheck& check) {
  const ProtocolReport& report = check.report;
  if (const RuleResult* failure = report.first_failure()) return failure->fix;
  for (const auto& result : report.rules)
    if (result.rule->level == RuleLevel::Must && result.status == RuleStatus::Skipped) return result.fix;
  return {};
}

ParamSpec protocol_param(std::string_view description) {
  return {.name = "protocol", .type = ParamType::Enum, .choices = protocol_names(), .description = description};
}

ParamSpec entry_param() {
  return {.name = "entryId", .type = ParamType::String, .max = 120, .pattern = kResearchIdPattern,
          .description = "A research manifest entry (T001-auth-options): the output checked", .single_line = true};
}

Error task_not_found(const std::string& id) {
  return Error(ErrorCode::NotFound, "Task " + id + " not found")
      .with_fix(call("tasks.find", {{"query", id}}))
      .with_detail("id", id);
}

ParamSpec problems_limit_param() {
  return {.name = "limit", .type = ParamType::Int, .default_json = "100", .min = 1, .max = 10000,
          .description = "Problems to list (total and byCheck count them all)"};
}

ParamSpec strict_param() {
  return {.name = "strict", .type = ParamType::Bool, .default_json = "false",
          .description = "SHOULD rules count as MUST rules: any failure fails the check"};
}

namespace {

json::Value rules_json(const ProtocolInfo& info) {
  json::Value out = json::Value::object();
  out.set("protocol", info.name);
  out.set("purpose", info.purpose);
  out.set("code", to_string(info.code));
  out.set("agentTypes", json::Value::array_of(std::vector<std::string>(info.agent_types.begin(), info.agent_types.end())));
  json::Value rules = json::Value::array();
  for (const auto& rule : info.rules) {
    json::Value item = json::Value::object();
    item.set("id", rule.id);
    item.set("level", to_string(rule.level));
    item.set("text", rule.text);
    if (rule.code) item.set("code", to_string(*rule.code));
    rules.push_back(std::move(item));
  }
  out.set("rules", std::move(rules));
  return out;
}

struct ProtocolArgs {
  std::optional<std::string> id;
  std::optional<std::string> entry_id;
  std::optional<std::string> protocol;
  bool strict = false;
  std::string detail;
};

Result<Reply> protocol(Context& context, const ProtocolArgs& args) {
  if (!args.id && !args.entry_id) {
    // No subject: the protocol's rules, for an agent about to produce its output.
    const auto& name = args.protocol;
    if (!name) return fail(Error(ErrorCode::InvalidParams, "name the subject (id, entryId) or, for its rules, a protocol")
                                .with_fix(call("validate.protocol", {{"protocol", "research"}}))
                                .with_detail("field", "id"));
    return Reply::of(rules_json(protocol_info(*parse_protocol(*name))));
  }
  CT_TRY_ASSIGN(ProtocolCheck check,
                run_protocol_check(context, protocol_request(args.id, args.entry_id, args.protocol, args.strict)));
  json::Value report = protocol_report_json(check, args.detail == "full");
  return verdict(check.report.valid, std::move(report), std::move(check.warnings), protocol_summary(check),
                 protocol_fix(check), check.report.error_code());
}

// -- validate.manifest ------------------------------------------------------------------------

struct ManifestProblem {
  std::string entry_id;
  std::string check;       // entry | linkedTask | fileMissing | fileOutside | fileUnreadable | checksumMismatch | checksumUnknown
  bool error = true;       // false: a warning, the entry stays valid
  std::string message;
  Advice fix;
  std::string field;
};

Advice show_fix(const std::string& id) {
  return call("research.show", {{"id", id}});
}

Result<void> check_entry(Context& context, const ResearchEntry& entry, std::vector<ManifestProblem>& problems) {
  const auto& root = context.project->root;
  // The rules of a new entry (engines/rules/research.h), applied to what is stored.
  std::vector<std::string> rule_warnings;
  auto rules = parse_research_fields(research_manifest_json(entry), root, today(context), rule_warnings);
  if (!rules) {
    const json::Value& field = rules.error().details["field"];
    problems.push_back({entry.id, "entry", true, entry.id + ": " + rules.error().message, rules.error().fix,
                        field.is_string() ? field.as_string() : ""});
  }
  for (auto& warning : rule_warnings) problems.push_back({entry.id, "entry", false, std::move(warning), show_fix(entry.id), ""});
  for (const auto& id : entry.linked_tasks) {
    CT_TRY_ASSIGN(std::optional<Task> linked, context.db().get_task(id));
    if (!linked)
      problems.push_back({entry.id, "linkedTask", true, entry.id + " links " + id + ", which does not exist",
                          call("research.unlink", {{"id", entry.id}, {"taskId", id}}),
                          "linkedTasks"});
  }
  ProjectFile file = read_project_file(root, entry.file, 0);  // the checksum only
  switch (file.state) {
    case FileState::Missing:
      // A blocked output may never have been written (research.add only warns then too).
      if (entry.status != ResearchStatus::Blocked)
        problems.push_back({entry.id, "fileMissing", true, entry.id + ": " + entry.file + " does not exist",
                            "write the output to " + entry.file + ", or archive the entry: " +
                                call("research.archive", {{"before", "…"}}),
                            "file"});
      break;
    case FileState::Outside:
      problems.push_back({entry.id, "fileOutside", true, entry.id + ": " + entry.file + " leads outside the project",
                          "move the output inside the project and record it again", "file"});
      break;
    case FileState::NotRegular:
    case FileState::Unreadable:
      problems.push_back({entry.id, "fileUnreadable", true,
                          entry.id + ": " + entry.file + " cannot be read (" + std::string(to_string(file.state)) + ")",
                          "check the file's type and permissions", "file"});
      break;
    case FileState::Read:
      if (entry.file_checksum.empty())
        problems.push_back({entry.id, "checksumUnknown", false,
                            entry.id + ": no fileChecksum was recorded (the file did not exist then), so a change "
                                       "cannot be told",
                            "record the finished output again under a new id: research.add stores its SHA-256",
                            "fileChecksum"});
      else if (entry.file_checksum != file.sha256)
        problems.push_back({entry.id, "checksumMismatch", true,
                            entry.id + ": " + entry.file + " changed after it was recorded (SHA-256 " +
                                file.sha256.substr(0, 12) + "…, recorded " + entry.file_checksum.substr(0, 12) + "…)",
                            "review the change; record the new version under a new id with research.add",
                            "fileChecksum"});
      break;
  }
  return {};
}

json::Value problem_json(const ManifestProblem& problem) {
  json::Value out = json::Value::object();
  out.set("entryId", problem.entry_id);
  out.set("check", problem.check);
  out.set("severity", problem.error ? "error" : "warning");
  out.set("message", problem.message);
  if (!problem.field.empty()) out.set("field", problem.field);
  out.set("fix", problem.fix.to_value());
  return out;
}

struct ManifestArgs {
  std::optional<std::string> entry_id;
  std::int64_t limit = 0;
};

Result<Reply> manifest(Context& context, const ManifestArgs& args) {
  std::vector<ResearchEntry> entries;
  if (const auto& id = args.entry_id) {
    CT_TRY_ASSIGN(std::optional<ResearchEntry> entry, context.db().get_research(*id));
    if (!entry) return fail(entry_not_found(*id));
    entries.push_back(std::move(*entry));
  } else {
    CT_TRY_ASSIGN(entries, context.db().list_research(ResearchQuery{}));
  }
  std::vector<ManifestProblem> problems;
  for (const auto& entry : entries) CT_TRY(check_entry(context, entry, problems));
  // Errors first, each group in entry order.
  std::stable_partition(problems.begin(), problems.end(), [](const ManifestProblem& p) { return p.error; });
  const auto errors = std::count_if(problems.begin(), problems.end(), [](const ManifestProblem& p) { return p.error; });

  json::Value data = json::Value::object();
  data.set("entries", static_cast<std::int64_t>(entries.size()));
  data.set("total", static_cast<std::int64_t>(problems.size()));
  data.set("errors", static_cast<std::int64_t>(errors));
  if (!problems.empty()) {
    std::map<std::string, std::int64_t> counts;
    for (const auto& problem : problems) ++counts[problem.check];
    json::Value by_check = json::Value::object();
    for (const auto& [check, count] : counts) by_check.set(check, count);
    data.set("byCheck", std::move(by_check));
  }
  const auto limit = static_cast<std::size_t>(args.limit);
  json::Value listed = json::Value::array();
  for (std::size_t i = 0; i < problems.size() && i < limit; ++i) listed.push_back(problem_json(problems[i]));
  data.set("problems", std::move(listed));
  std::vector<std::string> warnings;
  if (problems.size() > limit)
    warnings.push_back("showing " + std::to_string(limit) + " of " + std::to_string(problems.size()) +
                       " problems; raise limit to see more");
  if (entries.empty()) {
    data.set("valid", true);
    return Reply::noted(std::move(data), ErrorCode::NoData, {"the research manifest is empty: nothing to check"});
  }
  const bool valid = errors == 0;
  std::string summary = valid ? "" : std::to_string(errors) + " problem" + (errors == 1 ? "" : "s") +
                                         " in the research manifest, first: " + problems.front().message;
  return verdict(valid, std::move(data), std::move(warnings), std::move(summary), valid ? Advice() : problems.front().fix);
}

}  // namespace

void register_protocol_operations(Registry& registry) {
  const auto protocol_args = bind(
      field(&ProtocolArgs::id, {.name = "id", .type = ParamType::TaskId,
                                .description = "The task checked (else the entry's first linked task)", .positional = true}),
      field(&ProtocolArgs::entry_id, entry_param()),
      field(&ProtocolArgs::protocol,
            protocol_param("research, consensus, specification, decomposition, implementation, contribution, "
                           "release, validation or testing (default: the one the entry's agentType implies). Alone: "
                           "that protocol's rules")),
      field(&ProtocolArgs::strict, strict_param()), field(&ProtocolArgs::detail, detail_param("\"compact\"")));
  registry.add({.domain = "validate", .name = "protocol", .gateway = Gateway::Query,
                .summary = "Check a task or research output against a protocol's rules",
                .params = protocol_args.specs(),
                .returns = "{protocol, subject{id?, entryId?}, valid, score (100 − 20 per failed MUST − 5 per failed "
                           "SHOULD), passed, failed, skipped, rules[{id, level, status fail|skipped (every rule with "
                           "detail:full), message?, fix?}]}; failed SHOULD rules are warnings. A failed MUST (or every "
                           "MUST skipped) fails with the protocol's code (E_PROTOCOL_RESEARCH 60 … E_TESTS_SKIPPED "
                           "69, E_COVERAGE_INSUFFICIENT 70), the report in error.details. Without id and entryId: "
                           "{protocol, purpose, code, agentTypes, rules[{id, level, text}]}",
                .errors = {ErrorCode::NotFound, ErrorCode::ProtocolResearch, ErrorCode::ProtocolConsensus,
                           ErrorCode::ProtocolSpecification, ErrorCode::ProtocolDecomposition,
                           ErrorCode::ProtocolImplementation, ErrorCode::ProtocolContribution,
                           ErrorCode::ProtocolRelease, ErrorCode::ProtocolValidation, ErrorCode::TestsSkipped,
                           ErrorCode::CoverageInsufficient},
                .examples = {{R"({"id":"T002","protocol":"implementation"})", "does T002 follow the implementation protocol?"},
                             {R"({"protocol":"research"})", "the research protocol's rules"}},
                .idempotent = true, .tier = 2, .aliases = {"output"}, .handler = protocol_args.handler(protocol)});
  const auto manifest_args =
      bind(field(&ManifestArgs::entry_id, entry_param()), field(&ManifestArgs::limit, problems_limit_param()));
  registry.add({.domain = "validate", .name = "manifest", .gateway = Gateway::Query,
                .summary = "Check research manifest entries, their tasks and file checksums",
                .params = manifest_args.specs(),
                .returns = "{valid, entries, total, errors, byCheck?{check:n}, problems[{entryId, check (entry|"
                           "linkedTask|fileMissing|fileOutside|fileUnreadable|checksumMismatch|checksumUnknown), "
                           "severity error|warning, message, field?, fix}]}: every unarchived entry (or entryId) "
                           "against the entry rules, its linked tasks and its file's SHA-256. Errors fail with "
                           "E_VALIDATION (exit 6), the report in error.details; E_NO_DATA note for an empty manifest",
                .errors = {ErrorCode::NotFound, ErrorCode::Validation},
                .examples = {{R"({})", "is the research manifest sound?"},
                             {R"({"entryId":"T001-auth-options"})", "one entry"}},
                .idempotent = true, .tier = 2, .aliases = {"research.validate"},
                .original_names = {"research.manifest.validate"}, .handler = manifest_args.handler(manifest)});
}

}  // namespace ct::validate
