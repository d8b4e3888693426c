// The PostgreSQL store, part: the audit trail (hash chain, changes), idempotency keys,
// protocol-check results. Mirrors engines/store/sqlite/sqlite_audit.cpp; the chain's hashes are the same.
#include "engines/store/postgres/pg_store_impl.h"

namespace ct::pg {
namespace {

using sql::compliance_where;

}  // namespace

Result<std::int64_t> PgStore::append_audit(const AuditEntry& entry) {
  // Writers are serialised by the write lock of begin(Write), so the last row is stable here;
  // begin(Write) read it with the lock (audit_tail_).
  std::int64_t seq = 0;
  std::string previous;
  if (audit_tail_) {
    seq = audit_tail_->first;
    previous = audit_tail_->second;
  } else {
    CT_TRY_ASSIGN(Rows rows, query("SELECT seq, hash FROM audit ORDER BY seq DESC LIMIT 1",
                                   "cannot read the audit trail"));
    if (!rows.empty()) {
      seq = rows.integer(0, 0);
      previous = rows.text(0, 1);
    }
  }
  CT_TRY_ASSIGN(AuditLink link, next_link(*this, entry, seq, std::move(previous)));
  seq = link.seq;
  const std::string& hash = link.hash;

  // The row and its changes in one statement; `ord` numbers the changes in the order given.
  std::vector<std::optional<std::string>> tasks, fields, befores, afters;
  for (std::size_t i = 0; i < entry.changes.size(); ++i) {
    tasks.emplace_back(entry.changes[i].task_id);
    fields.emplace_back(entry.changes[i].field);
    befores.push_back(std::move(link.text.changes[i].first));
    afters.push_back(std::move(link.text.changes[i].second));
  }
  Params params;
  params.add(seq).add(static_cast<std::int64_t>(entry.at)).add(entry.session).add(entry.agent);
  params.add(entry.operation).add(entry.task_id).add(link.text.params).add(entry.outcome);
  params.add(entry.reason).add(hash);
  if (!link.text.intent) params.add_null(); else params.add(*link.text.intent);
  params.add(text_array(tasks)).add(text_array(fields)).add(text_array(befores)).add(text_array(afters));
  CT_TRY(query("WITH head AS (INSERT INTO audit(seq, at, session, agent, operation, task_id, params, outcome, "
               "reason, hash, intent) VALUES($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)) "
               "INSERT INTO audit_changes(seq, task_id, field, before, after) "
               "SELECT $1, u.task_id, u.field, u.before, u.after "
               "FROM unnest($12::text[], $13::text[], $14::text[], $15::text[]) WITH ORDINALITY "
               "AS u(task_id, field, before, after, n) ORDER BY u.n",
               params, "cannot append to the audit trail"));
  audit_tail_ = std::make_pair(seq, hash);
  return seq;
}

Result<std::vector<AuditEntry>> PgStore::read_audit(const AuditQuery& audit_query) {
  std::string sql = "SELECT " + std::string(kAuditColumns) + " FROM audit";
  // The changes of every row read, in one statement: $1 is the array of their seqs.
  std::string changes_sql = "SELECT seq, task_id, field, before, after FROM audit_changes WHERE seq = ANY($1::bigint[])";
  std::string where;
  Params params;
  Params change_params;
  change_params.add_null();  // $1, set once the rows are read
  sql::Where conditions{where, params};
  if (audit_query.task_id && audit_query.field) {
    where = " WHERE seq IN (SELECT seq FROM audit_changes WHERE task_id = $1 AND field = $2)";
    params.add(*audit_query.task_id).add(*audit_query.field);
    changes_sql += " AND task_id = $2 AND field = $3";
    change_params.add(*audit_query.task_id).add(*audit_query.field);
  } else if (audit_query.task_id) {
    where = " WHERE seq IN (SELECT seq FROM audit_changes WHERE task_id = $1 UNION SELECT seq FROM audit "
            "WHERE task_id = $1)";
    params.add(*audit_query.task_id);
    changes_sql += " AND task_id = $2";
    change_params.add(*audit_query.task_id);
  } else if (audit_query.field) {
    where = " WHERE seq IN (SELECT seq FROM audit_changes WHERE field = $1)";
    params.add(*audit_query.field);
    changes_sql += " AND field = $2";
    change_params.add(*audit_query.field);
  }
  // Further filters are ANDed; their placeholders follow the ones above.
  if (audit_query.operation) conditions.add("operation = {}", *audit_query.operation);
  if (audit_query.session) conditions.add("session = {}", *audit_query.session);
  if (audit_query.agent) conditions.add("agent = {}", *audit_query.agent);
  if (audit_query.since) conditions.add("at >= {}", static_cast<std::int64_t>(*audit_query.since));
  if (audit_query.after_seq) conditions.add("seq > {}", *audit_query.after_seq);
  if (audit_query.upto_seq) conditions.add("seq <= {}", *audit_query.upto_seq);
  if (audit_query.category) conditions.add("intent::jsonb->>'category' = {}", *audit_query.category);
  if (audit_query.tag) conditions.add("jsonb_exists(intent::jsonb->'tags', {})", *audit_query.tag);
  // Confidences are bound as text (sql::Args binds text and integers) and read as numbers here.
  if (audit_query.min_confidence)
    conditions.add("(intent::jsonb->>'confidence')::float8 >= {}::float8", json::Value(*audit_query.min_confidence).dump());
  if (audit_query.max_confidence)
    conditions.add("(intent::jsonb->>'confidence')::float8 <= {}::float8", json::Value(*audit_query.max_confidence).dump());
  if (audit_query.reason_text) conditions.add("strpos(lower(reason), lower({})) > 0", *audit_query.reason_text);
  sql += where;
  sql += audit_query.ascending ? " ORDER BY seq" : " ORDER BY seq DESC";
  if (audit_query.limit >= 0 || audit_query.offset > 0) {
    sql += " LIMIT " + params.next();
    params.add(limit_value(audit_query.limit));
    sql += " OFFSET " + params.next();
    params.add(std::max<std::int64_t>(0, audit_query.offset));
  }
  changes_sql += " ORDER BY ord";

  CT_TRY_ASSIGN(Rows rows, query(sql, params, "cannot read the audit trail"));
  std::vector<AuditEntry> entries;
  entries.reserve(static_cast<std::size_t>(rows.size()));
  std::string seqs = "{";
  for (int i = 0; i < rows.size(); ++i) {
    AuditEntry entry = read_audit_row(rows.row(i));
    seqs += (i > 0 ? "," : "") + std::to_string(entry.seq);
    entries.push_back(std::move(entry));
  }
  if (entries.empty()) return entries;
  seqs += '}';

  Params bound;
  bound.add(seqs);
  for (std::size_t i = 1; i < change_params.values().size(); ++i) bound.add(*change_params.values()[i]);
  CT_TRY_ASSIGN(Rows changes, query(changes_sql, bound, "cannot read the audit trail"));
  // Rows are few per entry: find each entry's by seq.
  std::map<std::int64_t, AuditEntry*> by_seq;
  for (auto& entry : entries) by_seq[entry.seq] = &entry;
  for (int i = 0; i < changes.size(); ++i) {
    auto found = by_seq.find(changes.integer(i, 0));
    if (found == by_seq.end()) continue;
    found->second->changes.push_back(read_change_row(changes.row(i), 1));
  }
  return entries;
}

Result<std::optional<IdempotentCall>> PgStore::find_idempotent(std::string_view key) {
  CT_TRY_ASSIGN(Rows rows, query("SELECT operation, params, reply, at FROM idempotency WHERE key = $1",
                                 Params().add(key), "cannot read idempotency keys"));
  if (rows.empty()) return std::optional<IdempotentCall>();
  return std::optional<IdempotentCall>(IdempotentCall{std::string(key), std::string(rows.text(0, 0)),
                                                      std::string(rows.text(0, 1)), std::string(rows.text(0, 2)),
                                                      rows.integer(0, 3)});
}

Result<void> PgStore::remember_idempotent(const IdempotentCall& call, TimeMs forget_before) {
  // One statement: the expiry leaves this key's row to the upsert (a statement changes a row once).
  Params params;
  params.add(call.key).add(call.operation).add(call.params).add(call.reply).add(static_cast<std::int64_t>(call.at));
  params.add(static_cast<std::int64_t>(forget_before));
  CT_TRY(query("WITH expired AS (DELETE FROM idempotency WHERE at < $6 AND key <> $1) "
               "INSERT INTO idempotency(key, operation, params, reply, at) VALUES($1, $2, $3, $4, $5) "
               "ON CONFLICT(key) DO UPDATE SET operation = excluded.operation, params = excluded.params, "
               "reply = excluded.reply, at = excluded.at",
               params, "cannot record the idempotency key"));
  return {};
}

Result<std::int64_t> PgStore::insert_compliance(const ComplianceRecord& record) {
  // Ids as SQLite's rowid gives them: one past the largest (writers are serialised).
  Params params;
  params.add(static_cast<std::int64_t>(record.at)).add(record.task_id).add(record.check);
  params.add(std::int64_t{record.passed ? 1 : 0}).add(record.score).add(record.details);
  params.add(record.session).add(record.agent);
  CT_TRY_ASSIGN(Rows rows,
                query("INSERT INTO compliance(id, at, task_id, check_name, passed, score, details, session, agent) "
                      "VALUES((SELECT coalesce(max(id), 0) + 1 FROM compliance), $1, $2, $3, $4, $5, $6, $7, $8) "
                      "RETURNING id",
                      params, "cannot record the compliance result"));
  if (rows.empty()) return fail(ErrorCode::Internal, "INSERT … RETURNING gave no row");
  return rows.integer(0, 0);
}

Result<std::vector<ComplianceSummary>> PgStore::compliance_summary(const ComplianceQuery& compliance_query) {
  Params params;
  std::string where = compliance_where(compliance_query, false, params);
  const auto [keys, by] = compliance_grouping(compliance_query.group);
  // The group's latest result is the row of its largest id (SQLite's bare columns beside max()).
  // avg over doubles, as SQLite averages.
  std::string sql = std::string("SELECT ") + keys + ", count(*), sum(c.passed), avg(c.score::double precision), " +
                    "(array_agg(c.at ORDER BY c.id DESC))[1], (array_agg(c.passed ORDER BY c.id DESC))[1] " +
                    "FROM compliance c" + where + " GROUP BY " + by + " ORDER BY " + by;
  CT_TRY_ASSIGN(Rows rows, query(sql, params, "cannot summarise compliance results"));
  std::vector<ComplianceSummary> out;
  out.reserve(static_cast<std::size_t>(rows.size()));
  for (int i = 0; i < rows.size(); ++i) out.push_back(read_compliance_summary_row(rows.row(i)));
  return out;
}

Result<std::vector<ComplianceRecord>> PgStore::list_compliance(const ComplianceQuery& compliance_query) {
  Params params;
  std::string sql = "SELECT " + std::string(kComplianceColumns) + " FROM compliance c" +
                    compliance_where(compliance_query, true, params) + " ORDER BY c.id DESC";
  sql += " LIMIT " + params.next();
  params.add(limit_value(compliance_query.limit));
  CT_TRY_ASSIGN(Rows rows, query(sql, params, "cannot read compliance results"));
  std::vector<ComplianceRecord> out;
  out.reserve(static_cast<std::size_t>(rows.size()));
  for (int i = 0; i < rows.size(); ++i) out.push_back(read_compliance_row(rows.row(i)));
  return out;
}

}  // namespace ct::pg
