// session.send, session.inbox, session.ack (issue 53): messages between agents and people. A
// message goes to an agent by its label (the name it works under; its connection's principal
// changes when it restarts), a session, a task's thread (whoever holds the task when they read), an
// epic's participants (the sessions that claimed tasks under it or work in its scope, when sent), a
// person, or everyone. It is kept until nobody needs it: session.gc removes none, and what one
// addressee holds is bounded (messages.maxPerThread). Who sent it is what the transport
// established (principal, session, label), never a param. Messages are not secrets: anyone with
// the store reads them (docs/messages.md). Rules of "me": domains/messages.h.
#include <algorithm>
#include <set>

#include "core/text.h"
#include "domains/claims.h"
#include "domains/messages.h"
#include "domains/session/session_common.h"
#include "engines/rules/memory.h"
#include "engines/store/trust_store.h"

namespace ct::session {
namespace {

constexpr std::int64_t kRateWindowMs = 60'000;
constexpr std::int64_t kParticipantsRead = 5000;  // tasks.start rows read for an epic's participants

/// An address as session.send takes it, resolved: {kind, ref}.
struct Address {
  std::string kind;
  std::string ref;
};

Error bad_address(std::string_view to, std::string why) {
  return Error(ErrorCode::Validation, "cannot send to '" + std::string(to) + "': " + std::move(why))
      .with_fix(call("session.send", {{"to", "T012"}, {"body", "…"}}))
      .with_detail("field", "to");
}

Result<Address> parse_address(Context& context, std::string_view to) {
  const std::string text(trim(to));
  if (text == "all" || text == "everyone") return Address{"all", ""};
  if (text.starts_with("epic:")) {
    auto id = normalize_task_id(text.substr(5));
    if (!id) return fail(bad_address(to, "epic:<task id>, e.g. epic:T001"));
    CT_TRY_ASSIGN(std::optional<Task> task, context.db().get_task(*id));
    if (!task) return fail(Error(ErrorCode::NotFound, "Task " + *id + " not found").with_detail("field", "to"));
    return Address{"epic", *id};
  }
  if (auto id = normalize_task_id(text)) {
    CT_TRY_ASSIGN(std::optional<Task> task, context.db().get_task(*id));
    if (!task) return fail(Error(ErrorCode::NotFound, "Task " + *id + " not found").with_detail("field", "to"));
    return Address{"task", *id};
  }
  if (text.starts_with("ses_")) {
    CT_TRY_ASSIGN(std::optional<Session> session, context.db().get_session(text));
    if (!session)
      return fail(Error(ErrorCode::SessionNotFound, "Session " + text + " not found")
                      .with_fix(call("session.list", {{"status", "active"}}))
                      .with_detail("field", "to"));
    return Address{"session", text};
  }
  if (text.starts_with("person:")) {
    if (text.size() == 7) return fail(bad_address(to, "person:<user>"));
    return Address{"person", text};
  }
  std::string label = text.starts_with("agent:") ? text.substr(6) : text;
  if (label.empty() || label.size() > 100 || label.find_first_of(" \t\r\n") != std::string::npos)
    return fail(bad_address(to, "an agent's label, a task id, epic:<id>, a session id, person:<user> or all"));
  return Address{"agent", label};
}

/// The sessions an epic's message reaches: those that started a task under it (the audit trail),
/// that hold one now, or that work in its scope.
Result<std::vector<std::string>> participants(Context& context, const std::string& epic) {
  SessionEngine engine(context.db(), *context.config, 0, nullptr);  // reads only
  CT_TRY_ASSIGN(Scope scope, parse_scope("subtree:" + epic));
  CT_TRY_ASSIGN(std::set<std::string> tasks, engine.tasks_of(scope));
  std::set<std::string> sessions;
  AuditQuery started;
  started.operation = "tasks.start";
  started.limit = kParticipantsRead;
  CT_TRY_ASSIGN(std::vector<AuditEntry> rows, context.db().read_audit(started));
  for (const auto& row : rows)
    if (!row.session.empty() && tasks.contains(row.task_id)) sessions.insert(row.session);
  CT_TRY_ASSIGN(auto claims, claims_by_task(context));
  for (const auto& [task, claim] : claims)
    if (!claim.session.empty() && tasks.contains(task)) sessions.insert(claim.session);
  SessionQuery active;
  active.statuses = {SessionStatus::Active, SessionStatus::Suspended};
  CT_TRY_ASSIGN(std::vector<Session> open, context.db().list_sessions(active));
  for (const auto& session : open)
    if (session.scope == "epic:" + epic || session.scope == "subtree:" + epic) sessions.insert(session.id);
  return std::vector<std::string>(sessions.begin(), sessions.end());
}

/// The inboxes (agent labels, session ids, a person's principal; "*" for everyone) a message to
/// `address` reaches now: a task's by whoever holds it, an epic's by its participants.
Result<std::vector<std::string>> inboxes_reached(Context& context, const Address& address,
                                                 const std::vector<std::string>& recipients) {
  std::set<std::string> out;
  std::vector<std::string> sessions = recipients;
  if (address.kind == "all") return std::vector<std::string>{"*"};
  if (address.kind == "agent" || address.kind == "person") out.insert(address.ref);
  if (address.kind == "session") sessions.push_back(address.ref);
  if (address.kind == "task") {
    CT_TRY_ASSIGN(std::optional<Claim> claim, context.db().claim_on(address.ref));
    if (claim && !claim->session.empty()) sessions.push_back(claim->session);
  }
  for (const auto& id : sessions) {
    out.insert(id);
    CT_TRY_ASSIGN(std::optional<Session> session, context.db().get_session(id));
    if (session && !session->agent.empty()) out.insert(session->agent);
  }
  return std::vector<std::string>(out.begin(), out.end());
}

struct SendArgs {
  std::string to;
  std::string body;
};

Result<Reply> send(Context& context, const SendArgs& args) {
  const std::string body = memory::normalized_body(args.body);
  const std::int64_t max_chars = context.config->get_int("messages.maxChars");
  if (body.empty())
    return fail(Error(ErrorCode::Validation, "a message needs a body").with_detail("field", "body"));
  if (static_cast<std::int64_t>(utf8_length(body)) > max_chars)
    return fail(Error(ErrorCode::Validation, "the body is " + std::to_string(utf8_length(body)) +
                                                 " characters; messages.maxChars allows " + std::to_string(max_chars))
                    .with_fix("send it shorter, or in parts")
                    .with_detail("field", "body"));
  if (has_control_characters(body, /*allow_newlines=*/true))
    return fail(Error(ErrorCode::Validation, "the body holds control or bidirectional-override characters")
                    .with_detail("field", "body"));
  CT_TRY_ASSIGN(Address address, parse_address(context, args.to));
  const TimeMs now = context.now();
  const std::int64_t rate = context.config->get_int("messages.perMinute");
  CT_TRY_ASSIGN(std::int64_t recent, context.db().sent_since(context.principal.id, now - kRateWindowMs, rate));
  if (recent >= rate)
    return fail(Error(ErrorCode::RateLimited, "this caller sent the " + std::to_string(rate) +
                                                  " messages in a minute messages.perMinute allows")
                    .with_fix("wait, then send again")
                    .retry_after(60));
  const std::int64_t most = context.config->get_int("messages.maxPerThread");
  CT_TRY_ASSIGN(std::int64_t held, context.db().thread_size(address.kind, address.ref, most));
  if (held >= most)
    return fail(Error(ErrorCode::Validation, "'" + std::string(trim(args.to)) + "' holds the " + std::to_string(most) +
                                                 " messages messages.maxPerThread allows")
                    .with_fix(config_set_fix("messages.maxPerThread", json::Value(most * 2)))
                    .with_detail("field", "to"));
  std::vector<std::string> recipients;
  if (address.kind == "epic") {
    CT_TRY_ASSIGN(recipients, participants(context, address.ref));
  }
  Message message;
  message.at = now;
  message.to_kind = address.kind;
  message.to_ref = address.ref;
  message.body = body;
  message.from_principal = context.principal.id;
  message.from_session = context.session;
  if (!context.is_person()) {
    CT_TRY_ASSIGN(message.from_agent, context.agent_name());
  }
  CT_TRY(context.db().add_message(message, recipients));
  // Audited with the body in the row's params (bounded by messages.maxChars: what was said is the
  // record), and as a change of each inbox it reaches now ("inbox/<label or session>", "inbox/*"
  // for everyone) and of its task: what subscribers of cleo://inbox/… and cleo://task/… are told.
  const std::string id = message_id(message.num);
  CT_TRY_ASSIGN(std::vector<std::string> inboxes, inboxes_reached(context, address, recipients));
  if (context.audit) {
    context.audit->task_id = address.kind == "task" || address.kind == "epic" ? address.ref : id;
    if (address.kind == "task") context.record({address.ref, "thread", json::Value(), json::Value(id)});
    for (const auto& inbox : inboxes) context.record({"inbox/" + inbox, "message", json::Value(), json::Value(id)});
  }
  json::Value data = json::Value::object();
  data.set("id", id);
  data.set("to", address_of(message));
  if (address.kind == "epic") data.set("recipients", static_cast<std::int64_t>(recipients.size()));
  return Reply::of(std::move(data));
}

struct InboxArgs {
  std::int64_t since = 0;
  bool unread = false;
  std::int64_t limit = 20;
  std::optional<std::string> of;
};

/// The reader an inbox call reads as: the caller, or (a person's `of`) a session or an agent label.
Result<InboxReader> inbox_reader(Context& context, const std::optional<std::string>& of) {
  if (!of) return caller_reader(context);
  if (!context.is_person()) {
    // An agent names its own (the inbox resource does): its session, or its label.
    CT_TRY_ASSIGN(InboxReader own, caller_reader(context));
    if (*of == own.session || (!own.agent.empty() && (*of == own.agent || *of == "agent:" + own.agent))) return own;
  }
  if (!context.is_person())
    return fail(Error(ErrorCode::MutationDisabled, "an agent reads its own inbox; only a person reads another's")
                    .with_fix(call("session.inbox", {}))
                    .with_detail("field", "of"));
  if (of->starts_with("ses_")) {
    auto engine = sessions(context);
    CT_TRY_ASSIGN(Session session, engine.get(*of));
    return session_reader(context, session);
  }
  InboxReader reader;
  reader.agent = of->starts_with("agent:") ? of->substr(6) : *of;
  reader.key = "agent:" + reader.agent;
  return reader;
}

Result<Reply> inbox(Context& context, const InboxArgs& args) {
  CT_TRY_ASSIGN(InboxReader reader, inbox_reader(context, args.of));
  InboxQuery query;
  query.since = args.since;
  query.unread_only = args.unread;
  query.limit = args.limit + 1;  // one more says there are more
  CT_TRY_ASSIGN(std::vector<Message> found, context.db().inbox(reader, query));
  const bool more = static_cast<std::int64_t>(found.size()) > args.limit;
  if (more) found.pop_back();
  // A page from the start that was not cut holds every unread message (unread come first): no count.
  UnreadCount unread;
  if (args.since == 0 && !more) {
    unread.count = std::ranges::count_if(found, [](const Message& message) { return !message.read; });
  } else {
    CT_TRY_ASSIGN(unread, context.db().unread(reader, 0, kUnreadCounted));
  }
  json::Value rows = json::Value::array();
  std::int64_t next = args.since;
  for (const auto& message : found) {
    rows.push_back(message_json(message, true));
    next = std::max(next, message.num);
  }
  json::Value data = json::Value::object();
  data.set("messages", std::move(rows));
  data.set("unread", unread.count);
  if (unread.more) data.set("unreadAtLeast", true);
  data.set("next", next);
  if (more) data.set("more", true);
  return Reply::noted(std::move(data), no_data_if(found.empty()));
}

struct AckArgs {
  std::vector<std::string> ids;
  std::int64_t up_to = 0;
};

Result<Reply> ack(Context& context, const AckArgs& args) {
  if (args.ids.empty() && args.up_to == 0)
    return fail(Error(ErrorCode::InvalidParams, "name the messages read: ids, or upTo (the inbox's next)")
                    .with_fix(call("session.ack", {{"upTo", 12}})));
  std::vector<std::int64_t> nums;
  for (const auto& id : args.ids) {
    auto num = prefixed_number(id, "MSG");
    if (!num) return fail(Error(ErrorCode::Validation, "'" + id + "' is not a message id (MSG012)").with_detail("field", "ids"));
    nums.push_back(*num);
  }
  CT_TRY_ASSIGN(InboxReader reader, caller_reader(context));
  CT_TRY_ASSIGN(std::int64_t marked, context.db().acknowledge(reader, nums, args.up_to, context.now()));
  CT_TRY_ASSIGN(UnreadCount unread, context.db().unread(reader, 0, kUnreadCounted));
  if (context.audit && marked > 0)
    context.record({reader.key, "read", json::Value(), json::Value(marked)});
  json::Value data = json::Value::object();
  data.set("acknowledged", marked);
  data.set("unread", unread.count);
  if (unread.more) data.set("unreadAtLeast", true);
  return Reply::noted(std::move(data), no_change_if(marked == 0));
}

}  // namespace

void register_session_messages(Registry& registry) {
  const auto send_args = bind(
      field(&SendArgs::to, {.name = "to", .type = ParamType::String, .required = true, .max = 200,
                            .description = "An agent's label, a task id (its thread), epic:<id> (its participants), "
                                           "a session id, person:<user>, or all",
                            .positional = true, .single_line = true}),
      field(&SendArgs::body, {.name = "body", .type = ParamType::String, .required = true, .max = 20000,
                              .description = "The message (messages.maxChars)", .positional = true}));
  registry.add({.domain = "session", .name = "send", .gateway = Gateway::Mutate,
                .summary = "Send a message to an agent, a task's thread, an epic, a session or all",
                .params = send_args.specs(),
                .returns = "{id,to,recipients?} (recipients: the sessions an epic's message reaches)",
                .errors = {ErrorCode::Validation, ErrorCode::NotFound, ErrorCode::SessionNotFound,
                           ErrorCode::RateLimited},
                .examples = {{R"({"to":"T012","body":"the API changed: see T015"})", "tell whoever works on T012"},
                             {R"({"to":"reviewer","body":"T012 is ready for review"})", "tell an agent by its label"}},
                .tier = 2, .dashboard = true, .handler = send_args.handler(send)});
  const auto inbox_args = bind(
      field(&InboxArgs::since, {.name = "since", .type = ParamType::Int, .default_json = "0", .min = 0,
                                .description = "Only messages after this one (the last reply's next)"}),
      field(&InboxArgs::unread, {.name = "unread", .type = ParamType::Bool, .description = "Only unread messages"}),
      field(&InboxArgs::limit, {.name = "limit", .type = ParamType::Int, .default_json = "20", .min = 1, .max = 100,
                                .description = "Messages at most"}),
      field(&InboxArgs::of, {.name = "of", .type = ParamType::String, .max = 100,
                             .description = "Whose inbox (a session id or an agent's label): your own, or, for people, anyone's",
                             .single_line = true}));
  registry.add({.domain = "session", .name = "inbox", .gateway = Gateway::Query,
                .summary = "Your messages, unread first",
                .params = inbox_args.specs(),
                .returns = "{messages[{id,at,from,to,body,read?}] (unread first, each oldest first), unread (100 at most "
                           "counted: unreadAtLeast then), next (pass it as since, or to session.ack upTo), more?}; "
                           "E_NO_DATA note when none",
                .errors = {ErrorCode::MutationDisabled, ErrorCode::SessionNotFound},
                .examples = {{R"({})", "what was sent to me?"}, {R"({"since":12,"unread":true})", "only what is new"}},
                .idempotent = true, .tier = 2, .handler = inbox_args.handler(inbox)});
  const auto ack_args = bind(
      field(&AckArgs::ids, {.name = "ids", .type = ParamType::Array, .max = 100, .pattern = "^MSG[0-9]+$",
                            .item_max = 24, .description = "Messages read", .positional = true}),
      field(&AckArgs::up_to, {.name = "upTo", .type = ParamType::Int, .default_json = "0", .min = 0,
                              .description = "Every message of yours up to this one (the inbox's next)"}));
  registry.add({.domain = "session", .name = "ack", .gateway = Gateway::Mutate,
                .summary = "Mark messages read",
                .params = ack_args.specs(),
                .returns = "{acknowledged,unread,unreadAtLeast?}; E_NO_CHANGE note when they were read already",
                .errors = {ErrorCode::Validation, ErrorCode::InvalidParams},
                .examples = {{R"({"upTo":12})", "everything up to the inbox's next"}, {R"({"ids":["MSG004"]})", "one message"}},
                .idempotent = true, .tier = 2, .handler = ack_args.handler(ack)});
}

}  // namespace ct::session
