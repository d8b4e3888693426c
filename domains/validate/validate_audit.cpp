// validate domain — validate.audit: the audit trail's hash chain, and the archives system.gc wrote.
#include <algorithm>
#include <filesystem>

#include "core/file_read.h"
#include "core/json_parse.h"
#include "core/text.h"
#include "domains/bind.h"
#include "domains/context.h"
#include "domains/registry.h"
#include "domains/system/epochs.h"
#include "domains/verdict.h"
#include "engines/rules/trail_state.h"
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

/// The tasks against the trail's last changes (engines/rules/trail_state.h): {valid, tasks,
/// differences?[{id, field, trail, stored, seq}] (the first 20), more?}.
Result<json::Value> verify_state(Context& context, const TrailState& state, std::vector<std::string>& warnings) {
  std::int64_t checked = 0;
  CT_TRY_ASSIGN(std::vector<TrailState::Difference> differences, state.compare(context.db(), checked));
  json::Value out = json::Value::object();
  out.set("valid", differences.empty());
  out.set("tasks", checked);
  if (differences.empty()) return out;
  json::Value rows = json::Value::array();
  for (std::size_t i = 0; i < differences.size() && i < 20; ++i) {
    const auto& d = differences[i];
    json::Value row = json::Value::object();
    row.set("id", d.id);
    row.set("field", d.field);
    row.set("trail", d.trail);
    row.set("stored", d.stored);
    if (d.seq > 0) row.set("seq", d.seq);
    rows.push_back(std::move(row));
  }
  out.set("differences", std::move(rows));
  if (differences.size() > 20) out.set("more", static_cast<std::int64_t>(differences.size() - 20));
  const auto& first = differences.front();
  std::string what;
  if (first.field != "task")
    what = first.id + "." + first.field + " is not what the trail's last change of it says (row " +
           std::to_string(first.seq) + ")";
  else if (first.trail.is_null())
    what = first.id + " is stored but no row of the trail made it";
  else
    what = first.id + (first.stored.is_null() ? " is gone, but the trail never deleted it" : " is stored, but the trail deleted it");
  if (differences.size() > 1) what += " (and " + std::to_string(differences.size() - 1) + " more)";
  warnings.push_back(what + ": the store was changed outside ct (details.state lists what differs)");
  return out;
}

/// The seals recorded outside the store (.cleo/audit-seals.jsonl): each must name a row of the
/// chain with its hash, and its seal's own row must still be there (a trail cut short below a seal
/// shows). {valid, checked, broken?[{name, seq, why}]}; null when there is no such file.
Result<json::Value> verify_seals(Context& context, const ChainReport& report, std::int64_t newest,
                                 std::vector<std::string>& warnings) {
  const auto file = context.project->cleo_dir() / kSealsFile;
  if (file_stamp(file).size < 0) return json::Value();
  auto text = read_regular_file(file, {16LL << 20, std::chrono::milliseconds(10000)});
  if (!text) return fail(std::move(text.error()).with_fix("check .cleo/" + std::string(kSealsFile)));
  CT_TRY_ASSIGN(std::vector<Epoch> epochs, sealed_epochs(context.db()));
  CT_TRY_ASSIGN(std::optional<AuditAnchor> anchor, context.db().audit_anchor());
  json::Value broken = json::Value::array();
  std::int64_t checked = 0;
  for (std::string_view line : split_lines(*text)) {
    if (trim(line).empty()) continue;
    ++checked;
    auto seal = json::parse(line);
    const bool shaped = seal && (*seal)["name"].is_string() && (*seal)["seq"].is_int() && (*seal)["hash"].is_string();
    const std::string name = shaped ? (*seal)["name"].as_string() : std::string("line ") + std::to_string(checked);
    const std::int64_t seq = shaped ? (*seal)["seq"].as_int() : 0;
    std::string why;
    if (!shaped) {
      why = "not a seal record";
    } else if (seq > newest) {
      why = "the trail ends at row " + std::to_string(newest) + ", before the sealed row " + std::to_string(seq) +
            ": rows were removed";
    } else if (anchor && seq <= anchor->seq) {
      if (seq == anchor->seq && anchor->hash != (*seal)["hash"].as_string()) why = "the archived row it sealed was altered";
    } else {
      AuditQuery row;
      row.after_seq = seq - 1;
      row.ascending = true;
      row.limit = 1;
      CT_TRY_ASSIGN(std::vector<AuditEntry> found, context.db().read_audit(row));
      if (found.empty() || found.front().seq != seq) why = "the sealed row " + std::to_string(seq) + " is gone";
      else if (found.front().hash != (*seal)["hash"].as_string()) why = "the sealed row " + std::to_string(seq) + " was altered";
      else if (report.first_broken && *report.first_broken <= seq) why = "the chain breaks at or before the sealed row";
      else if (std::none_of(epochs.begin(), epochs.end(), [&](const Epoch& e) { return e.name == name && e.seq == seq; }))
        why = "its seal's own row is gone from the trail";
    }
    if (why.empty()) continue;
    json::Value item = json::Value::object();
    item.set("name", name);
    if (seq > 0) item.set("seq", seq);
    item.set("why", why);
    warnings.push_back("seal " + name + " (.cleo/" + std::string(kSealsFile) + "): " + why);
    broken.push_back(std::move(item));
  }
  json::Value out = json::Value::object();
  out.set("valid", broken.empty());
  out.set("checked", checked);
  if (!broken.empty()) out.set("broken", std::move(broken));
  return out;
}

struct AuditArgs {
  bool archives = false;
  std::optional<std::string> epoch;
};

Result<Reply> audit(Context& context, const AuditArgs& args) {
  TrailState state;
  std::int64_t newest = 0;
  CT_TRY_ASSIGN(ChainReport report, verify_audit_chain(context.db(), std::nullopt, [&](const AuditEntry& row) {
                  state.take(row);
                  newest = row.seq;
                }));
  if (newest == 0 && report.anchor) newest = *report.anchor;
  json::Value data = json::Value::object();
  std::vector<std::string> warnings;
  bool valid = !report.first_broken.has_value();
  if (const auto& name = args.epoch) {
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
  // The store against the trail, and the trail against the seals kept outside the store.
  if (!args.epoch) {
    CT_TRY_ASSIGN(json::Value tasks, verify_state(context, state, warnings));
    valid = valid && tasks["valid"].as_bool();
    data.set("state", std::move(tasks));
  }
  CT_TRY_ASSIGN(json::Value seals, verify_seals(context, report, newest, warnings));
  if (!seals.is_null()) {
    valid = valid && seals["valid"].as_bool();
    data.set("seals", std::move(seals));
  }
  if (args.archives) {
    CT_TRY_ASSIGN(std::optional<AuditAnchor> anchor, context.db().audit_anchor());
    CT_TRY_ASSIGN(json::Value archives, verify_archives(context, anchor, warnings));
    valid = valid && archives["valid"].as_bool();
    data.set("archives", std::move(archives));
  }
  std::string summary = data.contains("epoch") && !data["epoch"]["valid"].as_bool()
                            ? "epoch " + data["epoch"]["name"].as_string() + " does not verify"
                        : report.first_broken
                            ? "the audit trail's hash chain breaks at row " + std::to_string(*report.first_broken)
                        : data.contains("state") && !data["state"]["valid"].as_bool()
                            ? "the stored tasks are not what the audit trail says"
                        : data.contains("seals") && !data["seals"]["valid"].as_bool()
                            ? "the audit trail does not hold what its seals recorded"
                            : "the audit archives do not verify";
  return verdict(valid, std::move(data), std::move(warnings), std::move(summary),
                 "restore the newest backup whose trail verifies: " + call("system.restore", {{"dryRun", true}}));
}

}  // namespace

void register_validate_audit(Registry& registry) {
  const auto args =
      bind(field(&AuditArgs::archives, {.name = "archives", .type = ParamType::Bool, .default_json = "false",
                                        .description = "also verify the files system.gc archived into "
                                                       ".cleo/audit-archive/"}),
           field(&AuditArgs::epoch, {.name = "epoch", .type = ParamType::String, .max = 64,
                                     .description = "verify this sealed epoch (system.epoch.seal): the rows up to it"}));
  registry.add({.domain = "validate", .name = "audit", .gateway = Gateway::Query,
                .summary = "Verify the audit trail's hash chain",
                .params = args.specs(),
                .returns = "{valid, rows, anchor?, firstBroken?{seq, expected, actual}, state?{valid, tasks, "
                           "differences?[{id, field, trail, stored, seq}]}, seals?{valid, checked, broken?[]}, "
                           "archives?{valid, files[]}, epoch?{name, seq, hash, sealedAt, valid}}: each row's SHA-256 "
                           "covers its content and the previous row's hash, so any edit, insertion or deletion shows; "
                           "the stored tasks must read as the trail's last changes say (state), and the trail must "
                           "hold every seal recorded in .cleo/audit-seals.jsonl; after system.gc the live trail starts "
                           "at `anchor`. A break (with epoch: up to the epoch) fails with E_VALIDATION (exit 6), the "
                           "report in error.details",
                .errors = {ErrorCode::Validation, ErrorCode::NotFound},
                .examples = {{R"({})", "check the audit trail"},
                             {R"({"archives":true})", "check the trail and its archived rows"}},
                .idempotent = true, .tier = 2, .handler = args.handler(audit)});
}

}  // namespace ct
