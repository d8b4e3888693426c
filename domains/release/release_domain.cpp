// release domain — releases stored with the tasks (version, status, tasks, notes), their changelog
// in CHANGELOG.md, and shipping through git: gates, changelog, version file, commit, tag, push
// (engines/rules/release_engine.h). Every git command runs in the spec's external step, before the
// store's write transaction, so a slow git or gate never holds the write lock; the handler then
// records what git did.
#include <algorithm>

#include "core/atomic_file.h"
#include "core/file_read.h"
#include "domains/bind.h"
#include "domains/registry.h"
#include "domains/release/release_common.h"

namespace ct::release {
namespace {

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

// -- queries ----------------------------------------------------------------------------------

Result<Reply> list(Context& context, const NoArgs&) {
  CT_TRY_ASSIGN(std::vector<Release> releases, context.db().list_releases());
  json::Value data = json::Value::array();
  for (const auto& release : releases) data.push_back(summary_json(release));
  std::optional<ErrorCode> note;
  if (releases.empty()) note = ErrorCode::NoData;
  return Reply::noted(std::move(data), note);
}

/// An operation on one release: its version as given.
struct VersionArgs {
  std::string version;
};

Result<Reply> show(Context& context, const VersionArgs& args) {
  CT_TRY_ASSIGN(Release release, load(context, normalized(args.version)));
  CT_TRY_ASSIGN(std::vector<Task> tasks, context.db().get_tasks(release.tasks));
  return Reply::of(full_json(release, tasks));
}

// -- create, plan, changelog ------------------------------------------------------------------

struct CreateArgs {
  std::string version;
  std::optional<std::string> notes;
};

Result<Reply> create(Context& context, const CreateArgs& args) {
  const std::string version = normalized(args.version);
  CT_TRY_ASSIGN(std::optional<Release> existing, context.db().get_release(version));
  if (existing) return Reply::noted(summary_json(*existing), ErrorCode::AlreadyExists);
  Release release;
  release.version = version;
  if (args.notes) release.notes = *args.notes;
  release.created_at = release.updated_at = context.now();
  CT_TRY(context.db().put_release(release));
  record(context, std::nullopt, release);
  return Reply::of(summary_json(release));
}

struct PlanArgs {
  std::string version;
  std::vector<std::string> add;
  std::vector<std::string> remove;
};

Result<Reply> plan(Context& context, const PlanArgs& args) {
  CT_TRY_ASSIGN(Release release, load(context, normalized(args.version)));
  const Release before = release;
  if (release.status == ReleaseStatus::Released)
    return fail(Error(ErrorCode::Validation, "release " + release.version + " was shipped; its tasks are fixed")
                    .with_fix(call("release.rollback", {{"version", release.version}, {"reason", "…"}}) +
                              " first, or plan the tasks into a new release")
                    .with_detail("version", release.version));
  const std::vector<std::string>& add = args.add;
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
  for (const auto& id : args.remove) std::erase(release.tasks, id);
  release.status = unreleased_status(release);
  if (release.tasks == before.tasks && release.status == before.status)
    return Reply::noted(summary_json(release), ErrorCode::NoChange);
  release.updated_at = context.now();
  CT_TRY(context.db().put_release(release));
  record(context, before, release);
  json::Value data = summary_json(release);
  data.set("taskIds", json::Value::array_of(release.tasks));
  return Reply::of(std::move(data));
}

/// release.changelog's external step: with `write`, CHANGELOG.md read (with its stamp) before the
/// transaction, which reads no file (core/file_read.h).
struct ChangelogArgs {
  std::string version;
  bool write = false;
};

Result<Reply> read_changelog(Context& context, const ChangelogArgs& args) {
  json::Value data = json::Value::object();
  if (!args.write) return Reply::of(std::move(data));
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
  return Reply::of(std::move(data));
}

Result<Reply> changelog(Context& context, const ChangelogArgs& args) {
  CT_TRY_ASSIGN(Release release, load(context, normalized(args.version)));
  CT_TRY_ASSIGN(std::vector<Task> done, done_tasks(context, release));
  std::string section = render_changelog_section(
      release, done, release.released_at ? day_of(*release.released_at) : std::string("Unreleased"));
  json::Value data = json::Value::object();
  data.set("version", release.version);
  data.set("tasks", static_cast<std::int64_t>(done.size()));
  data.set("markdown", section);
  if (!args.write) return Reply::of(std::move(data));

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
    return Reply::noted(std::move(data), ErrorCode::NoChange);
  }
  CT_TRY(write_file_atomically(file, merged));
  context.record(FieldChange{"", "CHANGELOG.md", json::Value(), json::Value("section " + release.version)});
  data.set("written", true);
  return Reply::of(std::move(data));
}

}  // namespace

void register_release_domain(Registry& registry) {
  registry.add({.domain = "release", .name = "list", .gateway = Gateway::Query,
                .summary = "List releases, newest first",
                .returns = "[{version, status, tasks, createdAt, releasedAt?, tag?}]; E_NO_DATA note when none",
                .examples = {{R"({})", "every release"}},
                .idempotent = true, .tier = 2, .handler = no_args(list)});
  const auto show_args = bind(field(&VersionArgs::version, version_spec()));
  registry.add({.domain = "release", .name = "show", .gateway = Gateway::Query,
                .summary = "Show a release with its tasks and git state",
                .params = show_args.specs(),
                .returns = "{version, status, tasks[{id, title, status}], notes?, createdAt, updatedAt, releasedAt?, "
                           "tag?, commit?, pushed?, remote?}",
                .errors = {ErrorCode::NotFound},
                .examples = {{R"({"version":"1.0.0"})", "release 1.0.0"}},
                .idempotent = true, .tier = 2, .handler = show_args.handler(show)});
  const auto create_args =
      bind(field(&CreateArgs::version, version_spec()),
           field(&CreateArgs::notes, {.name = "notes", .type = ParamType::String, .max = 2000,
                                      .description = "Notes shown at the top of its changelog section"}));
  registry.add({.domain = "release", .name = "create", .gateway = Gateway::Mutate,
                .summary = "Create a planned release",
                .params = create_args.specs(),
                .returns = "{version, status, tasks, createdAt}; E_ALREADY_EXISTS note (the existing one) on a repeat",
                .examples = {{R"({"version":"1.0.0","notes":"First stable release"})", "plan 1.0.0"}},
                .idempotent = true, .tier = 2, .handler = create_args.handler(create)});
  const auto plan_args =
      bind(field(&PlanArgs::version, version_spec()),
           field(&PlanArgs::add, {.name = "add", .type = ParamType::Array, .max = 500, .item_type = ParamType::TaskId,
                                  .description = "Task ids to add"}),
           field(&PlanArgs::remove, {.name = "remove", .type = ParamType::Array, .max = 500, .item_type = ParamType::TaskId,
                                     .description = "Task ids to remove"}));
  registry.add({.domain = "release", .name = "plan", .gateway = Gateway::Mutate,
                .summary = "Add or remove a release's tasks",
                .params = plan_args.specs(),
                .returns = "{version, status, tasks, taskIds[]}; status is active while it holds tasks, else planned; "
                           "E_NO_CHANGE note when nothing changed",
                .errors = {ErrorCode::NotFound, ErrorCode::Validation},
                .examples = {{R"({"version":"1.0.0","add":["T001"]})", "put T001 into 1.0.0"}},
                .idempotent = true, .tier = 2, .handler = plan_args.handler(plan)});
  const auto changelog_args =
      bind(field(&ChangelogArgs::version, version_spec()),
           field(&ChangelogArgs::write, {.name = "write", .type = ParamType::Bool, .default_json = "false",
                                         .description = "Write or replace this version's section of CHANGELOG.md "
                                                        "(nothing else in the file changes)"}));
  registry.add({.domain = "release", .name = "changelog", .gateway = Gateway::Mutate,
                .summary = "Render a release's changelog; write:true updates CHANGELOG.md",
                .params = changelog_args.specs(),
                .returns = "{version, tasks, markdown, file?, written?}: done tasks grouped by label (Features, Fixes, "
                           "Documentation, Maintenance) or type; E_NO_CHANGE note when the file already had it",
                .errors = {ErrorCode::NotFound, ErrorCode::Validation, ErrorCode::ConcurrentModification},
                .examples = {{R"({"version":"1.0.0"})", "preview the changelog"},
                             {R"({"version":"1.0.0","write":true})", "write it into CHANGELOG.md"}},
                .idempotent = true, .tier = 2, .external = changelog_args.handler(read_changelog),
                .external_checks_only = true, .handler = changelog_args.handler(changelog)});
}

}  // namespace ct::release
