// Messages between agents and people (issue 53) as the operations that are not session.send,
// session.inbox and session.ack show them: who "me" is for an inbox, the line that tells a caller
// it has unread messages (the pipeline adds it to its next reply, as it does a session's notice),
// a task's thread (tasks.show), an inbox's rows (session.briefing, the inbox resource).
#pragma once

#include <optional>
#include <string>

#include "core/json.h"
#include "domains/context.h"
#include "engines/store/message_store.h"

namespace ct {

/// How many unread messages a read counts at most ("unread": 100 with "unreadAtLeast": true):
/// what an inbox read costs does not follow how many there are.
inline constexpr std::int64_t kUnreadCounted = 100;
/// How many the announcement in every reply of a session counts at most ("9+ new messages"): a
/// line saying that there is something to read, paid by each call, costs little.
inline constexpr std::int64_t kAnnouncedCounted = 9;

/// "MSG012" for 12.
std::string message_id(std::int64_t num);

/// The reader the caller is: its bound session, the session's agent label (else the caller's) and
/// the task the session holds; a person reads as its principal too. Acknowledgements count for the
/// agent label when there is one (so an agent that restarts under the same name does not read them
/// again), else for the session, else for the principal.
Result<InboxReader> caller_reader(Context& context);
/// The reader of session `session` (session.briefing of another's session; a person's `of`).
Result<InboxReader> session_reader(Context& context, const Session& session);

/// {id, at, from, to, body, read?}: `from` the sender's label or a person's principal, `to` the
/// address as session.send takes it ("T012", "epic:T001", "reviewer", "ses_…", "person:alice", "all").
json::Value message_json(const Message& message, bool with_read);
std::string address_of(const Message& message);

/// The line that tells the caller of unread messages it has not been told of yet (none when there
/// are none): those sent since it was last told, and the older unread thread of a task its session
/// took since (told once); `heard` (a write by the session's owner) records that it has been told.
Result<std::optional<std::string>> inbox_notice(Context& context, const Session& session, bool heard);

/// A task's thread for tasks.show: {count} and, for the full record, last[{id,at,from,body}] (the
/// newest three, bodies clipped); none when nothing was sent to it.
Result<std::optional<json::Value>> task_thread(Context& context, const std::string& task_id, bool full);

}  // namespace ct
