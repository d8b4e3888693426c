// skills domain — the protocol files an orchestrator puts into a subagent's prompt
// (engines/rules/skills.h): list, show and find over the built-in, user and project skills, and
// install/remove of the user's and the project's own (.cleo/skills/<name>.md, or the same under
// the home directory). The files are the state: like providers.install, these operations run
// without the store.
#include <algorithm>
#include <filesystem>
#include <system_error>

#include "core/atomic_file.h"
#include "core/text.h"
#include "domains/bind.h"
#include "domains/context.h"
#include "domains/memory/memory_constraints.h"
#include "domains/registry.h"
#include "domains/skills/skills.h"
#include "engines/project/project.h"
#include "engines/rules/skills.h"

namespace ct {
namespace {

namespace fs = std::filesystem;

/// The project this call sees, when there is one (the skills domain runs outside projects too).
std::optional<fs::path> project_root(const Context& context) {
  if (context.project) return context.project->root;
  auto found = context.workspace->project();
  if (!found) return std::nullopt;
  return found->root;
}

/// How replies name a skill's file: ".cleo/skills/x.md" in the project, "~/.cleo/skills/x.md"
/// in the home directory (nothing about the machine beyond that).
std::string shown_path(std::string_view source, const fs::path& path) {
  if (path.empty()) return "";
  const std::string file = path.filename().string();
  return source == "user" ? "~/.cleo/skills/" + file : ".cleo/skills/" + file;
}

json::Value row(const Skill& skill, bool full) {
  json::Value out = json::Value::object();
  out.set("name", skill.name);
  out.set("description", skill.description);
  out.set("tags", json::Value::array_of(skill.tags));
  out.set("source", skill.source);
  if (!skill.overrides.empty()) out.set("overrides", skill.overrides);
  if (full) {
    out.set("protocols", json::Value::array_of(skill.protocols));
    out.set("level", skill.level);
    if (!skill.path.empty()) out.set("path", shown_path(skill.source, skill.path));
  }
  return out;
}

const std::vector<std::string_view> kRowFields = {"name", "description", "tags", "source", "overrides",
                                                  "protocols", "level", "path"};

Advice list_call(const Context& context, std::string_view params_json = "{}") {
  return context.registry->find("skills", "list")->call_with(params_json);
}

/// A page of rows from `page.offset` (the router cuts it further to output.maxReplyBytes).
Reply page_of(json::Value rows, const Paging& page, std::vector<std::string> warnings) {
  const std::int64_t offset = page.offset;
  const auto total = static_cast<std::int64_t>(rows.size());
  json::Value kept = json::Value::array();
  for (std::int64_t i = offset; i < total; ++i) kept.push_back(std::move(rows.as_array()[static_cast<std::size_t>(i)]));
  const bool none = kept.empty();
  Reply reply = Reply::noted(std::move(kept), no_data_if(none), std::move(warnings));
  if (offset > 0) reply.page = Page{total, static_cast<std::int64_t>(reply.data.size()), offset};
  return reply;
}

struct ListArgs {
  std::string tag;
  std::string source;
  Paging page;
  Projection rows;
};

Result<Reply> list(Context& context, const ListArgs& args) {
  std::vector<std::string> warnings;
  CT_TRY_ASSIGN(SkillCatalog catalog, load_skill_catalog(context, warnings));
  const std::string tag = to_lower_ascii(args.tag);
  const std::string& source = args.source;
  json::Value rows = json::Value::array();
  for (const auto& skill : catalog.skills()) {
    if (!tag.empty() && std::find(skill.tags.begin(), skill.tags.end(), tag) == skill.tags.end()) continue;
    if (!source.empty() && skill.source != source) continue;
    rows.push_back(row(skill, args.rows.full));
  }
  return page_of(std::move(rows), args.page, std::move(warnings));
}

Error unknown_skill(const Context& context, const SkillCatalog& catalog, const std::string& name) {
  Error error(ErrorCode::NotFound, "no skill named '" + name + "'");
  error.fix = list_call(context) + " lists every skill";
  return std::move(error).with_detail("field", "name").with_choices(name, catalog.names());
}

struct ShowArgs {
  std::string name;
};

Result<Reply> show(Context& context, const ShowArgs& args) {
  std::vector<std::string> warnings;
  CT_TRY_ASSIGN(SkillCatalog catalog, load_skill_catalog(context, warnings));
  const std::string& name = args.name;
  const Skill* skill = catalog.find(name);
  if (!skill) return fail(unknown_skill(context, catalog, name));
  json::Value data = row(*skill, true);
  data.set("body", skill->body);
  // Its constraints, to attest with memory.applied (issue 54, seed 000).
  if (json::Value constraints = memory::constraints_json(std::string(memory::kSkillPrefix) + skill->name, skill->body);
      !constraints.as_array().empty())
    data.set("constraints", std::move(constraints));
  return Reply::warned(std::move(data), std::move(warnings));
}

struct FindArgs {
  std::string query;
  Paging page;
  Projection rows;
};

Result<Reply> find(Context& context, const FindArgs& args) {
  std::vector<std::string> warnings;
  CT_TRY_ASSIGN(SkillCatalog catalog, load_skill_catalog(context, warnings));
  json::Value rows = json::Value::array();
  for (const auto& match : catalog.search(args.query)) {
    json::Value out = row(*match.skill, args.rows.full);
    out.set("score", match.score);
    rows.push_back(std::move(out));
  }
  return page_of(std::move(rows), args.page, std::move(warnings));
}

// -- install / remove ----------------------------------------------------------------------------

Error outside_refused(std::string what, std::string fix) {
  Error error(ErrorCode::InvalidInput, std::move(what) + ": this caller may not read or write outside the project");
  error.fix = std::move(fix) + "; " + Context::let_agents_leave_project();
  return error;
}

/// Where a scope keeps its skills: the project's .cleo/skills, or the home's (which is outside
/// the project: a person, or security.allowOutsideProject).
struct Scope {
  std::string name;  // "project" | "user"
  fs::path base;     // the project root or the home directory
  fs::path folder;   // <base>/.cleo/skills
};

/// The scope named `name` (the `scope` param: project or user).
Result<Scope> scope_of(const Context& context, const std::string& name, std::string_view operation) {
  Scope scope;
  scope.name = name;
  if (scope.name == "user") {
    if (!context.may_leave_project())
      return fail(outside_refused("scope user",
                                  "run `ct skills " + std::string(operation) + " … --scope user` in a terminal")
                      .with_detail("field", "scope"));
    CT_TRY_ASSIGN(scope.base, context.home_dir());
  } else {
    CT_TRY_ASSIGN(Project project, context.workspace->project());
    scope.base = project.root;
  }
  scope.folder = skills_folder(scope.base);
  // A project's .cleo/skills that leads elsewhere (a symlink) is outside the project.
  if (scope.name == "project" && fs::exists(scope.folder) && !lies_within(scope.folder, scope.base) &&
      !context.may_leave_project())
    return fail(outside_refused(".cleo/skills leads outside the project", "make .cleo/skills a folder of the project")
                    .with_detail("field", "scope"));
  return scope;
}

/// The file named by `path`: absolute, or relative to the project root (the working directory
/// without a project). Outside the project only for callers that may leave it.
Result<std::pair<fs::path, std::string>> source_file(const Context& context, const std::string& given) {
  const std::optional<fs::path> root = project_root(context);
  fs::path path(given);
  if (path.is_relative()) path = (root ? *root : fs::current_path()) / path;
  path = path.lexically_normal();
  if ((!root || !lies_within(path, *root)) && !context.may_leave_project())
    return fail(outside_refused(given + " is outside the project",
                                "copy the file into the project first, or run `ct skills install " + given +
                                    "` in a terminal")
                    .with_detail("field", "path"));
  auto text = read_skill_file(path, given);
  if (!text) {
    Error error = std::move(text.error());
    if (error.code == ErrorCode::NotFound) error.fix = "check the path (relative paths start at the project root)";
    if (error.code == ErrorCode::Validation) error = std::move(error).with_detail("file", given);
    return fail(std::move(error).with_detail("field", "path"));
  }
  return std::pair<fs::path, std::string>(path, std::move(*text));
}

const Skill* in_folder(const SkillFolder& folder, std::string_view name) {
  for (const auto& skill : folder.skills)
    if (skill.name == name) return &skill;
  return nullptr;
}

std::string read_all(const fs::path& path) { return read_skill_file(path, path.string()).value_or(""); }

struct InstallArgs {
  std::string path;
  std::string scope;
  bool force = false;
};

Result<Reply> install(Context& context, const InstallArgs& args) {
  const std::string& given = args.path;
  CT_TRY_ASSIGN(Scope scope, scope_of(context, args.scope, "install"));
  CT_TRY_ASSIGN(auto source, source_file(context, given));
  const auto& [path, text] = source;
  CT_TRY_ASSIGN(Skill skill, parse_skill(text, given));

  const SkillFolder existing_folder = load_skill_folder(scope.folder, scope.name);
  const Skill* existing = in_folder(existing_folder, skill.name);
  const fs::path target = scope.folder / (skill.name + ".md");
  json::Value data = json::Value::object();
  data.set("name", skill.name);
  data.set("source", scope.name);
  data.set("path", shown_path(scope.name, existing ? existing->path : target));
  if (existing && read_all(existing->path) == text) return Reply::noted(std::move(data), ErrorCode::NoChange);
  if (existing && !args.force) {
    data.set("installed", false);
    return Reply::noted(std::move(data), ErrorCode::AlreadyExists, {"a " + scope.name + " skill named '" + skill.name + "' is already at " +
                  shown_path(scope.name, existing->path) + ": nothing written; force:true replaces it"});
  }

  std::error_code ec;
  fs::create_directories(scope.folder, ec);
  if (ec)
    return fail(Error(ErrorCode::FileError, "cannot create " + std::string(scope.name == "user" ? "~/" : "") +
                                                ".cleo/skills: " + ec.message())
                    .with_fix("check the folder's permissions"));
  CT_TRY(write_file_atomically(target, text));
  // The skill had another file name: that file goes, so the folder holds the name once.
  if (existing && existing->path != target) {
    fs::remove(existing->path, ec);
    if (ec)
      return fail(Error(ErrorCode::FileError, "installed " + shown_path(scope.name, target) + " but cannot remove " +
                                                  shown_path(scope.name, existing->path) + ": " + ec.message())
                      .with_fix("remove " + shown_path(scope.name, existing->path) + " yourself"));
  }
  data.set("path", shown_path(scope.name, target));
  if (existing) data.set("replaced", true);

  std::vector<std::string> warnings = skill.warnings;
  std::vector<std::string> ignored;
  CT_TRY_ASSIGN(SkillCatalog catalog, load_skill_catalog(context, ignored));
  if (const Skill* effective = catalog.find(skill.name)) {
    if (effective->source == scope.name && !effective->overrides.empty()) data.set("overrides", effective->overrides);
    if (effective->source != scope.name)
      warnings.push_back("the " + effective->source + " skill '" + skill.name + "' (" +
                         shown_path(effective->source, effective->path) + ") takes precedence in this project");
  }
  return Reply::warned(std::move(data), std::move(warnings));
}

struct RemoveArgs {
  std::string name;
  std::string scope;
};

Result<Reply> remove(Context& context, const RemoveArgs& args) {
  const std::string& name = args.name;
  CT_TRY_ASSIGN(Scope scope, scope_of(context, args.scope, "remove"));
  const SkillFolder folder = load_skill_folder(scope.folder, scope.name);
  const Skill* skill = in_folder(folder, name);
  if (!skill) {
    CT_TRY_ASSIGN(std::vector<Skill> builtins, builtin_skills());
    const bool builtin = std::any_of(builtins.begin(), builtins.end(), [&](const Skill& s) { return s.name == name; });
    if (builtin) {
      Error error(ErrorCode::Validation, "'" + name + "' is a built-in skill: built-ins cannot be removed");
      error.fix = "to change what it does, install a skill of the same name, which overrides it: " +
                  context.registry->find("skills", "install")->call_with(R"({"path":")" + name + R"(.md"})");
      return fail(std::move(error).with_detail("field", "name"));
    }
    std::vector<std::string> names;
    for (const auto& own : folder.skills) names.push_back(own.name);
    Error error(ErrorCode::NotFound, "no " + scope.name + " skill named '" + name + "'");
    error.fix = list_call(context, R"({"source":")" + scope.name + "\"}") + " lists the " + scope.name + "'s skills";
    if (!folder.warnings.empty()) error.details.set("skipped", json::Value::array_of(folder.warnings));
    return fail(std::move(error).with_detail("field", "name").with_choices(name, names));
  }

  std::error_code ec;
  fs::remove(skill->path, ec);
  if (ec)
    return fail(Error(ErrorCode::FileError, "cannot remove " + shown_path(scope.name, skill->path) + ": " + ec.message())
                    .with_fix("check the folder's permissions"));
  json::Value data = json::Value::object();
  data.set("name", name);
  data.set("source", scope.name);
  data.set("path", shown_path(scope.name, skill->path));
  data.set("removed", true);
  std::vector<std::string> ignored;
  CT_TRY_ASSIGN(SkillCatalog catalog, load_skill_catalog(context, ignored));
  if (const Skill* effective = catalog.find(name)) data.set("effective", effective->source);
  return Reply::of(std::move(data));
}

}  // namespace

Result<SkillCatalog> load_skill_catalog(const Context& context, std::vector<std::string>& warnings) {
  std::optional<fs::path> home;
  if (auto found = context.home_dir()) home = *found;
  else warnings.push_back("user skills were not read: " + found.error().message);
  CT_TRY_ASSIGN(SkillCatalog catalog, SkillCatalog::load(project_root(context).value_or(fs::path()), home));
  warnings.insert(warnings.end(), catalog.warnings().begin(), catalog.warnings().end());
  return catalog;
}

void register_skills_domain(Registry& registry) {
  const ParamSpec scope = {.name = "scope", .type = ParamType::Enum, .default_json = R"("project")",
                           .choices = {"project", "user"},
                           .description = "project: .cleo/skills; user: ~/.cleo/skills, every project's (a person, "
                                          "or security.allowOutsideProject)"};
  const ParamSpec name = {.name = "name", .type = ParamType::String, .required = true, .min = 1, .max = 100,
                          .description = "The skill's name", .positional = true, .single_line = true};
  const auto list_args =
      bind(field(&ListArgs::tag, {.name = "tag", .type = ParamType::String, .max = 40,
                                  .description = "Only skills with this tag", .single_line = true}),
           field(&ListArgs::source, {.name = "source", .type = ParamType::Enum, .choices = {"builtin", "user", "project"},
                                     .description = "Only skills from this source"}),
           offset_only(&ListArgs::page), projection(&ListArgs::rows));
  registry.add({.domain = "skills", .name = "list", .gateway = Gateway::Query,
                .summary = "List skills (subagent protocols): built-in, user, project",
                .params = list_args.specs(),
                .returns = "[{name, description, tags[], source builtin|user|project, overrides? (the source it "
                           "shadows)}] by name (also protocols[], level, path? with detail:'full'); files skipped "
                           "and why in _meta.warnings; E_NO_DATA note when none match",
                .examples = {{R"({})", "every skill and where it comes from"},
                             {R"({"tag":"docs"})", "skills for documentation work"}},
                .idempotent = true, .needs_project = false, .tier = 2, .row_fields = kRowFields,
                .original_names = {"orchestrate.skill.list"}, .handler = list_args.handler(list)});
  const auto show_args = bind(field(&ShowArgs::name, name));
  registry.add({.domain = "skills", .name = "show", .gateway = Gateway::Query,
                .summary = "Show one skill in full, with its protocol body",
                .params = show_args.specs(),
                .returns = "{name, description, tags[], source, overrides?, protocols[], level (help level for the "
                           "subagent, 0–3), path? (not for built-ins), body (Markdown), constraints?[{id (skill:<name>#Steps/1), name, "
                           "text, textHash}] (its H2 sections and their items, for memory.applied)}",
                .errors = {ErrorCode::NotFound},
                .examples = {{R"({"name":"task-executor"})", "the default protocol for implementing a task"}},
                .idempotent = true, .needs_project = false, .tier = 2, .handler = show_args.handler(show)});
  const auto find_args =
      bind(field(&FindArgs::query, {.name = "query", .type = ParamType::String, .required = true, .min = 1, .max = 200,
                                    .description = "Words to look for", .positional = true, .single_line = true}),
           offset_only(&FindArgs::page), projection(&FindArgs::rows));
  registry.add({.domain = "skills", .name = "find", .gateway = Gateway::Query,
                .summary = "Find skills by keywords in their tags, name, description",
                .params = find_args.specs(),
                .returns = "[{name, description, tags[], source, overrides?, score}] best first (per word: tag 3, "
                           "name 2, description 1); E_NO_DATA note when nothing matches",
                .examples = {{R"({"query":"write tests"})", "which skill writes tests"}},
                .idempotent = true, .needs_project = false, .tier = 2,
                .row_fields = {"name", "description", "tags", "source", "overrides", "protocols", "level", "path",
                               "score"},
                .handler = find_args.handler(find)});
  const auto install_args =
      bind(field(&InstallArgs::path, {.name = "path", .type = ParamType::String, .required = true, .min = 1, .max = 1000,
                                      .description = "The skill's .md file (relative to the project root); outside the "
                                                     "project only for a person or security.allowOutsideProject",
                                      .positional = true, .single_line = true}),
           field(&InstallArgs::scope, scope),
           field(&InstallArgs::force, {.name = "force", .type = ParamType::Bool,
                                       .description = "Replace a different skill of the same name in that scope"}));
  registry.add({.domain = "skills", .name = "install", .gateway = Gateway::Mutate,
                .summary = "Install a skill file for the project or the user",
                .params = install_args.specs(),
                .returns = "{name, source project|user, path, replaced? (force), overrides? (builtin|user), "
                           "installed:false (with E_ALREADY_EXISTS)}; written to <scope>/.cleo/skills/<name>.md; "
                           "E_ALREADY_EXISTS note when the scope has another skill of that name (nothing written), "
                           "E_NO_CHANGE when it has this one",
                .errors = {ErrorCode::Validation, ErrorCode::NotFound, ErrorCode::FileError, ErrorCode::InvalidInput,
                           ErrorCode::NotInitialized, ErrorCode::ConfigError},
                .examples = {{R"({"path":"docs/skills/reviewer.md"})", "a project skill from a file in the project"},
                             {R"({"path":"docs/skills/task-executor.md","force":true})",
                              "override the built-in task-executor, replacing an earlier override"}},
                .idempotent = true, .needs_project = false, .tier = 2, .handler = install_args.handler(install)});
  const auto remove_args = bind(field(&RemoveArgs::name, name), field(&RemoveArgs::scope, scope));
  registry.add({.domain = "skills", .name = "remove", .gateway = Gateway::Mutate,
                .summary = "Remove a project or user skill (built-ins stay)",
                .params = remove_args.specs(),
                .returns = "{name, source, path, removed, effective? (the source whose skill of that name applies "
                           "now: project|user|builtin)}",
                .errors = {ErrorCode::NotFound, ErrorCode::Validation, ErrorCode::FileError, ErrorCode::InvalidInput,
                           ErrorCode::NotInitialized, ErrorCode::ConfigError},
                .examples = {{R"({"name":"reviewer"})", "remove the project's reviewer skill"}},
                .destructive = true, .needs_project = false, .tier = 2, .handler = remove_args.handler(remove)});
}

}  // namespace ct
