// TaskStore's reservations (engines/store/task_store.h): the paths a claim holds, in the table
// ddl::kReservations. A row is read with its claim — the focus row of its session and task, the
// session's agent, last renewal and worktree — so that whether it is live is read, never kept: the
// rules (engines/rules/reservations.h) test the lease as they test a claim's.
#include "engines/store/task_store.h"

namespace ct {
namespace {

using sql::Value;

/// Reservations with their holder; the inner join with focus keeps only those whose session still
/// focuses their task.
constexpr std::string_view kClaimedSelect =
    "SELECT r.path, r.shared, r.created_at, r.task_id, r.session, coalesce(s.agent, ''), s.updated_at,"
    " coalesce(s.worktree, '') FROM reservations r"
    " JOIN focus f ON f.session = r.session AND f.task_id = r.task_id"
    " LEFT JOIN sessions s ON s.id = r.session";

Reservation read_reservation(const sql::Cursor& row) {
  Reservation out;
  out.path = std::string(row.text(0));
  out.shared = row.integer(1) != 0;
  out.created_at = row.integer(2);
  out.holder = Claim{std::string(row.text(3)), std::string(row.text(4)), std::string(row.text(5)), row.optional_int(6)};
  out.worktree = std::string(row.text(7));
  return out;
}

}  // namespace

Result<std::vector<Reservation>> TaskStore::claimed_reservations(std::string_view task_id) {
  static const std::string all = std::string(kClaimedSelect) + " ORDER BY r.task_id, r.session, r.path";
  static const std::string of_task =
      std::string(kClaimedSelect) + " WHERE r.task_id = ?1 ORDER BY r.task_id, r.session, r.path";
  if (task_id.empty()) return sql_runner().all(all, {}, "cannot read reservations", read_reservation);
  const Value args[] = {Value(task_id)};
  return sql_runner().all(of_task, args, "cannot read reservations", read_reservation);
}

Result<std::vector<Reservation>> TaskStore::session_reservations(std::string_view session) {
  const Value args[] = {Value(session)};
  return sql_runner().all(
      "SELECT path, shared, created_at, task_id, session, '', NULL, '' FROM reservations WHERE session = ?1"
      " ORDER BY path",
      args, "cannot read reservations", read_reservation);
}

Result<void> TaskStore::put_reservation(std::string_view session, std::string_view task_id, std::string_view path,
                                        bool shared, TimeMs at) {
  const Value args[] = {Value(session), Value(task_id), Value(path), Value(std::int64_t{shared ? 1 : 0}), Value(at)};
  return sql_runner().run("INSERT INTO reservations(session, task_id, path, shared, created_at) VALUES(?1, ?2, ?3, ?4, ?5)"
                          " ON CONFLICT(session, task_id, path) DO UPDATE SET shared = excluded.shared",
                          args, "cannot reserve a path");
}

Result<void> TaskStore::drop_reservations(std::string_view session, std::optional<std::string_view> path) {
  if (!path) {
    const Value args[] = {Value(session)};
    return sql_runner().run("DELETE FROM reservations WHERE session = ?1", args, "cannot release reservations");
  }
  const Value args[] = {Value(session), Value(*path)};
  return sql_runner().run("DELETE FROM reservations WHERE session = ?1 AND path = ?2", args,
                          "cannot release a reservation");
}

}  // namespace ct
