// system domain — system.restore: the live store replaced by a backup that passes every check;
// and the safety copy made before a store is replaced or migrated.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <system_error>

#include "core/text.h"
#include "domains/bind.h"
#include "domains/context.h"
#include "domains/pipeline.h"
#include "domains/registry.h"
#include "domains/system/safety_backup.h"
#include "engines/store/audit_chain.h"
#include "engines/store/backups.h"
#include "engines/store/open/open_store.h"
#include "engines/rules/task_engine.h"
#include "engines/store/task_json.h"

namespace ct {
namespace {

namespace fs = std::filesystem;

}  // namespace

// ---- backups ---------------------------------------------------------------------------------

/// A safety copy of the live store before it is replaced or migrated (.cleo/backups/safety/,
/// out of reach of backup.keep).
Result<fs::path> safety_backup(const Project& project, TimeMs now, std::string_view note) {
  CT_TRY_ASSIGN(fs::path file, reserve_backup_path(project.safety_backups_dir(), now, note));
  if (auto copied = project_store(project)->copy_to(file); !copied) {
    std::error_code ec;
    fs::remove(file, ec);
    return std::unexpected(std::move(copied.error()));
  }
  return file;
}

namespace {

/// A backup's name as restore takes it: the file name in .cleo/backups/, safety/<name> for a
/// safety backup.
std::string backup_name(const BackupFile& backup) {
  return (backup.safety ? "safety/" : "") + backup.path.filename().string();
}

json::Value counts_json(const StoreCounts& counts) {
  json::Value out = json::Value::object();
  out.set("tasks", counts.tasks);
  out.set("auditRows", counts.audit_rows);
  return out;
}

/// Removes a temporary database and its WAL files when the call ends, whatever happens (unless
/// released: the file was given another name).
class TempDatabase {
 public:
  explicit TempDatabase(fs::path path) : path_(std::move(path)) { remove(); }
  ~TempDatabase() { remove(); }
  TempDatabase(const TempDatabase&) = delete;
  TempDatabase& operator=(const TempDatabase&) = delete;
  const fs::path& path() const { return path_; }
  void release() { released_ = true; }

 private:
  void remove() {
    std::error_code ec;
    if (!released_) fs::remove(path_, ec);
    for (const char* suffix : {"-wal", "-shm", "-journal"}) fs::remove(path_.string() + suffix, ec);
  }
  fs::path path_;
  bool released_ = false;
};

// ---- system.restore --------------------------------------------------------------------------

Advice restore_call(std::string_view file) {
  return call("system.restore", {{"file", file}, {"dryRun", true}});
}

/// A backup made ready to restore: copied privately, integrity-checked, migrated to this
/// binary's schema, counted and its audit chain verified. The backup itself is only read.
struct PreparedBackup {
  fs::path file;
  std::unique_ptr<TempDatabase> copy;
  std::int64_t schema_version = 0;
  json::Value counts;
  std::optional<std::int64_t> broken;  // first audit row that does not verify
  std::int64_t anchor = 0;             // the backup's audit anchor (0: not compacted)
};

Error refused(const fs::path& file, std::string why, Advice fix) {
  return Error(ErrorCode::FileError, "refusing to restore " + file.filename().string() + ": " + std::move(why))
      .with_fix(std::move(fix))
      .with_detail("file", file.string());
}

Result<PreparedBackup> prepare_backup(const Project& project, const fs::path& file) {
  const Advice other_fix =
      "pick another backup (" + call("system.health") + " checks the live store; ls .cleo/backups/ lists the backups)";
  PreparedBackup out;
  out.file = file;
  // Restores (dry runs too) run one at a time per process (the store's write lock, or recovery
  // of a store nobody can open), so one copy name per process is enough.
  out.copy = std::make_unique<TempDatabase>(project.cleo_dir() / (".restore-" + std::to_string(::getpid()) + ".db"));
  if (auto copied = copy_backup_file(file, out.copy->path()); !copied)
    return fail(refused(file, "it is not a readable SQLite database (" + copied.error().message + ")", other_fix));
  auto info = inspect_backup_file(out.copy->path(), /*check=*/true);
  if (!info) return fail(refused(file, info.error().message, other_fix));
  const std::int64_t ours = store_schema_version();
  if (info->schema_version == 0) return fail(refused(file, "it holds no CLEO task database", other_fix));
  if (info->schema_version > ours)
    return fail(refused(file,
                        "it was written by a newer ct (schema version " + std::to_string(info->schema_version) +
                            ", this binary knows " + std::to_string(ours) + ")",
                        "install the latest ct and restore with it"));
  if (!info->problems.empty())
    return fail(refused(file, "it fails the integrity check (" + info->problems.front() + ")", other_fix)
                    .with_detail("problems", json::Value::array_of(info->problems)));
  out.schema_version = info->schema_version;
  // Opening migrates the copy to this binary's schema.
  auto store = open_backup_file(out.copy->path());
  if (!store) return fail(refused(file, store.error().message, other_fix));
  CT_TRY((*store)->begin(TxKind::Read));
  auto counted = (*store)->counts();
  auto chain = verify_audit_chain(**store);
  auto anchor = (*store)->audit_anchor();
  (*store)->rollback();
  if (anchor && *anchor) out.anchor = (*anchor)->seq;
  if (!counted) return fail(refused(file, counted.error().message, other_fix));
  if (!chain) return fail(refused(file, chain.error().message, other_fix));
  out.counts = counts_json(*counted);
  out.broken = chain->first_broken;
  return out;
}

/// The backup named by the caller: a name in .cleo/backups/ (safety/<name> for a safety backup),
/// or — from a person at the command line, or where security.allowOutsideProject is set — the
/// absolute path of a backup file elsewhere. A live store (another project's .cleo/tasks.db) is
/// never read as a backup.
Result<fs::path> named_backup(Context& context, const Project& project, const std::string& wanted) {
  const fs::path dir = project.backups_dir();
  std::vector<std::string> names;
  for (const auto& backup : list_backups(project)) names.push_back(backup_name(backup));
  std::error_code ec;
  fs::path given(wanted);
  if (given.is_absolute()) {
    fs::path resolved = fs::weakly_canonical(given, ec);
    const fs::path cleo = fs::weakly_canonical(project.cleo_dir(), ec);
    const bool inside = !ec && resolved.lexically_relative(cleo).native().rfind("..", 0) != 0 &&
                        !resolved.lexically_relative(cleo).empty();
    if (!inside && !context.may_leave_project())
      return fail(Error(ErrorCode::InvalidInput, given.string() + " is outside this project; this caller may restore "
                                                                  "only backups in " + dir.string())
                      .with_fix(names.empty() ? call("system.backup") + " makes one" : restore_call(names.front()))
                      .with_detail("field", "file")
                      .with_detail("valid", json::Value::array_of(names)));
    if (!fs::is_regular_file(given, ec))
      return fail(Error(ErrorCode::NotFound, "no backup file at " + given.string())
                      .with_fix("check the path, or name a backup in " + dir.string())
                      .with_detail("field", "file")
                      .with_detail("valid", json::Value::array_of(names)));
    if (resolved.filename() == "tasks.db" && resolved.parent_path().filename() == ".cleo")
      return fail(Error(ErrorCode::InvalidInput, given.string() + " is a live task store, not a backup")
                      .with_fix(fs::equivalent(given, project.db_path(), ec)
                                    ? Advice("name a backup in " + dir.string())
                                    : "back that project up (" + call("system.backup") +
                                          " there), then restore the backup it writes")
                      .with_detail("field", "file"));
    return given;
  }
  // A relative name is looked up in .cleo/backups/ (or its safety/ folder) and may not leave it.
  fs::path inside = (dir / given).lexically_normal();
  if (inside.parent_path() != dir.lexically_normal() && inside.parent_path() != project.safety_backups_dir().lexically_normal())
    return fail(Error(ErrorCode::InvalidInput, "'" + wanted + "' is outside " + dir.string() +
                                                   "; restore reads backups from there only")
                    .with_fix("name a backup file there, or give the absolute path of another backup file")
                    .with_detail("field", "file")
                    .with_detail("valid", json::Value::array_of(names)));
  if (!fs::is_regular_file(inside, ec)) {
    Error error(ErrorCode::NotFound, "no backup named '" + wanted + "' in " + dir.string());
    error.fix = names.empty() ? call("system.backup") + " makes one" : restore_call(names.front());
    return fail(std::move(error).with_detail("field", "file").with_choices(wanted, names));
  }
  return inside;
}

/// The audit archives (system.gc) that do not belong to a trail compacted up to `anchor_seq`
/// (0: not compacted): after a restore they hold rows of the replaced trail.
std::vector<fs::path> foreign_archives(const Project& project, std::int64_t anchor_seq) {
  std::vector<fs::path> out;
  std::error_code ec;
  const fs::path dir = project.cleo_dir() / "audit-archive";
  if (!fs::is_directory(dir, ec)) return out;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (!entry.is_regular_file(ec) || entry.path().extension() != ".jsonl") continue;
    auto report = verify_audit_archive(entry.path());
    if (!report || report->to > anchor_seq) out.push_back(entry.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string compact_stamp(TimeMs now) {
  std::string stamp = format_iso8601(now);
  std::erase_if(stamp, [](char c) { return c == '-' || c == ':'; });
  return stamp;
}

/// Moves the replaced trail's archives into .cleo/audit-archive/replaced-<stamp>/: kept, never
/// deleted, but out of the way of the restored trail's chain (and of its next system.gc).
Result<json::Value> set_archives_aside(const Project& project, const std::vector<fs::path>& files, TimeMs now) {
  json::Value moved = json::Value::array();
  if (files.empty()) return moved;
  const fs::path aside = project.cleo_dir() / "audit-archive" / ("replaced-" + compact_stamp(now));
  std::error_code ec;
  fs::create_directories(aside, ec);
  if (ec) return fail(Error(ErrorCode::FileError, "cannot create " + aside.string() + ": " + ec.message()));
  for (const auto& file : files) {
    fs::rename(file, aside / file.filename(), ec);
    if (ec)
      return fail(Error(ErrorCode::FileError, "cannot move " + file.string() + " aside: " + ec.message())
                      .with_fix("move it out of .cleo/audit-archive/ by hand, then run validate.audit {archives:true}"));
    moved.push_back(".cleo/audit-archive/" + aside.filename().string() + "/" + file.filename().string());
  }
  return moved;
}

/// Recovery of a store nobody can open (missing, empty, corrupt): the backend moves it aside into
/// .cleo/damaged/, never deleting it, and the prepared copy takes its place whole.
Result<json::Value> replace_damaged_store(const Project& project, PreparedBackup& prepared, TimeMs now) {
  json::Value data = json::Value::object();
  CT_TRY_ASSIGN(std::string aside,
                project_store(project)->replace_with_backup(prepared.copy->path(), project.cleo_dir() / "damaged", now));
  prepared.copy->release();
  if (!aside.empty()) data.set("movedAside", ".cleo/damaged/" + aside);
  return data;
}

struct RestoreArgs {
  std::optional<std::string> file;
  bool dry_run = false;
};

/// system.restore. With a store that opens, its rows are replaced inside this call's write
/// transaction; with one that does not (the router runs this handler without a store), the
/// damaged file is moved aside and the backup takes its place. Without `file`, the newest backup
/// that passes every check is used, in either case.
Result<Reply> restore(Context& context, const RestoreArgs& args) {
  const Project& project = *context.project;
  const bool recovering = context.store == nullptr;
  std::vector<std::string> warnings;
  std::optional<PreparedBackup> prepared;
  if (const auto& wanted = args.file) {
    CT_TRY_ASSIGN(fs::path file, named_backup(context, project, *wanted));
    CT_TRY_ASSIGN(PreparedBackup ready, prepare_backup(project, file));
    prepared = std::move(ready);
  } else {
    std::vector<BackupFile> backups = list_backups(project);
    if (backups.empty())
      return fail(Error(ErrorCode::NotFound, "there are no backups in " + project.backups_dir().string())
                      .with_fix(recovering ? "with no backup, " + call("system.init") +
                                                 " starts an empty store (move .cleo/tasks.db aside first)"
                                           : call("system.backup") +
                                                 " makes one; or pass the absolute path of a backup file as `file`"));
    for (const auto& backup : backups) {
      auto ready = prepare_backup(project, backup.path);
      if (ready) {
        prepared = std::move(*ready);
        break;
      }
      warnings.push_back("skipped " + backup_name(backup) + ": " + ready.error().message);
    }
    if (!prepared)
      return fail(Error(ErrorCode::NotFound, "no backup in " + project.backups_dir().string() +
                                                 " passes the checks (" + std::to_string(backups.size()) + " tried)")
                      .with_fix("restore a backup file from elsewhere by its absolute path (ct restore /path/to/backup.db)")
                      .with_detail("skipped", json::Value::array_of(warnings)));
  }

  const fs::path& file = prepared->file;
  json::Value data = json::Value::object();
  const bool safety = file.parent_path() == project.safety_backups_dir();
  data.set("file", (safety ? "safety/" : "") + file.filename().string());
  if (file.parent_path() != project.backups_dir() && !safety) data.set("path", file.string());
  data.set("schemaVersion", prepared->schema_version);
  for (auto& [key, value] : prepared->counts.as_object()) data.set(key, value);
  if (prepared->schema_version < store_schema_version()) data.set("migratedTo", store_schema_version());
  if (prepared->broken)
    warnings.push_back("the backup's audit trail does not verify from row " + std::to_string(*prepared->broken) +
                       " (it is restored as it is; validate.audit will report it)");
  std::optional<StoreCounts> live;
  if (recovering) {
    data.set("recovered", true);
    data.set("damaged", context.store_error ? context.store_error->message : "the store cannot be opened");
  } else {
    CT_TRY_ASSIGN(StoreCounts counted, context.db().counts());
    live = counted;
    data.set("current", counts_json(counted));
  }

  const std::vector<fs::path> foreign = foreign_archives(project, prepared->anchor);
  if (args.dry_run) {
    data.set("dryRun", true);
    if (!foreign.empty()) {
      json::Value names = json::Value::array();
      for (const auto& f : foreign) names.push_back(f.filename().string());
      data.set("archivesSetAside", std::move(names));
    }
    return Reply::warned(std::move(data), std::move(warnings));
  }
  if (recovering) {
    CT_TRY_ASSIGN(json::Value moved, replace_damaged_store(project, *prepared, context.now()));
    for (auto& [key, value] : moved.as_object()) data.set(key, value);
  } else {
    CT_TRY_ASSIGN(fs::path safety_copy, safety_backup(project, context.now(), "pre-restore"));
    data.set("safetyBackup", "safety/" + safety_copy.filename().string());
    // Row by row inside this call's write transaction: other processes see the old store or the
    // restored one, never a mix, and the audit row of this call is chained to the restored trail.
    CT_TRY(context.db().replace_contents_from(prepared->copy->path()));
  }
  CT_TRY_ASSIGN(json::Value aside, set_archives_aside(project, foreign, context.now()));
  if (!aside.empty()) data.set("archivesSetAside", std::move(aside));
  json::Value after = prepared->counts;
  after.set("file", data["file"]);
  context.record(FieldChange{"", "store", live ? counts_json(*live) : json::Value("damaged"), std::move(after)});
  return Reply::warned(std::move(data), std::move(warnings));
}

}  // namespace

void register_system_restore(Registry& registry) {
  const auto args = bind(
      field(&RestoreArgs::file, {.name = "file", .type = ParamType::String, .max = 4096,
                                 .description = "Backup name in .cleo/backups/ (safety/<name> for a safety copy; "
                                                "default: the newest that passes every check), or an absolute path (CLI)",
                                 .positional = true}),
      field(&RestoreArgs::dry_run, {.name = "dryRun", .type = ParamType::Bool, .default_json = "false",
                                    .description = "Check the backup and report what would happen; change nothing",
                                    .dry_run = true}));
  registry.add({.domain = "system", .name = "restore", .gateway = Gateway::Mutate,
                .summary = "Replace the store with a backup; recover a damaged or missing store",
                .params = args.specs(),
                .returns = "{file, schemaVersion, migratedTo?, tasks, auditRows, current?{tasks, auditRows}, "
                           "safetyBackup?, recovered?, damaged?, movedAside?, archivesSetAside?[file], dryRun?}: a live "
                           "store is copied to backups/safety/ and its rows replaced; a store that cannot be opened "
                           "(missing, empty, corrupt) is moved to .cleo/damaged/ and the backup takes its place",
                .errors = {ErrorCode::NotFound, ErrorCode::InvalidInput, ErrorCode::FileError},
                .examples = {{R"({"dryRun":true})", "what restoring the newest backup would do"},
                             {R"({"file":"tasks-20260101T000000Z-before-refactor.db"})", "restore a named backup"}},
                .destructive = true, .runs_on_damaged_store = true, .tier = 2, .shortcut = "restore",
                .handler = args.handler(restore)});
}

}  // namespace ct
