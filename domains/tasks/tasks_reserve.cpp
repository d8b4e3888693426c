// tasks domain — reservations (issue 53, engines/rules/reservations.h): tasks.reserve (a claim
// widens or narrows the paths it holds), tasks.reservations (the live ones, or the staged paths of a
// commit against them: what the pre-commit hook runs) and tasks.githook (installs that hook).
#include <algorithm>
#include <filesystem>

#include "core/advice.h"
#include "core/atomic_file.h"
#include "core/file_read.h"
#include "domains/tasks/tasks_common.h"
#include "engines/adapters/subprocess.h"

namespace ct::tasks {
namespace {

namespace fs = std::filesystem;

struct ReserveArgs {
  std::string id;
  std::vector<std::string> add;
  std::vector<std::string> remove;
  bool shared = false;
};

Result<Reply> reserve(Context& context, const ReserveArgs& args) {
  CT_TRY_ASSIGN(std::vector<std::string> add, reserved_paths(args.add, "add"));
  CT_TRY_ASSIGN(std::vector<std::string> remove, reserved_paths(args.remove, "remove"));
  auto engine_ = engine(context);
  CT_TRY_ASSIGN(ReserveResult result, engine_.reserve(args.id, add, remove, args.shared, /*replace=*/false));
  return reservation_reply(context, args.id, result);
}

struct ListArgs {
  std::optional<std::string> task;
  std::optional<std::string> path;
  bool staged = false;
};

constexpr std::chrono::milliseconds kGitTimeout{10'000};

/// A git command in the directory ct runs in (a hook's: the worktree being committed), with the
/// variables git gives a hook (the index a `commit -a` stages into).
ProcessSpec git(std::vector<std::string> argv) {
  ProcessSpec spec;
  spec.argv = std::move(argv);
  spec.argv.insert(spec.argv.begin(), "git");
  spec.env = minimal_environment({"GIT_DIR", "GIT_INDEX_FILE", "GIT_WORK_TREE", "GIT_COMMON_DIR"});
  spec.timeout = kGitTimeout;
  return spec;
}

Result<std::string> git_output(std::vector<std::string> argv, std::string_view what) {
  ProcessSpec spec = git(std::move(argv));
  CT_TRY_ASSIGN(ProcessResult ran, run_process(spec));
  if (!ran.ok()) return fail(process_error(spec, ran, what));
  return std::move(ran.out);
}

std::string first_line(std::string text) {
  if (auto end = text.find('\n'); end != std::string::npos) text.resize(end);
  return text;
}

/// tasks.reservations' external step, with `staged` only: the worktree and its staged paths.
Result<Reply> read_staged(Context&, const ListArgs& args) {
  if (!args.staged) return Reply::of(json::Value());
  CT_TRY_ASSIGN(std::string top, git_output({"rev-parse", "--show-toplevel"}, "the worktree of this commit"));
  CT_TRY_ASSIGN(std::string names, git_output({"diff", "--cached", "--name-only", "-z"}, "the staged paths"));
  json::Value paths = json::Value::array();
  for (std::size_t start = 0; start < names.size();) {
    std::size_t end = names.find('\0', start);
    if (end == std::string::npos) end = names.size();
    if (end > start) paths.push_back(names.substr(start, end - start));
    start = end + 1;
  }
  json::Value data = json::Value::object();
  data.set("worktree", first_line(std::move(top)));
  data.set("paths", std::move(paths));
  return Reply::of(std::move(data));
}

bool same_place(const std::string& a, const std::string& b) {
  if (a.empty() || b.empty()) return false;
  std::error_code ec1, ec2;
  return fs::weakly_canonical(a, ec1) == fs::weakly_canonical(b, ec2) && !ec1 && !ec2;
}

/// The staged paths against live reservations of sessions running in another worktree (or in
/// one they did not record): warned, or E_PATH_RESERVED in strict mode (the hook's exit code
/// refuses the commit).
Result<Reply> check_staged(Context& context, const Reply& staged) {
  const std::string worktree = staged.data["worktree"].string_or_empty();
  std::vector<std::string> paths;
  for (const auto& item : staged.data["paths"].as_array()) paths.push_back(item.as_string());
  CT_TRY_ASSIGN(std::vector<Reservation> held, reservations::live(context.db(), *context.config, context.now()));
  std::erase_if(held, [&](const Reservation& row) { return same_place(row.worktree, worktree); });
  // No session of the caller's is skipped: every other worktree's reservation counts, shared ones
  // too (a commit writes).
  std::vector<reservations::Conflict> found = reservations::conflicts(paths, /*shared=*/false, nullptr, held);
  json::Value data = json::Value::object();
  data.set("staged", static_cast<std::int64_t>(paths.size()));
  if (found.empty()) return Reply::of(std::move(data));
  if (reservations::strict(*context.config)) return fail(reservations::refusal(found, *context.config, context.now()));
  data.set("conflicts", reservations::conflicts_json(found, *context.config));
  return Reply::warned(std::move(data),
                       {"staged paths reserved in another worktree: " + reservations::describe(found, *context.config)});
}

Result<Reply> list(Context& context, const ListArgs& args) {
  if (args.staged && context.external) return check_staged(context, *context.external);
  std::optional<std::string> path;
  if (args.path) {
    CT_TRY_ASSIGN(path, reservations::normal_path(*args.path, "path"));
  }
  CT_TRY_ASSIGN(std::vector<Reservation> held,
                reservations::live(context.db(), *context.config, context.now(), args.task.value_or("")));
  json::Value rows = json::Value::array();
  for (const auto& row : held)
    if (!path || reservations::overlaps(*path, row.path)) {
      json::Value item = reservations::reservation_json(row, *context.config);
      if (!row.worktree.empty()) item.set("worktree", row.worktree);
      rows.push_back(std::move(item));
    }
  const bool none = rows.as_array().empty();
  return Reply::noted(std::move(rows), no_data_if(none));
}

struct HookArgs {
  bool remove = false;
  bool dry_run = false;
};

constexpr std::string_view kHookMark = "# cleo-reservations: installed by `ct tasks githook`";
constexpr std::string_view kChained = "pre-commit.before-cleo";

std::string sh_quoted(std::string_view text) {
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

/// The hook: the pre-commit hook it took the place of runs first (chained), then ct checks the
/// staged paths. Only E_PATH_RESERVED (exit 24) refuses the commit: a ct that cannot check (no
/// project here, a store it cannot reach) says why and stays out of the way.
std::string hook_script(const std::string& ct, bool chained) {
  std::string text = "#!/bin/sh\n" + std::string(kHookMark) + "\n";
  text += "# `ct tasks githook --remove` takes it out" + std::string(chained ? " and puts back the hook it chains" : "") +
          ". Staged paths another worktree's session reserved are\n"
          "# warned, or the commit is refused when reservations.mode is strict.\n";
  if (chained) text += "\"$(dirname \"$0\")/" + std::string(kChained) + "\" \"$@\" || exit $?\n";
  text += sh_quoted(ct) + " tasks reservations --staged\n";
  text += "[ $? -eq " + std::to_string(exit_code(ErrorCode::PathReserved)) + " ] && exit 1\nexit 0\n";
  return text;
}

Result<fs::path> hooks_dir(Context& context) {
  ProcessSpec spec = git({"rev-parse", "--git-path", "hooks"});
  spec.cwd = context.root();
  CT_TRY_ASSIGN(ProcessResult ran, run_process(spec));
  if (!ran.ok()) return fail(process_error(spec, ran, "the repository's hooks folder"));
  fs::path dir = first_line(std::move(ran.out));
  return dir.is_absolute() ? dir : context.root() / dir;
}

Result<std::optional<std::string>> read_hook(const fs::path& file) {
  std::error_code ec;
  if (!fs::exists(fs::symlink_status(file, ec))) return std::optional<std::string>();
  CT_TRY_ASSIGN(std::string text, read_regular_file(file, {1LL << 20, std::chrono::milliseconds(5000)}));
  return std::optional<std::string>(std::move(text));
}

Result<void> write_hook(const fs::path& file, const std::string& text) {
  CT_TRY(write_file_atomically(file, text));
  std::error_code ec;
  fs::permissions(file, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec | fs::perms::others_read |
                            fs::perms::others_exec, ec);
  if (ec) return fail(Error(ErrorCode::FileError, "cannot make " + file.string() + " executable: " + ec.message()));
  return {};
}

/// tasks.githook: its whole work is outside the store (git says where hooks live; the file is
/// written there), so it is the external step.
Result<Reply> githook(Context& context, const HookArgs& args) {
  if (!context.is_person())
    return fail(Error(ErrorCode::MutationDisabled, "a git hook runs on every commit in every worktree: a person installs it")
                    .with_fix("ask a person to run: ct tasks githook"));
  CT_TRY_ASSIGN(fs::path dir, hooks_dir(context));
  const fs::path file = dir / "pre-commit";
  const fs::path chained = dir / kChained;
  CT_TRY_ASSIGN(std::optional<std::string> current, read_hook(file));
  CT_TRY_ASSIGN(std::optional<std::string> before, read_hook(chained));
  const bool ours = current && current->find(kHookMark) != std::string::npos;
  json::Value data = json::Value::object();
  data.set("file", file.string());
  std::string action;
  if (args.remove) {
    if (!ours) return Reply::noted(std::move(data), ErrorCode::NoChange, {"no CLEO pre-commit hook is installed"});
    action = before ? "restored" : "removed";
    if (!args.dry_run) {
      std::error_code ec;
      if (before) fs::rename(chained, file, ec);
      else fs::remove(file, ec);
      if (ec) return fail(Error(ErrorCode::FileError, "cannot take out " + file.string() + ": " + ec.message()));
    }
  } else {
    const auto ct = installed_program("ct");
    const std::string script = hook_script(ct ? ct->string() : std::string("ct"), ours ? before.has_value() : current.has_value());
    if (ours && *current == script) return Reply::noted(std::move(data), ErrorCode::NoChange, {"the hook is installed"});
    if (current && !ours && before) {
      // Chaining it would overwrite the hook chained before.
      return fail(Error(ErrorCode::Validation, file.string() + " is another hook and " + chained.string() +
                                                      " exists already: neither is overwritten")
                      .with_fix("merge them into one pre-commit hook, then run: ct tasks githook"));
    }
    action = ours ? "updated" : current ? "chained" : "created";
    if (!args.dry_run) {
      std::error_code ec;
      fs::create_directories(dir, ec);
      // The hook found there keeps running, whole, from its new name.
      if (current && !ours) {
        fs::rename(file, chained, ec);
        if (ec) return fail(Error(ErrorCode::FileError, "cannot move " + file.string() + " aside: " + ec.message()));
      }
      CT_TRY(write_hook(file, script));
    }
    if (current && !ours) data.set("chained", chained.string());
  }
  data.set("action", args.dry_run ? "would be " + action : action);
  return Reply::of(std::move(data));
}

}  // namespace

ParamSpec paths_param(std::string_view name, std::string_view description) {
  return {.name = name, .type = ParamType::Array, .max = 50, .item_max = 300, .description = description};
}

ParamSpec shared_param() {
  return {.name = "shared", .type = ParamType::Bool,
          .description = "Read-mostly: overlaps only others' exclusive reservations"};
}

Result<std::vector<std::string>> reserved_paths(const std::vector<std::string>& given, std::string_view field) {
  std::vector<std::string> out;
  for (const auto& path : given) {
    CT_TRY_ASSIGN(std::string normal, reservations::normal_path(path, field));
    if (std::ranges::find(out, normal) == out.end()) out.push_back(std::move(normal));
  }
  return out;
}

Reply reservation_reply(Context& context, const std::string& id, const ReserveResult& result) {
  json::Value data = json::Value::object();
  data.set("id", id);
  data.set("reserved", reservations::audit_value(result.held));
  Reply reply = Reply::noted(std::move(data), no_change_if(!result.changed));
  add_conflicts(context, result, reply);
  return reply;
}

void add_conflicts(Context& context, const ReserveResult& result, Reply& reply) {
  if (result.conflicts.empty()) return;
  reply.data.set("conflicts", reservations::conflicts_json(result.conflicts, *context.config));
  reply.warnings.push_back(reservations::kept_warning(result.conflicts, *context.config));
}

void register_tasks_reserve(Registry& registry) {
  const auto reserve_args =
      bind(field(&ReserveArgs::id, id_param()), field(&ReserveArgs::add, paths_param("add", "Paths to reserve too")),
           field(&ReserveArgs::remove, paths_param("remove", "Paths to release")),
           field(&ReserveArgs::shared, shared_param()));
  add_task_write(registry,
                 {.domain = "tasks", .name = "reserve", .gateway = Gateway::Mutate,
                  .summary = "Widen or narrow the paths your claim reserves",
                  .params = reserve_args.specs(),
                  .returns = "{id, reserved[path|{path,shared}], conflicts?[{path, heldBy{task, session, agent?, path, "
                             "shared?, leaseEnds?}}]}: advisory reservations.mode keeps overlapping paths with a "
                             "warning, strict refuses them (E_PATH_RESERVED)",
                  .errors = {ErrorCode::NotFound, ErrorCode::Validation, ErrorCode::ActiveTaskRequired,
                             ErrorCode::PathReserved},
                  .examples = {{R"({"id":"T002","add":["src/store/"],"remove":["docs/a.md"]})", "hold src/store too"}},
                  .idempotent = true, .tier = 2, .text_view = TextView::Generic,
                  .handler = reserve_args.handler(reserve)});
  const auto list_args = bind(
      field(&ListArgs::task, {.name = "task", .type = ParamType::TaskId, .description = "Only this task's"}),
      field(&ListArgs::path, {.name = "path", .type = ParamType::String, .max = 300,
                              .description = "Only those overlapping this path or glob"}),
      field(&ListArgs::staged, {.name = "staged", .type = ParamType::Bool,
                                .description = "Check the paths git has staged here against other worktrees' (the "
                                               "pre-commit hook)"}));
  registry.add({.domain = "tasks", .name = "reservations", .gateway = Gateway::Query,
                .summary = "Live reservations: who holds which paths until when",
                .params = list_args.specs(),
                .returns = "[{path, shared?, task, session, agent?, leaseEnds?, worktree?}]; staged: {staged (paths), "
                           "conflicts?[{path, heldBy}]}, E_PATH_RESERVED in strict reservations.mode",
                .errors = {ErrorCode::Validation, ErrorCode::PathReserved, ErrorCode::CapabilityUnavailable},
                .examples = {{R"({"path":"src/store/"})", "who holds src/store"},
                             {R"({"staged":true})", "check a commit (what the git hook runs)"}},
                .tier = 2, .text_view = TextView::Generic, .external = list_args.handler(read_staged),
                .external_checks_only = true, .handler = list_args.handler(list)});
  const auto hook_args = bind(
      field(&HookArgs::remove, {.name = "remove", .type = ParamType::Bool,
                                .description = "Take the hook out (the hook it chained goes back)"}),
      field(&HookArgs::dry_run,
            {.name = "dryRun", .type = ParamType::Bool, .description = "Say what would change", .dry_run = true}));
  registry.add({.domain = "tasks", .name = "githook", .gateway = Gateway::Mutate,
                .summary = "Install a git pre-commit hook that checks commits against reservations",
                .params = hook_args.specs(),
                .returns = "{file, action created|chained|updated|removed|restored (dry run: would be …), chained? "
                           "(the hook found there, run first)}; E_NO_CHANGE note when nothing changed",
                .errors = {ErrorCode::MutationDisabled, ErrorCode::Validation, ErrorCode::FileError,
                           ErrorCode::CapabilityUnavailable},
                .examples = {{R"({})", "install it (in the repository's common hooks folder)"},
                             {R"({"remove":true})", "take it out"}},
                .idempotent = true, .tier = 2, .text_view = TextView::Generic, .needs = {"program:git", "git-repo"},
                .external = hook_args.handler(githook)});
}

}  // namespace ct::tasks
