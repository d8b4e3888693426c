// system domain — the store's upkeep: schema migration, and housekeeping of idempotency keys and
// the audit trail.

#include <algorithm>
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

namespace ct {
namespace {

namespace fs = std::filesystem;

constexpr TimeMs kDayMs = 24LL * 3600 * 1000;
/// Idempotency keys are honoured for 24 hours (the router's window); gc forgets older ones.
constexpr TimeMs kIdempotencyWindowMs = kDayMs;

// ---- system.migrate --------------------------------------------------------------------------

json::Value steps_json(const std::vector<MigrationStep>& steps) {
  json::Value out = json::Value::array();
  for (const auto& step : steps) {
    json::Value item = json::Value::object();
    item.set("version", step.version);
    item.set("description", step.description);
    out.push_back(std::move(item));
  }
  return out;
}

struct MigrateArgs {
  bool dry_run = false;
  json::Value sent;  // every param, for the audit row it writes itself
};

/// Runs without the router opening the store (which would migrate it on open): it reads the
/// schema version first, so a dry run can list what is pending, and a real run backs up first.
Result<Reply> migrate(Context& context, const MigrateArgs& args) {
  CT_TRY_ASSIGN(Project project, context.workspace->project());
  std::unique_ptr<StoreBackend> backend = project_store(project);
  auto info = backend->inspect(/*check=*/false);
  if (!info && info.error().code == ErrorCode::NotFound)
    return fail(Error(ErrorCode::NotInitialized, "no task database at " + backend->location())
                    .with_fix(call("system.init")));
  if (!info) return std::unexpected(std::move(info.error()));
  const std::int64_t from = info->schema_version;
  const std::int64_t target = store_schema_version();
  if (from == 0)
    return fail(Error(ErrorCode::NotInitialized, backend->location() + " holds no CLEO task database")
                    .with_fix(call("system.init")));
  if (from > target)
    return fail(Error(ErrorCode::FileError, backend->location() + " has schema version " + std::to_string(from) +
                                                ", newer than this ct knows (" + std::to_string(target) +
                                                "); ct never migrates a store backwards")
                    .with_fix("install the latest ct; or restore a backup written by this version: " +
                              call("system.restore", {{"dryRun", true}}))
                    .with_detail("schemaVersion", from)
                    .with_detail("supported", target));
  std::vector<MigrationStep> pending = backend->migrations();
  std::erase_if(pending, [&](const MigrationStep& step) { return step.version <= from; });
  json::Value data = json::Value::object();
  data.set("from", from);
  data.set("to", target);
  if (pending.empty()) {
    data.set("applied", json::Value::array());
    return Reply::noted(std::move(data), ErrorCode::NoChange, {"the store is at schema version " + std::to_string(target) + ": nothing to migrate"});
  }
  if (args.dry_run) {
    data.set("dryRun", true);
    data.set("pending", steps_json(pending));
    return Reply::of(std::move(data));
  }
  CT_TRY_ASSIGN(fs::path backup, safety_backup(project, context.now(), "pre-migrate-v" + std::to_string(from)));
  CT_TRY_ASSIGN(Config config, Config::load(project.config_path()));
  CT_TRY_ASSIGN(std::unique_ptr<Store> store, backend->open(store_options(config)));
  // The router audits only calls that run in its own transaction; this one records itself.
  CT_TRY(pipeline::append_own_audit(*store, context, "system.migrate", args.sent,
                                    {FieldChange{"", "schemaVersion", json::Value(from), json::Value(target)}}));
  data.set("applied", steps_json(pending));
  data.set("safetyBackup", "safety/" + backup.filename().string());
  return Reply::of(std::move(data));
}

// ---- system.gc -------------------------------------------------------------------------------

std::string padded(std::int64_t seq) {
  std::string text = std::to_string(seq);
  return std::string(text.size() < 6 ? 6 - text.size() : 0, '0') + text;
}

struct GcArgs {
  bool dry_run = false;
};

Result<Reply> gc(Context& context, const GcArgs& args) {
  Store& db = context.db();
  const bool dry = args.dry_run;
  const TimeMs now = context.now();
  json::Value data = json::Value::object();
  if (dry) data.set("dryRun", true);
  CT_TRY_ASSIGN(std::int64_t keys, db.expire_idempotent(now - kIdempotencyWindowMs, dry));
  data.set("idempotencyKeys", keys);
  bool changed = keys > 0;

  const std::int64_t retention = context.config->get_int("audit.retentionDays");
  json::Value audit = json::Value::object();
  audit.set("retentionDays", retention);
  CT_TRY_ASSIGN(std::optional<AuditAnchor> anchor, db.audit_anchor());
  const std::int64_t archived_before = anchor ? anchor->seq : 0;
  std::int64_t upto = 0;
  if (retention > 0) {
    const TimeMs cutoff = now - retention * kDayMs;
    audit.set("before", format_iso8601(cutoff));
    CT_TRY_ASSIGN(upto, db.last_audit_seq_before(cutoff));
  }
  // An open plan reads what moved since it began from the changes after its watermark: they stay
  // until it is committed, discarded or rebased (domains/plan/plan_moved.cpp).
  CT_TRY_ASSIGN(auto held, db.oldest_plan_watermark());
  if (held && upto > held->second) {
    upto = held->second;
    audit.set("heldBy", held->first);
  }
  if (upto > archived_before) {
    fs::path dir = context.project->cleo_dir() / "audit-archive";
    AuditQuery first_row;
    first_row.ascending = true;
    first_row.limit = 1;
    CT_TRY_ASSIGN(std::vector<AuditEntry> first, db.read_audit(first_row));
    const std::int64_t from = first.empty() ? archived_before + 1 : first.front().seq;
    std::string name = "audit-" + padded(from) + "-" + padded(upto) + ".jsonl";
    audit.set("from", from);
    audit.set("to", upto);
    audit.set("archive", ".cleo/audit-archive/" + name);
    if (dry) {
      audit.set("rows", upto - from + 1);
    } else {
      // The rows reach the disk (fsynced) before any is deleted, and the archive is read back.
      CT_TRY_ASSIGN(ArchiveReport written, write_audit_archive(db, dir / name, anchor, upto));
      CT_TRY_ASSIGN(ArchiveReport check, verify_audit_archive(dir / name));
      if (check.first_broken || check.rows != written.rows || check.last_hash != written.last_hash ||
          check.previous != (anchor ? anchor->hash : ""))
        return fail(Error(ErrorCode::FileError, "the audit archive " + (dir / name).string() +
                                                    " did not read back intact; nothing was removed")
                        .with_fix("check the disk, then run system.gc again"));
      CT_TRY_ASSIGN(std::int64_t removed, db.compact_audit(AuditAnchor{upto, written.last_hash, name}));
      audit.set("rows", removed);
      changed = changed || removed > 0;
    }
  } else {
    audit.set("rows", 0);
  }
  if (anchor) audit.set("anchor", archived_before);
  data.set("audit", std::move(audit));
  if (dry) {
    return Reply::of(std::move(data));
  }
  return Reply::noted(std::move(data), no_change_if(!changed));
}

}  // namespace

void register_system_maintenance(Registry& registry) {
  const auto migrate_args =
      bind(field(&MigrateArgs::dry_run, {.name = "dryRun", .type = ParamType::Bool, .default_json = "false",
                                         .description = "List the pending steps; change nothing", .dry_run = true}),
           call_params(&MigrateArgs::sent));
  registry.add({.domain = "system", .name = "migrate", .gateway = Gateway::Mutate,
                .summary = "Upgrade the store's schema to this version of ct (backs up first)",
                .params = migrate_args.specs(),
                .returns = "{from, to, pending?[{version, description}], applied?[…], safetyBackup?, dryRun?}; "
                           "E_NO_CHANGE note when already current",
                .errors = {ErrorCode::FileError, ErrorCode::StoreUnavailable, ErrorCode::NotInitialized},
                .examples = {{R"({"dryRun":true})", "what an upgrade would change"}, {R"({})", "upgrade now"}},
                .idempotent = true, .needs_project = false, .tier = 2, .shortcut = "migrate",
                .handler = migrate_args.handler(migrate)});
  const auto gc_args =
      bind(field(&GcArgs::dry_run, {.name = "dryRun", .type = ParamType::Bool, .default_json = "false",
                                    .description = "Report what would be removed; change nothing", .dry_run = true}));
  registry.add({.domain = "system", .name = "gc", .gateway = Gateway::Mutate,
                .summary = "Expire idempotency keys; archive audit rows past audit.retentionDays",
                .params = gc_args.specs(),
                .returns = "{idempotencyKeys, audit{retentionDays, before?, rows, from?, to?, archive?, anchor?, "
                           "heldBy? (the open plan whose rows are kept)}, dryRun?}; E_NO_CHANGE note when nothing was due",
                .errors = {ErrorCode::FileError},
                .examples = {{R"({"dryRun":true})", "what housekeeping would remove"}, {R"({})", "clean up now"}},
                .idempotent = true, .tier = 2, .shortcut = "gc", .aliases = {"cleanup"},
                .handler = gc_args.handler(gc)});
}

}  // namespace ct
