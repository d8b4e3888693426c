// The router: checks the gateway, finds the operation (with did-you-mean), validates params,
// runs the handler in a transaction (read: deferred; mutate: immediate, audited) and produces the
// lean envelope of docs/architecture.md §3.2. Transports (cli/, gateway/) call dispatch() and write
// the envelope with to_json() and their own AdviceWriter (domains/envelope.h).
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
#include "domains/pipeline.h"
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

/// The remedy of an error code, for a failure whose raiser gave no fix: a concrete call where there
/// is one (with the call's task id when it had one, else T001), a call the edges write their own way.
/// The router gives it to every failure without a fix.
Advice fallback_fix(ErrorCode code, const OperationSpec& spec, const std::string& id);

/// How a transport's routers serve every call (the caller travels in each Request).
struct RouterOptions {
  bool read_only = false;  // mutate → E_MUTATION_DISABLED, unless a dry_run param is set
  /// The caller is a person at the command line (`ct`), who may name files outside the project and
  /// change the config keys only people set (SetBy::People). Agents — MCP over stdio or HTTP, the
  /// dashboard — are not: they reach outside only where security.allowOutsideProject is set, and
  /// never change those keys.
  bool outside_project_allowed = false;
  /// The caller is a person who reviews what agents propose (memory.verify of a kind that needs a
  /// person, memory.verifyKinds): `ct` in a terminal and the dashboard; never an MCP client.
  bool person_reviews = false;
  /// The home directory of user-scope files; none: $HOME at the time of each call.
  std::optional<std::filesystem::path> home;
  /// Long-running servers: check the store's integrity once per process on first open.
  bool check_integrity_on_open = false;
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
  /// calls it on a timer with a router of its own and compares.
  Result<std::int64_t> change_stamp();

 private:
  // The stages of a call (domains/pipeline.h) that need the router's state.
  /// With `approval`: a person approving a proposal runs its call (domains/approval.h). `call_warnings`
  /// gets what the reply says about the call itself (pipeline::Call::warnings), for a failure too.
  Result<Envelope> run(const OperationSpec& spec, const Request& request, const approval::Approval* approval = nullptr,
                       std::vector<std::string>* call_warnings = nullptr);
  /// Another operation's call inside the running call's transaction (Context::run_inside): an op of
  /// a batch or plan, a memory entry tasks.import brings through memory.observe.
  Result<Reply> run_inside(Context& context, const OperationSpec& spec, const json::Value& params, AuditEntry& audit,
                           const Reply* external, const Caller& caller, bool approved);
  /// A call approval.required keeps for a person: previewed, stored, answered with E_PROPOSED.
  Result<Envelope> propose(const OperationSpec& spec, const pipeline::Call& call, const Request& request,
                           Context& context, const std::string& rule);
  /// A bulk call (pipeline::Call::ids): the handler once per task inside `tx`.
  Result<Envelope> run_each(const pipeline::Call& bulk, Context& context, pipeline::Transaction& tx,
                            std::vector<std::string> warnings, std::int64_t reply_budget);
  Context new_context(const Caller& caller);
  Result<void> check_capability(const OperationSpec& spec, Context& context);
  Result<void> attach_store(const pipeline::Call& call, Context& context, std::optional<Config>& damaged_config);
  Result<void> without_store(const pipeline::Call& call, Context& context, Error why,
                             std::optional<Config>& damaged_config);
  Result<pipeline::Transaction> begin(const pipeline::Call& call, Context& context,
                                      std::optional<Config>& damaged_config);
  Result<Reply> guarded(const Handler& handler, const pipeline::Call& call, Context& context);
  Result<std::optional<Envelope>> replayed(const pipeline::Call& call, Context& context);
  void audit_failure(const pipeline::Call& call, Context& context, AuditEntry& audit, const Error& error);
  Result<void> audit_recovery(const pipeline::Call& call, Context& context, AuditEntry& audit, const Envelope& ok);

  /// A read in a session the caller named renews its claim's lease, at most once a renewal step
  /// (engines/rules/claim_lease.h), in a write of its own after the read's transaction. A renewal
  /// that fails changes nothing of the read's reply: the next call tries again.
  void renew_lease(Context& context, pipeline::Transaction& tx);
  void remember_renewal(const std::string& session);

  Result<Store*> open_store();
  void close_store();
  void refresh_config();
  void check_integrity_once();

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
