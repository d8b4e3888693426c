// tasks domain — write operations (the mutate gateway).
#include <algorithm>
#include <tuple>

#include "core/text.h"
#include "domains/evidence.h"
#include "domains/memory/memory_common.h"
#include "domains/pipeline.h"
#include "domains/tasks/tasks_common.h"
#include "engines/rules/lifecycle.h"
#include "engines/rules/session_engine.h"

namespace ct::tasks {
namespace {

std::vector<ParamSpec> content_params(bool for_add) {
  std::vector<ParamSpec> params;
  if (for_add) {
    params.push_back({.name = "title", .type = ParamType::String, .required = true, .min = 3, .max = 200,
                      .description = "What to do, one line (3–200 characters)", .positional = true,
                      .single_line = true});
  } else {
    params.push_back({.name = "title", .type = ParamType::String, .min = 3, .max = 200,
                      .description = "New title (3–200 characters)", .single_line = true});
  }
  params.push_back({.name = "description", .type = ParamType::String, .max = 2000,
                    .description = "Details (≤ 2000 characters); must differ from the title"});
  params.push_back({.name = "priority", .type = ParamType::Enum,
                    .default_json = for_add ? std::string_view(R"("medium")") : std::string_view(),
                    .choices = {"critical", "high", "medium", "low"}, .description = "Priority"});
  params.push_back({.name = "type", .type = ParamType::Enum, .choices = {"epic", "task", "subtask"},
                    .description = "Inferred from the parent when left out"});
  if (for_add) {
    params.push_back({.name = "parent", .type = ParamType::TaskId,
                      .description = "Parent task (depth ≤ 3: epic > task > subtask)"});
    params.push_back({.name = "status", .type = ParamType::Enum, .choices = {"pending", "blocked"},
                      .description = "Initial status (default pending)"});
  } else {
    // done and cancelled are accepted here only to answer with the operation that does it.
    params.push_back({.name = "status", .type = ParamType::Enum,
                      .choices = {"pending", "active", "blocked", "done", "cancelled"},
                      .description = "New status: pending, active or blocked (done: tasks.complete; cancelled: tasks.delete)"});
  }
  params.push_back({.name = "depends", .type = ParamType::Array, .max = 100, .item_type = ParamType::TaskId,
                    .description = "Tasks that must finish first"});
  if (for_add) {
    params.push_back({.name = "labels", .type = ParamType::Array, .max = 50, .pattern = "^[A-Za-z0-9][A-Za-z0-9._:/-]*$",
                      .item_max = 50, .description = "Labels (stored lowercase)"});
  } else {
    params.push_back({.name = "labels", .type = ParamType::Array, .max = 50, .pattern = "^-?[A-Za-z0-9][A-Za-z0-9._:/-]*$",
                      .item_max = 51, .description = "Labels (stored lowercase); -label takes one off"});
  }
  params.push_back({.name = "acceptance", .type = ParamType::Array, .max = 50, .item_max = 200,
                    .description = "Acceptance criteria"});
  params.push_back({.name = "files", .type = ParamType::Array, .max = 200, .item_max = 500,
                    .description = "Files involved (project-relative paths)"});
  params.push_back({.name = "phase", .type = ParamType::String, .max = 40, .pattern = "^[a-z0-9][a-z0-9-]*$",
                    .description = "Project phase slug"});
  params.push_back({.name = "size", .type = ParamType::Enum, .choices = {"small", "medium", "large"},
                    .description = "Scope: small 1–2 files, medium 3–7, large 8+"});
  params.push_back({.name = "blockedBy", .type = ParamType::String, .max = 300,
                    .description = "What it waits for (sets status blocked)"});
  params.push_back({.name = "notes", .type = ParamType::String, .max = 5000,
                    .description = for_add ? "A first note" : "A note to append (notes are never rewritten)"});
  return params;
}

}  // namespace

/// A new task from validated tasks.add params: the one path from params to a task, shared by
/// tasks.add and every record of tasks.import.
NewTask new_task_from(const Params& params) {
  NewTask spec;
  spec.title = params.str("title");
  spec.description = params.opt_str("description").value_or("");
  spec.priority = *parse_priority(params.opt_str("priority").value_or("medium"));
  if (auto type = params.opt_str("type")) spec.type = parse_type(*type);
  spec.parent = params.opt_str("parent").value_or("");
  if (auto status = params.opt_str("status")) spec.status = parse_status(*status);
  spec.depends = params.strings("depends");
  spec.labels = params.strings("labels");
  spec.acceptance = params.strings("acceptance");
  spec.files = params.strings("files");
  spec.phase = params.opt_str("phase").value_or("");
  if (auto size = params.opt_str("size")) spec.size = *parse_size(*size);
  spec.blocked_by = params.opt_str("blockedBy").value_or("");
  if (auto note = params.opt_str("notes")) spec.notes.push_back({0, *note});
  return spec;
}

namespace {

Result<Reply> add(Context& context, const Params& params) {
  auto engine_ = engine(context);
  CT_TRY_ASSIGN(Task task, engine_.add(new_task_from(params)));
  if (params.str("detail") == "full") return Reply{task_full(task), {}, {}, {}};
  // The caller knows what it sent (title, parent, status pending): the reply is what it does not.
  json::Value data = json::Value::object();
  data.set("id", task.id);
  if (!params.has("type") && task.type != TaskType::Task) data.set("type", to_string(task.type));
  return Reply{std::move(data), {}, {}, {}};
}

Reply update_reply(const UpdateResult& result, const Params& params) {
  if (params.has("detail") && params.str("detail") == "full")
    return Reply{task_full(result.task), {}, {}, result.changed.empty() ? std::optional(ErrorCode::NoChange) : std::nullopt};
  Reply reply{changed_reply(result.task, result.changed), {}, {}, {}};
  if (result.changed.empty()) reply.note = ErrorCode::NoChange;
  return reply;
}

/// The change tasks.update params ask for, decoded once: each field set only when its param is
/// given; labels starting with "-" are taken off.
TaskPatch task_patch_from(const Params& params) {
  TaskPatch patch;
  patch.title = params.opt_str("title");
  patch.description = params.opt_str("description");
  if (auto s = params.opt_str("status")) patch.status = parse_status(*s);
  if (auto p = params.opt_str("priority")) patch.priority = parse_priority(*p);
  if (auto t = params.opt_str("type")) patch.type = parse_type(*t);
  if (params.has("depends")) patch.depends = params.strings("depends");
  if (params.has("labels")) {
    // "-ui" takes the label ui off, whatever the mode does with the others.
    std::vector<std::string> labels;
    std::vector<std::string> off;
    for (auto& label : params.strings("labels")) {
      if (label.starts_with('-')) {
        off.push_back(label.substr(1));
      } else {
        labels.push_back(std::move(label));
      }
    }
    if (!labels.empty() || off.empty()) patch.labels = std::move(labels);
    if (!off.empty()) patch.labels_off = std::move(off);
  }
  if (params.has("acceptance")) patch.acceptance = params.strings("acceptance");
  if (params.has("files")) patch.files = params.strings("files");
  patch.phase = params.opt_str("phase");
  if (auto size = params.opt_str("size")) patch.size = parse_size(*size);
  patch.blocked_by = params.opt_str("blockedBy");
  patch.note = params.opt_str("notes");
  const std::string& mode = params.str("mode");
  patch.mode = mode == "replace" ? ArrayMode::Replace : mode == "remove" ? ArrayMode::Remove : ArrayMode::Append;
  return patch;
}

Result<Reply> update(Context& context, const Params& params) {
  const TaskPatch patch = task_patch_from(params);
  auto engine_ = engine(context);
  CT_TRY_ASSIGN(UpdateResult result, engine_.update(params.str("id"), patch, params.opt_integer("ifVersion")));
  return update_reply(result, params);
}

Result<Reply> complete(Context& context, const Params& params) {
  const TimeMs now = context.now();
  auto engine_ = engine(context, now);
  // The lifecycle's stages and verification gates come first (engines/rules/lifecycle.h): strict
  // enforcement refuses, advisory warns. A task already done is E_NO_CHANGE, never refused.
  std::vector<std::string> gate_warnings;
  CT_TRY_ASSIGN(Task task, engine_.get_live(params.str("id")));
  if (task.status != TaskStatus::Done) {
    CT_TRY_ASSIGN(std::string agent, context.agent_name());
    LifecycleEngine lifecycle(context.db(), *context.config, now, Actor{agent, context.session}, nullptr);
    CT_TRY(lifecycle.check_complete(task, gate_warnings));
  }
  // Evidence given with the call is recorded first; then verification.evidence judges the task's
  // evidence as a whole: none stale, every acceptance criterion covered or waived.
  std::vector<EvidenceAtom> recorded;
  if (task.status != TaskStatus::Done) {
    CT_TRY_ASSIGN(recorded, evidence::record_atoms(context, params, task, ""));
    CT_TRY(evidence::completion_rules(context, task, gate_warnings));
  }
  CT_TRY_ASSIGN(CompleteResult result, engine_.complete(params.str("id"), params.opt_str("notes").value_or(""),
                                                        params.opt_integer("ifVersion")));
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
  if (auto text = params.opt_str("remember"); text && !result.already_done) {
    MemoryEntry entry;
    entry.kind = "learning";
    const std::string_view all = trim(*text);
    const auto newline = all.find('\n');
    entry.title = clip(trim(all.substr(0, newline)), 200);
    if (newline != std::string_view::npos) entry.body = std::string(trim(all.substr(newline + 1)));
    for (const auto& file : result.task.files)
      if (auto normal = memory::normal_scope_path(file); normal && !normal->empty()) entry.files.push_back(*normal);
    entry.source_task = result.task.id;
    CT_TRY_ASSIGN(entry.source_agent, context.agent_name());
    entry.source_session = context.session;
    CT_TRY_ASSIGN(MemoryEntry added, memory::add_entry(context, std::move(entry), result.warnings));
    data.set("remembered", added.id);
  }
  Reply reply{std::move(data), std::move(result.warnings), {}, {}};
  if (result.already_done) {
    reply.note = ErrorCode::NoChange;
    reply.warnings.push_back("Task " + result.task.id + " was already done");
  }
  return reply;
}

/// tasks.complete's external step: the evidence checked, and the files a `remember`ed learning
/// is anchored to hashed — both before the transaction, which reads no file.
Result<Reply> complete_external(Context& context, const Params& params) {
  CT_TRY_ASSIGN(Reply checked, evidence::check_atoms(context, params, /*recheck=*/true));
  if (params.has("remember")) {
    CT_TRY_ASSIGN(std::optional<Task> task, pipeline::read_in_own_transaction(context, [&] {
                    return context.db().get_task(params.str("id"));
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
Result<Reply> record_evidence(Context& context, const Params& params) {
  if (!params.has("evidence") && !params.has("waive"))
    return fail(Error(ErrorCode::InvalidParams, "give evidence, waive or both")
                    .with_fix(call("tasks.evidence", {{"id", params.str("id")}, {"evidence", "ran the login flow by hand"}}))
                    .with_detail("field", "evidence"));
  auto engine_ = engine(context);
  CT_TRY_ASSIGN(Task task, engine_.get(params.str("id")));
  CT_TRY_ASSIGN(std::vector<EvidenceAtom> recorded, evidence::record_atoms(context, params, task, ""));
  CT_TRY_ASSIGN(json::Value shown, evidence::task_evidence_json(context, task));
  json::Value data = json::Value::object();
  data.set("id", task.id);
  std::vector<std::string> ids;
  for (const auto& atom : recorded) ids.push_back(atom.id);
  data.set("recorded", json::Value::array_of(ids));
  if (shown.is_object())
    for (const auto& [key, value] : shown.as_object()) data.set(key, value);
  Reply reply{std::move(data), {}, {}, {}};
  if (const json::Value* stale = context.external ? context.external->data.find("stale") : nullptr; stale && stale->is_object())
    for (const auto& [id, what] : stale->as_object())
      reply.warnings.push_back(id + " no longer holds: " + what.as_string() + " (record it again to replace it)");
  return reply;
}

Result<Reply> remove(Context& context, const Params& params) {
  DeleteOptions options;
  options.hard = params.flag("hard");
  options.force = params.flag("force");
  const std::string& strategy = params.str("children");
  options.children = strategy == "cascade" ? ChildStrategy::Cascade
                     : strategy == "orphan" ? ChildStrategy::Orphan : ChildStrategy::Block;
  options.reason = params.opt_str("reason").value_or("");
  auto engine_ = engine(context);
  CT_TRY_ASSIGN(DeleteResult result, engine_.remove(params.str("id"), options, params.opt_integer("ifVersion")));
  json::Value data = json::Value::object();
  data.set("id", result.id);
  if (result.hard) {
    data.set("deleted", true);
  } else {
    data.set("status", "cancelled");
    data.set("archived", true);
  }
  if (!result.affected.empty()) data.set("affected", json::Value::array_of(result.affected));
  Reply reply{std::move(data), std::move(result.warnings), {}, {}};
  if (result.no_change) reply.note = ErrorCode::NoChange;
  return reply;
}

Result<Reply> archive(Context& context, const Params& params) {
  CT_TRY_ASSIGN(std::optional<TimeMs> before, params.time("before", context.now()));
  if (!params.has("id") && !params.flag("all") && !before) {
    Error error(ErrorCode::InvalidParams, "say which tasks to archive: id, before, or all:true");
    error.fix = call("tasks.archive", {{"all", true}});
    return fail(std::move(error).with_detail("field", "id"));
  }
  std::vector<std::string> warnings;
  auto engine_ = engine(context);
  CT_TRY_ASSIGN(std::vector<std::string> archived, engine_.archive(params.opt_str("id"), before, warnings));
  json::Value data = json::Value::object();
  data.set("archived", json::Value::array_of(archived));
  data.set("count", static_cast<std::int64_t>(archived.size()));
  Reply reply{std::move(data), std::move(warnings), {}, {}};
  if (archived.empty()) reply.note = ErrorCode::NoChange;
  return reply;
}

Result<Reply> restore(Context& context, const Params& params) {
  auto engine_ = engine(context);
  CT_TRY_ASSIGN(UpdateResult result, engine_.restore(params.str("id")));
  return update_reply(result, params);
}

Result<Reply> reopen(Context& context, const Params& params) {
  auto engine_ = engine(context);
  CT_TRY_ASSIGN(UpdateResult result, engine_.reopen(params.str("id"), params.opt_str("notes").value_or(""),
                                                    params.opt_integer("ifVersion")));
  return update_reply(result, params);
}

Result<Reply> reparent(Context& context, const Params& params) {
  auto engine_ = engine(context);
  CT_TRY_ASSIGN(UpdateResult result, engine_.reparent(params.str("id"), params.str("parent"),
                                                      params.opt_integer("ifVersion")));
  return update_reply(result, params);
}

Result<Reply> promote(Context& context, const Params& params) {
  auto engine_ = engine(context);
  CT_TRY_ASSIGN(UpdateResult result, engine_.reparent(params.str("id"), "", params.opt_integer("ifVersion")));
  return update_reply(result, params);
}

Result<Reply> reorder(Context& context, const Params& params) {
  auto engine_ = engine(context);
  CT_TRY_ASSIGN(UpdateResult result, engine_.reorder(params.str("id"), params.integer("position"),
                                                     params.opt_integer("ifVersion")));
  return update_reply(result, params);
}

Result<Reply> start(Context& context, const Params& params) {
  auto engine_ = engine(context);
  if (!context.session.empty()) {
    // Inside a session only tasks in its scope can be claimed.
    CT_TRY_ASSIGN(Task task, engine_.get_live(params.str("id")));
    SessionEngine sessions(context.db(), *context.config, context.now(), nullptr);
    CT_TRY_ASSIGN(Session session, sessions.get(context.session));
    CT_TRY_ASSIGN(Scope scope, parse_scope(session.scope));
    CT_TRY_ASSIGN(bool inside, sessions.contains(scope, task.id));
    if (!inside) {
      Error error(ErrorCode::TaskNotInScope, "Task " + task.id + " is outside the session's scope " + session.scope);
      error.fix = call("tasks.next", {{"inScope", true}});
      return fail(std::move(error).with_alternative("Start another session for it", "session.start")
                      .with_detail("id", task.id).with_detail("scope", session.scope));
    }
  }
  CT_TRY_ASSIGN(StartResult result, engine_.start(params.str("id")));
  json::Value data = json::Value::object();
  data.set("id", result.task.id);
  if (result.previous) data.set("previous", *result.previous);
  // A lapsed claim taken over: whose it was, so the caller can read what they left.
  if (result.taken_over) {
    json::Value from = json::Value::object();
    from.set("session", result.taken_over->session);
    if (!result.taken_over->agent.empty()) from.set("agent", result.taken_over->agent);
    data.set("takenOver", std::move(from));
  }
  Reply reply{std::move(data), {}, {}, {}};
  if (result.no_change) reply.note = ErrorCode::NoChange;
  return reply;
}

Result<Reply> stop(Context& context, const Params&) {
  auto engine_ = engine(context);
  CT_TRY_ASSIGN(std::optional<Task> stopped, engine_.stop());
  if (!stopped) return Reply{json::Value(), {"nothing was in focus"}, {}, ErrorCode::NoChange};
  json::Value data = json::Value::object();
  data.set("id", stopped->id);
  data.set("status", to_string(stopped->status));
  if (context.audit) context.audit->task_id = stopped->id;
  return Reply{std::move(data), {}, {}, {}};
}

Result<Reply> reclaim(Context& context, const Params& params) {
  auto engine_ = engine(context);
  CT_TRY_ASSIGN(std::optional<Claim> freed, engine_.reclaim(params.str("id")));
  if (!freed) return Reply{json::Value(), {"nobody holds " + params.str("id")}, {}, ErrorCode::NoChange};
  json::Value data = json::Value::object();
  data.set("id", params.str("id"));
  json::Value from = json::Value::object();
  from.set("session", freed->session);
  if (!freed->agent.empty()) from.set("agent", freed->agent);
  data.set("from", std::move(from));
  return Reply{std::move(data), {}, {}, {}};
}

Result<Reply> relate(Context& context, const Params& params) {
  auto engine_ = engine(context);
  if (params.flag("remove")) {
    CT_TRY_ASSIGN(UpdateResult result, engine_.unrelate(params.str("id"), params.str("target")));
    return update_reply(result, params);
  }
  CT_TRY_ASSIGN(UpdateResult result, engine_.relate(params.str("id"), params.str("target"), params.str("type"),
                                                    params.opt_str("notes").value_or("")));
  return update_reply(result, params);
}
}  // namespace

void register_tasks_mutations(Registry& registry) {
  // Every task write is checked against session.enforcement and the bound session's scope.
  auto add_write = [&registry](OperationSpec spec) {
    spec.needs_session = true;
    // A batch or a plan holds changes of tasks; claiming work and archiving in bulk are calls of their own.
    spec.batchable = spec.name != "start" && spec.name != "stop" && spec.name != "reclaim" && spec.name != "archive";
    registry.add(std::move(spec));
  };
  std::vector<ParamSpec> add_params = content_params(true);
  add_params.push_back(detail_param(R"("compact")"));
  add_write({.domain = "tasks", .name = "add", .gateway = Gateway::Mutate,
                .summary = "Create a task",
                .params = std::move(add_params),
                .returns = "{id,type?} (type when inferred, not given; the full record with detail:'full')",
                .errors = {ErrorCode::Validation, ErrorCode::ParentNotFound, ErrorCode::DepthExceeded,
                           ErrorCode::SiblingLimit, ErrorCode::InvalidParentType, ErrorCode::NotFound},
                .examples = {{R"({"title":"Write the README","priority":"high"})", "a root task"},
                             {R"({"title":"Add login form","parent":"T001","depends":["T002"]})", "a child with a dependency"}},
                .tier = 0, .shortcut = "add",
                .text_view = TextView::Created, .dashboard = true, .aliases = {"new", "insert"},
                .original_names = {"tasks.create"},
                .handler = add});
  std::vector<ParamSpec> update_params = content_params(false);
  update_params.insert(update_params.begin(), id_param());
  update_params.push_back({.name = "mode", .type = ParamType::Enum, .default_json = R"("append")",
                           .choices = {"append", "replace", "remove"},
                           .description = "Array fields (depends, labels, acceptance, files): append to, replace, or remove these items from the list"});
  update_params.push_back(if_version_param());
  update_params.push_back({.name = "detail", .type = ParamType::Enum, .choices = {"compact", "full"},
                           .description = "compact (default): changed fields only; full: the whole record"});
  add_write({.domain = "tasks", .name = "update", .gateway = Gateway::Mutate,
                .summary = "Change fields or add a note",
                .params = std::move(update_params),
                .returns = "{<changed fields not exactly as sent, e.g. a list after append>, version}; "
                           "E_NO_CHANGE note when nothing changed",
                .errors = {ErrorCode::NotFound, ErrorCode::Validation, ErrorCode::TaskCompleted,
                           ErrorCode::CircularReference, ErrorCode::ConcurrentModification},
                .examples = {{R"({"id":"T001","priority":"critical","notes":"customer escalation"})", "raise priority"},
                             {R"({"id":"T001","labels":["api"],"mode":"replace","ifVersion":3})", "replace labels safely"},
                             {R"({"id":"T001","depends":["T002"],"mode":"remove"})", "drop one dependency"},
                             {R"({"priority":"high","ids":["T003","T004"]})", "the same change to two tasks"}},
                .idempotent = true, .tier = 1, .shortcut = "update", .text_view = TextView::Updated, .dashboard = true,
                .bulk = true, .aliases = {"edit", "set", "modify", "change", "patch"}, .handler = update});
  add_write({.domain = "tasks", .name = "complete", .gateway = Gateway::Mutate,
                .summary = "Mark a task done",
                .params = {id_param(),
                           {.name = "notes", .type = ParamType::String, .max = 5000, .description = "What was done"},
                           {.name = "remember", .type = ParamType::String, .min = 3, .max = 4000,
                            .description = "A learning to keep (memory): first line the title, the rest the body"},
                           evidence::evidence_param("Atoms as lifecycle.gate.pass takes them, each with covers?:[criteria]"),
                           {.name = "waive", .type = ParamType::Object,
                            .description = "[{criterion, reason}]: acceptance criteria excused (audited, shown on the task)"},
                           if_version_param()},
                .returns = "{unblocked?[ids now ready], evidence?[atom ids], remembered? (the memory entry)}; "
                           "E_NO_CHANGE note when already done. In an epic with recorded lifecycle stages, or with "
                           "verification.required gates, what lifecycle.stages lists must hold first (strict: "
                           "E_LIFECYCLE_GATE_FAILED or E_GATE_DEPENDENCY; advisory: a warning). Recorded evidence is "
                           "checked again: strict verification.evidence refuses stale evidence (E_EVIDENCE_STALE) and "
                           "acceptance criteria neither covered by checked evidence nor waived "
                           "(E_AC_COVERAGE_INCOMPLETE); advisory warns",
                .errors = {ErrorCode::NotFound, ErrorCode::Validation, ErrorCode::ConcurrentModification,
                           ErrorCode::LifecycleGateFailed, ErrorCode::GateDependency, ErrorCode::EvidenceInvalid,
                           ErrorCode::EvidenceStale, ErrorCode::AcCoverageIncomplete},
                .examples = {{R"({"id":"T001","notes":"merged in #42"})", "finish T001"},
                             {R"({"id":"T001","evidence":[{"commit":"1a2b3c4","covers":[1]}],"waive":[{"criterion":2,"reason":"docs ship with the next release"}]})",
                              "finish with evidence and a waiver"}},
                .idempotent = true, .tier = 0, .shortcut = "complete", .shortcut_aliases = {"done"},
                .text_view = TextView::Completed, .dashboard = true, .bulk = true,
                .aliases = {"done", "finish", "close", "resolve"},
                .external = complete_external, .external_checks_only = true, .handler = complete});
  add_write({.domain = "tasks", .name = "evidence", .gateway = Gateway::Mutate,
                .summary = "Record evidence for a task",
                .params = {id_param(),
                           evidence::evidence_param("Atoms: [{commit}|{files:[…]}|{test:<run id>}|{pr}|{note}, each "
                                                    "with covers?:[criteria]]; text is a note"),
                           {.name = "waive", .type = ParamType::Object,
                            .description = "[{criterion, reason}]: acceptance criteria excused (audited, shown on the task)"}},
                .returns = "{id, recorded[atom ids], atoms[{id, kind, ref?, files?, covers?, gate?, verified, detail?}], "
                           "coverage?{covered, waived, uncovered}}; each atom is checked (E_EVIDENCE_INVALID) and "
                           "replaces the current one of its kind; recorded atoms that no longer hold are warned",
                .errors = {ErrorCode::NotFound, ErrorCode::Validation, ErrorCode::EvidenceInvalid},
                .examples = {{R"({"id":"T001","evidence":[{"files":["src/login.c"],"covers":[1]}]})", "the change, covering criterion 1"}},
                .tier = 2,
                .external = [](Context& context, const Params& params) {
                  return evidence::check_atoms(context, params, /*recheck=*/true);
                },
                .external_checks_only = true,
                .handler = record_evidence});
  add_write({.domain = "tasks", .name = "delete", .gateway = Gateway::Mutate,
                .summary = "Cancel and archive a task",
                .params = {id_param(),
                           {.name = "reason", .type = ParamType::String, .max = 300, .description = "Why it is cancelled"},
                           {.name = "children", .type = ParamType::Enum, .default_json = R"("block")",
                            .choices = {"block", "orphan", "cascade"},
                            .description = "Children: refuse (block), move up to this task's parent (orphan), or delete too (cascade)"},
                           {.name = "hard", .type = ParamType::Bool, .description = "Remove the rows instead of cancelling (history stays)"},
                           {.name = "force", .type = ParamType::Bool, .description = "With hard: also drop the id from tasks that depend on it"},
                           if_version_param()},
                .returns = "{status:'cancelled',archived:true,affected?} or {deleted:true,affected?} when hard",
                .errors = {ErrorCode::NotFound, ErrorCode::HasChildren, ErrorCode::HasDependents,
                           ErrorCode::TaskCompleted, ErrorCode::ConcurrentModification},
                .examples = {{R"({"id":"T004","reason":"duplicate of T002"})", "cancel T004"}},
                .destructive = true, .tier = 1, .shortcut = "delete", .shortcut_aliases = {"rm"},
                .text_view = TextView::Deleted, .bulk = true,
                .aliases = {"remove", "rm", "del", "cancel", "drop"}, .handler = remove});
  add_write({.domain = "tasks", .name = "archive", .gateway = Gateway::Mutate,
                .summary = "Archive done and cancelled tasks",
                .params = {{.name = "id", .type = ParamType::TaskId, .description = "One task to archive", .positional = true},
                           {.name = "before", .type = ParamType::String, .max = 40,
                            .description = "Only tasks finished before this: 2026-01-31, a time, yesterday, or an age (30d, 2w)"},
                           {.name = "all", .type = ParamType::Bool, .description = "Every done or cancelled task"}},
                .returns = "{archived[ids], count}",
                .errors = {ErrorCode::NotFound, ErrorCode::Validation, ErrorCode::HasChildren},
                .examples = {{R"({"id":"T001"})", "archive T001"}, {R"({"all":true})", "archive everything finished"}},
                .idempotent = true, .tier = 2, .text_view = TextView::Archived, .handler = archive});
  add_write({.domain = "tasks", .name = "restore", .gateway = Gateway::Mutate,
                .summary = "Bring back an archived or cancelled task",
                .params = {id_param()},
                .returns = "{<changed fields>, version}",
                .errors = {ErrorCode::NotFound, ErrorCode::Validation},
                .examples = {{R"({"id":"T004"})", "restore T004"}},
                .idempotent = true, .tier = 2, .text_view = TextView::Restored, .bulk = true,
                .original_names = {"tasks.unarchive", "system.uncancel"}, .handler = restore});
  add_write({.domain = "tasks", .name = "reopen", .gateway = Gateway::Mutate,
                .summary = "Reopen a done task",
                .params = {id_param(), {.name = "notes", .type = ParamType::String, .max = 5000,
                                        .description = "Why it is reopened"},
                           if_version_param()},
                .returns = "{status,completedAt:null,version}",
                .errors = {ErrorCode::NotFound, ErrorCode::Validation, ErrorCode::ConcurrentModification},
                .examples = {{R"({"id":"T001","notes":"regression found"})", "reopen T001"}},
                .idempotent = true, .tier = 2, .text_view = TextView::Reopened, .dashboard = true, .bulk = true,
                .handler = reopen});
  add_write({.domain = "tasks", .name = "reparent", .gateway = Gateway::Mutate,
                .summary = "Move a task under another parent",
                .params = {id_param(),
                           {.name = "parent", .type = ParamType::TaskId, .required = true, .description = "New parent",
                            .positional = true},
                           if_version_param()},
                .returns = "{position,type?,version}",
                .errors = {ErrorCode::NotFound, ErrorCode::ParentNotFound, ErrorCode::DepthExceeded,
                           ErrorCode::SiblingLimit, ErrorCode::InvalidParentType, ErrorCode::CircularReference},
                .examples = {{R"({"id":"T005","parent":"T002"})", "move T005 under T002"}},
                .idempotent = true, .tier = 2,
                .text_view = TextView::Moved, .aliases = {"move", "mv"}, .handler = reparent});
  add_write({.domain = "tasks", .name = "promote", .gateway = Gateway::Mutate,
                .summary = "Make a task top-level",
                .params = {id_param(), if_version_param()},
                .returns = "{parent:null,position,type?,version}",
                .errors = {ErrorCode::NotFound},
                .examples = {{R"({"id":"T005"})", "promote T005"}},
                .idempotent = true, .tier = 2, .text_view = TextView::Promoted, .bulk = true, .handler = promote});
  add_write({.domain = "tasks", .name = "reorder", .gateway = Gateway::Mutate,
                .summary = "Move a task to a position among its siblings",
                .params = {id_param(),
                           {.name = "position", .type = ParamType::Int, .required = true, .min = 1,
                            .description = "1-based position", .positional = true},
                           if_version_param()},
                .returns = "{position?,version} (position when it is not the one sent)",
                .errors = {ErrorCode::NotFound},
                .examples = {{R"({"id":"T005","position":1})", "move T005 first"}},
                .idempotent = true, .tier = 2, .text_view = TextView::Reordered, .handler = reorder});
  add_write({.domain = "tasks", .name = "start", .gateway = Gateway::Mutate,
                .summary = "Focus on a task and mark it active",
                .params = {id_param()},
                .returns = "{previous?,takenOver?{session,agent?}} (the task is active; the previous focus goes back "
                           "to pending; takenOver: a lapsed claim)",
                .errors = {ErrorCode::NotFound, ErrorCode::TaskCompleted, ErrorCode::Validation, ErrorCode::TaskClaimed,
                           ErrorCode::TaskNotInScope},
                .examples = {{R"({"id":"T001"})", "work on T001"}},
                .idempotent = true, .tier = 0, .shortcut = "start",
                .text_view = TextView::Started, .dashboard = true, .aliases = {"begin", "claim", "work", "pick"},
                .original_names = {"session.focus.set", "session.focus-set"},
                .handler = start});
  add_write({.domain = "tasks", .name = "stop", .gateway = Gateway::Mutate,
                .summary = "Release the focus",
                .returns = "{id,status}; E_NO_CHANGE note when nothing was in focus",
                .examples = {{R"({})", "stop working on the current task"}},
                .idempotent = true, .tier = 1, .shortcut = "stop",
                .text_view = TextView::Stopped, .dashboard = true, .aliases = {"pause", "unfocus", "release"},
                .original_names = {"session.focus.clear", "session.focus-clear"},
                .handler = stop});
  add_write({.domain = "tasks", .name = "reclaim", .gateway = Gateway::Mutate,
                .summary = "Free a task a session holds; it goes back to pending",
                .params = {id_param(),
                           {.name = "reason", .type = ParamType::String, .required = true, .min = 1, .max = 300,
                            .description = "Why (audited)"}},
                .returns = "{id,from{session,agent?}}; E_NO_CHANGE note when nobody held it",
                .errors = {ErrorCode::NotFound, ErrorCode::Validation},
                .examples = {{R"({"id":"T005","reason":"its agent crashed"})", "free T005 at once"}},
                .idempotent = true, .tier = 2, .shortcut = "reclaim", .text_view = TextView::Generic,
                .handler = reclaim});
  add_write({.domain = "tasks", .name = "relate", .gateway = Gateway::Mutate,
                .summary = "Link two tasks without blocking either",
                .params = {id_param(),
                           {.name = "target", .type = ParamType::TaskId, .required = true, .description = "The other task",
                            .positional = true},
                           {.name = "type", .type = ParamType::Enum, .default_json = R"("relates-to")",
                            .choices = {"relates-to", "spawned-from", "deferred-to", "supersedes", "duplicates"},
                            .description = "Kind of link"},
                           {.name = "notes", .type = ParamType::String, .max = 200, .description = "Why they are linked"},
                           {.name = "remove", .type = ParamType::Bool, .description = "Remove every link to target instead"}},
                .returns = "{relates,version}; E_NO_CHANGE note when nothing changed",
                .errors = {ErrorCode::NotFound, ErrorCode::Validation},
                .examples = {{R"({"id":"T005","target":"T002","type":"duplicates"})", "mark a duplicate"},
                             {R"({"id":"T005","target":"T002","remove":true})", "unlink them"}},
                .idempotent = true, .tier = 2, .text_view = TextView::Linked, .original_names = {"tasks.relates.add"},
                .handler = relate});
}

}  // namespace ct::tasks
