#include "engines/store/message_store.h"

namespace ct {
namespace {

using sql::Value;

constexpr std::string_view kColumns =
    "m.num, m.at, m.to_kind, m.to_ref, m.body, m.from_principal, m.from_session, m.from_agent";
/// kColumns after the number (which reader_rows() selects as the way's order).
constexpr std::string_view kAfterNum = "m.at, m.to_kind, m.to_ref, m.body, m.from_principal, m.from_session, m.from_agent";

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

/// Whose messages are the reader's (reader_args()): one index range of messages_to(to_kind,
/// to_ref, num) per way of addressing it, or its sessions' message_recipients for an epic's.
struct Addressee {
  std::string_view from;              // the rows, as "messages m" or a join giving m
  std::string_view where;             // the range
  std::string_view order = "m.num";   // the number as the range's index orders it
};

/// Each way a message reaches the reader. `task` is the condition on a task's message: its task is
/// the reader's (?4), or the session's focus read in the statement.
std::vector<Addressee> addressees(std::string_view task) {
  return {{"messages m", "m.to_kind = 'all' AND m.to_ref = ''"},
          {"messages m", "m.to_kind = 'session' AND ?2 <> '' AND m.to_ref = ?2"},
          {"messages m", "m.to_kind = 'agent' AND ?3 <> '' AND m.to_ref = ?3"},
          {"messages m", task},
          {"messages m", "m.to_kind = 'person' AND ?5 <> '' AND m.to_ref = ?5"},
          {"message_recipients x JOIN messages m ON m.num = x.num", "x.session = ?2 AND ?2 <> '' AND m.to_kind = 'epic'",
           "x.num"}};
}

constexpr std::string_view kOwnTask = "m.to_kind = 'task' AND m.to_ref = ?4";
/// The reader's task (?4), else the one its session focuses, read in the statement: an equality,
/// so one index range read newest first (an OR of the two would read the whole thread, then sort
/// it). One focus a session — min() keeps a damaged store with two (validate's finding) readable.
constexpr std::string_view kFocusTask =
    "m.to_kind = 'task' AND m.to_ref = coalesce(nullif(?4, ''), (SELECT min(f.task_id) FROM focus f WHERE f.session = ?2))";

/// Not the reader's own (it sent it).
constexpr std::string_view kNotOwn =
    "(?6 = '' OR m.from_principal <> ?6) AND (?2 = '' OR m.from_session <> ?2) AND (?3 = '' OR m.from_agent <> ?3)";

/// Message m is the reader's (reader_args()), as one condition: what acknowledge() marks.
std::string mine() {
  return "(m.to_kind = 'all'"
         " OR (m.to_kind = 'session' AND ?2 <> '' AND m.to_ref = ?2)"
         " OR (m.to_kind = 'agent' AND ?3 <> '' AND m.to_ref = ?3)"
         " OR (" + std::string(kOwnTask) + ")"
         " OR (m.to_kind = 'person' AND ?5 <> '' AND m.to_ref = ?5)"
         " OR (m.to_kind = 'epic' AND ?2 <> '' AND EXISTS (SELECT 1 FROM message_recipients x WHERE x.session = ?2 AND "
         "x.num = m.num))) AND " + std::string(kNotOwn);
}

constexpr std::string_view kIsRead = "EXISTS (SELECT 1 FROM message_reads r WHERE r.reader = ?1 AND r.num = m.num)";

/// The reader's messages that also meet `condition`: their number (as `num`) and `columns`,
/// `limit` (a placeholder) at most, each way of addressing read as an index range in number order
/// (`order`: ASC or DESC), no further than the limit — so what a read costs follows the limit, not
/// how many messages the reader (or the store) has. What is done with the ways' rows:
enum class Rows {
  Sorted,   // ordered by number, cut at the limit (a page)
  Counted,  // as they come, cut at the limit: enough to count to it
  Each,     // every way's, each cut at the limit, unordered (count and max over them)
};
std::string reader_rows(const sql::Dialect& dialect, std::string_view columns, std::string_view condition,
                        std::string_view order, const std::string& limit, const std::vector<Addressee>& ways,
                        Rows rows = Rows::Sorted) {
  // A page on SQLite: one SELECT a way, merged under the ORDER BY as they are read (no temporary
  // B-tree: each is in order already), stopping at the limit. Otherwise each way is its own
  // subquery cut to the limit (its ORDER BY read from the index), then the whole is.
  const bool merged = rows == Rows::Sorted && dialect.merges_ordered_union;
  std::string sql;
  for (std::size_t i = 0; i < ways.size(); ++i) {
    if (i) sql += " UNION ALL ";
    std::string way = "SELECT " + std::string(ways[i].order) + " AS num" +
                      (columns.empty() ? "" : ", " + std::string(columns)) + " FROM " + std::string(ways[i].from) +
                      " WHERE " + std::string(ways[i].where) + " AND " + std::string(condition) + " AND " +
                      std::string(kNotOwn);
    sql += merged ? way
                  : "SELECT * FROM (" + way + " ORDER BY " + std::string(ways[i].order) + " " + std::string(order) +
                        " LIMIT " + limit + ") w" + std::to_string(i);
  }
  switch (rows) {
    case Rows::Sorted: return sql + " ORDER BY num " + std::string(order) + " LIMIT " + limit;
    case Rows::Counted: return sql + " LIMIT " + limit;
    case Rows::Each: return sql;
  }
  return sql;
}

/// count(*) and max(num) of `rows` (cap + 1 at most): an UnreadCount, its count clamped to the cap.
Result<UnreadCount> counted(sql::Runner& runner, const std::string& rows, const sql::Args& args, std::int64_t cap,
                            std::string_view error) {
  const std::string sql = "SELECT count(*), coalesce(max(c.num), 0) FROM (" + rows + ") c";
  UnreadCount out;
  CT_TRY(runner.each(sql, args, error, [&](const sql::Cursor& row) {
    out.count = row.integer(0);
    out.last = row.integer(1);
  }));
  if (out.count > cap) {
    out.count = cap;
    out.more = true;
  }
  return out;
}

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
  // Unread first, then (when there is room) read ones: each a bounded read (reader_rows()).
  const auto ways = addressees(kOwnTask);
  std::vector<Message> out;
  for (const bool read : {false, true}) {
    if (read && query.unread_only) break;
    const std::int64_t room = sql::limit_of(query.limit) - static_cast<std::int64_t>(out.size());
    if (room <= 0) break;
    sql::Args args = reader_args(reader);
    const std::string condition =
        "m.num > " + args(query.since) + (read ? " AND " : " AND NOT ") + std::string(kIsRead);
    const std::string sql = reader_rows(sql_runner().dialect(),
                                        std::string(kAfterNum) + (read ? ", 1 AS is_read" : ", 0 AS is_read"),
                                        condition, "ASC", args(room), ways);
    CT_TRY_ASSIGN(std::vector<Message> found, sql_runner().all(sql, args, "cannot read the inbox", read_message));
    out.insert(out.end(), std::make_move_iterator(found.begin()), std::make_move_iterator(found.end()));
  }
  return out;
}

Result<UnreadCount> MessageStore::unread(const InboxReader& reader, std::int64_t since, std::int64_t cap) {
  sql::Args args = reader_args(reader);
  const std::string condition = "m.num > " + args(since) + " AND NOT " + std::string(kIsRead);
  const std::string rows = reader_rows(sql_runner().dialect(), "", condition, "DESC", args(cap + 1), addressees(kOwnTask),
                                       Rows::Counted);
  return counted(sql_runner(), rows, args, cap, "cannot count the unread messages");
}

Result<UnreadCount> MessageStore::unannounced(const InboxReader& reader, std::int64_t cap) {
  // How far the reader was told (its mark), and the task its session took since (its focus, not
  // the mark's task: one focus a session).
  constexpr std::string_view kMark = "coalesce((SELECT i.announced FROM inbox_marks i WHERE i.reader = ?1), 0)";
  constexpr std::string_view kMarkTask = "coalesce((SELECT i.task FROM inbox_marks i WHERE i.reader = ?1), '')";
  static const std::string taken =
      "(SELECT min(f.task_id) FROM focus f WHERE f.session = ?2 AND f.task_id <> " + std::string(kMarkTask) + ")";
  // Each call of a session runs this: first the newest message (on a store without any, nothing
  // more), the mark, a task taken since and whether its thread holds a message — and nothing more
  // when no message came after the mark and no thread of a task taken since holds one.
  static const std::string first =
      "SELECT n, CASE WHEN n = 0 THEN 0 ELSE " + std::string(kMark) + " END, CASE WHEN n = 0 THEN '' ELSE coalesce(" +
      taken + ", '') END, CASE WHEN n = 0 THEN 0 ELSE (SELECT count(*) FROM (SELECT 1 FROM messages m WHERE "
      "m.to_kind = 'task' AND m.to_ref = " + taken + " LIMIT 1) t) END FROM (SELECT coalesce(max(num), 0) AS n FROM messages) x";
  std::int64_t newest = 0, mark = 0;
  std::string task;
  bool thread = false;
  const auto first_args = sql::values(reader.key, reader.session);  // ?1 and ?2, as reader_args() binds them
  CT_TRY(sql_runner().each(first, first_args, "cannot count the new messages", [&](const sql::Cursor& row) {
    newest = row.integer(0);
    mark = row.integer(1);
    task = std::string(row.text(2));
    thread = row.integer(3) != 0;
  }));
  // (A task taken since whose thread is empty is not recorded: the check costs less than the write,
  // and its thread's later messages come after the mark.)
  if (newest <= mark && !thread) return UnreadCount{};
  sql::Args args = reader_args(reader);
  const std::string limit = args(cap + 1);  // ?7
  // After the mark, each way of addressing is a range; a task taken since adds its thread's older
  // unread messages. Each way's newest cap + 1 (its max among them): count and max need no order.
  // (Rows::Each is the same statement on every backend: built once.)
  static const std::string counting = [&] {
    const std::string after = "m.num > " + std::string(kMark) + " AND NOT " + std::string(kIsRead);
    const std::string before = "m.num <= " + std::string(kMark) + " AND NOT " + std::string(kIsRead);
    const std::string older_thread = "m.to_kind = 'task' AND m.to_ref = " + taken;  // (min(): see kFocusTask)
    const sql::Dialect& dialect = sql_runner().dialect();
    return reader_rows(dialect, "", after, "DESC", limit, addressees(kFocusTask), Rows::Each) + " UNION ALL " +
           reader_rows(dialect, "", before, "DESC", limit, {{"messages m", older_thread}}, Rows::Each);
  }();
  CT_TRY_ASSIGN(UnreadCount out, counted(sql_runner(), counting, args, cap, "cannot count the new messages"));
  out.task = std::move(task);
  // None of the reader's after the mark: it may be marked told up to the newest message of all.
  if (out.count == 0 && newest > mark) out.last = newest;
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

Result<void> MessageStore::set_announced(std::string_view reader_key, std::int64_t num, std::string_view task) {
  const auto args = sql::values(reader_key, num, task);
  return sql_runner().run(
      "INSERT INTO inbox_marks(reader, announced, task) VALUES(?1, ?2, ?3) "
      "ON CONFLICT(reader) DO UPDATE SET task = CASE WHEN excluded.task <> '' THEN excluded.task ELSE "
      "inbox_marks.task END, announced = CASE WHEN excluded.announced > "
      "inbox_marks.announced THEN excluded.announced ELSE inbox_marks.announced END",
      args, "cannot record how far the inbox was announced");
}

Result<std::vector<Message>> MessageStore::thread(std::string_view task_id, std::int64_t limit) {
  const auto args = sql::values(task_id, sql::limit_of(limit));
  return sql_runner().all("SELECT " + std::string(kColumns) +
                              " FROM messages m WHERE m.to_kind = 'task' AND m.to_ref = ?1 ORDER BY m.num DESC LIMIT ?2",
                          args, "cannot read the task's thread", read_message);
}

Result<std::int64_t> MessageStore::thread_size(std::string_view to_kind, std::string_view to_ref, std::int64_t cap) {
  const auto args = sql::values(to_kind, to_ref, sql::limit_of(cap));
  return sql_runner().integer(kThreadSizeSql, args, "cannot count the thread");
}

Result<std::int64_t> MessageStore::sent_since(std::string_view principal, TimeMs since, std::int64_t cap) {
  const auto args = sql::values(principal, since, sql::limit_of(cap));
  return sql_runner().integer(
      "SELECT count(*) FROM (SELECT 1 FROM messages WHERE from_principal = ?1 AND at >= ?2 LIMIT ?3) c", args,
      "cannot count the messages sent");
}

Result<std::int64_t> MessageStore::last_message() {
  return sql_runner().integer("SELECT coalesce(max(num), 0) FROM messages", {}, "cannot read the last message");
}

}  // namespace ct
