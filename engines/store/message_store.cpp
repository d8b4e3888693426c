#include "engines/store/message_store.h"

namespace ct {
namespace {

using sql::Value;

constexpr std::string_view kColumns =
    "m.num, m.at, m.to_kind, m.to_ref, m.body, m.from_principal, m.from_session, m.from_agent";

Message read_message(const sql::Cursor& row) {
  Message message;
  message.num = row.integer(0);
  message.at = row.integer(1);
  message.to_kind = std::string(row.text(2));
  message.to_ref = std::string(row.text(3));
  message.body = std::string(row.text(4));
  message.from_principal = std::string(row.text(5));
  message.from_session = std::string(row.text(6));
  message.from_agent = std::string(row.text(7));
  if (row.columns() > 8) message.read = row.integer(8) != 0;
  return message;
}

/// Binds the reader as ?1 … ?6 (key, session, agent, task, principal, sender): every statement
/// below starts with these.
sql::Args reader_args(const InboxReader& reader) {
  sql::Args args;
  args.bind(reader.key).bind(reader.session).bind(reader.agent).bind(reader.task).bind(reader.principal).bind(
      reader.sender);
  return args;
}

/// Message m is the reader's (reader_args()): addressed to it, and not its own. `task` is the
/// condition on a task's message (its task is the reader's: ?4, or the session's focus read in the
/// statement).
std::string mine(std::string_view task = "m.to_ref = ?4") {
  const std::string t(task);
  return "(m.to_kind = 'all'"
         " OR (m.to_kind = 'session' AND ?2 <> '' AND m.to_ref = ?2)"
         " OR (m.to_kind = 'agent' AND ?3 <> '' AND m.to_ref = ?3)"
         " OR (m.to_kind = 'task' AND " + t + ")"
         " OR (m.to_kind = 'person' AND ?5 <> '' AND m.to_ref = ?5)"
         " OR (m.to_kind = 'epic' AND ?2 <> '' AND EXISTS (SELECT 1 FROM message_recipients x WHERE x.session = ?2 AND "
         "x.num = m.num)))"
         " AND (?6 = '' OR m.from_principal <> ?6) AND (?2 = '' OR m.from_session <> ?2) AND (?3 = '' OR m.from_agent <> ?3)";
}

constexpr std::string_view kIsRead = "EXISTS (SELECT 1 FROM message_reads r WHERE r.reader = ?1 AND r.num = m.num)";

}  // namespace

Result<std::int64_t> MessageStore::add_message(Message& message, const std::vector<std::string>& recipients) {
  sql::Runner& runner = sql_runner();
  CT_TRY_ASSIGN(message.num,
                runner.integer("SELECT coalesce(max(num), 0) + 1 FROM messages", {}, "cannot number the message"));
  const auto args = sql::values(message.num, message.at, message.to_kind, message.to_ref, message.body,
                                message.from_principal, message.from_session, message.from_agent);
  CT_TRY(runner.run("INSERT INTO messages(num, at, to_kind, to_ref, body, from_principal, from_session, from_agent) "
                    "VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
                    args, "cannot store the message"));
  for (const auto& session : recipients) {
    const auto row = sql::values(message.num, session);
    CT_TRY(runner.run("INSERT INTO message_recipients(num, session) VALUES(?1, ?2)", row,
                      "cannot store the message's recipients"));
  }
  return message.num;
}

Result<std::vector<Message>> MessageStore::inbox(const InboxReader& reader, const InboxQuery& query) {
  sql::Args args = reader_args(reader);
  std::string sql = "SELECT " + std::string(kColumns) + ", CASE WHEN " + std::string(kIsRead) +
                    " THEN 1 ELSE 0 END AS is_read FROM messages m WHERE " + mine() +
                    " AND m.num > " + args(query.since);
  if (query.unread_only) sql += " AND NOT " + std::string(kIsRead);
  sql += " ORDER BY is_read, m.num LIMIT " + args(sql::limit_of(query.limit));
  return sql_runner().all(sql, args, "cannot read the inbox", read_message);
}

Result<std::pair<std::int64_t, std::int64_t>> MessageStore::unread(const InboxReader& reader, std::int64_t since) {
  sql::Args args = reader_args(reader);
  const std::string sql = "SELECT count(*), coalesce(max(m.num), 0) FROM messages m WHERE m.num > " + args(since) +
                          " AND " + mine() + " AND NOT " + std::string(kIsRead);
  std::pair<std::int64_t, std::int64_t> out{0, 0};
  CT_TRY(sql_runner().each(sql, args, "cannot count the unread messages",
                           [&](const sql::Cursor& row) { out = {row.integer(0), row.integer(1)}; }));
  return out;
}

Result<std::pair<std::int64_t, std::int64_t>> MessageStore::unannounced(const InboxReader& reader) {
  sql::Args args = reader_args(reader);
  const std::string sql =
      "SELECT count(*), coalesce(max(m.num), 0) FROM messages m WHERE m.num > coalesce((SELECT i.announced FROM "
      "inbox_marks i WHERE i.reader = ?1), 0) AND " +
      mine("(m.to_ref = ?4 OR m.to_ref IN (SELECT f.task_id FROM focus f WHERE f.session = ?2))") + " AND NOT " + std::string(kIsRead);
  std::pair<std::int64_t, std::int64_t> out{0, 0};
  CT_TRY(sql_runner().each(sql, args, "cannot count the new messages",
                           [&](const sql::Cursor& row) { out = {row.integer(0), row.integer(1)}; }));
  return out;
}

Result<std::int64_t> MessageStore::acknowledge(const InboxReader& reader, const std::vector<std::int64_t>& nums,
                                               std::int64_t up_to, TimeMs at) {
  sql::Args args = reader_args(reader);
  std::string which = "(m.num <= " + args(up_to);
  if (!nums.empty()) {
    which += " OR m.num IN (";
    for (std::size_t i = 0; i < nums.size(); ++i) which += (i ? ", " : "") + args(nums[i]);
    which += ")";
  }
  which += ")";
  const std::string sql = "INSERT INTO message_reads(reader, num, at) SELECT ?1, m.num, " + args(at) +
                          " FROM messages m WHERE " + which + " AND " + mine() + " AND NOT " +
                          std::string(kIsRead);
  CT_TRY(sql_runner().run(sql, args, "cannot acknowledge the messages"));
  return sql_runner().changes();
}

Result<std::int64_t> MessageStore::announced(std::string_view reader_key) {
  const auto args = sql::values(reader_key);
  return sql_runner().integer("SELECT announced FROM inbox_marks WHERE reader = ?1", args,
                              "cannot read how far the inbox was announced");
}

Result<void> MessageStore::set_announced(std::string_view reader_key, std::int64_t num) {
  const auto args = sql::values(reader_key, num);
  return sql_runner().run(
      "INSERT INTO inbox_marks(reader, announced) VALUES(?1, ?2) "
      "ON CONFLICT(reader) DO UPDATE SET announced = excluded.announced WHERE excluded.announced > inbox_marks.announced",
      args, "cannot record how far the inbox was announced");
}

Result<std::vector<Message>> MessageStore::thread(std::string_view task_id, std::int64_t limit) {
  const auto args = sql::values(task_id, sql::limit_of(limit));
  return sql_runner().all("SELECT " + std::string(kColumns) +
                              " FROM messages m WHERE m.to_kind = 'task' AND m.to_ref = ?1 ORDER BY m.num DESC LIMIT ?2",
                          args, "cannot read the task's thread", read_message);
}

Result<std::int64_t> MessageStore::thread_size(std::string_view to_kind, std::string_view to_ref) {
  const auto args = sql::values(to_kind, to_ref);
  return sql_runner().integer("SELECT count(*) FROM messages WHERE to_kind = ?1 AND to_ref = ?2", args,
                              "cannot count the thread");
}

Result<std::int64_t> MessageStore::sent_since(std::string_view principal, TimeMs since) {
  const auto args = sql::values(principal, since);
  return sql_runner().integer("SELECT count(*) FROM messages WHERE from_principal = ?1 AND at >= ?2", args,
                              "cannot count the messages sent");
}

Result<std::int64_t> MessageStore::last_message() {
  return sql_runner().integer("SELECT coalesce(max(num), 0) FROM messages", {}, "cannot read the last message");
}

}  // namespace ct
