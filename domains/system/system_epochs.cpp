// system domain — system.epoch.seal: a named epoch of the audit trail (issue 35). Sealing checks
// the chain from the previous epoch on and records the hash of the newest row in an audit row of
// its own, so the epoch is part of the chain it seals: validate.audit {epoch} later shows that
// nothing up to it was altered since.
#include <algorithm>

#include "core/atomic_file.h"
#include "core/text.h"
#include "domains/bind.h"
#include "domains/context.h"
#include "domains/registry.h"
#include "domains/system/epochs.h"
#include "engines/store/audit_chain.h"

namespace ct {

Result<std::vector<Epoch>> sealed_epochs(AuditLog& store) {
  AuditQuery query;
  query.operation = "system.epoch.seal";
  query.ascending = true;
  query.limit = -1;
  CT_TRY_ASSIGN(std::vector<AuditEntry> rows, store.read_audit(query));
  std::vector<Epoch> epochs;
  for (const auto& row : rows) {
    if (row.outcome != "ok") continue;
    for (const auto& change : row.changes) {
      const json::Value& sealed = change.after;
      if (change.field != "epoch" || !sealed["name"].is_string() || !sealed["seq"].is_int() || !sealed["hash"].is_string())
        continue;
      epochs.push_back({sealed["name"].as_string(), sealed["seq"].as_int(), sealed["hash"].as_string(),
                        sealed["summary"].is_string() ? sealed["summary"].as_string() : "", row.seq, row.at, row.agent});
    }
  }
  return epochs;
}

json::Value epoch_json(const Epoch& epoch) {
  json::Value out = json::Value::object();
  out.set("name", epoch.name);
  out.set("seq", epoch.seq);
  out.set("hash", epoch.hash);
  if (!epoch.summary.empty()) out.set("summary", epoch.summary);
  out.set("sealedAt", format_iso8601(epoch.sealed_at));
  if (!epoch.agent.empty()) out.set("agent", epoch.agent);
  return out;
}

namespace {

struct SealArgs {
  std::string name;
  std::optional<std::string> summary;
};

Result<Reply> seal(Context& context, const SealArgs& args) {
  const std::string& name = args.name;
  CT_TRY_ASSIGN(std::vector<Epoch> epochs, sealed_epochs(context.db()));
  if (auto same = std::find_if(epochs.begin(), epochs.end(), [&](const Epoch& e) { return e.name == name; });
      same != epochs.end())
    // Sealed once: the epoch as it was sealed, as a note (seal later work under a new name).
    return Reply::noted(epoch_json(*same), ErrorCode::AlreadyExists, {"epoch " + name + " was sealed at row " + std::to_string(same->seq) +
                  "; an epoch is sealed once (validate.audit {epoch} verifies it; seal later work under a new name)"});
  // The newest row: what the epoch seals.
  AuditQuery newest;
  newest.limit = 1;
  CT_TRY_ASSIGN(std::vector<AuditEntry> head, context.db().read_audit(newest));
  if (head.empty())
    return fail(Error(ErrorCode::Validation, "the audit trail holds no row yet: there is nothing to seal")
                    .with_fix("seal an epoch once the project has recorded some work"));
  // The chain since the previous epoch (which was checked when it was sealed) must hold.
  std::optional<AuditAnchor> from;
  if (!epochs.empty()) from = AuditAnchor{epochs.back().row, "", ""};
  if (from) {
    AuditQuery row;
    row.after_seq = from->seq - 1;
    row.ascending = true;
    row.limit = 1;
    CT_TRY_ASSIGN(std::vector<AuditEntry> found, context.db().read_audit(row));
    if (found.empty() || found.front().seq != from->seq) from.reset();
    else from->hash = found.front().hash;
  }
  CT_TRY_ASSIGN(ChainReport report, verify_audit_chain(context.db(), from));
  if (report.first_broken)
    return fail(Error(ErrorCode::Validation, "the audit trail was altered at or before row " +
                                                 std::to_string(*report.first_broken) + ": an altered trail is not sealed")
                    .with_fix(call("validate.audit") + " shows the break; restore a backup whose trail verifies")
                    .with_detail("firstBroken", *report.first_broken));
  json::Value sealed = json::Value::object();
  sealed.set("name", name);
  sealed.set("seq", head.front().seq);
  sealed.set("hash", head.front().hash);
  if (args.summary) sealed.set("summary", *args.summary);
  context.record({"", "epoch", json::Value(), sealed});
  // A record outside the store: whoever can rewrite the store cannot rewrite what the team
  // committed, or the commit message the trailer went into.
  json::Value line = json::Value::object();
  line.set("name", name);
  line.set("seq", head.front().seq);
  line.set("hash", head.front().hash);
  line.set("sealedAt", format_iso8601(context.now()));
  CT_TRY(append_line(context.project->cleo_dir() / kSealsFile, line.dump()));
  json::Value data = sealed;
  data.set("checked", report.rows);
  data.set("record", ".cleo/" + std::string(kSealsFile));
  data.set("trailer", "CLEO-Audit-Seal: " + name + " " + std::to_string(head.front().seq) + " " + head.front().hash);
  return Reply::warned(std::move(data), {"commit .cleo/" + std::string(kSealsFile) + " (or put the trailer in a commit message): validate.audit "
                "checks the trail against it"});
}

}  // namespace

void register_system_epochs(Registry& registry) {
  const auto args =
      bind(field(&SealArgs::name, {.name = "name", .type = ParamType::String, .required = true,
                                   .pattern = "[a-z0-9][a-z0-9._-]{0,63}",
                                   .description = "The epoch's name, e.g. release-2.1", .positional = true}),
           field(&SealArgs::summary, {.name = "summary", .type = ParamType::String, .max = 2000,
                                      .description = "What the epoch holds"}));
  registry.add({.domain = "system", .name = "epoch.seal", .gateway = Gateway::Mutate,
                .summary = "Seal the audit trail as a named epoch",
                .params = args.specs(),
                .returns = "{name, seq, hash, summary?, checked (rows verified since the previous epoch), record, trailer}: "
                           "the hash of the newest row, kept in the seal's own audit row and appended to "
                           ".cleo/audit-seals.jsonl (commit it; trailer is the line for a commit message); validate.audit "
                           "checks both. "
                           "A name sealed before: that epoch, with the note E_ALREADY_EXISTS; E_VALIDATION when the "
                           "chain is broken",
                .errors = {ErrorCode::Validation},
                .examples = {{R"({"name":"release-2.1","summary":"everything up to the 2.1 release"})",
                              "seal the trail at a release"}},
                .tier = 2, .handler = args.handler(seal)});
}

}  // namespace ct
