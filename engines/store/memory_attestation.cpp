// The attestation part of the memory role (issue 54, seed 000; engines/store/memory_store.h): the
// host's session id bound to each session, the turns agents closed, and what memory.stats counts
// of them. The same SQL on both backends, over the backend's sql::Runner.
#include "engines/store/memory_store.h"

namespace ct {

using sql::Value;

Result<void> MemoryStore::bind_host_session(std::string_view session, std::string_view host, TimeMs at) {
  const Value args[] = {Value(std::string(session)), Value(std::string(host)), Value(at)};
  return sql_runner().run("INSERT INTO host_sessions(session, host, bound_at) VALUES(?1, ?2, ?3) "
                          "ON CONFLICT(session) DO UPDATE SET host = excluded.host, bound_at = excluded.bound_at",
                          args, "cannot bind the host's session id");
}

Result<std::string> MemoryStore::host_session(std::string_view session) {
  const Value args[] = {Value(std::string(session))};
  CT_TRY_ASSIGN(std::optional<std::string> host,
                sql_runner().first("SELECT host FROM host_sessions WHERE session = ?1", args,
                                   "cannot read the host's session id",
                                   [](const sql::Cursor& row) { return std::string(row.text(0)); }));
  return host.value_or("");
}

Result<std::int64_t> MemoryStore::add_memory_turn(const MemoryTurn& turn) {
  auto& runner = sql_runner();
  CT_TRY_ASSIGN(std::int64_t seq,
                runner.integer("SELECT coalesce(max(seq), 0) + 1 FROM memory_turns", {}, "cannot record the turn"));
  const Value args[] = {Value(seq),        Value(turn.at),      Value(turn.outcome),      Value(turn.text),
                        Value(turn.agent), Value(turn.session), Value(turn.host_session), Value(turn.task_id)};
  CT_TRY(runner.run("INSERT INTO memory_turns(seq, at, outcome, text, agent, session, host_session, task_id) "
                    "VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
                    args, "cannot record the turn"));
  return seq;
}

Result<MemoryStore::AttestationCounts> MemoryStore::attestation_counts() {
  AttestationCounts counts;
  CT_TRY(sql_runner().each("SELECT outcome, count(*) FROM memory_turns GROUP BY outcome", {}, "cannot count turns",
                           [&](const sql::Cursor& row) {
                             if (row.text(0) == "reported") counts.reported = row.integer(1);
                             else if (row.text(0) == "rejected") counts.rejected = row.integer(1);
                           }));
  CT_TRY_ASSIGN(counts.constraints,
                sql_runner().integer("SELECT count(*) FROM memory_usage WHERE applied = 1 AND constraint_id <> ''", {},
                                     "cannot count attested constraints"));
  return counts;
}

}  // namespace ct
