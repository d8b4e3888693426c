#include "engines/audit_chain.h"

#include "core/json.h"
#include "core/sha256.h"

namespace ct {

std::string audit_hash(std::string_view previous_hash, const AuditEntry& entry) {
  // The content as stored: JSON texts of params and before/after values, changes in order.
  std::string content(previous_hash);
  content += '\n';
  json::Writer w(content);
  w.begin_array();
  w.value(entry.seq).value(static_cast<std::int64_t>(entry.at)).value(entry.session).value(entry.agent);
  w.value(entry.operation).value(entry.task_id).value(entry.params.dump()).value(entry.outcome).value(entry.reason);
  w.begin_array();
  for (const auto& change : entry.changes) {
    w.begin_array().value(change.task_id).value(change.field);
    if (change.before.is_null()) w.null(); else w.value(change.before.dump());
    if (change.after.is_null()) w.null(); else w.value(change.after.dump());
    w.end_array();
  }
  w.end_array().end_array();
  return sha256_hex(content);
}

Result<ChainReport> verify_audit_chain(Store& store) {
  ChainReport report;
  std::string previous;
  AuditQuery query;
  query.ascending = true;
  query.limit = 1000;
  while (true) {
    CT_TRY_ASSIGN(std::vector<AuditEntry> batch, store.read_audit(query));
    for (const auto& entry : batch) {
      ++report.rows;
      std::string expected = audit_hash(previous, entry);
      if (expected != entry.hash && !report.first_broken) {
        report.first_broken = entry.seq;
        report.expected = expected;
        report.actual = entry.hash;
      }
      previous = entry.hash;
    }
    if (batch.size() < static_cast<std::size_t>(query.limit)) break;
    query.after_seq = batch.back().seq;
  }
  return report;
}

}  // namespace ct
