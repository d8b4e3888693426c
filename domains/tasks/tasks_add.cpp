// tasks domain — tasks.add and tasks.update: a task's content, declared once for both
// (content_params) and decoded once from their params (new_task_from, which tasks.import's records
// go through too, and task_patch_from).
#include "domains/tasks/tasks_common.h"

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
  if (params.str("detail") == "full") return Reply::of(task_full(task));
  // The caller knows what it sent (title, parent, status pending): the reply is what it does not.
  json::Value data = json::Value::object();
  data.set("id", task.id);
  if (!params.has("type") && task.type != TaskType::Task) data.set("type", to_string(task.type));
  return Reply::of(std::move(data));
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

}  // namespace

void register_tasks_add(Registry& registry) {
  std::vector<ParamSpec> add_params = content_params(true);
  add_params.push_back(detail_param(R"("compact")"));
  add_task_write(registry,
                 {.domain = "tasks", .name = "add", .gateway = Gateway::Mutate,
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
  add_task_write(registry,
                 {.domain = "tasks", .name = "update", .gateway = Gateway::Mutate,
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
}

}  // namespace ct::tasks
