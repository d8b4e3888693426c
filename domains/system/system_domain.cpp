// system domain — the parts of the foundation: init and version. The rest of the domain
// (health, config, log, backup …) arrives with the sessions issue.
#include <filesystem>
#include <system_error>

#include "core/version.h"
#include "domains/context.h"
#include "domains/params.h"
#include "domains/registry.h"
#include "engines/sqlite_store.h"

namespace ct {
namespace {

Result<Reply> init(Context& context, const Params&) {
  namespace fs = std::filesystem;
  fs::path root = init_target(context.project_dir);
  std::error_code ec;
  root = fs::absolute(root, ec);
  if (ec || !fs::is_directory(root, ec))
    return fail(Error(ErrorCode::FileError, "cannot initialise: " + root.string() + " is not a directory")
                    .with_fix("create the directory first, or pass --project DIR"));
  Project project{root};
  json::Value data = json::Value::object();
  data.set("root", root.string());
  if (fs::exists(project.db_path(), ec)) {
    data.set("created", false);
    return Reply{std::move(data), {"already initialised at " + project.cleo_dir().string()}, {}, ErrorCode::AlreadyExists};
  }
  fs::create_directories(project.cleo_dir(), ec);
  if (ec)
    return fail(Error(ErrorCode::FileError, "cannot create " + project.cleo_dir().string() + ": " + ec.message())
                    .with_fix("check the directory's permissions"));
  Config config;
  if (!fs::exists(project.config_path(), ec)) CT_TRY(config.save(project.config_path()));
  SqliteOptions options;
  options.create = true;
  CT_TRY(open_sqlite_store(project.db_path(), options));
  data.set("created", true);
  data.set("db", project.db_path().string());
  return Reply{std::move(data), {}, {}, {}};
}

Result<Reply> version(Context&, const Params&) {
  json::Value data = json::Value::object();
  data.set("version", product_version());
  data.set("schemaVersion", sqlite_schema_version());
  return Reply{std::move(data), {}, {}, {}};
}

}  // namespace

void register_system_domain(Registry& registry) {
  registry.add({.domain = "system", .name = "version", .gateway = Gateway::Query,
                .summary = "Show the product and schema versions",
                .returns = "{version, schemaVersion}",
                .examples = {{R"({})", "which version is running"}},
                .idempotent = true, .needs_project = false, .tier = 2, .shortcut = "version", .handler = version});
  registry.add({.domain = "system", .name = "init", .gateway = Gateway::Mutate,
                .summary = "Create a CLEO project (.cleo/ with tasks.db and config.json) here",
                .returns = "{root, created, db?}; E_ALREADY_EXISTS note when the project exists",
                .errors = {ErrorCode::FileError},
                .examples = {{R"({})", "initialise the current project"}},
                .idempotent = true, .needs_project = false, .tier = 1, .shortcut = "init", .handler = init});
}

}  // namespace ct
