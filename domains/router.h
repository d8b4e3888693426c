// The router strings the stages of a call together (docs/architecture.md §2): route, validate,
// store, capability, the approval gate, external step, transaction, idempotency, session, handler,
// shape, audit, commit — Router::run reads as that list. The stages that need no state are
// pipeline.h's; the approval gate and what it does with a call it stops are approval_gate.h's; the
// envelope and its codec, envelope.h; the remedies of errors, remedies.h; the store a router
// opens comes from its Workspace. Transports (cli/, gateway/) call dispatch() and write the
// envelope with to_json() and their own AdviceWriter.
#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/clock.h"
#include "core/error.h"
#include "core/json.h"
#include "domains/context.h"
#include "domains/envelope.h"
#include "domains/nested_runs.h"
#include "domains/pipeline.h"
#include "domains/principal.h"
#include "domains/registry.h"
#include "domains/workspace.h"
#include "engines/project/config.h"
#include "engines/project/project.h"
#include "engines/store/store.h"

namespace ct {
namespace approval {
struct Approval;
}

/// Who makes a call and the session it runs in. Each request carries its caller; the transport
/// (the stdio loop, an HTTP session, the CLI's terminal binding) keeps what a reply rebinds.
struct Caller {
  /// Who calls (domains/principal.h): set by the transport, never from what the call says.
  Principal principal;
  /// Where it works (domains/principal.h): set by the transport, never from what the call says.
  Place place;
  std::string session;  // the session the call runs in ("" = none)
  std::string agent;    // recorded in the audit trail when the session names none (an MCP client's name)
  /// `agent` is recorded even on writes in a session that names another agent: a person acting
  /// on an agent's session (the dashboard's write mode) stays who they are.
  bool agent_is_fixed = false;
  /// CLI: with no session, adopt the project's only active session (if exactly one)…
  bool adopt_only_active_session = false;
  /// …that is not one of these (sessions bound to other terminals).
  std::vector<std::string> never_adopt;
};

struct Request {
  Gateway gateway = Gateway::Query;
  std::string domain;
  std::string operation;
  json::Value params;  // an object, or null for none
  Caller caller = {};
};

/// How a transport's routers serve every call (the caller travels in each Request).
struct RouterOptions {
  bool read_only = false;  // mutate → E_MUTATION_DISABLED, unless a dry_run param is set
  /// The home directory of user-scope files; none: $HOME at the time of each call.
  std::optional<std::filesystem::path> home;
  /// Long-running servers: check the store's integrity once per process on first open.
  bool check_integrity_on_open = false;
  /// A `ct` command: one call, then the process exits (StoreOptions::short_lived).
  bool short_lived = false;
  /// Cut list replies to output.maxReplyBytes (an agent's context budget). The CLI turns it off:
  /// people asked for the rows they asked for.
  bool budget_replies = true;
  /// Leave out of a change's reply what the call sent (projection.h: drop_echoes). The CLI's text
  /// view keeps it: a person reads the outcome whole.
  bool drop_echoes = true;
  /// Asked before any operation that declares `needs` runs (capability/ implements it; it must
  /// outlive the router). Null: needs are not checked (unit tests of native operations).
  CapabilityResolver* capabilities = nullptr;
};

/// A router serves calls on one store connection, opened lazily on the first call that needs the
/// project (found through the workspace it is given). It keeps nothing of its callers between
/// calls, so a pooled router serves any connection — only when it last renewed a session's lease,
/// which saves writes and changes no answer. Not thread-safe; give each worker its own.
class Router {
 public:
  Router(const Registry& registry, std::shared_ptr<Workspace> workspace, RouterOptions options,
         std::unique_ptr<Clock> clock);
  ~Router();
  Router(const Router&) = delete;
  Router& operator=(const Router&) = delete;

  Envelope dispatch(const Request& request);
  const Registry& operations() const { return registry_; }
  /// The store's change signal (Store::change_stamp), opening the store when needed: a watcher
  /// reads it with a router of its own and compares…
  Result<std::int64_t> change_stamp();
  /// …after waiting for a commit (Store::wait_for_change: PostgreSQL's notifications) where the
  /// store can be told of one, else on a clock of its own (Waited::Never at once).
  Result<Waited> wait_for_change(std::chrono::milliseconds timeout, int interrupt);

 private:
  class Nested;  // the NestedRuns a handler that nests is handed (router.cpp)

  /// The stages of a call from validate to commit (docs/architecture.md §2), in order; route is
  /// dispatch()'s. With `approval`: a person approving a proposal runs its call (approval_gate.h).
  /// `call_warnings` gets what the reply says about the call itself (pipeline::Call::warnings),
  /// for a failure too.
  Result<Envelope> run(const OperationSpec& spec, const Request& request, const approval::Approval* approval = nullptr,
                       std::vector<std::string>* call_warnings = nullptr);

  // The stages that need the router's state (pipeline.h holds the others).
  Context new_context(const Caller& caller, const pipeline::Call& call);
  Result<void> attach_store(const pipeline::Call& call, Context& context, std::optional<Config>& damaged_config);
  Result<void> without_store(const pipeline::Call& call, Context& context, Error why,
                             std::optional<Config>& damaged_config);
  Result<void> check_capability(const OperationSpec& spec, Context& context);
  /// The spec's external step, before the transaction (once per task of a bulk call).
  Result<void> run_external(const pipeline::Call& call, Context& context, Nested& nested);
  /// The call's transaction; none when the call runs without the store.
  Result<pipeline::Transaction> begin(const pipeline::Call& call, Context& context,
                                      std::optional<Config>& damaged_config);
  Result<std::optional<Envelope>> replayed(const pipeline::Call& call, Context& context);
  /// The handler and the shape of its reply; a failure rolls back and is audited.
  Result<Envelope> handle(const pipeline::Call& call, Context& context, pipeline::Transaction& tx, AuditEntry& audit,
                          std::vector<std::string> warnings, Nested& nested);
  /// A bulk call (pipeline::Call::ids): the handler once per task inside `tx`, each audited.
  Result<Envelope> run_each(const pipeline::Call& bulk, Context& context, pipeline::Transaction& tx,
                            std::vector<std::string> warnings, Nested& nested);
  /// A call that ran without the store: a recovery is audited in the store it leaves behind.
  Envelope recovered(const pipeline::Call& call, Context& context, AuditEntry& audit, Envelope ok);
  Result<void> append_audit(const pipeline::Call& call, Context& context, AuditEntry& audit,
                            const approval::Approval* approval, const Envelope& ok);
  /// The decided proposal and the remembered reply, then the commit; what it leaves the router.
  Result<void> commit(const pipeline::Call& call, Context& context, pipeline::Transaction& tx,
                      const approval::Approval* approval, const Envelope& ok);
  void audit_failure(const pipeline::Call& call, Context& context, AuditEntry& audit, const Error& error);
  /// audit_failure() for a refusal of who the caller is, met before the handler ran.
  void audit_refusal(const pipeline::Call& call, Context& context, AuditEntry& audit, const Error& error);
  /// _meta when the caller asked (meta: true).
  json::Value meta(const OperationSpec& spec, double elapsed_ms) const;

  // Nested runs (domains/nested_runs.h).
  Result<Reply> run_inside(Context& context, const OperationSpec& spec, const json::Value& params, AuditEntry& audit,
                           const Reply* external, Nested& nested);
  Result<Reply> run_approved(const Proposal& proposal, const std::string& approver, const std::string& decision,
                             const Caller& caller);

  /// A read in a session the caller named renews its claim's lease, at most once a renewal step
  /// (engines/rules/claim_lease.h), in a write of its own after the read's transaction. A renewal
  /// that fails changes nothing of the read's reply: the next call tries again.
  void renew_lease(Context& context, pipeline::Transaction& tx);
  void remember_renewal(const std::string& session);

  /// The store the workspace opens (Workspace::open_store), kept until its config names another.
  Result<Store*> open_store();
  void close_store();
  void refresh_config();

  const Registry& registry_;
  std::shared_ptr<Workspace> workspace_;
  RouterOptions options_;
  std::unique_ptr<Clock> clock_;
  // Of the open store: the project and config it was opened with (the config as last refreshed).
  std::optional<Project> project_;
  std::shared_ptr<const Config> config_;
  std::string store_location_;  // where the open store is (StoreBackend::location())
  double lock_wait_ms_ = 0;     // of the call being dispatched: its waits for the write lock (begin)
  std::unique_ptr<Store> store_;
  /// When this router last renewed (or saw renewed) each session's lease, on the steady clock.
  std::map<std::string, std::chrono::steady_clock::time_point, std::less<>> renewed_;
};

}  // namespace ct
