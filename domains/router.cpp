#include "domains/router.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <set>
#include <utility>

#include "core/cancel.h"
#include "core/version.h"
#include "core/json_parse.h"
#include "core/log.h"
#include "core/text.h"
#include "domains/approval.h"
#include "domains/call_text.h"
#include "domains/context.h"
#include "domains/metrics.h"
#include "domains/original_names.h"
#include "domains/params.h"
#include "domains/pipeline.h"
#include "domains/projection.h"
#include "engines/rules/claim_lease.h"
#include "engines/rules/session_engine.h"
#include "engines/store/open/open_store.h"
#include "engines/store/task_json.h"


namespace ct {
namespace {

/// A CLI call with no session adopts the project's only active one (that no other terminal holds).
Result<void> adopt_session(Context& context, const Caller& caller) {
  if (context.session.empty() && caller.adopt_only_active_session) {
    SessionQuery active;
    active.statuses = {SessionStatus::Active};
    active.limit = static_cast<std::int64_t>(caller.never_adopt.size()) + 2;
    CT_TRY_ASSIGN(std::vector<Session> sessions, context.store->list_sessions(active));
    // Another caller's session (bound to another terminal) is never taken over.
    std::erase_if(sessions, [&](const Session& s) {
      return std::find(caller.never_adopt.begin(), caller.never_adopt.end(), s.id) != caller.never_adopt.end();
    });
    if (sessions.size() == 1) context.session = sessions.front().id;
  }
  return {};
}

/// Sessions, before the handler runs (inside its transaction): a CLI call with no session adopts
/// the project's only active one, and a write of the tasks domain is checked against
/// session.enforcement and the bound session. Returns the warnings for the reply.
Result<std::vector<std::string>> check_session(const OperationSpec& spec, Context& context, bool named,
                                               const Caller& caller) {
  if (!context.store) return std::vector<std::string>{};
  if (named && !spec.needs_session) {
    // A session the call names must exist, whatever the call does in it (writes check more below).
    SessionEngine sessions(*context.store, *context.config, 0, nullptr);
    CT_TRY(sessions.get(context.session));
  }
  CT_TRY(adopt_session(context, caller));
  if (!spec.needs_session) return std::vector<std::string>{};
  // The clock is read only when a session is touched (a stepping test clock stays in step).
  SessionEngine sessions(*context.store, *context.config, context.session.empty() ? 0 : context.now(), nullptr);
  return sessions.check_write(context.session);
}

}  // namespace

Advice fallback_fix(ErrorCode code, const OperationSpec& spec, const std::string& id) {
  const std::string task = id.empty() ? "T001" : id;
  switch (code) {
    case ErrorCode::NotFound:
    case ErrorCode::ParentNotFound:
      return call("tasks.find", {{"query", task}});
    case ErrorCode::LockTimeout:
      return "retry the call; if it keeps happening raise storage.busyTimeoutMs: " +
             call("system.config.set", {{"key", "storage.busyTimeoutMs"}, {"value", 15000}});
    case ErrorCode::StoreUnavailable:
      return "retry in a few seconds; " + call("system.health") + " says whether the store's server answers";
    case ErrorCode::ConcurrentModification:
    case ErrorCode::ChecksumMismatch:
      return "read it again (" + call("tasks.show", {{"id", task}}) + ") and retry with its current version as ifVersion";
    case ErrorCode::FileError:
    case ErrorCode::NotInitialized:
      return call("system.health") + " says what is wrong with the store";
    case ErrorCode::ConfigError:
      return call("system.config.get") + " lists every key with its type and default";
    case ErrorCode::CircularReference:
      return call("tasks.deps", {{"id", task}}) + " shows the chain to break";
    case ErrorCode::HasChildren:
    case ErrorCode::InvalidParentType:
      return call("tasks.tree", {{"id", task}}) + " shows the children";
    case ErrorCode::DepthExceeded:
    case ErrorCode::SiblingLimit:
      return call("system.config.get",
                  {{"key", code == ErrorCode::DepthExceeded ? "hierarchy.maxDepth" : "hierarchy.maxSiblings"}}) +
             " shows the limit; choose another parent";
    case ErrorCode::TaskCompleted:
      return call("tasks.reopen", {{"id", task}}) + " first";
    case ErrorCode::SessionRequired:
    case ErrorCode::SessionNotFound:
      return call("session.start", {{"scope", "global"}});
    case ErrorCode::Internal:
      return "this is a bug in ct: retry once, and if it happens again report the message (" + call("system.version") +
             " names the version)";
    default:
      return call("system.help", {{"operation", spec.full_name()}}) + " describes the call, its params and its errors";
  }
}

namespace {

/// A repeat of a keyed mutation within this window returns the first reply.
constexpr TimeMs kIdempotencyWindowMs = 24LL * 3600 * 1000;

/// A call its owner cancelled before it reached its commit point (core/cancel.h): it stops there,
/// having changed nothing.
Error cancelled(const OperationSpec& spec) {
  Error error(ErrorCode::General, spec.full_name() + " was cancelled before it changed anything");
  error.fix = "call it again to run it";
  return std::move(error).with_detail("cancelled", true);
}

bool worth_auditing_failure(ErrorCode code) {
  // Infrastructure failures cannot be written anyway (and would only add load to a busy store).
  return code != ErrorCode::LockTimeout && code != ErrorCode::FileError && code != ErrorCode::Internal &&
         code != ErrorCode::NotInitialized && code != ErrorCode::StoreUnavailable;
}

}  // namespace

int Envelope::exit_code() const {
  if (!success) return error ? error->exit_code() : 1;
  if (note) return ct::exit_code(*note);
  return 0;
}

json::Value error_to_value(const Error& error, const Registry& registry) {
  json::Value out = json::Value::object();
  out.set("code", to_string(error.code));
  out.set("exitCode", error.exit_code());
  out.set("message", error.message);
  if (!error.fix.empty()) out.set("fix", mcp_text(error.fix, registry));
  if (!error.alternatives.empty()) {
    json::Value alternatives = json::Value::array();
    for (const auto& alt : error.alternatives) {
      json::Value item = json::Value::object();
      item.set("action", alt.action);
      item.set("operation", alt.operation);
      alternatives.push_back(std::move(item));
    }
    out.set("alternatives", std::move(alternatives));
  }
  out.set("retryable", error.retryable());
  if (error.retry_after_seconds) out.set("retryAfter", *error.retry_after_seconds);
  if (!error.details.empty()) out.set("details", error.details);
  return out;
}

json::Value to_value(const Envelope& envelope, const Registry& registry) {
  json::Value out = json::Value::object();
  out.set("success", envelope.success);
  if (envelope.success) {
    out.set("data", envelope.data);
  } else if (envelope.error) {
    out.set("error", error_to_value(*envelope.error, registry));
  }
  json::Value meta = envelope.meta.is_object() ? envelope.meta : json::Value::object();
  if (envelope.note) meta.set("code", to_string(*envelope.note));
  if (!envelope.warnings.empty()) meta.set("warnings", json::Value::array_of(envelope.warnings));
  if (envelope.page) {
    // The caller knows its own limit and offset: only what it does not know is sent.
    json::Value page = json::Value::object();
    if (envelope.page->total >= 0) page.set("total", envelope.page->total);
    page.set("hasMore", envelope.page->has_more());
    if (envelope.page->has_more()) page.set("nextOffset", envelope.page->next_offset());
    meta.set("page", std::move(page));
  }
  if (!meta.empty()) out.set("_meta", std::move(meta));
  return out;
}

std::string to_json(const Envelope& envelope, const Registry& registry) { return to_value(envelope, registry).dump(); }

Envelope failure(Error error) {
  Envelope envelope;
  envelope.success = false;
  envelope.error = std::move(error);
  return envelope;
}

Router::Router(const Registry& registry, std::shared_ptr<Workspace> workspace, RouterOptions options,
               std::unique_ptr<Clock> clock)
    : registry_(registry), workspace_(std::move(workspace)), options_(std::move(options)), clock_(std::move(clock)) {}

Router::~Router() = default;

void Router::close_store() {
  store_.reset();
  config_.reset();
  project_.reset();
}

Result<std::int64_t> Router::change_stamp() {
  CT_TRY_ASSIGN(Store* store, open_store());
  return store->change_stamp();
}

Result<Store*> Router::open_store() {
  if (store_) {
    refresh_config();
    if (store_) return store_.get();  // closed when the config now names another store
  }
  CT_TRY_ASSIGN(Workspace::State state, workspace_->state(/*opening=*/true));
  StoreOptions store = store_options(*state.config);
  store.migration_backups = state.project.safety_backups_dir();
  store.upgrade = !options_.read_only;  // read-only mode writes nothing, not even a schema upgrade
  store.clock = clock_.get();
  std::unique_ptr<StoreBackend> backend = project_store(state.project, *state.config);
  CT_TRY_ASSIGN(store_, backend->open(store));
  store_location_ = backend->location();
  project_ = std::move(state.project);
  config_ = std::move(state.config);
  if (options_.check_integrity_on_open) check_integrity_once();
  return store_.get();
}

/// A long-running server checks the store once per process when it first opens it: a damaged
/// store found here is marked, and writes are refused until it is restored.
void Router::check_integrity_once() {
  static std::mutex mutex;
  static std::set<std::string> checked;
  {
    std::lock_guard lock(mutex);
    if (!checked.insert(project_->db_path().string()).second) return;
  }
  auto problems = store_->integrity_problems();
  if (problems && !problems->empty())
    log::error(project_->db_path().string() + " failed its integrity check (" + problems->front() +
               "); writes are refused until a restore (ct restore, or system.restore) brings a good backup back");
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

Context Router::new_context(const Caller& caller) {
  Context context;
  context.registry = &registry_;
  context.clock = clock_.get();
  context.workspace = workspace_.get();
  context.session = caller.session;
  context.agent = caller.agent;
  context.agent_is_fixed = caller.agent_is_fixed;
  static const Config kDefaults;
  context.config = &kDefaults;
  context.person = options_.outside_project_allowed;
  context.person_reviews = options_.person_reviews;
  context.home = options_.home;
  context.capabilities = options_.capabilities;
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
  // A dry run in read-only mode reads: its connection may not take the write lock.
  const TxKind kind = (call.mutate() || call.spec->speculates) && !call.read_only && !options_.read_only
                          ? TxKind::Write
                          : TxKind::Read;
  // A write waits here while another writer holds the lock (SQLite's busy timeout, PostgreSQL's
  // row lock of meta.change_stamp).
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
  return pipeline::Transaction(context.store);
}

Result<Reply> Router::guarded(const Handler& handler, const pipeline::Call& call, Context& context) {
  Result<Reply> reply = [&]() -> Result<Reply> {
    try {
      return handler(context, call.params);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "ct: internal error in %s: %s\n", call.spec->full_name().c_str(), e.what());
      return fail(ErrorCode::Internal, "internal error in " + call.spec->full_name() + ": " + e.what());
    }
  }();
  if (!reply && checking_contracts() && !call.spec->declares(reply.error().code)) {
    // A test build refuses to let an operation answer a code its spec does not declare: help,
    // docs and agents rely on the declared list.
    std::fprintf(stderr, "ct: %s answered %s, which its spec does not declare\n", call.spec->full_name().c_str(),
                 std::string(to_string(reply.error().code)).c_str());
    reply = fail(ErrorCode::Internal, call.spec->full_name() + " answered undeclared " +
                                          std::string(to_string(reply.error().code)) + ": " + reply.error().message);
  }
  return reply;
}

Result<std::optional<Envelope>> Router::replayed(const pipeline::Call& call, Context& context) {
  // A keyed mutation seen before (same call, within the window) returns its first reply.
  if (!call.writes() || !context.store || call.common.idempotency_key.empty()) return std::optional<Envelope>();
  CT_TRY_ASSIGN(std::optional<IdempotentCall> seen, context.store->find_idempotent(call.common.idempotency_key));
  if (!seen || seen->at < context.now() - kIdempotencyWindowMs) return std::optional<Envelope>();
  if (seen->operation == call.spec->full_name() && seen->params == call.params_text) {
    if (auto first = json::parse(seen->reply); first) {
      Envelope replay = pipeline::envelope_from_value(*first);
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

Result<void> Router::audit_recovery(const pipeline::Call& call, Context& context, AuditEntry& audit,
                                    const Envelope& ok) {
  // A recovery left a store behind: its first audit row says who recovered it and how.
  CT_TRY_ASSIGN(Store * store, open_store());
  context.store = store;
  CT_TRY(store->begin(TxKind::Write));
  pipeline::Transaction tx(store);
  pipeline::fill_audit(audit, context, call);
  audit.outcome = ok.note ? std::string(to_string(*ok.note)) : "ok";
  CT_TRY(store->append_audit(audit));
  return tx.commit();
}

Result<Envelope> Router::run_each(const pipeline::Call& bulk, Context& context, pipeline::Transaction& tx,
                                  std::vector<std::string> warnings, std::int64_t reply_budget) {
  // The same call for each task, in the one transaction the caller opened: every task changes, or
  // none does. Each change is audited on its own row, as if it had been called alone.
  if (!context.store || !bulk.spec->handler)
    return fail(ErrorCode::Internal, bulk.spec->full_name() + " cannot run for several tasks here");
  json::Value results = json::Value::array();
  bool all_unchanged = true;
  for (const auto& id : bulk.ids) {
    CT_TRY_ASSIGN(pipeline::Call call, pipeline::for_id(bulk, id));
    AuditEntry audit;
    context.audit = call.mutate() ? &audit : nullptr;
    if (auto external = context.externals.find(id); external != context.externals.end())
      context.external = external->second;
    Result<Reply> reply = guarded(call.spec->handler, call, context);
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
    Envelope each = pipeline::shape(call, std::move(*reply), {}, reply_budget, options_.drop_echoes);
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
      warnings.push_back(warning.find(id) == std::string::npos ? id + ": " + warning : std::move(warning));
    if (each.note != ErrorCode::NoChange) all_unchanged = false;
    if (call.writes()) {
      // Each row names the whole command's ids: tasks.undo takes the command back as one.
      audit.params.set("ids", json::Value::array_of(bulk.ids));
      pipeline::fill_audit(audit, context, call);
      audit.outcome = each.note ? std::string(to_string(*each.note)) : "ok";
      CT_TRY(context.store->append_audit(audit));
    }
  }
  Envelope ok;
  ok.data = json::Value::object();
  ok.data.set("results", std::move(results));
  ok.warnings = std::move(warnings);
  if (all_unchanged) ok.note = ErrorCode::NoChange;
  return ok;
}

Result<Envelope> Router::propose(const OperationSpec& spec, const pipeline::Call& call, const Request& request,
                                 Context& context, const std::string& rule) {
  // Keeping the proposal is the call's commit point (core/cancel.h).
  if (!begin_commit()) return fail(cancelled(spec));
  // What it would change: the handler runs in a transaction that is rolled back (after its external
  // step, when that only checks). A call whose external step acts (a release pushes) or for several
  // tasks is previewed when it is approved.
  json::Value preview;
  if ((!spec.external || spec.external_checks_only) && call.ids.empty() && spec.handler) {
    if (spec.external) {
      CT_TRY_ASSIGN(Reply external, guarded(spec.external, call, context));
      context.external = std::move(external);
    }
    AuditEntry audit;
    context.audit = &audit;
    CT_TRY(context.store->begin(TxKind::Write));
    pipeline::Transaction tx(context.store);
    CT_TRY_ASSIGN(std::vector<std::string> ignored,
                  check_session(spec, context, !call.common.session_id.empty(), request.caller));
    (void)ignored;
    Result<Reply> reply = guarded(spec.handler, call, context);
    tx.rollback();
    context.audit = nullptr;
    if (!reply) return std::unexpected(std::move(reply.error()));  // a call that would fail is not proposed
    preview = json::Value::object();
    preview.set("changes", changes_json(audit.changes));
  }
  CT_TRY(context.store->begin(TxKind::Write));
  pipeline::Transaction tx(context.store);
  Proposal proposal;
  CT_TRY_ASSIGN(std::int64_t number, context.store->next_proposal_number());
  proposal.id = prefixed_id("P", number);
  proposal.operation = spec.full_name();
  CT_TRY_ASSIGN(proposal.params, json::parse(call.params_text));
  if (!call.ids.empty()) proposal.params.erase("id");  // a bulk call is stored with its ids alone
  proposal.rule = rule;
  proposal.task_id = call.params.opt_str("id").value_or("");
  proposal.preview = preview;
  proposal.reason = call.common.reason;
  proposal.intent = call.common.intent;
  CT_TRY_ASSIGN(proposal.agent, context.agent_name());
  proposal.session = context.session;
  proposal.at = context.now();
  CT_TRY(context.store->put_proposal(proposal));
  // The audit row says who proposed what; it changes nothing, so there is nothing to undo.
  AuditEntry audit;
  audit.params.set("proposal", proposal.id);
  pipeline::fill_audit(audit, context, call);
  audit.outcome = std::string(to_string(ErrorCode::Proposed));
  CT_TRY(context.store->append_audit(audit));
  CT_TRY(tx.commit());
  Envelope ok;
  ok.data = approval::proposal_json(proposal, /*full=*/true);
  ok.note = ErrorCode::Proposed;
  ok.warnings.push_back(spec.full_name() + " needs a person's approval here (approval.required: " + rule +
                        "): nothing changed yet; " + proposal.id + " waits for `ct approve " + proposal.id +
                        "` or a rejection");
  return ok;
}

Result<Reply> Router::run_inside(Context& context, const OperationSpec& spec, const json::Value& params,
                                 AuditEntry& audit, const Reply* external, const Caller& caller, bool approved) {
  // A mutation with a handler, whose external step (a program, an evidence check) ran before the
  // transaction and is given: what runs inside a call's transaction never waits on a program.
  // Which operations may be ops is the batch's rule (batch::parse admits the batchable ones).
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
  // An op approval.required names needs a person, as it would alone: the whole call is refused (a
  // person approving a proposed batch runs it whole).
  if (!approved && !context.person_reviews && !context.config->get_strings("approval.required").empty()) {
    CT_TRY_ASSIGN(std::optional<std::string> rule, approval::rule_for(context, spec, call.params));
    if (rule)
      return fail(Error(ErrorCode::MutationDisabled, spec.full_name() + " needs a person's approval here (approval.required: " +
                                                         *rule + "), so it cannot run inside another call")
                      .with_fix("call it on its own: it becomes a proposal a person approves")
                      .with_detail("rule", *rule));
  }
  // The session rules hold for each op; what they advise (no session, in advisory mode) is the
  // whole call's to say, once, not each op's.
  CT_TRY_ASSIGN(std::vector<std::string> session_advice, check_session(spec, context, false, caller));
  (void)session_advice;
  std::vector<std::string> warnings = call.warnings;
  AuditEntry* outer_audit = std::exchange(context.audit, &audit);
  std::optional<Reply> outer_external = std::move(context.external);
  context.external.reset();
  if (external) context.external = *external;
  Result<Reply> reply = guarded(spec.handler, call, context);
  context.audit = outer_audit;
  context.external = std::move(outer_external);
  if (!reply) return std::unexpected(std::move(reply.error()));
  Envelope shaped = pipeline::shape(call, std::move(*reply), std::move(warnings), -1, options_.drop_echoes);
  pipeline::fill_audit(audit, context, call);
  audit.outcome = shaped.note ? std::string(to_string(*shaped.note)) : "ok";
  return Reply::noted(std::move(shaped.data), shaped.note, std::move(shaped.warnings));
}

Result<Envelope> Router::run(const OperationSpec& spec, const Request& request, const approval::Approval* approval,
                             std::vector<std::string>* call_warnings) {
  CT_TRY_ASSIGN(pipeline::Call call, pipeline::validate(spec, request.params, options_.read_only));
  if (call_warnings) *call_warnings = call.warnings;
  Context context = new_context(request.caller);
  context.keeps_nothing = !call.writes();
  if (!call.common.session_id.empty()) context.session = call.common.session_id;
  std::optional<Config> damaged_config;
  CT_TRY(attach_store(call, context, damaged_config));
  CT_TRY(check_capability(spec, context));
  context.run_approved = [this, caller = request.caller](const Proposal& proposal, const std::string& approver,
                                                          const std::string& decision) -> Result<Reply> {
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
    return Reply::warned(std::move(done.data), std::move(done.warnings));
  };
  context.run_inside = [this, caller = request.caller, approved = approval != nullptr](
                           Context& inside, const OperationSpec& op, const json::Value& params, AuditEntry& audit,
                           const Reply* external) -> Result<Reply> {
    return run_inside(inside, op, params, audit, external, caller, approved);
  };
  // A mutation approval.required names, from a caller who is not a person, is only proposed.
  if (call.writes() && !approval && !context.person_reviews && context.store &&
      !context.config->get_strings("approval.required").empty()) {
    CT_TRY_ASSIGN(std::optional<std::string> rule, pipeline::read_in_own_transaction(context, [&] {
                    return approval::rule_for(context, spec, call.params);
                  }));
    if (rule) return propose(spec, call, request, context, *rule);
  }

  // External work (a subprocess) runs before the transaction: a slow program never holds the
  // write lock other writers wait for. It sees the session the call will run in.
  if (spec.external && context.store)
    CT_TRY(pipeline::read_in_own_transaction(context, [&] { return adopt_session(context, request.caller); }));
  if (spec.external && call.ids.empty()) {
    CT_TRY_ASSIGN(Reply external, guarded(spec.external, call, context));
    context.external = std::move(external);
  } else if (spec.external) {
    for (const auto& id : call.ids) {
      CT_TRY_ASSIGN(pipeline::Call one, pipeline::for_id(call, id));
      CT_TRY_ASSIGN(Reply external, guarded(spec.external, one, context));
      context.externals.emplace(id, std::move(external));
    }
  }

  AuditEntry audit;
  if (call.mutate()) context.audit = &audit;
  pipeline::Transaction tx;
  if (context.store) {
    CT_TRY_ASSIGN(tx, begin(call, context, damaged_config));
  }
  // The commit point (core/cancel.h): the write transaction has begun (or, on a damaged store, the
  // handler is about to run without one). A call its owner cancelled before this point stops here,
  // having changed nothing; from here on a call that writes runs to its end, and a cancel is
  // refused. One that keeps nothing (a read, a dry run) marks no such point: it can always stop.
  if (call.writes() ? !begin_commit() : cancel_requested()) return fail(cancelled(spec));
  CT_TRY_ASSIGN(std::optional<Envelope> replay, replayed(call, context));
  if (replay) return std::move(*replay);
  CT_TRY_ASSIGN(std::vector<std::string> session_warnings,
                check_session(spec, context, !call.common.session_id.empty(), request.caller));
  session_warnings.insert(session_warnings.end(), call.warnings.begin(), call.warnings.end());

  const std::int64_t reply_budget = options_.budget_replies ? context.config->get_int("output.maxReplyBytes") : -1;
  Envelope ok;
  // A session the caller named (not one the CLI adopted: a person looking at an agent's work
  // keeps no claim alive) shows life with every call.
  const bool own_session = !request.caller.session.empty() || !call.common.session_id.empty();
  if (!call.ids.empty()) {
    CT_TRY_ASSIGN(ok, run_each(call, context, tx, std::move(session_warnings), reply_budget));
    if (!call.writes()) {
      if (own_session) renew_lease(context, tx);
      return ok;
    }
  } else {
    Result<Reply> reply = spec.handler       ? guarded(spec.handler, call, context)
                          : context.external ? Result<Reply>(std::move(*context.external))
                                             : fail(ErrorCode::Internal, spec.full_name() + " has no handler");
    if (!reply) {
      tx.rollback();
      audit_failure(call, context, audit, reply.error());
      return std::unexpected(std::move(reply.error()));
    }
    ok = pipeline::shape(call, std::move(*reply), std::move(session_warnings), reply_budget, options_.drop_echoes);

    if (!context.store) {
      if (context.store_error && call.writes()) {
        if (auto audited = audit_recovery(call, context, audit, ok); !audited)
          ok.warnings.push_back("the change was made but could not be audited: " + audited.error().message);
      }
      return ok;
    }
    // Queries, dry runs and read-only checks keep nothing: the transaction rolls back.
    if (!call.writes()) {
      if (own_session) renew_lease(context, tx);
      return ok;
    }
    if (approval) {
      // What was reviewed must still be what the call does.
      CT_TRY(approval::check_unmoved(approval->proposal, audit.changes));
      audit.params.set("proposal", approval->proposal.id);
      audit.params.set("proposedBy", approval->proposal.agent);
    }
    // The audit row, the remembered reply and the change itself commit together or not at all.
    pipeline::fill_audit(audit, context, call);
    audit.outcome = ok.note ? std::string(to_string(*ok.note)) : "ok";
    CT_TRY(context.store->append_audit(audit));
  }
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
    CT_TRY(context.store->remember_idempotent(
        {call.common.idempotency_key, spec.full_name(), call.params_text, to_json(ok, registry_), now}, now - kIdempotencyWindowMs));
  }
  CT_TRY(tx.commit());
  // A write in a session touched it (check_session): its lease is renewed.
  if (spec.needs_session && !context.session.empty()) remember_renewal(context.session);
  if (context.rebind && *context.rebind != request.caller.session) ok.rebind = std::move(*context.rebind);
  if (context.config_changed) refresh_config();
  return ok;
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

Envelope Router::dispatch(const Request& request) {
  auto started = std::chrono::steady_clock::now();
  lock_wait_ms_ = 0;
  auto routed = pipeline::route(registry_, request);
  if (!routed) return failure(std::move(routed.error()));
  const OperationSpec& spec = **routed;
  std::vector<std::string> call_warnings;
  auto ran = run(spec, request, nullptr, &call_warnings);
  Envelope envelope = ran ? std::move(*ran) : failure(std::move(ran.error()));
  // What the call itself should learn (the original CLEO's param names) holds on a failure too.
  if (!ran) envelope.warnings = std::move(call_warnings);
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
  if (request.params["meta"] == json::Value(true)) {
    json::Value meta = json::Value::object();
    meta.set("gateway", tool_name(spec.gateway));
    meta.set("domain", spec.domain);
    meta.set("operation", spec.name);
    meta.set("version", product_version());
    meta.set("timestamp", format_iso8601(clock_->now()));
    meta.set("durationMs", static_cast<double>(static_cast<std::int64_t>(elapsed.count() * 1000)) / 1000.0);
    envelope.meta = std::move(meta);
  }
  return envelope;
}

}  // namespace ct
