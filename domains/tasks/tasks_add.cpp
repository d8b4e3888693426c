// tasks domain — tasks.add and tasks.update: a task's content, declared once for both
// (content_fields) and decoded once from their params into TaskContent; a new task (new_task_from,
// which tasks.import's records go through too) or a change (task_patch_from) made from it.
#include <algorithm>

#include "domains/evidence.h"
#include "domains/tasks/tasks_common.h"
#include "engines/adapters/split_command.h"

namespace ct::tasks {
namespace {

/// The params of a task's content, for tasks.add or tasks.update: each described once for both.
std::vector<Field<TaskContent>> content_fields(bool for_add) {
  std::vector<Field<TaskContent>> fields;
  if (for_add) {
    fields.push_back(field(&TaskContent::title, {.name = "title", .type = ParamType::String, .required = true, .min = 3,
                                                 .max = 200, .description = "What to do, one line (3–200 characters)",
                                                 .positional = true, .single_line = true}));
  } else {
    fields.push_back(field(&TaskContent::title, {.name = "title", .type = ParamType::String, .min = 3, .max = 200,
                                                 .description = "New title (3–200 characters)", .single_line = true}));
  }
  fields.push_back(field(&TaskContent::description, {.name = "description", .type = ParamType::String, .max = 2000,
                                                     .description = "Details (≤ 2000 characters); must differ from the title"}));
  fields.push_back(field(&TaskContent::priority,
                         {.name = "priority", .type = ParamType::Enum,
                          .default_json = for_add ? std::string_view(R"("medium")") : std::string_view(),
                          .choices = {"critical", "high", "medium", "low"}, .description = "Priority"}));
  fields.push_back(field(&TaskContent::type, {.name = "type", .type = ParamType::Enum, .choices = {"epic", "task", "subtask"},
                                              .description = "Inferred from the parent when left out"}));
  if (for_add) {
    fields.push_back(field(&TaskContent::parent, {.name = "parent", .type = ParamType::TaskId,
                                                  .description = "Parent task (depth ≤ 3: epic > task > subtask)"}));
    fields.push_back(field(&TaskContent::status, {.name = "status", .type = ParamType::Enum, .choices = {"pending", "blocked"},
                                                  .description = "Initial status (default pending)"}));
  } else {
    // done and cancelled are accepted here only to answer with the operation that does it.
    fields.push_back(field(&TaskContent::status,
                           {.name = "status", .type = ParamType::Enum,
                            .choices = {"pending", "active", "blocked", "done", "cancelled"},
                            .description = "New status: pending, active or blocked (done: tasks.complete; cancelled: tasks.delete)"}));
  }
  fields.push_back(field(&TaskContent::depends, {.name = "depends", .type = ParamType::Array, .max = 100,
                                                 .item_type = ParamType::TaskId, .description = "Tasks that must finish first"}));
  if (for_add) {
    fields.push_back(field(&TaskContent::labels, {.name = "labels", .type = ParamType::Array, .max = 50,
                                                  .pattern = "^[A-Za-z0-9][A-Za-z0-9._:/-]*$", .item_max = 50,
                                                  .description = "Labels (stored lowercase)"}));
  } else {
    fields.push_back(field(&TaskContent::labels, {.name = "labels", .type = ParamType::Array, .max = 50,
                                                  .pattern = "^-?[A-Za-z0-9][A-Za-z0-9._:/-]*$", .item_max = 51,
                                                  .description = "Labels (stored lowercase); -label takes one off"}));
  }
  fields.push_back(field(&TaskContent::acceptance, {.name = "acceptance", .type = ParamType::Array, .max = 50,
                                                    .item_max = 200, .description = "Acceptance criteria"}));
  fields.push_back(field(&TaskContent::files, {.name = "files", .type = ParamType::Array, .max = 200, .item_max = 500,
                                               .description = "Files involved (project-relative paths)"}));
  fields.push_back(field(&TaskContent::phase, {.name = "phase", .type = ParamType::String, .max = 40,
                                               .pattern = "^[a-z0-9][a-z0-9-]*$", .description = "Project phase slug"}));
  fields.push_back(field(&TaskContent::size, {.name = "size", .type = ParamType::Enum, .choices = {"small", "medium", "large"},
                                              .description = "Scope: small 1–2 files, medium 3–7, large 8+"}));
  fields.push_back(field(&TaskContent::blocked_by, {.name = "blockedBy", .type = ParamType::String, .max = 300,
                                                    .description = "What it waits for (sets status blocked)"}));
  fields.push_back(field(&TaskContent::notes,
                         {.name = "notes", .type = ParamType::String, .max = 5000,
                          .description = for_add ? "A first note" : "A note to append (notes are never rewritten)"}));
  return fields;
}

}  // namespace

const Binding<AddArgs>& add_args() {
  static const Binding<AddArgs> binding = bind_parts<AddArgs>(part_of(&AddArgs::content, content_fields(true)),
                                                              field(&AddArgs::detail, detail_param(R"("compact")")));
  return binding;
}

/// A new task from tasks.add's content: the one path from params to a task, shared by tasks.add
/// and every record of tasks.import.
NewTask new_task_from(const TaskContent& content) {
  NewTask spec;
  spec.title = content.title.value_or("");
  spec.description = content.description.value_or("");
  spec.priority = *parse_priority(content.priority.value_or("medium"));
  if (content.type) spec.type = parse_type(*content.type);
  spec.parent = content.parent.value_or("");
  if (content.status) spec.status = parse_status(*content.status);
  spec.depends = content.depends.value_or(std::vector<std::string>());
  spec.labels = content.labels.value_or(std::vector<std::string>());
  spec.acceptance = content.acceptance.value_or(std::vector<std::string>());
  spec.files = content.files.value_or(std::vector<std::string>());
  spec.phase = content.phase.value_or("");
  if (content.size) spec.size = *parse_size(*content.size);
  spec.blocked_by = content.blocked_by.value_or("");
  if (content.notes) spec.notes.push_back({0, *content.notes});
  return spec;
}

namespace {

Result<Reply> add(Context& context, const AddArgs& args) {
  auto engine_ = engine(context);
  CT_TRY_ASSIGN(Task task, engine_.add(new_task_from(args.content)));
  if (args.detail == "full") return Reply::of(task_full(task));
  // The caller knows what it sent (title, parent, status pending): the reply is what it does not.
  json::Value data = json::Value::object();
  data.set("id", task.id);
  if (!args.content.type && task.type != TaskType::Task) data.set("type", to_string(task.type));
  return Reply::of(std::move(data));
}

struct UpdateArgs {
  std::string id;
  TaskContent content;
  std::string mode;
  std::optional<std::int64_t> if_version;
  std::optional<std::string> detail;
};

/// The change tasks.update's content asks for: each field set only when its param is given;
/// labels starting with "-" are taken off; `mode` says what the lists do.
TaskPatch task_patch_from(const TaskContent& content, std::string_view mode) {
  TaskPatch patch;
  patch.title = content.title;
  patch.description = content.description;
  if (content.status) patch.status = parse_status(*content.status);
  if (content.priority) patch.priority = parse_priority(*content.priority);
  if (content.type) patch.type = parse_type(*content.type);
  patch.depends = content.depends;
  if (content.labels) {
    // "-ui" takes the label ui off, whatever the mode does with the others.
    std::vector<std::string> labels;
    std::vector<std::string> off;
    for (const auto& label : *content.labels) {
      if (label.starts_with('-')) {
        off.push_back(label.substr(1));
      } else {
        labels.push_back(label);
      }
    }
    if (!labels.empty() || off.empty()) patch.labels = std::move(labels);
    if (!off.empty()) patch.labels_off = std::move(off);
  }
  patch.acceptance = content.acceptance;
  patch.files = content.files;
  patch.phase = content.phase;
  if (content.size) patch.size = parse_size(*content.size);
  patch.blocked_by = content.blocked_by;
  patch.note = content.notes;
  patch.mode = mode == "replace" ? ArrayMode::Replace : mode == "remove" ? ArrayMode::Remove : ArrayMode::Append;
  return patch;
}

/// Under strict verification.evidence only a person rewrites or drops acceptance criteria
/// (evidence::acceptance_rules); appending one raises the bar and is anyone's.
Result<void> check_acceptance(Context& context, TaskEngine& tasks, const UpdateArgs& args, const TaskPatch& patch) {
  if (!patch.acceptance || patch.mode == ArrayMode::Append || context.is_person()) return {};
  CT_TRY_ASSIGN(Task task, tasks.get_live(args.id));
  std::vector<std::string> after = *patch.acceptance;
  if (patch.mode == ArrayMode::Remove) {
    after = task.acceptance;
    std::erase_if(after, [&](const std::string& item) { return std::ranges::find(*patch.acceptance, item) != patch.acceptance->end(); });
  }
  std::vector<std::string> argv = {"ct", "update", task.id};
  for (const auto& item : *patch.acceptance) argv.insert(argv.end(), {"--acceptance", item});
  argv.insert(argv.end(), {"--mode", args.mode});
  return evidence::acceptance_rules(context, task, after, "a person runs `" + join_command(argv) + "` in a terminal");
}

Result<Reply> update(Context& context, const UpdateArgs& args) {
  const TaskPatch patch = task_patch_from(args.content, args.mode);
  auto engine_ = engine(context);
  CT_TRY(check_acceptance(context, engine_, args, patch));
  CT_TRY_ASSIGN(UpdateResult result, engine_.update(args.id, patch, args.if_version));
  return update_reply(result, args.detail == "full");
}

}  // namespace

void register_tasks_add(Registry& registry) {
  add_task_write(registry,
                 {.domain = "tasks", .name = "add", .gateway = Gateway::Mutate,
                  .summary = "Create a task",
                  .params = add_args().specs(),
                  .returns = "{id,type?} (type when inferred, not given; the full record with detail:'full')",
                  .errors = {ErrorCode::Validation, ErrorCode::ParentNotFound, ErrorCode::DepthExceeded,
                             ErrorCode::SiblingLimit, ErrorCode::InvalidParentType, ErrorCode::NotFound},
                  .examples = {{R"({"title":"Write the README","priority":"high"})", "a root task"},
                               {R"({"title":"Add login form","parent":"T001","depends":["T002"]})", "a child with a dependency"}},
                  .tier = 0, .shortcut = "add",
                  .text_view = TextView::Created, .dashboard = true, .batchable = true, .aliases = {"new", "insert"},
                  .original_names = {"tasks.create"},
                  .handler = add_args().handler(add)});
  const auto update_args = bind_parts<UpdateArgs>(
      field(&UpdateArgs::id, id_param()), part_of(&UpdateArgs::content, content_fields(false)),
      field(&UpdateArgs::mode, {.name = "mode", .type = ParamType::Enum, .default_json = R"("append")",
                                .choices = {"append", "replace", "remove"},
                                .description = "Array fields (depends, labels, acceptance, files): append to, replace, "
                                               "or remove these items from the list"}),
      field(&UpdateArgs::if_version, if_version_param()),
      field(&UpdateArgs::detail, {.name = "detail", .type = ParamType::Enum, .choices = {"compact", "full"},
                                  .description = "compact (default): changed fields only; full: the whole record"}));
  add_task_write(registry,
                 {.domain = "tasks", .name = "update", .gateway = Gateway::Mutate,
                  .summary = "Change fields or add a note",
                  .params = update_args.specs(),
                  .returns = "{<changed fields not exactly as sent, e.g. a list after append>, version}; "
                             "E_NO_CHANGE note when nothing changed",
                  .errors = {ErrorCode::NotFound, ErrorCode::Validation, ErrorCode::TaskCompleted,
                             ErrorCode::CircularReference, ErrorCode::ConcurrentModification},
                  .examples = {{R"({"id":"T001","priority":"critical","notes":"customer escalation"})", "raise priority"},
                               {R"({"id":"T001","labels":["api"],"mode":"replace","ifVersion":3})", "replace labels safely"},
                               {R"({"id":"T001","depends":["T002"],"mode":"remove"})", "drop one dependency"},
                               {R"({"priority":"high","ids":["T003","T004"]})", "the same change to two tasks"}},
                  .idempotent = true, .tier = 1, .shortcut = "update", .text_view = TextView::Updated, .dashboard = true,
                  .bulk = true, .batchable = true, .aliases = {"edit", "set", "modify", "change", "patch"},
                  .effects = [](Context&, const Params& params, const std::vector<std::string>& subjects)
                      -> Result<std::vector<Effect>> {
                    const auto type = params.opt_str("type");
                    return type && *type != "epic" ? demotions(subjects) : std::vector<Effect>();
                  },
                  .handler = update_args.handler(update)});
}

}  // namespace ct::tasks
