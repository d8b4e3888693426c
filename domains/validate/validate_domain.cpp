// validate domain — integrity checks. So far: the audit trail's hash chain.
#include "domains/context.h"
#include "domains/params.h"
#include "domains/registry.h"
#include "engines/audit_chain.h"

namespace ct {
namespace {

Result<Reply> audit(Context& context, const Params&) {
  CT_TRY_ASSIGN(ChainReport report, verify_audit_chain(context.db()));
  json::Value data = json::Value::object();
  data.set("valid", !report.first_broken.has_value());
  data.set("rows", report.rows);
  if (report.first_broken) {
    json::Value broken = json::Value::object();
    broken.set("seq", *report.first_broken);
    broken.set("expected", report.expected);
    broken.set("actual", report.actual);
    data.set("firstBroken", std::move(broken));
    return Reply{std::move(data),
                 {"the audit trail was altered at or before row " + std::to_string(*report.first_broken) +
                  ": rows from there on cannot be trusted; restore a backup to recover"},
                 {},
                 {}};
  }
  return Reply{std::move(data), {}, {}, {}};
}

}  // namespace

void register_validate_domain(Registry& registry) {
  registry.add({.domain = "validate", .name = "audit", .gateway = Gateway::Query,
                .summary = "Verify the audit trail's hash chain",
                .returns = "{valid, rows, firstBroken?{seq, expected, actual}}: each row's SHA-256 covers its "
                           "content and the previous row's hash, so any edit, insertion or deletion shows",
                .examples = {{R"({})", "check the audit trail"}},
                .idempotent = true, .tier = 2, .handler = audit});
}

}  // namespace ct
