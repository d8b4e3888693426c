#include "domains/messages.h"

#include "core/clock.h"
#include "core/text.h"
#include "engines/store/store.h"
#include "engines/store/trust_store.h"

namespace ct {
namespace {

constexpr std::int64_t kThreadShown = 3;      // tasks.show (full record): the newest messages of a task's thread
constexpr std::size_t kThreadChars = 160;     // each body there, clipped

InboxReader reader_of(std::string session, std::string agent, std::string task, const Principal& principal) {
  InboxReader reader;
  reader.session = std::move(session);
  reader.agent = std::move(agent);
  reader.task = std::move(task);
  // What it sent is not its inbox's: a person's principal and an MCP connection's are its own; the
  // CLI's agents of one host share theirs, and are told apart by session and label.
  if (!principal.id.starts_with("agent:cli:")) reader.sender = principal.id;
  if (principal.is_person()) {
    reader.principal = principal.id;
    reader.key = principal.id;
  } else if (!reader.agent.empty()) {
    reader.key = "agent:" + reader.agent;
  } else if (!reader.session.empty()) {
    reader.key = "session:" + reader.session;
  } else {
    reader.key = principal.id;
  }
  return reader;
}

/// Who owns `session` (domains/principal.h: "person:…" is a person).
Principal owner_of(const Session& session) {
  return {session.owner.starts_with("person:") ? Principal::Kind::Person : Principal::Kind::Agent, session.owner, ""};
}

}  // namespace

std::string message_id(std::int64_t num) { return prefixed_id("MSG", num); }

Result<InboxReader> caller_reader(Context& context) {
  if (!context.session.empty()) {
    CT_TRY_ASSIGN(std::optional<Session> session, context.db().get_session(context.session));
    if (session) {
      CT_TRY_ASSIGN(std::optional<std::string> focus, context.db().get_focus(session->id));
      return reader_of(session->id, session->agent, focus.value_or(""), context.principal);
    }
  }
  return reader_of("", context.is_person() ? std::string() : context.agent, "", context.principal);
}

Result<InboxReader> session_reader(Context& context, const Session& session) {
  CT_TRY_ASSIGN(std::optional<std::string> focus, context.db().get_focus(session.id));
  // Read as the session's owner would: a person's session reads the person's messages too.
  return reader_of(session.id, session.agent, focus.value_or(""), owner_of(session));
}

std::string address_of(const Message& message) {
  if (message.to_kind == "all") return "all";
  if (message.to_kind == "epic") return "epic:" + message.to_ref;
  if (message.to_kind == "agent" && message.to_ref.find(':') == std::string::npos && message.to_ref != "all")
    return message.to_ref;
  if (message.to_kind == "agent") return "agent:" + message.to_ref;
  return message.to_ref;  // a task id, a session id, a person's principal
}

json::Value message_json(const Message& message, bool with_read) {
  json::Value out = json::Value::object();
  out.set("id", message_id(message.num));
  out.set("at", format_iso8601(message.at));
  out.set("from", message.from_agent.empty() ? message.from_principal : message.from_agent);
  out.set("to", address_of(message));
  out.set("body", message.body);
  if (with_read && message.read) out.set("read", true);
  return out;
}

Result<std::optional<std::string>> inbox_notice(Context& context, const Session& session, bool heard) {
  // The task: its focus, which the statement reads.
  const InboxReader reader = reader_of(session.id, session.agent, "", owner_of(session));
  CT_TRY_ASSIGN(UnreadCount unread, context.db().unannounced(reader, kAnnouncedCounted));
  // A task taken since it was last told is recorded even when its thread holds nothing new, and
  // the mark moves past others' messages: the next calls need not look at them again.
  if (heard && (unread.count > 0 || !unread.task.empty() || unread.last > 0))
    CT_TRY(context.db().set_announced(reader.key, unread.last, unread.task));
  if (unread.count == 0) return std::optional<std::string>();
  return std::optional<std::string>(std::to_string(unread.count) + (unread.more ? "+" : "") +
                                    (unread.count == 1 && !unread.more ? " new message" : " new messages") +
                                    " for you: read with session.inbox");
}

Result<std::optional<json::Value>> task_thread(Context& context, const std::string& task_id, bool full) {
  CT_TRY_ASSIGN(std::int64_t count, context.db().thread_size("task", task_id));
  if (count == 0) return std::optional<json::Value>();
  json::Value out = json::Value::object();
  out.set("count", count);
  if (!full) return std::optional<json::Value>(std::move(out));
  CT_TRY_ASSIGN(std::vector<Message> messages, context.db().thread(task_id, kThreadShown));
  json::Value rows = json::Value::array();
  for (const auto& message : messages) {
    json::Value row = json::Value::object();
    row.set("id", message_id(message.num));
    row.set("at", format_iso8601(message.at));
    row.set("from", message.from_agent.empty() ? message.from_principal : message.from_agent);
    row.set("body", clip(message.body, kThreadChars));
    rows.push_back(std::move(row));
  }
  out.set("last", std::move(rows));
  return std::optional<json::Value>(std::move(out));
}

}  // namespace ct
