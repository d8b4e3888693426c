#include "domains/pipeline.h"

#include "domains/claims.h"
#include "domains/messages.h"

#include <algorithm>
#include <cstdio>
#include <exception>

#include "core/json_parse.h"
#include "core/pattern.h"
#include "core/sha256.h"
#include "core/text.h"
#include "domains/call_check.h"
#include "domains/envelope.h"
#include "domains/original_names.h"
#include "domains/projection.h"
#include "domains/router.h"
#include "engines/rules/session_engine.h"

namespace ct::pipeline {
namespace {

/// As domains/params.h: E_INVALID_PARAMS for a value of the wrong type, E_VALIDATION for one of
/// the right type that breaks a data rule.
Error common_param_error(std::string_view field, std::string message, ErrorCode code = ErrorCode::InvalidParams) {
  return Error(code, std::string(field) + ": " + std::move(message)).with_detail("field", std::string(field));
}

/// A string common param: valid UTF-8, no control characters, at most `max_chars` characters.
Result<std::string> common_string(const json::Value& value, std::string_view field, std::size_t max_chars) {
  if (!value.is_string()) return fail(common_param_error(field, "expected string"));
  const std::string& text = value.as_string();
  if (!valid_utf8(text)) return fail(common_param_error(field, "text is not valid UTF-8", ErrorCode::Validation));
  if (auto c = first_control_character(text, /*allow_newlines=*/true))
    return fail(common_param_error(field, code_point_name(*c) + " is not allowed: control characters and "
                                          "bidirectional overrides are refused in text", ErrorCode::Validation));
  if (utf8_length(text) > max_chars)
    return fail(common_param_error(field, "must be at most " + std::to_string(max_chars) + " characters",
                                   ErrorCode::Validation));
  return text;
}

/// A mutation's intent: {category, reasoning?, confidence?, tags?}, canonical (keys in that order,
/// tags without repeats).
Result<json::Value> take_intent(const json::Value& value) {
  if (!value.is_object()) return fail(common_param_error("intent", "expected an object {category, reasoning?, confidence?, tags?}"));
  for (const auto& [key, item] : value.as_object())
    if (key != "category" && key != "reasoning" && key != "confidence" && key != "tags")
      return fail(common_param_error("intent", "unknown key " + echo(key) + "; intent takes category, reasoning, "
                                               "confidence and tags"));
  json::Value out = json::Value::object();
  const json::Value& category = value["category"];
  std::vector<std::string> categories(kIntentCategories.begin(), kIntentCategories.end());
  if (!category.is_string())
    return fail(common_param_error("intent.category", "expected one of " + join(categories, ", ")));
  if (std::find(categories.begin(), categories.end(), category.as_string()) == categories.end())
    return fail(common_param_error("intent.category", "expected one of " + join(categories, ", ") + ", got " +
                                                          echo(category.as_string()), ErrorCode::Validation)
                    .with_choices(category.as_string(), categories));
  out.set("category", category);
  if (const json::Value* reasoning = value.find("reasoning"); reasoning && !reasoning->is_null()) {
    CT_TRY_ASSIGN(std::string text, common_string(*reasoning, "intent.reasoning", 2000));
    if (!text.empty()) out.set("reasoning", std::move(text));
  }
  if (const json::Value* confidence = value.find("confidence"); confidence && !confidence->is_null()) {
    if (!confidence->is_number()) return fail(common_param_error("intent.confidence", "expected a number from 0 to 1"));
    const double number = confidence->is_int() ? static_cast<double>(confidence->as_int()) : confidence->as_double();
    if (!(number >= 0.0 && number <= 1.0))
      return fail(common_param_error("intent.confidence", "must be from 0 to 1", ErrorCode::Validation));
    out.set("confidence", number);
  }
  if (const json::Value* tags = value.find("tags"); tags && !tags->is_null()) {
    if (!tags->is_array()) return fail(common_param_error("intent.tags", "expected an array of short words"));
    if (tags->size() > kMaxIntentTags)
      return fail(common_param_error("intent.tags", "takes at most " + std::to_string(kMaxIntentTags) + " tags",
                                     ErrorCode::Validation));
    static const Pattern tag_pattern = *Pattern::compile(kIntentTagPattern);
    std::vector<std::string> kept;
    for (const auto& tag : tags->as_array()) {
      if (!tag.is_string() || !tag_pattern.matches(tag.as_string()))
        return fail(common_param_error("intent.tags", (tag.is_string() ? echo(tag.as_string()) : std::string("a tag")) +
                                                          " does not match " + std::string(kIntentTagPattern),
                                       ErrorCode::Validation));
      if (std::find(kept.begin(), kept.end(), tag.as_string()) == kept.end()) kept.push_back(tag.as_string());
    }
    if (!kept.empty()) out.set("tags", json::Value::array_of(kept));
  }
  return out;
}

Result<CommonParams> take_common_params(const OperationSpec& spec, json::Value& params) {
  CommonParams common;
  if (!params.is_object()) return common;
  if (const json::Value* meta = params.find("meta")) {
    if (!meta->is_bool() && !meta->is_null())
      return fail(Error(ErrorCode::InvalidParams, "meta: expected boolean").with_detail("field", "meta"));
    common.meta = meta->is_bool() && meta->as_bool();
    params.erase("meta");
  }
  if (const json::Value* session = params.find("sessionId"); session && !session->is_null()) {
    CT_TRY_ASSIGN(common.session_id, common_string(*session, "sessionId", 128));
    if (common.session_id.empty())
      return fail(common_param_error("sessionId", "must not be empty", ErrorCode::Validation));
  }
  params.erase("sessionId");
  if (spec.gateway == Gateway::Mutate) {
    if (const json::Value* reason = params.find("reason"); reason && !reason->is_null()) {
      CT_TRY_ASSIGN(common.reason, common_string(*reason, "reason", 500));
    }
    // An operation that declares `reason` itself (tasks.delete) also receives it.
    if (!spec.find_param("reason")) params.erase("reason");
    if (const json::Value* intent = params.find("intent"); intent && !intent->is_null()) {
      CT_TRY_ASSIGN(common.intent, take_intent(*intent));
    }
    params.erase("intent");
    if (const json::Value* key = params.find("idempotencyKey"); key && !key->is_null()) {
      CT_TRY_ASSIGN(common.idempotency_key, common_string(*key, "idempotencyKey", 128));
      if (common.idempotency_key.empty())
        return fail(common_param_error("idempotencyKey", "must not be empty", ErrorCode::Validation));
    }
    params.erase("idempotencyKey");
  }
  return common;
}

}  // namespace

void prefer_suggestion(Error& error, const OperationSpec& meant, std::string_view domain) {
  std::string suffix;
  if (const json::Value& spelled = error.details["didYouMean"]; spelled.is_string())
    suffix = " (did you mean '" + spelled.as_string() + "'?)";
  if (!suffix.empty() && error.message.ends_with(suffix)) error.message.resize(error.message.size() - suffix.size());
  std::string name(meant.domain == domain ? std::string(meant.name) : meant.full_name());
  error.message += " (did you mean '" + name + "'?)";
  error.details.set("didYouMean", std::move(name));
}

Result<const OperationSpec*> route(const Registry& registry, const Request& request) {
  const OperationSpec* spec = registry.find(request.domain, request.operation);
  // A name of the original CLEO runs the operation it names (the router warns with ours).
  if (!spec) spec = registry.find_original(request.domain, request.operation);
  bool known_domain = spec != nullptr || std::any_of(registry.operations().begin(), registry.operations().end(),
                                                      [&](const auto& op) { return op.domain == request.domain; });
  if (!known_domain) {
    std::vector<std::string> domains = registry.domains(request.gateway);
    Error error = Error(ErrorCode::InvalidDomain, "unknown domain " + echo(request.domain))
                      .with_choices(request.domain, domains);
    const json::Value& guess = error.details["didYouMean"];
    error.fix = guess.is_string() ? "use domain '" + guess.as_string() + "'"
                                  : "use one of the domains in error.details.valid";
    return fail(std::move(error));
  }
  if (!spec) {
    Error error = Error(ErrorCode::InvalidOperation, "unknown operation " + echo(request.domain + "." +
                                                         request.operation) + " for " +
                                                         std::string(tool_name(request.gateway)))
                      .with_choices(request.operation, registry.operation_names(request.domain, request.gateway));
    // A word callers reach for ("done", the original CLEO's "release.prepare") names its operation
    // better than spelling does.
    const OperationSpec* meant = registry.find_alias(request.domain, request.operation, request.gateway);
    if (meant) prefer_suggestion(error, *meant, request.domain);
    const json::Value& guess = error.details["didYouMean"];
    const OperationSpec* suggested = meant                ? meant
                                     : guess.is_string() ? registry.find(request.domain, guess.as_string())
                                                         : nullptr;
    error.fix = suggested ? suggested->example_call()
                          : Advice("use one of the operations in error.details.valid");
    return fail(std::move(error));
  }
  if (spec->gateway != request.gateway) {
    // Named by the original CLEO's name, it is refused as the operation it runs would be.
    std::string named = spec->domain == request.domain && spec->name == request.operation
                            ? spec->full_name()
                            : request.domain + "." + request.operation + " (the original CLEO's name of " +
                                  spec->full_name() + ")";
    Error error(ErrorCode::InvalidGateway,
                named + " is a " + std::string(to_string(spec->gateway)) + " operation; call it through " +
                    std::string(tool_name(spec->gateway)));
    error.with_fix(spec->example_call());  // written as a call through the right tool
    return fail(std::move(error).with_detail("tool", std::string(tool_name(spec->gateway))));
  }
  return spec;
}

Result<Call> validate(const OperationSpec& spec, const json::Value& raw, bool read_only) {
  json::Value params = raw;
  CT_TRY_ASSIGN(CommonParams common, take_common_params(spec, params));
  // The original CLEO's names of params (taskId for id) are put under ours, each with a warning.
  CT_TRY_ASSIGN(std::vector<std::string> warnings, original_names::take_params(spec, params));
  // Read-only mode refuses mutations, except a call whose dry_run param (a check, a dry run) is
  // set: it writes nothing, so it runs — its transaction is rolled back, unaudited.
  const bool read_only_mutate = spec.gateway == Gateway::Mutate && read_only;
  auto dry_run_param = std::find_if(spec.params.begin(), spec.params.end(), [](const ParamSpec& p) { return p.dry_run; });
  auto refuse_mutation = [&]() {
    Error error(ErrorCode::MutationDisabled, "this server is read-only; " + spec.full_name() + " is disabled");
    error.fix = "restart without --read-only (or unset CLEO_READ_ONLY) to allow changes";
    if (dry_run_param != spec.params.end())
      error.fix += "; with " + std::string(dry_run_param->name) + ": true it runs here and changes nothing";
    return fail(std::move(error));
  };
  if (read_only_mutate && dry_run_param == spec.params.end()) return refuse_mutation();
  std::vector<std::string> ids;
  if (spec.bulk && params.is_object() && params.contains("ids")) {
    // Several tasks: validated as a list, then the call is the first one's (its `id`).
    if (params.contains("id"))
      return fail(common_param_error("ids", "give id or ids, not both").with_fix(
          "put every task in ids: " + spec.call_with(R"({"ids":["T001","T002"]})")));
    CT_TRY_ASSIGN(json::Value listed, Params::check(spec, "ids", params["ids"]));
    for (const auto& id : listed.as_array())
      if (std::find(ids.begin(), ids.end(), id.as_string()) == ids.end()) ids.push_back(id.as_string());
    params.erase("ids");
    params.set("id", ids.front());
  }
  auto checked = Params::validate(spec, params);
  if (read_only_mutate && (!checked || !checked->flag(dry_run_param->name))) return refuse_mutation();
  if (!checked) return std::unexpected(std::move(checked.error()));
  Call call;
  call.spec = &spec;
  call.common = std::move(common);
  call.params = std::move(*checked);
  call.params_text = call.params.json().dump();
  call.sent = std::move(params);
  for (const auto& param : spec.params)
    if (param.dry_run && call.params.flag(param.name)) call.dry_run = true;
  call.read_only = read_only_mutate;
  if (!ids.empty()) {
    // A remembered reply answers only the same tasks.
    json::Value keyed = call.params.json();
    keyed.set("ids", json::Value::array_of(ids));
    call.params_text = keyed.dump();
  }
  call.ids = std::move(ids);
  call.warnings = std::move(warnings);
  return call;
}

Result<Call> for_id(const Call& bulk, const std::string& id) {
  Call call = bulk;
  call.ids.clear();
  call.sent.set("id", id);
  CT_TRY_ASSIGN(call.params, Params::validate(*bulk.spec, call.sent));
  call.params_text = call.params.json().dump();
  return call;
}

Transaction& Transaction::operator=(Transaction&& other) noexcept {
  if (this != &other) {
    rollback();
    store_ = other.store_;
    other.store_ = nullptr;
  }
  return *this;
}

Result<void> Transaction::commit() {
  if (!store_) return fail(ErrorCode::Internal, "commit without a transaction");
  Store* store = store_;
  store_ = nullptr;
  auto committed = store->commit();
  if (!committed) store->rollback();
  return committed;
}

void Transaction::rollback() {
  if (store_) store_->rollback();
  store_ = nullptr;
}

Result<void> append_own_audit(Store& store, Context& context, std::string_view operation, const json::Value& params,
                              std::vector<FieldChange> changes, std::string reason) {
  AuditEntry audit;
  audit.at = context.now();
  audit.session = context.session;
  audit.agent = context.agent;
  audit.operation = std::string(operation);
  audit.params = params;
  audit.outcome = "ok";
  audit.reason = std::move(reason);
  audit.changes = std::move(changes);
  CT_TRY(store.begin(TxKind::Write));
  if (auto appended = store.append_audit(audit); !appended) {
    store.rollback();
    return fail(std::move(appended.error()));
  }
  return store.commit();
}

Error cancelled(const OperationSpec& spec) {
  Error error(ErrorCode::General, spec.full_name() + " was cancelled before it changed anything");
  error.fix = "call it again to run it";
  return std::move(error).with_detail("cancelled", true);
}

Result<Reply> serve(const Handler& handler, const Call& call, Context& context, NestedRuns& runs) {
  Result<Reply> reply = [&]() -> Result<Reply> {
    try {
      return handler(context, call.params, runs);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "ct: internal error in %s: %s\n", call.spec->full_name().c_str(), e.what());
      return fail(ErrorCode::Internal, "internal error in " + call.spec->full_name() + ": " + e.what());
    }
  }();
  if (!reply && checking_contracts() && !call.spec->declares(reply.error().code)) {
    std::fprintf(stderr, "ct: %s answered %s, which its spec does not declare\n", call.spec->full_name().c_str(),
                 std::string(to_string(reply.error().code)).c_str());
    reply = fail(ErrorCode::Internal, call.spec->full_name() + " answered undeclared " +
                                          std::string(to_string(reply.error().code)) + ": " + reply.error().message);
  }
  return reply;
}

Result<void> adopt_session(Context& context, const Caller& caller) {
  if (context.session.empty() && caller.adopt_only_active_session) {
    CT_TRY_ASSIGN(std::vector<ActiveSession> sessions,
                  context.store->active_sessions(static_cast<std::int64_t>(caller.never_adopt.size()) + 2));
    // Another caller's session (bound to another terminal, or another principal's) is never taken over.
    std::erase_if(sessions, [&](const ActiveSession& s) {
      return std::find(caller.never_adopt.begin(), caller.never_adopt.end(), s.id) != caller.never_adopt.end() ||
             !SessionEngine::check_owner(Session{.id = s.id, .owner = s.owner}, caller.principal.id);
    });
    if (sessions.size() == 1) context.session = sessions.front().id;
  }
  return {};
}

Result<std::vector<std::string>> check_session(const Call& call, Context& context, const Caller& caller, bool named) {
  const OperationSpec& spec = *call.spec;
  if (!context.store) return std::vector<std::string>{};
  if (named && !spec.needs_session) {
    // A session the call names must exist, whatever the call does in it (writes check more below).
    SessionEngine sessions(*context.store, *context.config, 0, nullptr);
    CT_TRY(sessions.get(context.session));
  }
  CT_TRY(adopt_session(context, caller));
  // A write runs only in the caller's own session: an agent naming another's (its id is listed by
  // session.list) is refused; a person may act in any (the dashboard on an agent's session).
  // What the session was told to hear (its claim taken over) comes with its next call; a write
  // (inside the call's transaction) clears it. One read of the session serves both.
  std::vector<std::string> told;
  if (!context.session.empty()) {
    CT_TRY_ASSIGN(std::optional<Session> session, context.store->get_session(context.session));
    if (session && call.writes() && !context.is_person()) CT_TRY(SessionEngine::check_owner(*session, caller.principal.id));
    if (session) {
      // Heard once its owner writes (a person acting in an agent's session leaves it for the agent).
      const bool heard = call.writes() && (session->owner.empty() || session->owner == caller.principal.id);
      CT_TRY_ASSIGN(std::optional<std::string> notice, session_notice(context, *session, heard));
      if (notice) told.push_back(std::move(*notice));
      // Messages sent to it since it was last told (domains/messages.h): a line, not their bodies.
      // Not in the replies that read or acknowledge them.
      if (spec.domain != "session" || (spec.name != "inbox" && spec.name != "ack")) {
        CT_TRY_ASSIGN(std::optional<std::string> messages, inbox_notice(context, *session, heard));
        if (messages) told.push_back(std::move(*messages));
      }
    }
  }
  if (!spec.needs_session) return told;
  // The clock is read only when a session is touched (a stepping test clock stays in step).
  SessionEngine sessions(*context.store, *context.config, context.session.empty() ? 0 : context.now(), nullptr);
  CT_TRY_ASSIGN(std::vector<std::string> warnings, sessions.check_write(context.session));
  warnings.insert(warnings.begin(), told.begin(), told.end());
  return warnings;
}

void fill_audit(AuditEntry& audit, Context& context, const Call& call) {
  audit.at = context.now();
  audit.session = context.session;
  audit.agent = context.agent;
  audit.principal = context.principal.id;
  // Writes record who made them: the agent named when the session started wins.
  if (!context.session.empty() && context.store && !context.agent_is_fixed) {
    if (auto session = context.store->get_session(context.session); session && *session && !(*session)->agent.empty())
      audit.agent = (*session)->agent;
  }
  audit.operation = call.spec->full_name();
  // What the handler resolved (tasks.undo: the rows it took back) joins what the caller sent.
  json::Value params = call.params.json();
  if (audit.params.is_object())
    for (const auto& [key, value] : audit.params.as_object())
      if (!params.contains(key)) params.set(key, value);
  audit.params = std::move(params);
  audit.reason = call.common.reason;
  audit.intent = call.common.intent;
  if (audit.task_id.empty()) {
    if (auto id = call.params.opt_str("id")) audit.task_id = *id;
  }
  // A task call that names no task but changed exactly one (tasks.add: the task it created) is
  // about that task.
  if (audit.task_id.empty() && call.spec->domain == "tasks" && !audit.changes.empty() && !audit.changes.front().task_id.empty() &&
      std::all_of(audit.changes.begin(), audit.changes.end(),
                  [&](const FieldChange& change) { return change.task_id == audit.changes.front().task_id; }))
    audit.task_id = audit.changes.front().task_id;
}

namespace {
/// knownHash (projection.h: known_hash_param): the reply's hash in _meta, or {unchanged:true}.
void answer_known_hash(const Params& params, Envelope& envelope, const AdviceWriter& agents) {
  std::optional<std::string> known = params.opt_str("knownHash");
  if (!known) return;
  std::string hashed;
  write_json(hashed, envelope.data, agents);
  if (envelope.page) hashed += "|" + std::to_string(envelope.page->total) + (envelope.page->total_at_least ? "+" : "") + "|" + std::to_string(envelope.page->has_more());
  std::string hash = sha256_hex(hashed).substr(0, 16);
  if (*known == hash) {
    envelope.data = json::Value::object();
    envelope.data.set("unchanged", true);
    envelope.page.reset();
  }
  if (!envelope.meta.is_object()) envelope.meta = json::Value::object();
  envelope.meta.set("hash", std::move(hash));
}
}  // namespace

Envelope shape(const Call& call, Reply reply, std::vector<std::string> extra_warnings, std::int64_t max_reply_bytes,
               const AdviceWriter& agents, bool leave_out_echoes) {
  if (call.spec->list_like())
    shape_list_reply(*call.spec, call.params, reply, max_reply_bytes < 0 ? INT64_MAX : max_reply_bytes, agents);
  if (leave_out_echoes && call.writes()) drop_echoes(call.sent, reply.data);
  Envelope ok;
  ok.data = std::move(reply.data);
  ok.warnings.reserve(reply.warnings.size() + reply.advice_warnings.size() + extra_warnings.size());
  for (auto& warning : reply.warnings) ok.warnings.emplace_back(std::move(warning));
  for (auto& advice : reply.advice_warnings) ok.warnings.push_back(std::move(advice));
  for (auto& warning : extra_warnings) ok.warnings.emplace_back(std::move(warning));
  ok.page = reply.page;
  ok.note = reply.note;
  if (call.spec->known_hash) answer_known_hash(call.params, ok, agents);
  return ok;
}

}  // namespace ct::pipeline
