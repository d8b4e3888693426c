// system domain — system.store.migrate (`ct store migrate --to …`): copies the project's store into
// another backend (SQLite → PostgreSQL, or back) and proves the copy: the source's snapshot and the
// target read back are compared table by table (rows and a SHA-256 each), and the target's audit
// hash chain is verified.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <system_error>

#include "domains/bind.h"
#include "domains/context.h"
#include "domains/pipeline.h"
#include "domains/registry.h"
#include "engines/store/audit_chain.h"
#include "engines/store/backups.h"
#include "engines/adapters/split_command.h"
#include "engines/store/open/open_store.h"

namespace ct {
namespace {

namespace fs = std::filesystem;

// A file removed when the scope ends (the snapshot and the read-back of the target).
struct ScratchFile {
  fs::path path;
  ~ScratchFile() {
    std::error_code ec;
    if (!path.empty()) fs::remove(path, ec);
  }
};

json::Value backend_json(const StoreBackend& backend) {
  json::Value out = json::Value::object();
  out.set("backend", std::string(backend.kind()));
  out.set("location", backend.location());
  return out;
}

struct StoreMigrateArgs {
  std::string to;
  std::optional<std::string> schema;
  bool use = false;
  bool dry_run = false;
  json::Value sent;  // every param, for the audit row it writes itself
};

/// Whether `file` begins as a SQLite database does (its 16-byte header).
/// (Asked of a regular file only, which a read never blocks on.)
bool sqlite_header(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::string head(16, '\0');
  return in.read(head.data(), 16) && head == std::string_view("SQLite format 3\0", 16);
}

/// Where a migration may write (issue 52): the copy holds everything the project knows, so it goes
/// only where its caller may write. A PostgreSQL server is another machine, which only a person
/// names (Context::person); a SQLite file inside the project — resolved through every link
/// (resolve_links, lies_within) — is anyone's, one outside it needs Context::may_leave_project.
/// For everyone: never inside a .git folder, and never over an existing file that is not a SQLite
/// database (empty_target then keeps to an empty one): an empty file is someone's file, not a store.
/// Checked before anything is read or written; answers the SQLite file to write (none for a server).
Result<std::optional<fs::path>> check_target(const Context& context, const Project& project, const StoreMigrateArgs& args) {
  const std::string& to = args.to;
  std::vector<std::string> argv = {"ct", "store", "migrate", "--to", to};
  if (args.schema) argv.insert(argv.end(), {"--schema", *args.schema});
  if (args.use) argv.push_back("--use");
  const std::string person_runs = "a person runs `" + join_command(argv) + "` in a terminal";
  if (is_postgresql_url(to)) {
    if (context.is_person()) return std::optional<fs::path>();
    return fail(Error(ErrorCode::MutationDisabled,
                      "copying the store to a PostgreSQL server is a person's act, not an MCP or dashboard caller's: "
                      "the copy holds everything the project knows, and the server is another machine")
                    .with_fix(person_runs)
                    .with_detail("field", "to")
                    .with_detail("setBy", "people"));
  }
  const fs::path given = to == "sqlite" ? project.db_path() : fs::path(to);
  const fs::path file = given.is_absolute() ? given : project.root / given;
  auto resolved = resolve_links(file);
  if (!resolved)
    return fail(Error(ErrorCode::InvalidInput, to + " leads through a loop of symbolic links").with_detail("field", "to"));
  const fs::path real = resolved->lexically_normal();
  const std::string leads = real != file.lexically_normal() ? " (it leads to " + real.string() + ")" : std::string();
  for (const auto& part : real)
    if (part == ".git")
      return fail(Error(ErrorCode::InvalidInput, to + " is inside a .git folder" + leads + ": a store is never written there")
                      .with_fix("name a file elsewhere in the project: --to copies/tasks.db")
                      .with_detail("field", "to"));
  if (!lies_within(real, project.root) && !context.may_leave_project())
    return fail(Error(ErrorCode::MutationDisabled,
                      to + " is outside the project" + leads + ": a copy of the store goes there only when a person "
                           "runs the migration, or lets agents leave the project")
                    .with_fix(person_runs + "; or " + Context::let_agents_leave_project().plain_text())
                    .with_detail("field", "to")
                    .with_detail("setBy", "people"));
  std::error_code ec;
  const auto status = fs::symlink_status(real, ec);
  if (fs::exists(status) && (!fs::is_regular_file(status) || !sqlite_header(real)))
    return fail(Error(ErrorCode::AlreadyExists, to + " exists and is not a SQLite store" + leads + "; nothing was copied")
                    .with_fix("name a file that does not exist yet: --to copies/tasks.db")
                    .with_detail("field", "to"));
  return std::optional<fs::path>(real);
}

/// The store `to` names (a PostgreSQL URL with `schema`, or the SQLite `file` check_target
/// answered), which must be another than the project's and empty: a migration never writes over a
/// store.
Result<std::unique_ptr<StoreBackend>> empty_target(const std::string& to, const std::optional<fs::path>& file,
                                                   const std::string& schema, const StoreBackend& source) {
  std::unique_ptr<StoreBackend> target =
      file ? sqlite_store_backend(*file) : postgresql_store_backend(to, schema);
  if (target->kind() == source.kind() && target->location() == source.location())
    return fail(Error(ErrorCode::InvalidInput, "the target is the project's own store (" + source.location() + ")")
                    .with_fix("name another store: --to postgresql://user@host/db, or --to sqlite (.cleo/tasks.db)")
                    .with_detail("field", "to"));
  // Never over a store: only an empty target (nothing there, or an empty file / schema) is filled.
  if (auto info = target->inspect(/*check=*/false)) {
    if (info->tables > 0)
      return fail(Error(ErrorCode::AlreadyExists, target->location() + " already holds a store (" +
                                                      std::to_string(info->tables) + " tables); nothing was copied")
                      .with_fix(is_postgresql_url(to) ? "choose another schema (--schema NAME) or an empty database"
                                                      : "move that file aside, or name another one")
                      .with_detail("field", "to"));
  } else if (info.error().code != ErrorCode::NotFound) {
    return std::unexpected(std::move(info.error()));
  }
  return target;
}

/// The target created and filled from the snapshot in one transaction.
Result<void> fill(StoreBackend& target, const fs::path& snapshot) {
  CT_TRY_ASSIGN(std::unique_ptr<Store> store, target.open(StoreOptions{.create = true}));
  CT_TRY(store->begin(TxKind::Write));
  if (auto filled = store->replace_contents_from(snapshot); !filled) {
    store->rollback();
    return std::unexpected(std::move(filled.error()));
  }
  return store->commit();
}

/// The proof: the target read back, table by table, against the snapshot; then its audit chain.
/// `data` gets the tables and the chain; a difference is E_CHECKSUM_MISMATCH with `data` as its
/// details. The target's store, open, for its own audit row.
Result<std::unique_ptr<Store>> verify(StoreBackend& target, const fs::path& snapshot, json::Value& data) {
  ScratchFile readback;
  readback.path = snapshot.string() + ".readback";
  CT_TRY(target.copy_to(readback.path));
  CT_TRY_ASSIGN(std::vector<TableDigest> expected, backup_file_digests(snapshot));
  CT_TRY_ASSIGN(std::vector<TableDigest> actual, backup_file_digests(readback.path));
  json::Value tables = json::Value::array();
  std::vector<std::string> differing;
  for (const auto& want : expected) {
    const TableDigest* got = nullptr;
    for (const auto& candidate : actual)
      if (candidate.table == want.table) got = &candidate;
    const bool same = got != nullptr && got->rows == want.rows && got->sha256 == want.sha256;
    if (!same) differing.push_back(want.table);
    json::Value item = json::Value::object();
    item.set("table", want.table);
    item.set("rows", want.rows);
    item.set("sha256", want.sha256);
    if (!same) item.set("targetRows", got ? got->rows : 0);
    tables.push_back(std::move(item));
  }
  CT_TRY_ASSIGN(std::unique_ptr<Store> store, target.open(StoreOptions{}));
  CT_TRY(store->begin(TxKind::Read));
  auto chain = verify_audit_chain(*store);
  store->rollback();
  if (!chain) return std::unexpected(std::move(chain.error()));
  json::Value audit = json::Value::object();
  audit.set("rows", chain->rows);
  audit.set("chainValid", !chain->first_broken.has_value());
  data.set("tables", std::move(tables));
  data.set("audit", std::move(audit));
  if (!differing.empty() || chain->first_broken) {
    std::string which;
    for (const auto& table : differing) which += (which.empty() ? "" : ", ") + table;
    Error error(ErrorCode::ChecksumMismatch,
                "the copy in " + target.location() + " differs from the source" +
                    (which.empty() ? std::string(": its audit chain breaks at seq ") + std::to_string(*chain->first_broken)
                                   : " in " + which));
    error.fix = "the project still uses its own store; remove the target and retry";
    error.details = std::move(data);
    return fail(std::move(error));
  }
  return store;
}

/// From now on the project uses the copy: storage.url (and storage.schema) in config.json. The
/// warnings say what still points elsewhere.
Result<std::vector<std::string>> use_copy(const Project& project, const std::string& to, const std::string& schema,
                                          const StoreBackend& target) {
  std::vector<std::string> warnings;
  CT_TRY_ASSIGN(Config config, Config::load(project.config_path()));
  CT_TRY(config.set("storage.url", json::Value(is_postgresql_url(to) ? to : std::string())));
  if (is_postgresql_url(to)) CT_TRY(config.set("storage.schema", json::Value(schema)));
  CT_TRY(config.save(project.config_path()));
  if (std::getenv("CLEO_DATABASE_URL") != nullptr)
    warnings.push_back("CLEO_DATABASE_URL is set in this environment and overrides storage.url");
  if (!is_postgresql_url(to) && target.location() != project.db_path().string())
    warnings.push_back("the project uses .cleo/tasks.db; the copy is in " + target.location());
  std::error_code ec;
  if (is_postgresql_url(to) && fs::exists(project.db_path(), ec))
    warnings.push_back(".cleo/tasks.db is kept as it was and no longer used: remove it (and its -wal, -shm) once "
                       "the server holds what you need");
  return warnings;
}

Result<Reply> store_migrate(Context& context, const StoreMigrateArgs& args) {
  CT_TRY_ASSIGN(Project project, context.workspace->project());
  const std::string& to = args.to;
  const std::string schema = args.schema.value_or(std::string(kDefaultStoreSchema));
  if (url_has_password(to))
    return fail(Error(ErrorCode::InvalidInput, "the target URL holds a password, which would be written to the audit "
                                               "trail and shell history")
                    .with_fix("put the password in ~/.pgpass or PGPASSWORD and give the URL without it")
                    .with_detail("field", "to"));
  // Who may write where comes first: an agent learns it before anything is read, reached or written.
  CT_TRY_ASSIGN(std::optional<fs::path> file, check_target(context, project, args));
  if (args.use) {
    // Pointing the project at another store sets storage.url, a key only people set.
    if (auto allowed = context.may_set_config(*find_config_key("storage.url"), json::Value(to)); !allowed) {
      Error error = std::move(allowed.error());
      error.fix = "a person runs `" + join_command({"ct", "store", "migrate", "--to", to, "--use"}) +
                  "` in a terminal; without use the copy is made and verified, and the project keeps its store";
      return fail(std::move(error).with_detail("field", "use"));
    }
  }
  std::unique_ptr<StoreBackend> source = project_store(project);
  CT_TRY_ASSIGN(std::unique_ptr<StoreBackend> target, empty_target(to, file, schema, *source));
  json::Value data = json::Value::object();
  data.set("from", backend_json(*source));
  data.set("to", backend_json(*target));
  if (args.dry_run) {
    data.set("dryRun", true);
    return Reply::of(std::move(data));
  }
  // A consistent snapshot of the source (writers may go on meanwhile), the target filled from it,
  // then proved.
  ScratchFile snapshot;
  CT_TRY_ASSIGN(snapshot.path, reserve_backup_path(project.safety_backups_dir(), context.now(), "store-migrate"));
  CT_TRY(source->copy_to(snapshot.path));
  CT_TRY(fill(*target, snapshot.path));
  CT_TRY_ASSIGN(std::unique_ptr<Store> store, verify(*target, snapshot.path, data));
  data.set("verified", true);
  std::vector<std::string> warnings;
  if (args.use) {
    CT_TRY_ASSIGN(warnings, use_copy(project, to, schema, *target));
    data.set("use", true);
  }
  // The target's own trail records where it came from (after the comparison, which it would spoil).
  CT_TRY(pipeline::append_own_audit(*store, context, "system.store.migrate", args.sent, {},
                                    "copied from " + source->location()));
  return Reply::warned(std::move(data), std::move(warnings));
}

}  // namespace

void register_system_store(Registry& registry) {
  const auto args = bind(
      field(&StoreMigrateArgs::to, {.name = "to", .type = ParamType::String, .required = true, .max = 2000,
                                    .description = "postgresql://user@host/db (password in ~/.pgpass or PGPASSWORD), "
                                                   "or sqlite (.cleo/tasks.db), or a SQLite file path"}),
      field(&StoreMigrateArgs::schema, {.name = "schema", .type = ParamType::String, .max = 63,
                                        .description = "PostgreSQL schema to create the store in (default cleo)"}),
      field(&StoreMigrateArgs::use, {.name = "use", .type = ParamType::Bool, .default_json = "false",
                                     .description = "Point the project at the copy afterwards (storage.url)"}),
      field(&StoreMigrateArgs::dry_run, {.name = "dryRun", .type = ParamType::Bool, .default_json = "false",
                                         .description = "Name the source and target; copy nothing", .dry_run = true}),
      call_params(&StoreMigrateArgs::sent));
  registry.add({.domain = "system", .name = "store.migrate", .gateway = Gateway::Mutate,
                .summary = "Copy the store into another backend (SQLite, PostgreSQL); verify it",
                .params = args.specs(),
                .returns = "{from{backend, location}, to{…}, tables[{table, rows, sha256}], audit{rows, chainValid}, "
                           "verified, use?, dryRun?}",
                .errors = {ErrorCode::InvalidInput, ErrorCode::AlreadyExists, ErrorCode::ChecksumMismatch,
                           ErrorCode::FileError, ErrorCode::StoreUnavailable},
                .examples = {{R"({"to":"postgresql://cleo@db.internal/team","use":true})",
                              "move the project onto the team's PostgreSQL server"},
                             {R"({"to":"copies/tasks.db"})", "a verified SQLite copy of the store in copies/"}},
                .needs_project = false, .tier = 2, .shortcut = "store migrate",
                .handler = args.handler(store_migrate)});
}

}  // namespace ct
