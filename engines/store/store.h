// The storage seam. Business rules (engines/rules/) talk to its roles only — TaskStore,
// SessionStore, AuditLog, ComplianceStore, ReleaseStore, ResearchStore, LifecycleStore, MemoryStore,
// TrustStore, MessageStore, TrackerStore and StoreMaintenance, each in its own header with the records it stores — so that a server
// database can take over from the embedded SQLite store for teams on many machines. SQLite stays
// real in tests (a temp file); these interfaces are not for mocking.
//
// Contract for every implementation:
//  - All reads and writes happen inside begin()/commit(); begin(Write) takes the write lock at once
//    (SQLite: BEGIN IMMEDIATE) and waits up to the busy timeout, then fails with E_LOCK_TIMEOUT.
//  - Failures are values: E_FILE_ERROR for I/O and corruption (with a fix), E_LOCK_TIMEOUT for
//    contention, E_INTERNAL for bugs. No exceptions escape.
//  - A task's dependency list, labels, notes and relations are stored with it; insert_task and
//    update_task write the whole record and keep the full-text index in sync in the same
//    transaction.
#pragma once

#include <chrono>
#include <cstdint>

#include "core/error.h"
#include "engines/store/audit_log.h"
#include "engines/store/catalogue_store.h"
#include "engines/store/compliance_store.h"
#include "engines/store/lifecycle_store.h"
#include "engines/store/memory_store.h"
#include "engines/store/message_store.h"
#include "engines/store/release_store.h"
#include "engines/store/research_store.h"
#include "engines/store/session_store.h"
#include "engines/store/store_maintenance.h"
#include "engines/store/task_store.h"
#include "engines/store/tracker_store.h"
#include "engines/store/trust_store.h"

namespace ct {

enum class TxKind { Read, Write };

/// What Store::wait_for_change() saw: a commit, nothing (the time ran out or it was interrupted),
/// or it cannot wait.
enum class Waited { Changed, Quiet, Never };

/// The whole store: every role, and the transactions they all run in. Backends implement this;
/// business rules take only the roles they use (engines/store/store_roles.h). TaskStore comes
/// first, so its calls (the hot ones) need no adjustment of `this`.
class Store : public TaskStore,
              public SessionStore,
              public AuditLog,
              public ComplianceStore,
              public ReleaseStore,
              public ResearchStore,
              public LifecycleStore,
              public MemoryStore,
              public TrustStore,
              public MessageStore,
              public CatalogueStore,
              public TrackerStore,
              public StoreMaintenance {
 public:
  virtual ~Store() = default;

  /// Opens a transaction; a write one takes the writers' lock, waiting at most the busy timeout
  /// for it: SQLite in begin(), PostgreSQL with the transaction's first statement (sent in one round
  /// trip with it), whose E_LOCK_TIMEOUT then fails every statement after it and the commit.
  [[nodiscard]] virtual Result<void> begin(TxKind kind) = 0;
  /// How long this store has waited for the writers' lock after begin() returned, in all (ms): the
  /// round trips that took it with a first statement (PostgreSQL). A caller times begin() itself.
  virtual double lock_waited_ms() const { return 0; }
  [[nodiscard]] virtual Result<void> commit() = 0;
  virtual void rollback() = 0;  // never fails; a no-op outside a transaction
  virtual bool in_transaction() const = 0;
  /// Inside the open transaction: marks a point to come back to (`name` a plain word)…
  [[nodiscard]] virtual Result<void> savepoint(std::string_view name) = 0;
  /// …comes back to it, undoing what was written since, and forgets it (plans replay their staged
  /// changes, read what the tasks would become and take it all back)…
  [[nodiscard]] virtual Result<void> rollback_to(std::string_view name) = 0;
  /// …or keeps what was written since, and forgets it.
  [[nodiscard]] virtual Result<void> release(std::string_view name) = 0;
  [[nodiscard]] virtual Result<std::int64_t> schema_version() = 0;
  /// A number that differs from the one this connection read before whenever another connection
  /// (of any process) has committed since: the cheap change signal live views watch. Its value
  /// means nothing else; call it outside a transaction.
  [[nodiscard]] virtual Result<std::int64_t> change_stamp() = 0;
  /// Waits until another connection may have committed, at most `timeout`, or until `interrupt` (a
  /// descriptor, -1 for none) is readable. A store that cannot be told of commits answers Never at
  /// once (SQLite: live views read change_stamp() on a clock of their own). Outside a transaction.
  [[nodiscard]] virtual Result<Waited> wait_for_change(std::chrono::milliseconds timeout, int interrupt) {
    (void)timeout;
    (void)interrupt;
    return Waited::Never;
  }
};

}  // namespace ct
