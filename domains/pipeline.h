// The stages a call goes through, in order (Router::dispatch strings them together):
//
//   route → validate → store → capability → approval → external step → transaction →
//   idempotency → session → handler → shape → audit → commit
//
// (A reply is shaped before its audit row is written, so that the remembered reply of an
// idempotencyKey is the one sent.) Each stage is a function of what the earlier ones produced, so
// each can be tested on its own; here are those that need nothing of the router (the approval gate
// is approval_gate.h's). The Router keeps only its store connection and what it opened with; the
// caller travels in the Request.
#pragma once

#include <array>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/json.h"
#include "domains/context.h"
#include "domains/params.h"
#include "domains/registry.h"

namespace ct {

struct Request;
struct Envelope;
struct Caller;
class NestedRuns;

namespace pipeline {

/// Router-level params every operation understands: `meta` and `sessionId`; on mutations also
/// `reason` and `idempotencyKey` (docs/architecture.md §3.2). They are taken out before the spec's own
/// validation.
struct CommonParams {
  bool meta = false;
  /// The CLEO session this call runs in, instead of the one its connection is bound to: how a
  /// caller without a connection to bind (an MCP 2026-07-28 stateless request) works in a session.
  std::string session_id;
  std::string reason;
  /// What kind of write the caller means: {category, reasoning?, confidence?, tags?} in that
  /// order, or null. Kept in the call's audit row; system.log filters by it.
  json::Value intent;
  std::string idempotency_key;
};

/// The categories of a write's intent (after seed 002): looking around, planning, refining work,
/// fixing, rolling back, a checkpoint, merging others' work, a migration.
inline constexpr std::array<std::string_view, 8> kIntentCategories = {
    "explore", "plan", "refine", "fix", "rollback", "checkpoint", "merge", "migrate"};
/// At most this many tags on one intent, each a short word.
inline constexpr std::size_t kMaxIntentTags = 10;
inline constexpr std::string_view kIntentTagPattern = "[a-z0-9][a-z0-9._:-]{0,39}";

/// A call that passed routing and validation: what every later stage works on.
struct Call {
  const OperationSpec* spec = nullptr;
  CommonParams common;
  Params params;
  std::string params_text;  // the validated params as compact JSON (idempotency, audit)
  json::Value sent;         // the params as the caller wrote them (before defaults and canonical forms)
  /// One of the spec's dry_run params is set (a check, a dry run): the transaction is rolled
  /// back and nothing is audited, whatever the handler did.
  bool dry_run = false;
  /// Read-only mode let this mutation through because it is a dry run.
  bool read_only = false;
  /// A bulk call (OperationSpec::bulk) names these tasks in `ids`, in order and without repeats;
  /// `params` and `sent` carry the first as `id`. Empty for a call about one task.
  std::vector<std::string> ids;
  /// What the reply tells the caller about the call itself (an original CLEO param name it used).
  std::vector<std::string> warnings;

  bool mutate() const { return spec->gateway == Gateway::Mutate; }
  /// A mutation whose changes are kept (and audited).
  bool writes() const { return mutate() && !dry_run && !read_only; }
};

/// Stage 1: the operation a request names (or names by the original CLEO's name: it runs), or
/// E_INVALID_DOMAIN / E_INVALID_OPERATION (with did-you-mean, aliases included) / E_INVALID_GATEWAY.
Result<const OperationSpec*> route(const Registry& registry, const Request& request);

/// An unknown operation's error suggests `meant` (whose aliases hold the word the caller used: "done",
/// the original CLEO's "release.prepare") in place of the nearest spelling: its name in
/// details.didYouMean and the message, with its domain when that is not `domain`.
void prefer_suggestion(Error& error, const OperationSpec& meant, std::string_view domain);

/// Stage 2: common params, the original CLEO's param names put under ours (Call::warnings), read-only
/// mode (a mutation is refused with E_MUTATION_DISABLED unless it is a dry run) and the spec's own
/// validation.
Result<Call> validate(const OperationSpec& spec, const json::Value& raw, bool read_only);

/// The call of a bulk call that is about task `id` alone, validated as if it had been sent so.
Result<Call> for_id(const Call& bulk, const std::string& id);

/// A transaction that rolls back unless committed: every early return leaves the store clean.
class Transaction {
 public:
  Transaction() = default;
  explicit Transaction(Store* store) : store_(store) {}
  Transaction(Transaction&& other) noexcept : store_(other.store_) { other.store_ = nullptr; }
  Transaction& operator=(Transaction&& other) noexcept;
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  ~Transaction() { rollback(); }

  /// Commits; on failure the transaction is rolled back.
  Result<void> commit();
  void rollback();
  bool open() const { return store_ != nullptr; }

 private:
  Store* store_ = nullptr;
};

/// Runs `read` in a read transaction of its own, rolled back afterwards: for a spec's external
/// step, which runs before the call's transaction opens (and must hold no lock while a program
/// runs).
template <typename F>
auto read_in_own_transaction(Context& context, F&& read) -> decltype(read()) {
  CT_TRY(context.db().begin(TxKind::Read));
  Transaction tx(context.store);
  return read();
}

/// A call its owner cancelled before it reached its commit point (core/cancel.h): it stops there,
/// having changed nothing.
Error cancelled(const OperationSpec& spec);

/// The handler (or external step) stage: `handler` serves `call` — handed `runs` when it nests —
/// an exception it throws turned into E_INTERNAL. Under tests a failure with a code the spec does
/// not declare is E_INTERNAL too: help, docs and agents rely on the declared list.
Result<Reply> serve(const Handler& handler, const Call& call, Context& context, NestedRuns& runs);

/// A CLI call with no session adopts the project's only active session (that no other terminal
/// holds: Caller::never_adopt). Reads the store: call inside a transaction.
Result<void> adopt_session(Context& context, const Caller& caller);

/// The session stage, inside the call's transaction: a session the call names (`named`) must
/// exist, a CLI call adopts one (adopt_session), and a write of the tasks domain is checked
/// against session.enforcement and the bound session. Returns the warnings for the reply.
Result<std::vector<std::string>> check_session(const Call& call, Context& context, const Caller& caller, bool named);

/// The audit row of a call, from what the context recorded (changes, subject) and who called.
void fill_audit(AuditEntry& audit, Context& context, const Call& call);

/// For an operation that runs outside the router's transaction (it opens the store itself:
/// system.migrate, system.store.migrate): its own audit row in `store`, in a write transaction
/// of its own — who called, `operation`, `params`, outcome ok, `changes` and `reason`.
Result<void> append_own_audit(Store& store, Context& context, std::string_view operation, const json::Value& params,
                              std::vector<FieldChange> changes, std::string reason = "");

/// Shapes a handler's reply into the envelope: list projections and the reply budget
/// (`max_reply_bytes` < 0: none), what a kept change's reply echoes of the call left out (unless
/// `leave_out_echoes` is false), warnings (the reply's, its advice_warnings, then `extra_warnings`),
/// page, note. Advice in the data counts towards the budget and the knownHash as `agents` writes it
/// (Registry::agent_writer): as agents receive it.
Envelope shape(const Call& call, Reply reply, std::vector<std::string> extra_warnings, std::int64_t max_reply_bytes,
               const AdviceWriter& agents, bool leave_out_echoes = true);

}  // namespace pipeline
}  // namespace ct
