// tasks domain — tasks.complete and tasks.evidence: a task finished once its lifecycle's stages and
// gates and verification.evidence allow it (evidence checked in the external step), with a
// learning it leaves remembered in the same transaction; evidence recorded before or after.
#include "core/text.h"
#include "domains/evidence.h"
#include "domains/memory/memory_common.h"
#include "domains/pipeline.h"
#include "domains/claims.h"
#include "domains/tasks/tasks_common.h"
#include "engines/rules/lifecycle.h"

namespace ct::tasks {
namespace {

struct CompleteArgs {
  std::string id;
  std::optional<std::string> notes;
  std::optional<std::string> remember;
  json::Value evidence;  // null when not given
  json::Value waive;     // null when not given
  std::optional<std::int64_t> if_version;
};

Result<Reply> complete(Context& context, const CompleteArgs& args) {
  const TimeMs now = context.now();
  auto engine_ = engine(context, now);
  // The lifecycle's stages and verification gates come first (engines/rules/lifecycle.h): strict
  // enforcement refuses, advisory warns. A task already done is E_NO_CHANGE, never refused.
  std::vector<std::string> gate_warnings;
  CT_TRY_ASSIGN(Task task, engine_.get_live(args.id));
  if (task.status != TaskStatus::Done) {
    CT_TRY(refuse_others_claim(context, task.id, "complete"));
    CT_TRY_ASSIGN(std::string agent, context.agent_name());
    LifecycleEngine lifecycle(context.db(), *context.config, now, Actor{agent, context.session, context.principal.id}, nullptr);
    CT_TRY(lifecycle.check_complete(task, gate_warnings));
  }
  // Evidence given with the call is recorded first; then verification.evidence judges the task's
  // evidence as a whole: none stale, every acceptance criterion covered or waived.
  std::vector<EvidenceAtom> recorded;
  if (task.status != TaskStatus::Done) {
    CT_TRY_ASSIGN(recorded, evidence::record_atoms(context, args.waive, task, "", gate_warnings));
    CT_TRY(evidence::completion_rules(context, task, gate_warnings));
  }
  CT_TRY_ASSIGN(CompleteResult result, engine_.complete(args.id, args.notes.value_or(""), args.if_version));
  result.warnings.insert(result.warnings.begin(), gate_warnings.begin(), gate_warnings.end());
  json::Value data = json::Value::object();
  data.set("id", result.task.id);
  if (!result.unblocked.empty()) data.set("unblocked", json::Value::array_of(result.unblocked));
  if (!recorded.empty()) {
    std::vector<std::string> ids;
    for (const auto& atom : recorded) ids.push_back(atom.id);
    data.set("evidence", json::Value::array_of(ids));
  }
  // A learning kept in the same transaction: scoped to the task's files, anchored to it as done.
  if (const auto& text = args.remember; text && !result.already_done) {
    MemoryEntry entry;
    entry.kind = "learning";
    const std::string_view all = trim(*text);
    const auto newline = all.find('\n');
    entry.title = clip(trim(all.substr(0, newline)), 200);
    if (newline != std::string_view::npos) entry.body = memory::normalized_body(all.substr(newline + 1));
    for (const auto& file : result.task.files)
      if (auto normal = memory::normal_scope_path(file); normal && !normal->empty()) entry.files.push_back(*normal);
    entry.source_task = result.task.id;
    CT_TRY_ASSIGN(entry.source_agent, context.agent_name());
    entry.source_session = context.session;
    CT_TRY_ASSIGN(MemoryEntry added, memory::add_entry(context, std::move(entry), result.warnings));
    data.set("remembered", added.id);
  }
  Reply reply = Reply::noted(std::move(data), no_change_if(result.already_done), std::move(result.warnings));
  if (result.already_done) reply.warnings.push_back("Task " + result.task.id + " was already done");
  return reply;
}

/// tasks.complete's external step: the evidence checked, and the files a `remember`ed learning
/// is anchored to hashed — both before the transaction, which reads no file.
Result<Reply> complete_external(Context& context, const CompleteArgs& args) {
  CT_TRY_ASSIGN(Reply checked, evidence::check_atoms(context, args.id, args.evidence, /*recheck=*/true));
  if (args.remember) {
    CT_TRY_ASSIGN(std::optional<Task> task, pipeline::read_in_own_transaction(context, [&] {
                    return context.db().get_task(args.id);
                  }));
    std::vector<std::string> files;
    if (task)
      for (const auto& file : task->files)
        if (auto normal = memory::normal_scope_path(file); normal && !normal->empty()) files.push_back(*normal);
    CT_TRY_ASSIGN(Reply hashed, memory::hash_scope_files(context, files));
    checked.data.set("files", std::move(hashed.data["files"]));
  }
  return checked;
}

// tasks.evidence: atoms and waivers recorded for a task before (or after) it is completed, checked
// in the external step as tasks.complete checks them; the reply is the task's evidence now.
struct EvidenceArgs {
  std::string id;
  json::Value evidence;  // null when not given
  json::Value waive;     // null when not given
};

Result<Reply> record_evidence(Context& context, const EvidenceArgs& args) {
  if (args.evidence.is_null() && args.waive.is_null())
    return fail(Error(ErrorCode::InvalidParams, "give evidence, waive or both")
                    .with_fix(call("tasks.evidence", {{"id", args.id}, {"evidence", "ran the login flow by hand"}}))
                    .with_detail("field", "evidence"));
  auto engine_ = engine(context);
  CT_TRY_ASSIGN(Task task, engine_.get(args.id));
  std::vector<std::string> warnings;
  CT_TRY_ASSIGN(std::vector<EvidenceAtom> recorded, evidence::record_atoms(context, args.waive, task, "", warnings));
  CT_TRY_ASSIGN(json::Value shown, evidence::task_evidence_json(context, task));
  json::Value data = json::Value::object();
  data.set("id", task.id);
  std::vector<std::string> ids;
  for (const auto& atom : recorded) ids.push_back(atom.id);
  data.set("recorded", json::Value::array_of(ids));
  if (shown.is_object())
    for (const auto& [key, value] : shown.as_object()) data.set(key, value);
  Reply reply = Reply::warned(std::move(data), std::move(warnings));
  if (const json::Value* stale = context.external ? context.external->data.find("stale") : nullptr; stale && stale->is_object())
    for (const auto& [id, what] : stale->as_object())
      reply.warnings.push_back(id + " no longer holds: " + what.as_string() + " (record it again to replace it)");
  return reply;
}

/// The `waive` param: acceptance criteria excused.
ParamSpec waive_param() {
  return {.name = "waive", .type = ParamType::Object,
          .description = "[{criterion, reason}]: acceptance criteria excused (audited, shown on the task)"};
}

}  // namespace

void register_tasks_complete(Registry& registry) {
  const auto complete_args = bind(
      field(&CompleteArgs::id, id_param()),
      field(&CompleteArgs::notes, {.name = "notes", .type = ParamType::String, .max = 5000, .description = "What was done"}),
      field(&CompleteArgs::remember, {.name = "remember", .type = ParamType::String, .min = 3, .max = 4000,
                                      .description = "A learning to keep (memory): first line the title, the rest the body"}),
      field(&CompleteArgs::evidence,
            evidence::evidence_param("Atoms as lifecycle.gate.pass takes them, each with covers?:[criteria]")),
      field(&CompleteArgs::waive, waive_param()), field(&CompleteArgs::if_version, if_version_param()));
  add_task_write(registry,
                 {.domain = "tasks", .name = "complete", .gateway = Gateway::Mutate,
                  .summary = "Mark a task done",
                  .params = complete_args.specs(),
                  .returns = "{unblocked?[ids now ready], evidence?[atom ids], remembered? (the memory entry)}; "
                             "E_NO_CHANGE note when already done. In an epic with recorded lifecycle stages, or with "
                             "verification.required gates, what lifecycle.stages lists must hold first (strict: "
                             "E_LIFECYCLE_GATE_FAILED or E_GATE_DEPENDENCY; advisory: a warning). Recorded evidence is "
                             "checked again: strict verification.evidence refuses stale evidence (E_EVIDENCE_STALE) and "
                             "acceptance criteria neither covered by checked evidence nor waived "
                             "(E_AC_COVERAGE_INCOMPLETE); advisory warns",
                  .errors = {ErrorCode::NotFound, ErrorCode::Validation, ErrorCode::ConcurrentModification,
                             ErrorCode::LifecycleGateFailed, ErrorCode::GateDependency, ErrorCode::EvidenceInvalid,
                             ErrorCode::EvidenceStale, ErrorCode::AcCoverageIncomplete, ErrorCode::TaskClaimed},
                  .examples = {{R"({"id":"T001","notes":"merged in #42"})", "finish T001"},
                               {R"({"id":"T001","evidence":[{"commit":"1a2b3c4","covers":[1]}],"waive":[{"criterion":2,"reason":"docs ship with the next release"}]})",
                                "finish with evidence and a waiver"}},
                  .idempotent = true, .tier = 0, .shortcut = "complete", .shortcut_aliases = {"done"},
                  .text_view = TextView::Completed, .dashboard = true, .bulk = true,
                  .batchable = true, .aliases = {"done", "finish", "close", "resolve"},
                  .external = complete_args.handler(complete_external), .external_checks_only = true,
                  .handler = complete_args.handler(complete)});
  const auto evidence_args =
      bind(field(&EvidenceArgs::id, id_param()),
           field(&EvidenceArgs::evidence, evidence::evidence_param("Atoms: [{commit}|{files:[…]}|{test:<run id>}|{pr}|"
                                                                   "{note}, each with covers?:[criteria]]; text is a note")),
           field(&EvidenceArgs::waive, waive_param()));
  add_task_write(registry,
                 {.domain = "tasks", .name = "evidence", .gateway = Gateway::Mutate,
                  .summary = "Record evidence for a task",
                  .params = evidence_args.specs(),
                  .returns = "{id, recorded[atom ids], atoms[{id, kind, ref?, files?, covers?, gate?, verified, "
                             "unrelated?, detail?}], "
                             "coverage?{covered, waived, uncovered}}; each atom is checked (E_EVIDENCE_INVALID) and "
                             "replaces the current one of its kind; recorded atoms that no longer hold are warned. "
                             "A commit or files atom is verified only as the task's own change (its branch against "
                             "its base, else the commits cited): outside it strict refuses with what the change "
                             "touched, advisory records it unrelated:true; files with no change known are unchecked",
                  .errors = {ErrorCode::NotFound, ErrorCode::Validation, ErrorCode::EvidenceInvalid},
                  .examples = {{R"({"id":"T001","evidence":[{"files":["src/login.c"],"covers":[1]}]})", "the change, covering criterion 1"}},
                  .tier = 2,
                  .batchable = true, .external = evidence_args.handler([](Context& context, const EvidenceArgs& args) {
                    return evidence::check_atoms(context, args.id, args.evidence, /*recheck=*/true);
                  }),
                  .external_checks_only = true,
                  .handler = evidence_args.handler(record_evidence)});
}

}  // namespace ct::tasks
