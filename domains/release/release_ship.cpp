// release domain — ship, tag and rollback: a release's git work (engines/rules/release_engine.h) —
// gates, changelog, version file, commit, tag, push, and their undo — runs in the spec's external
// step, before the store's write transaction, so a slow git or gate never holds the write lock;
// the handler then records what git did. The releases themselves are release_domain.cpp's.
#include <algorithm>
#include <chrono>

#include "domains/bind.h"
#include "domains/pipeline.h"
#include "domains/registry.h"
#include "domains/release/release_common.h"

namespace ct::release {
namespace {

std::string trim_sha(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
  return text;
}

GitOptions git_options(Context& context) {
  GitOptions options;
  options.root = context.project->root;
  options.timeout = std::chrono::seconds(context.config->get_int("release.timeoutSeconds"));
  return options;
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

struct ShipArgs {
  std::string version;
  bool push = false;
  bool dry_run = false;
};

Result<Reply> ship_external(Context& context, const ShipArgs& args) {
  const std::string version = normalized(args.version);
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
  input.push = args.push;
  input.copies_dir = (context.project->backups_dir() / "release").lexically_relative(context.project->root).generic_string();
  const GitOptions options = git_options(context);
  CT_TRY_ASSIGN(ShipPlan plan, plan_ship(options, input));

  json::Value data = json::Value::object();
  data.set("version", version);
  data.set("tag", plan.tag);
  data.set("branch", plan.branch);
  if (args.dry_run) {
    json::Value steps = json::Value::array();
    for (const auto& step : plan.steps) steps.push_back(step_json(step, true));
    data.set("dryRun", true);
    data.set("steps", std::move(steps));
    return Reply::of(std::move(data));
  }
  CT_TRY_ASSIGN(StepsOutcome outcome, run_steps(options, plan.steps));
  CT_TRY_ASSIGN(std::string commit, git_output(options, {"rev-parse", plan.tag + "^{commit}"}, "release.ship"));
  data.set("commit", commit);
  data.set("pushed", input.push);
  if (input.push) data.set("remote", input.remote);
  data.set("steps", json::Value::array_of(outcome.done));
  return Reply::of(std::move(data));
}

Result<Reply> ship(Context& context, const ShipArgs& args) {
  Reply reply = std::move(*context.external);
  if (args.dry_run) return reply;
  CT_TRY_ASSIGN(Release release, load(context, normalized(args.version)));
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

/// tag and rollback: the release's version as given (rollback's reason is kept in the audit trail).
struct VersionArgs {
  std::string version;
  std::string reason;
};

Result<Reply> tag_external(Context& context, const VersionArgs& args) {
  const std::string version = normalized(args.version);
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
  return Reply::noted(std::move(data), note);
}

Result<Reply> tag(Context& context, const VersionArgs& args) {
  Reply reply = std::move(*context.external);
  if (reply.note == ErrorCode::NoChange) return reply;
  CT_TRY_ASSIGN(Release release, load(context, normalized(args.version)));
  const Release before = release;
  release.tag = reply.data["tag"].as_string();
  release.commit = reply.data["commit"].as_string();
  release.updated_at = context.now();
  CT_TRY(context.db().put_release(release));
  record(context, before, release);
  return reply;
}

Result<Reply> rollback_external(Context& context, const VersionArgs& args) {
  const std::string version = normalized(args.version);
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
    return Reply::noted(std::move(data), ErrorCode::NoChange);
  CT_TRY_ASSIGN(StepsOutcome outcome, run_steps(options, steps));
  data.set("steps", json::Value::array_of(outcome.done));
  data.set("removedRemote", release.pushed && !release.remote.empty());
  if (release.pushed) data.set("remote", release.remote);
  if (!release.commit.empty()) data.set("commit", release.commit);
  return Reply::of(std::move(data));
}

Result<Reply> rollback(Context& context, const VersionArgs& args) {
  Reply reply = std::move(*context.external);
  if (reply.note == ErrorCode::NoChange) return reply;
  CT_TRY_ASSIGN(Release release, load(context, normalized(args.version)));
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

}  // namespace

void register_release_git(Registry& registry) {
  const auto ship_args =
      bind(field(&ShipArgs::version, version_spec()),
           field(&ShipArgs::push, {.name = "push", .type = ParamType::Bool, .default_json = "false",
                                   .description = "Also push the branch and the tag to release.remote"}),
           field(&ShipArgs::dry_run, {.name = "dryRun", .type = ParamType::Bool, .default_json = "false",
                                      .description = "List every step with its argv and undo; change nothing",
                                      .dry_run = true}));
  registry.add({.domain = "release", .name = "ship", .gateway = Gateway::Mutate,
                .summary = "Run gates, write changelog, bump, commit, tag, push",
                .params = ship_args.specs(),
                .returns = "{version, tag, branch, commit, pushed, remote?, status, steps[{step, argv?|file, undo}]}; "
                           "gates are release.gates (+ validate.testCommand), the version file release.versionFile. "
                           "A failed step stops: error.details.done lists the steps done with their undo, newest first",
                .errors = {ErrorCode::NotFound, ErrorCode::Validation, ErrorCode::EngineFailed, ErrorCode::Timeout},
                .examples = {{R"({"version":"1.0.0","dryRun":true})", "what would shipping 1.0.0 do?"},
                             {R"({"version":"1.0.0","push":true})", "ship and push"}},
                .engine = EngineKind::Hybrid, .destructive = true, .tier = 2,
                .aliases = {"prepare", "publish", "bump", "commit", "push", "gates.run"},
                .needs = {"program:git", "git-repo"}, .alternatives = {"release.changelog"},
                .external = ship_args.handler(ship_external),
                .runs_long = [](const json::Value& params) { return params["dryRun"] != json::Value(true); },
                .handler = ship_args.handler(ship)});
  const auto tag_args = bind(field(&VersionArgs::version, version_spec()));
  registry.add({.domain = "release", .name = "tag", .gateway = Gateway::Mutate,
                .summary = "Make the annotated git tag v<version> at HEAD",
                .params = tag_args.specs(),
                .returns = "{version, tag, commit}; E_NO_CHANGE note when the release already has it, "
                           "E_ALREADY_EXISTS when the tag existed (it is recorded)",
                .errors = {ErrorCode::NotFound, ErrorCode::EngineFailed, ErrorCode::Timeout},
                .examples = {{R"({"version":"1.0.0"})", "tag v1.0.0"}},
                .engine = EngineKind::Hybrid, .idempotent = true, .tier = 2,
                .needs = {"program:git", "git-repo"}, .alternatives = {"release.changelog"},
                .external = tag_args.handler(tag_external), .handler = tag_args.handler(tag)});
  const auto rollback_args =
      bind(field(&VersionArgs::version, version_spec()),
           field(&VersionArgs::reason, {.name = "reason", .type = ParamType::String, .required = true, .min = 3, .max = 500,
                                        .description = "Why it is rolled back (kept in the audit trail)"}));
  registry.add({.domain = "release", .name = "rollback", .gateway = Gateway::Mutate,
                .summary = "Delete a release's tag (also on the remote) and reopen it",
                .params = rollback_args.specs(),
                .returns = "{version, tag, status, removedRemote, remote?, commit?, steps[]}; the release commit "
                           "stays (a warning names the git revert); E_NO_CHANGE note when nothing was tagged",
                .errors = {ErrorCode::NotFound, ErrorCode::EngineFailed, ErrorCode::Timeout},
                .examples = {{R"({"version":"1.0.0","reason":"broken build"})", "undo the 1.0.0 tag"}},
                .engine = EngineKind::Hybrid, .destructive = true, .tier = 2,
                .needs = {"program:git", "git-repo"}, .alternatives = {"release.changelog"},
                .external = rollback_args.handler(rollback_external), .handler = rollback_args.handler(rollback)});
}

}  // namespace ct