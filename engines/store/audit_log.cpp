// The audit role, written once over the backend's sql::Runner: the audit trail (its hash chain in
// engines/store/audit_chain.h), its compaction, idempotency keys.
#include "engines/store/audit_log.h"

#include <algorithm>
#include <map>

#include "core/json.h"
#include "engines/store/audit_chain.h"
#include "engines/store/sql_query.h"
#include "engines/store/store_rows.h"

namespace ct {
namespace {

using sql::Value;

AuditEntry read_entry(const sql::Cursor& row) { return read_audit_row(row); }

/// The changes in as few statements as there are chunks of kChangesPerInsert (a statement each
/// costs more than a row; the chunk bounds the distinct statements cached), in their order.
constexpr std::size_t kChangesPerInsert = 16;

/// Inserts the changes of `entry` from `first` (at most kChangesPerInsert), their text `text` moved.
[[gnu::noinline]] Result<void> insert_changes(sql::Runner& db, std::int64_t seq, const AuditEntry& entry,
                                              AuditText& text, std::size_t first) {
  const std::size_t last = std::min(entry.changes.size(), first + kChangesPerInsert);
  std::vector<Value> values;
  values.reserve(1 + 5 * (last - first));
  values.emplace_back(seq);
  std::string sql = "INSERT INTO audit_changes(seq, task_id, field, before, after, version) VALUES ";
  for (std::size_t i = first; i < last; ++i) {
    auto& [before, after] = text.changes[i];
    const std::size_t mark = values.size() + 1;  // ?mark .. ?mark+4
    sql += (i == first ? "(?1" : ", (?1");
    for (std::size_t k = 0; k < 5; ++k) sql += ", ?" + std::to_string(mark + k);
    sql += ")";
    values.emplace_back(entry.changes[i].task_id);
    values.emplace_back(entry.changes[i].field);
    values.push_back(before ? Value(std::move(*before)) : Value());
    values.push_back(after ? Value(std::move(*after)) : Value());
    values.push_back(entry.changes[i].version > 0 ? Value(entry.changes[i].version) : Value());
  }
  return db.run(sql, values, "cannot append to the audit trail");
}

}  // namespace

Result<std::int64_t> AuditLog::append_audit(const AuditEntry& entry) {
  auto& db = sql_runner();
  std::int64_t seq = 0;
  auto appended = db.atomically([&]() -> Result<void> {
    // Writers are serialised by the write transaction, so the last row is stable here.
    std::string previous;
    CT_TRY(db.each("SELECT seq, hash FROM audit ORDER BY seq DESC LIMIT 1", {}, "cannot read the audit trail",
                   [&](const sql::Cursor& row) {
                     seq = row.integer(0);
                     previous = row.text(1);
                   }));
    CT_TRY_ASSIGN(AuditLink link, next_link(*this, entry, seq, std::move(previous)));
    seq = link.seq;
    CT_TRY(db.run("INSERT INTO audit(seq, at, session, agent, operation, task_id, params, outcome, reason, hash, "
                  "intent, principal) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
                  sql::values(seq, entry.at, entry.session, entry.agent, entry.operation, entry.task_id,
                              std::move(link.text.params), entry.outcome, entry.reason, std::move(link.hash),
                              link.text.intent ? Value(std::move(*link.text.intent)) : Value(), entry.principal),
                  "cannot append to the audit trail"));
    for (std::size_t first = 0; first < entry.changes.size(); first += kChangesPerInsert)
      CT_TRY(insert_changes(db, seq, entry, link.text, first));
    return {};
  });
  if (!appended) return fail(std::move(appended.error()));
  return seq;
}

Result<std::vector<AuditEntry>> AuditLog::read_audit(const AuditQuery& query) {
  auto& db = sql_runner();
  const sql::Dialect& dialect = db.dialect();
  sql::Args args;
  std::string where;
  sql::Where conditions{where, args};
  if (query.task_id && query.field) {
    const std::string task = args(*query.task_id);
    conditions.add("seq IN (SELECT seq FROM audit_changes WHERE task_id = " + task + " AND field = " +
                   args(*query.field) + ")");
  } else if (query.task_id) {
    const std::string task = args(*query.task_id);
    conditions.add("seq IN (SELECT seq FROM audit_changes WHERE task_id = " + task +
                   " UNION SELECT seq FROM audit WHERE task_id = " + task + ")");
  } else if (query.field) {
    conditions.add("seq IN (SELECT seq FROM audit_changes WHERE field = {})", *query.field);
  }
  if (query.operation) conditions.add("operation = {}", *query.operation);
  if (query.session) conditions.add("session = {}", *query.session);
  if (query.agent) conditions.add("agent = {}", *query.agent);
  if (query.since) conditions.add("at >= {}", std::int64_t{*query.since});
  if (query.after_seq) conditions.add("seq > {}", *query.after_seq);
  if (query.upto_seq) conditions.add("seq <= {}", *query.upto_seq);
  if (query.category) conditions.add(std::string(dialect.intent_category) + " = {}", *query.category);
  if (query.tag) conditions.add(dialect.intent_has_tag, *query.tag);
  if (query.min_confidence)
    conditions.add(std::string(dialect.intent_confidence) + " >= " + args(Value(*query.min_confidence)));
  if (query.max_confidence)
    conditions.add(std::string(dialect.intent_confidence) + " <= " + args(Value(*query.max_confidence)));
  if (query.reason_text)
    conditions.add(std::string(dialect.find_text) + "(lower(reason), lower(" + args(*query.reason_text) + ")) > 0");
  std::string sql = "SELECT " + std::string(kAuditColumns) + " FROM audit" + where +
                    (query.ascending ? " ORDER BY seq" : " ORDER BY seq DESC");
  if (query.limit >= 0 || query.offset > 0) {
    sql += " LIMIT " + args(sql::limit_of(query.limit));
    sql += " OFFSET " + args(std::max<std::int64_t>(0, query.offset));
  }
  CT_TRY_ASSIGN(std::vector<AuditEntry> entries, db.all(sql, args, "cannot read the audit trail", read_entry));
  if (entries.empty()) return entries;

  // The changes of every row read, in one statement (?1: their seqs), in the order written.
  std::vector<std::string> seqs;
  for (const auto& entry : entries) seqs.push_back(std::to_string(entry.seq));
  sql::Args change_args;
  change_args.bind(encode_strings(seqs));
  std::string changes = "SELECT seq, task_id, field, before, after FROM audit_changes WHERE seq IN (SELECT CAST(value "
                        "AS BIGINT) FROM " + sql::fill(dialect.list_items, "?1") + " AS s)";
  if (query.task_id) changes += " AND task_id = " + change_args(*query.task_id);
  if (query.field) changes += " AND field = " + change_args(*query.field);
  changes += " ORDER BY " + std::string(dialect.change_order);
  std::map<std::int64_t, AuditEntry*> by_seq;
  for (auto& entry : entries) by_seq[entry.seq] = &entry;
  CT_TRY(db.each(changes, change_args, "cannot read the audit trail", [&](const sql::Cursor& row) {
    if (auto found = by_seq.find(row.integer(0)); found != by_seq.end())
      found->second->changes.push_back(read_change_row(row, 1));
  }));
  return entries;
}

Result<std::optional<IdempotentCall>> AuditLog::find_idempotent(std::string_view key) {
  const Value args[] = {Value(key)};
  return sql_runner().first("SELECT operation, params, reply, at FROM idempotency WHERE key = ?1", args,
                            "cannot read idempotency keys", [&](const sql::Cursor& row) {
                              return IdempotentCall{std::string(key), std::string(row.text(0)),
                                                    std::string(row.text(1)), std::string(row.text(2)),
                                                    row.integer(3)};
                            });
}

Result<void> AuditLog::remember_idempotent(const IdempotentCall& call, TimeMs forget_before) {
  auto& db = sql_runner();
  return db.atomically([&]() -> Result<void> {
    const Value before[] = {Value(forget_before)};
    CT_TRY(db.run("DELETE FROM idempotency WHERE at < ?1", before, "cannot expire idempotency keys"));
    return db.run("INSERT INTO idempotency(key, operation, params, reply, at) VALUES(?1, ?2, ?3, ?4, ?5) "
                  "ON CONFLICT(key) DO UPDATE SET operation = excluded.operation, params = excluded.params, "
                  "reply = excluded.reply, at = excluded.at",
                  sql::values(call.key, call.operation, call.params, call.reply, call.at),
                  "cannot record the idempotency key");
  });
}

Result<std::optional<AuditAnchor>> AuditLog::audit_anchor() {
  CT_TRY_ASSIGN(std::optional<std::string> text,
                sql_runner().first("SELECT value FROM meta WHERE key = 'audit_anchor'", {}, "cannot read the audit anchor",
                                   [](const sql::Cursor& row) { return std::string(row.text(0)); }));
  if (!text) return std::optional<AuditAnchor>();
  CT_TRY_ASSIGN(AuditAnchor anchor, parse_audit_anchor(*text));
  return std::optional<AuditAnchor>(std::move(anchor));
}

Result<std::int64_t> AuditLog::last_audit_seq_before(TimeMs before) {
  const Value args[] = {Value(before)};
  return sql_runner().integer("SELECT coalesce(max(seq), 0) FROM audit WHERE at < ?1", args,
                              "cannot read the audit trail");
}

Result<std::int64_t> AuditLog::last_audit_seq() {
  return sql_runner().integer("SELECT coalesce(max(seq), 0) FROM audit", {}, "cannot read the audit trail");
}

Result<std::vector<FieldChange>> AuditLog::task_changes_after(std::int64_t seq) {
  auto& db = sql_runner();
  // By the seq index, in the order written (seq, then the backend's order within a row).
  const std::string sql =
      "SELECT task_id, field, CASE WHEN field IN ('parent', 'archived', 'deleted') THEN before END, version "
      "FROM audit_changes WHERE seq > ?1 AND task_id <> '' ORDER BY seq, " +
      std::string(db.dialect().change_order);
  const Value args[] = {Value(seq)};
  return db.all(sql, args, "cannot read the audit trail", [](const sql::Cursor& row) -> Result<FieldChange> {
    FieldChange change;
    change.task_id = std::string(row.text(0));
    change.field = std::string(row.text(1));
    if (!row.is_null(2)) change.before = stored_json(row.text(2));
    change.version = row.is_null(3) ? 0 : row.integer(3);
    return change;
  });
}

Result<std::int64_t> AuditLog::compact_audit(const AuditAnchor& anchor) {
  auto& db = sql_runner();
  std::int64_t removed = 0;
  auto compacted = db.atomically([&]() -> Result<void> {
    const Value seq[] = {Value(anchor.seq)};
    CT_TRY(db.run("DELETE FROM audit_changes WHERE seq <= ?1", seq, "cannot compact the audit trail"));
    CT_TRY(db.run("DELETE FROM audit WHERE seq <= ?1", seq, "cannot compact the audit trail"));
    removed = db.changes();
    std::string value;
    json::Writer writer(value);
    writer.begin_object().key("seq").value(anchor.seq).key("hash").value(anchor.hash);
    writer.key("archive").value(anchor.archive).end_object();
    const Value args[] = {Value(std::move(value))};
    return db.run("INSERT INTO meta(key, value) VALUES('audit_anchor', ?1) "
                  "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                  args, "cannot record the audit anchor");
  });
  if (!compacted) return fail(std::move(compacted.error()));
  return removed;
}

Result<std::int64_t> AuditLog::expire_idempotent(TimeMs before, bool count_only) {
  auto& db = sql_runner();
  const Value args[] = {Value(before)};
  CT_TRY_ASSIGN(std::int64_t count,
                db.integer("SELECT count(*) FROM idempotency WHERE at < ?1", args, "cannot read idempotency keys"));
  if (count_only || count == 0) return count;
  CT_TRY(db.run("DELETE FROM idempotency WHERE at < ?1", args, "cannot expire idempotency keys"));
  return count;
}

}  // namespace ct
