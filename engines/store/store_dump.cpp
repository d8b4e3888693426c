#include "engines/store/store_dump.h"

namespace ct {

std::span<const DumpedTable> dumped_tables() {
  static constexpr DumpedTable kTables[] = {
      {"meta", "key"},
      {"tasks", "num"},
      {"task_deps", "task_id, depends_on"},
      {"focus", "session"},
      {"audit", "seq"},
      {"audit_changes", ""},
      {"idempotency", "key"},
      {"sessions", "id"},
      {"compliance", "id"},
      {"releases", "version"},
      {"research", "num"},
      {"research_links", "research_id, task_id"},
      {"research_sync", "file"},
      {"lifecycle", "subject, kind, name"},
      {"lifecycle_events", "seq"},
      {"memory", "num"},
      {"memory_keys", "key, num"},
      {"memory_terms", "key"},
      {"memory_usage", "seq"},
      {"evidence", "num"},
      {"proposals", "num"},
      {"plans", "num"},
      {"task_worktrees", "task_id"},
      {"reservations", "session, task_id, path"},
      {"messages", "num"},
      {"message_recipients", "session, num"},
      {"message_reads", "reader, num"},
      {"inbox_marks", "reader"},
      {"catalogue", "subject"},
      {"catalogue_changes", "subject, version"},
      {"tracker_links", "tracker, repository, external_id"},
      {"tracker_cursors", "tracker, repository"},
      {"session_children", "child"},
      {"host_sessions", "session"},
      {"memory_turns", "seq"},
  };
  return kTables;
}

}  // namespace ct
