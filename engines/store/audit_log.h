// The audit role of the storage seam (engines/store/store.h): the audit trail, chained by
// SHA-256 (engines/store/audit_chain.h), its compaction, and the idempotency keys of mutations.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/clock.h"
#include "core/error.h"
#include "engines/store/sql_runner.h"
#include "core/json.h"

namespace ct {

/// One row of the audit trail: a mutation and what it changed.
struct FieldChange {
  std::string task_id;
  std::string field;
  json::Value before;  // null when the field was absent (e.g. task created)
  json::Value after;   // null when removed
  /// The version of the task's row the change was made to (its version before it; schema v17), so
  /// that what moved since a point of the trail is read from the changes after it (domains/plan/).
  /// 0 when the change is not one of a task's row (a claim, a session, a plan). Kept beside the row,
  /// not hashed with it: rows written before it keep their hashes.
  std::int64_t version = 0;
};

struct AuditEntry {
  std::int64_t seq = 0;    // assigned by the store
  TimeMs at = 0;
  std::string session;     // empty when no session
  std::string agent;
  std::string operation;   // "tasks.update"
  std::string task_id;     // the subject, when there is one
  json::Value params = json::Value::object();
  std::string outcome;     // "ok", or the error code on failure
  std::string reason;      // why, in the caller's words, when given
  /// What kind of write the caller meant (pipeline: {category, reasoning?, confidence?, tags?});
  /// null when it gave none. Hashed with the row only when present, so rows from before it
  /// existed keep their hashes.
  json::Value intent;
  std::vector<FieldChange> changes;
  /// Who really made the write: the principal the transport established (domains/principal.h),
  /// where `agent` is the name it goes by. Hashed only when present, like `intent`.
  std::string principal;
  std::string hash;        // SHA-256 chaining this row to the previous one (set by the store)
};

struct AuditQuery {
  std::optional<std::string> task_id;    // rows that changed this task
  std::optional<std::string> field;      // with task_id: only changes of this field
  std::optional<std::string> operation;  // rows of this operation ("tasks.add")
  std::optional<std::string> session;    // rows written in this session ("" = outside any)
  std::optional<std::string> agent;      // rows written by this agent
  std::optional<TimeMs> since;           // rows at or after this time
  std::optional<std::int64_t> after_seq; // rows after this sequence number (paging oldest first)
  std::optional<std::int64_t> upto_seq;  // rows up to and including this sequence number
  std::optional<std::string> category;   // rows whose intent has this category
  std::optional<std::string> tag;        // rows whose intent carries this tag
  std::optional<double> min_confidence;  // rows whose intent's confidence is at least this
  std::optional<double> max_confidence;  // … at most this
  std::optional<std::string> reason_text;  // rows whose reason contains this (ASCII letters case-folded)
  bool ascending = false;                // oldest first (verification) instead of newest first
  std::int64_t limit = 50;
  std::int64_t offset = 0;
};

/// A mutation's reply kept under its idempotency key, so a retry returns it instead of running again.
struct IdempotentCall {
  std::string key;
  std::string operation;   // "tasks.add"
  std::string params;      // the validated params as compact JSON
  std::string reply;       // the envelope as compact JSON
  TimeMs at = 0;
};

/// Where the audit trail starts after system.gc compacted it: the rows up to `seq` were written
/// to an archive file and removed, and the first remaining row chains to `hash`.
struct AuditAnchor {
  std::int64_t seq = 0;
  std::string hash;
  std::string archive;                   // file name of the newest archive (.cleo/audit-archive/)
};

/// The audit trail and the idempotency keys: written by every mutation, read by history, undo and
/// verification.
class AuditLog {
 public:
  // Audit trail. append_audit computes the row's chained hash (engines/store/audit_chain.h).
  [[nodiscard]] virtual Result<std::int64_t> append_audit(const AuditEntry& entry);
  [[nodiscard]] Result<std::vector<AuditEntry>> read_audit(const AuditQuery& query);

  // Idempotency keys: remember_idempotent also forgets calls older than `forget_before`.
  [[nodiscard]] Result<std::optional<IdempotentCall>> find_idempotent(std::string_view key);
  [[nodiscard]] Result<void> remember_idempotent(const IdempotentCall& call, TimeMs forget_before);

  // Compaction and expiry (system.gc), inside a transaction.
  /// Where the audit trail starts after compaction; nullopt when it was never compacted.
  [[nodiscard]] Result<std::optional<AuditAnchor>> audit_anchor();
  /// The seq of the newest audit row written before `before` (0 when none).
  [[nodiscard]] Result<std::int64_t> last_audit_seq_before(TimeMs before);
  /// The seq of the newest audit row (0 when the trail holds none): the watermark a plan rests on
  /// (domains/plan/; schema v17).
  [[nodiscard]] Result<std::int64_t> last_audit_seq();
  /// The changes of tasks written after the row `seq`, in the order written: task, field and
  /// version (FieldChange::version); `before` only for `parent`, `archived` and `deleted`, which
  /// say where the task stood (the other values are not read). What moved since a plan's watermark.
  [[nodiscard]] Result<std::vector<FieldChange>> task_changes_after(std::int64_t seq);
  /// Deletes the audit rows up to anchor.seq with their changes and records the anchor, so that
  /// the rest of the chain stays verifiable. Returns the rows deleted. Write transaction.
  [[nodiscard]] Result<std::int64_t> compact_audit(const AuditAnchor& anchor);
  /// Idempotency keys remembered before `before`: counted, and forgotten unless `count_only`.
  [[nodiscard]] Result<std::int64_t> expire_idempotent(TimeMs before, bool count_only);

 protected:
  virtual sql::Runner& sql_runner() = 0;
  ~AuditLog() = default;  // a role of a Store: never owned or deleted through it
};

}  // namespace ct
