#include "domains/router.h"

#include <algorithm>
#include <chrono>
#include <utility>

#include "core/cancel.h"
#include "core/json_parse.h"
#include "core/version.h"
#include "domains/approval.h"
#include "domains/approval_gate.h"
#include "domains/metrics.h"
#include "domains/original_names.h"
#include "domains/remedies.h"
#include "engines/rules/claim_lease.h"
#include "engines/rules/session_engine.h"

namespace ct {
namespace {

/// A repeat of a keyed mutation within this window returns the first reply.
constexpr TimeMs kIdempotencyWindowMs = 24LL * 3600 * 1000;

/// A call's shaped reply as the reply of the call that ran it (an op of a batch, an approved
/// proposal): its warnings as they were, those that suggest calls among its advice_warnings.
Reply reply_of(Envelope shaped) {
  Reply reply{std::move(shaped.data), {}, {}, shaped.note};
  for (auto& warning : shaped.warnings) {
    if (warning.has_calls()) reply.advice_warnings.push_back(std::move(warning));
    else reply.warnings.push_back(warning.plain_text());
  }
  return reply;
}

bool worth_auditing_failure(ErrorCode code) {
  // Infrastructure failures cannot be written anyway (and would only add load to a busy store).
  return code != ErrorCode::LockTimeout && code != ErrorCode::FileError && code != ErrorCode::Internal &&
         code != ErrorCode::NotInitialized && code != ErrorCode::StoreUnavailable;
}

}  // namespace

/// The runs a call's handler that nests is handed (domains/nested_runs.h): calls of other
/// operations as the call's caller, an approved proposal's run telling the ops inside it so.
class Router::Nested final : public NestedRuns {
 public:
  Nested(Router& router, const Caller& caller, bool approved) : router_(router), caller_(caller), approved_(approved) {}
  Result<Reply> run_inside(Context& context, const OperationSpec& spec, const json::Value& params, AuditEntry& audit,
                           const Reply* external) override {
    return router_.run_inside(context, spec, params, audit, external, *this);
  }
  Result<Reply> run_approved(const Proposal& proposal, const std::string& approver,
                             const std::string& decision) override {
    return router_.run_approved(proposal, approver, decision, caller_);
  }
  const Caller& caller() const { return caller_; }
  bool approved() const { return approved_; }

 private:
  Router& router_;
  const Caller& caller_;
  bool approved_;
};

Router::Router(const Registry& registry, std::shared_ptr<Workspace> workspace, RouterOptions options,
               std::unique_ptr<Clock> clock)
    : registry_(registry), workspace_(std::move(workspace)), options_(std::move(options)), clock_(std::move(clock)) {}

Router::~Router() = default;

Envelope Router::dispatch(const Request& request) {
  auto started = std::chrono::steady_clock::now();
  lock_wait_ms_ = 0;
  auto routed = pipeline::route(registry_, request);
  if (!routed) return failure(std::move(routed.error()));
  const OperationSpec& spec = **routed;
  std::vector<std::string> call_warnings;
  // The waits for the lock a store has after begin() (PostgreSQL's, with a write's first statement).
  const Store* counted = store_.get();
  const double waited_before = counted ? counted->lock_waited_ms() : 0;
  auto ran = run(spec, request, nullptr, &call_warnings);
  if (store_) lock_wait_ms_ += store_->lock_waited_ms() - (store_.get() == counted ? waited_before : 0);
  Envelope envelope = ran ? std::move(*ran) : failure(std::move(ran.error()));
  // What the call itself should learn (the original CLEO's param names) holds on a failure too.
  if (!ran) envelope.warnings.assign(call_warnings.begin(), call_warnings.end());
  // Named by the original CLEO's name: the reply says ours, success or not (last, so that a note's
  // own explanation stays first).
  if (spec.domain != request.domain || spec.name != request.operation)
    envelope.warnings.push_back(original_names::operation_warning(request.domain + "." + request.operation, spec));

  // Every error carries a fix: where the code that raised it gave none, the code's own remedy.
  if (!envelope.success && envelope.error && envelope.error->fix.empty()) {
    const json::Value& id = request.params["id"];
    envelope.error->fix = fallback_fix(envelope.error->code, spec, id.is_string() ? id.as_string() : "");
  }
  auto elapsed = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started);
  CallMetrics::global().record(spec.full_name(), elapsed.count(), !envelope.success);
  envelope.timing = {.total_ms = elapsed.count(), .lock_wait_ms = lock_wait_ms_};
  if (request.params["meta"] == json::Value(true)) envelope.meta = meta(spec, elapsed.count());
  return envelope;
}

Result<Envelope> Router::run(const OperationSpec& spec, const Request& request, const approval::Approval* approval,
                             std::vector<std::string>* call_warnings) {
  // validate
  CT_TRY_ASSIGN(pipeline::Call call, pipeline::validate(spec, request.params, options_.read_only));
  if (call_warnings) *call_warnings = call.warnings;
  Context context = new_context(request.caller, call);
  Nested nested(*this, request.caller, approval != nullptr);
  // store
  std::optional<Config> damaged_config;
  CT_TRY(attach_store(call, context, damaged_config));
  // capability
  CT_TRY(check_capability(spec, context));
  // approval: a mutation approval.required names, from a caller who is not a person, is proposed
  CT_TRY_ASSIGN(std::optional<std::string> rule,
                approval::gate(context, call, approval != nullptr, approval::Asked::BeforeTransaction));
  if (rule) return approval::propose(call, context, request.caller, *rule, nested);
  // external step: before the transaction, so that a slow program never holds the write lock
  AuditEntry audit;
  if (auto ran = run_external(call, context, nested); !ran) {
    audit_refusal(call, context, audit, ran.error());
    return std::unexpected(std::move(ran.error()));
  }
  // transaction
  if (call.mutate()) context.audit = &audit;
  CT_TRY_ASSIGN(pipeline::Transaction tx, begin(call, context, damaged_config));
  // The commit point (core/cancel.h): the write transaction has begun (or, on a damaged store, the
  // handler is about to run without one). A call its owner cancelled before this point stops here,
  // having changed nothing; from here on a call that writes runs to its end, and a cancel is
  // refused. One that keeps nothing (a read, a dry run) marks no such point: it can always stop.
  if (call.writes() ? !begin_commit() : cancel_requested()) return fail(pipeline::cancelled(spec));
  // idempotency
  CT_TRY_ASSIGN(std::optional<Envelope> replay, replayed(call, context));
  if (replay) return std::move(*replay);
  // session
  auto session_warnings = pipeline::check_session(call, context, request.caller, !call.common.session_id.empty());
  if (!session_warnings) {
    tx.rollback();
    audit_refusal(call, context, audit, session_warnings.error());
    return std::unexpected(std::move(session_warnings.error()));
  }
  std::vector<std::string> warnings = std::move(*session_warnings);
  warnings.insert(warnings.end(), call.warnings.begin(), call.warnings.end());
  // handler → shape (a bulk call's: once per task, each audited on its own row)
  CT_TRY_ASSIGN(Envelope ok, call.ids.empty() ? handle(call, context, tx, audit, std::move(warnings), nested)
                                              : run_each(call, context, tx, std::move(warnings), nested));
  // Nothing is kept without a store (a recovery is audited in the store it leaves) or by a call
  // that keeps nothing (a read renews its session's lease).
  if (!context.store) return recovered(call, context, audit, std::move(ok));
  if (!call.writes()) {
    if (!request.caller.session.empty() || !call.common.session_id.empty()) renew_lease(context, tx);
    return ok;
  }
  // audit → commit
  if (call.ids.empty()) CT_TRY(append_audit(call, context, audit, approval, ok));
  CT_TRY(commit(call, context, tx, approval, ok));
  if (context.rebind && *context.rebind != request.caller.session) ok.rebind = std::move(*context.rebind);
  return ok;
}

json::Value Router::meta(const OperationSpec& spec, double elapsed_ms) const {
  json::Value meta = json::Value::object();
  meta.set("gateway", tool_name(spec.gateway));
  meta.set("domain", spec.domain);
  meta.set("operation", spec.name);
  meta.set("version", product_version());
  meta.set("timestamp", format_iso8601(clock_->now()));
  meta.set("durationMs", static_cast<double>(static_cast<std::int64_t>(elapsed_ms * 1000)) / 1000.0);
  return meta;
}

Context Router::new_context(const Caller& caller, const pipeline::Call& call) {
  Context context;
  context.registry = &registry_;
  context.clock = clock_.get();
  context.workspace = workspace_.get();
  context.session = call.common.session_id.empty() ? caller.session : call.common.session_id;
  context.agent = caller.agent;
  context.agent_is_fixed = caller.agent_is_fixed;
  static const Config kDefaults;
  context.config = &kDefaults;
  context.principal = caller.principal;
  context.place = caller.place;
  context.home = options_.home;
  context.capabilities = options_.capabilities;
  context.keeps_nothing = !call.writes();
  return context;
}

Result<void> Router::check_capability(const OperationSpec& spec, Context& context) {
  if (spec.needs.empty() || !options_.capabilities) return {};
  Availability availability = options_.capabilities->check(spec, context.root(), *context.config);
  if (availability.available) return {};
  Error error(ErrorCode::CapabilityUnavailable, spec.full_name() + " is unavailable here: " + availability.reason);
  error.fix = availability.fix;
  error.details.set("need", availability.need);
  for (auto name : spec.alternatives) {
    const OperationSpec* other = registry_.find(name.substr(0, name.find('.')), name.substr(name.find('.') + 1));
    error.alternatives.push_back({other ? std::string(other->summary) : "Use instead", std::string(name)});
  }
  return fail(std::move(error));
}

Result<void> Router::run_external(const pipeline::Call& call, Context& context, Nested& nested) {
  const OperationSpec& spec = *call.spec;
  if (!spec.external) return {};
  // It sees the session the call will run in.
  if (context.store)
    CT_TRY(pipeline::read_in_own_transaction(context, [&] { return pipeline::adopt_session(context, nested.caller()); }));
  if (call.ids.empty()) {
    CT_TRY_ASSIGN(Reply external, pipeline::serve(spec.external, call, context, nested));
    context.external = std::move(external);
    return {};
  }
  for (const auto& id : call.ids) {
    CT_TRY_ASSIGN(pipeline::Call one, pipeline::for_id(call, id));
    CT_TRY_ASSIGN(Reply external, pipeline::serve(spec.external, one, context, nested));
    context.externals.emplace(id, std::move(external));
  }
  return {};
}

Result<Envelope> Router::handle(const pipeline::Call& call, Context& context, pipeline::Transaction& tx,
                                AuditEntry& audit, std::vector<std::string> warnings, Nested& nested) {
  const OperationSpec& spec = *call.spec;
  Result<Reply> reply = spec.handler       ? pipeline::serve(spec.handler, call, context, nested)
                        : context.external ? Result<Reply>(std::move(*context.external))
                                           : fail(ErrorCode::Internal, spec.full_name() + " has no handler");
  if (!reply) {
    tx.rollback();
    audit_failure(call, context, audit, reply.error());
    return std::unexpected(std::move(reply.error()));
  }
  const std::int64_t budget = options_.budget_replies ? context.config->get_int("output.maxReplyBytes") : -1;
  return pipeline::shape(call, std::move(*reply), std::move(warnings), budget, registry_.agent_writer(),
                         options_.drop_echoes);
}

Result<Envelope> Router::run_each(const pipeline::Call& bulk, Context& context, pipeline::Transaction& tx,
                                  std::vector<std::string> warnings, Nested& nested) {
  // The same call for each task, in the one transaction the caller opened: every task changes, or
  // none does. Each change is audited on its own row, as if it had been called alone.
  if (!context.store || !bulk.spec->handler)
    return fail(ErrorCode::Internal, bulk.spec->full_name() + " cannot run for several tasks here");
  const std::int64_t budget = options_.budget_replies ? context.config->get_int("output.maxReplyBytes") : -1;
  Envelope ok;
  ok.warnings.assign(warnings.begin(), warnings.end());
  json::Value results = json::Value::array();
  bool all_unchanged = true;
  for (const auto& id : bulk.ids) {
    CT_TRY_ASSIGN(pipeline::Call call, pipeline::for_id(bulk, id));
    AuditEntry audit;
    context.audit = call.mutate() ? &audit : nullptr;
    if (auto external = context.externals.find(id); external != context.externals.end())
      context.external = external->second;
    Result<Reply> reply = pipeline::serve(call.spec->handler, call, context, nested);
    context.audit = nullptr;
    if (!reply) {
      tx.rollback();
      audit_failure(call, context, audit, reply.error());
      Error error = std::move(reply.error());
      if (error.message.find(id) == std::string::npos) error.message = id + ": " + error.message;
      if (!results.empty())
        error.message += " (nothing was changed: the " + std::to_string(results.size()) + " task(s) before " + id +
                         " were rolled back)";
      if (!error.details.is_object() || !error.details.contains("id")) error = std::move(error).with_detail("id", id);
      return fail(std::move(error));
    }
    Envelope each = pipeline::shape(call, std::move(*reply), {}, budget, registry_.agent_writer(), options_.drop_echoes);
    json::Value item = json::Value::object();
    item.set("id", id);
    if (each.data.is_object()) {
      for (const auto& [key, value] : each.data.as_object())
        if (key != "id") item.set(key, value);
    } else if (!each.data.is_null()) {
      item.set("data", std::move(each.data));
    }
    results.push_back(std::move(item));
    for (auto& warning : each.warnings)
      ok.warnings.push_back(warning.plain_text().find(id) == std::string::npos ? id + ": " + std::move(warning)
                                                                               : std::move(warning));
    if (each.note != ErrorCode::NoChange) all_unchanged = false;
    if (call.writes()) {
      // Each row names the whole command's ids: tasks.undo takes the command back as one.
      audit.params.set("ids", json::Value::array_of(bulk.ids));
      pipeline::fill_audit(audit, context, call);
      audit.outcome = each.note ? std::string(to_string(*each.note)) : "ok";
      CT_TRY(context.store->append_audit(audit));
    }
  }
  ok.data = json::Value::object();
  ok.data.set("results", std::move(results));
  if (all_unchanged) ok.note = ErrorCode::NoChange;
  return ok;
}

Result<std::optional<Envelope>> Router::replayed(const pipeline::Call& call, Context& context) {
  // A keyed mutation seen before (same call, within the window) returns its first reply.
  if (!call.writes() || !context.store || call.common.idempotency_key.empty()) return std::optional<Envelope>();
  CT_TRY_ASSIGN(std::optional<IdempotentCall> seen, context.store->find_idempotent(call.common.idempotency_key));
  if (!seen || seen->at < context.now() - kIdempotencyWindowMs) return std::optional<Envelope>();
  if (seen->operation == call.spec->full_name() && seen->params == call.params_text) {
    if (auto first = json::parse(seen->reply); first) {
      Envelope replay = envelope_from_value(*first);
      replay.warnings.push_back("replayed: this idempotencyKey was used before; nothing ran again");
      return std::optional<Envelope>(std::move(replay));
    }
  }
  Error error(ErrorCode::InvalidParams, "idempotencyKey '" + call.common.idempotency_key +
                                            "' was already used for a different call (" + seen->operation + ")");
  error.fix = "send a new idempotencyKey for a new call; repeat a call with the same params to get its result";
  return fail(std::move(error).with_detail("field", "idempotencyKey").with_detail("operation", seen->operation));
}

void Router::audit_failure(const pipeline::Call& call, Context& context, AuditEntry& audit, const Error& error) {
  // A failed mutation still leaves a trace of who tried what (best effort, own transaction).
  if (!context.store || !call.writes() || !worth_auditing_failure(error.code)) return;
  audit.changes.clear();
  pipeline::fill_audit(audit, context, call);
  audit.outcome = std::string(to_string(error.code));
  if (!context.store->begin(TxKind::Write)) return;
  pipeline::Transaction tx(context.store);
  if (context.store->append_audit(audit)) (void)tx.commit();
}

void Router::audit_refusal(const pipeline::Call& call, Context& context, AuditEntry& audit, const Error& error) {
  // Who tried what they may not do (an agent's approve, a write in another's session) is on the
  // trail, with the principal that tried; other failures before the handler leave none.
  if (error.code == ErrorCode::MutationDisabled || error.code == ErrorCode::SessionOwned)
    audit_failure(call, context, audit, error);
}

Envelope Router::recovered(const pipeline::Call& call, Context& context, AuditEntry& audit, Envelope ok) {
  // A recovery left a store behind (it ran on a damaged store): its first audit row says who
  // recovered it and how.
  if (!context.store_error || !call.writes()) return ok;
  auto audited = [&]() -> Result<void> {
    CT_TRY_ASSIGN(Store * store, open_store());
    context.store = store;
    CT_TRY(store->begin(TxKind::Write));
    pipeline::Transaction tx(store);
    pipeline::fill_audit(audit, context, call);
    audit.outcome = ok.note ? std::string(to_string(*ok.note)) : "ok";
    CT_TRY(store->append_audit(audit));
    return tx.commit();
  }();
  if (!audited) ok.warnings.push_back("the change was made but could not be audited: " + audited.error().message);
  return ok;
}

Result<void> Router::append_audit(const pipeline::Call& call, Context& context, AuditEntry& audit,
                                  const approval::Approval* approval, const Envelope& ok) {
  if (approval) {
    // What was reviewed must still be what the call does.
    CT_TRY(approval::check_unmoved(approval->proposal, audit.changes));
    audit.params.set("proposal", approval->proposal.id);
    audit.params.set("proposedBy", approval->proposal.agent);
  }
  pipeline::fill_audit(audit, context, call);
  audit.outcome = ok.note ? std::string(to_string(*ok.note)) : "ok";
  CT_TRY(context.store->append_audit(audit));
  return {};
}

Result<void> Router::commit(const pipeline::Call& call, Context& context, pipeline::Transaction& tx,
                            const approval::Approval* approval, const Envelope& ok) {
  // The audit row, the decided proposal, the remembered reply and the change itself commit
  // together or not at all.
  if (approval) {
    Proposal decided = approval->proposal;
    decided.status = "approved";
    decided.decided_by = approval->approver;
    decided.decided_at = context.now();
    decided.decision = approval->decision;
    CT_TRY(context.store->put_proposal(decided));
  }
  if (!call.common.idempotency_key.empty()) {
    TimeMs now = context.now();
    CT_TRY(context.store->remember_idempotent({call.common.idempotency_key, call.spec->full_name(), call.params_text,
                                               to_json(ok, AdviceAsValue(registry_)), now},
                                              now - kIdempotencyWindowMs));
  }
  CT_TRY(tx.commit());
  // A write in a session touched it (check_session): its lease is renewed.
  if (call.spec->needs_session && !context.session.empty()) remember_renewal(context.session);
  if (context.config_changed) refresh_config();
  return {};
}

Result<Reply> Router::run_inside(Context& context, const OperationSpec& spec, const json::Value& params,
                                 AuditEntry& audit, const Reply* external, Nested& nested) {
  // A mutation with a handler, whose external step (a program, an evidence check) ran before the
  // transaction and is given: what runs inside a call's transaction never waits on a program.
  // Which operations a batch or a plan holds is the batch's rule (batch::holds).
  if (!spec.handler || spec.gateway != Gateway::Mutate || (spec.external && !external))
    return fail(Error(ErrorCode::InvalidParams, spec.full_name() + " cannot run inside another call")
                    .with_detail("operation", spec.full_name()));
  CT_TRY_ASSIGN(pipeline::Call call, pipeline::validate(spec, params, options_.read_only && !context.keeps_nothing));
  // What belongs to the whole call is refused on one of its ops, never silently dropped.
  std::string_view whole;
  if (!call.ids.empty()) whole = "ids (give each task an op of its own)";
  else if (call.dry_run) whole = "dryRun (set it on the whole call)";
  else if (!call.common.idempotency_key.empty()) whole = "idempotencyKey (set it on the whole call)";
  else if (!call.common.session_id.empty()) whole = "sessionId (set it on the whole call)";
  else if (!call.common.intent.is_null()) whole = "intent (set it on the whole call)";
  if (!whole.empty())
    return fail(Error(ErrorCode::InvalidParams, spec.full_name() + " inside another call cannot take " + std::string(whole))
                    .with_detail("field", std::string(whole.substr(0, whole.find(' ')))));
  // The gate, as for a call alone; but an op that needs a person refuses the whole call (a person
  // approving a proposed batch runs it whole).
  CT_TRY_ASSIGN(std::optional<std::string> rule,
                approval::gate(context, call, nested.approved(), approval::Asked::InTransaction));
  if (rule) return fail(approval::refused_inside(spec, *rule));
  // The session rules hold for each op; what they advise (no session, in advisory mode) is the
  // whole call's to say, once, not each op's.
  CT_TRY(pipeline::check_session(call, context, nested.caller(), false));
  AuditEntry* outer_audit = std::exchange(context.audit, &audit);
  std::optional<Reply> outer_external = std::move(context.external);
  context.external.reset();
  if (external) context.external = *external;
  Result<Reply> reply = pipeline::serve(spec.handler, call, context, nested);
  context.audit = outer_audit;
  context.external = std::move(outer_external);
  if (!reply) return std::unexpected(std::move(reply.error()));
  Envelope shaped = pipeline::shape(call, std::move(*reply), call.warnings, -1, registry_.agent_writer(),
                                    options_.drop_echoes);
  pipeline::fill_audit(audit, context, call);
  audit.outcome = shaped.note ? std::string(to_string(*shaped.note)) : "ok";
  return reply_of(std::move(shaped));
}

Result<Reply> Router::run_approved(const Proposal& proposal, const std::string& approver, const std::string& decision,
                                   const Caller& caller) {
  const auto dot = proposal.operation.find('.');
  const OperationSpec* stored = registry_.find(proposal.operation.substr(0, dot), proposal.operation.substr(dot + 1));
  if (!stored) return fail(ErrorCode::Validation, proposal.operation + " is no longer an operation of this ct");
  json::Value params = proposal.params.is_object() ? proposal.params : json::Value::object();
  if (!proposal.reason.empty()) params.set("reason", proposal.reason);
  if (!proposal.intent.is_null()) params.set("intent", proposal.intent);
  approval::Approval approving{proposal, approver, decision};
  CT_TRY_ASSIGN(Envelope done, run(*stored, Request{Gateway::Mutate, std::string(stored->domain),
                                                    std::string(stored->name), params, caller},
                                   &approving));
  done.note.reset();
  return reply_of(std::move(done));
}

void Router::renew_lease(Context& context, pipeline::Transaction& tx) {
  // A read-only server writes nothing, leases included: its readers' claims run their course.
  if (!context.store || context.session.empty() || options_.read_only) return;
  const std::optional<TimeMs> step = renewal_step(*context.config);
  if (!step) return;
  const auto steady_now = std::chrono::steady_clock::now();
  if (auto it = renewed_.find(context.session);
      it != renewed_.end() && steady_now - it->second < std::chrono::milliseconds(*step))
    return;
  // Still inside the read's transaction: is a renewal due?
  auto found = context.store->get_session(context.session);
  if (!found || !*found || (*found)->status != SessionStatus::Active) return;
  const TimeMs now = context.now();
  const TimeMs age = now - (*found)->updated_at;
  if (age < *step) {
    renewed_[context.session] = steady_now - std::chrono::milliseconds(std::max<TimeMs>(age, 0));
    return;
  }
  tx.rollback();
  if (!context.store->begin(TxKind::Write)) return;
  pipeline::Transaction write(context.store);
  SessionEngine sessions(*context.store, *context.config, now, nullptr);
  if (!sessions.touch(context.session) || !write.commit()) return;
  remember_renewal(context.session);
}

void Router::remember_renewal(const std::string& session) {
  // A server sees many sessions over its life: the memory stays small (a forgotten one costs a
  // read of its row on the next call).
  if (renewed_.size() >= 1024) renewed_.clear();
  renewed_[session] = std::chrono::steady_clock::now();
}

Result<std::int64_t> Router::change_stamp() {
  CT_TRY_ASSIGN(Store* store, open_store());
  return store->change_stamp();
}

Result<Waited> Router::wait_for_change(std::chrono::milliseconds timeout, int interrupt) {
  CT_TRY_ASSIGN(Store* store, open_store());
  return store->wait_for_change(timeout, interrupt);
}

Result<Store*> Router::open_store() {
  if (store_) {
    refresh_config();
    if (store_) return store_.get();  // closed when the config now names another store
  }
  // Read-only mode writes nothing, not even a schema upgrade.
  CT_TRY_ASSIGN(Workspace::OpenStore opened,
                workspace_->open_store({.upgrade = !options_.read_only, .clock = clock_.get(),
                                        .check_integrity = options_.check_integrity_on_open,
                                        .short_lived = options_.short_lived}));
  store_ = std::move(opened.store);
  store_location_ = std::move(opened.location);
  project_ = std::move(opened.project);
  config_ = std::move(opened.config);
  return store_.get();
}

void Router::close_store() {
  store_.reset();
  config_.reset();
  project_.reset();
}

/// The workspace's config as it is now (config.json is read again when another process changed
/// it: one stat per call). It may name another store now: the next call opens that one.
void Router::refresh_config() {
  if (!project_ || !config_) return;
  auto settings = workspace_->settings();
  if (!settings) return;
  config_ = std::move(settings->config);
  if (settings->store_location != store_location_) close_store();
}

Result<void> Router::attach_store(const pipeline::Call& call, Context& context, std::optional<Config>& damaged_config) {
  if (!call.spec->needs_project) return {};
  auto store = open_store();
  if (store) {
    context.store = *store;
    context.project = project_;
    context.config = config_.get();
    return {};
  }
  return without_store(call, context, std::move(store.error()), damaged_config);
}

Result<void> Router::without_store(const pipeline::Call& call, Context& context, Error why,
                                   std::optional<Config>& damaged_config) {
  // A store that cannot be used — it does not open, or it is marked damaged — lets only the
  // operations made for that (recovery, health) run, without it.
  const bool damaged = why.details["damaged"] == json::Value(true) || why.code == ErrorCode::NotInitialized;
  if (!call.spec->runs_on_damaged_store || !damaged) return fail(std::move(why));
  auto project = find_damaged_project(workspace_->dir());
  if (!project) return fail(std::move(why));
  close_store();
  context.store = nullptr;
  context.project = std::move(*project);
  context.store_error = std::move(why);
  if (auto config = Config::load(context.project->config_path())) damaged_config = std::move(*config);
  if (damaged_config) context.config = &*damaged_config;
  return {};
}

Result<pipeline::Transaction> Router::begin(const pipeline::Call& call, Context& context,
                                            std::optional<Config>& damaged_config) {
  if (!context.store) return pipeline::Transaction();  // the call runs without the store
  // A dry run in read-only mode reads: its connection may not take the write lock.
  const TxKind kind = (call.mutate() || call.spec->speculates) && !call.read_only && !options_.read_only
                          ? TxKind::Write
                          : TxKind::Read;
  // A write waits here while another writer holds the lock (SQLite's busy timeout); PostgreSQL's
  // row lock of meta.change_stamp is taken with the first statement (Store::lock_waited_ms()).
  const auto asked = std::chrono::steady_clock::now();
  auto begun = context.store->begin(kind);
  if (kind == TxKind::Write)
    lock_wait_ms_ += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - asked).count();
  if (!begun && begun.error().details["reopen"] == json::Value(true)) {
    // The database file was replaced under this process (a restore, a new ct init): the
    // connection still reads the old one. Open the new file and go on.
    close_store();
    auto reopened = open_store();
    if (reopened) {
      context.store = *reopened;
      context.project = project_;
      context.config = config_.get();
      begun = context.store->begin(kind);
    } else {
      begun = std::unexpected(std::move(reopened.error()));
    }
  }
  if (!begun) {
    CT_TRY(without_store(call, context, std::move(begun.error()), damaged_config));
    return pipeline::Transaction();
  }
  // A write about one task reads it first: a store may read it with the lock (TaskStore::expect).
  if (kind == TxKind::Write && call.ids.empty())
    for (const auto& param : call.spec->params)
      if (param.name == "id" && param.type == ParamType::TaskId) {
        if (auto id = call.params.opt_str("id")) context.store->expect({{ExpectedRead::Task, *id}});
        break;
      }
  return pipeline::Transaction(context.store);
}

}  // namespace ct
