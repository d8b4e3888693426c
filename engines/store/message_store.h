// The messages role of the storage seam (engines/store/store.h, issue 53): what agents and people
// send one another — to an agent by its label, a session, a task's thread, an epic's participants,
// a person, or everyone — kept until nobody needs it, and what each reader has acknowledged. The
// rules (who "me" is, limits, fencing) are domains/session/session_messages.cpp's. Its SQL is the
// same on both backends and written once here, over the backend's sql::Runner.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/clock.h"
#include "core/error.h"
#include "engines/store/sql_runner.h"

namespace ct {

/// One message.
struct Message {
  std::int64_t num = 0;            // its id is "MSG" + the number (prefixed_id)
  TimeMs at = 0;
  std::string to_kind;             // agent | session | task | epic | person | all
  std::string to_ref;              // the label, session id, task id, epic id, person principal; "" for all
  std::string body;
  std::string from_principal;      // domains/principal.h, as the transport established it
  std::string from_session;
  std::string from_agent;          // the sender's label ("" for a person)
  bool read = false;               // filled by reads for a reader: it has acknowledged it
};

/// Who reads an inbox. A message is the reader's when it is addressed to its session, its agent
/// label, the task its session holds, an epic its session took part in (when sent), its principal
/// (a person), or everyone — and it did not send it. `key` is whose acknowledgements count.
struct InboxReader {
  std::string key;                 // "agent:<label>", "session:<id>" or a person's principal
  std::string session;
  std::string agent;
  std::string task;                // the task the session holds ("" when none)
  std::string principal;           // a person's principal: messages to that person
  std::string sender;              // messages from this principal are not its inbox's ("" = none)
};

/// A reader's unread messages, counted no further than a cap (a read's cost does not follow how
/// many there are): `count` at most the cap, `more` when there are more.
struct UnreadCount {
  std::int64_t count = 0;
  bool more = false;
  std::int64_t last = 0;           // the highest number among those counted (the newest); for
                                   // unannounced() with none counted, the newest message of all
                                   // when it is past the mark (how far the reader may be marked told)
  std::string task;                // unannounced(): the task its session took since it was last told ("" none)
};

struct InboxQuery {
  std::int64_t since = 0;          // only messages after this number
  bool unread_only = false;
  std::int64_t limit = 20;
};

class MessageStore {
 public:
  static constexpr std::int64_t kUncapped = -1;

  /// Stores `message` as the next number (its `num` is set), with the sessions an epic's message
  /// reaches.
  [[nodiscard]] Result<std::int64_t> add_message(Message& message, const std::vector<std::string>& recipients);
  /// The reader's messages after `since`: unread first, each group oldest first, `limit` at most.
  [[nodiscard]] Result<std::vector<Message>> inbox(const InboxReader& reader, const InboxQuery& query);
  /// The reader's unread messages after `since`, `cap` at most counted.
  [[nodiscard]] Result<UnreadCount> unread(const InboxReader& reader, std::int64_t since, std::int64_t cap);
  /// unread() of what the reader was not told of yet: after how far it was told (announced()), and
  /// the unread thread of a task its session took since (its task: reader.task, else what its
  /// session holds now, read in the statement); `cap` at most counted. One statement, which each call in a
  /// session runs: index ranges after the mark, so its cost follows neither the store's messages
  /// nor the reader's unread ones.
  [[nodiscard]] Result<UnreadCount> unannounced(const InboxReader& reader, std::int64_t cap);
  /// Marks read for `reader_key` those of `nums` that are the reader's (up_to > 0: also every one of
  /// its messages up to that number); the number of messages newly marked.
  [[nodiscard]] Result<std::int64_t> acknowledge(const InboxReader& reader, const std::vector<std::int64_t>& nums,
                                                 std::int64_t up_to, TimeMs at);
  /// How far the reader has been told of its unread messages (0: never).
  [[nodiscard]] Result<std::int64_t> announced(std::string_view reader_key);
  /// Records that the reader was told of its messages up to `num` (the mark only rises) and of the
  /// thread of `task` (its session's task when told; "" leaves the one recorded).
  [[nodiscard]] Result<void> set_announced(std::string_view reader_key, std::int64_t num, std::string_view task);
  /// A task's thread (messages to it), newest first, `limit` at most; and how many it holds.
  [[nodiscard]] Result<std::vector<Message>> thread(std::string_view task_id, std::int64_t limit);
  /// (Counts below stop at `cap`: a check against a limit reads no further than the limit.)
  [[nodiscard]] Result<std::int64_t> thread_size(std::string_view to_kind, std::string_view to_ref,
                                                 std::int64_t cap = kUncapped);
  /// The statement thread_size runs (?1 the kind, ?2 the ref, ?3 the cap as a LIMIT): a backend
  /// may send it ahead (TaskStore::expect).
  static constexpr std::string_view kThreadSizeSql =
      "SELECT count(*) FROM (SELECT 1 FROM messages WHERE to_kind = ?1 AND to_ref = ?2 LIMIT ?3) c";
  /// Messages `principal` sent at or after `since` (the per-sender rate), `cap` at most.
  [[nodiscard]] Result<std::int64_t> sent_since(std::string_view principal, TimeMs since, std::int64_t cap);
  /// The highest message number (0: none): what a watched inbox compares.
  [[nodiscard]] Result<std::int64_t> last_message();

 protected:
  virtual sql::Runner& sql_runner() = 0;
  ~MessageStore() = default;  // a role of a Store: never owned or deleted through it
};

}  // namespace ct
