// orchestrate.worktrees and orchestrate.worktrees.prune, and what orchestrate.spawn uses to put a
// task's agent in a worktree of its own (worktrees.h).
#include "domains/orchestrate/worktrees.h"

#include <system_error>

#include "core/text.h"
#include "domains/bind.h"
#include "domains/claims.h"
#include "domains/pipeline.h"
#include "domains/registry.h"
#include "engines/adapters/subprocess.h"
#include "engines/project/git_worktree.h"
#include "engines/rules/release_engine.h"

namespace ct::orchestrate {
namespace {

namespace fs = std::filesystem;

/// git's worktree commands are quick; one that hangs (a lock, a broken repository) stops here.
constexpr std::chrono::seconds kGitTimeout{120};

Result<ProcessResult> git(const fs::path& cwd, const std::vector<std::string>& args) {
  auto ran = run_git(GitOptions{.root = cwd, .timeout = kGitTimeout}, args);
  if (!ran && ran.error().code == ErrorCode::CapabilityUnavailable)
    return fail(std::move(ran.error()).with_fix("install git, or turn task worktrees off: " +
                                                config_set_fix("orchestrator.worktrees", json::Value(""))));
  return ran;
}

/// E_ENGINE_FAILED for a git command that ran and failed.
Error git_failed(const std::vector<std::string>& args, const ProcessResult& result) {
  return Error(ErrorCode::EngineFailed, "git " + join(args, " ") + " failed: " + std::string(trim(result.err_tail())))
      .with_detail("command", json::Value::array_of(args));
}

/// The repository of the project: its main worktree, where task worktrees branch from.
Result<git::Worktree> repository(const Context& context) {
  auto tree = git::locate(context.root());
  if (!tree)
    return fail(Error(ErrorCode::CapabilityUnavailable, "the project " + context.root().string() +
                                                            " is not in a git repository: tasks get no worktrees")
                    .with_fix("git init the project, or turn task worktrees off: " +
                              config_set_fix("orchestrator.worktrees", json::Value("")))
                    .with_detail("need", "git-repo"));
  if (!tree->main.empty() && tree->main != tree->top) {
    if (auto main = git::at_top(tree->main)) return *main;
  }
  return *tree;
}

std::string branch_of(const std::string& id) { return "cleo/" + id; }

/// The folder orchestrator.worktrees names for task `id`, relative to the main worktree.
fs::path folder_of(const Context& context, const git::Worktree& main, const std::string& id) {
  std::string pattern = context.config->get_string("orchestrator.worktrees");
  const std::string repo = main.top.filename().string();
  for (auto at = pattern.find("{repo}"); at != std::string::npos; at = pattern.find("{repo}", at + repo.size()))
    pattern.replace(at, 6, repo);
  for (auto at = pattern.find("{task}"); at != std::string::npos; at = pattern.find("{task}", at + id.size()))
    pattern.replace(at, 6, id);
  fs::path path(pattern);
  return (path.is_absolute() ? path : main.top / path).lexically_normal();
}

/// `tree` is the worktree of task `id` in the repository `main`: on its branch, same common dir.
bool is_tasks(const std::optional<git::Worktree>& tree, const git::Worktree& main, const std::string& id) {
  return tree && tree->linked && tree->common_dir == main.common_dir && tree->branch == branch_of(id);
}

bool branch_exists(const git::Worktree& main, const std::string& branch, bool& exists) {
  auto ran = git(main.top, {"rev-parse", "--verify", "--quiet", "refs/heads/" + branch});
  if (!ran) return false;
  exists = ran->ok();
  return true;
}

}  // namespace

Result<std::optional<PreparedWorktree>> prepare_worktree(Context& context, const std::string& id,
                                                         const std::optional<TaskWorktree>& recorded) {
  if (trim(context.config->get_string("orchestrator.worktrees")).empty()) return std::optional<PreparedWorktree>();
  CT_TRY_ASSIGN(git::Worktree main, repository(context));
  const std::string branch = branch_of(id);
  // The one recorded, still there on its branch: the task's work goes on in it.
  if (recorded && !recorded->pruned_at) {
    if (is_tasks(git::at_top(recorded->worktree), main, id))
      return std::optional<PreparedWorktree>(PreparedWorktree{*recorded, false});
  }
  const fs::path folder = folder_of(context, main, id);
  std::error_code ec;
  if (fs::exists(folder, ec)) {
    // Made for this task by a spawn that failed before it was recorded: taken as it is.
    if (is_tasks(git::at_top(folder), main, id)) {
      TaskWorktree adopted{.task_id = id, .worktree = folder.string(), .branch = branch,
                           .base = recorded ? recorded->base : main.head_commit(), .session = context.session,
                           .created_at = context.now()};
      return std::optional<PreparedWorktree>(PreparedWorktree{std::move(adopted), false});
    }
    return fail(Error(ErrorCode::Validation, "cannot make the worktree of " + id + ": " + folder.string() +
                                                 " exists and is not that task's worktree")
                    .with_fix("move or remove " + folder.string() + ", or point orchestrator.worktrees elsewhere: " +
                              config_set_fix("orchestrator.worktrees", json::Value("../{repo}-{task}")))
                    .with_detail("path", folder.string()));
  }
  bool exists = false;
  if (!branch_exists(main, branch, exists)) CT_TRY(git(main.top, {"--version"}));  // says git is missing
  if (exists)
    return fail(Error(ErrorCode::Validation, "cannot make the worktree of " + id + ": the branch " + branch +
                                                 " exists already (and no worktree of it is at " + folder.string() + ")")
                    .with_fix("merge or delete it (git branch -d " + branch + ") and spawn again, or check it out "
                              "there yourself: git worktree add " + folder.string() + " " + branch)
                    .with_detail("branch", branch));
  const std::string base = main.head_commit();
  if (base.empty())
    return fail(Error(ErrorCode::Validation, "cannot make the worktree of " + id + ": " + main.top.string() +
                                                 " has no commit yet to branch from")
                    .with_fix("commit something first (git commit), then spawn again"));
  const std::vector<std::string> add = {"worktree", "add", "-b", branch, folder.string(), base};
  CT_TRY_ASSIGN(ProcessResult made, git(main.top, add));
  if (!made.ok()) return fail(git_failed(add, made).with_fix("fix what git says, then spawn again"));
  TaskWorktree record{.task_id = id, .worktree = folder.string(), .branch = branch, .base = base,
                      .session = context.session, .created_at = context.now()};
  // git reports the folder as it wrote it; the record keeps the form find_project compares with.
  if (auto tree = git::at_top(folder)) record.worktree = tree->top.string();
  return std::optional<PreparedWorktree>(PreparedWorktree{std::move(record), true});
}

json::Value worktree_json(const PreparedWorktree& prepared) {
  json::Value out = json::Value::object();
  out.set("path", prepared.record.worktree);
  out.set("branch", prepared.record.branch);
  out.set("base", prepared.record.base);
  if (prepared.created) out.set("created", true);
  return out;
}

namespace {

json::Value recorded_json(const TaskWorktree& record) {
  return json::Value(json::Value::Object{{"path", json::Value(record.worktree)},
                                         {"branch", json::Value(record.branch)},
                                         {"base", json::Value(record.base)}});
}

}  // namespace

Result<void> record_worktree(Context& context, const TaskWorktree& record) {
  CT_TRY_ASSIGN(std::optional<TaskWorktree> before, context.db().get_task_worktree(record.task_id));
  const bool same = before && !before->pruned_at && before->worktree == record.worktree &&
                    before->branch == record.branch && before->base == record.base;
  if (same) return {};
  CT_TRY(context.db().save_task_worktree(record));
  context.record({record.task_id, "worktree",
                  before && !before->pruned_at ? recorded_json(*before) : json::Value(), recorded_json(record)});
  return {};
}

namespace {

/// A task's worktree as git finds it now.
struct Observed {
  TaskWorktree record;
  std::optional<Task> task;  // none when the task is gone
  bool present = false;      // the folder is still that task's worktree
  bool dirty = false;        // git status --porcelain lists something in it
  bool merged = false;       // the main worktree's HEAD holds its branch's commits
  std::string status_error;  // git status failed: treated as dirty
};

bool finished(const Observed& seen) {
  return !seen.task || seen.task->archived || seen.task->status == TaskStatus::Done ||
         seen.task->status == TaskStatus::Cancelled;
}

/// Each recorded worktree (or task `only`'s), its task and what git says of it. Reads the store in a
/// read transaction of its own and runs git: an external step's.
Result<std::vector<Observed>> observe(Context& context, const std::optional<std::string>& only) {
  std::vector<Observed> out;
  CT_TRY(pipeline::read_in_own_transaction(context, [&]() -> Result<void> {
    std::vector<TaskWorktree> records;
    if (only) {
      CT_TRY_ASSIGN(std::optional<TaskWorktree> one, context.db().get_task_worktree(*only));
      if (!one || one->pruned_at)
        return fail(Error(ErrorCode::NotFound, "task " + *only + " has no worktree")
                        .with_fix("orchestrate.worktrees lists the tasks that have one")
                        .with_detail("id", *only));
      records.push_back(std::move(*one));
    } else {
      CT_TRY_ASSIGN(records, context.db().list_task_worktrees(false));
    }
    for (auto& record : records) {
      Observed seen;
      CT_TRY_ASSIGN(seen.task, context.db().get_task(record.task_id));
      seen.record = std::move(record);
      out.push_back(std::move(seen));
    }
    return {};
  }));
  if (out.empty()) return out;
  CT_TRY_ASSIGN(git::Worktree main, repository(context));
  for (auto& seen : out) {
    const std::string id = seen.record.task_id;
    seen.present = is_tasks(git::at_top(seen.record.worktree), main, id);
    if (seen.present) {
      CT_TRY_ASSIGN(ProcessResult status, git(seen.record.worktree, {"status", "--porcelain"}));
      if (!status.ok()) seen.status_error = std::string(trim(status.err_tail()));
      seen.dirty = !status.ok() || !trim(status.out).empty();
    }
    bool exists = false;
    if (branch_exists(main, seen.record.branch, exists) && exists) {
      CT_TRY_ASSIGN(ProcessResult merged,
                    git(main.top, {"merge-base", "--is-ancestor", "refs/heads/" + seen.record.branch, "HEAD"}));
      seen.merged = merged.ok();
    } else {
      seen.merged = true;  // no branch left: nothing of it to lose
    }
  }
  return out;
}

json::Value observed_json(const Context& context, const Observed& seen) {
  json::Value row = json::Value::object();
  row.set("id", seen.record.task_id);
  row.set("status", seen.task ? std::string(to_string(seen.task->status)) : std::string("deleted"));
  std::string shown = shown_worktree(seen.record.worktree, context.root());
  row.set("path", shown.empty() ? seen.record.worktree : shown);
  row.set("branch", seen.record.branch);
  row.set("base", short_sha(seen.record.base));
  if (!seen.present) row.set("missing", true);
  if (seen.dirty) row.set("dirty", true);
  if (!seen.merged) row.set("unmerged", true);
  return row;
}

struct ListArgs {
  std::optional<std::string> id;
};

Result<Reply> list_external(Context& context, const ListArgs& args) {
  CT_TRY_ASSIGN(std::vector<Observed> seen, observe(context, args.id));
  json::Value rows = json::Value::array();
  for (const auto& one : seen) rows.push_back(observed_json(context, one));
  return Reply::noted(std::move(rows), no_data_if(seen.empty()));
}

Result<Reply> from_external(Context& context, const ListArgs&) {
  if (!context.external) return fail(ErrorCode::Internal, "orchestrate.worktrees: the external step did not run");
  return std::move(*context.external);
}

struct PruneArgs {
  std::optional<std::string> id;
  bool force = false;
  bool dry_run = false;
};

/// Why a worktree stays, or "" when it goes.
std::string kept_because(const Observed& seen, bool force) {
  if (!finished(seen)) return "its task is " + std::string(to_string(seen.task->status));
  if (seen.dirty)
    return seen.status_error.empty() ? "it holds uncommitted work (git status --porcelain)"
                                     : "git status failed in it: " + seen.status_error;
  if (!seen.merged && !force) return "its branch " + seen.record.branch + " is not merged into the main worktree's HEAD";
  return "";
}

Result<Reply> prune_external(Context& context, const PruneArgs& args) {
  if (args.force && !context.is_person())
    return fail(Error(ErrorCode::MutationDisabled,
                      "force deletes a branch whose commits are merged nowhere: only a person prunes so, not an agent")
                    .with_fix("merge the branch first; or a person runs orchestrate.worktrees.prune with force "
                              "(ct orchestrate worktrees.prune --force)")
                    .with_detail("field", "force"));
  CT_TRY_ASSIGN(std::vector<Observed> seen, observe(context, args.id));
  CT_TRY_ASSIGN(git::Worktree main, repository(context));
  json::Value pruned = json::Value::array();
  json::Value kept = json::Value::array();
  std::vector<std::string> warnings;
  for (const auto& one : seen) {
    const std::string why = kept_because(one, args.force);
    if (!why.empty()) {
      kept.push_back(json::Value(json::Value::Object{{"id", json::Value(one.record.task_id)}, {"why", json::Value(why)}}));
      continue;
    }
    if (!args.dry_run) {
      if (one.present) {
        const std::vector<std::string> remove = {"worktree", "remove", one.record.worktree};
        CT_TRY_ASSIGN(ProcessResult removed, git(main.top, remove));
        if (!removed.ok()) {
          warnings.push_back(git_failed(remove, removed).message);
          continue;
        }
      } else {
        CT_TRY(git(main.top, {"worktree", "prune"}));  // git forgets a folder removed by hand
      }
      bool exists = false;
      if (branch_exists(main, one.record.branch, exists) && exists) {
        const std::vector<std::string> drop = {"branch", one.merged ? "-d" : "-D", one.record.branch};
        CT_TRY_ASSIGN(ProcessResult dropped, git(main.top, drop));
        if (!dropped.ok()) warnings.push_back(git_failed(drop, dropped).message + " (the worktree is gone)");
      }
    }
    json::Value item = json::Value::object();
    item.set("id", one.record.task_id);
    item.set("branch", one.record.branch);
    if (!one.merged) item.set("unmerged", true);
    pruned.push_back(std::move(item));
  }
  json::Value data = json::Value::object();
  data.set("pruned", std::move(pruned));
  if (kept.size() > 0) data.set("kept", std::move(kept));
  if (args.dry_run) data.set("dryRun", true);
  return Reply::warned(std::move(data), std::move(warnings));
}

/// Inside the write transaction: each pruned worktree is marked so, audited as the removal of
/// the task's `worktree`.
Result<Reply> prune(Context& context, const PruneArgs& args) {
  if (!context.external) return fail(ErrorCode::Internal, "orchestrate.worktrees.prune: the external step did not run");
  Reply reply = std::move(*context.external);
  const json::Value& pruned = reply.data["pruned"];
  if (args.id && context.audit) context.audit->task_id = *args.id;
  if (!args.dry_run) {
    for (const auto& item : pruned.as_array()) {
      const std::string id = item["id"].as_string();
      CT_TRY_ASSIGN(std::optional<TaskWorktree> record, context.db().get_task_worktree(id));
      if (!record || record->pruned_at) continue;
      const json::Value before = recorded_json(*record);
      record->pruned_at = context.now();
      CT_TRY(context.db().save_task_worktree(*record));
      context.record({id, "worktree", before, json::Value()});
    }
  }
  reply.note = no_change_if(pruned.size() == 0);
  return reply;
}

}  // namespace

void register_orchestrate_worktrees(Registry& registry) {
  const ParamSpec id_param{.name = "id", .type = ParamType::TaskId, .description = "Only this task's worktree",
                           .positional = true};
  const auto list_args = bind(field(&ListArgs::id, id_param));
  registry.add({.domain = "orchestrate", .name = "worktrees", .gateway = Gateway::Query,
                .summary = "The git worktrees spawn made for tasks, with their state",
                .params = list_args.specs(),
                .returns = "[{id, status (the task's, or deleted), path (relative to the main worktree), branch, base, "
                           "missing? (the folder is gone), dirty? (uncommitted work), unmerged? (its branch is not in "
                           "HEAD)}]; E_NO_DATA note when there are none",
                .errors = {ErrorCode::NotFound, ErrorCode::CapabilityUnavailable},
                .examples = {{R"({})", "every task's worktree"}},
                .engine = EngineKind::Hybrid, .idempotent = true, .tier = 2,
                .needs = {"program:git"}, .external = list_args.handler(list_external),
                .handler = list_args.handler(from_external)});
  const auto prune_args = bind(
      field(&PruneArgs::id, id_param),
      field(&PruneArgs::force, {.name = "force", .type = ParamType::Bool,
                                .description = "Also worktrees whose branch is not merged, deleting it (people only)"}),
      field(&PruneArgs::dry_run, {.name = "dryRun", .type = ParamType::Bool,
                                  .description = "Say what would be pruned; remove nothing", .dry_run = true}));
  registry.add({.domain = "orchestrate", .name = "worktrees.prune", .gateway = Gateway::Mutate,
                .summary = "Remove the worktrees and merged branches of finished tasks",
                .params = prune_args.specs(),
                .returns = "{pruned[{id, branch, unmerged?}], kept?[{id, why}], dryRun?}: a worktree with uncommitted "
                           "work, or of a task not done or cancelled, is always kept; one whose branch is not merged "
                           "only goes with force",
                .errors = {ErrorCode::NotFound, ErrorCode::CapabilityUnavailable, ErrorCode::MutationDisabled,
                           ErrorCode::EngineFailed},
                .examples = {{R"({"dryRun":true})", "what would be pruned"}, {R"({"id":"T012"})", "T012's worktree"}},
                .engine = EngineKind::Hybrid, .tier = 2,
                .needs = {"program:git"}, .external = prune_args.handler(prune_external),
                .handler = prune_args.handler(prune)});
}

}  // namespace ct::orchestrate
