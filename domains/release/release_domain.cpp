// release domain — releases stored with the tasks (version, status, tasks, notes), their changelog
// in CHANGELOG.md, and shipping through git: gates, changelog, version file, commit, tag, push
// (engines/rules/release_engine.h). Every git command runs in the spec's external step, before the
// store's write transaction, so a slow git or gate never holds the write lock; the handler then
// records what git did.
#include <algorithm>
#include <chrono>

#include "core/atomic_file.h"
#include "core/text.h"
#include "domains/context.h"
#include "domains/params.h"
#include "core/file_read.h"
#include "domains/pipeline.h"
#include "domains/registry.h"
#include "engines/rules/release_engine.h"

namespace ct {
namespace {

std::vector<std::string> split_words(std::string_view text) {
  std::vector<std::string> words;
  std::string word;
  for (char c : text) {
    if (c == ' ' || c == '\t') {
      if (!word.empty()) words.push_back(std::move(word));
      word.clear();
    } else {
      word += c;
    }
  }
  if (!word.empty()) words.push_back(std::move(word));
  return words;
}

std::string trim_sha(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
  return text;
}

const std::string& version_param(const Params& params) { return params.str("version"); }

/// The version as stored ("v1.2.0" → "1.2.0"); the param's pattern already checked it.
std::string normalized(const Params& params) {
  auto version = normalize_semver(version_param(params));
  return version ? *version : version_param(params);
}

Error release_not_found(const std::string& version) {
  return Error(ErrorCode::NotFound, "Release " + version + " not found")
      .with_fix(call("release.list") + " lists the releases; " + call("release.create", {{"version", version}}) +
                " creates it")
      .with_detail("version", version);
}

Result<Release> load(Context& context, const std::string& version) {
  CT_TRY_ASSIGN(std::optional<Release> release, context.db().get_release(version));
  if (!release) return fail(release_not_found(version));
  return std::move(*release);
}

json::Value summary_json(const Release& release) {
  json::Value out = json::Value::object();
  out.set("version", release.version);
  out.set("status", to_string(release.status));
  out.set("tasks", static_cast<std::int64_t>(release.tasks.size()));
  out.set("createdAt", format_iso8601(release.created_at));
  if (release.released_at) out.set("releasedAt", format_iso8601(*release.released_at));
  if (!release.tag.empty()) out.set("tag", release.tag);
  return out;
}

json::Value full_json(const Release& release, const std::vector<Task>& tasks) {
  json::Value out = summary_json(release);
  json::Value list = json::Value::array();
  for (const auto& id : release.tasks) {
    json::Value item = json::Value::object();
    item.set("id", id);
    auto found = std::find_if(tasks.begin(), tasks.end(), [&](const Task& t) { return t.id == id; });
    if (found != tasks.end()) {
      item.set("title", found->title);
      item.set("status", to_string(found->status));
    }
    list.push_back(std::move(item));
  }
  out.set("tasks", std::move(list));
  if (!release.notes.empty()) out.set("notes", release.notes);
  out.set("updatedAt", format_iso8601(release.updated_at));
  if (!release.commit.empty()) out.set("commit", release.commit);
  if (!release.tag.empty()) out.set("pushed", release.pushed);
  if (!release.remote.empty()) out.set("remote", release.remote);
  return out;
}

/// The record of a release in the audit trail (before/after of a change).
json::Value audit_json(const Release& release) {
  json::Value out = json::Value::object();
  out.set("status", to_string(release.status));
  out.set("tasks", json::Value::array_of(release.tasks));
  if (!release.tag.empty()) out.set("tag", release.tag);
  if (!release.commit.empty()) out.set("commit", release.commit);
  if (release.pushed) out.set("pushed", true);
  return out;
}

void record(Context& context, const std::optional<Release>& before, const Release& after) {
  context.record(FieldChange{"", "release." + after.version, before ? audit_json(*before) : json::Value(),
                             audit_json(after)});
}

ReleaseStatus unreleased_status(const Release& release) {
  return release.tasks.empty() ? ReleaseStatus::Planned : ReleaseStatus::Active;
}

Result<std::vector<Task>> done_tasks(Context& context, const Release& release) {
  CT_TRY_ASSIGN(std::vector<Task> tasks, context.db().get_tasks(release.tasks));
  std::vector<Task> done;
  // In the release's order (get_tasks may return them in any order).
  for (const auto& id : release.tasks)
    for (auto& task : tasks)
      if (task.id == id && task.status == TaskStatus::Done) done.push_back(task);
  return done;
}

std::string day_of(TimeMs at) { return format_iso8601(at).substr(0, 10); }

GitOptions git_options(Context& context) {
  GitOptions options;
  options.root = context.project->root;
  options.timeout = std::chrono::seconds(context.config->get_int("release.timeoutSeconds"));
  return options;
}

// -- queries ----------------------------------------------------------------------------------

Result<Reply> list(Context& context, const Params&) {
  CT_TRY_ASSIGN(std::vector<Release> releases, context.db().list_releases());
  json::Value data = json::Value::array();
  for (const auto& release : releases) data.push_back(summary_json(release));
  std::optional<ErrorCode> note;
  if (releases.empty()) note = ErrorCode::NoData;
  return Reply{std::move(data), {}, {}, note};
}

Result<Reply> show(Context& context, const Params& params) {
  CT_TRY_ASSIGN(Release release, load(context, normalized(params)));
  CT_TRY_ASSIGN(std::vector<Task> tasks, context.db().get_tasks(release.tasks));
  return Reply{full_json(release, tasks), {}, {}, {}};
}

// -- create, plan, changelog ------------------------------------------------------------------

Result<Reply> create(Context& context, const Params& params) {
  const std::string version = normalized(params);
  CT_TRY_ASSIGN(std::optional<Release> existing, context.db().get_release(version));
  if (existing) return Reply{summary_json(*existing), {}, {}, ErrorCode::AlreadyExists};
  Release release;
  release.version = version;
  if (auto notes = params.opt_str("notes")) release.notes = *notes;
  release.created_at = release.updated_at = context.now();
  CT_TRY(context.db().put_release(release));
  record(context, std::nullopt, release);
  return Reply{summary_json(release), {}, {}, {}};
}

Result<Reply> plan(Context& context, const Params& params) {
  CT_TRY_ASSIGN(Release release, load(context, normalized(params)));
  const Release before = release;
  if (release.status == ReleaseStatus::Released)
    return fail(Error(ErrorCode::Validation, "release " + release.version + " was shipped; its tasks are fixed")
                    .with_fix(call("release.rollback", {{"version", release.version}, {"reason", "…"}}) +
                              " first, or plan the tasks into a new release")
                    .with_detail("version", release.version));
  std::vector<std::string> add = params.strings("add");
  if (!add.empty()) {
    CT_TRY_ASSIGN(std::vector<Task> found, context.db().get_tasks(add));
    for (const auto& id : add)
      if (std::none_of(found.begin(), found.end(), [&](const Task& t) { return t.id == id; }))
        return fail(Error(ErrorCode::NotFound, "Task " + id + " not found")
                        .with_fix(call("tasks.find", {{"query", id}}))
                        .with_detail("id", id));
  }
  for (const auto& id : add)
    if (std::find(release.tasks.begin(), release.tasks.end(), id) == release.tasks.end()) release.tasks.push_back(id);
  for (const auto& id : params.strings("remove")) std::erase(release.tasks, id);
  release.status = unreleased_status(release);
  if (release.tasks == before.tasks && release.status == before.status)
    return Reply{summary_json(release), {}, {}, ErrorCode::NoChange};
  release.updated_at = context.now();
  CT_TRY(context.db().put_release(release));
  record(context, before, release);
  json::Value data = summary_json(release);
  data.set("taskIds", json::Value::array_of(release.tasks));
  return Reply{std::move(data), {}, {}, {}};
}

/// release.changelog's external step: with `write`, CHANGELOG.md read (with its stamp) before the
/// transaction, which reads no file (core/file_read.h).
Result<Reply> read_changelog(Context& context, const Params& params) {
  json::Value data = json::Value::object();
  if (!params.flag("write")) return Reply{std::move(data), {}, {}, {}};
  CT_TRY(check_release_file(context.project->root, "CHANGELOG.md", "the changelog"));
  const auto file = context.project->root / "CHANGELOG.md";
  std::string existing;
  FileStamp stamp = file_stamp(file);
  if (stamp.size >= 0) {
    CT_TRY_ASSIGN(existing, read_regular_file(file, {kMaxReleaseFileBytes, std::chrono::milliseconds(10000)}, &stamp));
  }
  data.set("existing", std::move(existing));
  data.set("size", stamp.size);
  data.set("mtimeNs", stamp.mtime_ns);
  return Reply{std::move(data), {}, {}, {}};
}

Result<Reply> changelog(Context& context, const Params& params) {
  CT_TRY_ASSIGN(Release release, load(context, normalized(params)));
  CT_TRY_ASSIGN(std::vector<Task> done, done_tasks(context, release));
  std::string section = render_changelog_section(
      release, done, release.released_at ? day_of(*release.released_at) : std::string("Unreleased"));
  json::Value data = json::Value::object();
  data.set("version", release.version);
  data.set("tasks", static_cast<std::int64_t>(done.size()));
  data.set("markdown", section);
  if (!params.flag("write")) return Reply{std::move(data), {}, {}, {}};

  // CHANGELOG.md as the external step read it: written only when it has not changed since.
  if (!context.external || !context.external->data["existing"].is_string())
    return fail(ErrorCode::Internal, "release.changelog: CHANGELOG.md was not read before the transaction");
  const auto file = context.project->root / "CHANGELOG.md";
  const std::string existing = context.external->data["existing"].as_string();
  const FileStamp now = file_stamp(file);
  if (now.size != context.external->data["size"].as_int() || now.mtime_ns != context.external->data["mtimeNs"].as_int())
    return fail(Error(ErrorCode::ConcurrentModification, "CHANGELOG.md changed while the release read it")
                    .with_fix("retry: " + call("release.changelog", {{"version", release.version}, {"write", true}}))
                    .with_detail("file", "CHANGELOG.md"));
  std::string merged = merge_changelog(existing, release.version, section);
  data.set("file", "CHANGELOG.md");
  if (merged == existing) {
    data.set("written", false);
    return Reply{std::move(data), {}, {}, ErrorCode::NoChange};
  }
  CT_TRY(write_file_atomically(file, merged));
  context.record(FieldChange{"", "CHANGELOG.md", json::Value(), json::Value("section " + release.version)});
  data.set("written", true);
  return Reply{std::move(data), {}, {}, {}};
}

// -- ship -------------------------------------------------------------------------------------

/// The configured gates: release.gates, then validate.testCommand when that key exists and is set
/// (an argv array, or a line split at spaces — never given to a shell).
std::vector<std::vector<std::string>> configured_gates(const Config& config) {
  std::vector<std::vector<std::string>> gates;
  for (const auto& command : config.get("release.gates").as_array()) {
    std::vector<std::string> argv;
    for (const auto& word : command.as_array()) argv.push_back(word.as_string());
    gates.push_back(std::move(argv));
  }
  if (find_config_key("validate.testCommand") != nullptr) {
    const json::Value& test = config.get("validate.testCommand");
    std::vector<std::string> argv;
    if (test.is_string()) {
      argv = split_words(test.as_string());
    } else if (test.is_array()) {
      for (const auto& word : test.as_array())
        if (word.is_string()) argv.push_back(word.as_string());
    }
    if (!argv.empty()) gates.push_back(std::move(argv));
  }
  return gates;
}

Result<Reply> ship_external(Context& context, const Params& params) {
  const std::string version = normalized(params);
  ShipInput input;
  CT_TRY(pipeline::read_in_own_transaction(context, [&]() -> Result<void> {
    CT_TRY_ASSIGN(input.release, load(context, version));
    CT_TRY_ASSIGN(input.done, done_tasks(context, input.release));
    return {};
  }));
  if (input.release.status == ReleaseStatus::Released)
    return fail(Error(ErrorCode::Validation, "release " + version + " was already shipped (" + input.release.tag + ")")
                    .with_fix(call("release.rollback", {{"version", version}, {"reason", "…"}}) + " first to ship it again")
                    .with_detail("version", version));
  input.date = day_of(context.now());
  input.gates = configured_gates(*context.config);
  input.version_file = context.config->get_string("release.versionFile");
  input.remote = context.config->get_string("release.remote");
  input.push = params.flag("push");
  input.copies_dir = (context.project->backups_dir() / "release").lexically_relative(context.project->root).generic_string();
  const GitOptions options = git_options(context);
  CT_TRY_ASSIGN(ShipPlan plan, plan_ship(options, input));

  json::Value data = json::Value::object();
  data.set("version", version);
  data.set("tag", plan.tag);
  data.set("branch", plan.branch);
  if (params.flag("dryRun")) {
    json::Value steps = json::Value::array();
    for (const auto& step : plan.steps) steps.push_back(step_json(step, true));
    data.set("dryRun", true);
    data.set("steps", std::move(steps));
    return Reply{std::move(data), {}, {}, {}};
  }
  CT_TRY_ASSIGN(StepsOutcome outcome, run_steps(options, plan.steps));
  CT_TRY_ASSIGN(std::string commit, git_output(options, {"rev-parse", plan.tag + "^{commit}"}, "release.ship"));
  data.set("commit", commit);
  data.set("pushed", input.push);
  if (input.push) data.set("remote", input.remote);
  data.set("steps", json::Value::array_of(outcome.done));
  return Reply{std::move(data), {}, {}, {}};
}

Result<Reply> ship(Context& context, const Params& params) {
  Reply reply = std::move(*context.external);
  if (params.flag("dryRun")) return reply;
  CT_TRY_ASSIGN(Release release, load(context, normalized(params)));
  const Release before = release;
  release.status = ReleaseStatus::Released;
  release.released_at = release.updated_at = context.now();
  release.tag = reply.data["tag"].as_string();
  release.commit = reply.data["commit"].as_string();
  release.pushed = reply.data["pushed"].as_bool();
  release.remote = release.pushed ? reply.data["remote"].as_string() : std::string();
  CT_TRY(context.db().put_release(release));
  record(context, before, release);
  reply.data.set("status", to_string(release.status));
  return reply;
}

// -- tag, rollback ----------------------------------------------------------------------------

Result<Reply> tag_external(Context& context, const Params& params) {
  const std::string version = normalized(params);
  CT_TRY_ASSIGN(Release release, pipeline::read_in_own_transaction(context, [&] { return load(context, version); }));
  const GitOptions options = git_options(context);
  CT_TRY(require_git_repo(options));
  const std::string tag = release_tag(version);
  json::Value data = json::Value::object();
  data.set("version", version);
  data.set("tag", tag);
  CT_TRY_ASSIGN(ProcessResult exists, run_git(options, {"rev-parse", "-q", "--verify", "refs/tags/" + tag}));
  std::optional<ErrorCode> note;
  if (exists.ok()) {
    note = release.tag == tag ? ErrorCode::NoChange : ErrorCode::AlreadyExists;
  } else {
    CT_TRY(run_steps(options, {{.name = "tag", .argv = {"git", "tag", "-a", tag, "-m", "Release " + version},
                                .undo = {"git", "tag", "-d", tag}}}));
  }
  CT_TRY_ASSIGN(std::string commit, git_output(options, {"rev-parse", tag + "^{commit}"}, "release.tag"));
  data.set("commit", commit);
  return Reply{std::move(data), {}, {}, note};
}

Result<Reply> tag(Context& context, const Params& params) {
  Reply reply = std::move(*context.external);
  if (reply.note == ErrorCode::NoChange) return reply;
  CT_TRY_ASSIGN(Release release, load(context, normalized(params)));
  const Release before = release;
  release.tag = reply.data["tag"].as_string();
  release.commit = reply.data["commit"].as_string();
  release.updated_at = context.now();
  CT_TRY(context.db().put_release(release));
  record(context, before, release);
  return reply;
}

Result<Reply> rollback_external(Context& context, const Params& params) {
  const std::string version = normalized(params);
  CT_TRY_ASSIGN(Release release, pipeline::read_in_own_transaction(context, [&] { return load(context, version); }));
  const GitOptions options = git_options(context);
  CT_TRY(require_git_repo(options));
  const std::string tag = release_tag(version);
  CT_TRY_ASSIGN(ProcessResult local, run_git(options, {"rev-parse", "-q", "--verify", "refs/tags/" + tag + "^{commit}"}));
  std::vector<ReleaseStep> steps;
  if (release.pushed && !release.remote.empty())
    steps.push_back({.name = "deleteRemoteTag", .argv = {"git", "push", release.remote, "--delete", "refs/tags/" + tag},
                     .undo = {"git", "push", release.remote, "refs/tags/" + tag}});
  if (local.ok())
    steps.push_back({.name = "deleteTag", .argv = {"git", "tag", "-d", tag},
                     .undo = {"git", "tag", "-a", "-m", "Release " + version, tag, trim_sha(local.out)}});
  json::Value data = json::Value::object();
  data.set("version", version);
  data.set("tag", tag);
  if (steps.empty() && release.status != ReleaseStatus::Released && release.tag.empty())
    return Reply{std::move(data), {}, {}, ErrorCode::NoChange};
  CT_TRY_ASSIGN(StepsOutcome outcome, run_steps(options, steps));
  data.set("steps", json::Value::array_of(outcome.done));
  data.set("removedRemote", release.pushed && !release.remote.empty());
  if (release.pushed) data.set("remote", release.remote);
  if (!release.commit.empty()) data.set("commit", release.commit);
  return Reply{std::move(data), {}, {}, {}};
}

Result<Reply> rollback(Context& context, const Params& params) {
  Reply reply = std::move(*context.external);
  if (reply.note == ErrorCode::NoChange) return reply;
  CT_TRY_ASSIGN(Release release, load(context, normalized(params)));
  const Release before = release;
  release.status = unreleased_status(release);
  release.released_at.reset();
  release.tag.clear();
  release.commit.clear();
  release.pushed = false;
  release.remote.clear();
  release.updated_at = context.now();
  CT_TRY(context.db().put_release(release));
  record(context, before, release);
  reply.data.set("status", to_string(release.status));
  if (!before.commit.empty())
    reply.warnings.push_back("the release commit " + before.commit.substr(0, 12) +
                             " stays in the history: `git revert " + before.commit.substr(0, 12) + "` undoes it");
  return reply;
}

ParamSpec version_spec() {
  return {.name = "version", .type = ParamType::String, .required = true, .min = 5, .max = 64,
          .pattern = kSemverPattern, .description = "Semantic version, e.g. 1.2.0 (a leading v is dropped)",
          .positional = true, .single_line = true};
}

}  // namespace

void register_release_domain(Registry& registry) {
  registry.add({.domain = "release", .name = "list", .gateway = Gateway::Query,
                .summary = "List releases, newest first",
                .returns = "[{version, status, tasks, createdAt, releasedAt?, tag?}]; E_NO_DATA note when none",
                .examples = {{R"({})", "every release"}},
                .idempotent = true, .tier = 2, .handler = list});
  registry.add({.domain = "release", .name = "show", .gateway = Gateway::Query,
                .summary = "Show a release with its tasks and git state",
                .params = {version_spec()},
                .returns = "{version, status, tasks[{id, title, status}], notes?, createdAt, updatedAt, releasedAt?, "
                           "tag?, commit?, pushed?, remote?}",
                .errors = {ErrorCode::NotFound},
                .examples = {{R"({"version":"1.0.0"})", "release 1.0.0"}},
                .idempotent = true, .tier = 2, .handler = show});
  registry.add({.domain = "release", .name = "create", .gateway = Gateway::Mutate,
                .summary = "Create a planned release",
                .params = {version_spec(),
                           {.name = "notes", .type = ParamType::String, .max = 2000,
                            .description = "Notes shown at the top of its changelog section"}},
                .returns = "{version, status, tasks, createdAt}; E_ALREADY_EXISTS note (the existing one) on a repeat",
                .examples = {{R"({"version":"1.0.0","notes":"First stable release"})", "plan 1.0.0"}},
                .idempotent = true, .tier = 2, .handler = create});
  registry.add({.domain = "release", .name = "plan", .gateway = Gateway::Mutate,
                .summary = "Add or remove a release's tasks",
                .params = {version_spec(),
                           {.name = "add", .type = ParamType::Array, .max = 500, .item_type = ParamType::TaskId,
                            .description = "Task ids to add"},
                           {.name = "remove", .type = ParamType::Array, .max = 500, .item_type = ParamType::TaskId,
                            .description = "Task ids to remove"}},
                .returns = "{version, status, tasks, taskIds[]}; status is active while it holds tasks, else planned; "
                           "E_NO_CHANGE note when nothing changed",
                .errors = {ErrorCode::NotFound, ErrorCode::Validation},
                .examples = {{R"({"version":"1.0.0","add":["T001"]})", "put T001 into 1.0.0"}},
                .idempotent = true, .tier = 2, .handler = plan});
  registry.add({.domain = "release", .name = "changelog", .gateway = Gateway::Mutate,
                .summary = "Render a release's changelog; write:true updates CHANGELOG.md",
                .params = {version_spec(),
                           {.name = "write", .type = ParamType::Bool, .default_json = "false",
                            .description = "Write or replace this version's section of CHANGELOG.md (nothing else "
                                           "in the file changes)"}},
                .returns = "{version, tasks, markdown, file?, written?}: done tasks grouped by label (Features, Fixes, "
                           "Documentation, Maintenance) or type; E_NO_CHANGE note when the file already had it",
                .errors = {ErrorCode::NotFound, ErrorCode::Validation, ErrorCode::ConcurrentModification},
                .examples = {{R"({"version":"1.0.0"})", "preview the changelog"},
                             {R"({"version":"1.0.0","write":true})", "write it into CHANGELOG.md"}},
                .idempotent = true, .tier = 2, .external = read_changelog, .external_checks_only = true,
                .handler = changelog});
  registry.add({.domain = "release", .name = "ship", .gateway = Gateway::Mutate,
                .summary = "Run gates, write changelog, bump, commit, tag, push",
                .params = {version_spec(),
                           {.name = "push", .type = ParamType::Bool, .default_json = "false",
                            .description = "Also push the branch and the tag to release.remote"},
                           {.name = "dryRun", .type = ParamType::Bool, .default_json = "false",
                            .description = "List every step with its argv and undo; change nothing", .dry_run = true}},
                .returns = "{version, tag, branch, commit, pushed, remote?, status, steps[{step, argv?|file, undo}]}; "
                           "gates are release.gates (+ validate.testCommand), the version file release.versionFile. "
                           "A failed step stops: error.details.done lists the steps done with their undo, newest first",
                .errors = {ErrorCode::NotFound, ErrorCode::Validation, ErrorCode::EngineFailed, ErrorCode::Timeout},
                .examples = {{R"({"version":"1.0.0","dryRun":true})", "what would shipping 1.0.0 do?"},
                             {R"({"version":"1.0.0","push":true})", "ship and push"}},
                .engine = EngineKind::Hybrid, .destructive = true, .tier = 2,
                .aliases = {"prepare", "publish", "bump", "commit", "push", "gates.run"},
                .needs = {"program:git", "git-repo"}, .alternatives = {"release.changelog"},
                .external = ship_external,
                .runs_long = [](const json::Value& params) { return params["dryRun"] != json::Value(true); },
                .handler = ship});
  registry.add({.domain = "release", .name = "tag", .gateway = Gateway::Mutate,
                .summary = "Make the annotated git tag v<version> at HEAD",
                .params = {version_spec()},
                .returns = "{version, tag, commit}; E_NO_CHANGE note when the release already has it, "
                           "E_ALREADY_EXISTS when the tag existed (it is recorded)",
                .errors = {ErrorCode::NotFound, ErrorCode::EngineFailed, ErrorCode::Timeout},
                .examples = {{R"({"version":"1.0.0"})", "tag v1.0.0"}},
                .engine = EngineKind::Hybrid, .idempotent = true, .tier = 2,
                .needs = {"program:git", "git-repo"}, .alternatives = {"release.changelog"},
                .external = tag_external, .handler = tag});
  registry.add({.domain = "release", .name = "rollback", .gateway = Gateway::Mutate,
                .summary = "Delete a release's tag (also on the remote) and reopen it",
                .params = {version_spec(),
                           {.name = "reason", .type = ParamType::String, .required = true, .min = 3, .max = 500,
                            .description = "Why it is rolled back (kept in the audit trail)"}},
                .returns = "{version, tag, status, removedRemote, remote?, commit?, steps[]}; the release commit "
                           "stays (a warning names the git revert); E_NO_CHANGE note when nothing was tagged",
                .errors = {ErrorCode::NotFound, ErrorCode::EngineFailed, ErrorCode::Timeout},
                .examples = {{R"({"version":"1.0.0","reason":"broken build"})", "undo the 1.0.0 tag"}},
                .engine = EngineKind::Hybrid, .destructive = true, .tier = 2,
                .needs = {"program:git", "git-repo"}, .alternatives = {"release.changelog"},
                .external = rollback_external, .handler = rollback});
}

}  // namespace ct
