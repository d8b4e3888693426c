// validate domain — validate.audit: the audit trail's hash chain, and the archives system.gc wrote.
#include <algorithm>
#include <filesystem>

#include "core/text.h"
#include "domains/context.h"
#include "domains/params.h"
#include "domains/registry.h"
#include "domains/system/epochs.h"
#include "domains/verdict.h"
#include "engines/store/audit_chain.h"

namespace ct {
namespace {

/// Verifies the archive files system.gc wrote, oldest first: each file's chain, each file linking
/// to the one before, and the newest ending at the anchor the live trail starts from.
Result<json::Value> verify_archives(Context& context, const std::optional<AuditAnchor>& anchor,
                                    std::vector<std::string>& warnings) {
  namespace fs = std::filesystem;
  struct Archive {
    fs::path file;
    Result<ArchiveReport> report;
  };
  std::vector<Archive> archives;
  const fs::path dir = context.project->cleo_dir() / "audit-archive";
  std::error_code ec;
  if (fs::is_directory(dir, ec))
    for (const auto& entry : fs::directory_iterator(dir, ec))
      if (entry.path().extension() == ".jsonl") archives.push_back({entry.path(), verify_audit_archive(entry.path())});
  // Oldest first by the rows they hold (file names stop sorting numerically past 999,999);
  // unreadable files last.
  std::sort(archives.begin(), archives.end(), [](const Archive& a, const Archive& b) {
    if (a.report.has_value() != b.report.has_value()) return a.report.has_value();
    if (a.report && a.report->from != b.report->from) return a.report->from < b.report->from;
    return a.file < b.file;
  });
  json::Value out = json::Value::array();
  std::string previous_last;
  bool linked = true;
  for (const auto& [file, report] : archives) {
    json::Value item = json::Value::object();
    item.set("file", ".cleo/audit-archive/" + file.filename().string());
    if (!report) {
      item.set("valid", false);
      item.set("error", report.error().message);
      warnings.push_back(file.filename().string() + " cannot be read: " + report.error().message);
      linked = false;
    } else {
      bool valid = !report->first_broken && (previous_last.empty() || report->previous == previous_last);
      item.set("rows", report->rows);
      item.set("from", report->from);
      item.set("to", report->to);
      item.set("valid", valid);
      if (report->first_broken) {
        item.set("firstBroken", *report->first_broken);
        warnings.push_back(file.filename().string() + " was altered at or before row " +
                           std::to_string(*report->first_broken));
      } else if (!valid) {
        warnings.push_back(file.filename().string() + " does not follow the archive before it");
      }
      linked = linked && valid;
      previous_last = report->last_hash;
    }
    out.push_back(std::move(item));
  }
  if (anchor && linked && previous_last != anchor->hash) {
    warnings.push_back(archives.empty() ? "the audit trail was compacted but .cleo/audit-archive/ holds no archive"
                                     : "the newest audit archive does not end where the live trail starts");
    linked = false;
  }
  json::Value data = json::Value::object();
  data.set("valid", linked);
  data.set("files", std::move(out));
  return data;
}

/// validate.audit {epoch}: the sealed row must still be in the chain, unbroken up to it, with the
/// hash it had when sealed (a row compacted away by system.gc is checked against the anchor, or
/// left to the archives).
Result<json::Value> verify_epoch(Context& context, const std::string& name, const ChainReport& report,
                                 std::vector<std::string>& warnings) {
  CT_TRY_ASSIGN(std::vector<Epoch> epochs, sealed_epochs(context.db()));
  auto epoch = std::find_if(epochs.begin(), epochs.end(), [&](const Epoch& e) { return e.name == name; });
  if (epoch == epochs.end()) {
    std::vector<std::string> names;
    for (const auto& e : epochs) names.push_back(e.name);
    return fail(Error(ErrorCode::NotFound, "no epoch " + echo(name) + " was sealed")
                    .with_fix(call("system.log", {{"operation", "system.epoch.seal"}}) + " lists the sealed epochs")
                    .with_choices(name, names));
  }
  json::Value out = epoch_json(*epoch);
  bool valid = !report.first_broken || *report.first_broken > epoch->row;
  CT_TRY_ASSIGN(std::optional<AuditAnchor> anchor, context.db().audit_anchor());
  if (anchor && anchor->seq >= epoch->seq) {
    // Compacted: the anchor is the newest archived row.
    if (anchor->seq == epoch->seq) valid = valid && anchor->hash == epoch->hash;
    else out.set("archived", true);
  } else {
    AuditQuery row;
    row.after_seq = epoch->seq - 1;
    row.ascending = true;
    row.limit = 1;
    CT_TRY_ASSIGN(std::vector<AuditEntry> found, context.db().read_audit(row));
    const bool same = !found.empty() && found.front().seq == epoch->seq && found.front().hash == epoch->hash;
    valid = valid && same;
  }
  if (!valid) warnings.push_back("epoch " + name + " does not verify: rows up to " + std::to_string(epoch->seq) +
                                 " were altered since it was sealed");
  out.set("valid", valid);
  return out;
}

Result<Reply> audit(Context& context, const Params& params) {
  CT_TRY_ASSIGN(ChainReport report, verify_audit_chain(context.db()));
  json::Value data = json::Value::object();
  std::vector<std::string> warnings;
  bool valid = !report.first_broken.has_value();
  if (auto name = params.opt_str("epoch")) {
    CT_TRY_ASSIGN(json::Value epoch, verify_epoch(context, *name, report, warnings));
    // An epoch is judged on its own rows: a break after it is reported, not held against it.
    valid = epoch["valid"].as_bool();
    data.set("epoch", std::move(epoch));
  }
  data.set("rows", report.rows);
  if (report.anchor) data.set("anchor", *report.anchor);
  if (report.first_broken) {
    json::Value broken = json::Value::object();
    broken.set("seq", *report.first_broken);
    broken.set("expected", report.expected);
    broken.set("actual", report.actual);
    data.set("firstBroken", std::move(broken));
    warnings.push_back("the audit trail was altered at or before row " + std::to_string(*report.first_broken) +
                       ": rows from there on cannot be trusted; restore a backup to recover");
  }
  if (params.flag("archives")) {
    CT_TRY_ASSIGN(std::optional<AuditAnchor> anchor, context.db().audit_anchor());
    CT_TRY_ASSIGN(json::Value archives, verify_archives(context, anchor, warnings));
    valid = valid && archives["valid"].as_bool();
    data.set("archives", std::move(archives));
  }
  std::string summary = data.contains("epoch") && !data["epoch"]["valid"].as_bool()
                            ? "epoch " + data["epoch"]["name"].as_string() + " does not verify"
                        : report.first_broken
                            ? "the audit trail's hash chain breaks at row " + std::to_string(*report.first_broken)
                            : "the audit archives do not verify";
  return verdict(valid, std::move(data), std::move(warnings), std::move(summary),
                 "restore the newest backup whose trail verifies: " + call("system.restore", {{"dryRun", true}}));
}

}  // namespace

void register_validate_audit(Registry& registry) {
  registry.add({.domain = "validate", .name = "audit", .gateway = Gateway::Query,
                .summary = "Verify the audit trail's hash chain",
                .params = {{.name = "archives", .type = ParamType::Bool, .default_json = "false",
                            .description = "also verify the files system.gc archived into .cleo/audit-archive/"},
                           {.name = "epoch", .type = ParamType::String, .max = 64,
                            .description = "verify this sealed epoch (system.epoch.seal): the rows up to it"}},
                .returns = "{valid, rows, anchor?, firstBroken?{seq, expected, actual}, archives?{valid, files[]}, "
                           "epoch?{name, seq, hash, sealedAt, valid}}: each row's SHA-256 covers its content and the "
                           "previous row's hash, so any edit, insertion or deletion shows; after system.gc the live "
                           "trail starts at `anchor`. A broken chain (with epoch: broken up to the epoch) fails with "
                           "E_VALIDATION (exit 6), the report in error.details",
                .errors = {ErrorCode::Validation, ErrorCode::NotFound},
                .examples = {{R"({})", "check the audit trail"},
                             {R"({"archives":true})", "check the trail and its archived rows"}},
                .idempotent = true, .tier = 2, .handler = audit});
}

}  // namespace ct
