// system domain — the parts of the foundation: init and version. The rest of the domain
// (health, config, log, backup …) arrives with the sessions issue.
#include <cstdlib>
#include <filesystem>
#include <system_error>

#include "core/text.h"
#include "core/version.h"
#include "domains/bind.h"
#include "domains/context.h"
#include "domains/pipeline.h"
#include "domains/registry.h"
#include "engines/store/backups.h"
#include "engines/store/open/open_store.h"
#include "engines/store/task_json.h"

namespace ct {
namespace {

struct InitArgs {
  bool force = false;
  bool separate = false;
};

/// Where the store of `project` is, as its config names it (SQLite's file, else the server).
std::string store_named(const Project& project) {
  auto config = Config::load(project.config_path());
  return (config ? project_store(project, *config) : project_store(project))->location();
}

/// A linked git work tree shares its repository's store (issue 53): a store of its own splits the
/// task graph, so only a person asks for one (`separate`).
Result<void> check_worktree(const Context& context, const SharedStore& shared, const InitArgs& args) {
  const std::string where = "the linked git worktree " + shared.worktree.string();
  if (args.separate) {
    if (context.is_person()) return {};
    return fail(Error(ErrorCode::MutationDisabled, "a store of its own for " + where +
                                                       " splits the repository's tasks: only a person asks for one")
                    .with_fix("a person runs " + call("system.init", {{"separate", true}}) + " in " +
                              shared.worktree.string())
                    .with_detail("field", "separate"));
  }
  Error error(ErrorCode::InvalidInput, "");
  if (shared.project) {
    const std::string store = store_named(*shared.project);
    error.message = "cannot initialise: " + where + " shares the store of its repository's main worktree (" + store +
                    "); a project here would split from it";
    error.fix = "work here as you are (every command finds that store from this worktree); for a store of its "
                "own, a person runs " + call("system.init", {{"separate", true}});
    error.details.set("store", store);
  } else {
    error.message = "cannot initialise: " + where + " is not its repository's main worktree" +
                    (shared.main.empty() ? std::string(" (the repository is bare)") : " (" + shared.main.string() + ")");
    error.fix = shared.main.empty() ? "for a store of this worktree's own, a person runs " +
                                          call("system.init", {{"separate", true}})
                                    : call("system.init") + " in " + shared.main.string() +
                                          ", which every worktree of the repository then shares";
  }
  return fail(std::move(error)
                  .with_detail("field", "separate")
                  .with_detail("worktree", shared.worktree.string())
                  .with_detail("main", shared.main.string()));
}

Result<Reply> init(Context& context, const InitArgs& args) {
  namespace fs = std::filesystem;
  fs::path root = init_target(context.workspace->dir());
  std::error_code ec;
  root = fs::absolute(root, ec);
  if (ec || !fs::is_directory(root, ec))
    return fail(Error(ErrorCode::FileError, "cannot initialise: " + root.string() + " is not a directory")
                    .with_fix("create the directory first, or pass --project DIR"));
  Project project{root};
  // A linked worktree without a store of its own shares its repository's, wherever that is kept
  // (a server the environment names answers for every folder): asked first.
  const std::optional<SharedStore> shared = shared_store(root);
  if (shared && !fs::is_regular_file(project.db_path(), ec)) CT_TRY(check_worktree(context, *shared, args));
  json::Value data = json::Value::object();
  data.set("root", root.string());
  std::unique_ptr<StoreBackend> store = project_store(project);
  if (auto info = store->inspect(/*check=*/false); info || info.error().code != ErrorCode::NotFound) {
    // An empty file (an interrupted init, a truncated store) holds nothing to lose: it is
    // initialised. Anything else is never overwritten: a damaged store is for system.restore.
    const bool empty = info && info->schema_version == 0 && info->tables == 0;
    if (empty && !list_backups(project).empty())
      return fail(Error(ErrorCode::FileError, "cannot initialise: " + store->location() +
                                                  " is empty, and the project has backups")
                      .with_fix(call("system.restore") + " brings the newest good backup back (the empty file is moved aside)")
                      .with_detail("damaged", true));
    if (!empty) {
      auto opened = store->open(StoreOptions{.read_only = true});
      if (!opened && opened.error().details["damaged"] == json::Value(true))
        return fail(Error(ErrorCode::FileError, "cannot initialise: " + store->location() +
                                                    " exists but is damaged (" + opened.error().message + ")")
                        .with_fix(call("system.restore") + " moves it aside and brings back the newest good backup")
                        .with_detail("damaged", true));
      data.set("created", false);
      return Reply::noted(std::move(data), ErrorCode::AlreadyExists, {"already initialised at " + project.cleo_dir().string()});
    }
    store->erase_empty();
  }
  // A project inside another one splits the task graph without anyone noticing: every command
  // run below here would use the new one. Asked for, it is allowed (a separate store of a
  // worktree nested in its repository's main one is asked for).
  if (auto outer = enclosing_project(root); outer && !args.force && !(shared && args.separate)) {
    Error error(ErrorCode::InvalidInput, "cannot initialise: " + root.string() + " is inside the CLEO project at " +
                                             outer->root.string() + ", and a project here would nest in it");
    error.fix = "work in that project (its commands find it from here), or pass force: true (ct init --force) "
                "for a separate project in this directory";
    return fail(std::move(error).with_detail("field", "force").with_detail("enclosing", outer->root.string()));
  }
  fs::create_directories(project.cleo_dir(), ec);
  if (ec)
    return fail(Error(ErrorCode::FileError, "cannot create " + project.cleo_dir().string() + ": " + ec.message())
                    .with_fix("check the directory's permissions"));
  Config config;
  if (!fs::exists(project.config_path(), ec)) CT_TRY(config.save(project.config_path()));
  CT_TRY(store->open(StoreOptions{.create = true}));
  data.set("created", true);
  data.set("db", store->location());
  return Reply::of(std::move(data));
}

Result<Reply> version(Context&, const NoArgs&) {
  json::Value data = json::Value::object();
  data.set("version", product_version());
  data.set("schemaVersion", store_schema_version());
  return Reply::of(std::move(data));
}

/// A confidence bound of system.log (the param `name`): a number from 0 to 1 (given as a number or its text).
Result<std::optional<double>> confidence(const std::optional<std::string>& text, std::string_view name) {
  if (!text) return std::optional<double>();
  char* end = nullptr;
  const double value = std::strtod(text->c_str(), &end);
  if (text->empty() || end != text->c_str() + text->size() || !(value >= 0.0 && value <= 1.0))
    return fail(Error(ErrorCode::Validation, std::string(name) + ": expected a number from 0 to 1, got " + echo(*text))
                    .with_detail("field", std::string(name)));
  return std::optional<double>(value);
}

struct LogArgs {
  Paging page;
  std::optional<std::string> operation;
  std::optional<std::string> id;
  std::optional<std::string> session;
  Moment since;
  std::optional<std::string> agent;
  std::optional<std::string> category;
  std::optional<std::string> tag;
  std::optional<std::string> min_confidence;
  std::optional<std::string> max_confidence;
  std::optional<std::string> text;
  Projection rows;
};

Result<Reply> log(Context& context, const LogArgs& args) {
  AuditQuery query;
  // One more row than asked: whether more follow is known without counting the trail.
  query.limit = args.page.limit + 1;
  query.offset = args.page.offset;
  query.operation = args.operation;
  query.task_id = args.id;
  query.session = args.session;
  query.agent = args.agent;
  query.category = args.category;
  query.tag = args.tag;
  query.reason_text = args.text;
  CT_TRY_ASSIGN(query.min_confidence, confidence(args.min_confidence, "minConfidence"));
  CT_TRY_ASSIGN(query.max_confidence, confidence(args.max_confidence, "maxConfidence"));
  query.since = args.since.at;
  CT_TRY_ASSIGN(std::vector<AuditEntry> rows, context.db().read_audit(query));
  const bool more = std::ssize(rows) > args.page.limit;
  if (more) rows.pop_back();
  json::Value list = json::Value::array();
  for (const auto& row : rows) {
    json::Value item = audit_row_json(row, /*with_task=*/true);
    if (args.rows.full) {
      if (!row.params.empty()) item.set("params", row.params);
      if (!row.changes.empty()) item.set("changes", changes_json(row.changes));
    } else if (!row.changes.empty()) {
      // The first few of a large command's changes (an import of 10,000 tasks is one row), and
      // how many more detail:'full' lists.
      constexpr std::size_t kShown = 20;
      json::Value fields = json::Value::array();
      for (std::size_t i = 0; i < row.changes.size() && i < kShown; ++i)
        fields.push_back(row.changes[i].task_id + "." + row.changes[i].field);
      if (row.changes.size() > kShown) fields.push_back("+" + std::to_string(row.changes.size() - kShown) + " more");
      item.set("changed", std::move(fields));
    }
    list.push_back(std::move(item));
  }
  std::optional<Page> page;
  if (more) page = Page{-1, static_cast<std::int64_t>(rows.size()), query.offset};  // total not counted
  return Reply::paged(std::move(list), page);
}

}  // namespace

void register_system_domain(Registry& registry) {
  registry.add({.domain = "system", .name = "version", .gateway = Gateway::Query,
                .summary = "Show the product and schema versions",
                .returns = "{version, schemaVersion}",
                .examples = {{R"({})", "which version is running"}},
                .idempotent = true, .needs_project = false, .tier = 2, .shortcut = "version",
                .text_view = TextView::Version, .handler = no_args(version)});
  const auto log_args = bind(
      paging(&LogArgs::page, "20"),
      field(&LogArgs::operation, {.name = "operation", .type = ParamType::String, .max = 60,
                                  .description = "Only this operation, e.g. tasks.add"}),
      field(&LogArgs::id, {.name = "id", .type = ParamType::TaskId, .description = "Only rows about this task"}),
      field(&LogArgs::session, {.name = "session", .type = ParamType::String, .max = 128,
                                .description = "Only rows written in this session"}),
      field(&LogArgs::since, {.name = "since", .type = ParamType::String, .max = 40,
                              .description = "Only rows at or after this: 2026-01-31, a time, today, yesterday, or an age (3d, 12h)"}),
      field(&LogArgs::agent, {.name = "agent", .type = ParamType::String, .max = 128, .description = "Only this agent's rows"}),
      field(&LogArgs::category, {.name = "category", .type = ParamType::Enum,
                                 .choices = {pipeline::kIntentCategories.begin(), pipeline::kIntentCategories.end()},
                                 .description = "Only rows whose intent has this category"}),
      field(&LogArgs::tag, {.name = "tag", .type = ParamType::String, .pattern = pipeline::kIntentTagPattern,
                            .description = "Only rows whose intent carries this tag"}),
      field(&LogArgs::min_confidence, {.name = "minConfidence", .type = ParamType::Scalar, .max = 20,
                                       .description = "Only rows whose intent's confidence is at least this (0–1)"}),
      field(&LogArgs::max_confidence, {.name = "maxConfidence", .type = ParamType::Scalar, .max = 20,
                                       .description = "Only rows whose intent's confidence is at most this (0–1)"}),
      field(&LogArgs::text, {.name = "text", .type = ParamType::String, .min = 1, .max = 200,
                             .description = "Only rows whose reason contains this"}),
      projection(&LogArgs::rows));
  registry.add({.domain = "system", .name = "log", .gateway = Gateway::Query,
                .summary = "Read the audit trail of mutations, newest first",
                .params = log_args.specs(),
                .returns = "[{seq,at,operation,id?,outcome?,session?,agent?,by?,reason?,intent?,changed?[task.field] (the first 20, then \"+N more\")}]; with "
                           "detail:'full' params? and changes?[{id?,field,before?,after?}] instead of changed; "
                           "_meta.page {hasMore,nextOffset} when older rows follow",
                .examples = {{R"({"limit":10})", "the last ten changes"},
                             {R"({"operation":"tasks.delete","since":"2026-01-01"})", "deletions this year"}},
                .idempotent = true, .tier = 2, .shortcut = "log", .text_view = TextView::AuditLog,
                .row_fields = {"seq", "at", "operation", "id", "outcome", "session", "agent", "by", "reason", "intent",
                               "params", "changes"},
                .handler = log_args.handler(log)});
  const auto init_args = bind(
      field(&InitArgs::force, {.name = "force", .type = ParamType::Bool,
                               .description = "Create it even inside another project (a nested project)"}),
      field(&InitArgs::separate, {.name = "separate", .type = ParamType::Bool,
                                  .description = "In a linked git worktree: a store of its own, not the repository's "
                                                 "shared one (people only)"}));
  registry.add({.domain = "system", .name = "init", .gateway = Gateway::Mutate,
                .summary = "Create a CLEO project here",
                .params = init_args.specs(),
                // disclosure/ adds the project injection as a step after the handler (Registry::add_step).
                .returns = "{root, created, db?, instructions?[{file, action}] (files written by the project "
                           "injection)}; E_ALREADY_EXISTS note when the project exists",
                .errors = {ErrorCode::FileError, ErrorCode::StoreUnavailable, ErrorCode::InvalidInput,
                           ErrorCode::MutationDisabled},
                .examples = {{R"({})", "initialise the current project"}},
                .idempotent = true, .needs_project = false, .tier = 1, .shortcut = "init",
                .text_view = TextView::Initialised, .handler = init_args.handler(init)});
}

}  // namespace ct
